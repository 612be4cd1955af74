"""Full text as data: JATS XML and PDF text layers turned into one record per paragraph, with sections, licences
and (for JATS) the cited works.

``parse_jats`` / ``parse_jats_set`` read JATS (``jats``), ``parse_references`` the ``<ref-list>``
(``references``), ``pdf_paragraphs`` a PDF's text layer (``pdftext``). Everything here works on bytes already
fetched: nothing in this package makes a request (the polite transport and the sources do that), writes a file
or builds a DataFrame (the Retriever does).
"""

from paperfetch.fulltext.base import (
    SECTION_SEPARATOR,
    FullTextError,
    FullTextTooLarge,
    JatsArticle,
    Paragraph,
    Reference,
    license_code,
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
    "Paragraph",
    "PdfEngine",
    "Reference",
    "SECTION_SEPARATOR",
    "TextLine",
    "license_code",
    "paragraphs_from_lines",
    "parse_jats",
    "parse_jats_set",
    "parse_references",
    "pdf_lines",
    "pdf_paragraphs",
]
