"""The politeness rules as pure functions of (host facts, settings, now).

Nothing here sleeps, reads a clock, sends a request or takes a lock: the
client reads a host's :class:`~paperfetch.http.hosts.HostFacts` (and its
process-local :class:`Pace`), asks :func:`decide` what to do, does it, and
hands what came back to :func:`observe_response` / :func:`observe_error`,
which return the new facts and :class:`Notice` s to publish. The order of
:func:`decide`:

1. **suppression** — a host that answered a plain 403 is answered with a synthetic 403;
2. **hold** — a host that sent Retry-After is not asked before the time it named:
   a hold no longer than the call's *allowance* is waited out (``WAIT``), a longer
   one ends the call (``HELD``);
3. **slot** — at most ``max_in_flight_per_host`` requests in flight (``BUSY``);
4. **pacing** — the gap since the host's previous request was answered is at least
   the effective delay (:func:`delay_range`), else ``WAIT`` the rest.

``now`` is wall-clock epoch seconds (the facts' time), ``mono`` the monotonic
reading the process-local pacing clock is kept on.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Mapping

from paperfetch.http.delays import BackoffPolicy, DelayRange, effective_range
from paperfetch.http.headers import has_rate_limit_headers, server_requested_wait
from paperfetch.http.hosts import HostFacts, Suppression

__all__ = [
    "Decision", "Notice", "Pace", "PolicySettings", "Verdict", "crawl_delay", "decide", "delay_range", "gap",
    "hold_remaining", "observe_error", "observe_response", "retry_wait", "suppression_in_force",
]


@dataclass(frozen=True)
class PolicySettings:
    """The client settings the rules read (a frozen copy made by the client)."""

    user_agent: str = "paperfetch"
    respect_robots_txt: bool = False
    configured_range: DelayRange | None = None
    fallback_range: DelayRange = DelayRange(1.0, 3.0)
    max_crawl_delay_s: float = 60.0
    host_intervals: Mapping[str, float] = field(default_factory=dict)
    backoff: BackoffPolicy = BackoffPolicy()
    honor_retry_after: bool = True
    default_retry_after_s: float = 60.0
    max_retry_after_s: float = 60.0
    suppress_on_403: bool = True
    suppress_403_ttl_s: float | None = 3600.0
    pacing_margin_s: float = 0.002
    max_in_flight_per_host: int = 1


class Verdict(str, Enum):
    PROCEED = "proceed"        #: send now
    WAIT = "wait"              #: wait ``seconds`` (pacing, or a hold within the allowance), then ask again
    BUSY = "busy"              #: every slot of the host is taken: wait for one to free
    HELD = "held"              #: held longer than the call may wait: answer without a request
    SUPPRESSED = "suppressed"  #: answered 403 before: answer without a request


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    seconds: float = 0.0
    reason: str = ""


@dataclass(frozen=True)
class Pace:
    """The process-local pacing state of a host (monotonic times)."""

    last_start: float | None = None
    gap_fraction: float = 0.0
    in_flight: int = 0
    min_interval_s: float = 0.0


@dataclass(frozen=True)
class Notice:
    """Something an observation changed, for the client to publish and log."""

    kind: str            #: "hold", "backoff", "suppress"
    detail: str
    status: int | None = None
    seconds: float | None = None


# ---------------------------------------------------------------------- reading the facts
def hold_remaining(facts: HostFacts, now: float) -> float:
    if facts.hold_until is None:
        return 0.0
    return max(0.0, facts.hold_until - now)


def suppression_in_force(facts: HostFacts, now: float) -> Suppression | None:
    s = facts.suppression
    if s is None or (s.until is not None and now >= s.until):
        return None
    return s


def crawl_delay(facts: HostFacts, settings: PolicySettings) -> float | None:
    if not settings.respect_robots_txt or facts.robots is None:
        return None
    return facts.robots.crawl_delay(settings.user_agent, settings.max_crawl_delay_s)


def delay_range(facts: HostFacts, settings: PolicySettings, host: str, pace: Pace = Pace()) -> DelayRange | None:
    """The delay range for the host's next request, every floor applied (``None``: no delay)."""
    interval = max(pace.min_interval_s, settings.host_intervals.get(host, 0.0))
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


def gap(facts: HostFacts, settings: PolicySettings, host: str, pace: Pace) -> float:
    """Seconds required between the host's previous request and the next one."""
    rng = delay_range(facts, settings, host, pace)
    if rng is None:
        return 0.0
    seconds = rng.sample(pace.gap_fraction)
    return seconds + settings.pacing_margin_s if seconds > 0 else 0.0


# ---------------------------------------------------------------------- deciding
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
    """What to do about the next request to *host* (see the module's order)."""
    if settings.suppress_on_403 and not exempt:
        s = suppression_in_force(facts, now)
        if s is not None:
            return Decision(Verdict.SUPPRESSED, reason=s.reason)
    held = hold_remaining(facts, now)
    if held > 0:
        if held > allowance:
            return Decision(Verdict.HELD, held, facts.hold_reason)
        return Decision(Verdict.WAIT, held, "hold")
    if pace.in_flight >= settings.max_in_flight_per_host:
        return Decision(Verdict.BUSY)
    if pace.last_start is not None:
        wait = pace.last_start + gap(facts, settings, host, pace) - mono
        if wait > 0:
            return Decision(Verdict.WAIT, wait, "pacing")
    return Decision(Verdict.PROCEED)


# ---------------------------------------------------------------------- observing
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
) -> tuple[HostFacts, tuple[Notice, ...]]:
    """What a response says about its host: hold, backoff, suppression."""
    notices: list[Notice] = []
    server = server_requested_wait(headers, now)
    rate_limited_403 = status == 403 and has_rate_limit_headers(headers, now)
    new = facts
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
    return new, tuple(notices)


def observe_error(facts: HostFacts, settings: PolicySettings, *, error: str, now: float) -> tuple[HostFacts, tuple[Notice, ...]]:
    """What a timeout or a connection error says about its host (nothing yet)."""
    return facts, ()


def retry_wait(
    facts: HostFacts, settings: PolicySettings, *, status: int, headers: Mapping[str, str], now: float
) -> tuple[float, HostFacts, tuple[Notice, ...]]:
    """How long to wait before retrying a response judged RETRY, and the host's new facts."""
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
