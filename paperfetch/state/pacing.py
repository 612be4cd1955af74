"""Wait, on the injected clock, for a host's start slot in a shared store (docs/state.md, "Start-to-start …")."""

from __future__ import annotations

from paperfetch.clock import SYSTEM_CLOCK, Clock
from paperfetch.state.base import HostStateStore, Slot

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
) -> Slot:
    """Wait (on *clock*) until this client may start a request to *host*; return the granted slot.
    ``lease_s > 0`` is end-to-end: the caller holds the host until ``store.finish(slot, end, gap_s)`` (in a
    ``finally``) or until the lease runs out; ``lease_s == 0`` is start-to-start."""
    while True:
        now = clock.time()
        slot = store.reserve(host, interval_s, now, lease_s)
        if slot.granted:
            wait = slot.start_at - clock.time()
            if wait > 0:
                clock.sleep(wait)
            return slot
        clock.sleep(max(0.001, min(poll_s, slot.start_at - now)))
