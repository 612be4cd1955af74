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
from paperfetch.fulltext.chunks import CHUNK_COLUMNS, chunks, count_tokens, default_tokenizer
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
from paperfetch.fulltext.pdflines import PdfEngine, TextLine, pdf_lines
from paperfetch.fulltext.pdftext import paragraphs_from_lines, pdf_paragraphs
from paperfetch.fulltext.references import parse_references

__all__ = [
    "CHUNK_COLUMNS",
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
    "chunks",
    "count_tokens",
    "default_tokenizer",
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
