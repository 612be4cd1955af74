"""Wait, on the injected clock, for a host's start slot in a shared store (docs/state.md, "Start-to-start …")."""

from __future__ import annotations

from contextlib import suppress
from typing import Callable, Sequence

from paperfetch.clock import SYSTEM_CLOCK, Clock
from paperfetch.errors import StoreUnavailable
from paperfetch.state.base import HostStateStore, Slot, Window

__all__ = ["DEFAULT_POLL_S", "acquire"]

#: How often a client asks again while another one holds the host (end-to-end mode).
DEFAULT_POLL_S = 0.02


def acquire(
    store: HostStateStore,
    host: str,
    interval_s: float,
    *,
    clock: Clock = SYSTEM_CLOCK,
    lease_s: float = 0.0,
    poll_s: float = DEFAULT_POLL_S,
    windows: Sequence[Window] = (),
    sleep: Callable[[float], None] | None = None,
) -> Slot:
    """Wait (on *clock*, or by *sleep*) until this client may start a request to *host*, no sooner than its
    *windows* allow; return the granted slot (a sleep that raises frees it). ``lease_s > 0`` is end-to-end:
    the caller holds the host until ``store.finish(slot, end, gap_s)`` (in a ``finally``) or until the lease
    runs out; ``lease_s == 0`` is start-to-start."""
    sleep = sleep or clock.sleep
    while True:
        now = clock.time()
        slot = store.reserve(host, interval_s, now, lease_s, windows) if windows else store.reserve(
            host, interval_s, now, lease_s)
        if not slot.granted:
            sleep(max(0.001, min(poll_s, slot.start_at - now)))
            continue
        wait = slot.start_at - clock.time()
        if wait > 1e-6:  # below: float noise between the wall and the monotonic clock
            try:
                sleep(wait)
            except BaseException:
                with suppress(StoreUnavailable):  # a store that does not answer leaves the slot to its lease
                    store.finish(slot, clock.time(), 0.0)
                raise
        return slot
