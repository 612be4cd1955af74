"""The resume-ledger contract and what every backend shares: the stored row and the file checks."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Protocol, TypeVar, runtime_checkable

from paperfetch import defaults
from paperfetch.outcomes import FINISHED_WELL_STATUSES, Status, is_final
from paperfetch.redact import redact_text, redact_url

if TYPE_CHECKING:  # pandas is imported lazily: the ledger is opened by worker code that never builds a DataFrame
    import pandas as pd

__all__ = [
    "LedgerEntry",
    "RECHECKED_STATUSES",
    "ResumeLedger",
    "default_retryable",
    "entries_frame",
    "entry_from_row",
    "recheck_at",
    "recheck_due",
    "sha256_of_file",
]

logger = logging.getLogger("paperfetch.ledger")

_L = TypeVar("_L", bound="ResumeLedger")

# absences are final; all else retryable by default: networks recover, holds expire, robots.txt files change

#: Final answers that are true only for a time (an open copy may appear): asked again after the recheck age.
RECHECKED_STATUSES: frozenset[str] = frozenset({Status.NOT_FOUND.value, Status.NO_OPEN_COPY.value})

_HASH_CHUNK_BYTES = 1 << 20
_URL_IN_TEXT_RE = re.compile(r"https?://[^\s'\"<>]+")


@dataclass(frozen=True)
class LedgerEntry:
    """The latest recorded outcome for one key; ``path`` as stored, ``extra`` free-form and read-only."""

    key: str
    status: str
    path: str | None
    bytes: int | None
    sha256: str | None
    source: str | None
    url: str | None
    http_status: int | None
    error: str | None
    retryable: bool
    attempts: int
    first_seen: datetime
    updated_at: datetime
    extra: dict[str, Any] = field(default_factory=dict)


def sha256_of_file(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_HASH_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _redact_error(message: str) -> str:
    """*message* with every URL in it redacted (API keys too, not only e-mail addresses)."""
    return redact_text(_URL_IN_TEXT_RE.sub(lambda match: redact_url(match.group(0)), message))


def default_retryable(status: str, http_status: int | None = None) -> bool:
    """Whether an outcome is worth retrying when the caller does not say: not :func:`paperfetch.outcomes.is_final`."""
    return not is_final(status, http_status)


def recheck_at(entry: LedgerEntry, recheck_after_s: float | None = None) -> datetime | None:
    """When a run asks the services again about a final "absent" *entry* (:data:`RECHECKED_STATUSES`): its
    ``updated_at`` plus *recheck_after_s* (None: :data:`paperfetch.defaults.RECHECK_AFTER_S`, read now);
    None for an entry that is not such an answer (a retryable one is asked at every run)."""
    if entry.retryable or entry.status not in RECHECKED_STATUSES:
        return None
    age = defaults.RECHECK_AFTER_S if recheck_after_s is None else recheck_after_s
    updated = entry.updated_at if entry.updated_at.tzinfo else entry.updated_at.replace(tzinfo=timezone.utc)
    return updated + timedelta(seconds=max(0.0, float(age)))


def recheck_due(entry: LedgerEntry, now: datetime | None = None, recheck_after_s: float | None = None) -> bool:
    """Whether a final "absent" *entry* is old enough to be asked again (:func:`recheck_at`, *now*: the wall clock)."""
    due = recheck_at(entry, recheck_after_s)
    return due is not None and (now or datetime.now(timezone.utc)) >= due


def entry_from_row(row: Mapping[str, Any]) -> LedgerEntry:
    """A stored row (SQLite columns or Redis JSON) as a :class:`LedgerEntry`; missing fields read as None."""
    extra = row.get("extra")
    if isinstance(extra, str):
        extra = json.loads(extra) if extra else {}
    values: dict[str, Any] = {f.name: row.get(f.name) for f in fields(LedgerEntry)}
    values.update(
        retryable=bool(values["retryable"]),
        first_seen=datetime.fromisoformat(values["first_seen"]),
        updated_at=datetime.fromisoformat(values["updated_at"]),
        extra=extra or {},
    )
    return LedgerEntry(**values)


def entries_frame(entries: Iterable[LedgerEntry]) -> pd.DataFrame:
    """*entries* as the DataFrame ``entries()`` returns (nullable integers, UTC timestamps, ``extra`` dicts)."""
    import pandas as pd

    columns = [f.name for f in fields(LedgerEntry)]
    frame = pd.DataFrame([asdict(entry) for entry in entries], columns=columns)
    for column in ("bytes", "http_status"):
        frame[column] = frame[column].astype("Int64")
    frame["attempts"] = frame["attempts"].astype("int64")
    frame["retryable"] = frame["retryable"].astype(bool)
    for column in ("first_seen", "updated_at"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return frame


@runtime_checkable
class ResumeLedger(Protocol):
    """What every ledger backend does (:func:`~paperfetch.ledger.open_ledger`), and what they share: ``record``
    (the row built once), the file checks, the context manager. Thread-safe; closed, it raises RuntimeError.
    A backend subclasses it and gives ``folder``, ``get``, ``write_row``, ``__len__``, ``entries`` and ``close``."""

    folder: Path

    def get(self, key: str) -> LedgerEntry | None:
        """The latest outcome recorded for *key*, or None."""

    def write_row(self, row: dict[str, Any], extra: dict[str, Any] | None) -> None:
        """Store *row* (``record()``'s, times as ISO 8601 UTC text) over its key's entry: attempts count up,
        first_seen stays, *extra* merges."""

    def __len__(self) -> int: ...

    def entries(self) -> pd.DataFrame:
        """Every entry as a DataFrame, one row per key, ordered by ``first_seen`` (:func:`entries_frame`)."""

    def close(self) -> None: ...

    def record(
        self,
        key: str,
        *,
        status: str,
        path: str | os.PathLike[str] | None = None,
        bytes: int | None = None,  # noqa: A002 - the public name the callers use
        sha256: str | None = None,
        source: str | None = None,
        url: str | None = None,
        http_status: int | None = None,
        error: str | None = None,
        retryable: bool | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Record and commit the latest outcome for *key* (a canonical key such as ``"doi:10.1/x"``): ``attempts``
        counts up, ``first_seen`` stays, ``extra`` merges; *retryable* defaults to :func:`default_retryable`;
        *url* and URLs in *error* are stored redacted."""
        stamp = datetime.now(timezone.utc).isoformat(timespec="microseconds")
        row = {  # every LedgerEntry field, as if this were the key's first record (write_row keeps what stays)
            "key": key,
            "status": status,
            "path": self.stored_path(path),
            "bytes": bytes,
            "sha256": sha256,
            "source": source,
            "url": redact_url(url) if url is not None else None,
            "http_status": http_status,
            "error": _redact_error(error) if error is not None else None,
            "retryable": bool(default_retryable(status, http_status) if retryable is None else retryable),
            "attempts": 1,
            "first_seen": stamp,
            "updated_at": stamp,
        }
        self.write_row(row, extra)
        logger.debug("ledger: %s -> %s", key, status)

    def __enter__(self: _L) -> _L:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def stored_path(self, path: str | os.PathLike[str] | None) -> str | None:
        """*path* relative to the ledger's folder when inside it, else absolute (relative input means the cwd)."""
        if path is None:
            return None
        absolute = Path(path).resolve()
        return absolute.relative_to(self.folder).as_posix() if absolute.is_relative_to(self.folder) else str(absolute)

    def absolute_path(self, entry: LedgerEntry) -> Path | None:
        """The file an entry points at, resolving a stored relative path against the ledger's folder."""
        return None if entry.path is None else self.folder / entry.path  # an absolute path stays as it is

    def is_done(self, key: str, out_dir: str | os.PathLike[str] | None = None) -> LedgerEntry | None:
        """The entry when *key* is downloaded and its file intact, else None: a :data:`FINISHED_WELL_STATUSES` status, the
        file there, its size and SHA-256 (when recorded; size first) as recorded, and inside *out_dir* if given."""
        entry = self.get(key)
        if entry is None or entry.status not in FINISHED_WELL_STATUSES:
            return None
        file_path = self.absolute_path(entry)
        if file_path is None:
            return None
        if out_dir is not None and not file_path.resolve().is_relative_to(Path(out_dir).resolve()):
            logger.debug("ledger: %s was saved outside %s", key, out_dir)
            return None
        try:
            size = file_path.stat().st_size
        except OSError:
            logger.info("ledger: %s was downloaded but %s is gone; it will be fetched again", key, file_path)
            return None
        if not file_path.is_file() or (entry.bytes is not None and size != entry.bytes):
            logger.info("ledger: %s changed on disk (%s); it will be fetched again", key, file_path)
            return None
        if entry.sha256 is not None and sha256_of_file(file_path) != entry.sha256.lower():
            logger.info("ledger: %s has a different SHA-256 than recorded; it will be fetched again", file_path)
            return None
        return entry

    def should_retry(self, key: str, *, now: datetime | None = None, recheck_after_s: float | None = None) -> bool:
        """Whether a key that is not done is worth another attempt: a key never recorded is, else its recorded
        ``retryable`` flag decides, and a final "absent" answer older than the recheck age is (:func:`recheck_due`).
        A ``downloaded`` key answers True: a file :meth:`is_done` finds gone is fetched again."""
        entry = self.get(key)
        return True if entry is None else entry.retryable or recheck_due(entry, now, recheck_after_s)
