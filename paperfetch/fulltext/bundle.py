"""A bundle of full-text frames for a set of papers: paragraphs, references, tables, figures, and per-file errors."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

__all__ = ["FullText"]


@dataclass(frozen=True)
class FullText:
    """The frames full text becomes, for one or more papers (``input`` names the paper in every frame).

    ``errors`` has one row per document that could not be read (``input``, ``error``, ``message``): one bad file
    is that file's failure only.
    """

    paragraphs: pd.DataFrame
    references: pd.DataFrame
    tables: pd.DataFrame = field(default_factory=pd.DataFrame)
    figures: pd.DataFrame = field(default_factory=pd.DataFrame)
    errors: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["input", "error", "message"]))
