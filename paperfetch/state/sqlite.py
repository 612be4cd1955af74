"""The embedded store: one SQLite file that every process on the machine shares.

WAL journal (readers never wait for the writer), a busy timeout (a writer
waits for another instead of failing), and every read-modify-write in one
``BEGIN IMMEDIATE`` transaction, so a reservation or a facts update is atomic
across processes. A process killed with SIGKILL leaves no lock behind (SQLite
drops it with the process) and at most a lease on a host's slot, which runs out
by itself.

The default file is ``host-state.sqlite3`` in the user cache directory
(:func:`platformdirs.user_cache_dir`), so a re-run of the CLI or a second
notebook sees the holds, suppressions, robots.txt and learned intervals of the
first. Not for network filesystems: SQLite's locking is unreliable on NFS;
use Redis across machines.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Callable, TypeVar

from paperfetch.state.base import Slot, StoreBase, StoredFacts, apply_update, expire_facts, finish_slot, new_token, reserve_slot

__all__ = ["DEFAULT_STATE_FILE", "SqliteStore", "default_state_path"]

#: File name of the default store inside the user cache directory.
DEFAULT_STATE_FILE = "host-state.sqlite3"

#: How long a writer waits for another process's transaction before failing (ms).
BUSY_TIMEOUT_MS = 30_000

_T = TypeVar("_T")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS facts (host TEXT PRIMARY KEY, data TEXT NOT NULL, updated_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS slots"
    " (host TEXT PRIMARY KEY, next_free REAL NOT NULL, holder TEXT NOT NULL, lease_until REAL NOT NULL)",
)


def default_state_path() -> Path:
    """``host-state.sqlite3`` in the user cache directory (``~/.cache/paperfetch`` on Linux)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("paperfetch", appauthor=False)) / DEFAULT_STATE_FILE


class SqliteStore(StoreBase):
    """Host state in a SQLite file shared by the processes of one machine. Thread-safe."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path).expanduser().resolve() if path is not None else default_state_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.name = f"sqlite:{self.path}"
        self._lock = threading.Lock()
        self._closed = False
        self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False, isolation_level=None)
        try:
            self._db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._transaction(lambda db: [db.execute(statement) for statement in _SCHEMA])
        except BaseException:
            self._db.close()
            raise

    def _transaction(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the host-state store {self.name} is closed")
            self._db.execute("BEGIN IMMEDIATE")  # the write lock now, so read-modify-write is atomic across processes
            try:
                result = work(self._db)
                self._db.execute("COMMIT")
                return result
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    @staticmethod
    def _slot_state(db: sqlite3.Connection, host: str) -> tuple[float, str, float]:
        row = db.execute("SELECT next_free, holder, lease_until FROM slots WHERE host = ?", (host,)).fetchone()
        return (float(row[0]), str(row[1]), float(row[2])) if row else (0.0, "", 0.0)

    @staticmethod
    def _save_slot(db: sqlite3.Connection, host: str, state: tuple[float, str, float]) -> None:
        db.execute("INSERT OR REPLACE INTO slots (host, next_free, holder, lease_until) VALUES (?, ?, ?, ?)", (host, *state))

    def reserve(self, host: str, interval_s: float, now: float, lease_s: float = 0.0) -> Slot:
        def work(db: sqlite3.Connection) -> Slot:
            slot, state = reserve_slot(self._slot_state(db, host), host, interval_s, now, lease_s, new_token())
            if slot.granted:
                self._save_slot(db, host, state)
            return slot

        return self._transaction(work)

    def finish(self, slot: Slot, end: float, gap_s: float = 0.0) -> None:
        def work(db: sqlite3.Connection) -> None:
            self._save_slot(db, slot.host, finish_slot(self._slot_state(db, slot.host), slot.token, end, gap_s))

        self._transaction(work)

    @staticmethod
    def _facts(db: sqlite3.Connection, host: str) -> StoredFacts:
        row = db.execute("SELECT data FROM facts WHERE host = ?", (host,)).fetchone()
        return StoredFacts.from_json(json.loads(row[0])) if row else StoredFacts(host)

    def get(self, host: str, now: float) -> StoredFacts:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the host-state store {self.name} is closed")
            return expire_facts(self._facts(self._db, host), now)

    def update(self, host: str, change: Callable[[StoredFacts], StoredFacts], now: float) -> StoredFacts:
        def work(db: sqlite3.Connection) -> StoredFacts:
            current = self._facts(db, host)
            merged = apply_update(current, change, now)
            if merged is current:
                return merged  # unchanged: no write
            db.execute("INSERT OR REPLACE INTO facts (host, data, updated_at) VALUES (?, ?, ?)",
                       (host, json.dumps(merged.to_json()), merged.updated_at))
            return merged

        return self._transaction(work)

    def hosts(self) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT host FROM facts UNION SELECT host FROM slots ORDER BY 1").fetchall()
        return [row[0] for row in rows]

    def clear(self, host: str | None = None) -> None:
        def work(db: sqlite3.Connection) -> None:
            for table in ("facts", "slots"):
                if host is None:
                    db.execute(f"DELETE FROM {table}")
                else:
                    db.execute(f"DELETE FROM {table} WHERE host = ?", (host,))

        self._transaction(work)

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()
