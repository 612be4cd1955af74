"""The fixed-schema frames of full text: paragraphs, references, tables, figures (docs/fulltext.md, "Parsing")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from paperfetch.fulltext.base import JatsArticle, Paragraph, license_id
from paperfetch.fulltext.tables import pipe_table, table_frame

__all__ = [
    "FIGURE_COLUMNS",
    "FIGURE_DTYPES",
    "PARAGRAPH_COLUMNS",
    "PARAGRAPH_DTYPES",
    "REFERENCE_COLUMNS",
    "REFERENCE_DTYPES",
    "TABLE_COLUMNS",
    "TABLE_DTYPES",
    "TEXT_SOURCES",
    "article_rows",
    "figure_rows",
    "figures_frame",
    "paragraphs_frame",
    "pdf_rows",
    "reference_rows",
    "references_frame",
    "table_rows",
    "tables_frame",
]

#: Where a paragraph's text came from: JATS XML (Europe PMC, PMC E-utilities, bioRxiv) or a PDF's text layer.
TEXT_SOURCES = ("jats", "pdf")

PARAGRAPH_DTYPES: Mapping[str, Any] = {
    "input": "object",
    "doi": "string",
    "pmid": "string",
    "pmcid": "string",
    "text_source": pd.CategoricalDtype(list(TEXT_SOURCES)),
    "license": "string",
    "section": "string",
    "paragraph": "Int64",
    "text": "string",
    "paragraph_id": "string",
    "citations": "object",
    "citation_offsets": "object",
    "figures": "object",
    "tables": "object",
    "words": "Int64",
    "chars": "Int64",
    "page": "Int64",
    "license_id": "string",
}
PARAGRAPH_COLUMNS: tuple[str, ...] = tuple(PARAGRAPH_DTYPES)

#: ``citing_*`` name the paper whose ``<ref-list>`` it is; ``doi``/``pmid``/``pmcid`` the cited work, so the
#: frame goes straight into ``Retriever.download_frame(refs, column="doi")``.
REFERENCE_DTYPES: Mapping[str, Any] = {
    "input": "object",
    "citing_doi": "string",
    "citing_pmid": "string",
    "citing_pmcid": "string",
    "index": "Int64",
    "ref_id": "string",
    "label": "string",
    "text": "string",
    "title": "string",
    "source": "string",
    "year": "Int64",
    "doi": "string",
    "pmid": "string",
    "pmcid": "string",
    "license": "string",
    "license_id": "string",
}
REFERENCE_COLUMNS: tuple[str, ...] = tuple(REFERENCE_DTYPES)

_PAPER_DTYPES: Mapping[str, Any] = {"input": "object", "doi": "string", "pmid": "string", "pmcid": "string",
                                    "license": "string", "license_id": "string"}
#: One row per ``<table-wrap>``: ``table`` is a DataFrame of the cells, ``markdown`` the same as a pipe table.
TABLE_DTYPES: Mapping[str, Any] = {
    **_PAPER_DTYPES, "table_id": "string", "label": "string", "caption": "string", "footnotes": "string",
    "section": "string", "markdown": "string", "table": "object", "citations": "object", "figures": "object",
    "tables": "object",
}
TABLE_COLUMNS: tuple[str, ...] = tuple(TABLE_DTYPES)
#: One row per ``<fig>``: ``graphic`` is the href of its image as the JATS gives it (never downloaded).
FIGURE_DTYPES: Mapping[str, Any] = {
    **_PAPER_DTYPES, "figure_id": "string", "label": "string", "caption": "string", "section": "string",
    "graphic": "string", "citations": "object", "figures": "object", "tables": "object",
}
FIGURE_COLUMNS: tuple[str, ...] = tuple(FIGURE_DTYPES)


def _or_none(value: str | None) -> str | None:
    return value or None


def _paragraph(p: Paragraph) -> dict[str, Any]:
    return {"section": p.section, "paragraph": p.paragraph, "text": p.text,
            "paragraph_id": p.paragraph_id or f"p{p.paragraph}", "citations": list(p.citations),
            "citation_offsets": list(p.citation_offsets),
            "figures": list(p.figures), "tables": list(p.tables), "words": len(p.text.split()), "chars": len(p.text),
            "page": p.page}


def _paper(article: JatsArticle, input: Any) -> dict[str, Any]:  # noqa: A002
    return {"input": input, "doi": _or_none(article.doi), "pmid": _or_none(article.pmid),
            "pmcid": _or_none(article.pmcid), "license": _or_none(article.license),
            "license_id": _or_none(article.license_id)}


def article_rows(article: JatsArticle, *, input: Any) -> list[dict[str, Any]]:  # noqa: A002 - the column's name
    """The paragraph rows of one JATS article, for the paper asked for as *input*."""
    paper = {**_paper(article, input), "text_source": "jats"}
    return [{**paper, **_paragraph(p)} for p in article.paragraphs]


def table_rows(article: JatsArticle, *, input: Any) -> list[dict[str, Any]]:  # noqa: A002
    """One row per table of one JATS article."""
    return [{**_paper(article, input), "table_id": t.table_id, "label": _or_none(t.label), "caption": _or_none(t.caption),
             "footnotes": _or_none(t.footnotes), "section": t.section, "markdown": pipe_table(t), "table": table_frame(t),
             "citations": list(t.citations), "figures": list(t.figures), "tables": list(t.tables)}
            for t in article.tables]


def figure_rows(article: JatsArticle, *, input: Any) -> list[dict[str, Any]]:  # noqa: A002
    """One row per figure of one JATS article."""
    return [{**_paper(article, input), "figure_id": f.figure_id, "label": _or_none(f.label),
             "caption": _or_none(f.caption), "section": f.section, "graphic": _or_none(f.graphic),
             "citations": list(f.citations), "figures": list(f.figures), "tables": list(f.tables)}
            for f in article.figures]


def pdf_rows(paragraphs: Iterable[Paragraph], *, input: Any, doi: str | None = None, pmid: str | None = None,  # noqa: A002
             pmcid: str | None = None, license: str | None = None) -> list[dict[str, Any]]:  # noqa: A002
    """The paragraph rows of one PDF's text layer; the ids and licence come from the metadata, not the PDF."""
    paper = {"input": input, "doi": _or_none(doi), "pmid": _or_none(pmid), "pmcid": _or_none(pmcid),
             "text_source": "pdf", "license": _or_none(license)}
    return [{**paper, **_paragraph(p)} for p in paragraphs]


def reference_rows(article: JatsArticle, *, input: Any) -> list[dict[str, Any]]:  # noqa: A002
    citing = {"input": input, "citing_doi": _or_none(article.doi), "citing_pmid": _or_none(article.pmid),
              "citing_pmcid": _or_none(article.pmcid), "license": _or_none(article.license),
              "license_id": _or_none(article.license_id)}
    return [
        {**citing, "index": r.index, "ref_id": _or_none(r.ref_id), "label": _or_none(r.label), "text": _or_none(r.text),
         "title": _or_none(r.title), "source": _or_none(r.source), "year": int(r.year) if r.year else None,
         "doi": _or_none(r.doi), "pmid": _or_none(r.pmid), "pmcid": _or_none(r.pmcid)}
        for r in article.references
    ]


def _frame(rows: Iterable[Mapping[str, Any]], dtypes: Mapping[str, Any], what: str) -> pd.DataFrame:
    rows = list(rows)
    columns = list(dtypes)
    for row in rows:
        if extra := set(row) - set(columns):
            raise KeyError(f"not {what} columns: {sorted(extra)}")
    data = {column: [row.get(column) for row in rows] for column in columns}
    kept = [column for column, dtype in dtypes.items() if isinstance(dtype, str) and dtype == "object"]
    frame = pd.DataFrame({c: v for c, v in data.items() if c not in kept}, columns=columns)
    for column, dtype in dtypes.items():
        if column in kept:  # the inputs exactly as given; lists and DataFrames as they are
            values = np.empty(len(rows), dtype=object)
            values[:] = data[column] if rows else []
            frame[column] = pd.Series(values, index=frame.index, dtype=object)
        else:
            frame[column] = frame[column].astype(dtype)
    if "license_id" in dtypes:  # a row without one (PDF text, a licence from the metadata): read from its licence
        ids = [given if isinstance(given, str) and given else (license_id(value) or None if isinstance(value, str) else None)
               for given, value in zip(data["license_id"], data["license"])]
        frame["license_id"] = pd.Series(ids, index=frame.index, dtype="string")
    return frame


def paragraphs_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The paragraphs frame from row dicts (missing keys are nulls; extra keys are an error)."""
    return _frame(rows, PARAGRAPH_DTYPES, "paragraph")


def references_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The references frame from row dicts (missing keys are nulls; extra keys are an error)."""
    return _frame(rows, REFERENCE_DTYPES, "reference")


def tables_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The tables frame from row dicts (missing keys are nulls; extra keys are an error)."""
    return _frame(rows, TABLE_DTYPES, "table")


def figures_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The figures frame from row dicts (missing keys are nulls; extra keys are an error)."""
    return _frame(rows, FIGURE_DTYPES, "figure")
