"""What wait, budget or pool a server's headers announce: pure functions of (header value, now), every wait capped
at :data:`paperfetch.defaults.MAX_HOLD_S`; :mod:`.policy` decides (docs/politeness.md, "Header priority", "Budgets").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import timezone
from email.utils import parsedate_to_datetime
from typing import Mapping

from paperfetch import defaults

__all__ = [
    "EPOCH_THRESHOLD",
    "PoolLimits",
    "RateLimitBudget",
    "ServerWait",
    "has_rate_limit_headers",
    "mentions_limits",
    "parse_pool_limits",
    "parse_rate_limit_budget",
    "parse_rate_limit_reset",
    "parse_retry_after",
    "parse_structured_rate_limit",
    "server_requested_wait",
]

#: A reset value above this is a Unix timestamp, below it a number of seconds.
EPOCH_THRESHOLD = 1_000_000_000

#: A header value longer than this is not a number or a date; it is not read at all.
_MAX_VALUE_CHARS = 1024

_NUMBER = re.compile(r"^\s*\+?(\d+(?:\.\d+)?)\s*$")


@dataclass(frozen=True)
class ServerWait:
    """A wait the server asked for: *seconds* from now, read from *header*."""

    seconds: float
    header: str


def _number(value: str) -> float | None:
    if len(value) > _MAX_VALUE_CHARS:
        return None
    match = _NUMBER.match(value)
    if not match:
        return None
    number = float(match.group(1))  # 1e400 digits read as inf: capped below, like any huge wait
    return number if not math.isnan(number) else None


def _capped(seconds: float) -> float:
    return min(max(0.0, seconds), defaults.MAX_HOLD_S)


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (*now*: epoch seconds, for the HTTP-date form), or ``None``."""
    if value is None or len(value) > _MAX_VALUE_CHARS:
        return None
    value = value.strip()
    if not value:
        return None
    number = _number(value)
    if number is not None:
        return _capped(number)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    try:
        return _capped(when.timestamp() - now)
    except (OverflowError, OSError, ValueError):
        return None


def parse_rate_limit_reset(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``RateLimit-Reset`` / ``X-RateLimit-Reset`` value: a Unix timestamp above
    :data:`EPOCH_THRESHOLD` (a past one gives 0), else seconds until the reset."""
    number = None if value is None else _number(value)
    if number is None:
        return None
    return _capped(number - now if number > EPOCH_THRESHOLD else number)


_STRUCTURED_RESET = re.compile(r"(?:^|[;,\s])(?:reset|t)\s*=\s*(\d+(?:\.\d+)?)", re.IGNORECASE)


def parse_structured_rate_limit(value: str | None) -> float | None:
    """Seconds until reset from the draft ``RateLimit`` header (``limit=10, remaining=0, reset=5`` or ``"default";r=0;t=5``)."""
    if not value or len(value) > _MAX_VALUE_CHARS:
        return None
    match = _STRUCTURED_RESET.search(value)
    if not match:
        return None
    return _capped(float(match.group(1)))


def server_requested_wait(headers: Mapping[str, str], now: float) -> ServerWait | None:
    """The wait the response's headers ask for, by priority, or ``None`` when none parses."""
    seconds = parse_retry_after(headers.get("Retry-After"), now)
    if seconds is not None:
        return ServerWait(seconds, "Retry-After")
    for name in ("RateLimit-Reset", "X-RateLimit-Reset"):
        seconds = parse_rate_limit_reset(headers.get(name), now)
        if seconds is not None:
            return ServerWait(seconds, name)
    seconds = parse_structured_rate_limit(headers.get("RateLimit"))
    if seconds is not None:
        return ServerWait(seconds, "RateLimit")
    return None


def has_rate_limit_headers(headers: Mapping[str, str], now: float) -> bool:
    """True when the response speaks of a rate limit: a parseable wait, or a remaining quota of 0."""
    return server_requested_wait(headers, now) is not None or any(
        (headers.get(name) or "").strip() == "0" for name in ("X-RateLimit-Remaining", "RateLimit-Remaining"))


#: The lower-cased beginnings of every header name the readers here look at.
_LIMIT_PREFIXES = ("retry-after", "ratelimit", "x-ratelimit-", "x-rate-limit-", "x-concurrency-limit")


def mentions_limits(headers: Mapping[str, str]) -> bool:
    """Whether *headers* name a wait, a budget or a pool at all. When they do not, every reader
    here answers ``None`` (no wait, no budget, no pool) without being asked: one pass over the
    names instead of a lookup per header each reader knows."""
    for name in headers:
        if str(name).lower().startswith(_LIMIT_PREFIXES):
            return True
    return False


def _count(value: str | None) -> int | None:
    """A non-negative whole number of credits or requests, or ``None``."""
    number = None if value is None else _number(value)
    return None if number is None or math.isinf(number) else int(number)


@dataclass(frozen=True)
class RateLimitBudget:
    """What a host's ``X-RateLimit-*`` headers say of its budget (OpenAlex: credits a day)."""

    limit: int | None = None             #: ``X-RateLimit-Limit``: the budget (credits per day)
    remaining: int | None = None         #: ``X-RateLimit-Remaining``: credits left
    credits_used: int | None = None      #: ``X-RateLimit-Credits-Used``: what this request cost
    credits_required: int | None = None  #: ``X-RateLimit-Credits-Required``: what the request needed
    reset_at: float | None = None        #: ``X-RateLimit-Reset`` as an epoch (the budget renews then)

    @property
    def spent(self) -> bool:
        """Fewer credits left than a request needs (none left, when the need is not said)."""
        if self.remaining is None:
            return False
        need = self.credits_required if self.credits_required is not None else 1
        return self.remaining < max(1, need)


def parse_rate_limit_budget(headers: Mapping[str, str], now: float) -> RateLimitBudget | None:
    """The budget *headers* announce, or ``None`` when they name neither a limit nor what remains. Header
    names are case-insensitive, in a plain dict too; this is the one reader of these headers."""
    headers = {str(name).lower(): value for name, value in headers.items() if str(name).lower().startswith("x-ratelimit-")}
    limit = _count(headers.get("x-ratelimit-limit"))
    remaining = _count(headers.get("x-ratelimit-remaining"))
    if limit is None and remaining is None:
        return None
    reset = parse_rate_limit_reset(headers.get("x-ratelimit-reset"), now)
    return RateLimitBudget(
        limit=limit, remaining=remaining, credits_used=_count(headers.get("x-ratelimit-credits-used")),
        credits_required=_count(headers.get("x-ratelimit-credits-required")),
        reset_at=None if reset is None else now + reset,
    )


@dataclass(frozen=True)
class PoolLimits:
    """What a host announces of the pool it serves us from (Crossref's ``x-rate-limit-*`` headers)."""

    limit: int | None = None          #: ``x-rate-limit-limit``: requests per interval
    interval_s: float | None = None   #: ``x-rate-limit-interval`` in seconds
    concurrency: int | None = None    #: ``x-concurrency-limit``: requests in flight

    @property
    def min_gap_s(self) -> float | None:
        """The pool's pace as a gap between starts: interval ÷ limit (``None`` when either is unknown)."""
        if not self.limit or self.interval_s is None:
            return None
        return self.interval_s / self.limit


_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$", re.IGNORECASE)
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _interval(value: str | None) -> float | None:
    """``1s``, ``60s``, ``1m``, ``500ms`` or bare seconds; ``None`` for anything else (or 0)."""
    if value is None or len(value) > _MAX_VALUE_CHARS:
        return None
    match = _INTERVAL.match(value)
    if not match:
        return None
    seconds = float(match.group(1)) * _UNIT_S[(match.group(2) or "s").lower()]
    return seconds if 0 < seconds <= defaults.MAX_HOLD_S else None


def parse_pool_limits(headers: Mapping[str, str]) -> PoolLimits | None:
    """The pool *headers* announce, or ``None``; a limit or concurrency of 0 (or garbage) is not an announcement."""
    limit = _count(headers.get("x-rate-limit-limit")) or None
    interval = _interval(headers.get("x-rate-limit-interval"))
    concurrency = _count(headers.get("x-concurrency-limit")) or None
    if limit is None and interval is None and concurrency is None:
        return None
    return PoolLimits(limit=limit, interval_s=interval, concurrency=concurrency)
