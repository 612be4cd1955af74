"""The page furniture, figure/table text, run-in headings and hyphenation vocabulary of a PDF's positioned lines:
what is left out of the running paragraphs (docs/fulltext.md, "PDF text layer", steps 2 and 3) and what tells
their headings and words."""

from __future__ import annotations

import re
import statistics
import unicodedata
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field
from operator import attrgetter

from paperfetch.fulltext.base import normalise_space
from paperfetch.fulltext.pdflines import LAYOUT, PdfLayout, TextLine

__all__ = [
    "Vocabulary",
    "body_font",
    "broken_words",
    "clean",
    "floats",
    "is_caption",
    "joined_spread_lines",
    "run_in_heading",
    "table_cells",
    "without_furniture",
    "without_turned",
]

_PAGE_NUMBER = re.compile(r"^(?:page\s+)?[ivx\d]{1,4}(?:\s*(?:/|of)\s*\d{1,4})?$", re.IGNORECASE)
_CAPTION = re.compile(r"^(?:fig(?:ure)?s?|table|box|scheme|plate|chart)\.?\s*[A-Z]?\d+[A-Za-z]?(?:[.:|]|\s+[-–—(]|\s*$)",
                      re.IGNORECASE)
_CAPTION_TITLED = re.compile(r"^(?:Fig(?:ure)?s?|Table|Box|Scheme|Plate|Chart)\.?\s*[A-Z]?\d+[a-z]?\s+[A-Z]")
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_START = attrgetter("x")


def clean(text: str) -> str:
    """*text* without control or format characters (NUL, ``\\x03``, soft hyphen …), its whitespace normalised."""
    if text.isprintable():  # none of those characters (the common case): no look-up per character
        return normalise_space(text)
    return normalise_space("".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co") else c for c in text))


def _shape(text: str) -> str:
    """A line's text with digits folded, so ``Page 2 of 22`` and ``Page 3 of 22`` are one running line."""
    return re.sub(r"\d+", "#", normalise_space(text).lower())


def without_furniture(lines: list[TextLine], layout: PdfLayout = LAYOUT) -> list[TextLine]:
    """*lines* less the running headers, footers, page numbers and mastheads of every page: what stands apart at
    a page's top or foot and repeats on another page (digits aside), is a page number, or is set smaller than the
    body (a masthead, a footnote); and anywhere near a page's edge, a line repeating a running one."""
    pages: dict[int, list[TextLine]] = {}
    for line in lines:
        if clean(line.text):
            pages.setdefault(line.page, []).append(line)
    steps = [a - b for levels in map(_levels, pages.values()) for a, b in zip(levels, levels[1:]) if a > b]
    pitch = statistics.median(steps) if steps else layout.fallback_pitch
    sizes: Counter[float] = Counter()
    for line in lines:
        sizes[round(line.size, 1)] += len(line.text)
    small = layout.small_print * (sizes.most_common(1)[0][0] if sizes else 0.0)
    edges = {number: _edge_lines(page_lines, pitch, small, layout) for number, page_lines in pages.items()}
    counts: Counter[str] = Counter()
    for edge in edges.values():
        counts.update({_shape(line.text) for line in edge})
    running = {text for text, count in counts.items() if count >= 2}
    return [line for number in sorted(pages)
            for line in _page_body(pages[number], edges[number], running, small, layout)]


def _page_body(page: list[TextLine], edge: list[TextLine], running: set[str], small: float,
               layout: PdfLayout) -> list[TextLine]:
    """A page's lines less its furniture: the edge lines that run, are a page number or small print (and any
    line on their baselines), and a running line anywhere in the page's outer bands."""
    furniture = [line for line in edge if _running(_shape(line.text), running, layout)
                 or _PAGE_NUMBER.match(clean(line.text)) or line.size < small]
    levels = {round(line.y) for line in furniture}
    edge_ids = {id(line) for line in edge}
    top, bottom = max(line.y for line in page), min(line.y for line in page)
    band = layout.edge_band * (top - bottom)
    return [line for line in page
            if not (id(line) in edge_ids and (line in furniture or round(line.y) in levels))
            and not (_shape(line.text) in running and not bottom + band < line.y < top - band)]


def without_turned(lines: list[TextLine]) -> list[TextLine]:
    """*lines* less the text printed turned round (an axis label, a rotated table, a stamp in the margin) on the
    pages whose text is mostly upright; a page mostly turned (a landscape page) is read in its own frame."""
    turned, total = Counter[int](), Counter[int]()
    for line in lines:
        total[line.page] += len(line.text)
        turned[line.page] += len(line.text) if line.turned else 0
    return [line for line in lines if not line.turned or 2 * turned[line.page] > total[line.page]]


def joined_spread_lines(lines: list[TextLine], layout: PdfLayout = LAYOUT) -> list[TextLine]:
    """*lines* with the pieces of a widely spaced justified line joined again. A justified line whose word spaces
    pass the gap the glyph reader bridges (a long unbreakable word on the next line, a line beside a float) comes
    as several pieces on one baseline; they are one line when a line just above or below, in the same size, spans
    exactly from the first piece's start to the last one's end, and the gaps between them are even (a column
    gutter or a table's columns are not)."""
    spans: dict[int, list[TextLine]] = {}
    for line in lines:
        if line.right > line.x:
            spans.setdefault(line.page, []).append(line)
    for page in spans.values():
        page.sort(key=lambda line: line.x)  # by start, so a spanning line is looked for only near a piece's start
    out: list[TextLine] = []
    i = 0
    while i < len(lines):
        j = i + 1
        while j < len(lines) and _same_baseline(lines[j - 1], lines[j], layout):
            j += 1
        end = next((k for k in range(j - 1, i, -1) if _spread(lines[i:k + 1], spans.get(lines[i].page, []), layout)), None)
        if end is None:
            out.append(lines[i])
            i += 1
            continue
        out.append(_joined(lines[i:end + 1]))
        i = end + 1
    return out


def _same_baseline(a: TextLine, b: TextLine, layout: PdfLayout) -> bool:
    return a.page == b.page and abs(a.y - b.y) <= layout.same_size * a.size and a.size == b.size and b.x > a.right


def _spread(pieces: list[TextLine], page: list[TextLine], layout: PdfLayout) -> bool:
    first, last = pieces[0], pieces[-1]
    gaps = [b.x - a.right for a, b in zip(pieces, pieces[1:])]
    slack = layout.spread_slack * first.size
    if min(gaps) <= 0 or max(gaps) > layout.spread_evenness * min(gaps) + slack:
        return False
    near = page[bisect_left(page, first.x - slack - 1, key=_START):bisect_right(page, first.x + slack + 1, key=_START)]
    return any(0 < abs(other.y - first.y) <= layout.spread_reach * first.size
               and abs(other.size - first.size) <= layout.same_size * first.size
               and abs(other.x - first.x) <= slack and abs(other.right - last.right) <= slack for other in near)


def _joined(pieces: list[TextLine]) -> TextLine:
    runs: list[tuple[str, str]] = []
    for piece in pieces:
        piece_runs = list(piece.runs) or [("", piece.text)]
        if runs:
            runs[-1] = (runs[-1][0], runs[-1][1] + " ")
        runs += piece_runs
    return TextLine(page=pieces[0].page, x=pieces[0].x, y=pieces[0].y, size=pieces[0].size,
                    text=" ".join(piece.text for piece in pieces), right=pieces[-1].right,
                    runs=tuple(runs) if any(piece.runs for piece in pieces) else ())


def _running(text: str, running: set[str], layout: PdfLayout) -> bool:
    """A running line, or one that opens with a running line's words (page 1's ``Metabolites 2014, 4, 932-945``
    under the later pages' ``Metabolites 2014, 4``)."""
    return text in running or any(len(r) >= layout.running_prefix and text.startswith(r)
                                  and text[len(r):len(r) + 1] in " ,;:" for r in running)


def _levels(page_lines: list[TextLine]) -> list[int]:
    """A page's baselines, top first."""
    return sorted({round(line.y) for line in page_lines}, reverse=True)


def _edge_lines(page_lines: list[TextLine], pitch: float, small_size: float, layout: PdfLayout) -> list[TextLine]:
    """The lines a page's header or footer may hold: on its outermost baselines (:attr:`PdfLayout.edge_lines`)
    at the top or foot when a gap wider than the body's line pitch parts them from the text (up to
    :attr:`PdfLayout.masthead_lines` when all are small print: a masthead), and any page number on those baselines."""
    levels = _levels(page_lines)
    if len(levels) < 3:
        return list(page_lines) if len(levels) and all(_PAGE_NUMBER.match(clean(x.text)) for x in page_lines) else []
    small = {round(line.y) for line in page_lines if line.size < small_size}
    small -= {round(line.y) for line in page_lines if line.size >= small_size}
    keep = set(_apart(levels, pitch, small, layout) + _apart(levels[::-1], pitch, small, layout))
    outer = set(levels[:layout.edge_lines] + levels[-layout.edge_lines:])
    return [line for line in page_lines
            if round(line.y) in keep or round(line.y) in outer and _PAGE_NUMBER.match(clean(line.text))]


def _apart(levels: list[int], pitch: float, small: set[int], layout: PdfLayout) -> list[int]:
    """The outermost baselines of *levels* (a few, more in small print) that a gap over
    :attr:`PdfLayout.edge_gap` line pitches parts from the rest."""
    edge = layout.edge_lines
    for i in range(min(layout.masthead_lines, len(levels) - 1)):
        if i >= edge and levels[i] not in small:
            break
        if abs(levels[i] - levels[i + 1]) > layout.edge_gap * pitch:
            return levels[:i + 1] if i < edge or all(level in small for level in levels[:i + 1]) else []
    return []


#: The words after a suspended hyphen (``pre- and post-``, ``intra- or inter-``): a line-end hyphen before one stays.
_SUSPENDING = frozenset({"and", "or", "nor", "to"})


def broken_words(lines: list[TextLine], layout: PdfLayout = LAYOUT) -> float:
    """The share of words that are one letter beside another one-letter word, in reading order: a few hundredths
    in article text of any language or script (``e a``, ``y o`` are rare neighbours), most of it where the text
    layer breaks words into letters (``C o n t i n u o u s``, one glyph a line in some Type-3 fonts)."""
    found = [w for line in lines for w in re.findall(r"[^\W\d_]+", line.text)]
    if len(found) < layout.broken_sample:
        return 0.0
    single = [len(w) == 1 for w in found]
    beside = [one and (i > 0 and single[i - 1] or i + 1 < len(single) and single[i + 1]) for i, one in enumerate(single)]
    return sum(beside) / len(found)


def is_caption(text: str) -> bool:
    """Whether *text* opens a figure, table or box caption (``Figure 3.``, ``Table 2:``, ``Fig. 1 (a)``,
    ``Table 1 Some data``)."""
    return bool(_CAPTION.match(text) or _CAPTION_TITLED.match(text))


def table_cells(lines: list[TextLine], layout: PdfLayout = LAYOUT) -> set[int]:
    """The indexes of lines that are table cells: short pieces (:attr:`PdfLayout.short_width`) of which two or
    more share one baseline of a page with a third piece or with figures (body text runs as long lines)."""
    rows: dict[tuple[int, int], list[int]] = {}
    for i, line in enumerate(lines):
        rows.setdefault((line.page, round(line.y / layout.row_band)), []).append(i)
    widths = [line.right - line.x for line in lines if line.right > line.x]
    column = statistics.median(widths) if widths else 0.0
    cells: set[int] = set()
    for members in rows.values():
        if len(members) < 2 or not column:
            continue
        short = [i for i in members if lines[i].right - lines[i].x < layout.short_width * column]
        numeric = [i for i in short if _digits(lines[i].text) >= layout.digits]
        if len(short) >= 2 and (len(members) >= 3 or numeric):
            cells.update(short)
    return cells


def _digits(text: str) -> float:
    chars = [c for c in text if not c.isspace()]
    return sum(c.isdigit() for c in chars) / len(chars) if chars else 0.0


def floats(lines: list[TextLine], pitch: float, layout: PdfLayout = LAYOUT) -> set[int]:
    """The indexes of lines drawn inside the run of a column's text that are not part of it: a table, a label or
    a box placed between two of its lines in the drawing order. A line that leaves the text's flow is one when,
    within :attr:`PdfLayout.float_window` lines, a line turns up right below the last line of the flow (same page
    and start, the next baseline, the same size): the lines between are out of the flow, unless they are one
    full-width line."""
    out: set[int] = set()
    widths = [line.right - line.x for line in lines if line.right > line.x]
    column = statistics.median(widths) if widths else 0.0
    last: TextLine | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if last is None or _continues(last, line, pitch, layout):
            last, i = line, i + 1
            continue
        back = next((j for j in range(i + 1, min(len(lines), i + layout.float_window))
                     if _continues(last, lines[j], pitch, layout)), None)
        # one full-width line between two of a column's lines is the other column drawn line by line: kept
        if back is None or back == i + 1 and line.right - line.x >= layout.short_width * column:
            last, i = line, i + 1
            continue
        out.update(range(i, back))
        i = back
    return out


def _continues(last: TextLine, line: TextLine, pitch: float, layout: PdfLayout) -> bool:
    return (line.page == last.page and abs(line.x - last.x) <= layout.float_drift * last.size
            and 0 < last.y - line.y <= layout.float_gap * pitch
            and abs(line.size - last.size) <= layout.float_size * last.size)


def body_font(lines: list[TextLine]) -> str:
    """The font most of the document's characters are set in (``""`` when the engine gives no fonts)."""
    counts: Counter[str] = Counter()
    for line in lines:
        for font, text in line.runs:
            counts[font] += len(text.strip())
    return counts.most_common(1)[0][0] if counts else ""


def run_in_heading(line: TextLine, font: str, *, continued: bool = False,
                   layout: PdfLayout = LAYOUT) -> tuple[str, str] | None:
    """``(heading, rest)`` when *line* opens with a run in another font than the body's that ends a sentence
    and another font follows on the same line: ``2.2. Protocol.`` + ``A total of 65 …``. A *continued* heading
    (its start on the line above) may open in lower case."""
    if not font or len(line.runs) < 2 or line.runs[0][0] == font or line.runs[1][0] == line.runs[0][0]:
        return None
    lead, rest = _take_stop(normalise_space(line.runs[0][1]), normalise_space("".join(t for _, t in line.runs[1:])))
    if not _heading_run(lead[:1].upper() + lead[1:] if continued else lead, layout.run_in_words) or not _opens(rest):
        return None
    return lead, rest


def _take_stop(lead: str, rest: str) -> tuple[str, str]:
    """A heading's closing stop printed in the following run's font (``Introduction`` + ``. Pain …``) moved over."""
    if not lead.endswith((".", ":")) and rest[:1] in (".", ":"):
        return lead + rest[0], rest[1:].lstrip()
    return lead, rest


def _heading_run(text: str, most: int) -> bool:
    return (text.endswith((".", ":")) and 0 < len(text.split()) <= most and (text[:1].isupper() or text[:1].isdigit())
            and any(c.isalpha() for c in text))


def _opens(text: str) -> bool:
    return bool(text) and (text[:1].isupper() or text[:1].isdigit() or text[:1] in "([\"'\u201c")


#: The characters that end a line broken inside a word.
_LINE_END_HYPHENS = ("-", "\u00ad", "\u2010")


@dataclass
class Vocabulary:
    """The words a document spells in full inside its lines, the hyphenated compounds it prints there and their
    halves (``parts``), and the same words sorted as written and backwards (``forward``, ``backward``), for the
    words that begin or end with a given run of letters."""

    words: set[str] = field(default_factory=set)
    compounds: set[str] = field(default_factory=set)
    parts: set[str] = field(default_factory=set)
    forward: list[str] = field(default_factory=list)
    backward: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, lines: list[TextLine]) -> Vocabulary:
        """The vocabulary of *lines*: neither the piece before a line-end hyphen nor the lower-case piece that
        opens the next line is a word spelled in full (``under-`` + ``stood`` would make ``stood`` one)."""
        vocabulary = cls()
        broken = False
        for line in lines:
            found = _WORD.findall(line.text.lower())
            if broken and found and line.text[:1].islower():
                found = found[1:]
            broken = line.text.rstrip().endswith(_LINE_END_HYPHENS)
            if broken and found:
                found = found[:-1]
            for parts in (word.split("-") for word in found):
                vocabulary.compounds.update(f"{a}-{b}" for a, b in zip(parts, parts[1:]))
                vocabulary.words.update(parts)
                if len(parts) > 1:
                    vocabulary.parts.update(parts)
        vocabulary.forward = sorted(vocabulary.words)
        vocabulary.backward = sorted(word[::-1] for word in vocabulary.words)
        return vocabulary

    @staticmethod
    def suspends(tail: str) -> bool:
        """Whether *tail* follows a suspended hyphen (``pre-`` ``and post-``): the hyphen stays, and a space."""
        return tail.lower() in _SUSPENDING

    def keeps_hyphen(self, head: str, tail: str) -> bool:
        """Whether ``head-`` at a line's end and ``tail`` at the next line's start are a hyphenated compound, from
        the document's own evidence: kept where it prints ``head-tail`` elsewhere, or both halves as halves of its
        compounds, or both as words of three letters or more; dropped where it spells ``headtail`` in full, or a
        word that runs on across the break (one beginning ``head`` and the tail's first two letters:
        ``pro-`` + ``jected`` beside ``project``; or ending with the head's last two letters and the whole tail:
        ``neurogas-`` + ``troenterology`` beside ``gastroenterology``). Without evidence, long halves keep it
        (a tail of six letters or more after a head that one of its words of three letters or more ends,
        ``fire-`` + ``fighting``, or after a head of four letters or more when one opens the tail, ``oven-`` +
        ``drying`` beside ``dry``; five and eight letters,
        ``supra-`` + ``axillary``) and short ones drop it (``Jan-`` + ``uary``)."""
        head, tail = head.lower(), tail.lower()
        if f"{head}-{tail}" in self.compounds or self.suspends(tail):
            return True  # printed whole elsewhere, or a suspended compound (``intra-`` ``and inter-assay``)
        if head + tail in self.words:
            return False
        if head in self.parts and tail in self.parts or min(len(head), len(tail)) >= 3 and {head, tail} <= self.words:
            return True
        if self._begins(head + tail[:2]) or self._begins((head[-2:] + tail)[::-1], backward=True):
            return False
        either = self._closes(head) or len(head) >= 4 and self._opens(tail)
        return either and len(tail) >= 6 or len(head) >= 5 and len(tail) >= 8

    def _closes(self, head: str) -> bool:
        """Whether a word of the document of three letters or more ends *head* (``preparation`` in a head a
        text layer ran together from several words, ``searchforbowelpreparation``)."""
        return any(head[-k:] in self.words for k in range(3, len(head) + 1))

    def _opens(self, tail: str) -> bool:
        """Whether a word of the document of three letters or more opens *tail* (``dry`` in ``drying``)."""
        return any(tail[:k] in self.words for k in range(3, len(tail) + 1))

    def _begins(self, prefix: str, backward: bool = False) -> bool:
        """Whether a word of the document (spelled backwards if *backward*) begins with *prefix*."""
        ordered = self.backward if backward else self.forward
        at = bisect_left(ordered, prefix)
        return at < len(ordered) and ordered[at].startswith(prefix)
