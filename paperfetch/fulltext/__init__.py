"""Full text as data: JATS XML and PDF text layers as paragraph, reference, table and figure records
(docs/fulltext.md)."""

from paperfetch.fulltext.article import parse_pdf
from paperfetch.fulltext.base import (
    SECTION_SEPARATOR,
    Article,
    Figure,
    FullTextError,
    FullTextTooLarge,
    NoTextLayer,
    Paragraph,
    Reference,
    Table,
    license_code,
    license_id,
)
from paperfetch.fulltext.bundle import ERROR_COLUMNS, FullText
from paperfetch.fulltext.chunks import CHUNK_COLUMNS, chunks, count_tokens, default_tokenizer
from paperfetch.fulltext.frame import (
    FIGURE_COLUMNS,
    PARAGRAPH_COLUMNS,
    RECORD_FIELDS,
    REFERENCE_COLUMNS,
    TABLE_COLUMNS,
    article_rows,
    figure_rows,
    figures_frame,
    paper_fields,
    paragraphs_frame,
    reference_rows,
    references_frame,
    table_rows,
    tables_frame,
)
from paperfetch.fulltext.jats import parse_jats, parse_jats_set
from paperfetch.fulltext.local import read
from paperfetch.fulltext.markdown import to_markdown
from paperfetch.fulltext.pdflines import PdfEngine, TextLine, pdf_lines
from paperfetch.fulltext.pdftext import paragraphs_from_lines, pdf_paragraphs
from paperfetch.fulltext.references import parse_references

__all__ = [
    "Article",
    "CHUNK_COLUMNS",
    "ERROR_COLUMNS",
    "FIGURE_COLUMNS",
    "Figure",
    "FullText",
    "FullTextError",
    "FullTextTooLarge",
    "NoTextLayer",
    "PARAGRAPH_COLUMNS",
    "Paragraph",
    "PdfEngine",
    "RECORD_FIELDS",
    "REFERENCE_COLUMNS",
    "Reference",
    "SECTION_SEPARATOR",
    "TABLE_COLUMNS",
    "Table",
    "TextLine",
    "article_rows",
    "chunks",
    "count_tokens",
    "default_tokenizer",
    "figure_rows",
    "figures_frame",
    "license_code",
    "license_id",
    "paper_fields",
    "paragraphs_frame",
    "paragraphs_from_lines",
    "parse_jats",
    "parse_jats_set",
    "parse_pdf",
    "parse_references",
    "pdf_lines",
    "pdf_paragraphs",
    "read",
    "reference_rows",
    "references_frame",
    "table_rows",
    "tables_frame",
    "to_markdown",
]
