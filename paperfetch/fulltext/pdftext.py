"""A PDF's text layer → paragraphs with sections, for papers with no JATS (docs/fulltext.md, "PDF text layer")."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace

from paperfetch import defaults
from paperfetch.fulltext.base import SECTION_SEPARATOR, FullTextError, Paragraph, normalise_space
from paperfetch.fulltext.pdflayout import (
    Vocabulary,
    body_font,
    broken_words,
    clean,
    floats,
    is_caption,
    joined_spread_lines,
    run_in_heading,
    table_cells,
    without_furniture,
    without_turned,
)
from paperfetch.fulltext.pdflines import DEFAULT_ENGINE, LAYOUT, PdfEngine, PdfLayout, TextLine, pdf_lines

__all__ = ["PdfEngine", "paragraphs_from_lines", "pdf_paragraphs", "refused"]

_SECTION_NAMES = (
    "abstract", "summary", "introduction", "background", "methods", "method", "materials and methods",
    "material and methods", "methods and materials", "methodology", "experimental", "experimental section",
    "results", "discussion", "results and discussion", "conclusion", "conclusions", "concluding remarks",
    "acknowledgements", "acknowledgments", "acknowledgement", "acknowledgment", "funding", "author contributions",
    "data availability", "data availability statement", "conflict of interest", "conflicts of interest",
    "competing interests", "supplementary material", "supplementary information", "appendix", "limitations",
    "references", "bibliography", "literature cited", "works cited", "keywords",
)
_STOP_NAMES = frozenset({"references", "bibliography", "literature cited", "works cited"})
_NUMBERED = re.compile(r"^((?:\d{1,2}|[IVX]{1,4})(?:\.\d{1,2}){0,3})\.?\s+(\S.*)$")
_ENDS_SENTENCE = re.compile(r"[.!?:;][\"'\u2019\u201d)\]]*$")
_SMALL_WORDS = frozenset({"a", "an", "and", "as", "at", "by", "for", "from", "in", "of", "on", "or", "the", "to", "vs", "with"})
_BULLET = re.compile(r"^(?:[\u2022\u25e6\u25aa\u25ab\u2023\u2219\u25cf\u25cb\u25a0\u25a1\u2013]|-(?=\s))")
_HYPHENS = ("-", "\u00ad", "\ufffe", "\u2010")


def pdf_paragraphs(pdf: bytes, *, engine: PdfEngine | str = DEFAULT_ENGINE, max_bytes: int = defaults.MAX_PDF_BYTES,
                   max_pages: int | None = None, layout: PdfLayout = LAYOUT) -> list[Paragraph]:
    """The paragraphs of *pdf*'s text layer in reading order (``[]`` without text). Raises FullTextError for a
    body that is not a readable PDF or whose text layer breaks its words into letters, ConfigurationError for an
    unknown *engine*."""
    lines = pdf_lines(pdf, engine=engine, max_bytes=max_bytes, max_pages=max_pages, layout=layout)
    if why := refused(lines, layout):
        raise FullTextError(why)
    return paragraphs_from_lines(lines, layout)


def refused(lines: list[TextLine], layout: PdfLayout = LAYOUT) -> str:
    """Why *lines* are no usable text layer (``""`` when they are)."""
    if (share := broken_words(lines, layout)) > layout.broken_words:
        return f"the PDF's text layer breaks words into letters ({share:.0%} of its words are letters standing alone)"
    return ""


@dataclass
class _Metrics:
    """The body text's measures over the document: font size, line pitch, characters in a full line."""

    size: float
    pitch: float
    chars: float

    @classmethod
    def of(cls, lines: list[TextLine], layout: PdfLayout) -> _Metrics:
        # the body's size is the one most characters are set in (tables and notes can have more lines)
        weights: Counter[float] = Counter()
        for line in lines:
            if line.size > 0:
                weights[round(line.size, 1)] += len(line.text.strip())
        size = weights.most_common(1)[0][0] if weights else 10.0
        body = [line for line in lines if abs(line.size - size) <= layout.body_band * size] or lines
        pitches = sorted(a.y - b.y for a, b in zip(body, body[1:])
                         if a.page == b.page and 0 < a.y - b.y < layout.pitch_span * a.size)
        chars = sorted(len(line.text.strip()) for line in body) or [80]
        # a low quantile, not the median: the gaps around headings and short paragraphs would pull that up
        pitch = pitches[int(layout.pitch_quantile * (len(pitches) - 1))] if pitches else layout.leading * size
        return cls(size=size, pitch=pitch, chars=float(chars[int(layout.full_line * (len(chars) - 1))]))


@dataclass
class _Open:
    """A paragraph being built: its lines, the page it starts on, the last line taken."""

    lines: list[str] = field(default_factory=list)
    page: int = 0
    last: TextLine | None = None
    order: int = 0


@dataclass
class _Builder:
    """The paragraphs found so far, the ones being built (one for body text, one for small print, so a table or
    a note set in smaller type between two halves of a paragraph does not cut it), and the section path."""

    vocabulary: Vocabulary = field(default_factory=Vocabulary)
    rows: list[tuple[int, Paragraph]] = field(default_factory=list)  #: each with the place its paragraph opened
    open: dict[bool, _Open] = field(default_factory=dict)
    path: list[tuple[int, str]] = field(default_factory=list)
    opened: int = 0

    def ordered(self) -> list[Paragraph]:
        """The rows in the order their paragraphs start (a paragraph cut by small print closes after it)."""
        return [replace(row, paragraph=i) for i, (_, row) in enumerate(sorted(self.rows, key=lambda pair: pair[0]))]

    def section(self) -> str:
        return SECTION_SEPARATOR.join(title for _, title in self.path)

    def add(self, small: bool, text: str, line: TextLine) -> None:
        if small not in self.open:
            self.opened += 1
            self.open[small] = _Open(page=line.page + 1, order=self.opened)
        current = self.open[small]
        current.lines.append(text)
        current.last = line

    def close(self, small: bool | None = None) -> None:
        for kind in ([small] if small is not None else sorted(self.open)):
            current = self.open.pop(kind, None)
            text = clean(_join(current.lines, self.vocabulary)) if current else ""
            if current and text:
                self.rows.append((current.order, Paragraph(section=self.section(), paragraph=0, text=text,
                                                           page=current.page)))

    def heading(self, level: int, title: str) -> None:
        self.close()
        self.path = [(lvl, t) for lvl, t in self.path if lvl < level] + [(level, title)]


@dataclass
class _Flow:
    """What the walk over the lines knows: the measures it decides by, the document's, and the line before."""

    layout: PdfLayout
    metrics: _Metrics
    font: str
    indent: float | None
    margins: dict[int, list[float]]
    seen: TextLine | None = None
    seen_heading: bool = False
    caption_size: float = 0.0  # the size of the caption being left out (0 outside one)
    absorbed: TextLine | None = None  # a heading's second line, taken with its first
    heading_lead: str = ""
    styles: dict[tuple[float, str], int] = field(default_factory=dict)

    def level(self, line: TextLine, found: int, path: list[tuple[int, str]]) -> int:
        """The nesting level of a heading: its numbering's or its name's (*found*), else its style's (size and
        font): a style met first below a section nests one deeper, unless it is larger than the top level's."""
        style = (round(line.size, 1), line.runs[0][0] if line.runs else "")
        if found:
            self.styles.setdefault(style, found)
            return found
        if style not in self.styles:
            tops = [size for (size, _), level in self.styles.items() if level == 1]
            deeper = max((level for level, _ in path), default=0) + 1
            self.styles[style] = 1 if not tops or style[0] > max(tops) + self.layout.top_style else min(deeper, 4)
        return self.styles[style]

    def gap_above(self, line: TextLine, before: TextLine | None) -> bool:
        return before is None or before.page != line.page or not self.next_line(before, line)

    def next_line(self, line: TextLine, below: TextLine, pitch: float = 0.0) -> bool:
        """*below* is the line right under *line* on its page: less than a paragraph gap lower (in pitches of
        *pitch*, else the body's)."""
        return below.page == line.page and 0 < line.y - below.y <= self.layout.line_gap * (pitch or self.metrics.pitch)

    def own_font(self, line: TextLine) -> bool:
        """*line* is set wholly in one font, and not the body's."""
        return bool(self.font) and len({font for font, _ in line.runs}) == 1 and line.runs[0][0] != self.font

    def same_size(self, line: TextLine, other: TextLine) -> bool:
        return abs(other.size - line.size) <= self.layout.same_size * line.size


def paragraphs_from_lines(lines: list[TextLine], layout: PdfLayout = LAYOUT) -> list[Paragraph]:
    """Paragraph records from positioned lines (docs/fulltext.md, "PDF text layer", steps 2-7)."""
    lines = without_furniture(joined_spread_lines(without_turned(lines), layout), layout)
    if not lines:
        return []
    body = _before_references(lines)  # a long reference list in small type must not set the body's measures
    metrics = _Metrics.of(body, layout)
    indent = _indent_step(body, metrics, layout)
    flow = _Flow(layout=layout, metrics=metrics, font=body_font(body), indent=indent,
                 margins=_left_margins(lines, indent, layout))
    cells = table_cells(lines, layout) | floats(lines, metrics.pitch, layout)
    out = _Builder(vocabulary=Vocabulary.of(lines))
    kept = [line for i, line in enumerate(lines) if i not in cells]
    for line, following in zip(kept, [*kept[1:], None]):
        if _step(flow, out, line, following) == "stop":
            break
    out.close()
    return out.ordered()


def _before_references(lines: list[TextLine]) -> list[TextLine]:
    """The lines before the first short line naming the references, when that leaves half the text or more."""
    for i, line in enumerate(lines):
        name = _NUMBERED.sub(r"\2", clean(line.text)).lower().rstrip(":")
        if name in _STOP_NAMES and i >= len(lines) // 2:
            return lines[:i]
    return lines


def _step(flow: _Flow, out: _Builder, line: TextLine, following: TextLine | None) -> str:
    """Take *line* into *out*: a caption or chart label is left out, a heading opens a section, text joins or
    opens a paragraph of its stream (body or small print); ``"stop"`` at the references."""
    text = clean(line.text)
    seen, flow.seen = flow.seen, line
    small = line.size < flow.layout.small_print * flow.metrics.size
    current = out.open.get(small)
    previous = current.last if current else None
    if line is flow.absorbed or not text or _label(text, flow) or _caption(flow, line, text, seen, previous):
        return ""
    opens = previous is None or flow.gap_above(line, previous) or _ended(previous)
    if opens and flow.font and _lead_heading(flow, line, following):
        return ""
    split = _run_in_split(flow, line, following, text) if opens else None
    if split is not None:
        text, previous = _take_run_in(flow, out, split, previous)
        if not text:
            return ""
    elif (found := _own_heading(flow, out, line, following, text, previous)) is not None:
        return _open_section(flow, out, line, found)
    if previous is not None and _breaks(flow, previous, line, following):
        out.close(small)
    out.add(small, text, line)
    return ""


def _caption(flow: _Flow, line: TextLine, text: str, seen: TextLine | None, previous: TextLine | None) -> bool:
    """*line* opens a caption (set apart from the text before), or goes on with the one being left out: a caption
    runs on until a gap or a change of size (the text after a small-print caption may follow closely)."""
    if flow.caption_size and not flow.gap_above(line, seen) \
            and abs(line.size - flow.caption_size) <= flow.layout.same_size * line.size:
        return True
    opens = is_caption(text) and (flow.gap_above(line, seen) or _ended(previous))
    flow.caption_size = line.size if opens else 0.0
    return opens


def _run_in_split(flow: _Flow, line: TextLine, following: TextLine | None, text: str) -> tuple[str, str] | None:
    """``(heading, rest)`` of a line opening a paragraph with a run-in heading (``rest`` empty when the heading
    fills its line and its paragraph opens on the next)."""
    split = run_in_heading(line, flow.font, continued=bool(flow.heading_lead), layout=flow.layout)
    if split is None and not flow.heading_lead and _whole_line_run_in(flow, line, following):
        return text, ""
    return split


def _take_run_in(flow: _Flow, out: _Builder, split: tuple[str, str],
                 previous: TextLine | None) -> tuple[str, TextLine | None]:
    """Open the section a run-in heading names: the text left after it, and the line its paragraph follows."""
    lead, text = split
    found = _run_in_level(_join([flow.heading_lead, lead], out.vocabulary) if flow.heading_lead else lead)
    flow.heading_lead = ""
    if found is not None:
        out.heading(*found)
        flow.seen_heading, previous = True, None
    return text, previous


def _own_heading(flow: _Flow, out: _Builder, line: TextLine, following: TextLine | None, text: str,
                 previous: TextLine | None) -> tuple[int, str] | None:
    """The level and title when *line* is a heading on a line of its own, or over it and the next line."""
    set_apart = following is not None and bool(following.runs) and bool(line.runs) \
        and following.runs[0][0] != line.runs[-1][0]
    gap_above = flow.gap_above(line, previous)
    found = None
    if following is not None and _same_style_below(flow, line, following):  # a heading set over two lines
        found = _heading(_join([text, clean(following.text)], out.vocabulary), line, flow, gap_above=gap_above,
                         set_apart=True)
        flow.absorbed = following if found is not None else None
    goes_on = following is not None and bool(following.runs) and following.runs[0][0] in {f for f, _ in line.runs} \
        and flow.same_size(line, following) and flow.next_line(line, following)  # its font and size go on below
    return found or _heading(text, line, flow, gap_above=gap_above, set_apart=set_apart, goes_on=goes_on)


def _open_section(flow: _Flow, out: _Builder, line: TextLine, found: tuple[int, str]) -> str:
    level, title = found
    if title.lower().rstrip(":") in _STOP_NAMES:
        return "stop"
    out.heading(flow.level(line, level, out.path), title)
    flow.seen_heading = True
    return ""


def _label(text: str, flow: _Flow) -> bool:
    """A chart's tick labels or a lone number: no letters, and shorter than a third of a body line."""
    return not any(c.isalpha() for c in text) and len(text) < max(flow.layout.label_chars, flow.metrics.chars / 3)


def _ended(line: TextLine | None) -> bool:
    return line is None or bool(_ENDS_SENTENCE.search(clean(line.text)))


def _lead_heading(flow: _Flow, line: TextLine, following: TextLine | None) -> bool:
    """A heading set in its own font over a line and the start of the next, run in there (``3.1. Effects of …`` /
    ``on Serum Activity. Serum …``): keep the first part for the run-in split of the next line."""
    if not flow.own_font(line) or following is None or _ENDS_SENTENCE.search(line.text):
        return False
    if not flow.next_line(line, following) or not flow.same_size(line, following):
        return False  # a heading set over two lines keeps its size: a larger one above is a heading of its own
    if run_in_heading(following, flow.font, continued=True, layout=flow.layout) is None \
            or following.runs[0][0] != line.runs[0][0]:
        return False
    flow.heading_lead = clean(line.text)
    return True


def _same_style_below(flow: _Flow, line: TextLine, following: TextLine) -> bool:
    """*following* is the next baseline in *line*'s one font (not the body's) and size: a heading's second line."""
    return (flow.own_font(line) and {f for f, _ in following.runs} == {line.runs[0][0]} and flow.same_size(line, following)
            and flow.next_line(line, following, max(flow.metrics.pitch, flow.layout.leading * line.size)))


def _whole_line_run_in(flow: _Flow, line: TextLine, following: TextLine | None) -> bool:
    """A line wholly in one font other than the body's that ends a short sentence (``Effect of watering on
    growth.``), followed at the body's line pitch by a line in the body's font and size: a run-in heading whose
    text starts on the next line."""
    if not flow.own_font(line) or following is None or not following.runs or following.runs[0][0] != flow.font:
        return False
    if not flow.next_line(line, following) or not flow.same_size(line, following):
        return False
    return run_in_heading(replace(line, runs=(*line.runs, (flow.font, " A"))), flow.font, layout=flow.layout) is not None


def _run_in_level(lead: str) -> tuple[int, str] | None:
    """The level and title of a run-in heading: its numbering's depth, or below the current section."""
    title = clean(lead).rstrip(".:").strip()
    if not title:
        return None
    if (match := _NUMBERED.match(title)) is not None:
        number, rest = match.groups()
        return (number.count(".") + 1 if number[0].isdigit() else 1), rest
    return 9, title


def _breaks(flow: _Flow, previous: TextLine, line: TextLine, following: TextLine | None) -> bool:
    """Whether *line* opens a new paragraph after *previous* (docs/fulltext.md, "PDF text layer", step 5)."""
    layout, metrics, indent = flow.layout, flow.metrics, flow.indent
    before = normalise_space(previous.text)
    ends_sentence = bool(_ENDS_SENTENCE.search(before))
    drop = previous.y - line.y
    if previous.page != line.page or drop <= 0 or drop > layout.jump * metrics.pitch + previous.size:
        # The flow jumped (page or column). With indented first lines, an indented line starts a paragraph
        # (against the next line when close, the column's edge, else the page's common starts); else unless it ended.
        if indent is None:
            return ends_sentence
        start = following.x if following is not None and flow.next_line(line, following) \
            else _margin(line, flow.margins[line.page])
        return line.x - start >= layout.indent_share * indent
    if drop > layout.line_gap * metrics.pitch or _BULLET.match(line.text.lstrip()):
        return True
    if ends_sentence and drop > layout.sentence_gap * metrics.pitch:
        return True  # tight paragraph spacing (a third of a line or less) after a sentence's end
    if indent is not None and line.x - previous.x >= layout.indent_share * indent \
            and not _BULLET.match(previous.text.lstrip()):
        return True  # a first-line indent (not the hanging indent under a bullet)
    return ends_sentence and len(before) < layout.short_line * metrics.chars and line.text.lstrip()[:1].isupper()


def _left_margins(lines: list[TextLine], indent: float | None, layout: PdfLayout) -> dict[int, list[float]]:
    """Each page's column edges: common line starts less the indented ones, so an indent is told from a column."""
    starts: dict[int, Counter[int]] = {}
    for line in lines:
        starts.setdefault(line.page, Counter())[round(line.x)] += 1
    margins: dict[int, list[float]] = {}
    for page, counter in starts.items():
        common = [x for x, count in counter.items() if count >= layout.margin_lines] or [counter.most_common(1)[0][0]]
        if indent is not None:
            common = [x for x in common
                      if not any(abs(x - indent - other) <= layout.margin_slack for other in common)] or common
        margins[page] = sorted(float(x) for x in common)
    return margins


def _margin(line: TextLine, margins: list[float]) -> float:
    """The column edge *line* starts from: the nearest common start at or left of it."""
    return max((m for m in margins if m <= line.x + 1), default=margins[0])


def _indent_step(lines: list[TextLine], metrics: _Metrics, layout: PdfLayout) -> float | None:
    """The first-line indent the document uses, or ``None`` when its paragraphs are not indented: the commonest
    step right after a line that ends a sentence (a table's rows and a list's items step right without one)."""
    steps = Counter(
        round(b.x - a.x) for a, b in zip(lines, lines[1:])
        if a.page == b.page and 0 < a.y - b.y < layout.line_gap * metrics.pitch and _ENDS_SENTENCE.search(a.text.rstrip())
        and layout.indent_least * metrics.size < b.x - a.x < layout.indent_most * metrics.size
    )
    if not steps:
        return None
    step, count = steps.most_common(1)[0]
    return float(step) if count >= 2 else None


def _heading(text: str, line: TextLine, flow: _Flow, *, gap_above: bool, set_apart: bool = False,
             goes_on: bool = False) -> tuple[int, str] | None:
    """The level and title when *line* is a heading; *set_apart*: the next line is in another font (a longer line
    in a font of its own is still a heading then, not the first line of a paragraph set in that font); *goes_on*:
    the next line goes on in its font and size (a paragraph set in a font of its own, such as an abstract's)."""
    if not _may_head(text, line, flow, set_apart):
        return None
    match = _NUMBERED.match(text.rstrip(":").strip())
    number, title = match.groups() if match else ("", text.rstrip(":").strip())
    if title.lower() in _SECTION_NAMES:
        return (number.count(".") + 1 if number[:1].isdigit() else 1), title
    if _ENDS_SENTENCE.search(title) or not title[:1].isupper():
        return None
    if number[:1].isdigit() and len(title.split()) <= flow.layout.numbered_words:
        return number.count(".") + 1, title
    return _styled(title, len(text.split()), line, flow, set_apart, goes_on) if gap_above else None


def _may_head(text: str, line: TextLine, flow: _Flow, set_apart: bool = False) -> bool:
    """Whether *text* may be a heading at all: short, no caption, some letters, and, unless a section's name, set
    apart from the body by its font or size."""
    layout, size = flow.layout, flow.metrics.size
    words = text.split()
    if not words or len(words) > layout.heading_words or len(text) > layout.heading_chars or is_caption(text) \
            or sum(c.isalpha() for c in text) < layout.heading_letters:
        return False  # too long for a heading, a caption, or a figure's panel letter
    if not flow.font or text.rstrip(":").lower() in _SECTION_NAMES:
        return True
    if line.runs and all(f == flow.font for f, _ in line.runs) and line.size < layout.heading_size * size:
        return False  # set in the body's font and size: a table row, a byline, a short line of text
    if set_apart and flow.own_font(line) and text.isupper():
        return True  # small capitals in a font of their own, the text going on in another: a heading
    return line.size >= layout.small_print * size  # smaller than the body: an affiliation, a footnote, a label


def _styled(title: str, words: int, line: TextLine, flow: _Flow, set_apart: bool,
            goes_on: bool) -> tuple[int, str] | None:
    """The level and title of an unnamed, unnumbered heading set apart by a gap above: ALL CAPS, or (after the
    first heading) larger than the body, Title Case, or a line of its own in another font than the body's.
    With fonts, the level comes from the heading's style (``_Flow.level``): 0 here."""
    layout = flow.layout
    typographic = 0 if flow.font else 1
    letters = [c for c in title if c.isalpha()]
    if len(letters) >= layout.heading_letters and all(c.isupper() for c in letters) and words <= layout.short_heading:
        return typographic, title
    if not flow.seen_heading:
        return None
    if line.size > layout.larger * flow.metrics.size or words <= layout.short_heading and _title_case(title):
        return typographic, title
    if flow.font and not goes_on and (words <= layout.numbered_words or set_apart) and all(f != flow.font for f, _ in line.runs) \
            and sum(c.isdigit() for c in title) < layout.digits * len(title):
        return typographic, title  # a line of its own in another font than the body's: a sentence-case heading
    return None


def _title_case(title: str) -> bool:
    words = [w for w in re.findall(r"[A-Za-z][\w'-]*", title)]
    return bool(words) and all(w[0].isupper() or w.lower() in _SMALL_WORDS for w in words)


def _join(lines: list[str], vocabulary: Vocabulary) -> str:
    out = ""
    for line in lines:
        if not out:
            out = line
        elif out.endswith(_HYPHENS) and len(out) > 1 and out[-2].isalpha():
            head = re.findall(r"[^\W\d_]+$", out[:-1])
            tail = re.findall(r"^[^\W\d_]+", line)
            compound = not line[:1].islower() or (head and tail and vocabulary.keeps_hyphen(head[0], tail[0]))
            suspended = compound and bool(tail) and vocabulary.suspends(tail[0])
            out = (out[:-1] + ("- " if suspended else "-") if compound else out[:-1]) + line
        else:
            out = f"{out} {line}"
    return out
