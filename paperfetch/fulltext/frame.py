"""The two fixed-schema frames of full text, paragraphs and references (docs/fulltext.md, "Parsing")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from paperfetch.fulltext.base import JatsArticle, Paragraph

__all__ = [
    "PARAGRAPH_COLUMNS",
    "PARAGRAPH_DTYPES",
    "REFERENCE_COLUMNS",
    "REFERENCE_DTYPES",
    "TEXT_SOURCES",
    "article_rows",
    "paragraphs_frame",
    "pdf_rows",
    "reference_rows",
    "references_frame",
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
}
REFERENCE_COLUMNS: tuple[str, ...] = tuple(REFERENCE_DTYPES)


def _or_none(value: str | None) -> str | None:
    return value or None


def article_rows(article: JatsArticle, *, input: Any) -> list[dict[str, Any]]:  # noqa: A002 - the column's name
    """The paragraph rows of one JATS article, for the paper asked for as *input*."""
    paper = {"input": input, "doi": _or_none(article.doi), "pmid": _or_none(article.pmid),
             "pmcid": _or_none(article.pmcid), "text_source": "jats", "license": _or_none(article.license)}
    return [{**paper, "section": p.section, "paragraph": p.paragraph, "text": p.text} for p in article.paragraphs]


def pdf_rows(paragraphs: Iterable[Paragraph], *, input: Any, doi: str | None = None, pmid: str | None = None,  # noqa: A002
             pmcid: str | None = None, license: str | None = None) -> list[dict[str, Any]]:  # noqa: A002
    """The paragraph rows of one PDF's text layer; the ids and licence come from the metadata, not the PDF."""
    paper = {"input": input, "doi": _or_none(doi), "pmid": _or_none(pmid), "pmcid": _or_none(pmcid),
             "text_source": "pdf", "license": _or_none(license)}
    return [{**paper, "section": p.section, "paragraph": p.paragraph, "text": p.text} for p in paragraphs]


def reference_rows(article: JatsArticle, *, input: Any) -> list[dict[str, Any]]:  # noqa: A002
    citing = {"input": input, "citing_doi": _or_none(article.doi), "citing_pmid": _or_none(article.pmid),
              "citing_pmcid": _or_none(article.pmcid)}
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
    frame = pd.DataFrame(data, columns=columns)
    frame["input"] = pd.Series(data["input"], index=frame.index, dtype=object)  # the inputs exactly as given
    for column, dtype in dtypes.items():
        if column != "input":
            frame[column] = frame[column].astype(dtype)
    return frame


def paragraphs_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The paragraphs frame from row dicts (missing keys are nulls; extra keys are an error)."""
    return _frame(rows, PARAGRAPH_DTYPES, "paragraph")


def references_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The references frame from row dicts (missing keys are nulls; extra keys are an error)."""
    return _frame(rows, REFERENCE_DTYPES, "reference")
