"""The in-process store: one dict behind a lock. Nothing outlives the process."""

from __future__ import annotations

import threading
from collections import deque
from typing import Callable, Sequence

from paperfetch.state.base import (
    HostFacts,
    Slot,
    StoreBase,
    Window,
    apply_update,
    expire_facts,
    finish_slot,
    new_token,
    reserve_slot,
    window_depth,
    window_floor,
)

__all__ = ["MemoryStore"]


class MemoryStore(StoreBase):
    """Host state for this process only (tests, throwaway clients)."""

    name = "memory"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._facts: dict[str, HostFacts] = {}
        self._slots: dict[str, tuple[float, str, float]] = {}
        self._starts: dict[str, deque[float]] = {}  # newest first, as many as the host's windows need

    def reserve(self, host: str, interval_s: float, now: float, lease_s: float = 0.0,
                windows: Sequence[Window] = ()) -> Slot:
        with self._lock:
            log = self._starts.get(host, deque())
            slot, self._slots[host] = reserve_slot(self._slots.get(host, (0.0, "", 0.0)), host, interval_s, now, lease_s,
                                                   new_token(), window_floor(log, windows, now))
            if slot.granted and windows:
                log = self._starts.setdefault(host, log)
                log.appendleft(slot.start_at)
                for _ in range(len(log) - window_depth(windows)):
                    log.pop()
            return slot

    def starts(self, host: str, limit: int) -> list[float]:
        with self._lock:
            log = self._starts.get(host, ())
            return [log[i] for i in range(min(limit, len(log)))]

    def finish(self, slot: Slot, end: float, gap_s: float = 0.0) -> None:
        with self._lock:
            self._slots[slot.host] = finish_slot(self._slots.get(slot.host, (0.0, "", 0.0)), slot.token, end, gap_s)

    def get(self, host: str, now: float) -> HostFacts:
        with self._lock:
            return expire_facts(self._facts.get(host) or HostFacts(host), now)

    def update(self, host: str, change: Callable[[HostFacts], HostFacts], now: float) -> HostFacts:
        with self._lock:
            merged = apply_update(self._facts.get(host) or HostFacts(host), change, now)
            self._facts[host] = merged
            return merged

    def hosts(self) -> list[str]:
        with self._lock:
            return sorted(set(self._facts) | set(self._slots))

    def clear(self, host: str | None = None) -> None:
        with self._lock:
            for table in (self._facts, self._slots, self._starts):
                if host is None:
                    table.clear()
                else:
                    table.pop(host, None)
