"""Full text as data: JATS XML and PDF text layers turned into one record per paragraph, with sections, licences
and (for JATS) the cited works.

``parse_jats`` / ``parse_jats_set`` read JATS (``jats``), ``parse_references`` the ``<ref-list>``
(``references``), ``pdf_paragraphs`` a PDF's text layer (``pdftext``). Everything here works on bytes already
fetched: nothing they do makes a request or writes a file; ``frame`` shapes the records into the two
fixed-schema frames the Retriever returns. The one exception is ``fetch`` (not imported here): the orchestration
behind ``Retriever.fulltext``, which asks the JATS endpoints (:mod:`paperfetch.sources.fulltext`) through the
transport it is given, keeps the XML in the output folder and falls back to the PDF.
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
