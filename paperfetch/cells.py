"""One cell of a frame or one value of an input: is it missing, and its text cut to fit.

Every table paperfetch reads or writes (inputs, outcome rows, the reports, the CLI's tables, the
exports) asks these two questions; this module answers them once. It never imports pandas: a value
can be a pandas NA only when pandas was imported already.
"""

from __future__ import annotations

import math
import numbers
import sys

__all__ = ["clip", "is_missing"]


def is_missing(value: object) -> bool:
    """None, NaN, pandas NA/NaT, numpy NaT: a missing value (a string, a list or an array never is)."""
    if value is None:
        return True
    if isinstance(value, (str, bytes, bool, numbers.Integral)):
        return False
    if isinstance(value, numbers.Real):
        try:
            return math.isnan(value)
        except (TypeError, ValueError):
            return False
    pd = sys.modules.get("pandas")  # if pandas was never imported, the value cannot be a pandas NA
    if pd is not None:
        try:
            if pd.api.types.is_scalar(value):
                return bool(pd.isna(value))
        except (TypeError, ValueError):
            return False
    return False


def clip(text: str, limit: int, *, one_line: bool = False) -> str:
    """*text* cut to *limit* characters, ``…`` last when cut; with *one_line*, its white space folded first."""
    if one_line:
        text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
