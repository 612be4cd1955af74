"""A PDF's text layer as positioned lines, read by pypdf (the default) or pypdfium2 (the ``[pdftext]`` extra)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any

from paperfetch.errors import ConfigurationError
from paperfetch.fulltext.base import FullTextError, FullTextTooLarge

__all__ = ["DEFAULT_MAX_PDF_BYTES", "PdfEngine", "TextLine", "pdf_lines"]

logger = logging.getLogger(__name__)

#: The size cap of one PDF handed to the text layer (bytes), checked before it is opened.
DEFAULT_MAX_PDF_BYTES = 100 * 1024 * 1024


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
    """One line of text on a page: where it starts (``x``), its baseline (``y``), its font size, its text."""

    page: int
    x: float
    y: float
    size: float
    text: str


def pdf_lines(pdf: bytes, *, engine: PdfEngine | str = PdfEngine.PYPDF, max_bytes: int = DEFAULT_MAX_PDF_BYTES,
              max_pages: int | None = None) -> list[TextLine]:
    """The text lines of *pdf*, page by page; :class:`FullTextError` when it cannot be read."""
    chosen = PdfEngine.coerce(engine)
    if len(pdf) > max_bytes:
        raise FullTextTooLarge(f"the PDF is {len(pdf):,} bytes, over the cap of {max_bytes:,}")
    if not pdf.lstrip()[:5].startswith(b"%PDF-"):
        raise FullTextError("not a PDF: the body does not start with %PDF-")
    reader = _pypdf_lines if chosen is PdfEngine.PYPDF else _pdfium_lines
    try:
        return list(reader(pdf, max_pages))
    except (FullTextError, ConfigurationError):  # ours, already saying what is wrong (or the missing extra)
        raise
    except Exception as exc:  # noqa: BLE001 - a parser of untrusted bytes may raise anything; one paper's failure
        raise FullTextError(f"the PDF's text layer cannot be read ({chosen.value}): {type(exc).__name__}: {exc}") from exc



def _pypdf_lines(pdf: bytes, max_pages: int | None) -> Iterator[TextLine]:
    from pypdf import PdfReader  # a core dependency, imported when used: most callers never read text

    reader = PdfReader(io.BytesIO(pdf))
    if reader.is_encrypted and not reader.decrypt(""):
        raise FullTextError("the PDF is encrypted")
    for number, page in enumerate(reader.pages):
        if max_pages is not None and number >= max_pages:
            break
        yield from _PypdfPage(number).read(page)


class _PypdfPage:
    """Collects pypdf's visitor callbacks into lines: text runs until a newline, placed where its first run is."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.lines: list[TextLine] = []
        self.parts: list[str] = []
        self.where: tuple[float, float, float] | None = None

    def read(self, page: Any) -> list[TextLine]:  # noqa: ANN401
        page.extract_text(visitor_text=self._visit)
        self._end_line()
        return self.lines

    def _visit(self, text: str, cm: list[float], tm: list[float], font: Any, size: float) -> None:  # noqa: ANN401
        pieces = text.split("\n")
        for i, piece in enumerate(pieces):
            if i:
                self._end_line()
            if piece.strip() and self.where is None:
                x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
                y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
                scale = abs(tm[3] * cm[3]) or 1.0
                self.where = (x, y, float(size or 0) * scale)
            self.parts.append(piece)

    def _end_line(self) -> None:
        text = "".join(self.parts)
        if text.strip() and self.where is not None:
            x, y, size = self.where
            self.lines.append(TextLine(page=self.number, x=x, y=y, size=size, text=text))
        self.parts = []
        self.where = None



def _pdfium_lines(pdf: bytes, max_pages: int | None) -> Iterator[TextLine]:
    try:
        import pypdfium2 as pdfium
    except ImportError:
        raise ConfigurationError("the pypdfium2 engine needs the extra: pip install 'paperfetch-oa[pdftext]'") from None
    document = pdfium.PdfDocument(pdf)
    try:
        for number in range(len(document)):
            if max_pages is not None and number >= max_pages:
                break
            page = document[number]
            textpage = page.get_textpage()
            try:
                yield from _pdfium_page_lines(number, textpage)
            finally:
                textpage.close()
                page.close()
    finally:
        document.close()


def _pdfium_page_lines(number: int, textpage: Any) -> Iterator[TextLine]:  # noqa: ANN401
    # PDFium's "rects" are one-font runs boxed tightly round their glyphs (a comma's is tiny and low): a run joins
    # the line when it starts right of its last run and its middle lies in the line's band, widened downwards.
    current: list[tuple[float, float, float, float, str]] = []
    for i in range(textpage.count_rects()):
        left, bottom, right, top = textpage.get_rect(i)
        text = textpage.get_text_bounded(left, bottom, right, top).translate(_PDFIUM_CHARS)
        if not text.strip():
            continue
        run = (left, bottom, right, top, text)
        if current and not _continues_line(current, run):
            yield _pdfium_line(number, current)
            current = []
        current.append(run)
    if current:
        yield _pdfium_line(number, current)


# PDFium marks a hyphen that ends a line as U+0002 (U+FFFE in get_text_range); both are the "-" printed there.
_PDFIUM_CHARS = str.maketrans({"\x02": "-", "\ufffe": "-", "\r": " ", "\n": " "})


def _continues_line(line: list[tuple[float, float, float, float, str]], run: tuple[float, float, float, float, str]) -> bool:
    bottom = min(r[1] for r in line)
    top = max(r[3] for r in line)
    middle = (run[1] + run[3]) / 2
    return run[0] >= line[-1][2] - 1.0 and bottom - 0.3 * (top - bottom) <= middle <= top


def _pdfium_line(number: int, runs: list[tuple[float, float, float, float, str]]) -> TextLine:
    # a space where the gap passes a fifth of the line's height (a quarter em is a word space); the run's would space quotes
    height = max(run[3] - run[1] for run in runs)
    parts = [runs[0][4]]
    for before, run in zip(runs, runs[1:]):
        space = run[0] - before[2] > 0.2 * height and not before[4].endswith(" ") and not run[4].startswith(" ")
        parts.append((" " if space else "") + run[4])
    return TextLine(page=number, x=runs[0][0], y=min(run[1] for run in runs), size=height, text="".join(parts))
