"""``fetch``'s verdicts: a settled exchange becomes its response or a typed paperfetch error (docs/politeness.md,
"get(), fetch(), ..."). Pure: no request, no wait, no state written; network errors are :mod:`.exceptions`'.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping

import requests

from paperfetch.clock import utc
from paperfetch.errors import DisallowedByRobots, HostSuppressed, NotFoundError, RateLimited, ServiceError
from paperfetch.http.hostside import Exchange
from paperfetch.http.outcome import Outcome
from paperfetch.http.pools import Pool
from paperfetch.http.status import shown_host
from paperfetch.state.base import BreakerState

__all__ = ["fetched", "judge", "rate_limited"]


def fetched(exchange: Exchange, classify: Callable[[requests.Response], Outcome], shown: str, *, now: float,
            max_retries: int, pools: Mapping[str, tuple[Pool, ...]]) -> requests.Response:
    """``fetch``'s verdict on a settled exchange: the response, or the typed error (a pool named by its label in
    *pools*, the client's own declarations)."""
    response = exchange.response
    host = exchange.host
    if exchange.kind == "disallowed":
        raise DisallowedByRobots(f"robots.txt of {shown_host(host.key, pools)} disallows {shown}", url=shown)
    if exchange.kind == "suppressed":
        reason, until = host.facts.suppression_reason, host.facts.suppressed_until
        raise HostSuppressed(
            f"{shown_host(host.key, pools)} is suppressed ({reason or '403'}); no request sent",
            status_code=403,
            url=shown,
            response=response,
            reason=reason,
            suppressed_until=utc(until) if until is not None and until != math.inf else None,
        )
    if exchange.kind == "held":
        raise rate_limited(exchange, shown, "no request sent", pools)
    assert response is not None
    verdict = classify(response)
    held = host.facts.hold_remaining(now) > 0
    if response.status_code == 403 and held:
        raise rate_limited(exchange, shown, "HTTP 403 with rate-limit headers", pools)
    if verdict is Outcome.RETRY and (held or response.status_code == 429):
        raise rate_limited(exchange, shown, f"HTTP {response.status_code}", pools)
    return judge(response, verdict, shown, max_retries=max_retries)


def judge(response: requests.Response, verdict: Outcome, shown: str, *, max_retries: int) -> requests.Response:
    """The response when *verdict* is OK, else the typed error of its status."""
    if verdict is Outcome.OK:
        return response
    status = response.status_code
    if verdict is Outcome.ABSENT:
        raise NotFoundError(f"{shown}: not found (HTTP {status})", status_code=status, url=shown, response=response)
    if verdict is Outcome.RETRY:
        raise ServiceError(
            f"{shown}: HTTP {status} after {max_retries + 1} attempts", status_code=status, url=shown,
            response=response,
        )
    raise ServiceError(f"{shown}: HTTP {status} ({response.reason or 'error'})", status_code=status, url=shown,
                       response=response)


def rate_limited(exchange: Exchange, shown: str, what: str, pools: Mapping[str, tuple[Pool, ...]]) -> RateLimited:
    """The :class:`~paperfetch.RateLimited` of a held host (or a 429 it sent)."""
    host = exchange.host
    held_until = host.held_until
    opened = host.facts.breaker_open_until
    if held_until is None and opened is not None and host.facts.breaker_state is not BreakerState.CLOSED:
        held_until = utc(opened)  # no hold, an open breaker: its end
        what = f"{what}; breaker open: {host.facts.breaker_reason}"
    status = exchange.response.status_code if exchange.response is not None else host.facts.hold_status
    when = held_until.strftime("%H:%M:%S UTC") if held_until else "later"
    if host.facts.budget_spent_until is not None and host.facts.hold_reason:
        what = host.facts.hold_reason  # a spent budget says so, and when it renews
    return RateLimited(
        f"{shown_host(host.key, pools)} asked for no requests until {when} ({what}); {shown} not fetched",
        held_until=held_until,
        status_code=status,
        url=shown,
        response=exchange.response,
    )
