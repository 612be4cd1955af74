"""How well a PDF's paragraph rows match the same article's JATS: the measure of docs/fulltext.md, "PDF text layer".

A JATS paragraph is *found* when one PDF row holds at least 90 % of its words in order; *found or split* when
one row or two to four consecutive rows do. The other figures count what must never happen: a row holding two
JATS paragraphs, found paragraphs out of order, rows carrying a running header, footer or page number, words
glued together, control characters, and headings that swallowed the first words of a paragraph; and how many
found paragraphs sit under the JATS section title.

Where a line of the PDF ends in a hyphen after a letter (``under-`` at one line's end, ``stood`` opening the next),
the JATS says whether the break is a word's (it writes ``understood`` and never ``under-stood``) or a compound's
(``long-term`` and never ``longterm``); a break the JATS writes both ways or neither is not counted. A word's break
whose rows keep the hyphen counts as a hyphen *kept* wrongly, a compound's whose rows join the halves as one
*joined* wrongly (the per-break count behind many glued words).

A word counts as glued only where the PDF itself does not print it whole: given the PDF, a word the JATS never
writes (``Springerlink`` in "Springerlink.com", a ``Keywords:`` label) is excused when the page draws it as one run
of glyphs, every glyph abutting the next, at each place it is drawn; a word run together across a gap the page
leaves, or one the page never draws in one piece, still counts.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from paperfetch.fulltext.base import SECTION_SEPARATOR, Article, Paragraph
from paperfetch.fulltext.jats import parse_jats
from paperfetch.fulltext.pdflines import TextLine
from paperfetch.fulltext.xmltext import parse_xml

__all__ = ["PairScore", "line_end_breaks", "printed_whole", "score_pair", "words"]

_WORD = re.compile(r"[^\W_]+")
_SHARE = 0.9


def words(text: str) -> list[str]:
    """The lower-case words of *text* (letters and digits; compatibility forms folded, so ``ﬁ`` is ``fi``)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


@dataclass
class PairScore:
    """The figures for one PDF against its JATS; ``problems`` holds one example per failed check."""

    name: str
    jats: int = 0
    rows: int = 0
    found: int = 0
    found_or_split: int = 0
    shared: int = 0
    out_of_order: int = 0
    furniture_rows: int = 0
    glued_rows: int = 0
    kept_hyphens: int = 0
    joined_hyphens: int = 0
    control_rows: int = 0
    swallowing_headings: int = 0
    same_section: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def found_share(self) -> float:
        return self.found / self.jats if self.jats else 1.0

    @property
    def split_share(self) -> float:
        return self.found_or_split / self.jats if self.jats else 1.0

    @property
    def section_share(self) -> float:
        """Of the found paragraphs, the share whose row's innermost section is the JATS one (numbers aside)."""
        return self.same_section / self.found if self.found else 1.0

    @property
    def shared_share(self) -> float:
        return self.shared / self.jats if self.jats else 0.0


def _held(target: list[str], row: list[str]) -> bool:
    if len(row) < _SHARE * len(target):
        return False
    matcher = SequenceMatcher(None, target, row, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) >= _SHARE * len(target)


def _candidates(target: list[str], index: dict[str, set[int]]) -> list[int]:
    counts: Counter[int] = Counter()
    for word in set(target):
        for row in index.get(word, ()):
            counts[row] += 1
    distinct = len(set(target))
    return sorted(row for row, count in counts.items() if count >= _SHARE * distinct * 0.9)


def score_pair(name: str, jats: bytes, rows: Sequence[Paragraph], lines: Sequence[TextLine] = (),
               pdf: bytes | None = None) -> PairScore:
    """Score *rows* (from a PDF) against *jats* (the article's JATS XML); *lines* (the PDF's raw lines) find its
    running headers and footers. A glued word is one the JATS never writes that splits into two it does, unless
    *pdf* (the file's bytes) prints it whole (:func:`printed_whole`)."""
    article = parse_jats(jats)
    text = " ".join(parse_xml(jats).itertext())
    said = words(text)
    vocabulary = set(said)
    score = PairScore(name=name, jats=len(article.paragraphs), rows=len(rows))
    row_words = [words(row.text) for row in rows]
    index: dict[str, set[int]] = {}
    for i, ws in enumerate(row_words):
        for word in ws:
            index.setdefault(word, set()).add(i)
    holders: dict[int, list[int]] = {}
    order: list[int] = []
    for j, paragraph in enumerate(article.paragraphs):
        target = words(paragraph.text)
        if not target:
            score.jats -= 1
            continue
        # the row that holds it with the fewest other words: a short paragraph's words may recur in a long row
        held = [i for i in _candidates(target, index) if _held(target, row_words[i])]
        hit = min(held, key=lambda i: len(row_words[i])) if held else None
        if hit is not None:
            score.found += 1
            score.found_or_split += 1
            score.same_section += _last_title(paragraph.section) == _last_title(rows[hit].section)
            holders.setdefault(hit, []).append(j)
            order.append(hit)
        elif _split_held(target, row_words, index):
            score.found_or_split += 1
        elif len(score.problems) < 40:
            score.problems.append(f"not found: {paragraph.text[:90]!r}")
    score.shared = sum(len(js) for js in holders.values() if len(js) > 1)
    score.problems += [f"one row holds {len(js)} paragraphs: {rows[i].text[:90]!r}" for i, js in holders.items() if len(js) > 1]
    score.out_of_order = sum(1 for a, b in zip(order, order[1:]) if b < a)
    score.problems += [f"out of order: {rows[b].text[:60]!r} after {rows[a].text[:60]!r}"
                       for a, b in zip(order, order[1:]) if b < a]
    _check_rows(score, article, vocabulary, rows, _furniture(lines, f" {' '.join(said)} ", rows), pdf)
    _check_hyphens(score, text, vocabulary, rows, lines)
    return score


#: The hyphens a PDF's text may print at a line's end, and inside a compound.
_HYPHENS = str.maketrans({"\u00ad": "-", "\u2010": "-", "\u2011": "-"})
_LETTERS = r"[^\W\d_]+"


def line_end_breaks(lines: Sequence[TextLine]) -> list[tuple[str, str]]:
    """The (head, tail) of each line that ends in a hyphen after a letter, in lower case: the letters before the
    hyphen and those that open the next line (none where it opens with anything else)."""
    out = []
    for line, following in zip(lines, lines[1:]):
        text = unicodedata.normalize("NFKC", line.text.rstrip()).translate(_HYPHENS).lower()
        head = re.search(f"({_LETTERS})-$", text)
        tail = re.match(_LETTERS, unicodedata.normalize("NFKC", following.text.lstrip()).lower())
        if head and tail:
            out.append((head.group(1), tail.group(0)))
    return out


def _check_hyphens(score: PairScore, text: str, vocabulary: set[str], rows: Sequence[Paragraph],
                   lines: Sequence[TextLine]) -> None:
    """Count the line-end breaks whose rows keep the hyphen of a word the JATS writes whole, or join the halves
    of a compound the JATS writes with its hyphen (see the module's docstring)."""
    compounds = {f"{a}-{b}" for found in re.findall(f"{_LETTERS}(?:-{_LETTERS})+",
                                                    unicodedata.normalize("NFKC", text).translate(_HYPHENS).lower())
                 for parts in [found.split("-")] for a, b in zip(parts, parts[1:])}
    held = unicodedata.normalize("NFKC", "\n".join(row.text for row in rows)).translate(_HYPHENS).lower()
    for (head, tail), count in Counter(line_end_breaks(lines)).items():
        whole, compound = head + tail in vocabulary, f"{head}-{tail}" in compounds
        if whole == compound:
            continue  # the JATS writes it both ways, or neither
        printed = f"{head}-{tail}" if whole else head + tail
        times = min(count, len(re.findall(rf"(?<![^\W\d_]){re.escape(printed)}(?![^\W\d_])", held)))
        if not times:
            continue
        if whole:
            score.kept_hyphens += times
        else:
            score.joined_hyphens += times
        score.problems.append(f"hyphen {'kept' if whole else 'joined'} {times}x: {printed!r} (the JATS: "
                              f"{head + tail if whole else f'{head}-{tail}'!r})")


def _split_held(target: list[str], row_words: list[list[str]], index: dict[str, set[int]]) -> bool:
    starts = sorted(index.get(target[0], set()) | index.get(target[min(3, len(target) - 1)], set()))
    for start in starts:
        joined: list[str] = []
        for end in range(start, min(start + 4, len(row_words))):
            joined += row_words[end]
            if end > start and _held(target, joined):
                return True
    return False


def _check_rows(score: PairScore, article: Article, vocabulary: set[str], rows: Sequence[Paragraph],
                furniture: list[str], pdf: bytes | None) -> None:
    candidates = {w for row in rows for w in words(row.text) if _glued(w, vocabulary)}
    whole = printed_whole(pdf, candidates) if pdf and candidates else set()
    for row in rows:
        text = row.text
        if any(unicodedata.category(c) == "Cc" for c in text):
            score.control_rows += 1
            score.problems.append(f"control character: {text[:60]!r}")
        glued = [w for w in words(text) if w in candidates and w not in whole]
        if glued:
            score.glued_rows += 1
            score.problems.append(f"glued {glued[:3]}: {text[:60]!r}")
        carried = [f for f in furniture if f in f" {' '.join(words(text))} "]
        if carried:
            score.furniture_rows += 1
            score.problems.append(f"running furniture {carried[0]!r}: {text[:60]!r}")
    _check_headings(score, article, rows)


def _check_headings(score: PairScore, article: Article, rows: Sequence[Paragraph]) -> None:
    """Count the PDF section titles (none of the JATS's) that open with a JATS paragraph's first three words."""
    openings = {tuple(words(p.text)[:3]) for p in article.paragraphs if len(words(p.text)) >= 3}
    titles = {_unnumbered(t) for p in article.paragraphs for t in p.section.split(SECTION_SEPARATOR)}
    seen: set[str] = set()
    for row in rows:
        for title in row.section.split(SECTION_SEPARATOR) if row.section else ():
            title_words = _unnumbered(title)
            if title in seen or title_words in titles:
                continue
            seen.add(title)
            if any(title_words[k:k + 3] in openings for k in range(max(0, len(title_words) - 2))):
                score.swallowing_headings += 1
                score.problems.append(f"heading swallowed a first line: {title!r}")


def _last_title(section: str) -> tuple[str, ...]:
    return _unnumbered(section.split(SECTION_SEPARATOR)[-1]) if section else ()


def _unnumbered(title: str) -> tuple[str, ...]:
    found = words(title)
    while found and (found[0].isdigit() or found[0] in ("i", "ii", "iii", "iv", "v")):
        found.pop(0)
    return tuple(found)


def _glued(word: str, vocabulary: set[str]) -> bool:
    """Two words of the article's own vocabulary printed as one (``therewasno``, ``longterm`` from ``long-term``)."""
    if len(word) < 7 or word in vocabulary or not word.isalpha():
        return False
    return any(word[:k] in vocabulary and word[k:] in vocabulary for k in range(3, len(word) - 2))


#: Two glyphs abut when the gap between their advance boxes is under this share of the glyphs' height: kerning
#: and rounding leave a few hundredths, a word space a quarter or more.
_ABUT = 0.08


def printed_whole(pdf: bytes, candidates: set[str]) -> set[str]:
    """Those of *candidates* (lower-case words) that the PDF draws whole wherever it draws them: read from the
    glyphs' own positions (pypdfium2's advance boxes), not from any extractor's lines, a run of letters and digits
    with no character between them (PDFium puts a space where it sees one), on one baseline, with no gap wider
    than ``_ABUT`` of their height; a word drawn with a gap inside it in any one place is not excused, nor is
    text set off the horizontal (its gaps are not measured)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    tight: set[str] = set()
    loose: set[str] = set()
    document = pdfium.PdfDocument(pdf)
    try:
        for page in document:
            textpage = page.get_textpage()
            boxes = []
            for k in range(textpage.count_chars()):
                rect = raw.FS_RECTF()
                raw.FPDFText_GetLooseCharBox(textpage.raw, k, rect)
                char = unicodedata.normalize("NFKC", chr(raw.FPDFText_GetUnicode(textpage.raw, k))).lower()
                boxes.append((char, rect.left, rect.right, rect.bottom, rect.top - rect.bottom))
            for word, abutting in _runs(boxes):
                if word in candidates:
                    (tight if abutting else loose).add(word)
    finally:
        document.close()
    return tight - loose


def _runs(boxes: list[tuple[str, float, float, float, float]]) -> list[tuple[str, bool]]:
    """The runs of word characters in *boxes* (character, left, right, bottom, height), each with whether every
    glyph in it abuts the next on the same baseline."""
    out: list[tuple[str, bool]] = []
    word, abutting, last = "", True, None
    for char, left, right, bottom, height in [*boxes, ("", 0.0, 0.0, 0.0, 0.0)]:
        if char and _WORD.fullmatch(char):
            if last is not None:
                size = _ABUT * max(height, last[2])
                abutting = abutting and left - last[0] <= size and abs(bottom - last[1]) <= size
            word, last = word + char, (right, bottom, height)
            continue
        if word:
            out.append((word, abutting))
        word, abutting, last = "", True, None
    return out


def _furniture(lines: Sequence[TextLine], said: str, rows: Sequence[Paragraph]) -> list[str]:
    """The texts that stand at a page's top or foot on two pages or more (page numbers as their digits, padded),
    less those the rows hold no more often than the JATS *said* them (a running head of the authors' names is
    also their citation in the text: ``Range and Virányi`` atop each page and "(Range and Virányi, 2013)")."""
    pages: dict[int, list[TextLine]] = {}
    for line in lines:
        if line.text.strip():
            pages.setdefault(line.page, []).append(line)
    edges: Counter[str] = Counter()
    texts: dict[str, set[str]] = {}
    for page_lines in pages.values():
        ordered = sorted(page_lines, key=lambda line: -line.y)
        for line in ordered[:2] + ordered[-2:]:
            ws = words(line.text)
            if len(ws) >= 3:
                shape = " ".join("#" if w.isdigit() else w for w in ws)
                edges[shape] += 1
                texts.setdefault(shape, set()).add(" ".join(ws))
    running = [f" {text} " for shape, count in edges.items() if count >= 2 for text in texts[shape]]
    held = [f" {' '.join(words(row.text))} " for row in rows]
    return [text for text in running if sum(text in row for row in held) > said.count(text)]
