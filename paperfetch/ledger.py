"""The resume ledger: one SQLite file in the output folder recording every outcome as it happens.

A batch of thousands of identifiers takes hours and gets interrupted (Ctrl-C,
a killed Jupyter kernel, a laptop lid). The ledger makes re-running the same
batch cheap and safe:

* every outcome is committed the moment it is known (one transaction per
  :meth:`Ledger.record`, WAL journal), so a killed process keeps every row it
  finished;
* :meth:`Ledger.is_done` says whether a key's PDF is already on disk *and
  intact* (size and SHA-256 as recorded), so a re-run skips it;
* :meth:`Ledger.should_retry` says whether a key that is not done is worth
  another attempt.

The default file is ``.paperfetch-ledger.sqlite3`` in the output folder
(:meth:`Ledger.in_folder`). Paths of downloaded files inside that folder are
stored relative to it, so the folder can be moved or shared as a whole.

What it deliberately does not do:

* it does not decide anything about fetching (order, politeness, sources);
  it only remembers outcomes and answers questions about them;
* it keeps one row per key (the latest outcome, with an attempt count), not
  a history of every attempt; logs are for history;
* it never stores a secret: URLs pass through :func:`paperfetch.redact.redact_url`
  and so do URLs inside error messages, then :func:`paperfetch.redact.redact_text`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from paperfetch.errors import ConfigurationError
from paperfetch.outcomes import FINAL_STATUSES, FINISHED_WELL_STATUSES
from paperfetch.redact import redact_text, redact_url

if TYPE_CHECKING:  # pandas is imported lazily: the ledger is opened by worker code that never builds a DataFrame
    import pandas as pd

__all__ = [
    "DEFAULT_LEDGER_NAME",
    "DONE_STATUSES",
    "FINAL_STATUSES",
    "SCHEMA_VERSION",
    "Ledger",
    "LedgerFiles",
    "default_retryable",
    "LedgerEntry",
    "sha256_of_file",
]

logger = logging.getLogger(__name__)

#: File name of the ledger inside an output folder.
DEFAULT_LEDGER_NAME = ".paperfetch-ledger.sqlite3"

#: ``PRAGMA user_version`` of the schema this module writes.
SCHEMA_VERSION = 1

#: Statuses meaning "the PDF is on disk"; :meth:`Ledger.is_done` still checks the file.
#: Statuses whose item has a valid PDF on disk (:data:`paperfetch.outcomes.FINISHED_WELL_STATUSES`).
DONE_STATUSES = FINISHED_WELL_STATUSES

#: Statuses where the services said the thing is absent: asking again will not change the answer
#: (:data:`paperfetch.outcomes.FINAL_STATUSES`). Everything else (``network_error``, ``http_error``,
#: ``host_held``, ``host_suppressed``, ``invalid_pdf``, ``disallowed_by_robots`` …) is retryable by
#: default: networks recover, holds expire, robots.txt files change.

_HASH_CHUNK_BYTES = 1 << 20
_URL_IN_TEXT_RE = re.compile(r"https?://[^\s'\"<>]+")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outcomes (
    key         TEXT PRIMARY KEY,
    status      TEXT NOT NULL,
    path        TEXT,
    bytes       INTEGER,
    sha256      TEXT,
    source      TEXT,
    url         TEXT,
    http_status INTEGER,
    error       TEXT,
    retryable   INTEGER NOT NULL,
    attempts    INTEGER NOT NULL,
    first_seen  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    extra       TEXT
);
CREATE INDEX IF NOT EXISTS outcomes_status ON outcomes (status);
"""

_COLUMNS = (
    "key", "status", "path", "bytes", "sha256", "source", "url", "http_status",
    "error", "retryable", "attempts", "first_seen", "updated_at", "extra",
)

# Upsert: the outcome columns take the new values; attempts counts up; first_seen
# stays; extra keeps the old value unless new extra is given (record() merges the two
# in Python first, inside the same transaction).
_UPSERT = f"""
INSERT INTO outcomes ({", ".join(_COLUMNS)})
VALUES ({", ".join("?" for _ in _COLUMNS)})
ON CONFLICT(key) DO UPDATE SET
    status = excluded.status,
    path = excluded.path,
    bytes = excluded.bytes,
    sha256 = excluded.sha256,
    source = excluded.source,
    url = excluded.url,
    http_status = excluded.http_status,
    error = excluded.error,
    retryable = excluded.retryable,
    attempts = outcomes.attempts + 1,
    updated_at = excluded.updated_at,
    extra = COALESCE(excluded.extra, outcomes.extra)
"""


@dataclass(frozen=True)
class LedgerEntry:
    """The latest recorded outcome for one key.

    ``path`` is as stored: relative to the ledger's folder when the file lies
    inside it, absolute otherwise (:meth:`Ledger.absolute_path` resolves it).
    ``extra`` is free-form metadata (title, year …); treat it as read-only.
    """

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


#: How long a write waits for another process's transaction before failing.
_BUSY_TIMEOUT_S = 60.0


@contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive advisory lock on *folder* (blocking), for the ledger's creation and set-up."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # a folder that cannot be opened for locking (some network filesystems): go on unlocked
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass  # flock unsupported here: SQLite's busy timeout is the only guard
        yield
    finally:
        os.close(fd)  # releases the lock


def _redact_error(message: str) -> str:
    """*message* with every URL in it redacted (API keys too, not only e-mail addresses)."""
    return redact_text(_URL_IN_TEXT_RE.sub(lambda match: redact_url(match.group(0)), message))


def _utc_now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def default_retryable(status: str) -> bool:
    """Whether an outcome with *status* is worth retrying when the caller does not say."""
    return status not in FINAL_STATUSES


class LedgerFiles:
    """What a ledger knows about files, whatever stores its entries (SQLite here, Redis in
    :mod:`paperfetch.redis_ledger`): paths relative to the folder, whether a download is still
    intact, whether a key is worth another try. A subclass gives ``folder`` and ``get``."""

    folder: Path

    def get(self, key: str) -> LedgerEntry | None:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def _stored_path(self, path: str | os.PathLike[str] | None) -> str | None:
        """*path* relative to the ledger's folder when inside it, else absolute (relative input means the cwd)."""
        if path is None:
            return None
        absolute = Path(path).resolve()
        try:
            return absolute.relative_to(self.folder).as_posix()
        except ValueError:
            return str(absolute)

    def absolute_path(self, entry: LedgerEntry) -> Path | None:
        """The file an entry points at, resolving a stored relative path against the ledger's folder."""
        if entry.path is None:
            return None
        stored = Path(entry.path)
        return stored if stored.is_absolute() else self.folder / stored

    def is_done(self, key: str, out_dir: str | os.PathLike[str] | None = None) -> LedgerEntry | None:
        """The entry when *key* is downloaded and its file is intact, else None.

        Done means: the status is in :data:`DONE_STATUSES`, the file exists,
        its size equals the recorded ``bytes`` and its SHA-256 the recorded
        ``sha256`` (checked only when recorded; size first, so a changed file
        is usually caught without reading it). When *out_dir* is given the
        file must also lie inside *out_dir*: a PDF saved into another output
        folder does not count as done for this one.
        """
        entry = self.get(key)
        if entry is None or entry.status not in DONE_STATUSES:
            return None
        file_path = self.absolute_path(entry)
        if file_path is None:
            return None
        if out_dir is not None:
            try:
                file_path.resolve().relative_to(Path(out_dir).resolve())
            except ValueError:
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

    def should_retry(self, key: str) -> bool:
        """Whether a key that is not done is worth another attempt.

        The rule: a key never recorded is worth a try; otherwise the recorded
        ``retryable`` flag decides. That flag is what the caller passed to
        :meth:`record`, or by default False for :data:`FINAL_STATUSES`
        (``not_found``, ``no_open_copy``, ``invalid_identifier``: the services
        called it absent) and True for everything else (network and HTTP
        errors, held or suppressed hosts, invalid PDFs, bot challenges,
        ``disallowed_by_robots`` — robots.txt files change). A ``downloaded``
        key answers True: if :meth:`is_done` says its file is gone, fetch it again.
        """
        entry = self.get(key)
        return True if entry is None else entry.retryable


class Ledger(LedgerFiles):
    """The resume ledger of one output folder (or any SQLite file path).

    Thread-safe: one connection shared by all threads, serialised by a lock;
    every :meth:`record` is its own committed transaction. Use as a context
    manager, or call :meth:`close`.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).resolve()
        self.folder = self.path.parent
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._closed = False
        # Creation and set-up run under an exclusive flock on the folder: several processes
        # opening one fresh ledger at once would otherwise meet "database is locked" while switching to
        # WAL. A directory lock leaves no file behind and never touches SQLite's own POSIX locks.
        with _folder_lock(self.folder):
            # isolation_level=None: autocommit; each record() runs its own BEGIN … COMMIT.
            self._connection = sqlite3.connect(
                self.path, timeout=_BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None
            )
            self._connection.row_factory = sqlite3.Row
            try:
                self._connection.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
                self._prepare()
            except BaseException:
                self._connection.close()
                raise
        logger.debug("opened ledger %s", self.path)

    @classmethod
    def in_folder(cls, out_dir: str | os.PathLike[str], name: str = DEFAULT_LEDGER_NAME) -> Ledger:
        """The ledger file *name* inside *out_dir* (created, with the folder, if missing)."""
        return cls(Path(out_dir) / name)

    def _prepare(self) -> None:
        connection = self._connection
        # WAL: readers never block the writer, and a commit is one append to the log.
        # synchronous=NORMAL keeps every committed row when the *process* dies
        # (SIGKILL, a killed kernel); only a power cut may lose the last commits.
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise ConfigurationError(
                f"the ledger {self.path} was written by a newer paperfetch (schema {version}, "
                f"this version understands {SCHEMA_VERSION}); upgrade paperfetch or use another output folder"
            )
        if version < SCHEMA_VERSION:
            connection.execute("BEGIN IMMEDIATE")
            try:
                if connection.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
                    connection.execute("COMMIT")  # another process set it up first: nothing to do
                    return
                # Statement by statement: executescript() would COMMIT our transaction.
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    connection.execute(statement)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the connection; further calls fail. Closing twice is harmless."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._connection.close()
                logger.debug("closed ledger %s", self.path)

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"the ledger {self.path} is closed")

    # ------------------------------------------------------------------ writing

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
        """Record the latest outcome for *key* (a canonical key such as ``"doi:10.1/x"``) and commit it.

        The outcome fields replace the previous ones; ``attempts`` counts the
        records made for the key; ``first_seen`` keeps the first time;
        ``extra`` (JSON-serialisable) is merged into what was recorded before.
        *retryable* defaults to :func:`default_retryable` of *status*.
        *url* and URLs inside *error* are stored redacted (contact e-mails, API keys).
        """
        if retryable is None:
            retryable = default_retryable(status)
        now = _utc_now_iso()
        row = (
            key,
            status,
            self._stored_path(path),
            bytes,
            sha256,
            source,
            redact_url(url) if url is not None else None,
            http_status,
            _redact_error(error) if error is not None else None,
            int(bool(retryable)),
            1,
            now,
            now,
        )
        with self._lock:
            self._check_open()
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                merged_extra: dict[str, Any] = {}
                if extra:
                    previous = self._connection.execute("SELECT extra FROM outcomes WHERE key = ?", (key,)).fetchone()
                    if previous is not None and previous["extra"]:
                        merged_extra.update(json.loads(previous["extra"]))
                    merged_extra.update(extra)
                extra_json = json.dumps(merged_extra, ensure_ascii=False, default=str) if merged_extra else None
                self._connection.execute(_UPSERT, (*row, extra_json))
                self._connection.execute("COMMIT")
            except BaseException:
                if self._connection.in_transaction:
                    self._connection.execute("ROLLBACK")
                raise
        logger.debug("ledger: %s -> %s", key, status)

    # ------------------------------------------------------------------ reading

    def _fetch(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            self._check_open()
            return self._connection.execute(sql, parameters).fetchall()

    @staticmethod
    def _entry(row: sqlite3.Row) -> LedgerEntry:
        return LedgerEntry(
            key=row["key"],
            status=row["status"],
            path=row["path"],
            bytes=row["bytes"],
            sha256=row["sha256"],
            source=row["source"],
            url=row["url"],
            http_status=row["http_status"],
            error=row["error"],
            retryable=bool(row["retryable"]),
            attempts=row["attempts"],
            first_seen=datetime.fromisoformat(row["first_seen"]),
            updated_at=datetime.fromisoformat(row["updated_at"]),
            extra=json.loads(row["extra"]) if row["extra"] else {},
        )

    def get(self, key: str) -> LedgerEntry | None:
        """The latest outcome recorded for *key*, or None."""
        rows = self._fetch(f"SELECT {', '.join(_COLUMNS)} FROM outcomes WHERE key = ?", (key,))
        return self._entry(rows[0]) if rows else None

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(self._fetch("SELECT 1 FROM outcomes WHERE key = ?", (key,)))

    def __len__(self) -> int:
        return int(self._fetch("SELECT COUNT(*) FROM outcomes")[0][0])

    def entries(self) -> pd.DataFrame:
        """Every entry as a DataFrame, one row per key, ordered by ``first_seen``.

        Columns are the :class:`LedgerEntry` fields; timestamps are UTC
        ``datetime64``; ``extra`` holds dicts.
        """
        import pandas as pd

        rows = self._fetch(f"SELECT {', '.join(_COLUMNS)} FROM outcomes ORDER BY first_seen, key")
        columns = [f.name for f in fields(LedgerEntry)]
        frame = pd.DataFrame([asdict(self._entry(row)) for row in rows], columns=columns)
        for column in ("bytes", "http_status"):
            frame[column] = frame[column].astype("Int64")
        frame["attempts"] = frame["attempts"].astype("int64")
        frame["retryable"] = frame["retryable"].astype(bool)
        for column in ("first_seen", "updated_at"):
            frame[column] = pd.to_datetime(frame[column], utc=True)
        return frame
