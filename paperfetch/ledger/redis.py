"""The resume ledger in Redis: the SQLite ledger's contract, shared by every machine (docs/state.md, "The ledger").
Keys under ``{namespace}ledger:{name}:``: ``e:{key}`` (the entry as JSON), ``index`` (sorted by first_seen).
"""

from __future__ import annotations

import json
import logging
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, cast

from paperfetch import defaults
from paperfetch.errors import ConfigurationError, StoreUnavailable
from paperfetch.ledger.base import LedgerEntry, LedgerFiles, entries_frame, entry_from_row, merged_extra, record_row

if TYPE_CHECKING:
    import pandas as pd

    from paperfetch.ledger.sqlite import SqliteLedger

__all__ = ["RedisLedger"]

logger = logging.getLogger("paperfetch.ledger")


class RedisLedger(LedgerFiles):
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
        from paperfetch.state.redis import RedisStore, redis_name

        self._owns_client = isinstance(redis, str)
        if isinstance(redis, str):
            client = redis_py.Redis.from_url(redis, socket_timeout=socket_timeout_s,
                                             socket_connect_timeout=socket_timeout_s, decode_responses=True)
        elif isinstance(redis, RedisStore):
            client = redis.client
        else:
            client = redis
        self._client = client
        self._connection_errors = (redis_py.exceptions.ConnectionError, redis_py.exceptions.TimeoutError)
        # any Redis failure (OOM, NOAUTH / WRONGPASS, READONLY …): never "no record"
        self._errors = (redis_py.exceptions.RedisError,)
        self._watch_error = redis_py.exceptions.WatchError
        self.store_name = redis_name(client)
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
            from paperfetch.state.redis import redis_failure

            failure = redis_failure(exc, self._connection_errors)
            if self.fallback is None:
                raise StoreUnavailable(
                    f"the ledger in {self.store_name} {failure} during {operation}; "
                    "start Redis again, or give the RedisLedger a local fallback ledger",
                    store=self.store_name,
                ) from None  # redis-py's own chain can carry the connection's details
            logger.warning("ledger: %s %s during %s; using %s", self.store_name, failure, operation, self.fallback.path)
            return on_fallback(self.fallback)

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
        """Record the latest outcome for *key* (as :meth:`paperfetch.ledger.SqliteLedger.record` does)."""
        now = datetime.now(timezone.utc)
        fresh = record_row(
            key, status=status, path=self.stored_path(path), bytes=bytes, sha256=sha256, source=source, url=url,
            http_status=http_status, error=error, retryable=retryable, now=now,
        )
        entry_key, index = self._entry_key(key), self._prefix + "index"

        def on_redis() -> None:
            with self._client.pipeline() as pipe:
                while True:
                    try:
                        pipe.watch(entry_key)
                        previous = pipe.get(entry_key)
                        row = dict(fresh)
                        old = json.loads(previous) if previous else None
                        if old is not None:
                            row["attempts"] = int(old["attempts"]) + 1
                            row["first_seen"] = old["first_seen"]
                        row["extra"] = merged_extra(old.get("extra") if old is not None else None, extra)
                        pipe.multi()
                        pipe.set(entry_key, json.dumps(row, ensure_ascii=False, default=str))
                        if not previous:
                            pipe.zadd(index, {key: now.timestamp()})
                        pipe.execute()
                        return
                    except self._watch_error:
                        continue

        self._call("record", on_redis, lambda ledger: ledger.record(
            key, status=status, path=path, bytes=bytes, sha256=sha256, source=source, url=url,
            http_status=http_status, error=error, retryable=retryable, extra=extra))
        logger.debug("ledger (redis): %s -> %s", key, status)

    def get(self, key: str) -> LedgerEntry | None:
        """The latest outcome recorded for *key*, or None."""

        def on_redis() -> LedgerEntry | None:
            value = self._client.get(self._entry_key(key))
            return entry_from_row(json.loads(value)) if value else None

        return self._call("get", on_redis, lambda ledger: ledger.get(key))

    def __len__(self) -> int:
        return int(self._call("len", lambda: self._client.zcard(self._prefix + "index"), len))

    def entries(self) -> pd.DataFrame:
        """Every entry as a DataFrame, one row per key, ordered by ``first_seen`` (the SQLite ledger's columns)."""
        import pandas as pd

        def on_redis() -> list[LedgerEntry]:
            # the index holds the keys we wrote (str); redis-py's stubs type members by every response shape
            keys = cast("list[str]", self._client.zrange(self._prefix + "index", 0, -1))
            values = self._client.mget([self._entry_key(k) for k in keys]) if keys else []
            return [entry_from_row(json.loads(v)) for v in values if v]

        def on_fallback(ledger: SqliteLedger) -> pd.DataFrame:
            return ledger.entries()

        rows = self._call("entries", on_redis, on_fallback)
        if isinstance(rows, pd.DataFrame):  # answered by the fallback ledger
            return rows
        return entries_frame(rows)

    def close(self) -> None:
        """Close the connection if this ledger opened it (and the fallback). Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        if self._owns_client:
            self._client.close()
        if self.fallback is not None:
            self.fallback.close()

    def __enter__(self) -> RedisLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RedisLedger({self.store_name!r}, name={self.name!r}, folder={str(self.folder)!r})"
