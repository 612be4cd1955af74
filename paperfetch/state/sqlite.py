"""The embedded store: one SQLite file every process of the machine shares (docs/state.md, "Choosing a store")."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Callable, Sequence

from paperfetch.state.base import (
    HostFacts,
    Slot,
    StoreBase,
    Window,
    apply_update,
    expire_facts,
    finish_slot,
    new_token,
    reserve_slot,
    window_depth,
    window_floor,
    window_span,
)
from paperfetch.state.sqlite_faults import FallbackDatabase, transaction

__all__ = ["DEFAULT_STATE_FILE", "SqliteStore", "default_state_path"]

#: File name of the default store inside the user cache directory.
DEFAULT_STATE_FILE = "host-state.sqlite3"



_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS facts (host TEXT PRIMARY KEY, data TEXT NOT NULL, updated_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS slots"
    " (host TEXT PRIMARY KEY, next_free REAL NOT NULL, holder TEXT NOT NULL, lease_until REAL NOT NULL)",
    # the starts a host's windows count (only hosts with windows log them)
    "CREATE TABLE IF NOT EXISTS starts (host TEXT NOT NULL, at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS starts_by_host ON starts (host, at)",
)


def default_state_path() -> Path:
    """``host-state.sqlite3`` in the user cache directory (``~/.cache/paperfetch`` on Linux)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("paperfetch", appauthor=False)) / DEFAULT_STATE_FILE


class SqliteStore(FallbackDatabase, StoreBase):
    """Host state in a SQLite file shared by the processes of one machine. Thread-safe."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path).expanduser().resolve() if path is not None else default_state_path()
        self.name = f"sqlite:{self.path}"
        super().__init__(self.path, what="the host-state file", fallback="host state in memory", prepare=self._prepare,
                         on_memory=self._named_memory)

    @staticmethod
    def _prepare(db: sqlite3.Connection) -> None:
        with transaction(db):
            for statement in _SCHEMA:
                db.execute(statement)

    def _named_memory(self) -> None:
        self.name = f"memory (sqlite:{self.path} unusable for this run)"

    @staticmethod
    def _slot_state(db: sqlite3.Connection, host: str) -> tuple[float, str, float]:
        row = db.execute("SELECT next_free, holder, lease_until FROM slots WHERE host = ?", (host,)).fetchone()
        return (float(row[0]), str(row[1]), float(row[2])) if row else (0.0, "", 0.0)

    @staticmethod
    def _save_slot(db: sqlite3.Connection, host: str, state: tuple[float, str, float]) -> None:
        db.execute("INSERT OR REPLACE INTO slots (host, next_free, holder, lease_until) VALUES (?, ?, ?, ?)", (host, *state))

    @staticmethod
    def _latest_starts(db: sqlite3.Connection, host: str, limit: int) -> list[float]:
        rows = db.execute("SELECT at FROM starts WHERE host = ? ORDER BY at DESC LIMIT ?", (host, limit))
        return [float(row[0]) for row in rows]

    def reserve(self, host: str, interval_s: float, now: float, lease_s: float = 0.0,
                windows: Sequence[Window] = ()) -> Slot:
        def work(db: sqlite3.Connection) -> Slot:
            floor = window_floor(self._latest_starts(db, host, window_depth(windows)), windows, now) if windows else 0.0
            slot, state = reserve_slot(self._slot_state(db, host), host, interval_s, now, lease_s, new_token(), floor)
            if slot.granted:
                self._save_slot(db, host, state)
                if windows:
                    db.execute("INSERT INTO starts (host, at) VALUES (?, ?)", (host, slot.start_at))
                    db.execute("DELETE FROM starts WHERE host = ? AND at <= ?", (host, slot.start_at - window_span(windows)))
            return slot

        return self._run("reserve", work, write=True)

    def starts(self, host: str, limit: int) -> list[float]:
        return self._run("starts", lambda db: self._latest_starts(db, host, limit))

    def finish(self, slot: Slot, end: float, gap_s: float = 0.0) -> None:
        def work(db: sqlite3.Connection) -> None:
            self._save_slot(db, slot.host, finish_slot(self._slot_state(db, slot.host), slot.token, end, gap_s))

        self._run("finish", work, write=True)

    @staticmethod
    def _facts(db: sqlite3.Connection, host: str) -> HostFacts:
        row = db.execute("SELECT data FROM facts WHERE host = ?", (host,)).fetchone()
        return HostFacts.from_json(json.loads(row[0])) if row else HostFacts(host)

    def get(self, host: str, now: float) -> HostFacts:
        return self._run("get", lambda db: expire_facts(self._facts(db, host), now))

    def update(self, host: str, change: Callable[[HostFacts], HostFacts], now: float) -> HostFacts:
        def work(db: sqlite3.Connection) -> HostFacts:
            current = self._facts(db, host)
            merged = apply_update(current, change, now)
            if merged is current:
                return merged  # unchanged: no write
            db.execute("INSERT OR REPLACE INTO facts (host, data, updated_at) VALUES (?, ?, ?)",
                       (host, json.dumps(merged.to_json()), merged.updated_at))
            return merged

        return self._run("update", work, write=True)

    def hosts(self) -> list[str]:
        def read(db: sqlite3.Connection) -> list[str]:
            return [row[0] for row in db.execute("SELECT host FROM facts UNION SELECT host FROM slots ORDER BY 1")]

        return self._run("hosts", read)

    def clear(self, host: str | None = None) -> None:
        def work(db: sqlite3.Connection) -> None:
            for table in ("facts", "slots", "starts"):
                if host is None:
                    db.execute(f"DELETE FROM {table}")
                else:
                    db.execute(f"DELETE FROM {table} WHERE host = ?", (host,))

        self._run("clear", work, write=True)
