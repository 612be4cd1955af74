"""Titles as styled runs: Crossref's and JATS' markup (``<i>``, ``<sub>``, ``<scp>``, MathML …) read once, entities
decoded once, then written as each format wants it: BibTeX commands with case protection, CSL-JSON's rich text,
or plain text (docs/export.md, "Titles").
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

__all__ = ["Run", "bibtex_text", "csl_text", "plain_text", "runs"]

#: Tag names (any ``jats:``/``mml:`` prefix dropped) and the style they give.
_STYLES = {"i": "i", "italic": "i", "em": "i", "b": "b", "bold": "b", "strong": "b", "sub": "sub", "sup": "sup",
           "scp": "sc", "sc": "sc", "small-caps": "sc"}
#: A tag: a name, then attributes only in their ``name="value"`` form (so ``a<b and c>d`` stays text).
_TAG_RE = re.compile(r"<(/?)([A-Za-z][\w.-]*:)?([A-Za-z][\w.-]*)((?:\s+[\w:.-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*(/?)>")
_MATH_END_RE = re.compile(r"</(?:[A-Za-z][\w.-]*:)?math\s*>", re.IGNORECASE)
_SPACE_RE = re.compile(r"\s+")


@dataclass(frozen=True)
class Run:
    """Text in one style: a subset of ``i``, ``b``, ``sub``, ``sup``, ``sc``."""

    text: str
    styles: frozenset[str] = frozenset()


def runs(markup: str) -> list[Run]:
    """*markup* (text that may hold tags and entities) as runs; unknown tags are dropped, their text kept;
    MathML becomes its text (:func:`_math_runs`)."""
    out: list[Run] = []
    stack: list[str] = []
    pos = 0
    while (match := _TAG_RE.search(markup, pos)) is not None:
        _add(out, markup[pos:match.start()], stack)
        pos = match.end()
        closing, name, empty = match.group(1), match.group(3).lower(), match.group(5)
        if name == "math" and not closing:
            end = _MATH_END_RE.search(markup, pos) if not empty else None
            fragment = markup[match.start():end.end()] if end else ""
            pos = end.end() if end else pos
            out += _math_runs(fragment, frozenset(stack))
            continue
        style = _STYLES.get(name)
        if style is None or empty:
            continue
        if not closing:
            stack.append(style)
        elif style in stack:
            del stack[len(stack) - 1 - stack[::-1].index(style)]
    _add(out, markup[pos:], stack)
    return _joined(out)


def _math_runs(fragment: str, styles: frozenset[str]) -> list[Run]:
    """A MathML fragment as text: ``msub``/``msup``/``msubsup`` scripts as sub- and superscripts, ``mfrac`` as
    ``a/b``, ``msqrt`` as ``√(…)``; one that does not parse as XML is its text without the tags."""
    clean = re.sub(r"(</?)[A-Za-z][\w.-]*:", r"\1", fragment)
    clean = re.sub(r"\sxmlns(:\w+)?=(\"[^\"]*\"|'[^']*')", "", clean)
    try:
        root = ET.fromstring(clean)
    except ET.ParseError:
        return [Run(html.unescape(_TAG_RE.sub("", fragment)).strip(), styles)]
    out: list[Run] = []
    _math_node(root, styles, out)
    return out


def _math_node(node: ET.Element, styles: frozenset[str], out: list[Run]) -> None:
    tag, children = node.tag, list(node)
    scripts = {"msub": ("sub",), "msup": ("sup",), "msubsup": ("sub", "sup")}.get(tag)
    if scripts and children:
        _math_node(children[0], styles, out)
        for child, style in zip(children[1:], scripts):
            _math_node(child, styles | {style}, out)
        return
    if tag == "mfrac" and len(children) == 2:
        _math_node(children[0], styles, out)
        out.append(Run("/", styles))
        _math_node(children[1], styles, out)
        return
    if tag in ("msqrt", "mroot") and children:
        out.append(Run("\u221a(", styles))
        _math_node(children[0], styles, out)
        out.append(Run(")", styles))
        return
    if node.text and node.text.strip():
        out.append(Run(node.text.strip(), styles))
    for child in children:
        _math_node(child, styles, out)


def _add(out: list[Run], text: str, stack: list[str]) -> None:
    if text:
        out.append(Run(html.unescape(text), frozenset(stack)))


def _joined(items: list[Run]) -> list[Run]:
    """Neighbouring runs of one style merged, white space collapsed, the ends trimmed."""
    merged: list[Run] = []
    for run in items:
        if merged and merged[-1].styles == run.styles:
            merged[-1] = Run(merged[-1].text + run.text, run.styles)
        else:
            merged.append(run)
    cleaned = [Run(_SPACE_RE.sub(" ", r.text), r.styles) for r in merged]
    if cleaned:
        cleaned[0] = Run(cleaned[0].text.lstrip(), cleaned[0].styles)
        cleaned[-1] = Run(cleaned[-1].text.rstrip(), cleaned[-1].styles)
    return [r for r in cleaned if r.text]


def plain_text(markup: str) -> str:
    """The text a reader sees, no markup (RIS, keys, comparisons)."""
    return "".join(r.text for r in runs(markup))


# ---------------------------------------------------------------------- CSL-JSON
_CSL_OPEN = {"i": "<i>", "b": "<b>", "sub": "<sub>", "sup": "<sup>", "sc": '<span style="font-variant:small-caps;">'}
_CSL_CLOSE = {"i": "</i>", "b": "</b>", "sub": "</sub>", "sup": "</sup>", "sc": "</span>"}
_ORDER = ("b", "i", "sc", "sub", "sup")


_NOCASE_RE = re.compile(r"[^\s]*[^\W\d_][^\s]*")


def _nocase(text: str) -> str:
    """Words with a capital after their first letter (``EZH2``, ``iPhone``, ``α-Synuclein``) in CSL's
    ``<span class="nocase">``: title- and sentence-casing processors change them otherwise."""
    def protect(match: re.Match[str]) -> str:
        word = match.group(0)
        core = word.strip("()[],.;:!?\"'")
        if any(c.isupper() for c in core[1:]) or (core[:1].islower() and any(c.isupper() for c in core)):
            return word.replace(core, f'<span class="nocase">{core}</span>', 1)
        return word
    return _NOCASE_RE.sub(protect, text)


def csl_text(markup: str) -> str:
    """CSL-JSON rich text: only ``<i> <b> <sub> <sup>``, small caps as a span and ``nocase`` spans (:func:`_nocase`);
    a ``<`` of the text itself that would open a tag is written ``‹``."""
    parts = []
    for run in runs(markup):
        text = _nocase(re.sub(r"<(?=/?[A-Za-z])", "\u2039", run.text))
        styles = [s for s in _ORDER if s in run.styles]
        parts.append("".join(_CSL_OPEN[s] for s in styles) + text + "".join(_CSL_CLOSE[s] for s in reversed(styles)))
    return "".join(parts)


# ---------------------------------------------------------------------- BibTeX
_COMMANDS = {"i": r"\textit", "b": r"\textbf", "sub": r"\textsubscript", "sup": r"\textsuperscript", "sc": r"\textsc"}
_SPECIALS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}
#: ``---`` as the em dash TeX makes of it (every reader shows "—"); ``--`` kept as two hyphens, not an en dash.
_DASHES = {"---": "\u2014", "--": "-{}-"}
_SPECIAL_RE = re.compile(r"---|--|[\\&%$#_~^]")
_WORD_RE = re.compile(r"[^\s{}]+")
_LETTERS_RE = re.compile(r"[^\W\d_]+")


def _escape(text: str) -> str:
    return _SPECIAL_RE.sub(lambda m: _DASHES.get(m.group(0)) or _SPECIALS[m.group(0)], text)


def _braces(text: str) -> list[tuple[str, bool]]:
    """*text* cut into pieces, each ``(piece, True)`` for a brace: matched pairs as ``\\{``/``\\}`` (every
    reader shows them), unmatched ones as ``\\textbraceleft{}``/``\\textbraceright{}`` (BibTeX counts a brace
    even after a backslash, so a lone ``\\{`` would unbalance the file)."""
    opening: list[int] = []
    matched: set[int] = set()
    for i, ch in enumerate(text):
        if ch == "{":
            opening.append(i)
        elif ch == "}" and opening:
            matched.update((opening.pop(), i))
    lone = {"{": r"\textbraceleft{}", "}": r"\textbraceright{}"}
    pieces: list[tuple[str, bool]] = []
    start = 0
    for i, ch in enumerate(text):
        if ch in lone:
            pieces += [(text[start:i], False), ("\\" + ch if i in matched else lone[ch], True)]
            start = i + 1
    pieces.append((text[start:], False))
    return pieces


def _protected(text: str, first: bool) -> str:
    """Runs of letters holding a capital in braces, as Better BibTeX protects them, so readers that change a
    title's case (pandoc, BibTeX styles, pybtex's ``plain``) keep ``R&D``, ``Germany``, ``α-Synuclein``, ``EZH2``;
    the title's first word is left alone when only its first letter is a capital (every style keeps that one).
    Letters only (``{EZH}2``, ``{α}-{Synuclein}``): pandoc 2.17 drops the protection of a braced group that is a
    whole word with digits, and capitalises a title's unprotected first letter."""
    out = []
    pos = 0
    for match in _WORD_RE.finditer(text):
        word = match.group(0)
        out.append(_escape(text[pos:match.start()]))
        pos = match.end()
        capitals = [i for i, c in enumerate(word) if c.isupper()]
        if not capitals or (first and match.start() == 0 and capitals == [0]):
            out.append(_escape(word))
            continue
        last = 0
        for letters in _LETTERS_RE.finditer(word):
            out.append(_escape(word[last:letters.start()]) + "{" + letters.group(0) + "}")
            last = letters.end()
        out.append(_escape(word[last:]))
    out.append(_escape(text[pos:]))
    return "".join(out)


def bibtex_text(markup: str, *, protect: bool = True) -> str:
    """*markup* as a braced BibTeX field's text: specials escaped, braces balanced, ``---`` as an em dash, ``--`` as ``-{}-``
    (no en dash), styles as ``\\textit{}``/``\\textbf{}``/``\\textsubscript{}``/``\\textsuperscript{}``/``\\textsc{}``, and,
    with *protect*, capitals protected (:func:`_protected`)."""
    out = []
    first = True
    for run in runs(markup):
        body = []
        for piece, is_brace in _braces(run.text):
            if is_brace:
                body.append(piece)
            elif piece:
                body.append(_protected(piece, first) if protect else _escape(piece))
            first = first and not piece.strip() and not is_brace
        text = "".join(body)
        for style in reversed([s for s in _ORDER if s in run.styles]):
            text = f"{_COMMANDS[style]}{{{text}}}"
        out.append(text)
        first = False
    return "".join(out)
