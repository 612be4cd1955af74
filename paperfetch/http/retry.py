"""The retry policy of one call: an immutable value with its attempt history, shaped like urllib3's ``Retry``
(:meth:`Retry.increment` returns a new one). Its history fills the outcome row (``attempts``, ``waited_s``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from paperfetch import defaults
from paperfetch.http.delays import RetrySchedule

__all__ = ["Attempt", "Retry"]


@dataclass(frozen=True)
class Attempt:
    """How one attempt ended: an HTTP status or an error, and the wait before the next one."""

    url: str                  #: redacted
    status: int | None = None
    error: str | None = None  #: the exception's type name for a timeout, connection error, truncated body
    wait_s: float = 0.0


@dataclass(frozen=True)
class Retry:
    """``total`` retries after the first attempt; network waits by ``schedule`` from ``base_s``, capped at ``cap_s``."""

    total: int = defaults.MAX_RETRIES
    schedule: RetrySchedule = RetrySchedule.EXPONENTIAL
    base_s: float = defaults.NETWORK_RETRY_BASE_S
    cap_s: float = defaults.BACKOFF_MAX_S
    history: tuple[Attempt, ...] = ()

    @property
    def attempts(self) -> int:
        return len(self.history)

    @property
    def exhausted(self) -> bool:
        return self.attempts >= self.total

    @property
    def waited_s(self) -> float:
        return sum(a.wait_s for a in self.history)

    def network_wait(self) -> float:
        return self.schedule.wait(self.attempts, self.base_s, self.cap_s)

    def increment(self, url: str, *, status: int | None = None, error: str | None = None, wait_s: float = 0.0) -> "Retry":
        """A new policy with this attempt added to the history."""
        return replace(self, history=self.history + (Attempt(url, status, error, wait_s),))
