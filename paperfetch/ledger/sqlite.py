"""The resume ledger in SQLite, ``.paperfetch-ledger.sqlite3`` in the output folder (docs/outcomes.md, "Resume")."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paperfetch.errors import ConfigurationError
from paperfetch.ledger.base import LedgerEntry, ResumeLedger, entries_frame, entry_from_row
from paperfetch.state.sqlite_faults import FallbackDatabase, transaction

if TYPE_CHECKING:  # pandas is imported lazily: the ledger is opened by worker code that never builds a DataFrame
    import pandas as pd

__all__ = ["DEFAULT_LEDGER_NAME", "SCHEMA_VERSION", "SqliteLedger"]

logger = logging.getLogger("paperfetch.ledger")


#: File name of the ledger inside an output folder.
DEFAULT_LEDGER_NAME = ".paperfetch-ledger.sqlite3"

#: ``PRAGMA user_version`` of the schema this module writes.
SCHEMA_VERSION = 1

_COLUMNS = tuple(f.name for f in fields(LedgerEntry))


def _column_sql(name: str, annotation: str) -> str:
    """The column of a :class:`LedgerEntry` field: numbers and flags INTEGER, the rest (times, extra as JSON) TEXT."""
    if name == "key":
        return "key TEXT PRIMARY KEY"
    sql_type = "INTEGER" if annotation.startswith(("int", "bool")) else "TEXT"
    return f"{name} {sql_type}" if annotation.endswith("| None") or name == "extra" else f"{name} {sql_type} NOT NULL"


_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS outcomes ({', '.join(_column_sql(f.name, str(f.type)) for f in fields(LedgerEntry))})",
    "CREATE INDEX IF NOT EXISTS outcomes_status ON outcomes (status)",
)

# Upsert: attempts counts up, first_seen stays, extra is kept unless record() passes a merged one.
_UPDATES = {column: f"excluded.{column}" for column in _COLUMNS if column not in ("key", "first_seen")}
_UPDATES.update(attempts="outcomes.attempts + 1", extra="COALESCE(excluded.extra, outcomes.extra)")
_UPSERT = (f"INSERT INTO outcomes ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)})"
           f" ON CONFLICT(key) DO UPDATE SET {', '.join(f'{column} = {value}' for column, value in _UPDATES.items())}")



@contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive advisory lock on *folder* (blocking), for the ledger's creation and set-up."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # a folder that cannot be opened for locking (some network filesystems): go on unlocked
        yield
        return
    try:
        with suppress(OSError):  # flock unsupported here: SQLite's busy timeout is the only guard
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


class SqliteLedger(FallbackDatabase, ResumeLedger):
    """The resume ledger of one output folder (or SQLite path), a :class:`ResumeLedger`; thread-safe, each record commits."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).resolve()
        self.folder = self.path.parent
        with suppress(OSError):  # open_database says what is wrong with it
            self.folder.mkdir(parents=True, exist_ok=True)
        # Set-up under a flock on the folder: processes opening one fresh ledger at once would meet "database
        # is locked" while switching to WAL. A folder lock leaves no file and never touches SQLite's locks.
        with _folder_lock(self.folder):
            super().__init__(self.path, what="the ledger", fallback="a ledger in memory (rebuilt from the PDFs)",
                             prepare=self._prepare, on_memory=self._mark_for_rebuild)
        #: the rows were lost (file moved aside, or in memory): the caller rebuilds them from the files
        self.recovered = bool(self.problem)
        if not self.recovered and self._rebuild_marker.exists():
            self.recovered = True
            self.problem = f"an earlier run kept its rows of {self.path} in memory; they are rebuilt from the PDFs"
            logger.info("ledger: %s", self.problem)
        logger.debug("opened ledger %s", self.path)

    @property
    def _rebuild_marker(self) -> Path:
        """A file beside the ledger saying "rows were kept in memory": the next opening rebuilds them."""
        return self.path.with_name(self.path.name + ".rebuild")

    def _mark_for_rebuild(self) -> None:
        with suppress(OSError):  # a read-only or full folder: the next run finds the file unusable again and rebuilds anyway
            self._rebuild_marker.touch()

    @classmethod
    def in_folder(cls, out_dir: str | os.PathLike[str], name: str = DEFAULT_LEDGER_NAME) -> SqliteLedger:
        """The ledger file *name* inside *out_dir* (created, with the folder, if missing)."""
        return cls(Path(out_dir) / name)

    @staticmethod
    def _prepare(connection: sqlite3.Connection) -> None:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise ConfigurationError(
                f"the ledger {connection.execute('PRAGMA database_list').fetchone()[2]} was written by a newer paperfetch "
                f"(schema {version}, this version understands {SCHEMA_VERSION}); upgrade paperfetch or use another output folder"
            )
        if version < SCHEMA_VERSION:
            with transaction(connection):
                if connection.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
                    return  # another process set it up first: nothing to do
                # Statement by statement: executescript() would COMMIT our transaction.
                for statement in _SCHEMA:
                    connection.execute(statement)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def close(self) -> None:
        was_open = not self._closed
        super().close()
        if was_open and self.recovered and not self.in_memory:  # the rows are in the file again (rebuilt by the caller)
            self._rebuild_marker.unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"SqliteLedger({str(self.path)!r})"

    def write_row(self, row: dict[str, Any], extra: dict[str, Any] | None) -> None:
        def upsert(connection: sqlite3.Connection) -> None:
            merged: dict[str, Any] = {}
            if extra:  # without new extra, the upsert keeps the stored one (COALESCE)
                previous = connection.execute("SELECT extra FROM outcomes WHERE key = ?", (row["key"],)).fetchone()
                merged = {**(json.loads(previous["extra"]) if previous is not None and previous["extra"] else {}), **extra}
            stored = dict(row, extra=json.dumps(merged, ensure_ascii=False, default=str) if merged else None)
            connection.execute(_UPSERT, tuple(stored[column] for column in _COLUMNS))

        self._run("record", upsert, write=True)

    def _fetch(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        return self._run("a read", lambda connection: connection.execute(sql, parameters).fetchall())

    def get(self, key: str) -> LedgerEntry | None:
        rows = self._fetch(f"SELECT {', '.join(_COLUMNS)} FROM outcomes WHERE key = ?", (key,))
        return entry_from_row(dict(rows[0])) if rows else None

    def __len__(self) -> int:
        return int(self._fetch("SELECT COUNT(*) FROM outcomes")[0][0])

    def entries(self) -> pd.DataFrame:
        rows = self._fetch(f"SELECT {', '.join(_COLUMNS)} FROM outcomes ORDER BY first_seen, key")
        return entries_frame(entry_from_row(dict(row)) for row in rows)

