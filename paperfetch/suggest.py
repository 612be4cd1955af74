""""Did you mean …?": the nearest of some names to one that is not among them. It only suggests."""

from __future__ import annotations

import difflib
from typing import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(name: str, choices: Iterable[object]) -> str:
    """``" (did you mean 'doi'?)"`` for the nearest choice (same name in other case first), or ``""``."""
    names = [str(c) for c in choices]
    same = [c for c in names if c.lower() == name.lower()]
    near = same or difflib.get_close_matches(name, names, n=1, cutoff=0.6) or difflib.get_close_matches(
        name.lower(), [c.lower() for c in names], n=1, cutoff=0.6)
    if not near:
        return ""
    match = next((c for c in names if c == near[0] or c.lower() == near[0]), near[0])
    return f" (did you mean {match!r}?)"
