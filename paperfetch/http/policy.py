"""The politeness rules as pure functions of (host facts, settings, now): nothing here sleeps, reads a clock,
sends or locks (docs/politeness.md, "Order of operations", "The circuit breaker", "The learned interval").

``now`` is wall-clock epoch seconds (the facts' time), ``mono`` the monotonic reading :class:`Pace` is kept on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Mapping, Sequence

from paperfetch import defaults
from paperfetch.clock import utc
from paperfetch.http.delays import BackoffPolicy, DelayRange, effective_range
from paperfetch.http.headers import (
    PoolLimits,
    RateLimitBudget,
    ServerWait,
    has_rate_limit_headers,
    mentions_limits,
    parse_pool_limits,
    parse_rate_limit_budget,
    server_requested_wait,
)
from paperfetch.http.hosts import BreakerState, HostFacts, HostSnapshot, Suppression, hold_remaining
from paperfetch.http.identity import user_agent
from paperfetch.http.pools import for_key, pool_name
from paperfetch.state.base import Window, window_floor

__all__ = [
    "Decision", "HostCounters", "Notice", "Pace", "PolicySettings", "UNREACHABLE", "Verdict", "allowance",
    "begin_probe", "binding_window", "breaker_ends_batch", "breaker_open", "budget_spent", "crawl_delay", "decide", "delay_range",
    "earliest_start", "floor", "gap", "hold_remaining", "in_flight_cap", "learned_interval", "next_start",
    "observe_error", "observe_response", "pacing_wait", "past_budget", "retry_wait", "snapshot",
    "suppression_in_force", "unreachable",
]


@dataclass(frozen=True)
class PolicySettings:
    """The client settings the rules read, built once by :class:`~.config.TransportConfig` (its fields say what each is)."""

    user_agent: str = user_agent()
    respect_robots_txt: bool = False
    configured_range: DelayRange | None = None
    fallback_range: DelayRange = DelayRange(defaults.RATE_LIMIT_MIN_S, defaults.RATE_LIMIT_MAX_S)
    max_crawl_delay_s: float = defaults.MAX_CRAWL_DELAY_S
    host_intervals: Mapping[str, float] = field(default_factory=dict)
    backoff: BackoffPolicy = BackoffPolicy()
    honor_retry_after: bool = True
    default_retry_after_s: float = defaults.DEFAULT_RETRY_AFTER_S
    max_retry_after_s: float = defaults.MAX_RETRY_AFTER_S
    suppress_on_403: bool = True
    suppress_403_ttl_s: float | None = defaults.SUPPRESS_403_TTL_S
    pacing_margin_s: float = defaults.PACING_MARGIN_S
    max_in_flight_per_host: int = defaults.MAX_IN_FLIGHT_PER_HOST
    host_concurrency: Mapping[str, int] = field(default_factory=dict)
    #: per host (or pool), its windows (:class:`~paperfetch.state.base.Window`), kept in the host-state store
    host_windows: Mapping[str, tuple[Window, ...]] = field(default_factory=dict)
    breaker_failures: int = defaults.BREAKER_FAILURES
    max_host_wait_s: float = defaults.MAX_HOST_WAIT_S
    learn: bool = True
    learn_max_s: float = defaults.LEARN_MAX_S
    learn_decay_successes: int = defaults.LEARN_DECAY_SUCCESSES
    learn_decay_fraction: float = defaults.LEARN_DECAY_FRACTION
    #: a server wait longer than this many times the host's interval is a hold, not a pace
    learn_wait_factor: float = defaults.LEARN_WAIT_FACTOR


class Verdict(str, Enum):
    PROCEED = "proceed"        #: send now
    WAIT = "wait"              #: wait ``seconds`` (pacing, or a hold within the allowance), then ask again
    BUSY = "busy"              #: every slot of the host is taken: wait for one to free
    HELD = "held"              #: held longer than the call may wait: answer without a request
    OPEN = "open"              #: the circuit breaker is open: answer without a request
    SUPPRESSED = "suppressed"  #: answered 403 before: answer without a request


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    seconds: float = 0.0
    reason: str = ""
    probe: bool = False  #: PROCEED as the half-open breaker's one probe


_PROCEED = Decision(Verdict.PROCEED)


@dataclass(frozen=True)
class Pace:
    """The process-local pacing state of a host (monotonic times)."""

    last_start: float | None = None
    gap_fraction: float = 0.0
    in_flight: int = 0
    probing: bool = False  #: this process's half-open probe is on its way


@dataclass(frozen=True)
class Notice:
    """Something an observation changed, for the client to publish and log."""

    kind: str            #: "hold", "budget", "backoff", "suppress", "breaker", "learned"
    detail: str
    status: int | None = None
    seconds: float | None = None


def allowance(settings: PolicySettings, remaining: float = math.inf) -> float:
    """How long one call may wait for a host: ``max_retry_after_s``, within what is left of its ``max_elapsed``."""
    return min(settings.max_retry_after_s, remaining)


def suppression_in_force(facts: HostFacts, now: float) -> Suppression | None:
    s = facts.suppression
    if s is None or (s.until is not None and now >= s.until):
        return None
    return s


def budget_spent(facts: HostFacts, now: float) -> float:
    """Seconds until the host's spent budget renews (0: not spent)."""
    if facts.budget_spent_until is None:
        return 0.0
    return max(0.0, facts.budget_spent_until - now)


def in_flight_cap(facts: HostFacts, settings: PolicySettings, host: str) -> int:
    """How many requests may be in flight to *host* at once: ``max_in_flight_per_host``, or for a declared pool
    what the host announced, within the pool's cap (1 until it has announced anything)."""
    pool = for_key(settings.host_concurrency, host, None)
    announced = facts.concurrency_limit
    if pool is not None:
        return max(1, min(pool, announced)) if announced else 1
    cap = settings.max_in_flight_per_host
    return max(1, min(cap, announced)) if announced else cap


def learned_interval(facts: HostFacts, settings: PolicySettings) -> float:
    return facts.learned_interval_s if settings.learn else 0.0


def breaker_open(facts: HostFacts, settings: PolicySettings, now: float) -> float:
    """Seconds the breaker stays open (0: closed, half-open, or its period is over)."""
    if not settings.breaker_failures or facts.breaker is not BreakerState.OPEN or facts.breaker_open_until is None:
        return 0.0
    return max(0.0, facts.breaker_open_until - now)


def past_budget(facts: HostFacts, settings: PolicySettings, since: float | None = None) -> bool:
    """Whether the open breaker's next probe falls more than ``max_host_wait_s`` after the host began
    failing (or after *since*, when later): nothing waits for such a host any more."""
    if facts.breaker_open_until is None:
        return False
    start = facts.failing_since if facts.failing_since is not None else facts.breaker_open_until
    if since is not None:
        start = max(start, since)
    return facts.breaker_open_until - start > settings.max_host_wait_s


def breaker_ends_batch(facts: HostFacts, settings: PolicySettings, *, now: float, since: float | None,
                       max_host_wait_s: float) -> bool:
    """Whether the open breaker ends a batch's items for the host at once: unreachable, a body that trickled
    under the minimum rate, or :func:`past_budget`."""
    if breaker_open(facts, settings, now) <= 0:
        return False
    return (unreachable(facts) or facts.breaker_reason.startswith(_TRICKLED)
            or past_budget(facts, replace(settings, max_host_wait_s=max_host_wait_s), since=since))


def unreachable(facts: HostFacts) -> bool:
    """Whether the breaker opened because the host could not be reached (DNS, refused connection)."""
    return facts.breaker_reason.startswith(UNREACHABLE)


def crawl_delay(facts: HostFacts, settings: PolicySettings) -> float | None:
    if not settings.respect_robots_txt or facts.robots is None:
        return None
    return facts.robots.crawl_delay(settings.user_agent, settings.max_crawl_delay_s)


def delay_range(facts: HostFacts, settings: PolicySettings, host: str) -> DelayRange | None:
    """The delay range for the host's next request, every floor applied (``None``: no delay)."""
    declared = facts.announced_interval_s or for_key(settings.host_intervals, host, 0.0)  # the host's own word first
    interval = max(declared, learned_interval(facts, settings))
    if settings.configured_range is None and facts.robots is None and facts.backoff_s <= 0 and interval <= 0:
        return None  # no range, no robots.txt consulted, nothing to slow down for: what effective_range answers
    return effective_range(
        configured=settings.configured_range,
        # robots (and its fallback range) only for hosts whose robots.txt this client consulted:
        # a documented API that another client of the process paces is not crawled by this one
        respect_robots_txt=settings.respect_robots_txt and facts.robots is not None,
        crawl_delay=crawl_delay(facts, settings),
        fallback=settings.fallback_range,
        backoff=facts.backoff_s,
        min_interval=interval,
    )


def floor(facts: HostFacts, settings: PolicySettings, host: str) -> float:
    """The published floor of the host's delay, without backoff or what was learned."""
    plain = replace(facts, backoff_s=0.0, learned_interval_s=0.0) if facts.backoff_s or facts.learned_interval_s else facts
    rng = delay_range(plain, settings, host)
    return 0.0 if rng is None else rng.low


def gap(facts: HostFacts, settings: PolicySettings, host: str, pace: Pace) -> float:
    """Seconds required between the host's previous request and the next one."""
    rng = delay_range(facts, settings, host)
    if rng is None:
        return 0.0
    seconds = rng.sample(pace.gap_fraction)
    return seconds + settings.pacing_margin_s if seconds > 0 else 0.0


def decide(
    facts: HostFacts,
    pace: Pace,
    settings: PolicySettings,
    *,
    host: str,
    now: float,
    mono: float,
    allowance: float,
    exempt: bool = False,
) -> Decision:
    """What to do about the next request to *host*, in the order of docs/politeness.md, "Order of operations"."""
    if settings.suppress_on_403 and not exempt:
        s = suppression_in_force(facts, now)
        if s is not None:
            return Decision(Verdict.SUPPRESSED, reason=s.reason)
    probe = False
    if settings.breaker_failures and facts.breaker is not BreakerState.CLOSED:
        if facts.breaker is BreakerState.HALF_OPEN and pace.probing:
            return Decision(Verdict.BUSY, reason="probe on its way")
        remaining = breaker_open(facts, settings, now)
        if remaining > 0:
            if unreachable(facts) or remaining > allowance or past_budget(facts, settings):
                return Decision(Verdict.OPEN, remaining, facts.breaker_reason)
            return Decision(Verdict.WAIT, remaining, "breaker open")
        probe = True
    held = hold_remaining(facts, now)
    if held > 0:
        if held > allowance:
            return Decision(Verdict.HELD, held, facts.hold_reason)
        return Decision(Verdict.WAIT, held, "hold")
    if pace.in_flight >= in_flight_cap(facts, settings, host):
        return Decision(Verdict.BUSY)
    wait = pacing_wait(facts, pace, settings, host=host, mono=mono)
    if wait > 0:
        return Decision(Verdict.WAIT, wait, "pacing")
    return Decision(Verdict.PROCEED, probe=True) if probe else _PROCEED


def pacing_wait(facts: HostFacts, pace: Pace, settings: PolicySettings, *, host: str, mono: float) -> float:
    """Seconds the pacing gap still asks for (may be negative: the gap has passed)."""
    if pace.last_start is None:
        return 0.0
    return pace.last_start + gap(facts, settings, host, pace) - mono


def earliest_start(facts: HostFacts, pace: Pace, settings: PolicySettings, *, host: str, now: float,
                   mono: float) -> float:
    """Seconds until hold, open breaker and pacing gap all let the next request start (negative: gap passed)."""
    return max(hold_remaining(facts, now), breaker_open(facts, settings, now),
               pacing_wait(facts, pace, settings, host=host, mono=mono))


def next_start(facts: HostFacts, pace: Pace, settings: PolicySettings, *, host: str, now: float, mono: float,
               exempt: bool = False) -> float:
    """The one answer to "when may this host's next request start?": seconds from now (0: now; ``inf`` while
    suppressed); a host whose every slot is taken is a millisecond away."""
    if settings.suppress_on_403 and not exempt and suppression_in_force(facts, now) is not None:
        return math.inf
    busy = 0.0 if pace.in_flight < in_flight_cap(facts, settings, host) else 0.001
    return max(0.0, earliest_start(facts, pace, settings, host=host, now=now, mono=mono), busy)


def binding_window(windows: Sequence[Window], recent: Sequence[float], now: float) -> tuple[str, int, float]:
    """The window that binds *host* now, given its *recent* starts (newest first): the one delaying the next
    start longest, else the fullest; with the starts it counts and its wait (``("", 0, 0.0)``: no window)."""
    best: tuple[float, float, str, int] | None = None
    for window in windows:
        used = sum(1 for at in recent[:window.count] if at > now - window.seconds)
        wait = max(0.0, window_floor(recent, (window,), now) - now)
        rank = (wait, used / window.count, str(window), used)
        if best is None or rank[:2] > best[:2]:
            best = rank
    if best is None:
        return "", 0, 0.0
    return best[2], best[3], best[0]


def snapshot(facts: HostFacts, pace: Pace, settings: PolicySettings, counters: HostCounters, *, host: str,
             now: float, mono: float, polite: bool = True, recent: Sequence[float] = ()) -> HostSnapshot:
    """The host as it is now (``next_allowed_at``: :func:`earliest_start`, ``None`` when nothing delays it;
    ``ready_in_s``: :func:`next_start`, 0 when not *polite*; ``breaker``: ``half_open`` once an open
    breaker's period is over; the windows read against *recent*, the host's latest starts newest first)."""
    windows = settings.host_windows.get(host, ())
    bound, used, window_wait = binding_window(windows, recent, now)
    rng = delay_range(facts, settings, host)
    supp = suppression_in_force(facts, now)
    held = hold_remaining(facts, now) > 0
    ready = next_start(facts, pace, settings, host=host, now=now, mono=mono) if polite else 0.0
    breaker = facts.breaker
    if breaker is BreakerState.OPEN and (facts.breaker_open_until is None or facts.breaker_open_until <= now):
        breaker = BreakerState.HALF_OPEN  # the open period is over: the next request is the probe
    next_at = None
    if pace.last_start is not None or held or facts.breaker_open_until is not None:
        next_at = now + earliest_start(facts, pace, settings, host=host, now=now, mono=mono)
    if window_wait > 0:  # a full window keeps the next start as a gap does
        ready = max(ready, window_wait) if polite else ready
        next_at = max(next_at or now, now + window_wait)
    return HostSnapshot(
        host=host,
        requests=counters.requests,
        in_flight=pace.in_flight,
        ok=counters.ok,
        errors=counters.errors,
        last_status=counters.last_status,
        delay_min_s=None if rng is None else rng.low,
        delay_max_s=None if rng is None else rng.high,
        backoff_s=facts.backoff_s,
        learned_interval_s=facts.learned_interval_s,
        crawl_delay_s=crawl_delay(facts, settings),
        robots=facts.robots.status.value if facts.robots else None,
        held_until=utc(facts.hold_until) if held else None,
        hold_status=facts.hold_status if held else None,
        hold_reason=facts.hold_reason if held else "",
        suppressed=supp is not None,
        suppressed_reason=supp.reason if supp else None,
        suppressed_until=utc(supp.until) if supp else None,
        breaker=breaker.value,
        failures=facts.failures,
        breaker_open_until=utc(facts.breaker_open_until),
        next_allowed_at=utc(next_at),
        ready_in_s=ready,
        credits_left=facts.credits_left,
        credits_reset_at=utc(facts.credits_reset_at),
        budget_spent=budget_spent(facts, now) > 0,
        max_in_flight=in_flight_cap(facts, settings, host),
        pacing_margin_s=settings.pacing_margin_s,
        pool=pool_name(host),
        windows=", ".join(str(w) for w in windows),
        binding_window=bound,
        window_starts=used,
        window_wait_s=window_wait,
    )


@dataclass(frozen=True)
class HostCounters:
    """What this process counted for a host (the snapshot's counters)."""

    requests: int = 0
    ok: int = 0
    errors: int = 0
    last_status: int | None = None


def begin_probe(facts: HostFacts) -> HostFacts:
    """The probe is sent: the breaker is half-open until its answer."""
    return replace(facts, breaker=BreakerState.HALF_OPEN)


def observe_response(
    facts: HostFacts,
    settings: PolicySettings,
    *,
    status: int,
    headers: Mapping[str, str],
    now: float,
    exempt: bool = False,
    robots: bool = False,
    shown_url: str = "",
    gap_s: float | None = None,
    floor_s: float = 0.0,
) -> tuple[HostFacts, tuple[Notice, ...]]:
    """What a response says about its host. *gap_s*: the gap kept after the host's previous request
    (``None``: unknown); *floor_s*: the published floor (below it nothing is learned)."""
    notices: list[Notice] = []
    if mentions_limits(headers):
        server = server_requested_wait(headers, now)
        rate_limited_403 = status == 403 and has_rate_limit_headers(headers, now)
        budget = parse_rate_limit_budget(headers, now)
        new = _announced(facts, budget, parse_pool_limits(headers), status)
    else:  # no wait, budget or pool is named: each reader would answer None
        server, rate_limited_403, budget, new = None, False, None, facts
    if budget is not None and budget.spent and (status == 429 or 200 <= status < 300):
        new = _spend(new, settings, budget, server, status, now, notices)
        if status == 429:  # the budget, not the pace: no failure, no backoff, nothing learned
            return new, tuple(notices)
    if status in (429, 503) or rate_limited_403:
        seconds = server.seconds if server is not None else (settings.default_retry_after_s if rate_limited_403 else 0.0)
        if seconds > 0:
            source = server.header if server is not None else "rate-limit headers"
            reason = f"HTTP {status} with {source}: {seconds:.0f}s"
            until = now + seconds
            if new.hold_until is None or new.hold_until < until:
                new = replace(new, hold_until=until, hold_status=status, hold_reason=reason)
                notices.append(Notice("hold", reason, status, seconds))
    if status in (503, 504) or (status == 429 and server is None):
        new = _with_backoff(new, settings.backoff.increase(new.backoff_s), notices)
    elif 200 <= status < 300 and new.backoff_s > 0:
        new = _with_backoff(new, settings.backoff.decrease(new.backoff_s), notices)
    if status == 403 and not rate_limited_403 and not robots and settings.suppress_on_403 and not exempt:
        reason = f"HTTP 403 for {shown_url}"
        ttl = settings.suppress_403_ttl_s
        new = replace(new, suppression=Suppression(reason, now, None if ttl is None else now + ttl))
        notices.append(Notice("suppress", reason, 403, ttl))
    failed = status == 429 or 500 <= status < 600
    # learned only from a refusal that follows an answer: a request sent at our pace, not after a wait
    # the host itself asked for (a hold, an open breaker)
    paced = facts.failures == 0
    # a wait is not a pace (docs/politeness.md, "The learned interval")
    long_wait = server is not None and _long_wait(server.seconds, facts, settings, gap_s, floor_s)
    wait_s = None if server is None or long_wait else server.seconds
    refusal = status == 429 or (status == 503 and server is not None and not long_wait)
    if settings.learn and gap_s is not None and paced and refusal:
        new = _learn(new, settings, wait_s, gap_s, floor_s, status, notices)
    elif settings.learn and 200 <= status < 400 and new.learned_interval_s > 0:
        new = _unlearn(new, settings, floor_s, notices)
    if failed:
        wait = server.seconds if server is not None else 0.0
        new = _failure(replace(new, failure_status=status), settings, now, wait, f"HTTP {status}", notices)
    else:
        new = _success(new, notices)
    return new, tuple(notices)


#: The start of a breaker reason when the host could not be reached at all.
UNREACHABLE = "unreachable"
#: The start of a breaker reason when a body arrived under the minimum rate (``TooSlow``).
_TRICKLED = "body under the minimum rate"


def observe_error(facts: HostFacts, settings: PolicySettings, *, error: str, now: float,
                  unreachable: bool = False, trickled: bool = False) -> tuple[HostFacts, tuple[Notice, ...]]:
    """What a timeout or a connection error says about its host: a failure; the backoff grows unless
    *unreachable* (the name did not resolve or the connection was refused). A body that *trickled* under the
    minimum rate opens the breaker at once (its head was a success, which ended the failures in a row; each
    further request would cost a whole rate window), and a batch's items for the host end."""
    notices: list[Notice] = []
    new = facts
    if not unreachable:  # a host we never reached saw no request of ours: nothing to slow down for
        new = _with_backoff(facts, settings.backoff.increase(facts.backoff_s), notices)
    if trickled and settings.breaker_failures:
        new = replace(new, failures=max(new.failures, settings.breaker_failures - 1))
    what = f"{UNREACHABLE}: {error}" if unreachable else f"{_TRICKLED}: {error}" if trickled else error
    new = _failure(replace(new, failure_status=None), settings, now, 0.0, what, notices)
    return new, tuple(notices)


def _failure(facts: HostFacts, settings: PolicySettings, now: float, server_wait: float, what: str,
             notices: list[Notice]) -> HostFacts:
    failures = facts.failures + 1
    if facts.failing_since is None:
        facts = replace(facts, failing_since=now)
    if not settings.breaker_failures:
        return replace(facts, failures=failures)
    if facts.breaker is BreakerState.HALF_OPEN or (
        facts.breaker is BreakerState.OPEN and breaker_open(facts, settings, now) <= 0
    ):
        period = max(2 * facts.breaker_period_s, server_wait, settings.backoff.base_s)
    elif facts.breaker is BreakerState.CLOSED and failures >= settings.breaker_failures:
        period = max(server_wait, facts.backoff_s, settings.backoff.base_s)
    else:
        return replace(facts, failures=failures)
    reason = f"{what} ({failures} failures in a row)"
    notices.append(Notice("breaker", f"breaker open for {period:g}s: {reason}", seconds=period))
    return replace(facts, failures=failures, breaker=BreakerState.OPEN, breaker_open_until=now + period,
                   breaker_period_s=period, breaker_reason=reason)


def _success(facts: HostFacts, notices: list[Notice]) -> HostFacts:
    if facts.failures == 0 and facts.breaker is BreakerState.CLOSED:
        return facts
    if facts.breaker is not BreakerState.CLOSED:
        notices.append(Notice("breaker", "breaker closed: the probe succeeded"))
    return replace(facts, failures=0, failing_since=None, breaker=BreakerState.CLOSED, breaker_open_until=None,
                   breaker_period_s=0.0, breaker_reason="")


def _long_wait(seconds: float, facts: HostFacts, settings: PolicySettings, gap_s: float | None, floor_s: float) -> bool:
    """Whether a server's wait is a hold rather than a pace (docs/politeness.md, "The learned interval")."""
    pace = max(gap_s or 0.0, facts.learned_interval_s, floor_s)
    return seconds > settings.learn_max_s or seconds > settings.learn_wait_factor * pace


def _learn(facts: HostFacts, settings: PolicySettings, server_wait: float | None, gap_s: float, floor_s: float,
           status: int, notices: list[Notice]) -> HostFacts:
    current = max(facts.learned_interval_s, floor_s)
    gap_seen = gap_s
    if server_wait is not None:
        value = max(current, gap_seen + server_wait)
    else:
        value = 2 * max(current, gap_seen, settings.backoff.base_s / 2)
    value = min(value, settings.learn_max_s)
    if value <= facts.learned_interval_s:
        return replace(facts, successes=0)
    notices.append(Notice("learned", f"learned interval {facts.learned_interval_s:g}s -> {value:g}s (HTTP {status})",
                          status, value))
    return replace(facts, learned_interval_s=value, successes=0)


def _unlearn(facts: HostFacts, settings: PolicySettings, floor_s: float, notices: list[Notice]) -> HostFacts:
    successes = facts.successes + 1
    if successes < settings.learn_decay_successes:
        return replace(facts, successes=successes)
    value = facts.learned_interval_s * (1.0 - settings.learn_decay_fraction)
    if value <= floor_s:
        value = 0.0
    notices.append(Notice("learned", f"learned interval {facts.learned_interval_s:g}s -> {value:g}s", seconds=value))
    return replace(facts, learned_interval_s=value, successes=0)


def _announced(facts: HostFacts, budget: RateLimitBudget | None, pool: PoolLimits | None, status: int) -> HostFacts:
    """*facts* with what the host's headers announce: its budget and its pool."""
    changes: dict = {}
    if budget is not None:
        changes.update(credits_limit=budget.limit if budget.limit is not None else facts.credits_limit,
                       credits_left=budget.remaining if budget.remaining is not None else facts.credits_left,
                       credits_reset_at=budget.reset_at if budget.reset_at is not None else facts.credits_reset_at)
        if not budget.spent and 200 <= status < 300:
            changes.update(budget_spent_until=None)  # it renewed (or was never spent)
    if pool is not None:
        gap_s = pool.min_gap_s
        if gap_s is not None:
            changes.update(announced_interval_s=gap_s)
        if pool.concurrency is not None:
            changes.update(concurrency_limit=pool.concurrency)
    if not changes:
        return facts
    new = replace(facts, **changes)
    return facts if new == facts else new


def _spend(facts: HostFacts, settings: PolicySettings, budget: RateLimitBudget, server: ServerWait | None,
           status: int, now: float, notices: list[Notice]) -> HostFacts:
    """The host's budget is spent: held until it renews (its reset, or the server's wait when later)."""
    until = budget.reset_at
    if server is not None and (until is None or now + server.seconds > until):
        until = now + server.seconds
    if until is None or until <= now:
        until = now + settings.default_retry_after_s  # spent, yet no word on when: as a 429 without one
    need = budget.credits_required if budget.credits_required is not None else 1
    reason = (f"HTTP {status}: rate-limit budget spent ({budget.remaining} credit(s) left, {need} needed); "
              f"it renews at {utc(until):%Y-%m-%d %H:%M:%S} UTC")
    first = budget_spent(facts, now) <= 0
    new = replace(facts, budget_spent_until=max(until, facts.budget_spent_until or 0.0))
    if new.hold_until is None or new.hold_until < until:
        new = replace(new, hold_until=until, hold_status=429, hold_reason=reason)  # a held answer is a 429
    if first and until - now > settings.max_retry_after_s:  # a day's budget: the one warning of the period
        notices.append(Notice("budget", reason, status, until - now))
    elif first and status == 429:  # a window of seconds: a hold like any other
        notices.append(Notice("hold", reason, status, until - now))
    return new


def retry_wait(
    facts: HostFacts, settings: PolicySettings, *, status: int, headers: Mapping[str, str], now: float
) -> tuple[float, HostFacts, tuple[Notice, ...]]:
    """How long to wait before retrying a response judged RETRY, and the host's new facts (a spent
    budget: until it renews, which ends a call that may not wait that long)."""
    spent = budget_spent(facts, now)
    if spent > 0:
        return spent, facts, ()
    server = server_requested_wait(headers, now)
    if server is not None:
        return server.seconds, facts, ()  # never shortened: a wait beyond the allowance ends the call
    if status == 429:
        return min(max(settings.default_retry_after_s, facts.backoff_s), settings.max_retry_after_s), facts, ()
    notices: list[Notice] = []
    if status not in (503, 504):
        # a RETRY verdict on another status (a 500, a service's "busy" page) slows the host too
        facts = _with_backoff(facts, settings.backoff.increase(facts.backoff_s), notices)
    return min(facts.backoff_s, settings.max_retry_after_s), facts, tuple(notices)


def _with_backoff(facts: HostFacts, value: float, notices: list[Notice]) -> HostFacts:
    if value == facts.backoff_s:
        return facts
    notices.append(Notice("backoff", f"{facts.backoff_s:g}s -> {value:g}s", seconds=value))
    return replace(facts, backoff_s=value)
