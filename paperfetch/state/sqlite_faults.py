"""Open SQLite files that may be damaged, locked or on a full disk: open, classify, move aside; never delete.
What to fall back to is the caller's (docs/state.md, "When a file fails").
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext, suppress
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Callable, TypeVar

from paperfetch.config import lock_timeout_s

__all__ = ["FallbackDatabase", "FileFault", "fault_of", "lock_holders", "move_aside", "open_database", "transaction"]

logger = logging.getLogger("paperfetch.state")

_T = TypeVar("_T")

#: errno values of a full disk (or quota): a local write that cannot succeed, never a network fault.
_FULL_ERRNOS = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG})


class FileFault(str, Enum):
    """What is wrong with a SQLite file (:func:`fault_of`)."""

    LOCKED = "locked"     #: another process holds its lock past the busy timeout
    FULL = "full"         #: the disk (or quota) is full
    DAMAGED = "damaged"   #: not a database, malformed, a folder, read-only, unreadable


def fault_of(exc: BaseException) -> FileFault | None:
    """The :class:`FileFault` a SQLite or OS error means, or None when it is neither."""
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        if "locked" in text or "busy" in text:
            return FileFault.LOCKED
        if "full" in text:
            return FileFault.FULL
    if isinstance(exc, sqlite3.Error):
        return FileFault.DAMAGED
    if isinstance(exc, OSError):
        return FileFault.FULL if exc.errno in _FULL_ERRNOS else FileFault.DAMAGED
    return None


def move_aside(path: Path, *, now: datetime | None = None) -> Path:
    """Rename *path* and its side files to ``<name>.damaged-<UTC timestamp>``; the new path (OSError if it cannot)."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    counter = 1
    while os.path.lexists(target):
        target = path.with_name(f"{path.name}.damaged-{stamp}-{counter}")
        counter += 1
    os.rename(path, target)
    for suffix in ("-wal", "-shm", "-journal"):
        side = Path(f"{path}{suffix}")
        if os.path.lexists(side):
            try:
                os.rename(side, f"{target}{suffix}")
            except OSError:  # a side file left behind is re-made or ignored by SQLite
                logger.debug("could not move %s aside", side, exc_info=True)
    return target


def _connect(path: Path, timeout_s: float, prepare: Callable[[sqlite3.Connection], None]) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and not os.access(path, os.W_OK):
        # SQLite would open it read-only without a word and fail at the first write, mid-run
        raise sqlite3.OperationalError("attempt to write a readonly database (the file is read-only)")
    connection = sqlite3.connect(path, timeout=timeout_s, check_same_thread=False, isolation_level=None)
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
        # WAL: readers never block the writer. synchronous=NORMAL keeps every committed row when the *process*
        # dies (SIGKILL, a killed kernel); only a power cut may lose the last commits, and no commit waits for an fsync.
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        prepare(connection)
        connection.execute("BEGIN IMMEDIATE")  # the write lock: read-only files and held locks show now
        connection.execute("ROLLBACK")
        verdict = connection.execute("PRAGMA quick_check(1)").fetchone()
        if verdict is None or verdict[0] != "ok":
            raise sqlite3.DatabaseError(f"database disk image is malformed ({verdict[0] if verdict else 'no answer'})")
    except BaseException:
        connection.close()
        raise
    return connection


#: A file found locked is not waited for again within this many seconds (one wait per Retriever, not two).
_LOCKED_MEMO_S = 5.0
_RECENTLY_LOCKED: dict[Path, tuple[float, str]] = {}
_RECENT_LOCK = threading.Lock()

#: Below this many free bytes on a file's disk, an I/O error there is the full disk, never a damaged file.
_FULL_BELOW_BYTES = 1 << 20


def _disk_full(path: Path) -> bool:
    for folder in (path.parent, *path.parents):
        try:
            return shutil.disk_usage(folder).free < _FULL_BELOW_BYTES
        except OSError:
            continue
    return False


def lock_holders(path: Path) -> list[int]:
    """The other pids holding a POSIX lock on *path* or its ``-shm`` (Linux ``/proc/locks``; else ``[]``)."""
    inodes = set()
    for candidate in (path, Path(f"{path}-shm")):
        try:
            info = os.stat(candidate)
        except OSError:
            continue
        inodes.add((os.major(info.st_dev), os.minor(info.st_dev), info.st_ino))
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return []
    holders: set[int] = set()
    for line in lines:
        fields = line.split()
        if len(fields) < 6 or fields[1] == "->":  # "->": a waiter, not a holder
            continue
        try:
            pid = int(fields[4])
            major, minor, inode = fields[5].split(":")
            key = (int(major, 16), int(minor, 16), int(inode))
        except ValueError:
            continue
        if key in inodes and pid > 0 and pid != os.getpid():
            holders.add(pid)
    return sorted(holders)


@contextmanager
def transaction(connection: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``: the write lock first, so a read-modify-write is atomic across processes;
    rolled back on any error (a failing rollback gives way to the error that caused it)."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            with suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
        raise


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def open_database(
    path: Path, *, what: str, fallback: str, prepare: Callable[[sqlite3.Connection], None]
) -> tuple[sqlite3.Connection | None, str]:
    """``(connection or None, the WARNING logged or "")`` for the SQLite file *path* (*what* and *fallback*, what the caller
    does instead, name them in the WARNING), set up by *prepare*. A damaged file is moved aside and a new one made; a
    locked file or a full disk gives no connection. Errors other than SQLite's and the OS's propagate."""
    timeout_s = lock_timeout_s()
    seen = _RECENTLY_LOCKED.get(path)  # one dict read: atomic
    if seen is not None and time.monotonic() - seen[0] < _LOCKED_MEMO_S:
        logger.debug("%s %s was found locked a moment ago; not waited for again", what, path)
        return None, seen[1]
    try:
        return _connect(path, timeout_s, prepare), ""
    except (sqlite3.Error, OSError) as exc:
        fault = fault_of(exc)
        first = exc
    if fault is FileFault.DAMAGED and _disk_full(path):
        fault = FileFault.FULL  # SQLite says "disk I/O error" when it cannot make its -shm file: not a damage
    connection, moved = None, None
    if fault is FileFault.LOCKED:
        holders = lock_holders(path)
        who = (f"held by pid {', '.join(map(str, holders))} (from /proc/locks)" if holders
               else "SQLite does not tell which process holds it")
        problem = (f"{what} {path} is locked by another process (waited {timeout_s:g} s, the lock timeout: "
                   f"PAPERFETCH_LOCK_TIMEOUT_S; {who}); {fallback} for this run")
        with _RECENT_LOCK:
            _RECENTLY_LOCKED[path] = (time.monotonic(), problem)
    elif fault is FileFault.FULL:
        problem = f"{what} {path} cannot be written: the disk is full ({_reason(first)}); {fallback} for this run"
    else:
        try:
            moved = move_aside(path)
            connection = _connect(path, timeout_s, prepare)
            problem = f"{what} {path} was unusable ({_reason(first)}); moved aside to {moved}; a new one is in its place"
        except (sqlite3.Error, OSError) as again:
            problem = (f"{what} {path} is unusable ({_reason(first)}) and cannot be moved aside ({_reason(again)}); "
                       f"{fallback} for this run" if moved is None else
                       f"{what} {path} was unusable ({_reason(first)}); moved aside to {moved}, but a new one "
                       f"cannot be made ({_reason(again)}); {fallback} for this run")
    logger.warning("%s", problem)
    return connection, problem


class FallbackDatabase:
    """A SQLite file (:func:`open_database`; *path* None: none) that goes on in memory when it fails, at opening or
    later, with a copy of what it held when that can still be read: the host state, the ledger, the metadata cache.
    Thread-safe; closed, it raises RuntimeError. *on_memory* runs when the rows move to memory."""

    def __init__(self, path: Path | None, *, what: str, fallback: str, prepare: Callable[[sqlite3.Connection], None],
                 on_memory: Callable[[], object] = lambda: None) -> None:
        self._file, self._what, self._fallback, self._prepare_db, self._on_memory = path, what, fallback, prepare, on_memory
        self._lock = threading.Lock()
        self._closed = False
        connection, problem = (None, "") if path is None else open_database(path, what=what, fallback=fallback,
                                                                             prepare=prepare)
        #: why the rows are in memory, or the file was recreated ("" while the file is fine)
        self.problem = problem
        #: True when this run's rows live in memory only (see ``problem``)
        self.in_memory = False
        self._db = connection or self._memory_copy(None)
        self._db.row_factory = sqlite3.Row

    def _memory_copy(self, source: sqlite3.Connection | None) -> sqlite3.Connection:
        connection = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        if source is not None:
            try:
                source.backup(connection)
            except sqlite3.Error:
                connection.close()
                connection = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._prepare_db(connection)
        connection.row_factory = sqlite3.Row
        self.in_memory = True
        self._on_memory()
        return connection

    def _run(self, operation: str, work: Callable[[sqlite3.Connection], _T], *, write: bool = False) -> _T:
        """*work* on the connection under the lock (a *write* in one :func:`transaction`); when the file fails, a
        WARNING and *work* again on the rows in memory."""

        def attempt() -> _T:
            with transaction(self._db) if write else nullcontext():
                return work(self._db)

        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self._what} ({self._file or 'in memory'}) is closed")
            try:
                return attempt()
            except sqlite3.Error as exc:
                if self.in_memory:
                    raise
                fault = fault_of(exc)
                self.problem = (f"{self._what} {self._file} failed during {operation} ({fault.value if fault else 'error'}: "
                                f"{exc}); {self._fallback} for the rest of this run")
                logger.warning("%s", self.problem)
                old = self._db  # a failed write was rolled back by transaction()
                self._db = self._memory_copy(old)
                with suppress(sqlite3.Error):
                    old.close()
                return attempt()

    def close(self) -> None:
        """Close the connection; further calls fail. Closing twice is harmless."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()
