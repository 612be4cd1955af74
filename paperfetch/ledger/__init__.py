"""The resume ledger, so a re-run resumes: :func:`open_ledger` (docs/state.md, "The ledger")."""

from __future__ import annotations

import os
from pathlib import Path

from paperfetch import defaults
from paperfetch.config import clean_setting
from paperfetch.errors import ConfigurationError
from paperfetch.ledger.base import (
    DONE_STATUSES,
    FINAL_STATUSES,
    LedgerEntry,
    LedgerFiles,
    ResumeLedger,
    default_retryable,
    entries_frame,
    entry_from_row,
    merged_extra,
    record_row,
    redact_error,
    sha256_of_file,
)
from paperfetch.ledger.redis import RedisLedger
from paperfetch.ledger.sqlite import DEFAULT_LEDGER_NAME, SCHEMA_VERSION, Ledger, SqliteLedger

__all__ = [
    "DEFAULT_LEDGER_NAME",
    "DONE_STATUSES",
    "FINAL_STATUSES",
    "LEDGER_KINDS",
    "Ledger",
    "LedgerEntry",
    "LedgerFiles",
    "RedisLedger",
    "ResumeLedger",
    "SCHEMA_VERSION",
    "SqliteLedger",
    "default_retryable",
    "entries_frame",
    "entry_from_row",
    "merged_extra",
    "open_ledger",
    "record_row",
    "redact_error",
    "sha256_of_file",
]

#: What :func:`open_ledger` accepts, for people (the error lists them).
LEDGER_KINDS = ("'sqlite' (the file in the output folder)", "a path", "'sqlite:///path'", "'redis://host:port/db'")

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


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
    text = clean_setting("ledger", spec) or ""  # stripped; a control character refused, the password masked
    lowered = text.lower()
    if lowered in ("", "sqlite", "sqlite:", "sqlite://"):
        return SqliteLedger.in_folder(folder)
    if lowered.startswith(_REDIS_SCHEMES):
        local = SqliteLedger.in_folder(folder) if fallback == "local" else None
        return RedisLedger(text, Path(folder), name=name, fallback=local)
    if lowered.startswith("sqlite:///"):
        return SqliteLedger(text[len("sqlite://"):])
    if lowered.startswith("sqlite:"):
        raise ConfigurationError(f"a SQLite ledger URL has three slashes and an absolute path: 'sqlite:///path', not {spec!r}")
    if "://" in text or lowered == "memory":
        kind = text.split("://")[0] if "://" in text else text
        raise ConfigurationError(f"unknown ledger {kind!r}; use {_choices()}")
    return SqliteLedger(Path(text))
