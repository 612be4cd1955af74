"""The shared store for many machines: Redis (redis-py); slots are Lua scripts, facts a WATCH/MULTI
transaction merged by :func:`~paperfetch.state.base.merge_facts` (docs/state.md, "Redis").
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
import time
from typing import Any, Callable, Sequence

from paperfetch import defaults
from paperfetch.errors import ConfigurationError, StoreUnavailable
from paperfetch.state.base import (
    HOLD_FIELDS,
    SUPPRESSION_FIELDS,
    HostFacts,
    HostStateStore,
    Slot,
    StoreBase,
    Window,
    apply_update,
    expire_facts,
    new_token,
    slot_horizon,
)

__all__ = ["FACTS_TTL_S", "RedisStore", "redis_failure", "redis_name"]

logger = logging.getLogger("paperfetch.state")

#: How long learned facts (interval, backoff, breaker, robots.txt) live in Redis without a write.
FACTS_TTL_S = 30 * 24 * 3600

#: Slots outlive their last use by this much, then Redis drops them (their next_free is long past).
_SLOT_GRACE_S = 600

_RESERVE = """
local v = redis.call('HMGET', KEYS[1], 'next_free', 'holder', 'lease_until')
local now, interval, lease = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local next_free = tonumber(v[1]) or 0
local holder = v[2] or ''
local lease_until = tonumber(v[3]) or 0
-- a stored time too far ahead is a wall clock that moved: clamped as paperfetch.state.base.clamp_slot does
if next_free > now + tonumber(ARGV[7]) then next_free = now + interval end
local lease_bound = math.max(lease, interval, 0)
if holder ~= '' and lease_until > now + math.max(lease_bound, tonumber(ARGV[8])) then lease_until = now + lease_bound end
if holder ~= '' and lease_until > now then
  return {0, string.format('%.6f', lease_until), '', string.format('%.6f', lease_until)}
end
local start = math.max(now, next_free)
-- the windows (ARGV[10..], count and span pairs): no sooner than each one's count-th newest start plus its span
local windows, depth, span = tonumber(ARGV[9]), 0, 0
for i = 0, windows - 1 do
  local count, seconds = tonumber(ARGV[10 + 2 * i]), tonumber(ARGV[11 + 2 * i])
  local at = tonumber(redis.call('LINDEX', KEYS[3], count - 1))
  if at then start = math.max(start, math.min(at, now) + seconds) end
  depth = math.max(depth, count); span = math.max(span, seconds)
end
local new_holder, new_lease = '', 0
if lease > 0 then new_holder = ARGV[4]; new_lease = start + lease end
redis.call('HSET', KEYS[1], 'next_free', string.format('%.6f', start + interval), 'holder', new_holder,
           'lease_until', string.format('%.6f', new_lease))
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('SADD', KEYS[2], ARGV[6])
if windows > 0 then
  redis.call('LPUSH', KEYS[3], string.format('%.6f', start))
  redis.call('LTRIM', KEYS[3], 0, depth - 1)
  redis.call('PEXPIRE', KEYS[3], math.ceil((start - now + span) * 1000) + tonumber(ARGV[5]))
end
return {1, string.format('%.6f', start), ARGV[4], string.format('%.6f', new_lease)}
"""

_FINISH = """
if ARGV[1] == '' then return 0 end
local v = redis.call('HMGET', KEYS[1], 'next_free', 'holder')
local next_free = math.max(tonumber(v[1]) or 0, tonumber(ARGV[2]) + tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], 'next_free', string.format('%.6f', next_free))
if (v[2] or '') == ARGV[1] then redis.call('HSET', KEYS[1], 'holder', '', 'lease_until', '0') end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
"""



def redis_name(client: Any) -> str:
    """``redis://host:port/db`` of a redis-py client: never the password or the user."""
    kwargs = client.connection_pool.connection_kwargs
    if "path" in kwargs:
        return f"redis+unix://{kwargs['path']}?db={kwargs.get('db', 0)}"
    scheme = "rediss" if kwargs.get("ssl") or "ssl_cert_reqs" in kwargs else "redis"
    return f"{scheme}://{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}/{kwargs.get('db', 0)}"


def redis_failure(exc: BaseException, connection_errors: tuple[type[BaseException], ...]) -> str:
    """What went wrong, for people: ``does not answer (TimeoutError)``, ``refused the command (…)``; never a password."""
    if isinstance(exc, connection_errors) and not type(exc).__name__.startswith("Authentication"):
        return f"does not answer ({type(exc).__name__})"
    text = " ".join(str(exc).split())[:200]
    return f"refused the command ({type(exc).__name__}: {text})" if text else f"refused the command ({type(exc).__name__})"


class RedisStore(StoreBase):
    """Host state in Redis, shared by every process on every machine that opens the same URL. Thread-safe."""

    def __init__(
        self,
        url: str = "redis://localhost:6379/0",
        *,
        namespace: str = defaults.REDIS_NAMESPACE,
        fallback: str | HostStateStore | None = None,
        retry_after_s: float = defaults.REDIS_RETRY_AFTER_S,
        socket_timeout_s: float = defaults.REDIS_SOCKET_TIMEOUT_S,
    ) -> None:
        try:
            import redis
        except ImportError:  # pragma: no cover - the extra is installed in the test environment
            raise ConfigurationError('the Redis store needs redis-py: pip install "paperfetch-oa[redis]"') from None
        self._connection_errors = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
        # any Redis failure (OOM, NOAUTH / WRONGPASS, READONLY …) counts as the store failing
        self._redis_errors = (redis.exceptions.RedisError,)
        self._watch_error = redis.exceptions.WatchError
        #: the redis-py client (shared with :class:`~paperfetch.ledger.RedisLedger` when it is built from this store)
        self.client = redis.Redis.from_url(
            url, socket_timeout=socket_timeout_s, socket_connect_timeout=socket_timeout_s, decode_responses=True
        )
        self.name = redis_name(self.client)
        # which store this is, for the process-wide registry: the whole URL (a fixed password is another
        # connection), held as a digest so that no password is kept or shown
        self.identity = f"{self.name}#{hashlib.sha256(url.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"
        self.namespace = namespace
        self._reserve_script = self.client.register_script(_RESERVE)
        self._finish_script = self.client.register_script(_FINISH)
        if fallback == "local":
            from paperfetch.state.sqlite import SqliteStore

            fallback = SqliteStore()
        elif fallback in (None, "error"):
            fallback = None
        elif not isinstance(fallback, HostStateStore):
            raise ConfigurationError(f"fallback must be 'error', 'local' or a store, not {fallback!r}")
        self._fallback: HostStateStore | None = fallback
        self._retry_after_s = retry_after_s
        self._down_since: float | None = None  # time.monotonic() of the failure while on the fallback
        self._lock = threading.Lock()

    @property
    def on_fallback(self) -> bool:
        """True while calls are served by the fallback store because Redis did not answer."""
        return self._down_since is not None

    def _call(self, operation: str, on_redis: Callable[[], Any], *args: Any) -> Any:
        """*on_redis*, or the fallback store's method *operation* with *args* while Redis does not answer."""
        down_since = self._down_since  # set only when there is a fallback
        if down_since is not None and time.monotonic() - down_since < self._retry_after_s:
            return getattr(self._fallback, operation)(*args)
        try:
            result = on_redis()
        except self._redis_errors as exc:
            if self._fallback is None:
                raise StoreUnavailable(
                    f"the host-state store {self.name} {redis_failure(exc, self._connection_errors)} during {operation}; "
                    "start Redis again, or open the store with fallback='local' to go on with this machine's state",
                    store=self.name,
                ) from None  # redis-py's own chain can carry the connection's details
            with self._lock:
                if self._down_since is None:
                    logger.warning("%s %s; using %s until it answers", self.name,
                                   redis_failure(exc, self._connection_errors), self._fallback.name)
                self._down_since = time.monotonic()
            return getattr(self._fallback, operation)(*args)
        if down_since is not None:
            with self._lock:
                self._down_since = None
            logger.warning("%s answers again; host state is shared again", self.name)
        return result

    def _key(self, kind: str, host: str) -> str:
        return f"{self.namespace}{kind}:{host}"

    def reserve(self, host: str, interval_s: float, now: float, lease_s: float = 0.0,
                windows: Sequence[Window] = ()) -> Slot:
        token = new_token()
        ttl_ms = math.ceil((max(interval_s, lease_s) + _SLOT_GRACE_S) * 1000)
        spans = [value for window in windows for value in (window.count, repr(window.seconds))]

        def on_redis() -> Slot:
            granted, start, token_back, lease_until = self._reserve_script(
                keys=[self._key("slot", host), self.namespace + "hosts", self._key("starts", host)],
                args=[repr(float(now)), repr(float(interval_s)), repr(float(lease_s)), token, ttl_ms, host,
                      repr(slot_horizon(interval_s, lease_s)), repr(float(defaults.MAX_CRAWL_DELAY_S)),
                      len(windows), *spans],
            )
            return Slot(host, bool(int(granted)), float(start), token_back, float(lease_until))

        return self._call("reserve", on_redis, host, interval_s, now, lease_s, windows)

    def starts(self, host: str, limit: int) -> list[float]:
        if limit <= 0:
            return []
        return self._call("starts", lambda: [float(at) for at in self.client.lrange(self._key("starts", host), 0, limit - 1)],
                          host, limit)

    def finish(self, slot: Slot, end: float, gap_s: float = 0.0) -> None:
        ttl_ms = math.ceil((gap_s + _SLOT_GRACE_S) * 1000)
        self._call("finish", lambda: self._finish_script(keys=[self._key("slot", slot.host)],
                                                         args=[slot.token, repr(float(end)), repr(float(gap_s)), ttl_ms]),
                   slot, end, gap_s)

    def _facts_keys(self, host: str) -> list[str]:
        return [self._key("facts", host), self._key("hold", host), self._key("supp", host)]

    @staticmethod
    def _combine(host: str, values: "list[Any]") -> HostFacts:
        data: dict[str, Any] = {}
        for value in values:
            if value:
                data.update(json.loads(value))
        data["host"] = host
        return HostFacts.from_json(data)

    def get(self, host: str, now: float) -> HostFacts:
        return self._call("get", lambda: expire_facts(self._combine(host, self.client.mget(self._facts_keys(host))), now),
                          host, now)

    def update(self, host: str, change: Callable[[HostFacts], HostFacts], now: float) -> HostFacts:
        keys = self._facts_keys(host)

        def on_redis() -> HostFacts:
            with self.client.pipeline() as pipe:
                while True:
                    try:
                        pipe.watch(*keys)
                        merged = apply_update(self._combine(host, pipe.mget(keys)), change, now)
                        record = merged.to_json()
                        hold = {name: record.pop(name) for name in HOLD_FIELDS}
                        supp = {name: record.pop(name) for name in SUPPRESSION_FIELDS}
                        pipe.multi()
                        pipe.set(keys[0], json.dumps(record), ex=FACTS_TTL_S)
                        for key, part, until in ((keys[1], hold, merged.hold_until), (keys[2], supp, merged.suppressed_until)):
                            if until is None or until <= now:
                                pipe.delete(key)
                            else:  # px=None: no expiry (indefinite)
                                pipe.set(key, json.dumps(part), px=None if math.isinf(until) else math.ceil((until - now) * 1000))
                        pipe.sadd(self.namespace + "hosts", host)
                        pipe.execute()
                        return merged
                    except self._watch_error:
                        continue  # another client wrote this host meanwhile: merge again over its value

        return self._call("update", on_redis, host, change, now)

    def hosts(self) -> list[str]:
        return self._call("hosts", lambda: sorted(str(h) for h in self.client.smembers(self.namespace + "hosts")))

    def clear(self, host: str | None = None) -> None:
        def on_redis() -> None:
            hosts = [host] if host is not None else [str(h) for h in self.client.smembers(self.namespace + "hosts")]
            keys = [key for h in hosts for key in (*self._facts_keys(h), self._key("slot", h), self._key("starts", h))]
            if keys:
                self.client.delete(*keys)
            if host is None:
                self.client.delete(self.namespace + "hosts")
            else:
                self.client.srem(self.namespace + "hosts", host)

        self._call("clear", on_redis, host)

    def close(self) -> None:
        self.client.close()
        if self._fallback is not None:
            self._fallback.close()
