"""A bundle of full-text frames for a set of papers: paragraphs, references, tables, figures, the per-paper
outcomes and the per-file errors; built from parsed :class:`~paperfetch.fulltext.base.Article` values."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd

from paperfetch import defaults
from paperfetch.cells import is_missing
from paperfetch.fulltext.article import parse_pdf
from paperfetch.fulltext.base import Article, FullTextError, NoTextLayer
from paperfetch.fulltext.frame import (
    article_rows,
    figure_rows,
    figures_frame,
    paragraphs_frame,
    reference_rows,
    references_frame,
    table_rows,
    tables_frame,
)
from paperfetch.fulltext.jats import parse_jats
from paperfetch.outcomes import Status, outcomes_frame
from paperfetch.redact import redact_frame

__all__ = ["ERROR_COLUMNS", "FullText", "errors_frame", "texts_of"]

#: The columns of :attr:`FullText.errors`: the document, the error's class (``FullTextError`` …), its message.
ERROR_COLUMNS = ("input", "error", "message")


def errors_frame(rows: list[dict[str, object]] | None = None) -> pd.DataFrame:
    """The errors frame from row dicts (``input``, ``error``, ``message``); 0 rows gives every column."""
    frame = pd.DataFrame(rows or [], columns=list(ERROR_COLUMNS))
    return frame.astype({"input": object, "error": "string", "message": "string"})


#: Each article frame of a bundle: its rows of one article, and its frame of rows.
_FRAMES = {"paragraphs": (article_rows, paragraphs_frame), "references": (reference_rows, references_frame),
           "tables": (table_rows, tables_frame), "figures": (figure_rows, figures_frame)}


@dataclass(frozen=True)
class FullText:
    """The frames full text becomes, for one or more papers (``input`` names the paper in every frame, and every
    frame carries the paper's ids and bibliographic record).

    ``outcomes`` has one row per input of ``r.fulltext`` (the outcomes frame of ``download``, with ``text_source``
    and ``text_path``); ``errors`` one row per document :func:`~paperfetch.fulltext.read` could not read
    (``input``, ``error``, ``message``): one bad file is that file's failure only.
    """

    paragraphs: pd.DataFrame = field(default_factory=lambda: paragraphs_frame([]))
    references: pd.DataFrame = field(default_factory=lambda: references_frame([]))
    tables: pd.DataFrame = field(default_factory=lambda: tables_frame([]))
    figures: pd.DataFrame = field(default_factory=lambda: figures_frame([]))
    outcomes: pd.DataFrame = field(default_factory=lambda: outcomes_frame([]))
    errors: pd.DataFrame = field(default_factory=errors_frame)

    def copy(self) -> FullText:
        """The bundle with a copy of every frame (what a caller changes stays out of the original)."""
        return FullText(**{f.name: getattr(self, f.name).copy() for f in fields(self)})

    @classmethod
    def of(cls, papers: Iterable[tuple[Any, Article, Mapping[str, Any] | None]], *,
           outcomes: pd.DataFrame | None = None, errors: list[dict[str, object]] | None = None) -> FullText:
        """The bundle of *papers*, each ``(input, article, record)``: the frames are functions of the articles
        and the papers' bibliographic records."""
        rows: dict[str, list[dict[str, Any]]] = {kind: [] for kind in _FRAMES}
        for name, article, record in papers:
            for kind, (of_article, _) in _FRAMES.items():
                rows[kind] += of_article(article, input=name, record=record)
        return cls(**{kind: frame(rows[kind]) for kind, (_, frame) in _FRAMES.items()},
                   outcomes=outcomes if outcomes is not None else outcomes_frame([]), errors=errors_frame(errors))


def _text(row: dict[str, Any], engine: str, max_pdf_bytes: int | None) -> Article | None:
    """The article of the file *row* finished with; a file that cannot be read is the row's error."""
    path, source = row.get("text_path"), row.get("text_source")
    if not path or not source:
        return None
    try:
        body = Path(str(path)).read_bytes()
        if source == "jats":
            return parse_jats(body)
        return parse_pdf(body, engine=engine, max_bytes=max_pdf_bytes or defaults.MAX_PDF_BYTES)
    except (OSError, FullTextError) as exc:
        said = str(exc) if isinstance(exc, NoTextLayer) else f"{'PDF' if source == 'pdf' else 'JATS'} text: {exc}"
        if source == "pdf" and not isinstance(exc, NoTextLayer):
            row["status"] = Status.INVALID_PDF.value
        row.update(text_source=None, text_path=None, error=said[:2000])
        return None


def texts_of(outcomes: pd.DataFrame, *, engine: str, max_pdf_bytes: int | None = None) -> FullText:
    """The bundle of a text run's *outcomes* (``BatchRun.download(ids, want="text")``): each row's file parsed
    (``text_source``, ``text_path``), its frames carrying the row's ids and bibliographic record; an input that
    shares another's work (``same_work_as``) gives that paper's text once."""
    texts: list[tuple[Any, Article, Mapping[str, Any]]] = []
    rows = []
    for given in outcomes.to_dict("records"):
        row = {k: v if isinstance(v, (list, tuple)) or not is_missing(v) else None for k, v in given.items()}
        article = _text(row, engine, max_pdf_bytes)
        if article is not None and not row.get("same_work_as"):
            texts.append((row["input"], article, row))
        rows.append(row)
    frame = outcomes_frame(rows)
    return FullText.of(texts, outcomes=redact_frame(frame) if len(frame) else frame)
