"""The host-state store contract and the pure rules every backend shares (docs/state.md, "The contract")."""

from __future__ import annotations

import logging
import math
import os
import re
import uuid
from dataclasses import asdict, dataclass, replace
from enum import Enum
from typing import Callable, Protocol, Sequence, runtime_checkable

from paperfetch import defaults
from paperfetch.config import clean_setting
from paperfetch.errors import ConfigurationError

__all__ = [
    "BreakerState", "CLOCK_SKEW_S", "HOLD_FIELDS", "HostFacts", "HostStateStore", "MAX_QUEUED_STARTS", "SUPPRESSION_FIELDS",
    "Slot", "StoreBase", "Window",
    "apply_update", "clamp_facts", "clamp_slot", "expire_facts", "finish_slot", "merge_facts", "new_token",
    "parse_store_spec", "reserve_slot", "slot_horizon", "window_depth", "window_floor", "window_span"
]

logger = logging.getLogger("paperfetch.state")

#: A record written more than this "later" than now means the wall clock moved (clamp_facts).
CLOCK_SKEW_S = 5.0
_UNTIL_FIELDS = ("hold_until", "suppressed_until", "breaker_open_until", "robots_fetched_at", "robots_expires_at",
                 "suppressed_since", "failing_since")

#: The fields of one hold, of one suppression and of one robots.txt fetch (merged and expired as a whole).
HOLD_FIELDS = ("hold_until", "hold_status", "hold_reason")
SUPPRESSION_FIELDS = ("suppressed_until", "suppression_reason", "suppressed_since")
_ROBOTS_FIELDS = ("robots_txt", "robots_fetched_at", "robots_expires_at", "robots_status", "robots_detail", "robots_truncated")

#: A slot further ahead than this many intervals (plus lease and largest Crawl-delay) is a clock that moved.
MAX_QUEUED_STARTS = 64


class BreakerState(str, Enum):
    """A host's circuit breaker (as resilience4j names the states)."""

    CLOSED = "closed"        #: requests flow
    OPEN = "open"            #: answered without a request until ``breaker_open_until``
    HALF_OPEN = "half_open"  #: one probe is on its way; its answer closes or reopens the breaker


@dataclass(frozen=True)
class HostFacts:
    """What one host told us, as one flat, JSON-able value: what the pure rules of ``http/policy.py`` read and
    return and what a store keeps, keyed by host. Times are wall-clock epoch seconds; ``math.inf`` in
    ``hold_until`` / ``suppressed_until``: until cleared."""

    host: str = ""
    hold_until: float | None = None
    hold_status: int | None = None
    hold_reason: str = ""
    suppressed_until: float | None = None
    suppression_reason: str = ""
    #: the gap the host showed it enforces (429s), on top of every published floor; 0: nothing learned
    learned_interval_s: float = 0.0
    backoff_s: float = 0.0
    breaker_state: BreakerState = BreakerState.CLOSED
    #: consecutive failures (429, 5xx, timeouts, connection errors), across all URLs and clients
    breaker_failures: int = 0
    breaker_open_until: float | None = None
    #: robots.txt as fetched, with its status, times and detail (``http.hosts.robots_of`` parses it)
    robots_txt: str | None = None
    robots_fetched_at: float | None = None
    robots_expires_at: float | None = None
    updated_at: float = 0.0
    suppressed_since: float | None = None
    #: successes in a row since the learned interval last changed
    successes: int = 0
    #: when the current run of failures began
    failing_since: float | None = None
    #: the period the breaker last opened for (doubled when a probe fails)
    breaker_period_s: float = 0.0
    breaker_reason: str = ""
    #: the HTTP status of the last failure (a synthetic answer repeats it), None for network errors
    failure_status: int | None = None
    robots_status: str | None = None       #: RobotsStatus value
    robots_detail: str = ""
    robots_truncated: bool = False
    robots_unreachable_policy: str = "allow"
    #: the host's budget, as its ``X-RateLimit-*`` headers last said (OpenAlex: credits a day)
    credits_limit: int | None = None
    #: credits left: the last ``X-RateLimit-Remaining``
    credits_left: int | None = None
    #: when the budget renews (``X-RateLimit-Reset``)
    credits_reset_at: float | None = None
    #: the budget is spent until then (a hold until the reset, not a transient 429); None: not spent
    budget_spent_until: float | None = None
    #: the gap between starts the host's pool announces (``x-rate-limit-interval`` / ``-limit``); 0: none
    announced_interval_s: float = 0.0
    #: the requests in flight the host's pool allows (``x-concurrency-limit``); None: not announced
    concurrency_limit: int | None = None

    def hold_remaining(self, now: float) -> float:
        """Seconds the hold lasts from *now* (0: not held)."""
        return 0.0 if self.hold_until is None else max(0.0, self.hold_until - now)

    def suppressed(self, now: float) -> bool:
        return self.suppressed_until is not None and self.suppressed_until > now

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> HostFacts:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        try:
            known["breaker_state"] = BreakerState(known.get("breaker_state", "closed"))
        except ValueError:
            known["breaker_state"] = BreakerState.CLOSED
        return cls(**known)


_BLANK = HostFacts()  # every field's value when nothing is known


@dataclass(frozen=True)
class Slot:
    """The answer of :meth:`HostStateStore.reserve`. Granted: start at ``start_at`` (wall epoch), not before.
    Not granted: another client holds the host; ask again at ``start_at`` (its lease end) at the latest.
    ``token`` identifies a granted reservation for :meth:`HostStateStore.finish` (``""`` when not granted)."""

    host: str
    granted: bool
    start_at: float
    token: str
    lease_until: float


_WINDOW_TEXT = re.compile(r"(?P<count>\d+)\s*/\s*(?P<number>\d+(?:\.\d+)?)?\s*(?P<unit>[a-z]+)")
_UNITS = {"s": 1.0, "sec": 1.0, "min": 60.0, "h": 3600.0, "hour": 3600.0, "day": 86400.0, "d": 86400.0}
_UNIT_NAMES = {1.0: "s", 60.0: "min", 3600.0: "h", 86400.0: "day"}  # how str() writes a span of one unit


@dataclass(frozen=True)
class Window:
    """At most ``count`` request starts to one host (or pool) in any span of ``seconds`` (a sliding window):
    Europe PMC's ``500/min`` beside its ``10/s``, a daily budget as ``100000/day``. Every start is logged in
    the host-state store, so every client of the store counts against the same window."""

    count: int
    seconds: float

    def __post_init__(self) -> None:
        if not isinstance(self.count, int) or isinstance(self.count, bool) or self.count < 1:
            raise ConfigurationError(f"a window's count must be a whole number >= 1, not {self.count!r}")
        if not isinstance(self.seconds, (int, float)) or math.isnan(self.seconds) or not 0 < self.seconds < math.inf:
            raise ConfigurationError(f"a window's span must be a number of seconds > 0, not {self.seconds!r}")
        object.__setattr__(self, "seconds", float(self.seconds))

    @classmethod
    def parse(cls, value: "Window | str | Sequence[float]") -> "Window":
        """A window from ``"500/min"``, ``"10/s"``, ``"100/10s"``, ``"100000/day"`` or ``(count, seconds)``."""
        if isinstance(value, Window):
            return value
        if isinstance(value, str):
            match = _WINDOW_TEXT.fullmatch(value.strip().lower())
            if match is None or match["unit"] not in _UNITS:
                raise ConfigurationError(f"a window is written '500/min', '10/s', '100/10s' or '100000/day', not {value!r}")
            return cls(int(match["count"]), float(match["number"] or 1) * _UNITS[match["unit"]])
        try:
            count, seconds = value
        except (TypeError, ValueError):
            raise ConfigurationError(f"a window is '500/min' or (count, seconds), not {value!r}") from None
        return cls(int(count), float(seconds))

    def __str__(self) -> str:
        return f"{self.count}/{_UNIT_NAMES.get(self.seconds) or f'{self.seconds:g}s'}"


def window_floor(recent: Sequence[float], windows: Sequence[Window], now: float) -> float:
    """The earliest start *windows* allow, given the host's *recent* starts newest first (0.0: none binds).
    A logged start ahead of now (a wall clock that moved back) delays by one span at most."""
    return max((min(recent[window.count - 1], now) + window.seconds for window in windows if len(recent) >= window.count),
               default=0.0)


def window_depth(windows: Sequence[Window]) -> int:
    """How many of a host's latest starts its windows need (0: no window)."""
    return max((window.count for window in windows), default=0)


def window_span(windows: Sequence[Window]) -> float:
    """The longest window's span: older starts count in none."""
    return max((window.seconds for window in windows), default=0.0)


def new_token() -> str:
    return uuid.uuid4().hex


def merge_facts(current: HostFacts, proposed: HostFacts, now: float) -> HostFacts:
    """What the store keeps when *proposed* is written over *current* (docs/state.md, "Facts merge rules")."""
    if current.host != proposed.host:
        raise ValueError(f"facts of {proposed.host!r} written over {current.host!r}")
    kept: list[str] = []  # the fields of the later hold, suppression and robots.txt fetch: current's
    if (current.hold_until or -math.inf) > (proposed.hold_until or -math.inf):
        kept += HOLD_FIELDS
    if (current.suppressed_until or -math.inf) > (proposed.suppressed_until or -math.inf):
        kept += SUPPRESSION_FIELDS
    if current.robots_fetched_at is not None and (
        proposed.robots_fetched_at is None or current.robots_fetched_at > proposed.robots_fetched_at
    ):
        kept += (*_ROBOTS_FIELDS, "robots_unreachable_policy")
    return replace(proposed, updated_at=now, **{name: getattr(current, name) for name in kept})


def clamp_facts(facts: HostFacts, now: float) -> HostFacts:
    """*facts* as they can honestly be read at *now* (docs/state.md, "A wall clock that moves")."""
    skew = facts.updated_at - now
    if skew <= CLOCK_SKEW_S and facts.hold_until is None and facts.breaker_open_until is None:
        return facts  # nothing ahead to bring back (every read of a quiet host)
    changes: dict = {}
    if skew > CLOCK_SKEW_S:
        for name in _UNTIL_FIELDS:
            value = getattr(facts, name)
            if value is not None and math.isfinite(value):
                changes[name] = value - skew
        changes["updated_at"] = now
    bound = now + defaults.MAX_HOLD_S
    for name in ("hold_until", "breaker_open_until"):
        value = changes.get(name, getattr(facts, name))
        if value is not None and math.isfinite(value) and value > bound:
            changes[name] = bound
    if not changes:
        return facts
    logger.debug("%s: stored %s further ahead than %.0f s (a wall clock that moved?); clamped", facts.host,
                 ", ".join(sorted(changes)), defaults.MAX_HOLD_S)
    return replace(facts, **changes)


def slot_horizon(interval_s: float, lease_s: float) -> float:
    """How far ahead of now a host's next start slot can honestly be."""
    return max(interval_s, 0.0) * MAX_QUEUED_STARTS + max(lease_s, 0.0) + defaults.MAX_CRAWL_DELAY_S


def clamp_slot(state: tuple[float, str, float], host: str, interval_s: float, now: float,
               lease_s: float) -> tuple[float, str, float]:
    """*state* ``(next_free, holder, lease_until)`` with times too far ahead brought back (:func:`slot_horizon`)."""
    next_free, holder, lease_until = state
    clamped = []
    if next_free > now + slot_horizon(interval_s, lease_s):
        next_free = now + max(interval_s, 0.0)
        clamped.append("next start")
    lease_bound = max(lease_s, interval_s, 0.0)
    if holder and lease_until > now + max(lease_bound, defaults.MAX_CRAWL_DELAY_S):
        lease_until = now + lease_bound
        clamped.append("lease")
    if clamped:
        logger.debug("%s: stored %s too far ahead (a wall clock that moved?); clamped", host, " and ".join(clamped))
    return next_free, holder, lease_until


def expire_facts(facts: HostFacts, now: float) -> HostFacts:
    """*facts* without what has run out by *now*: a past hold, suppression or robots.txt (after :func:`clamp_facts`)."""
    facts = clamp_facts(facts, now)
    expired: list[str] = []
    for until, names in ((facts.hold_until, HOLD_FIELDS), (facts.suppressed_until, SUPPRESSION_FIELDS),
                         (facts.robots_expires_at, _ROBOTS_FIELDS)):
        if until is not None and until <= now:
            expired += names
    return replace(facts, **{name: getattr(_BLANK, name) for name in expired}) if expired else facts


def reserve_slot(
    state: tuple[float, str, float], host: str, interval_s: float, now: float, lease_s: float, token: str,
    not_before: float = 0.0,
) -> tuple[Slot, tuple[float, str, float]]:
    """The reservation rule on ``(next_free, holder, lease_until)``: the answer and the new state (Lua in redis.py).
    *not_before*: the earliest start the host's windows allow (:func:`window_floor`)."""
    state = clamp_slot(state, host, interval_s, now, lease_s)
    next_free, holder, lease_until = state
    if holder and lease_until > now:
        return Slot(host, False, lease_until, "", lease_until), state  # never the holder's token
    start = max(now, next_free, not_before)
    holds = lease_s > 0  # end-to-end: the holder keeps the host until it finishes or its lease ends
    new_state = (start + interval_s, token if holds else "", start + lease_s if holds else 0.0)
    return Slot(host, True, start, token, new_state[2]), new_state


def finish_slot(state: tuple[float, str, float], token: str, end: float, gap_s: float) -> tuple[float, str, float]:
    """The finish rule: the holder *token* lets go; the next start is at least ``end + gap_s``. A late
    finish still pushes ``next_free`` (it can only slow the host) but never releases a new holder."""
    if not token:  # a slot that was not granted holds nothing
        return state
    next_free, holder, lease_until = state
    next_free = max(next_free, end + gap_s)
    if holder == token:
        return (next_free, "", 0.0)
    return (next_free, holder, lease_until)


@runtime_checkable
class HostStateStore(Protocol):
    """Per-host state shared by every client of the same store; thread-safe; *now* is wall-clock, passed in."""

    #: Where the state lives, for people (``"memory"``, ``"sqlite:/path"``, ``"redis://host:6379/0"``); never a password.
    name: str

    def reserve(self, host: str, interval_s: float, now: float, lease_s: float = 0.0,
                windows: Sequence[Window] = ()) -> Slot:
        """Atomically take *host*'s next start slot (see :class:`Slot` and :func:`reserve_slot`), no sooner than
        each of *windows* allows; a granted start is logged for the windows."""

    def starts(self, host: str, limit: int) -> list[float]:
        """*host*'s latest logged starts (at most *limit*), newest first: what its windows count."""

    def finish(self, slot: Slot, end: float, gap_s: float = 0.0) -> None:
        """The request of *slot* ended at *end*: release the host; its next start is at least ``end + gap_s``."""

    def get(self, host: str, now: float) -> HostFacts:
        """The facts about *host* as of *now* (expired parts dropped; a blank record for an unknown host)."""

    def update(self, host: str, change: Callable[[HostFacts], HostFacts], now: float) -> HostFacts:
        """Atomically apply *change* to *host*'s current facts and store the merge (:func:`merge_facts`); return it."""

    def put(self, facts: HostFacts, now: float) -> HostFacts:
        """Merge *facts* into what is stored (same rules); return the stored record."""

    def hosts(self) -> list[str]:
        """Every host the store has facts or a slot for, sorted."""

    def clear(self, host: str | None = None) -> None:
        """Forget *host* (or every host): holds, suppressions, learned state, slots."""

    def close(self) -> None:
        """Let go of connections; further calls fail. Closing twice is harmless."""


class StoreBase:
    """Shared conveniences: ``put`` via ``update``, context manager, repr."""

    name: str = "?"

    def update(self, host: str, change: Callable[[HostFacts], HostFacts], now: float) -> HostFacts:  # pragma: no cover
        raise NotImplementedError

    def put(self, facts: HostFacts, now: float) -> HostFacts:
        return self.update(facts.host, lambda _current: facts, now)

    def close(self) -> None:
        pass

    def __enter__(self) -> "StoreBase":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def apply_update(current: HostFacts, change: Callable[[HostFacts], HostFacts], now: float) -> HostFacts:
    """The merged record an :meth:`HostStateStore.update` stores: *change* sees unexpired facts."""
    current = expire_facts(current, now)
    proposed = change(current)
    if proposed is current:
        return current  # nothing changed: nothing to merge (and, for the stores, nothing to write)
    if not isinstance(proposed, HostFacts):
        raise TypeError(f"an update must return HostFacts, not {type(proposed).__name__}")
    return merge_facts(current, proposed, now)


def parse_store_spec(spec: object, what: str, noun: str, choices: str, *, memory: bool) -> tuple[str, str | None]:
    """What a store *spec* (text, a path or None) names, as the host-state store (*what* ``"state"``) and the ledger
    read it: ``("memory", None)`` (only where *memory* is one), ``("sqlite", None)`` (the default file),
    ``("sqlite", path)`` or ``("redis", url)``. A ``sqlite:`` URL without three slashes, another scheme, or
    another type is a :class:`~paperfetch.errors.ConfigurationError` naming the *noun* and the *choices*."""
    if isinstance(spec, os.PathLike):
        return "sqlite", os.fspath(spec)
    if spec is not None and not isinstance(spec, str):
        raise ConfigurationError(f"a {noun} is one of {choices}; not {spec!r}")
    text = clean_setting(what, spec) or ""  # stripped; a control character refused, the password masked
    lowered = text.lower()
    if memory and lowered == "memory":
        return "memory", None
    if lowered in ("", "sqlite", "sqlite:", "sqlite://"):
        return "sqlite", None
    if lowered.startswith(("redis://", "rediss://", "unix://")):
        return "redis", text
    if lowered.startswith("sqlite:///"):
        return "sqlite", text[len("sqlite://"):]
    if lowered.startswith("sqlite:"):
        raise ConfigurationError(f"a SQLite {what} URL has three slashes and an absolute path: 'sqlite:///path', not {spec!r}")
    if "://" in text or lowered == "memory":
        kind = text.split("://")[0] if "://" in text else text
        raise ConfigurationError(f"unknown {noun} {kind!r}; use {choices}")
    return "sqlite", text
