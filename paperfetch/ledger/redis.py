"""The resume ledger in Redis: the SQLite ledger's contract, shared by every machine (docs/state.md, "The ledger").
Keys under ``{namespace}ledger:{name}:``: ``e:{key}`` (the entry as JSON), ``index`` (sorted by first_seen).
"""

from __future__ import annotations

import json
import logging
import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, cast

from paperfetch import defaults
from paperfetch.errors import ConfigurationError, StoreUnavailable
from paperfetch.ledger.base import LedgerEntry, ResumeLedger, entries_frame, entry_from_row
from paperfetch.state.redis import RedisStore, redis_failure, redis_name

if TYPE_CHECKING:
    import pandas as pd

    from paperfetch.ledger.sqlite import SqliteLedger

__all__ = ["RedisLedger"]

logger = logging.getLogger("paperfetch.ledger")


class RedisLedger(ResumeLedger):
    """A resume ledger in Redis for the output folder *folder* (shared storage on a cluster). Thread-safe.
    *redis* is a URL, a redis-py client, or a :class:`~paperfetch.state.RedisStore` (its connection shared);
    *name* separates the ledgers of different batches in one Redis."""

    def __init__(
        self,
        redis: Any,
        folder: str | os.PathLike[str],
        *,
        name: str = defaults.LEDGER_NAME,
        namespace: str = defaults.REDIS_NAMESPACE,
        fallback: SqliteLedger | None = None,
        socket_timeout_s: float = defaults.REDIS_SOCKET_TIMEOUT_S,
    ) -> None:
        try:
            import redis as redis_py
        except ImportError:  # pragma: no cover
            raise ConfigurationError('the Redis ledger needs redis-py: pip install "paperfetch-oa[redis]"') from None
        self._owns_client = isinstance(redis, str)
        if isinstance(redis, str):
            self._client = redis_py.Redis.from_url(redis, socket_timeout=socket_timeout_s,
                                                   socket_connect_timeout=socket_timeout_s, decode_responses=True)
        else:
            self._client = redis.client if isinstance(redis, RedisStore) else redis
        self._connection_errors = (redis_py.exceptions.ConnectionError, redis_py.exceptions.TimeoutError)
        # any Redis failure (OOM, NOAUTH / WRONGPASS, READONLY …): never "no record"
        self._errors = (redis_py.exceptions.RedisError,)
        self._watch_error = redis_py.exceptions.WatchError
        self.store_name = redis_name(self._client)
        self.folder = Path(folder).expanduser().resolve()
        self.name = name
        self._prefix = f"{namespace}ledger:{name}:"
        self.fallback = fallback
        self._closed = False

    def _entry_key(self, key: str) -> str:
        return f"{self._prefix}e:{key}"

    def _call(self, operation: str, on_redis: Callable[[], Any], on_fallback: Callable[[SqliteLedger], Any]) -> Any:
        if self._closed:
            raise RuntimeError(f"the ledger {self!r} is closed")
        try:
            return on_redis()
        except self._errors as exc:
            failure = redis_failure(exc, self._connection_errors)
            if self.fallback is None:
                raise StoreUnavailable(
                    f"the ledger in {self.store_name} {failure} during {operation}; "
                    "start Redis again, or give the RedisLedger a local fallback ledger",
                    store=self.store_name,
                ) from None  # redis-py's own chain can carry the connection's details
            logger.warning("ledger: %s %s during %s; using %s", self.store_name, failure, operation, self.fallback.path)
            return on_fallback(self.fallback)

    def write_row(self, row: dict[str, Any], extra: dict[str, Any] | None) -> None:
        key = row["key"]
        entry_key, index = self._entry_key(key), self._prefix + "index"

        def on_redis() -> None:
            with self._client.pipeline() as pipe:
                while True:
                    try:
                        pipe.watch(entry_key)
                        previous = pipe.get(entry_key)
                        old = json.loads(previous) if previous else {}
                        stored = dict(row, extra={**old.get("extra", {}), **(extra or {})})
                        if old:
                            stored.update(attempts=int(old["attempts"]) + 1, first_seen=old["first_seen"])
                        pipe.multi()
                        pipe.set(entry_key, json.dumps(stored, ensure_ascii=False, default=str))
                        if not previous:
                            pipe.zadd(index, {key: datetime.fromisoformat(row["first_seen"]).timestamp()})
                        pipe.execute()
                        return
                    except self._watch_error:
                        continue

        def on_fallback(ledger: SqliteLedger) -> None:  # its path stored against its own folder
            path = row["path"] and ledger.stored_path(self.folder / row["path"])
            ledger.write_row(dict(row, path=path), extra)

        self._call("record", on_redis, on_fallback)

    def get(self, key: str) -> LedgerEntry | None:
        def on_redis() -> LedgerEntry | None:
            value = self._client.get(self._entry_key(key))
            return entry_from_row(json.loads(value)) if value else None

        return self._call("get", on_redis, lambda ledger: ledger.get(key))

    def __len__(self) -> int:
        return int(self._call("len", lambda: self._client.zcard(self._prefix + "index"), len))

    def entries(self) -> pd.DataFrame:
        def on_redis() -> pd.DataFrame:
            # the index holds the keys we wrote (str); redis-py's stubs type members by every response shape
            keys = cast("list[str]", self._client.zrange(self._prefix + "index", 0, -1))
            values = self._client.mget([self._entry_key(k) for k in keys]) if keys else []
            return entries_frame(entry_from_row(json.loads(v)) for v in values if v)

        return self._call("entries", on_redis, lambda ledger: ledger.entries())

    def close(self) -> None:
        """Close the connection if this ledger opened it (and the fallback). Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        if self._owns_client:
            self._client.close()
        if self.fallback is not None:
            self.fallback.close()

    def __repr__(self) -> str:
        return f"RedisLedger({self.store_name!r}, name={self.name!r}, folder={str(self.folder)!r})"
