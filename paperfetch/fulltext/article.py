""":func:`parse_pdf`: a PDF's bytes as an :class:`~paperfetch.fulltext.base.Article`, as :func:`parse_jats`
gives a JATS file's (pure functions: bytes in, Article out; the text layer is :mod:`paperfetch.fulltext.pdftext`'s)."""

from __future__ import annotations

import re

from paperfetch import defaults
from paperfetch.fulltext.base import Article, NoTextLayer, canonical_id, license_code, license_id
from paperfetch.fulltext.pdflines import DEFAULT_ENGINE, PdfEngine
from paperfetch.fulltext.pdftext import pdf_paragraphs

__all__ = ["parse_pdf"]

_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"<>]+")


def parse_pdf(body: bytes, *, engine: PdfEngine | str = DEFAULT_ENGINE,
              max_bytes: int = defaults.MAX_PDF_BYTES) -> Article:
    """The paragraphs of a PDF's text layer, and the DOI and licence its first page states (a DOI there is the
    paper's own: references come later). FullTextError when it cannot be read, NoTextLayer (one) when it has no text."""
    paragraphs = tuple(pdf_paragraphs(body, engine=engine, max_bytes=max_bytes))
    if not paragraphs:
        raise NoTextLayer("no text layer: the PDF gives no text (scanned pages are not read: no OCR)")
    first = " ".join(p.text for p in paragraphs if (p.page or 1) == 1)
    doi = next((ident for m in _DOI.finditer(first) if (ident := canonical_id(m.group(0).rstrip(".,;:)]}"), "doi"))),
               "")
    licence = license_code(first)
    return Article(text_source="pdf", doi=doi, license=licence, license_id=license_id(first) if licence else "",
                   paragraphs=paragraphs)
