"""Time, injected: ``monotonic()``, ``time()`` and sleeps; tests use :class:`FakeClock` (docs/testing.md, "Fake clock")."""

from __future__ import annotations

import threading
import time as _time
from datetime import datetime, timezone
from typing import Protocol

__all__ = ["Clock", "FakeClock", "SYSTEM_CLOCK", "SystemClock", "utc", "utc_words"]


class Clock(Protocol):
    def monotonic(self) -> float: ...

    def time(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...

    def wait(self, event: threading.Event, seconds: float) -> bool:
        """Sleep *seconds*, or less when *event* is set; True when it was set (the sleep was cut short)."""


class SystemClock:
    def monotonic(self) -> float:
        return _time.monotonic()

    def time(self) -> float:
        return _time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            _time.sleep(seconds)

    def wait(self, event: threading.Event, seconds: float) -> bool:
        return event.wait(max(0.0, seconds))

    def __repr__(self) -> str:
        return "SystemClock()"


SYSTEM_CLOCK = SystemClock()


class FakeClock:
    """A clock that only moves when told to: ``sleep(s)`` advances it by *s* at once; ``sleeps`` lists every sleep."""

    def __init__(self, start_wall: float = 1_700_000_000.0, start_monotonic: float = 1_000.0) -> None:
        self._offset = start_wall - start_monotonic
        self._now = start_monotonic
        self._lock = threading.Lock()
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self._now

    def time(self) -> float:
        return self._now + self._offset

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            if seconds > 0:
                self._now += seconds

    def wait(self, event: threading.Event, seconds: float) -> bool:
        """Like :meth:`sleep`, cut short at once when *event* is set (before or while "sleeping")."""
        if event.is_set():
            return True
        self.sleep(seconds)
        return event.is_set()

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds

    def step_wall(self, seconds: float) -> None:
        """Step the wall clock (``time()``) by *seconds*, back when negative, as an NTP correction or a person
        setting the clock does; ``monotonic()`` does not move."""
        with self._lock:
            self._offset += seconds

    @property
    def slept(self) -> float:
        return sum(s for s in self.sleeps if s > 0)

    def __repr__(self) -> str:
        return f"FakeClock(monotonic={self._now:.3f})"


def utc(epoch: float | None) -> datetime | None:
    """An epoch reading of the wall clock as an aware UTC datetime (``None`` stays ``None``)."""
    return None if epoch is None else datetime.fromtimestamp(epoch, tz=timezone.utc)


def utc_words(when: datetime, now: datetime) -> str:
    """``07:28 UTC`` for *when* (naive means UTC), with the date when *now* is another day."""
    when = when.astimezone(timezone.utc) if when.tzinfo else when.replace(tzinfo=timezone.utc)
    return when.strftime("%H:%M UTC" if when.date() == now.astimezone(timezone.utc).date() else "%Y-%m-%d %H:%M UTC")
