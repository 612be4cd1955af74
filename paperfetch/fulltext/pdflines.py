"""A PDF's text layer as positioned lines, read by pypdfium2 (the default, glyph by glyph) or pypdf, and the
one :class:`PdfLayout` value every rule of the PDF layer (pdflines, pdflayout, pdftext) reads its measures from.

PDFium's own line breaks split a line at every raised or lowered glyph (``m`` | ``2``) and its text runs break
apart on Type-3 fonts, so the lines are built here from the characters (docs/fulltext.md, "PDF text layer", step 1).
"""

from __future__ import annotations

import ctypes
import io
import math
import time
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from itertools import islice
from typing import Any, NamedTuple

from paperfetch import defaults
from paperfetch.errors import ConfigurationError
from paperfetch.fulltext.base import FullTextError, FullTextTooLarge

__all__ = ["DEFAULT_ENGINE", "LAYOUT", "PdfEngine", "PdfLayout", "TextLine", "pdf_lines"]


@dataclass(frozen=True, kw_only=True)
class PdfLayout:
    """Every measure the PDF layer decides by, in one place. Lengths are shares of a font size (*sizes*, *em*),
    of a glyph's or line's height (*heights*), of the body's line pitch (*pitches*), or points where said.

    The defaults were set on the real publisher PDFs of shared/fixtures/real/fulltext_pairs and checked on the
    held-out renderings and the real article pairs (benchmarks/pdf_layers.py prints the figures)."""

    # -- glyphs into lines (pypdfium2) --
    seconds: float = 60.0  # seconds of PDFium time per PDF: a page it is slow on (Type-3 fonts) stops the read
    band_slack: float = 0.25  # heights a glyph's middle may lie outside a line's band and join it (accents, scripts)
    overlap: float = 0.4  # heights a glyph may start left of the line's end (a ligature's second letter, a kerned pair)
    backstep: float = 0.1  # heights a glyph may start left of the last one's start: further left, a new line
    gutter: float = 1.6  # heights of empty space that part two columns: a glyph further right than that starts a new line
    word_space: float = 0.15  # em of gap that is a word space (letter spacing in justified text stays under it)
    font_space: float = 0.06  # em of gap that is a word space where the font changes (into maths, out of italics)
    script_size: float = 0.85  # a glyph below this share of the line's size (or height) is a super/subscript: no space ..
    script_gap: float = 0.3  # ... when its gap is under this many of its heights (``10`` + ``−3`` reads ``10−3``)
    least_size: float = 2.0  # points: a size under this is a Type-3 font's (its size is in its matrix): the height stands in
    # -- the body's measures --
    same_size: float = 0.05  # two font sizes within this share of each other are one size (a heading's two lines, a caption's)
    body_band: float = 0.1  # lines within this share of the body size are body lines when the line pitch is measured
    pitch_span: float = 4.0  # sizes: a baseline step over this is no line pitch (a gap, a column's end)
    pitch_quantile: float = 0.3  # the body's line pitch is this quantile of its steps (gaps around headings pull the median up)
    leading: float = 1.2  # sizes: the line pitch assumed where none can be measured (1.2 is the usual leading)
    full_line: float = 0.75  # a full body line holds this quantile of the body lines' character counts
    small_print: float = 0.9  # below this share of the body size a line is small print (notes, tables): its own stream
    # -- paragraphs --
    line_gap: float = 1.4  # pitches: lines closer than this are consecutive lines of one block; a wider gap opens a paragraph
    sentence_gap: float = 1.2  # pitches: after a line that ends a sentence, a gap over this opens a paragraph (tight spacing)
    jump: float = 4.0  # pitches (plus a line): a drop over this, or a rise, is a jump to another column or page
    indent_least: float = 0.8  # sizes: the least step right that is a first-line indent ..
    indent_most: float = 6.0  # ... and the most (further right is a column or a centred line)
    indent_share: float = 0.6  # of the document's indent step: a line starting that far right of its column opens a paragraph
    short_line: float = 0.7  # of a full line: a line shorter than this that ends a sentence ends its paragraph
    margin_lines: int = 3  # lines that must start at one x (rounded to a point) on a page for it to be a column edge
    margin_slack: float = 2.0  # points: an edge this near another edge plus the indent is an indented start, not a column
    # -- headings --
    heading_words: int = 12  # most words of a heading line (and :attr:`heading_chars` characters): longer is text
    heading_chars: int = 120  # most characters of a heading line
    heading_letters: int = 3  # fewest letters of a heading: fewer is a figure's panel letter or a number
    heading_size: float = 1.1  # a line in the body's font under this share of its size is no heading (unless a section name)
    larger: float = 1.15  # a line over this share of the body size, set apart, is a heading by its size
    top_style: float = 0.5  # points: an unnumbered heading style larger than a top level's by this is top level too
    short_heading: int = 8  # most words of an ALL-CAPS or Title-Case heading
    numbered_words: int = 10  # most words of a numbered heading's title, and of one known only by its own font
    run_in_words: int = 14  # most words of a run-in heading (``2.2. Protocol.``) before the text goes on in the body's font
    label_chars: float = 12.0  # characters: a line without letters shorter than this (or a third of a full line) is a chart label
    # -- page furniture --
    fallback_pitch: float = 12.0  # points: the line pitch the furniture rule assumes when no two baselines can be measured
    edge_gap: float = 1.3  # pitches: a gap over this parts a page's header or footer from its text
    edge_lines: int = 2  # baselines a header or footer may take at a page's top or foot ..
    masthead_lines: int = 5  # ... and how many when all are small print (a journal's masthead)
    edge_band: float = 0.12  # of a page's text height: a running line this near its top or foot is furniture too
    running_prefix: int = 8  # characters of a running line that a page's first edge line may open with (``Metabolites 2014, 4``)
    # -- widely spaced justified lines --
    spread_evenness: float = 1.25  # a spread line's widest gap between pieces is at most this times the narrowest (+ slack)
    spread_slack: float = 0.1  # sizes of slack for a spread line's gaps and for its edges against its neighbours' edges
    spread_reach: float = 2.5  # sizes: how far above or below the neighbour spanning a spread line may be
    # -- tables and floats --
    short_width: float = 0.6  # of the usual line width: a line under this is short (a table cell; a float between column lines)
    digits: float = 0.3  # a line this share digits or more is figures (a table's cell or row), never a heading
    row_band: float = 2.0  # points: lines whose baselines fall in one band of this height share a row
    float_window: int = 60  # lines ahead in which a column's text may go on after a float drawn inside it
    float_drift: float = 2.0  # sizes a column's next line may start away from its last one
    float_gap: float = 1.6  # pitches: the most a column's next line lies below its last one
    float_size: float = 0.15  # of the size: a column's next line differs by less in size from its last one
    # -- refusing a text layer --
    broken_words: float = 0.25  # over this share of letters standing alone (pdflayout.broken_words): refused
    broken_sample: int = 200  # fewest words a document needs before its share of lone letters is judged


#: The measures every caller uses unless it passes its own :class:`PdfLayout`.
LAYOUT = PdfLayout()


class PdfEngine(str, Enum):
    PYPDF = "pypdf"
    PYPDFIUM2 = "pypdfium2"

    @classmethod
    def coerce(cls, value: PdfEngine | str) -> PdfEngine:
        try:
            return cls(value)
        except ValueError:
            choices = ", ".join(repr(e.value) for e in cls)
            raise ConfigurationError(f"unknown PDF text engine {value!r}; choose one of {choices}") from None


@dataclass(frozen=True, kw_only=True)
class TextLine:
    """One line of text on a page: where it starts (``x``), its baseline (``y``), its font size, its text.

    ``right`` is where it ends (0 when the engine does not say) and ``runs`` its text as ``(font name, text)``
    pieces (empty when the engine gives no fonts): a run-in heading is the line's first run in another font.
    ``turned`` is set for text printed a quarter or half turn round (read in its own frame): a landscape table,
    an axis label, a stamp in the margin.
    """

    page: int
    x: float
    y: float
    size: float
    text: str
    right: float = 0.0
    runs: tuple[tuple[str, str], ...] = ()
    turned: bool = False


#: The engine used when none is named: measured on real article PDFs against their JATS (docs/fulltext.md).
DEFAULT_ENGINE = PdfEngine.PYPDFIUM2


def pdf_lines(pdf: bytes, *, engine: PdfEngine | str = DEFAULT_ENGINE, max_bytes: int = defaults.MAX_PDF_BYTES,
              max_pages: int | None = None, fallback: bool = True, layout: PdfLayout = LAYOUT) -> list[TextLine]:
    """The text lines of *pdf*, page by page; :class:`FullTextError` when it cannot be read.

    When *engine* cannot parse the file (its parser raises), the other engine is tried once (*fallback*); a PDF
    that is encrypted, too slow or not a PDF at all fails at once."""
    chosen = PdfEngine.coerce(engine)
    if len(pdf) > max_bytes:
        raise FullTextTooLarge(f"the PDF is {len(pdf):,} bytes, over the cap of {max_bytes:,}")
    if not pdf.lstrip()[:5].startswith(b"%PDF-"):
        raise FullTextError("not a PDF: the body does not start with %PDF-")
    try:
        return _read(pdf, chosen, max_pages, layout)
    except _Unparsed as first:
        if not fallback:
            raise FullTextError(str(first)) from first.__cause__
        other = PdfEngine.PYPDF if chosen is PdfEngine.PYPDFIUM2 else PdfEngine.PYPDFIUM2
        try:
            return _read(pdf, other, max_pages, layout)
        except _Unparsed as second:
            raise FullTextError(f"{first}; {second}") from first.__cause__


class _Unparsed(FullTextError):
    """The engine's parser raised on the file: the other engine may still read it."""


def _read(pdf: bytes, engine: PdfEngine, max_pages: int | None, layout: PdfLayout) -> list[TextLine]:
    try:
        if engine is PdfEngine.PYPDF:
            return list(_pypdf_lines(pdf, max_pages))
        return list(_pdfium_lines(pdf, max_pages, layout))
    except (FullTextError, ConfigurationError):  # ours, already saying what is wrong (or the missing engine)
        raise
    except Exception as exc:  # noqa: BLE001 - a parser of untrusted bytes may raise anything; one paper's failure
        raise _Unparsed(f"the PDF's text layer cannot be read ({engine.value}): {type(exc).__name__}: {exc}") from exc


def _pypdf_lines(pdf: bytes, max_pages: int | None) -> Iterator[TextLine]:
    from pypdf import PdfReader  # a core dependency, imported when used: most callers never read text

    reader = PdfReader(io.BytesIO(pdf))
    if reader.is_encrypted and not reader.decrypt(""):
        raise FullTextError("the PDF is encrypted")
    for number, page in enumerate(islice(reader.pages, max_pages)):
        yield from _pypdf_page(number, page)


def _pypdf_page(number: int, page: Any) -> list[TextLine]:  # noqa: ANN401 - a pypdf page
    """pypdf's visitor callbacks collected into lines: text runs until a newline, placed where its first run is."""
    lines: list[TextLine] = []
    parts: list[str] = []
    where: list[tuple[float, float, float]] = []

    def visit(text: str, cm: list[float], tm: list[float], font: Any, size: float) -> None:  # noqa: ANN401
        for i, piece in enumerate(text.split("\n")):
            if i:
                end_line()
            if piece.strip() and not where:
                scale = abs(tm[3] * cm[3]) or 1.0
                where.append((tm[4] * cm[0] + tm[5] * cm[2] + cm[4], tm[4] * cm[1] + tm[5] * cm[3] + cm[5],
                              float(size or 0) * scale))
            parts.append(piece)

    def end_line() -> None:
        if "".join(parts).strip() and where:
            x, y, size = where[0]
            lines.append(TextLine(page=number, x=x, y=y, size=size, text="".join(parts)))
        parts.clear()
        where.clear()

    page.extract_text(visitor_text=visit)
    end_line()
    return lines


# PDFium marks a hyphen that ends a line as U+0002 (U+FFFE in some builds): the "-" printed there.
_HYPHEN_MARKS = {0x02: "-", 0xFFFE: "-"}


def _pdfium_lines(pdf: bytes, max_pages: int | None, layout: PdfLayout) -> Iterator[TextLine]:
    """The lines of *pdf*, read glyph by glyph by PDFium."""
    try:
        import pypdfium2 as pdfium  # a core dependency; a trimmed install may lack it
        import pypdfium2.raw as raw
    except ImportError:
        raise ConfigurationError("the pypdfium2 engine needs pypdfium2: pip install pypdfium2") from None
    started = time.monotonic()
    try:
        document = pdfium.PdfDocument(pdf)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise FullTextError("the PDF is encrypted") from exc
        raise
    try:
        for number in range(len(document) if max_pages is None else min(max_pages, len(document))):
            if time.monotonic() - started > layout.seconds:
                raise FullTextError(f"the PDF's text layer took over {layout.seconds:.0f} s to read "
                                    f"(stopped at page {number + 1})")
            page = document[number]
            textpage = page.get_textpage()
            try:
                yield from (line.text_line(layout) for line in _page_lines(raw, textpage.raw, number, layout))
            finally:
                textpage.close()
                page.close()
    finally:
        document.close()


class _Glyph(NamedTuple):
    """One printed character: its loose box (the font's ascent to descent, its origin to its advance), font,
    printed size, and whether the text has a space before it."""

    char: str
    left: float
    right: float
    bottom: float
    top: float
    font: str
    size: float
    space: bool
    turned: bool

    @property
    def height(self) -> float:
        return self.top - self.bottom


@dataclass(slots=True)
class _Line:
    page: int
    left: float
    bottom: float
    top: float
    right: float
    height: float
    last_left: float = 0.0
    turned: bool = False
    largest: float = 0.0  #: the largest glyph size taken (0 before any)
    parts: list[str] = field(default_factory=list)
    fonts: list[str] = field(default_factory=list)
    glyphs: list[_Glyph] = field(default_factory=list)

    def takes(self, glyph: _Glyph, layout: PdfLayout) -> bool:
        middle = (glyph.bottom + glyph.top) / 2
        slack = layout.band_slack * self.height
        return (glyph.turned == self.turned and self.bottom - slack <= middle <= self.top + slack
                and glyph.left >= min(self.right - layout.overlap * self.height, self.last_left)
                - layout.backstep * self.height
                and glyph.left - self.right < layout.gutter * self.height)

    def space_before(self, glyph: _Glyph, layout: PdfLayout) -> None:
        """A space before *glyph* where the text has one or the gap is a word's (none before a super/subscript)."""
        gap = glyph.left - self.right
        typed = glyph.size >= layout.least_size  # a Type-3 font's size lives in its own matrix
        em = glyph.size if typed else glyph.height
        largest = self.largest if typed else 0.0
        small = glyph.size < layout.script_size * largest if largest >= layout.least_size \
            else glyph.height < layout.script_size * self.height
        least = layout.font_space if self.fonts and glyph.font != self.fonts[-1] else layout.word_space
        if (glyph.space or gap > least * em) and not (small and gap < layout.script_gap * glyph.height):
            self.parts.append(" ")
            self.fonts.append(glyph.font)
        if glyph.height > self.height:
            self.height, self.bottom, self.top = glyph.height, glyph.bottom, glyph.top

    def add(self, glyph: _Glyph) -> None:
        self.glyphs.append(glyph)
        self.parts.append(glyph.char)
        self.fonts.append(glyph.font)
        if glyph.right > self.right:
            self.right = glyph.right
        if glyph.size > self.largest:
            self.largest = glyph.size
        self.last_left = glyph.left

    def text_line(self, layout: PdfLayout) -> TextLine:
        runs: list[tuple[str, list[str]]] = []
        for char, font in zip(self.parts, self.fonts):
            if runs and (runs[-1][0] == font or char == " "):
                runs[-1][1].append(char)
            else:
                runs.append((font, [char]))
        sizes = Counter(glyph.size for glyph in self.glyphs)
        styles = Counter((glyph.font, glyph.size) for glyph in self.glyphs)
        size = sizes.most_common(1)[0][0] if sizes else 0.0
        size = size if size >= layout.least_size else self.height  # a Type-3 font's: the glyphs' height
        # the line's place is where its commonest style sits: a taller glyph of another font (a symbol font's
        # loose box) widens the band but does not move the line
        style = styles.most_common(1)[0][0] if styles else None
        y = next(glyph.bottom for glyph in self.glyphs if (glyph.font, glyph.size) == style) if style else self.bottom
        return TextLine(page=self.page, x=self.left, y=y, size=size, text="".join(self.parts),
                        right=self.right, runs=tuple((font, "".join(chars)) for font, chars in runs), turned=self.turned)


def _page_lines(raw: Any, handle: Any, number: int, layout: PdfLayout) -> Iterator[_Line]:  # noqa: ANN401 - ctypes
    line: _Line | None = None
    for glyph in _glyphs(raw, handle):
        if line is not None and line.takes(glyph, layout):
            line.space_before(glyph, layout)
        else:
            if line is not None:
                yield line
            line = _Line(page=number, left=glyph.left, bottom=glyph.bottom, top=glyph.top, right=glyph.right,
                         height=glyph.height, last_left=glyph.left, turned=glyph.turned)
        line.add(glyph)
    if line is not None:
        yield line


def _glyphs(raw: Any, handle: Any) -> Iterator[_Glyph]:  # noqa: ANN401 - ctypes handles
    """The page's printed characters in PDFium's order; spaces and control characters only mark a space."""
    rect = raw.FS_RECTF()
    rect_ref = ctypes.byref(rect)
    unicode_of, box_of = raw.FPDFText_GetUnicode, raw.FPDFText_GetLooseCharBox
    # a text object has one font, size and matrix (so angle): its glyphs' style is read once (by the object's address)
    object_of = ctypes.cast(raw.FPDFText_GetTextObject, ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int))
    styles: dict[int, tuple[str, float, int]] = {}
    space, high = False, ""
    for k in range(raw.FPDFText_CountChars(handle)):
        code = unicode_of(handle, k)
        if 0xD800 <= code < 0xDC00:  # PDFium gives a character past U+FFFF as two UTF-16 halves
            high = chr(code)
            continue
        char = _HYPHEN_MARKS.get(code) or chr(code)
        if high:
            char, high = (high + char).encode("utf-16", "surrogatepass").decode("utf-16", "replace"), ""
        if char.isspace() or (not char.isprintable() and unicodedata.category(char[0]) in _UNPRINTED
                              and code not in _HYPHEN_MARKS):
            space = space or char == " "
            continue
        owner = object_of(handle, k)
        style = styles.get(owner) if owner else None
        if style is None:
            style = _style(raw, handle, k)
            if owner:
                styles[owner] = style
        box_of(handle, k, rect_ref)
        font, size, turns = style
        left, right, bottom, top = _upright(rect, turns)
        if top <= bottom:
            continue
        yield _Glyph(char, left, right, bottom, top, font, size, space, turns != 0)
        space = False


_UNPRINTED = ("Cc", "Cf", "Co", "Cn", "Cs")


def _style(raw: Any, handle: Any, k: int) -> tuple[str, float, int]:  # noqa: ANN401 - ctypes handles
    """Character *k*'s font name, size as printed (the nominal size scaled by the text matrix: often 1 × a matrix
    of 10) and quarter turns."""
    buffer, flags, matrix = ctypes.create_string_buffer(128), ctypes.c_int(), raw.FS_MATRIX()
    raw.FPDFText_GetFontInfo(handle, k, buffer, len(buffer), ctypes.byref(flags))
    raw.FPDFText_GetMatrix(handle, k, ctypes.byref(matrix))
    size = round(raw.FPDFText_GetFontSize(handle, k) * math.hypot(matrix.c, matrix.d), 1)
    angle = raw.FPDFText_GetCharAngle(handle, k)
    turns = round(angle / (math.pi / 2)) % 4 if angle >= 0 else 0
    return buffer.value.decode("latin-1", "replace"), size, turns


def _upright(rect: Any, turns: int) -> tuple[float, float, float, float]:  # noqa: ANN401 - an FS_RECTF
    """The glyph's box (left, right, bottom, top) in its own reading frame: text set turned a quarter, half or
    three quarters round (a landscape table, a rotated stamp) reads left to right there like any other line.
    *turns* are PDFium's quarter turns, clockwise (text reading up the page, a text matrix of ``b > 0``, is 3)."""
    xs, ys = (rect.left, rect.right), (rect.bottom, rect.top)
    if turns == 0:
        return min(xs), max(xs), min(ys), max(ys)
    cos, sin = ((1, 0), (0, -1), (-1, 0), (0, 1))[turns]  # of the turn back
    across, up = zip(*[(x * cos + y * sin, -x * sin + y * cos) for x in xs for y in ys])
    return min(across), max(across), min(up), max(up)
