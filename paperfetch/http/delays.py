"""Pacing arithmetic: delay ranges, the Crawl-delay floor, exponential backoff, as pure values. The rules are
PyPaperRetriever's (docs/politeness.md, "PyPaperRetriever's policy tables").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from paperfetch import defaults
from paperfetch.errors import ConfigurationError, parse_choice

__all__ = ["BackoffPolicy", "DelayRange", "RetrySchedule", "effective_range", "resolve_configured_range"]


@dataclass(frozen=True)
class DelayRange:
    """A range of seconds between two consecutive requests to one host."""

    low: float
    high: float

    def raise_floor(self, floor: float | None) -> "DelayRange":
        if floor is None or floor <= self.low:
            return self
        return DelayRange(floor, max(self.high, floor))

    def sample(self, fraction: float) -> float:
        return self.low + fraction * (self.high - self.low)

    def __str__(self) -> str:
        if self.low == self.high:
            return f"{self.low:g} s"
        return f"{self.low:g}–{self.high:g} s"


def _check_seconds(name: str, value: float | None) -> None:
    if value is not None and (not isinstance(value, (int, float)) or math.isnan(value) or value < 0):
        raise ConfigurationError(f"{name} must be a number of seconds >= 0, not {value!r}")


def resolve_configured_range(delay_min_s: float | None, delay_max_s: float | None) -> DelayRange | None:
    """The explicit inter-request range, or ``None`` when neither bound is set."""
    _check_seconds("delay_min_s", delay_min_s)
    _check_seconds("delay_max_s", delay_max_s)
    if delay_min_s is None and delay_max_s is None:
        return None
    low = 0.0 if delay_min_s is None else float(delay_min_s)
    high = 3.0 * low if delay_max_s is None else float(delay_max_s)
    if high < low:
        raise ConfigurationError(f"delay_max_s ({high:g}) must not be smaller than delay_min_s ({low:g})")
    return DelayRange(low, high)


def _floor(current: DelayRange | None, floor: float | None) -> DelayRange | None:
    if floor is None or floor <= 0:
        return current
    if current is None:
        return DelayRange(floor, floor)
    return current.raise_floor(floor)


def effective_range(
    *,
    configured: DelayRange | None,
    respect_robots_txt: bool,
    crawl_delay: float | None,
    fallback: DelayRange | None,
    backoff: float = 0.0,
    min_interval: float = 0.0,
) -> DelayRange | None:
    """The range that applies to the next request to one host, or ``None`` for no delay."""
    current = configured
    if respect_robots_txt:
        if crawl_delay is not None:
            current = _floor(current, crawl_delay) if crawl_delay > 0 else (current or DelayRange(0.0, 0.0))
        elif current is None:
            current = fallback
    current = _floor(current, backoff)
    current = _floor(current, min_interval)
    return current


@dataclass(frozen=True)
class BackoffPolicy:
    """Per-host exponential backoff (from ``base_s``, times ``multiplier``, capped at ``max_s``) with linear
    recovery (each 2xx subtracts ``decay_s``; at zero it is cleared)."""

    base_s: float = defaults.BACKOFF_BASE_S
    multiplier: float = defaults.BACKOFF_MULTIPLIER
    max_s: float = defaults.BACKOFF_MAX_S
    decay_s: float = defaults.BACKOFF_DECAY_S

    def increase(self, current: float) -> float:
        if current <= 0:
            return min(self.base_s, self.max_s)
        return min(current * self.multiplier, self.max_s)

    def decrease(self, current: float) -> float:
        if current <= 0:
            return 0.0
        remaining = current - self.decay_s
        return remaining if remaining > 0 else 0.0


class RetrySchedule(str, Enum):
    """How the wait grows between retries after a timeout or a connection error."""

    LINEAR = "linear"            #: base × (attempt + 1): 1, 2, 3 … (the arXiv client's rule)
    EXPONENTIAL = "exponential"  #: base × 2 ** attempt: 1, 2, 4 …

    @classmethod
    def parse(cls, value: "RetrySchedule | str") -> "RetrySchedule":
        return parse_choice(cls, value, "network_retry_schedule")

    def wait(self, attempt: int, base: float, cap: float) -> float:
        if self is RetrySchedule.LINEAR:
            return min(base * (attempt + 1), cap)
        return min(base * (2 ** attempt), cap)
