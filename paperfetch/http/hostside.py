"""The host side of a request: carry out what :mod:`.policy` decides for one host (docs/politeness.md, "Order of
operations"). The only reader and writer of a host's record; no decision of its own, no redirects, no retries.
It logs under ``paperfetch.http.client``: the transport speaks with one name.
"""

from __future__ import annotations

import functools
import logging
import math
import random
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable
from urllib.parse import urljoin, urlsplit

import requests

from paperfetch import defaults
from paperfetch.clock import Clock, utc
from paperfetch.errors import NetworkError, TooSlow
from paperfetch.http import policy, redirects
from paperfetch.http.context import answering_now, charge_wait
from paperfetch.http.events import Event, EventBus, EventKind
from paperfetch.http.exceptions import network_words
from paperfetch.http.exceptions import unreachable as unreachable_error
from paperfetch.http.hosts import HostLimiter, HostRegistry, HostSnapshot, with_robots
from paperfetch.http.limits import iter_limited
from paperfetch.http.pools import request_key
from paperfetch.http.robots import RobotsRules, RobotsStatus, UnreachablePolicy
from paperfetch.http.status import shown_host
from paperfetch.http.wire import Wire, synthetic_response
from paperfetch.redact import redact_url
from paperfetch.state.base import HostFacts, window_depth

if TYPE_CHECKING:  # pragma: no cover
    from paperfetch.http.config import TransportConfig

__all__ = ["Budget", "Exchange", "HostSide"]

logger = logging.getLogger("paperfetch.http.client")  # the transport logs under one name

#: Each notice's event and log line. A spent budget's is the one warning of its period: which service, until when,
#: and the remedy (:meth:`.HostLimiter.describe`).
_NOTICES = {
    "budget": (EventKind.HOLD, logging.WARNING,
               "%(service)s (%(host)s): %(detail)s; no requests to it until then (other hosts carry on).%(remedy)s"),
    "hold": (EventKind.HOLD, logging.WARNING, "%(host)s asked for no requests for %(seconds).0fs (%(detail)s)"),
    "backoff": (EventKind.BACKOFF, logging.INFO, "backoff for %(host)s: %(detail)s"),
    "breaker": (EventKind.BREAKER, logging.WARNING, "%(host)s: %(detail)s"),
    "learned": (EventKind.LEARNED, logging.INFO, "%(host)s: %(detail)s"),
    "suppress": (EventKind.SUPPRESS, logging.WARNING, "%(host)s answered 403; suppressing it (%(detail)s)"),
}


@dataclass
class Budget:
    """What one call waited, and may still wait (``max_elapsed``)."""

    max_elapsed: float | None
    waited: float = 0.0

    def remaining(self) -> float:
        if self.max_elapsed is None:
            return math.inf
        return max(0.0, self.max_elapsed - self.waited)


@dataclass
class Exchange:
    """How one request (with its redirects) ended."""

    kind: str  # "response" | "disallowed" | "suppressed" | "held" | "gave_up"
    response: requests.Response | None
    host: HostLimiter
    url: str
    detail: str = ""


def _held(host: HostLimiter, url: str, status: int, seconds: float, reason: str, detail: str = "") -> Exchange:
    """The synthetic answer of a held host (or one whose breaker is open), with its Retry-After."""
    response = synthetic_response(url, status, "held", reason, {"Retry-After": str(max(1, math.ceil(seconds)))})
    return Exchange("held", response, host, url, detail)


class HostSide:
    """Carries out the policy for the hosts of one client (see the module)."""

    def __init__(self, *, config: "TransportConfig", registry: HostRegistry, clock: Clock, wire: Wire,
                 events: EventBus, rng: random.Random) -> None:
        self.config = config
        self.registry = registry
        self.clock = clock
        self.wire = wire
        self.events = events
        self._rng = rng
        self._rng_lock = threading.Lock()

    def emit(self, kind: EventKind, host: HostLimiter, url: str | None, **fields: Any) -> None:
        if not len(self.events):
            return
        self.events.publish(Event(kind, host.key, self.clock.time(), redact_url(url) if url else None, **fields))

    def publish(self, host: HostLimiter, url: str, notices: Iterable[policy.Notice]) -> None:
        for n in notices:
            kind, level, message = _NOTICES[n.kind]
            self.emit(kind, host, url, status=n.status, seconds=n.seconds, detail=n.detail)
            shown = shown_host(host.key, self.config.pools)
            logger.log(level, message, {"host": shown, "detail": n.detail, "seconds": n.seconds or 0.0,
                                        "service": host.service or shown,
                                        "remedy": f" {host.budget_remedy}" if host.budget_remedy else ""})

    @staticmethod
    def pace(host: HostLimiter) -> policy.Pace:
        return policy.Pace(host.last_start, host.gap_fraction, host.in_flight, host.probing)

    def limiter(self, url: str, params: Any = None) -> HostLimiter:
        """The record *url*'s request (with *params*) is paced under: its host's, or its pool's (:mod:`.pools`)."""
        pools = self.config.pools
        if not pools or "://" not in url:
            return self.registry.limiter(url)
        return self.registry.limiter(request_key(url, params, pools))

    def exempt(self, url: str) -> bool:
        return (urlsplit(url).hostname or "") in self.config.suppression_exempt

    def snapshot(self, host: HostLimiter, *, refresh: bool = True) -> HostSnapshot:
        if refresh:
            host.refresh()
        windows = self.config.rule(host.key).windows
        recent = self.registry.store.starts(host.key, window_depth(windows)) if windows else ()
        with host.cond:
            return policy.snapshot(host.facts, self.pace(host), self.config, host, host=host.key,
                                   now=self.clock.time(), mono=self.clock.monotonic(),
                                   polite=self.config.polite_mode, recent=recent)

    def allowance(self, budget: Budget) -> float:
        """How long this call may wait for a host (:func:`.policy.allowance`; 0 while a batch drains a blocked host)."""
        if answering_now():
            return 0.0  # the scheduler drains this host: nothing is waited for
        return policy.allowance(self.config, budget.remaining())

    def decide(self, host: HostLimiter, budget: Budget, *, exempt: bool) -> policy.Decision:
        facts = host.refresh()  # what the store says now: a hold another process set counts
        with host.cond:
            return self._decide(host, facts, budget, exempt)

    def _decide(self, host: HostLimiter, facts: HostFacts, budget: Budget, exempt: bool) -> policy.Decision:
        """:func:`.policy.decide` on *facts* now (caller holds ``host.cond``)."""
        return policy.decide(facts, self.pace(host), self.config, host=host.key, now=self.clock.time(),
                             mono=self.clock.monotonic(), allowance=self.allowance(budget), exempt=exempt)

    def acquire(self, host: HostLimiter, url: str, budget: Budget, *, exempt: bool = True) -> policy.Decision:
        """Wait for the host's turn and take a slot (``PROCEED``); or ``HELD`` / ``OPEN`` when a hold
        or an open breaker stands in the way for longer than this call may wait (nothing was sent);
        ``SUPPRESSED`` too unless *exempt* (the caller asked :meth:`decide` before robots.txt, or the
        host is exempt): one look at the host where no robots.txt is read in between."""
        while True:
            facts = host.refresh()
            with host.cond:
                decision = self._decide(host, facts, budget, exempt)
                verdict = decision.verdict
                if verdict is policy.Verdict.PROCEED:
                    with self._rng_lock:
                        fraction = self._rng.random()
                    host.begin(self.clock.monotonic(), fraction)
                    if decision.probe:
                        host.update(policy.begin_probe)
                        host.probing = True
                        logger.info("%s: breaker half-open; one probe request", host.key)
                    return decision
                if verdict is policy.Verdict.BUSY:
                    host.cond.wait(timeout=0.5)  # real time: woken when a request on this host ends
                    continue
            if verdict in (policy.Verdict.HELD, policy.Verdict.OPEN, policy.Verdict.SUPPRESSED):
                return decision
            self.wait(decision.seconds, host, url, budget, decision.reason)

    def gap(self, host: HostLimiter) -> float:
        """The gap the request that just took *host*'s slot keeps after the previous one."""
        with host.cond:
            return policy.gap(host.facts, self.config, host.key, self.pace(host))

    def wait(self, seconds: float, host: HostLimiter, url: str, budget: Budget, why: str) -> None:
        """Sleep for the host, on the call's budget and its item's tally; a batch's stop raises :class:`~paperfetch.Stopped`."""
        if seconds <= 0:
            return
        charge_wait(seconds)
        self.emit(EventKind.WAIT, host, url, seconds=seconds, detail=why)
        self.wire.pause(seconds)
        budget.waited += seconds

    def suppressed(self, host: HostLimiter, url: str, decision: policy.Decision) -> Exchange:
        self.emit(EventKind.SUPPRESSED, host, url, status=403, detail=decision.reason)
        logger.debug("%s is suppressed; synthetic 403 for %s", host.key, redact_url(url))
        response = synthetic_response(url, 403, "suppressed", "Forbidden (suppressed)")
        return Exchange("suppressed", response, host, url, decision.reason)

    def held(self, host: HostLimiter, url: str) -> Exchange:
        facts = host.steady()
        remaining = facts.hold_remaining(self.clock.time())
        status = facts.hold_status or 429
        self.emit(EventKind.HELD, host, url, status=status, seconds=remaining, detail=facts.hold_reason)
        logger.debug("%s is held for %.0fs more; no request sent for %s", host.key, remaining, redact_url(url))
        return _held(host, url, status, remaining, "Held (no request sent)")

    def open(self, host: HostLimiter, url: str, decision: policy.Decision) -> Exchange:
        """The breaker is open: no request. An unreachable host raises a network error; one that
        answered gets a synthetic response with the failing status and Retry-After."""
        facts = host.facts
        until = utc(facts.breaker_open_until)
        when = until.strftime("%H:%M:%S UTC") if until else "later"
        self.emit(EventKind.HELD, host, url, status=facts.hold_status, seconds=decision.seconds,
                  detail=f"breaker open: {facts.breaker_reason}")
        logger.debug("%s: breaker open for %.0fs more; no request sent for %s", host.key, decision.seconds,
                     redact_url(url))
        if policy.unreachable(facts):
            shown = redact_url(url)
            # what happened and since when, without the breaker's count of failures
            cause = facts.breaker_reason.removeprefix(f"{policy.UNREACHABLE}: ").rsplit(" (", 1)[0]
            raise NetworkError(f"{shown_host(host.key, self.config.pools)} is unreachable: {cause}; {shown} not "
                               f"requested, next try after {when}", url=shown)
        status = facts.failure_status or facts.hold_status or 503
        return _held(host, url, status, decision.seconds, "Held: breaker open (no request sent)", facts.breaker_reason)

    def observe(self, host: HostLimiter, url: str, response: requests.Response, *, exempt: bool,
                robots: bool = False) -> None:
        """Record what a response says about its host (:func:`.policy.observe_response`), then publish it."""
        settings, now, gap_s = self.config, self.clock.time(), host.last_gap_s
        self._observed(host, url, lambda facts: policy.observe_response(
            facts, settings, status=response.status_code, headers=response.headers, now=now,
            exempt=exempt, robots=robots, shown_url=redact_url(url), gap_s=gap_s,
            floor_s=policy.floor(facts, settings, host.key),
        ))

    def observe_error(self, host: HostLimiter, url: str, exc: BaseException) -> None:
        settings, now = self.config, self.clock.time()
        self._observed(host, url, lambda facts: policy.observe_error(
            facts, settings, error=network_words(exc) if unreachable_error(exc) else type(exc).__name__, now=now,
            unreachable=unreachable_error(exc),
            trickled=isinstance(exc, TooSlow)))

    def retry_wait(self, exchange: Exchange) -> float:
        """How long to wait before retrying *exchange*'s response (:func:`.policy.retry_wait`)."""
        response = exchange.response
        assert response is not None
        waits: list[float] = []

        def judge(facts: HostFacts) -> tuple[HostFacts, tuple[policy.Notice, ...]]:
            wait, new, notices = policy.retry_wait(facts, self.config, status=response.status_code,
                                                   headers=response.headers, now=self.clock.time())
            waits[:] = [wait]
            return new, notices

        self._observed(exchange.host, exchange.url, judge)
        return waits[0]

    def _observed(self, host: HostLimiter, url: str,
                  judge: Callable[[HostFacts], tuple[HostFacts, tuple[policy.Notice, ...]]]) -> None:
        """Apply *judge* to the host's facts in the store (:meth:`.HostLimiter.update`), then publish its notices."""
        out: list[policy.Notice] = []

        def change(facts: HostFacts) -> HostFacts:
            new, notices = judge(facts)
            out[:] = notices
            return new

        host.update(change)
        self.publish(host, url, out)

    def robots_rules(self, host: HostLimiter, url: str, budget: Budget) -> RobotsRules:
        rules = host.robots
        if rules is not None and rules.expires_at > self.clock.time():
            return rules
        with host.robots_lock:  # one fetch per host, however many threads ask
            rules = host.robots
            if rules is not None and rules.expires_at > self.clock.time():
                return rules
            rules = self._fetch_robots(host, url, budget)
            host.update(lambda f: with_robots(f, rules))
            return rules

    def _fetch_robots(self, host: HostLimiter, url: str, budget: Budget) -> RobotsRules:
        cfg = self.config
        parts = urlsplit(url)
        robots_url = f"{parts.scheme}://{parts.netloc}/robots.txt"
        unreachable_for = cfg.robots_unreachable_ttl_s

        def unreachable(detail: str) -> RobotsRules:
            now = self.clock.time()
            self.emit(EventKind.ROBOTS, host, robots_url, detail=f"unreachable: {detail}")
            logger.warning(
                "robots.txt of %s unreachable (%s); %s for now", host.key, detail,
                "allowing" if cfg.robots_unreachable is UnreachablePolicy.ALLOW else "disallowing",
            )
            return RobotsRules(RobotsStatus.UNREACHABLE, now, now + unreachable_for,
                               unreachable_policy=UnreachablePolicy.parse(cfg.robots_unreachable), detail=detail)

        # RFC 9309 §2.3.1.2: follow at least five consecutive redirects, each hop paced by its own host.
        hop_url, hop_host = robots_url, host
        for _ in range(defaults.ROBOTS_REDIRECTS + 1):
            if self.acquire(hop_host, hop_url, budget).verdict is not policy.Verdict.PROCEED:
                return unreachable("host is held")
            try:
                response = self.wire.send(hop_host, hop_url, None, {"User-Agent": cfg.user_agent},
                                          {"timeout": cfg.timeout, "stream": True}, gap_s=self.gap(hop_host),
                                          on_error=functools.partial(self.observe_error, hop_host, hop_url),
                                          deadline_s=cfg.robots_deadline_s,  # it blocks the host's queue: a short one
                                          cap=policy.in_flight_cap(hop_host.facts, cfg, hop_host.key))
            except requests.RequestException as exc:
                return unreachable(type(exc).__name__)
            location = redirects.location(response)
            if location is None:
                break
            target = urljoin(hop_url, location)
            response.close()
            if urlsplit(target).scheme.lower() not in ("http", "https"):
                break
            refusal = redirects.redirect_refusal(hop_url, target, cfg.allow_private_redirects)  # as for any other request
            if refusal is not None:
                return unreachable(f"redirect to {redact_url(target)} refused: {refusal}")
            hop_url, hop_host = target, self.registry.limiter(target)
        try:
            self.observe(hop_host, hop_url, response, exempt=True, robots=True)
            return self._robots_answer(host, robots_url, response, unreachable)
        finally:
            response.close()

    def _robots_answer(self, host: HostLimiter, robots_url: str, response: requests.Response,
                       unreachable: Callable[[str], RobotsRules]) -> RobotsRules:
        """RFC 9309 §2.3.1: the rules of a 2xx body, "unavailable" for a 3xx/4xx, else unreachable."""
        status = response.status_code
        now = self.clock.time()
        ttl = self.config.robots_cache_ttl_s
        if 200 <= status < 300:
            body = bytearray()
            truncated = False
            try:  # within the request's deadline, decoded bytes capped (paperfetch.http.limits)
                for chunk in iter_limited(response, max_bytes=defaults.MAX_ROBOTS_BYTES + 1, chunk_size=16 * 1024, truncate=True,
                                          deadline=getattr(response, "paperfetch_deadline", None), url=robots_url):
                    body.extend(chunk)
                    if len(body) > defaults.MAX_ROBOTS_BYTES:
                        truncated = True
                        break
            except requests.RequestException as exc:
                return unreachable(f"body: {type(exc).__name__}")
            rules = RobotsRules.parse(bytes(body), fetched_at=now, expires_at=now + ttl, truncated=truncated,
                                      content_type=response.headers.get("Content-Type", ""))
            detail = rules.detail or f"{rules.status.value}{' (truncated at 500 KiB)' if truncated else ''}"
            self.emit(EventKind.ROBOTS, host, robots_url, status=status, detail=detail)
            return rules
        if 300 <= status < 500:
            # RFC 9309 §2.3.1.3: "unavailable" (4xx, or more than five redirects) -> allow all
            self.emit(EventKind.ROBOTS, host, robots_url, status=status, detail="unavailable")
            return RobotsRules(RobotsStatus.UNAVAILABLE, now, now + ttl, detail=f"HTTP {status}")
        return unreachable(f"HTTP {status}")
