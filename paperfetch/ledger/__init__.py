"""The resume ledger: what is done, so a re-run resumes.

Pick a ledger with :func:`open_ledger` (the Retriever keeps the SQLite one in its output folder;
``paperfetch.dask`` moves it to Redis with the host state)::

    "sqlite" | "" | None (default)   .paperfetch-ledger.sqlite3 in the output folder
    "/any/path.sqlite3"              that file (also "sqlite:///any/path.sqlite3")
    "redis://host:6379/0"            Redis: every machine that opens the same URL (and name)

The contract is :class:`ResumeLedger` (:mod:`paperfetch.ledger.base`, with the stored row
:func:`record_row` and the file checks :class:`LedgerFiles` every backend shares); the backends are
:class:`Ledger` (SQLite, :mod:`paperfetch.ledger.sqlite`) and :class:`RedisLedger`
(:mod:`paperfetch.ledger.redis`). Whether an item is fetched again is decided elsewhere, from the
ledger's answers: :func:`paperfetch.download.download_action`. See ``docs/state.md``.
"""

from __future__ import annotations

import os
from pathlib import Path

from paperfetch import defaults
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
from paperfetch.state.base import parse_store_spec

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


def _choices() -> str:
    return ", ".join(LEDGER_KINDS)


def open_ledger(
    spec: str | os.PathLike[str] | ResumeLedger | None = None,
    *,
    folder: str | os.PathLike[str],
    name: str = defaults.LEDGER_NAME,
    fallback: str | None = None,
) -> ResumeLedger:
    """The ledger *spec* names, for the output folder *folder*; None means the SQLite file in *folder*.

    A ledger object is returned as it is. *name* separates the ledgers of different batches in one
    Redis; *fallback* ``"local"`` (Redis only): where Redis does not answer, record and answer in the
    SQLite ledger of *folder* instead of raising :class:`~paperfetch.errors.StoreUnavailable`.
    """
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
