"""Full text as data: JATS XML and PDF text layers as paragraph records (docs/fulltext.md)."""

from paperfetch.fulltext.base import (
    SECTION_SEPARATOR,
    FullTextError,
    FullTextTooLarge,
    JatsArticle,
    Paragraph,
    Reference,
    license_code,
)
from paperfetch.fulltext.frame import (
    PARAGRAPH_COLUMNS,
    REFERENCE_COLUMNS,
    article_rows,
    paragraphs_frame,
    pdf_rows,
    reference_rows,
    references_frame,
)
from paperfetch.fulltext.jats import parse_jats, parse_jats_set
from paperfetch.fulltext.pdflines import DEFAULT_MAX_PDF_BYTES, PdfEngine, TextLine, pdf_lines
from paperfetch.fulltext.pdftext import paragraphs_from_lines, pdf_paragraphs
from paperfetch.fulltext.references import parse_references
from paperfetch.fulltext.xmltext import DEFAULT_MAX_XML_BYTES

__all__ = [
    "DEFAULT_MAX_PDF_BYTES",
    "DEFAULT_MAX_XML_BYTES",
    "FullTextError",
    "FullTextTooLarge",
    "JatsArticle",
    "PARAGRAPH_COLUMNS",
    "Paragraph",
    "PdfEngine",
    "REFERENCE_COLUMNS",
    "Reference",
    "SECTION_SEPARATOR",
    "TextLine",
    "article_rows",
    "license_code",
    "paragraphs_frame",
    "paragraphs_from_lines",
    "parse_jats",
    "parse_jats_set",
    "parse_references",
    "pdf_lines",
    "pdf_paragraphs",
    "pdf_rows",
    "reference_rows",
    "references_frame",
]
