"""The resume ledger, so a re-run resumes: :func:`open_ledger` (docs/state.md, "The ledger")."""

from __future__ import annotations

import os
from pathlib import Path

from paperfetch import defaults
from paperfetch.errors import ConfigurationError
from paperfetch.ledger.base import (
    DONE_STATUSES,
    FINAL_STATUSES,
    RECHECKED_STATUSES,
    LedgerEntry,
    LedgerFiles,
    ResumeLedger,
    default_retryable,
    entries_frame,
    entry_from_row,
    merged_extra,
    recheck_at,
    recheck_due,
    record_outcome,
    record_row,
    redact_error,
    sha256_of_file,
)
from paperfetch.ledger.redis import RedisLedger
from paperfetch.ledger.sqlite import DEFAULT_LEDGER_NAME, SCHEMA_VERSION, SqliteLedger
from paperfetch.state.base import parse_store_spec

__all__ = [
    "DEFAULT_LEDGER_NAME",
    "DONE_STATUSES",
    "FINAL_STATUSES",
    "LEDGER_KINDS",
    "LedgerEntry",
    "LedgerFiles",
    "RECHECKED_STATUSES",
    "RedisLedger",
    "ResumeLedger",
    "SCHEMA_VERSION",
    "SqliteLedger",
    "default_retryable",
    "entries_frame",
    "entry_from_row",
    "merged_extra",
    "open_ledger",
    "recheck_at",
    "recheck_due",
    "record_outcome",
    "record_row",
    "redact_error",
    "sha256_of_file",
]

#: What :func:`open_ledger` accepts, for people (the error lists them).
LEDGER_KINDS = ("'sqlite' (the file in the output folder)", "a path", "'sqlite:///path'", "'redis://host:port/db'")


def _choices() -> str:
    return ", ".join(LEDGER_KINDS)


def open_ledger(
    spec: str | os.PathLike[str] | ResumeLedger | None = None,
    *,
    folder: str | os.PathLike[str],
    name: str = defaults.LEDGER_NAME,
    fallback: str | None = None,
) -> ResumeLedger:
    """The ledger *spec* names for *folder* (a ledger as it is; None: SQLite there); *fallback* ``"local"`` backs Redis."""
    if spec is None:
        spec = "sqlite"
    if isinstance(spec, ResumeLedger) and not isinstance(spec, (str, os.PathLike)):
        return spec
    if fallback not in (None, "local"):
        raise ConfigurationError(f"a ledger's fallback is 'local' or None, not {fallback!r}")
    if isinstance(spec, os.PathLike):
        return SqliteLedger(spec)
    if not isinstance(spec, str):
        raise ConfigurationError(f"a ledger is one of {_choices()}; not {spec!r}")
    kind, target = parse_store_spec(spec, "ledger", "ledger", _choices(), memory=False)
    if kind == "redis":
        local = SqliteLedger.in_folder(folder) if fallback == "local" else None
        return RedisLedger(str(target), Path(folder), name=name, fallback=local)
    return SqliteLedger.in_folder(folder) if target is None else SqliteLedger(target)
