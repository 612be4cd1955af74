"""A PDF's text layer as positioned lines, read by pypdfium2 (the default, glyph by glyph) or pypdf."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any

from paperfetch import defaults
from paperfetch.errors import ConfigurationError
from paperfetch.fulltext.base import FullTextError, FullTextTooLarge

__all__ = ["DEFAULT_ENGINE", "PdfEngine", "TextLine", "pdf_lines"]

logger = logging.getLogger(__name__)

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
    """

    page: int
    x: float
    y: float
    size: float
    text: str
    right: float = 0.0
    runs: tuple[tuple[str, str], ...] = ()


#: The engine used when none is named: measured on real article PDFs against their JATS (docs/fulltext.md).
DEFAULT_ENGINE = PdfEngine.PYPDFIUM2


def pdf_lines(pdf: bytes, *, engine: PdfEngine | str = DEFAULT_ENGINE, max_bytes: int = defaults.MAX_PDF_BYTES,
              max_pages: int | None = None, fallback: bool = True) -> list[TextLine]:
    """The text lines of *pdf*, page by page; :class:`FullTextError` when it cannot be read.

    When *engine* cannot parse the file (its parser raises), the other engine is tried once (*fallback*); a PDF
    that is encrypted, too slow or not a PDF at all fails at once."""
    chosen = PdfEngine.coerce(engine)
    if len(pdf) > max_bytes:
        raise FullTextTooLarge(f"the PDF is {len(pdf):,} bytes, over the cap of {max_bytes:,}")
    if not pdf.lstrip()[:5].startswith(b"%PDF-"):
        raise FullTextError("not a PDF: the body does not start with %PDF-")
    try:
        return _read(pdf, chosen, max_pages)
    except _Unparsed as first:
        if not fallback:
            raise FullTextError(str(first)) from first.__cause__
        other = PdfEngine.PYPDF if chosen is PdfEngine.PYPDFIUM2 else PdfEngine.PYPDFIUM2
        try:
            return _read(pdf, other, max_pages)
        except _Unparsed as second:
            raise FullTextError(f"{first}; {second}") from first.__cause__


class _Unparsed(FullTextError):
    """The engine's parser raised on the file: the other engine may still read it."""


def _read(pdf: bytes, engine: PdfEngine, max_pages: int | None) -> list[TextLine]:
    reader = _pypdf_lines if engine is PdfEngine.PYPDF else _pdfium_lines
    try:
        return list(reader(pdf, max_pages))
    except (FullTextError, ConfigurationError):  # ours, already saying what is wrong (or the missing engine)
        raise
    except Exception as exc:  # noqa: BLE001 - a parser of untrusted bytes may raise anything; one paper's failure
        raise _Unparsed(f"the PDF's text layer cannot be read ({engine.value}): {type(exc).__name__}: {exc}") from exc



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
        import pypdfium2  # a core dependency; a trimmed install may lack it
    except ImportError:
        raise ConfigurationError("the pypdfium2 engine needs pypdfium2: pip install pypdfium2") from None
    from paperfetch.fulltext.pdfchars import pdfium_char_lines

    try:
        for fields in pdfium_char_lines(pdf, max_pages):
            yield TextLine(**fields)
    except pypdfium2.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise FullTextError("the PDF is encrypted") from exc
        raise
