"""Per-host state: one :class:`HostLimiter` per host (``host`` or ``host:port``), shared by every client on the
same host-state store: the immutable :class:`HostFacts` kept in the store, plus process-local pacing and counters
(docs/state.md, "How the transport uses the store"). :class:`HostSnapshot` is the frozen public view.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Callable
from urllib.parse import urlsplit

from paperfetch import defaults
from paperfetch.clock import SYSTEM_CLOCK, Clock, utc
from paperfetch.errors import InvalidURL, StateStoreError
from paperfetch.http.robots import RobotsRules, RobotsStatus, UnreachablePolicy
from paperfetch.state.base import BreakerState, HostFacts, HostStateStore
from paperfetch.state.memory import MemoryStore

__all__ = [
    "HostLimiter", "HostRegistry", "HostSnapshot", "default_registry", "host_key", "host_limiter",
    "queued_start", "registry_for", "release_holds", "robots_of", "with_robots",
]

logger = logging.getLogger(__name__)

_DEFAULT_PORTS = {"http": 80, "https": 443}


@functools.lru_cache(maxsize=1024)  # a request (and a batch planning it) asks for its URL's host more than once
def host_key(url: str) -> str:
    """The host a URL's politeness is kept under: ``host`` or ``host:port``."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidURL(f"cannot read a host from {url!r}: {exc}", url=url) from None
    host = parts.hostname
    if not host:
        if "://" not in url:
            raise InvalidURL(f"{url!r} has no host; did you mean 'https://{url}'?", url=url)
        raise InvalidURL(f"{url!r} has no host", url=url)
    if ":" in host:
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS.get(parts.scheme.lower()):
        return host
    return f"{host}:{port}"


#: the wall clock moved against the monotonic one by more than this: it stepped (HostLimiter._steady)
_CLOCK_STEP_S = 1.0


def queued_start(ready_in_s: float, interval_s: float, position: int) -> float:
    """Seconds from now until the request at *position* (0-based) of a host's queue starts: *ready_in_s*, then
    one *interval_s* per request ahead; ``inf`` when the host serves nothing now."""
    if math.isinf(ready_in_s):
        return math.inf
    return max(0.0, ready_in_s) + position * interval_s


def robots_of(facts: HostFacts) -> RobotsRules | None:
    """The robots.txt rules *facts* keep (None: none fetched), parsed once per fetch in the process."""
    if facts.robots_fetched_at is None or facts.robots_expires_at is None:
        return None
    return _parsed_robots(facts.robots_txt, facts.robots_fetched_at, facts.robots_expires_at, facts.robots_status,
                          facts.robots_detail, facts.robots_truncated, facts.robots_unreachable_policy)


def with_robots(facts: HostFacts, rules: RobotsRules) -> HostFacts:
    """*facts* keeping *rules*: its text, status, times and detail (another process parses the text again)."""
    return replace(facts, robots_txt=rules.text, robots_fetched_at=rules.fetched_at, robots_expires_at=rules.expires_at,
                   robots_status=rules.status.value, robots_detail=rules.detail, robots_truncated=rules.truncated,
                   robots_unreachable_policy=rules.unreachable_policy.value)


@functools.lru_cache(maxsize=1024)
def _parsed_robots(text: str | None, fetched: float, expires: float, status_value: str | None, detail: str,
                   truncated: bool, policy_value: str) -> RobotsRules:
    policy = UnreachablePolicy.parse(policy_value or "allow")
    status = RobotsStatus(status_value) if status_value else RobotsStatus.PARSED
    if status is RobotsStatus.PARSED:
        rules = RobotsRules.parse((text or "").encode("utf-8"), fetched_at=fetched, expires_at=expires, truncated=truncated)
        return replace(rules, unreachable_policy=policy, detail=detail or rules.detail)
    return RobotsRules(status, fetched, expires, unreachable_policy=policy, detail=detail)


@dataclass(frozen=True)
class HostSnapshot:
    """One host as it is now: the facts, the pacing and the counters (frozen; ``HostSnapshot(host)``: nothing known)."""

    host: str
    requests: int = 0
    in_flight: int = 0
    ok: int = 0
    errors: int = 0
    last_status: int | None = None
    delay_min_s: float | None = None   #: the delay range in force (every floor applied)
    delay_max_s: float | None = None
    backoff_s: float = 0.0
    learned_interval_s: float = 0.0
    crawl_delay_s: float | None = None
    robots: str | None = None          #: robots.txt status, when this client consulted it
    held_until: datetime | None = None
    hold_status: int | None = None
    hold_reason: str = ""
    suppressed: bool = False
    suppressed_reason: str | None = None
    suppressed_until: datetime | None = None
    #: :class:`BreakerState` value in force: ``open`` until ``breaker_open_until``, ``half_open`` after it
    breaker: str = BreakerState.CLOSED.value
    failures: int = 0
    breaker_open_until: datetime | None = None
    #: why the breaker is not closed, what happened first and since when (``unreachable: Connection refused
    #: since 16:41 UTC (3 failures in a row)``); "" while closed
    breaker_reason: str = ""
    next_allowed_at: datetime | None = None  #: the earliest a request could start (hold, breaker, pacing)
    ready_in_s: float = 0.0            #: seconds from now until then (0: now; inf: suppressed)
    credits_left: int | None = None    #: the host's budget left (its last ``X-RateLimit-Remaining``)
    credits_reset_at: datetime | None = None  #: when that budget renews
    budget_spent: bool = False         #: the budget is spent: held until it renews
    max_in_flight: int = 1             #: requests this client lets be in flight to the host
    pacing_margin_s: float = 0.0       #: added to every gap the delay range asks for
    pool: str = ""                     #: the pool of ``host`` (``host#pool``) by request kind; "" for a host's own
    windows: str = ""                  #: the windows kept beside the interval (``"10/s, 500/min"``)
    binding_window: str = ""           #: the window that delays the next start now, else the fullest one
    window_starts: int = 0             #: starts counted in the binding window now
    window_wait_s: float = 0.0         #: seconds until the binding window lets the next request start

    @property
    def interval_s(self) -> float:
        """The mean gap between the host's request starts: the middle of the delay range in force plus
        the pacing margin (0: no delay)."""
        low, high = self.delay_min_s, self.delay_max_s
        middle = 0.0 if low is None else (low + (high if high is not None else low)) / 2
        return middle + self.pacing_margin_s if middle > 0 else 0.0

    def start_of(self, position: int) -> float:
        return queued_start(self.ready_in_s, self.interval_s, position)


class HostLimiter:
    """The record of one host. ``facts`` is the value last read from or written to the store, replaced,
    never mutated; the other fields are guarded by ``cond``."""

    def __init__(self, key: str, registry: "HostRegistry") -> None:
        self.key = key
        self._registry = registry
        self._store = registry.store
        self.cond = threading.Condition()
        self.robots_lock = threading.Lock()
        self.facts = HostFacts(key)
        self._read = self.facts  # self.facts as the store has them, before the hold is read on the monotonic clock
        # the hold last read: (its end on the wall clock, its end on the monotonic clock, status, reason, wall - monotonic)
        self._hold_mark: tuple[float, float, int | None, str, float] | None = None
        # pacing (process-local, monotonic)
        self.last_start: float | None = None
        self.gap_fraction: float = 0.0
        self.in_flight = 0
        self.probing = False  # a half-open probe of this process is on its way
        self.last_gap_s: float | None = None  # the gap the latest request kept after the previous one
        self._previous_start: float | None = None
        # what the host is, as the caller named it (process-local): for the warnings people read
        self.service = ""
        self.budget_remedy = ""
        self.requests = 0
        self.ok = 0
        self.errors = 0
        self.last_status: int | None = None

    def describe(self, *, service: str, budget_remedy: str = "") -> "HostLimiter":
        """Name the service behind this host and the remedy for a spent budget, for the one warning about it."""
        self.service = service
        self.budget_remedy = budget_remedy
        return self

    def adopt(self, stored: HostFacts) -> HostFacts:
        self._read = stored
        self.facts = self._steady(stored)
        return self.facts

    def steady(self) -> HostFacts:
        """``facts`` with the hold read on the monotonic clock now (:meth:`_steady`), without asking the store."""
        with self.cond:
            self.facts = self._steady(self._read)
            return self.facts

    def _steady(self, facts: HostFacts) -> HostFacts:
        """*facts* with the hold's end read on the monotonic clock: the hold is shared as wall-clock epoch seconds,
        turned into a monotonic end the first time this process reads it, and lasts that long here whatever the
        wall clock does afterwards. A step back does not lengthen it; a step forward does not end it early
        (the store drops a hold its wall clock says has passed; here it stays until its monotonic end). A hold
        cleared while the wall clock still says it runs (a release) ends at once. A wall clock that moved more
        than a second against the monotonic one stepped: the hold read then with the same status and reason
        is the same hold (the store only ever extends holds)."""
        until = facts.hold_until
        mark = self._hold_mark
        if until is None and mark is not None:
            clock = self._registry.clock
            wall, mono = clock.time(), clock.monotonic()
            if wall >= mark[0] and mark[1] > mono:  # the wall clock jumped past the end the monotonic one has not reached
                return replace(facts, hold_until=wall + (mark[1] - mono), hold_status=mark[2], hold_reason=mark[3])
            self._hold_mark = None
            return facts
        if until is None or not math.isfinite(until):
            self._hold_mark = None
            return facts
        clock = self._registry.clock
        wall, mono = clock.time(), clock.monotonic()
        stepped = mark is not None and abs((wall - mono) - mark[4]) > _CLOCK_STEP_S
        if mark is None or (until != mark[0] and not stepped) or mark[2:4] != (facts.hold_status, facts.hold_reason):
            # a hold not read before (or extended while the clocks kept step); the same hold read after the wall
            # clock stepped keeps its monotonic end, however far its wall-clock end moved (a store re-bases the
            # hold of a record written "later" than now on every read)
            mark = self._hold_mark = (until, mono + (until - wall), facts.hold_status, facts.hold_reason, wall - mono)
        left = mark[1] - mono
        if left <= 0:
            return replace(facts, hold_until=None, hold_status=None, hold_reason="")
        steady = wall + left
        return facts if abs(steady - until) < 1e-6 else replace(facts, hold_until=steady)

    def refresh(self) -> HostFacts:
        """The facts as the store has them now (another process's hold included); also kept in ``facts``."""
        stored = self._store.get(self.key, self._registry.clock.time())
        with self.cond:
            return self.adopt(stored)

    def update(self, change: Callable[[HostFacts], HostFacts]) -> tuple[HostFacts, HostFacts]:
        """Apply ``change`` to the store's current facts, atomically across every client of the store
        (holds and suppressions only ever extend there); returns (old, new)."""
        with self.cond:
            seen: list[HostFacts] = []

            def on_stored(current: HostFacts) -> HostFacts:
                seen[:] = [current]
                return change(current)

            stored = self._store.update(self.key, on_stored, self._registry.clock.time())
            old = seen[0] if seen else self.facts
            new = self.adopt(stored)
            if new is not old and new != old:
                self.cond.notify_all()
            return old, new

    def overwrite(self, change: Callable[[HostFacts], HostFacts]) -> None:
        """Write facts that shorten a hold or a suppression (the store only extends those): cleared, written anew."""
        with self.cond:
            facts = change(self.refresh())
            now = self._registry.clock.time()
            self._store.clear(self.key)
            self.adopt(self._store.put(facts, now))
            self.cond.notify_all()

    def _wall(self, monotonic: float) -> float:
        clock = self._registry.clock
        return clock.time() + (monotonic - clock.monotonic())

    @property
    def robots(self) -> RobotsRules | None:
        return robots_of(self.facts)

    # holds: monotonic arguments, for callers that pace on the monotonic clock
    def hold_remaining(self, now: float) -> float:
        """:meth:`.HostFacts.hold_remaining` of the facts at *now* on the monotonic clock."""
        return self.facts.hold_remaining(self._wall(now))

    def set_hold(self, until: float, *, status: int | None, reason: str) -> bool:
        """Hold the host until *until* (monotonic), never shortening a longer hold; True when extended."""
        wall = self._wall(until)

        def hold(f: HostFacts) -> HostFacts:
            if f.hold_until is not None and f.hold_until >= wall:
                return f
            return replace(f, hold_until=wall, hold_status=status, hold_reason=reason)

        old, new = self.update(hold)
        return old != new

    def release(self) -> None:
        """Clear this host's hold, open breaker and learned interval (a person says it is fine again), for every
        process of the store; the published floors stay."""
        self.overwrite(lambda f: replace(
            f, hold_until=None, hold_status=None, hold_reason="",
            breaker_state=BreakerState.CLOSED, breaker_failures=0, breaker_open_until=None, breaker_reason="",
            learned_interval_s=0.0,
        ))

    @property
    def held_until(self) -> datetime | None:
        """The end of the hold as a UTC datetime, or ``None`` when not held."""
        until = self.facts.hold_until
        if until is None or until <= self._registry.clock.time():
            return None
        return utc(until)

    def suppress(self, reason: str, now: float, ttl: float | None) -> None:
        since = self._wall(now)
        self.update(lambda f: replace(f, suppressed_until=math.inf if ttl is None else since + ttl, suppression_reason=reason,
                                      suppressed_since=since))

    def begin(self, now: float, gap_fraction: float) -> None:
        """A request starts now (caller holds ``cond``)."""
        self.last_gap_s = None if self.last_start is None else now - self.last_start
        self._previous_start = self.last_start
        self.last_start = now
        self.gap_fraction = gap_fraction
        self.in_flight += 1
        self.requests += 1

    def end(self, status: int | None, now: float | None = None, *, reached: bool = True) -> None:
        """A request ended (headers arrived, or it failed) at *now*: the pacing clock restarts here, so the gap
        is one the server sees too. A request that never reached the host leaves the clock where it was."""
        with self.cond:
            if not reached:
                self.last_start = self._previous_start
            elif now is not None and (self.last_start is None or now > self.last_start):
                self.last_start = now
            self.in_flight = max(0, self.in_flight - 1)
            self.probing = False
            if status is None:
                self.errors += 1
            else:
                self.last_status = status
                if 200 <= status < 400:
                    self.ok += 1
                else:
                    self.errors += 1
            self.cond.notify_all()

    def cancel(self) -> None:
        """A request that took a slot was not sent after all (its batch stopped)."""
        with self.cond:
            self.in_flight = max(0, self.in_flight - 1)
            self.requests = max(0, self.requests - 1)
            self.probing = False
            self.cond.notify_all()

    def __repr__(self) -> str:
        return f"HostLimiter({self.key!r}, requests={self.requests}, backoff={self.facts.backoff_s:g}s)"


def _in_force(stored: HostFacts, now: float) -> bool:
    return (stored.hold_remaining(now) > 0 or stored.suppressed(now) or stored.breaker_state is not BreakerState.CLOSED
            or stored.backoff_s > 0 or stored.learned_interval_s > 0)


class HostRegistry:
    """Every host's :class:`HostLimiter`, created on first use, over one host-state *store* (default: a fresh memory one)."""

    def __init__(self, clock: Clock = SYSTEM_CLOCK, store: HostStateStore | None = None, *,
                 lease_s: float = defaults.HOST_LEASE_S) -> None:
        self.clock = clock
        self.store: HostStateStore = store if store is not None else MemoryStore()
        #: the lease of an end-to-end reservation (see :data:`paperfetch.defaults.HOST_LEASE_S`)
        self.lease_s = float(lease_s)
        self._hosts: dict[str, HostLimiter] = {}
        self._lock = threading.Lock()

    def limiter(self, url_or_host: str) -> HostLimiter:
        key = host_key(url_or_host) if "://" in url_or_host else url_or_host.lower()
        with self._lock:
            limiter = self._hosts.get(key)
            if limiter is None:
                limiter = self._hosts[key] = HostLimiter(key, self)
            return limiter

    def hosts(self) -> list[HostLimiter]:
        with self._lock:
            return list(self._hosts.values())

    def known_hosts(self, *, refresh: bool = True) -> list[HostLimiter]:
        """The hosts this process asked about (refreshed unless *refresh* is False), and the store's hosts that
        something is in force for now, whoever set it; a host merely remembered from an earlier run is left out."""
        limiters = self.hosts()
        if refresh:
            for limiter in limiters:
                limiter.refresh()
        local = {limiter.key for limiter in limiters}
        now = self.clock.time()
        for key in self.store.hosts():
            if key in local:
                continue
            stored = self.store.get(key, now)
            if _in_force(stored, now):
                limiter = self.limiter(key)
                with limiter.cond:
                    limiter.adopt(stored)  # the registry fills its own limiters
                limiters.append(limiter)
        return limiters

    def release_holds(self) -> None:
        """Clear the holds, open breakers and learned intervals of :meth:`known_hosts`, whichever process set them."""
        for limiter in self.known_hosts():
            limiter.release()

    def clear(self) -> None:
        """Forget every host, in the store too (tests; a fresh start in a long-lived kernel)."""
        with self._lock:
            self._hosts.clear()
        self.store.clear()


_DEFAULT_REGISTRY = HostRegistry()


def default_registry() -> HostRegistry:
    return _DEFAULT_REGISTRY


_REGISTRIES: dict[tuple, HostRegistry] = {}
_REGISTRIES_LOCK = threading.Lock()


def registry_for(state: object = None, clock: Clock = SYSTEM_CLOCK, *, fallback: str | None = None) -> HostRegistry:
    """The registry over the store *state* names (:func:`paperfetch.state.open_store`), one per store and clock
    in the process. ``None`` or ``"memory"``: this process's own (a fresh one for a fake clock)."""
    import os

    from paperfetch.state import open_store

    if state is None or (isinstance(state, str) and state.strip().lower() == "memory"):
        return _DEFAULT_REGISTRY if clock is SYSTEM_CLOCK else HostRegistry(clock)
    store = open_store(state, fallback=fallback) if isinstance(state, (str, os.PathLike)) else state
    if not isinstance(store, HostStateStore):
        raise TypeError(f"state must be 'memory', a path, a store URL or a HostStateStore, not {state!r}")
    # an opened store is known by its name (Redis: its credentials too); an object by its id (the registry keeps it alive)
    opened = store is not state
    key = ("name", getattr(store, "identity", store.name), fallback, id(clock)) if opened else ("object", id(store), id(clock))
    with _REGISTRIES_LOCK:
        registry = _REGISTRIES.get(key)
        if registry is None:
            registry = _REGISTRIES[key] = HostRegistry(clock, store)
            return registry
    if opened:
        store.close()  # the registry already has a connection to it
    return registry


def host_limiter(url: str, *, state: object = None) -> HostLimiter:
    """The record of *url*'s host in the store *state* names: one object for every client of the process on that store."""
    return registry_for(state).limiter(url)


def release_holds() -> None:
    """Clear every hold, open breaker and learned interval in every host-state store this process has opened
    (holds other processes set there included)."""
    with _REGISTRIES_LOCK:
        registries = [_DEFAULT_REGISTRY, *_REGISTRIES.values()]
    for registry in registries:
        try:
            registry.release_holds()
        except StateStoreError as exc:  # a store that is gone (a stopped Redis) does not keep the others held
            logger.warning("could not release the holds in %s: %s", registry.store.name, exc)
