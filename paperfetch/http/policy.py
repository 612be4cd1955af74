"""The politeness rules as pure functions of (host facts, config, now): nothing here sleeps, reads a clock,
sends or locks (docs/politeness.md, "Order of operations", "The circuit breaker", "The learned interval").

``now`` is wall-clock epoch seconds (the facts' time), ``mono`` the monotonic reading :class:`Pace` is kept on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from paperfetch import defaults
from paperfetch.clock import utc
from paperfetch.http.delays import DelayRange, effective_range
from paperfetch.http.exceptions import since_words
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
from paperfetch.http.hosts import HostLimiter, HostSnapshot, robots_of
from paperfetch.http.pools import pool_name
from paperfetch.state.base import BreakerState, HostFacts, Window, window_floor

if TYPE_CHECKING:  # pragma: no cover
    from paperfetch.http.config import TransportConfig

__all__ = [
    "Decision", "Notice", "Pace", "UNREACHABLE", "Verdict", "allowance",
    "begin_probe", "binding_window", "breaker_ends_batch", "breaker_open", "budget_spent", "crawl_delay", "decide", "delay_range",
    "earliest_start", "floor", "gap", "in_flight_cap", "learned_interval", "next_start",
    "observe_error", "observe_response", "pacing_wait", "past_budget", "retry_wait", "snapshot",
    "unreachable",
]


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


def allowance(config: TransportConfig, remaining: float = math.inf) -> float:
    """How long one call may wait for a host: ``max_retry_after_s``, within what is left of its ``max_elapsed``."""
    return min(config.max_retry_after_s, remaining)


def budget_spent(facts: HostFacts, now: float) -> float:
    """Seconds until the host's spent budget renews (0: not spent)."""
    if facts.budget_spent_until is None:
        return 0.0
    return max(0.0, facts.budget_spent_until - now)


def in_flight_cap(facts: HostFacts, config: TransportConfig, host: str) -> int:
    """How many requests may be in flight to *host* at once: ``max_in_flight_per_host``, or for a declared pool
    what the host announced, within the pool's cap (1 until it has announced anything)."""
    pool = config.rule(host).in_flight
    announced = facts.concurrency_limit
    if pool is not None:
        return max(1, min(pool, announced)) if announced else 1
    cap = config.max_in_flight_per_host
    return max(1, min(cap, announced)) if announced else cap


def learned_interval(facts: HostFacts, config: TransportConfig) -> float:
    return facts.learned_interval_s if config.learn_interval else 0.0


def breaker_open(facts: HostFacts, config: TransportConfig, now: float) -> float:
    """Seconds the breaker stays open (0: closed, half-open, or its period is over)."""
    if not config.breaker_failures or facts.breaker_state is not BreakerState.OPEN or facts.breaker_open_until is None:
        return 0.0
    return max(0.0, facts.breaker_open_until - now)


def past_budget(facts: HostFacts, max_host_wait_s: float, since: float | None = None) -> bool:
    """Whether the open breaker's next probe falls more than ``max_host_wait_s`` after the host began
    failing (or after *since*, when later): nothing waits for such a host any more."""
    if facts.breaker_open_until is None:
        return False
    start = facts.failing_since if facts.failing_since is not None else facts.breaker_open_until
    if since is not None:
        start = max(start, since)
    return facts.breaker_open_until - start > max_host_wait_s


def breaker_ends_batch(facts: HostFacts, config: TransportConfig, *, now: float, since: float | None,
                       max_host_wait_s: float) -> bool:
    """Whether the open breaker ends a batch's items for the host at once: unreachable, a body that trickled
    under the minimum rate, or :func:`past_budget`."""
    if breaker_open(facts, config, now) <= 0:
        return False
    return (unreachable(facts) or facts.breaker_reason.startswith(_TRICKLED)
            or past_budget(facts, max_host_wait_s, since=since))


def unreachable(facts: HostFacts) -> bool:
    """Whether the breaker opened because the host could not be reached (DNS, refused connection)."""
    return facts.breaker_reason.startswith(UNREACHABLE)


def crawl_delay(facts: HostFacts, config: TransportConfig) -> float | None:
    rules = robots_of(facts)
    if not config.respect_robots_txt or rules is None:
        return None
    return rules.crawl_delay(config.user_agent, config.max_crawl_delay_s)


def delay_range(facts: HostFacts, config: TransportConfig, host: str) -> DelayRange | None:
    """The delay range for the host's next request, every floor applied (``None``: no delay)."""
    declared = facts.announced_interval_s or (config.rule(host).interval_s or 0.0)  # the host's own word first
    interval = max(declared, learned_interval(facts, config))
    consulted = robots_of(facts) is not None
    if config.configured_range is None and not consulted and facts.backoff_s <= 0 and interval <= 0:
        return None  # no range, no robots.txt consulted, nothing to slow down for: what effective_range answers
    return effective_range(
        configured=config.configured_range,
        # robots only for hosts whose robots.txt this client consulted; its fallback range (a guess) only for
        # hosts without an interval of their own: a documented API's interval decides whatever another client read
        respect_robots_txt=config.respect_robots_txt and consulted,
        crawl_delay=crawl_delay(facts, config),
        fallback=None if declared > 0 else config.fallback_range,
        backoff=facts.backoff_s,
        min_interval=interval,
    )


def floor(facts: HostFacts, config: TransportConfig, host: str) -> float:
    """The published floor of the host's delay, without backoff or what was learned."""
    plain = replace(facts, backoff_s=0.0, learned_interval_s=0.0) if facts.backoff_s or facts.learned_interval_s else facts
    rng = delay_range(plain, config, host)
    return 0.0 if rng is None else rng.low


def gap(facts: HostFacts, config: TransportConfig, host: str, pace: Pace) -> float:
    """Seconds required between the host's previous request and the next one."""
    rng = delay_range(facts, config, host)
    if rng is None:
        return 0.0
    seconds = rng.sample(pace.gap_fraction)
    return seconds + config.pacing_margin_s if seconds > 0 else 0.0


def decide(
    facts: HostFacts,
    pace: Pace,
    config: TransportConfig,
    *,
    host: str,
    now: float,
    mono: float,
    allowance: float,
    exempt: bool = False,
) -> Decision:
    """What to do about the next request to *host*, in the order of docs/politeness.md, "Order of operations"."""
    if config.suppress_on_403 and not exempt:
        if facts.suppressed(now):
            return Decision(Verdict.SUPPRESSED, reason=facts.suppression_reason)
    probe = False
    if config.breaker_failures and facts.breaker_state is not BreakerState.CLOSED:
        if facts.breaker_state is BreakerState.HALF_OPEN and pace.probing:
            return Decision(Verdict.BUSY, reason="probe on its way")
        remaining = breaker_open(facts, config, now)
        if remaining > 0:
            if unreachable(facts) or remaining > allowance or past_budget(facts, config.max_host_wait_s):
                return Decision(Verdict.OPEN, remaining, facts.breaker_reason)
            return Decision(Verdict.WAIT, remaining, "breaker open")
        probe = True
    held = facts.hold_remaining(now)
    if held > 0:
        if held > allowance:
            return Decision(Verdict.HELD, held, facts.hold_reason)
        return Decision(Verdict.WAIT, held, "hold")
    if pace.in_flight >= in_flight_cap(facts, config, host):
        return Decision(Verdict.BUSY)
    wait = pacing_wait(facts, pace, config, host=host, mono=mono)
    if wait > 0:
        return Decision(Verdict.WAIT, wait, "pacing")
    return Decision(Verdict.PROCEED, probe=True) if probe else _PROCEED


def pacing_wait(facts: HostFacts, pace: Pace, config: TransportConfig, *, host: str, mono: float) -> float:
    """Seconds the pacing gap still asks for (may be negative: the gap has passed)."""
    if pace.last_start is None:
        return 0.0
    return pace.last_start + gap(facts, config, host, pace) - mono


def earliest_start(facts: HostFacts, pace: Pace, config: TransportConfig, *, host: str, now: float,
                   mono: float) -> float:
    """Seconds until hold, open breaker and pacing gap all let the next request start (negative: gap passed)."""
    return max(facts.hold_remaining(now), breaker_open(facts, config, now),
               pacing_wait(facts, pace, config, host=host, mono=mono))


def next_start(facts: HostFacts, pace: Pace, config: TransportConfig, *, host: str, now: float, mono: float,
               exempt: bool = False) -> float:
    """The one answer to "when may this host's next request start?": seconds from now (0: now; ``inf`` while
    suppressed); a host whose every slot is taken is a millisecond away."""
    if config.suppress_on_403 and not exempt and facts.suppressed(now):
        return math.inf
    busy = 0.0 if pace.in_flight < in_flight_cap(facts, config, host) else 0.001
    return max(0.0, earliest_start(facts, pace, config, host=host, now=now, mono=mono), busy)


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


def snapshot(facts: HostFacts, pace: Pace, config: TransportConfig, counters: HostLimiter, *, host: str,
             now: float, mono: float, polite: bool = True, recent: Sequence[float] = ()) -> HostSnapshot:
    """The host as it is now, with what *counters* counted in this process (``next_allowed_at``:
    :func:`earliest_start`, ``None`` when nothing delays it; ``ready_in_s``: :func:`next_start`, 0 when not
    *polite*; ``breaker``: ``half_open`` once an open breaker's period is over; the windows read against
    *recent*, the host's latest starts newest first)."""
    windows = config.rule(host).windows
    bound, used, window_wait = binding_window(windows, recent, now)
    rng = delay_range(facts, config, host)
    ready = next_start(facts, pace, config, host=host, now=now, mono=mono) if polite else 0.0
    next_at = None
    if pace.last_start is not None or facts.hold_remaining(now) > 0 or facts.breaker_open_until is not None:
        next_at = now + earliest_start(facts, pace, config, host=host, now=now, mono=mono)
    if window_wait > 0:  # a full window keeps the next start as a gap does
        ready = max(ready, window_wait) if polite else ready
        next_at = max(next_at or now, now + window_wait)
    return HostSnapshot(
        host=host, requests=counters.requests, in_flight=pace.in_flight, ok=counters.ok, errors=counters.errors,
        last_status=counters.last_status, delay_min_s=None if rng is None else rng.low,
        delay_max_s=None if rng is None else rng.high, backoff_s=facts.backoff_s,
        learned_interval_s=facts.learned_interval_s, crawl_delay_s=crawl_delay(facts, config),
        robots=rules.status.value if (rules := robots_of(facts)) else None, **_standing(facts, now),
        next_allowed_at=utc(next_at), ready_in_s=ready, max_in_flight=in_flight_cap(facts, config, host),
        pacing_margin_s=config.pacing_margin_s, pool=pool_name(host), windows=", ".join(str(w) for w in windows),
        binding_window=bound, window_starts=used, window_wait_s=window_wait,
    )


def _standing(facts: HostFacts, now: float) -> dict[str, Any]:
    """The snapshot's hold, suppression, breaker and budget columns (an open breaker whose period is over
    shows ``half_open``: the next request is the probe)."""
    held = facts.hold_remaining(now) > 0
    supp = facts.suppressed(now)
    breaker = facts.breaker_state
    if breaker is BreakerState.OPEN and (facts.breaker_open_until is None or facts.breaker_open_until <= now):
        breaker = BreakerState.HALF_OPEN
    return dict(
        held_until=utc(facts.hold_until) if held else None, hold_status=facts.hold_status if held else None,
        hold_reason=facts.hold_reason if held else "", suppressed=supp,
        suppressed_reason=facts.suppression_reason if supp else None,
        suppressed_until=utc(facts.suppressed_until) if supp and facts.suppressed_until != math.inf else None,
        breaker=breaker.value, failures=facts.breaker_failures, breaker_open_until=utc(facts.breaker_open_until),
        breaker_reason="" if breaker is BreakerState.CLOSED else facts.breaker_reason,
        credits_left=facts.credits_left, credits_reset_at=utc(facts.credits_reset_at),
        budget_spent=budget_spent(facts, now) > 0,
    )


def begin_probe(facts: HostFacts) -> HostFacts:
    """The probe is sent: the breaker is half-open until its answer."""
    return replace(facts, breaker_state=BreakerState.HALF_OPEN)


def observe_response(
    facts: HostFacts,
    config: TransportConfig,
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
    server, rate_limited_403, budget, new = _limits(facts, status, headers, now)
    if budget is not None and budget.spent and (status == 429 or 200 <= status < 300):
        new = _spend(new, config, budget, server, status, now, notices)
        if status == 429:  # the budget, not the pace: no failure, no backoff, nothing learned
            return new, tuple(notices)
    if status in (429, 503) or rate_limited_403:
        new = _hold(new, config, status, server, rate_limited_403, now, notices)
    new = _backoff_after(new, config, status, server, notices)
    if status == 403 and not rate_limited_403 and not robots and config.suppress_on_403 and not exempt:
        reason = f"HTTP 403 for {shown_url}"
        ttl = config.suppress_403_ttl_s
        new = replace(new, suppressed_until=math.inf if ttl is None else now + ttl, suppression_reason=reason,
                      suppressed_since=now)
        notices.append(Notice("suppress", reason, 403, ttl))
    if config.learn_interval:
        new = _learning(facts, new, config, status, server, gap_s, floor_s, notices)
    if status == 429 or 500 <= status < 600:
        wait = server.seconds if server is not None else 0.0
        new = _failure(replace(new, failure_status=status), config, now, wait, f"HTTP {status}", notices)
    else:
        new = _success(new, notices)
    return new, tuple(notices)


def _limits(facts: HostFacts, status: int, headers: Mapping[str, str],
            now: float) -> tuple[ServerWait | None, bool, RateLimitBudget | None, HostFacts]:
    """What the headers name: the server's wait, whether a 403 is a rate limit, the budget, and *facts* with
    what the host announces (its budget, its pool)."""
    if not mentions_limits(headers):  # no wait, budget or pool is named: each reader would answer None
        return None, False, None, facts
    budget = parse_rate_limit_budget(headers, now)
    return (server_requested_wait(headers, now), status == 403 and has_rate_limit_headers(headers, now), budget,
            _announced(facts, budget, parse_pool_limits(headers), status))


def _backoff_after(facts: HostFacts, config: TransportConfig, status: int, server: ServerWait | None,
                   notices: list[Notice]) -> HostFacts:
    """The backoff grows after a 503, a 504 or a 429 that names no wait, and decays after a 2xx."""
    if status in (503, 504) or (status == 429 and server is None):
        return _with_backoff(facts, config.backoff.increase(facts.backoff_s), notices)
    if 200 <= status < 300 and facts.backoff_s > 0:
        return _with_backoff(facts, config.backoff.decrease(facts.backoff_s), notices)
    return facts


def _hold(facts: HostFacts, config: TransportConfig, status: int, server: ServerWait | None, rate_limited_403: bool,
          now: float, notices: list[Notice]) -> HostFacts:
    """A 429, 503 or rate-limited 403 holds its host for the server's wait (a rate-limited 403 without one:
    ``default_retry_after_s``); a later hold already in force is kept."""
    seconds = server.seconds if server is not None else (config.default_retry_after_s if rate_limited_403 else 0.0)
    if seconds <= 0:
        return facts
    source = server.header if server is not None else "rate-limit headers"
    reason = f"HTTP {status} with {source}: {seconds:.0f}s"
    until = now + seconds
    if facts.hold_until is not None and facts.hold_until >= until:
        return facts
    notices.append(Notice("hold", reason, status, seconds))
    return replace(facts, hold_until=until, hold_status=status, hold_reason=reason)


def _learning(before: HostFacts, facts: HostFacts, config: TransportConfig, status: int, server: ServerWait | None,
              gap_s: float | None, floor_s: float, notices: list[Notice]) -> HostFacts:
    """The learned interval after a response: raised by a refusal of a request sent at our pace (not after a
    wait the host itself asked for: a hold, an open breaker), lowered by a run of successes; a wait is not a
    pace (docs/politeness.md, "The learned interval")."""
    paced = before.breaker_failures == 0
    long_wait = server is not None and _long_wait(server.seconds, before, gap_s, floor_s)
    refusal = status == 429 or (status == 503 and server is not None and not long_wait)
    if gap_s is not None and paced and refusal:
        wait_s = None if server is None or long_wait else server.seconds
        return _learn(facts, config, wait_s, gap_s, floor_s, status, notices)
    if 200 <= status < 400 and facts.learned_interval_s > 0:
        return _unlearn(facts, floor_s, notices)
    return facts


#: The start of a breaker reason when the host could not be reached at all.
UNREACHABLE = "unreachable"
#: The start of a breaker reason when a body arrived under the minimum rate (``TooSlow``).
_TRICKLED = "body under the minimum rate"


def observe_error(facts: HostFacts, config: TransportConfig, *, error: str, now: float,
                  unreachable: bool = False, trickled: bool = False) -> tuple[HostFacts, tuple[Notice, ...]]:
    """What a timeout or a connection error says about its host: a failure; the backoff grows unless
    *unreachable* (the name did not resolve or the connection was refused). A body that *trickled* under the
    minimum rate opens the breaker at once (its head was a success, which ended the failures in a row; each
    further request would cost a whole rate window), and a batch's items for the host end."""
    notices: list[Notice] = []
    new = facts
    if not unreachable:  # a host we never reached saw no request of ours: nothing to slow down for
        new = _with_backoff(facts, config.backoff.increase(facts.backoff_s), notices)
    if trickled and config.breaker_failures:
        new = replace(new, breaker_failures=max(new.breaker_failures, config.breaker_failures - 1))
    if unreachable:  # what happened and since when, remembered with the breaker (a later batch sees no error)
        error = f"{error} {since_words(facts.failing_since or now, now)}"
    what = f"{UNREACHABLE}: {error}" if unreachable else f"{_TRICKLED}: {error}" if trickled else error
    new = _failure(replace(new, failure_status=None), config, now, 0.0, what, notices)
    return new, tuple(notices)


def _failure(facts: HostFacts, config: TransportConfig, now: float, server_wait: float, what: str,
             notices: list[Notice]) -> HostFacts:
    failures = facts.breaker_failures + 1
    if facts.failing_since is None:
        facts = replace(facts, failing_since=now)
    if not config.breaker_failures:
        return replace(facts, breaker_failures=failures)
    if facts.breaker_state is BreakerState.HALF_OPEN or (
        facts.breaker_state is BreakerState.OPEN and breaker_open(facts, config, now) <= 0
    ):
        period = max(2 * facts.breaker_period_s, server_wait, config.backoff.base_s)
    elif facts.breaker_state is BreakerState.CLOSED and failures >= config.breaker_failures:
        period = max(server_wait, facts.backoff_s, config.backoff.base_s)
    else:
        return replace(facts, breaker_failures=failures)
    reason = f"{what} ({failures} failures in a row)"
    notices.append(Notice("breaker", f"breaker open for {period:g}s: {reason}", seconds=period))
    return replace(facts, breaker_failures=failures, breaker_state=BreakerState.OPEN, breaker_open_until=now + period,
                   breaker_period_s=period, breaker_reason=reason)


def _success(facts: HostFacts, notices: list[Notice]) -> HostFacts:
    if facts.breaker_failures == 0 and facts.breaker_state is BreakerState.CLOSED:
        return facts
    if facts.breaker_state is not BreakerState.CLOSED:
        notices.append(Notice("breaker", "breaker closed: the probe succeeded"))
    return replace(facts, breaker_failures=0, failing_since=None, breaker_state=BreakerState.CLOSED, breaker_open_until=None,
                   breaker_period_s=0.0, breaker_reason="")


def _long_wait(seconds: float, facts: HostFacts, gap_s: float | None, floor_s: float) -> bool:
    """Whether a server's wait is a hold rather than a pace (docs/politeness.md, "The learned interval")."""
    pace = max(gap_s or 0.0, facts.learned_interval_s, floor_s)
    return seconds > defaults.LEARN_MAX_S or seconds > defaults.LEARN_WAIT_FACTOR * pace


def _learn(facts: HostFacts, config: TransportConfig, server_wait: float | None, gap_s: float, floor_s: float,
           status: int, notices: list[Notice]) -> HostFacts:
    current = max(facts.learned_interval_s, floor_s)
    if server_wait is not None:
        value = max(current, gap_s + server_wait)
    else:
        value = 2 * max(current, gap_s, config.backoff.base_s / 2)
    value = min(value, defaults.LEARN_MAX_S)
    if value <= facts.learned_interval_s:
        return replace(facts, successes=0)
    notices.append(Notice("learned", f"learned interval {facts.learned_interval_s:g}s -> {value:g}s (HTTP {status})",
                          status, value))
    return replace(facts, learned_interval_s=value, successes=0)


def _unlearn(facts: HostFacts, floor_s: float, notices: list[Notice]) -> HostFacts:
    successes = facts.successes + 1
    if successes < defaults.LEARN_DECAY_SUCCESSES:
        return replace(facts, successes=successes)
    value = facts.learned_interval_s * (1.0 - defaults.LEARN_DECAY_FRACTION)
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
        if pool.min_gap_s is not None:
            changes.update(announced_interval_s=pool.min_gap_s)
        if pool.concurrency is not None:
            changes.update(concurrency_limit=pool.concurrency)
    if not changes:
        return facts
    new = replace(facts, **changes)
    return facts if new == facts else new


def _spend(facts: HostFacts, config: TransportConfig, budget: RateLimitBudget, server: ServerWait | None,
           status: int, now: float, notices: list[Notice]) -> HostFacts:
    """The host's budget is spent: held until it renews (its reset, or the server's wait when later)."""
    until = budget.reset_at
    if server is not None and (until is None or now + server.seconds > until):
        until = now + server.seconds
    if until is None or until <= now:
        until = now + config.default_retry_after_s  # spent, yet no word on when: as a 429 without one
    need = budget.credits_required if budget.credits_required is not None else 1
    reason = (f"HTTP {status}: rate-limit budget spent ({budget.remaining} credit(s) left, {need} needed); "
              f"it renews at {utc(until):%Y-%m-%d %H:%M:%S} UTC")
    first = budget_spent(facts, now) <= 0
    new = replace(facts, budget_spent_until=max(until, facts.budget_spent_until or 0.0))
    if new.hold_until is None or new.hold_until < until:
        new = replace(new, hold_until=until, hold_status=429, hold_reason=reason)  # a held answer is a 429
    if first and until - now > config.max_retry_after_s:  # a day's budget: the one warning of the period
        notices.append(Notice("budget", reason, status, until - now))
    elif first and status == 429:  # a window of seconds: a hold like any other
        notices.append(Notice("hold", reason, status, until - now))
    return new


def retry_wait(
    facts: HostFacts, config: TransportConfig, *, status: int, headers: Mapping[str, str], now: float
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
        return min(max(config.default_retry_after_s, facts.backoff_s), config.max_retry_after_s), facts, ()
    notices: list[Notice] = []
    if status not in (503, 504):
        # a RETRY verdict on another status (a 500, a service's "busy" page) slows the host too
        facts = _with_backoff(facts, config.backoff.increase(facts.backoff_s), notices)
    return min(facts.backoff_s, config.max_retry_after_s), facts, tuple(notices)


def _with_backoff(facts: HostFacts, value: float, notices: list[Notice]) -> HostFacts:
    if value == facts.backoff_s:
        return facts
    notices.append(Notice("backoff", f"{facts.backoff_s:g}s -> {value:g}s", seconds=value))
    return replace(facts, backoff_s=value)
