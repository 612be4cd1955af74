"""The fixed-schema frames of full text: paragraphs, references, tables, figures (docs/fulltext.md, "Parsing"),
each a function of an :class:`~paperfetch.fulltext.base.Article` and the paper's record (:func:`paper_fields`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields
from typing import Any

import numpy as np
import pandas as pd

from paperfetch.cells import is_missing
from paperfetch.fulltext.base import Article, Figure, Paragraph, Reference, Table, license_id
from paperfetch.fulltext.tables import pipe_table, table_frame

__all__ = [
    "FIGURE_COLUMNS",
    "FIGURE_DTYPES",
    "PARAGRAPH_COLUMNS",
    "PARAGRAPH_DTYPES",
    "RECORD_FIELDS",
    "REFERENCE_COLUMNS",
    "REFERENCE_DTYPES",
    "TABLE_COLUMNS",
    "TABLE_DTYPES",
    "TEXT_SOURCES",
    "article_rows",
    "by_input",
    "figure_rows",
    "figures_frame",
    "paper_fields",
    "paragraphs_frame",
    "reference_rows",
    "references_frame",
    "table_rows",
    "tables_frame",
    "typed_frame",
]

#: Where a paragraph's text came from: JATS XML (Europe PMC, PMC E-utilities, bioRxiv) or a PDF's text layer.
TEXT_SOURCES = ("jats", "pdf")

#: The paper's bibliographic record beyond its ids and licence, at the end of every frame (``citing_…`` in the
#: references frame, whose ``title``/``year`` are the cited work's): from the paper's record, else the document.
_BIB_DTYPES: Mapping[str, Any] = {"title": "string", "year": "Int64", "journal": "string", "authors": "object",
                                  "retracted": "boolean"}
_IDS = ("doi", "pmid", "pmcid")
_ID_DTYPES = dict.fromkeys(_IDS, "string")
#: The fields of a paper's record the frames carry: ids, licence and the bibliographic record.
RECORD_FIELDS = (*_IDS, "license", "license_id", *_BIB_DTYPES)

_DTYPE_OF = {"str": "string", "int": "Int64", "int | None": "Int64"}


def _columns(record: type[Paragraph | Reference | Table | Figure], **instead: Mapping[str, Any]) -> dict[str, Any]:
    """A column for each field of *record* (text a string, a number Int64, a tuple an object), or the *instead*
    columns in a field's place: the columns of the rows :func:`_fields` makes."""
    out: dict[str, Any] = {}
    for f in fields(record):
        out.update(instead.get(f.name, {f.name: _DTYPE_OF.get(str(f.type), "object")}))
    return out


PARAGRAPH_DTYPES: Mapping[str, Any] = {
    "input": "object",
    **_ID_DTYPES,
    "text_source": pd.CategoricalDtype(list(TEXT_SOURCES)),
    "license": "string",
    **_columns(Paragraph, page={"words": "Int64", "chars": "Int64", "page": "Int64"}),
    "license_id": "string",
    **_BIB_DTYPES,
}
PARAGRAPH_COLUMNS: tuple[str, ...] = tuple(PARAGRAPH_DTYPES)

#: ``citing_*`` name the paper whose ``<ref-list>`` it is; ``doi``/``pmid``/``pmcid`` the cited work, so the
#: frame goes straight into ``Retriever.download_frame(refs, column="doi")``.
REFERENCE_DTYPES: Mapping[str, Any] = {
    "input": "object",
    **{f"citing_{name}": dtype for name, dtype in _ID_DTYPES.items()},
    **_columns(Reference, year={"year": "Int64"}, **dict.fromkeys(_IDS, {})),  # the cited work's ids come after
    **_ID_DTYPES,
    "license": "string",
    "license_id": "string",
    **{f"citing_{name}": dtype for name, dtype in _BIB_DTYPES.items()},
}
REFERENCE_COLUMNS: tuple[str, ...] = tuple(REFERENCE_DTYPES)

_PAPER_DTYPES: Mapping[str, Any] = {"input": "object", **_ID_DTYPES, "license": "string", "license_id": "string",
                                    **_BIB_DTYPES}
#: One row per ``<table-wrap>``: ``table`` is a DataFrame of the cells, ``markdown`` the same as a pipe table.
TABLE_DTYPES: Mapping[str, Any] = {**_PAPER_DTYPES, **_columns(Table, columns={"markdown": "string"}, rows={"table": "object"})}
TABLE_COLUMNS: tuple[str, ...] = tuple(TABLE_DTYPES)
#: One row per ``<fig>``: ``graphic`` is the href of its image as the JATS gives it (never downloaded).
FIGURE_DTYPES: Mapping[str, Any] = {**_PAPER_DTYPES, **_columns(Figure)}
FIGURE_COLUMNS: tuple[str, ...] = tuple(FIGURE_DTYPES)


def _given(value: Any) -> Any:
    """*value*, or None where it is missing or empty (an empty author list included)."""
    if isinstance(value, (list, tuple)):
        return list(value) or None
    return None if is_missing(value) or value == "" else value


def paper_fields(article: Article, record: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The paper's columns for the rows of *article*: the record's ids, else those the document states; the
    licence a JATS file states (its own), else the record's (a PDF's first page is read second); the title and
    the rest of the record (year, journal, authors, retracted) from *record*, else the document's title. A
    licence brings its own ``license_id`` (none: read from the licence)."""
    record = record or {}
    out = {name: _given(record.get(name)) or getattr(article, name) or None for name in _IDS}
    own = article.license if article.text_source == "jats" or not _given(record.get("license")) else ""
    out["license"] = own or _given(record.get("license"))
    out["license_id"] = (article.license_id or None) if own else _given(record.get("license_id"))
    out.update({name: _given(record.get(name)) for name in _BIB_DTYPES})
    out["title"] = out["title"] or article.title or None
    try:
        out["year"] = None if out["year"] is None else int(out["year"])
    except (TypeError, ValueError):
        out["year"] = None
    return out


def _fields(item: Paragraph | Reference | Table | Figure, kept: tuple[str, ...] = ("section",),
            left: tuple[str, ...] = ()) -> dict[str, Any]:
    """A record's fields as row values, less the *left* ones: its tuples as lists, an empty text as None (not
    the *kept* ones)."""
    values = {f.name: getattr(item, f.name) for f in fields(item) if f.name not in left}
    return {name: list(value) if isinstance(value, tuple)
            else (value or None) if isinstance(value, str) and name not in kept else value
            for name, value in values.items()}


def article_rows(article: Article, *, input: Any, record: Mapping[str, Any] | None = None,  # noqa: A002
                 ) -> list[dict[str, Any]]:
    """The paragraph rows of one article (JATS or PDF), for the paper asked for as *input* with its *record*."""
    paper = {"input": input, **paper_fields(article, record), "text_source": article.text_source}
    return [{**paper, **_fields(p, kept=("section", "text")), "paragraph_id": p.paragraph_id or f"p{p.paragraph}",
             "words": len(p.text.split()), "chars": len(p.text)} for p in article.paragraphs]


def table_rows(article: Article, *, input: Any, record: Mapping[str, Any] | None = None,  # noqa: A002
               ) -> list[dict[str, Any]]:
    """One row per table of one article."""
    paper = {"input": input, **paper_fields(article, record)}
    return [{**paper, **_fields(t, left=("columns", "rows")), "markdown": pipe_table(t), "table": table_frame(t)}
            for t in article.tables]


def figure_rows(article: Article, *, input: Any, record: Mapping[str, Any] | None = None,  # noqa: A002
                ) -> list[dict[str, Any]]:
    """One row per figure of one article."""
    paper = {"input": input, **paper_fields(article, record)}
    return [{**paper, **_fields(f)} for f in article.figures]


def reference_rows(article: Article, *, input: Any, record: Mapping[str, Any] | None = None,  # noqa: A002
                   ) -> list[dict[str, Any]]:
    """One row per cited work of one article; ``citing_…`` name the citing paper."""
    paper = paper_fields(article, record)
    citing = {"input": input, "license": paper.pop("license"), "license_id": paper.pop("license_id"),
              **{f"citing_{name}": value for name, value in paper.items()}}
    return [{**citing, **_fields(r), "year": int(r.year) if r.year else None, "authors": list(r.authors) or None}
            for r in article.references]


def typed_frame(rows: Iterable[Mapping[str, Any]], dtypes: Mapping[str, Any], what: str) -> pd.DataFrame:
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


def by_input(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The rows of each paper (one ``input``), papers in the order they first come, rows in the frame's order."""
    if frame.empty or "input" not in frame.columns:
        return {}
    return {key: part for key, part in frame.groupby(frame["input"].astype(str), sort=False)}


def _frame_maker(dtypes: Mapping[str, Any], what: str) -> Callable[[Iterable[Mapping[str, Any]]], pd.DataFrame]:
    def frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
        return typed_frame(rows, dtypes, what)

    frame.__name__ = frame.__qualname__ = f"{what}s_frame"
    frame.__doc__ = f"The {what}s frame from row dicts (missing keys are nulls; extra keys are an error)."
    return frame


paragraphs_frame = _frame_maker(PARAGRAPH_DTYPES, "paragraph")
references_frame = _frame_maker(REFERENCE_DTYPES, "reference")
tables_frame = _frame_maker(TABLE_DTYPES, "table")
figures_frame = _frame_maker(FIGURE_DTYPES, "figure")
