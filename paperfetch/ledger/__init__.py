"""The resume ledger, so a re-run resumes: :func:`open_ledger` (docs/state.md, "The ledger")."""

from __future__ import annotations

import os
from pathlib import Path

from paperfetch import defaults
from paperfetch.errors import ConfigurationError
from paperfetch.ledger import base, redis, sqlite

# the names everyone imports: each module's __all__
from paperfetch.ledger.base import *  # noqa: F403
from paperfetch.ledger.base import ResumeLedger
from paperfetch.ledger.redis import *  # noqa: F403
from paperfetch.ledger.redis import RedisLedger
from paperfetch.ledger.sqlite import *  # noqa: F403
from paperfetch.ledger.sqlite import SqliteLedger
from paperfetch.state.base import parse_store_spec

__all__ = sorted([*base.__all__, *redis.__all__, *sqlite.__all__, "LEDGER_KINDS", "open_ledger"])

#: What :func:`open_ledger` accepts, for people (the error lists them).
LEDGER_KINDS = ("'sqlite' (the file in the output folder)", "a path", "'sqlite:///path'", "'redis://host:port/db'")
_CHOICES = ", ".join(LEDGER_KINDS)


def open_ledger(
    spec: str | os.PathLike[str] | ResumeLedger | None = None,
    *,
    folder: str | os.PathLike[str],
    name: str = defaults.LEDGER_NAME,
    fallback: str | None = None,
) -> ResumeLedger:
    """The ledger *spec* names for *folder* (a ledger as it is; None: SQLite there); *fallback* ``"local"`` backs Redis."""
    if isinstance(spec, ResumeLedger) and not isinstance(spec, (str, os.PathLike)):
        return spec
    if fallback not in (None, "local"):
        raise ConfigurationError(f"a ledger's fallback is 'local' or None, not {fallback!r}")
    kind, target = parse_store_spec(spec, "ledger", "ledger", _CHOICES, memory=False)
    if kind == "redis":
        local = SqliteLedger.in_folder(folder) if fallback == "local" else None
        return RedisLedger(str(target), Path(folder), name=name, fallback=local)
    return SqliteLedger.in_folder(folder) if target is None else SqliteLedger(target)
