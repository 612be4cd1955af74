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
)
from paperfetch.fulltext.pdflines import DEFAULT_ENGINE, PdfEngine, TextLine, pdf_lines

__all__ = ["BROKEN_WORDS", "PdfEngine", "paragraphs_from_lines", "pdf_paragraphs", "refused"]

#: Above this share of fragment words (:func:`~paperfetch.fulltext.pdflayout.broken_words`) a text layer is refused.
BROKEN_WORDS = 0.15

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
                   max_pages: int | None = None) -> list[Paragraph]:
    """The paragraphs of *pdf*'s text layer in reading order (``[]`` without text). Raises FullTextError for a
    body that is not a readable PDF or whose text layer breaks its words into letters, ConfigurationError for an
    unknown *engine*."""
    lines = pdf_lines(pdf, engine=engine, max_bytes=max_bytes, max_pages=max_pages)
    if why := refused(lines):
        raise FullTextError(why)
    return paragraphs_from_lines(lines)


def refused(lines: list[TextLine]) -> str:
    """Why *lines* are no usable text layer (``""`` when they are)."""
    if (share := broken_words(lines)) > BROKEN_WORDS:
        return f"the PDF's text layer breaks words into letters ({share:.0%} of its words are fragments)"
    return ""


@dataclass
class _Metrics:
    """The body text's measures over the document: font size, line pitch, characters in a full line."""

    size: float
    pitch: float
    chars: float

    @classmethod
    def of(cls, lines: list[TextLine]) -> _Metrics:
        # the body's size is the one most characters are set in (tables and notes can have more lines)
        weights: Counter[float] = Counter()
        for line in lines:
            if line.size > 0:
                weights[round(line.size, 1)] += len(line.text.strip())
        size = weights.most_common(1)[0][0] if weights else 10.0
        body = [line for line in lines if abs(line.size - size) <= 0.1 * size] or lines
        pitches = [a.y - b.y for a, b in zip(body, body[1:]) if a.page == b.page and 0 < a.y - b.y < 4 * a.size]
        chars = [len(line.text.strip()) for line in body] or [80]
        # a low quantile, not the median: the gaps around headings and short paragraphs would pull that up
        pitch = sorted(pitches)[int(0.3 * (len(pitches) - 1))] if pitches else 1.2 * size
        return cls(size=size, pitch=pitch,
                   chars=float(sorted(chars)[int(0.75 * (len(chars) - 1))]))


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
    rows: list[Paragraph] = field(default_factory=list)
    open: dict[bool, _Open] = field(default_factory=dict)
    path: list[tuple[int, str]] = field(default_factory=list)
    opened: int = 0
    starts: list[int] = field(default_factory=list)

    def ordered(self) -> list[Paragraph]:
        """The rows in the order their paragraphs start (a paragraph cut by small print closes after it)."""
        rows = [row for _, row in sorted(zip(self.starts, self.rows), key=lambda pair: pair[0])]
        return [replace(row, paragraph=i) for i, row in enumerate(rows)]

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
                self.rows.append(Paragraph(section=self.section(), paragraph=len(self.rows), text=text,
                                           page=current.page))
                self.starts.append(current.order)

    def heading(self, level: int, title: str) -> None:
        self.close()
        self.path = [(lvl, t) for lvl, t in self.path if lvl < level] + [(level, title)]


@dataclass
class _Flow:
    """What the walk over the lines knows: the document's measures and the line before."""

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
            self.styles[style] = 1 if not tops or style[0] > max(tops) + 0.5 else min(deeper, 4)
        return self.styles[style]

    def gap_above(self, line: TextLine, before: TextLine | None) -> bool:
        return before is None or before.page != line.page or before.y - line.y > 1.4 * self.metrics.pitch \
            or before.y - line.y <= 0


def paragraphs_from_lines(lines: list[TextLine]) -> list[Paragraph]:
    """Paragraph records from positioned lines (docs/fulltext.md, "PDF text layer", steps 2-7)."""
    lines = without_furniture(joined_spread_lines(lines))
    if not lines:
        return []
    body = _before_references(lines)  # a long reference list in small type must not set the body's measures
    metrics = _Metrics.of(body)
    indent = _indent_step(body, metrics)
    flow = _Flow(metrics=metrics, font=body_font(body), indent=indent, margins=_left_margins(lines, indent))
    cells = table_cells(lines) | floats(lines, metrics.pitch)
    out = _Builder(vocabulary=Vocabulary.of(lines))
    for i, line in enumerate(lines):
        if i in cells:
            continue
        following = next((lines[j] for j in range(i + 1, len(lines)) if j not in cells), None)
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
    if line is flow.absorbed:
        return ""
    if not text or _label(text, line, flow.metrics):
        return ""
    # a caption runs on until a gap or a change of size (the text after a small-print caption may follow closely)
    if flow.caption_size and not flow.gap_above(line, seen) and abs(line.size - flow.caption_size) <= 0.05 * line.size:
        return ""
    flow.caption_size = 0.0
    small = line.size < 0.9 * flow.metrics.size
    current = out.open.get(small)
    previous = current.last if current else None
    if is_caption(text) and (flow.gap_above(line, seen) or _ended(previous)):
        flow.caption_size = line.size
        return ""
    opens = previous is None or flow.gap_above(line, previous) or _ended(previous)
    if opens and flow.font and _lead_heading(flow, line, following):
        return ""
    split = run_in_heading(line, flow.font, continued=bool(flow.heading_lead)) if opens else None
    if split is None and opens and not flow.heading_lead and _whole_line_run_in(flow, line, following):
        split = (text, "")  # a run-in heading that fills its line: its paragraph opens on the next
    if split is not None:
        lead, text = split
        found = _run_in_level(_join([flow.heading_lead, lead], out.vocabulary) if flow.heading_lead else lead)
        flow.heading_lead = ""
        if found is not None:
            out.heading(*found)
            flow.seen_heading, previous = True, None
        if not text:
            return ""
    else:
        set_apart = following is not None and bool(following.runs) and bool(line.runs) \
            and following.runs[0][0] != line.runs[-1][0]
        gap_above = flow.gap_above(line, previous)
        found = None
        if following is not None and _same_style_below(flow, line, following):  # a heading set over two lines
            found = _heading(_join([text, clean(following.text)], out.vocabulary), line, flow.metrics,
                             gap_above=gap_above, seen_heading=flow.seen_heading, font=flow.font, set_apart=True)
            flow.absorbed = following if found is not None else None
        if found is None:
            found = _heading(text, line, flow.metrics, gap_above=gap_above, seen_heading=flow.seen_heading,
                             font=flow.font, set_apart=set_apart)
        if found is not None:
            level, title = found
            if title.lower().rstrip(":") in _STOP_NAMES:
                return "stop"
            out.heading(flow.level(line, level, out.path), title)
            flow.seen_heading = True
            return ""
    if previous is not None and _breaks(previous, line, following, flow.metrics, flow.indent, flow.margins[line.page]):
        out.close(small)
    out.add(small, text, line)
    return ""


def _label(text: str, line: TextLine, metrics: _Metrics) -> bool:
    """A chart's tick labels or a lone number: no letters, and shorter than a third of a body line."""
    return not any(c.isalpha() for c in text) and len(text) < max(12.0, metrics.chars / 3)


def _ended(line: TextLine | None) -> bool:
    return line is None or bool(_ENDS_SENTENCE.search(clean(line.text)))


def _lead_heading(flow: _Flow, line: TextLine, following: TextLine | None) -> bool:
    """A heading set in its own font over a line and the start of the next, run in there (``3.1. Effects of …`` /
    ``on Serum Activity. Serum …``): keep the first part for the run-in split of the next line."""
    if len(line.runs) != 1 or line.runs[0][0] == flow.font or following is None or _ENDS_SENTENCE.search(line.text):
        return False
    if following.page != line.page or not 0 < line.y - following.y < 1.4 * flow.metrics.pitch \
            or abs(following.size - line.size) > 0.05 * line.size:
        return False  # a heading set over two lines keeps its size: a larger one above is a heading of its own
    if run_in_heading(following, flow.font, continued=True) is None or following.runs[0][0] != line.runs[0][0]:
        return False
    flow.heading_lead = clean(line.text)
    return True


def _same_style_below(flow: _Flow, line: TextLine, following: TextLine) -> bool:
    """*following* is the next baseline in *line*'s one font (not the body's) and size: a heading's second line."""
    fonts = {font for font, _ in line.runs}
    return (bool(flow.font) and len(fonts) == 1 and flow.font not in fonts and {f for f, _ in following.runs} == fonts
            and following.page == line.page and abs(following.size - line.size) <= 0.05 * line.size
            and 0 < line.y - following.y < 1.4 * max(flow.metrics.pitch, 1.2 * line.size))


def _whole_line_run_in(flow: _Flow, line: TextLine, following: TextLine | None) -> bool:
    """A line wholly in one font other than the body's that ends a short sentence (``Effect of watering on
    growth.``), followed at the body's line pitch by a line in the body's font and size: a run-in heading whose
    text starts on the next line."""
    if not flow.font or len({font for font, _ in line.runs}) != 1 or line.runs[0][0] == flow.font:
        return False
    if following is None or following.page != line.page or not following.runs or following.runs[0][0] != flow.font:
        return False
    if not 0 < line.y - following.y < 1.4 * flow.metrics.pitch or abs(following.size - line.size) > 0.05 * line.size:
        return False
    return run_in_heading(replace(line, runs=(*line.runs, (flow.font, " A"))), flow.font) is not None


def _run_in_level(lead: str) -> tuple[int, str] | None:
    """The level and title of a run-in heading: its numbering's depth, or below the current section."""
    title = clean(lead).rstrip(".:").strip()
    if not title:
        return None
    if (match := _NUMBERED.match(title)) is not None:
        number, rest = match.groups()
        return (number.count(".") + 1 if number[0].isdigit() else 1), rest
    return 9, title


def _breaks(previous: TextLine, line: TextLine, following: TextLine | None, metrics: _Metrics, indent: float | None,
            margins: list[float]) -> bool:
    before = normalise_space(previous.text)
    ends_sentence = bool(_ENDS_SENTENCE.search(before))
    drop = previous.y - line.y
    if previous.page != line.page or drop <= 0 or drop > 4 * metrics.pitch + previous.size:
        # The flow jumped (page or column). With indented first lines, an indented line starts a paragraph
        # (against the next line when close, the column's edge, else the page's common starts); else unless it ended.
        if indent is None:
            return ends_sentence
        if following is not None and following.page == line.page and 0 < line.y - following.y < 1.4 * metrics.pitch:
            return line.x - following.x >= 0.6 * indent
        return line.x - _margin(line, margins) >= 0.6 * indent
    if drop > 1.4 * metrics.pitch or _BULLET.match(line.text.lstrip()):
        return True
    if ends_sentence and drop > 1.2 * metrics.pitch:
        return True  # tight paragraph spacing (a third of a line or less) after a sentence's end
    if indent is not None and line.x - previous.x >= 0.6 * indent and not _BULLET.match(previous.text.lstrip()):
        return True  # a first-line indent (not the hanging indent under a bullet)
    return ends_sentence and len(before) < 0.7 * metrics.chars and line.text.lstrip()[:1].isupper()


def _left_margins(lines: list[TextLine], indent: float | None) -> dict[int, list[float]]:
    """Each page's column edges: common line starts less the indented ones, so an indent is told from a column."""
    starts: dict[int, Counter[int]] = {}
    for line in lines:
        starts.setdefault(line.page, Counter())[round(line.x)] += 1
    margins: dict[int, list[float]] = {}
    for page, counter in starts.items():
        common = [x for x, count in counter.items() if count >= 3] or [counter.most_common(1)[0][0]]
        if indent is not None:
            common = [x for x in common if not any(abs(x - indent - other) <= 2 for other in common)] or common
        margins[page] = sorted(float(x) for x in common)
    return margins


def _margin(line: TextLine, margins: list[float]) -> float:
    """The column edge *line* starts from: the nearest common start at or left of it."""
    return max((m for m in margins if m <= line.x + 1), default=margins[0])


def _indent_step(lines: list[TextLine], metrics: _Metrics) -> float | None:
    """The first-line indent the document uses, or ``None`` when its paragraphs are not indented."""
    steps = Counter(
        round(b.x - a.x) for a, b in zip(lines, lines[1:])
        if a.page == b.page and 0 < a.y - b.y < 1.4 * metrics.pitch and 0.8 * metrics.size < b.x - a.x < 6 * metrics.size
    )
    if not steps:
        return None
    step, count = steps.most_common(1)[0]
    return float(step) if count >= 2 else None


def _heading(text: str, line: TextLine, metrics: _Metrics, *, gap_above: bool, seen_heading: bool,
             font: str = "", set_apart: bool = False) -> tuple[int, str] | None:
    """The level and title when *line* is a heading; *set_apart*: the next line is in another font (a longer line
    in a font of its own is still a heading then, not the first line of a paragraph set in that font)."""
    words = text.split()
    if not words or len(words) > 12 or len(text) > 120 or is_caption(text) or sum(c.isalpha() for c in text) < 3:
        return None  # too long for a heading, a caption, or a figure's panel letter
    if font and line.runs and all(f == font for f, _ in line.runs) and line.size < 1.1 * metrics.size \
            and text.rstrip(":").lower() not in _SECTION_NAMES:
        return None  # set in the body's font and size: a table row, a byline, a short line of text
    if font and line.size < 0.9 * metrics.size and text.rstrip(":").lower() not in _SECTION_NAMES:
        return None  # smaller than the body: an affiliation, a footnote, a label
    bare = text.rstrip(":").strip()
    if (match := _NUMBERED.match(bare)) is not None:
        number, title = match.groups()
        if title.lower() in _SECTION_NAMES:
            return number.count(".") + 1 if number[0].isdigit() else 1, title
    else:
        number, title = "", bare
    if title.lower() in _SECTION_NAMES:
        return 1, title
    if _ENDS_SENTENCE.search(title) or not title[:1].isupper():
        return None
    if number and number[0].isdigit() and len(title.split()) <= 10:
        return number.count(".") + 1, title
    if not gap_above:
        return None
    letters = [c for c in title if c.isalpha()]
    if len(letters) >= 3 and all(c.isupper() for c in letters) and len(words) <= 8:
        return 0 if font else 1, title
    typographic = 0 if font else 1  # with fonts, the level comes from the heading's style (``_Flow.level``)
    if seen_heading and line.size > 1.15 * metrics.size:
        return typographic, title
    if seen_heading and len(words) <= 8 and _title_case(title):
        return typographic, title
    if font and seen_heading and (len(words) <= 10 or set_apart) and all(f != font for f, _ in line.runs) \
            and sum(c.isdigit() for c in title) < 0.3 * len(title):
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
