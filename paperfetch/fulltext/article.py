""":func:`parse_pdf`: a PDF's bytes as an :class:`~paperfetch.fulltext.base.Article`, as :func:`parse_jats`
gives a JATS file's (pure functions: bytes in, Article out; the text layer is :mod:`paperfetch.fulltext.pdftext`'s)."""

from __future__ import annotations

import re

from paperfetch import defaults
from paperfetch.fulltext.base import Article, FullTextError, NoTextLayer, canonical_id, license_code, license_id
from paperfetch.fulltext.pdflines import DEFAULT_ENGINE, LAYOUT, PdfEngine, TextLine, pdf_lines
from paperfetch.fulltext.pdftext import paragraphs_from_lines, refused

__all__ = ["parse_pdf"]

_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"<>]+")


def parse_pdf(body: bytes, *, engine: PdfEngine | str = DEFAULT_ENGINE,
              max_bytes: int = defaults.MAX_PDF_BYTES) -> Article:
    """The paragraphs of a PDF's text layer, its title (the first page's largest type) and the DOI and licence its
    first page states (a DOI there is the paper's own: references come later). FullTextError when it cannot be
    read, NoTextLayer (one) when it has no text."""
    lines = pdf_lines(body, engine=engine, max_bytes=max_bytes)
    if why := refused(lines):
        raise FullTextError(why)
    paragraphs = tuple(paragraphs_from_lines(lines))
    if not paragraphs:
        raise NoTextLayer("no text layer: the PDF gives no text (scanned pages are not read: no OCR)")
    first = " ".join(p.text for p in paragraphs if (p.page or 1) == 1)
    doi = next((ident for m in _DOI.finditer(first) if (ident := canonical_id(m.group(0).rstrip(".,;:)]}"), "doi"))),
               "")
    licence = license_code(first)
    return Article(text_source="pdf", doi=doi, title=_title(lines), license=licence,
                   license_id=license_id(first) if licence else "", paragraphs=paragraphs)


def _title(lines: list[TextLine]) -> str:
    """The first run of lines in the largest type on the first page (a one-word line there is a logo, not a title)."""
    first = [line for line in lines if line.page == lines[0].page and not line.turned and len(line.text.split()) > 1]
    if not first:
        return ""
    top = max(line.size for line in first) * (1 - LAYOUT.same_size)
    start = next(n for n, line in enumerate(first) if line.size >= top)
    end = next((n for n in range(start, len(first)) if first[n].size < top), len(first))
    return " ".join(line.text.strip() for line in first[start:end])
