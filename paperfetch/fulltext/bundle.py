"""A bundle of full-text frames for a set of papers: paragraphs, references, tables, figures, and per-file errors."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from paperfetch.fulltext.frame import figures_frame, tables_frame

__all__ = ["ERROR_COLUMNS", "FullText", "errors_frame"]

#: The columns of :attr:`FullText.errors`: the document, the error's class (``FullTextError`` …), its message.
ERROR_COLUMNS = ("input", "error", "message")


def errors_frame(rows: list[dict[str, object]] | None = None) -> pd.DataFrame:
    """The errors frame from row dicts (``input``, ``error``, ``message``); 0 rows gives every column."""
    frame = pd.DataFrame(rows or [], columns=list(ERROR_COLUMNS))
    return frame.astype({"input": object, "error": "string", "message": "string"})


@dataclass(frozen=True)
class FullText:
    """The frames full text becomes, for one or more papers (``input`` names the paper in every frame).

    ``errors`` has one row per document that could not be read (``input``, ``error``, ``message``): one bad file
    is that file's failure only.
    """

    paragraphs: pd.DataFrame
    references: pd.DataFrame
    tables: pd.DataFrame = field(default_factory=lambda: tables_frame([]))
    figures: pd.DataFrame = field(default_factory=lambda: figures_frame([]))
    errors: pd.DataFrame = field(default_factory=errors_frame)
