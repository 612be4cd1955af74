"""Which copy of a paper goes to which host: the assignment rule, as pure functions of host outlooks read from
the transport's public snapshot (docs/politeness.md, "Several copies of one paper: which host serves it").
The scheduler holds the queues and applies the rule; the transport's pacing is untouched.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, Hashable, Mapping, Protocol, Sequence, runtime_checkable

from paperfetch.http.hosts import queued_start

__all__ = ["Movable", "Move", "Outlook", "Placement", "Prefer", "TIERS", "copy_tier", "earliest", "outlook_from_snapshot",
           "revise"]


class Prefer(str, Enum):
    """Which copies of a paper compete on load (the Retriever's ``prefer=``)."""

    VERSION = "version"  #: only the best version tier available (the default)
    SPEED = "speed"      #: every copy: the user needs *a* text
    PUBLISHED = "published"  #: as VERSION, and a preprint's open version of record first (paperfetch.flow.decide)

    @classmethod
    def parse(cls, value: "str | Prefer") -> "Prefer":
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"prefer={value!r}; choose from {', '.join(p.value for p in cls)}") from None


#: Version tiers, best first; an unlabelled copy ranks between accepted and submitted (docs/politeness.md).
TIERS: tuple[str | None, ...] = ("publishedVersion", "acceptedVersion", None, "submittedVersion")


def copy_tier(version: str | None, prefer: Prefer | str = Prefer.VERSION) -> int:
    """The tier of a copy of *version* (0 best); every copy is tier 0 with ``prefer="speed"``."""
    if Prefer(prefer) is Prefer.SPEED:
        return 0
    return TIERS.index(version) if version in TIERS else TIERS.index(None)


@dataclass(frozen=True)
class Outlook:
    """A host as the assignment sees it: when it may start next, and how often after that."""

    ready_in_s: float = 0.0   #: seconds until its next request may start; inf: it serves nothing now
    interval_s: float = 0.0   #: seconds between its requests

    def start_at(self, position: int) -> float:
        """About when the paper at *position* (0-based) of its queue starts (:func:`~paperfetch.http.hosts.queued_start`)."""
        return queued_start(self.ready_in_s, self.interval_s, position)


#: The interval assumed for a host without a delay in force yet (no robots.txt read): papers spread by count.
UNKNOWN_INTERVAL_S = 0.001

#: An outlook for a host the transport cannot describe: always ready, no interval.
OPEN = Outlook()


def outlook_from_snapshot(snapshot: Any, *, serves: bool = True) -> Outlook:
    """The :class:`Outlook` of a host snapshot (*serves* ``False``: its open breaker ends the batch's items for it)."""
    ready = float(snapshot.ready_in_s)
    if not serves or snapshot.suppressed:
        ready = math.inf
    # a host not asked yet (its Crawl-delay unknown) is not free: queue length still counts
    return Outlook(ready_in_s=ready, interval_s=snapshot.interval_s or UNKNOWN_INTERVAL_S)


def earliest(keys: Sequence[str], outlooks: Mapping[str, Outlook], loads: Mapping[str, int]) -> int:
    """The index of the copy (host key) whose queue reaches a new paper soonest; ties: the first."""
    best, best_start = 0, math.inf
    for index, key in enumerate(keys):
        start = outlooks.get(key, OPEN).start_at(loads.get(key, 0))
        if start < best_start - 1e-9:
            best, best_start = index, start
    return best


@dataclass(frozen=True)
class Move:
    """Take *token* out of *source*'s queue and put it at the back of *target*'s, as *url*."""

    token: Hashable
    source: str
    target: str
    url: str


def revise(queues: Mapping[str, Sequence[tuple[Hashable, Sequence[tuple[str, str]] | None]]],
           outlooks: Mapping[str, Outlook]) -> list[Move]:
    """The moves that bring queued papers to hosts that reach them sooner by more than the target's interval.

    *queues*: each host key's queue in order, as ``(token, copies)`` with *copies* the paper's
    ``(host key, url)`` pairs (``None`` or a single pair: the paper cannot move). Every move lowers the moved
    paper's start and raises no other's, so a pass ends and a single-copy paper is never pushed back."""
    loads = {key: len(queue) for key, queue in queues.items()}
    entries = []
    for key, queue in queues.items():
        outlook = outlooks.get(key, OPEN)
        for position, (token, copies) in enumerate(queue):
            if copies is not None and len(copies) > 1:
                entries.append((outlook.start_at(position), key, position, token, copies))
    # latest start first: within a queue that is back to front, so a move never shifts an entry still to be looked at
    entries.sort(key=lambda e: (-e[0], e[1], -e[2]))
    moves: list[Move] = []
    for start, key, _position, token, copies in entries:
        others = [(k, u) for k, u in copies if k != key]
        if not others:
            continue
        choice = earliest([k for k, _ in others], outlooks, loads)
        target, url = others[choice]
        there = outlooks.get(target, OPEN)
        new_start = there.start_at(loads.get(target, 0))
        if new_start < start - there.interval_s - 1e-9:
            moves.append(Move(token, key, target, url))
            loads[key] -= 1
            loads[target] = loads.get(target, 0) + 1
    return moves


#: How long a host's outlook is reused before the transport is asked again (seconds of the scheduler's clock).
OUTLOOK_TTL_S = 0.05
#: Queued papers are revised at least this often while some can move, and after a worker reports back at
#: most every REVISE_MIN_S or REVISE_COST_FACTOR times the last revision's cost: a few per cent of a core at most.
REVISE_S = 0.1
REVISE_MIN_S = 0.01
REVISE_COST_FACTOR = 20.0


@runtime_checkable
class Movable(Protocol):
    """A job with several copies: the URLs its next request may use (preferred first), and the pick among them."""

    @property
    def copies(self) -> tuple[str, ...]: ...

    def choose(self, url: str) -> None: ...


class Placement:
    """The scheduler's side of the rule. A job takes part when it has ``copies`` (its next request's URLs,
    preferred first) and ``choose(url)``; every other job is queued under its own ``url``.
    Not thread-safe: the scheduler calls it under its lock."""

    def __init__(self, transport: Any, *, since: float | None, max_host_wait_s: float) -> None:
        self.transport = transport
        self.since = since
        self.max_host_wait_s = max_host_wait_s
        self.movable: dict[int, tuple[tuple[str, str], ...]] = {}  # id(job) -> its copies, while it is queued
        self.revised_at = -math.inf
        self._gap = REVISE_MIN_S
        self.reports_seen = 0
        self._outlooks: dict[str, tuple[float, Outlook]] = {}
        self._enabled = callable(getattr(transport, "snapshot", None))

    def copies_of(self, job: object, url: str, key_of: Any) -> tuple[tuple[str, str], ...]:
        """*job*'s copies as ``(host key, url)``, one per host, *url*'s host first when it is one of them;
        ``()`` when the job cannot move (one copy, no ``choose``, or a transport without snapshots)."""
        urls = job.copies if self._enabled and isinstance(job, Movable) else ()
        if len(urls) < 2 or url not in urls:
            return ()
        pairs: dict[str, str] = {}
        for u in urls:
            key = key_of(u)
            if key not in pairs and self._sends(u):
                pairs[key] = u
        return tuple(pairs.items()) if len(pairs) > 1 else ()

    def place(self, job: object, url: str, key_of: Callable[[str], str], load_of: Callable[[str], int],
              now: float) -> tuple[str, str] | None:
        """The ``(host key, url)`` a job with copies is queued for (:func:`earliest`); ``None``: it cannot move."""
        copies = self.copies_of(job, url, key_of)
        if not copies:
            self.movable.pop(id(job), None)  # its next request may be other than when it was placed
            return None
        self.movable[id(job)] = copies
        outlooks = {k: self.outlook(k, u, now) for k, u in copies}
        return copies[earliest([k for k, _ in copies], outlooks, {k: load_of(k) for k, _ in copies})]

    def take(self, job: object, url: str) -> None:
        """*job* leaves its queue for a worker: the copy it was queued under becomes its next request."""
        if self.movable.pop(id(job), None) is not None and isinstance(job, Movable):
            job.choose(url)

    def revise(self, queues: Mapping[str, deque], urls: Mapping[str, str], now: float,
               reports: int) -> list[tuple[Any, str, str]]:
        """Apply :func:`revise` to the scheduler's queues (host key -> deque of ``(job, url)``; *urls*: one URL per
        host): moved jobs leave their deques and come back as ``(job, target key, url)`` to append."""
        self.revised_at, self.reports_seen = now, reports
        started = time.perf_counter()
        try:
            return self._revise(queues, urls, now)
        finally:
            self._gap = max(REVISE_MIN_S, REVISE_COST_FACTOR * (time.perf_counter() - started))

    def _revise(self, queues: Mapping[str, deque], urls: Mapping[str, str], now: float) -> list[tuple[Any, str, str]]:
        movable = self.movable
        for jobs in queues.values():
            self._fixed_first(jobs)
        entries = {k: [(id(job), movable.get(id(job))) for job, _ in jobs] for k, jobs in queues.items()}
        by_source: dict[str, dict[Hashable, Move]] = {}
        for move in revise(entries, self._fresh_outlooks(entries, urls, now)):
            by_source.setdefault(move.source, {})[move.token] = move
        out: list[tuple[Any, str, str]] = []
        for key, moves in by_source.items():
            jobs = queues[key]
            kept = [(job, url) for job, url in jobs if id(job) not in moves]
            out.extend((job, moves[id(job)].target, moves[id(job)].url) for job, _ in jobs if id(job) in moves)
            jobs.clear()
            jobs.extend(kept)
        return out

    def _fixed_first(self, jobs: deque) -> None:
        """Papers that can go nowhere else first in *jobs*: the others may still move."""
        movable = self.movable
        if any(id(a) in movable and id(b) not in movable for (a, _), (b, _) in zip(jobs, list(jobs)[1:])):
            ordered = [e for e in jobs if id(e[0]) not in movable] + [e for e in jobs if id(e[0]) in movable]
            jobs.clear()
            jobs.extend(ordered)

    def _fresh_outlooks(self, entries: Mapping[str, Any], urls: Mapping[str, str], now: float) -> dict[str, Outlook]:
        """The outlook, read now, of every host with a queue and of every host a queued paper could move to."""
        outlooks = {k: self.outlook(k, urls[k], now, fresh=True) for k in entries}
        for copies in self.movable.values():
            for k, u in copies:
                if k not in outlooks:
                    outlooks[k] = self.outlook(k, u, now, fresh=True)
        return outlooks

    def _sends(self, url: str) -> bool:
        try:
            return bool(self.transport.would_send(url))
        except Exception:  # noqa: BLE001 - an odd URL: not a place to move to
            return False

    def outlook(self, key: str, url: str, now: float, *, fresh: bool = False) -> Outlook:
        """The host's outlook, read again when *fresh* or older than :data:`OUTLOOK_TTL_S`."""
        cached = self._outlooks.get(key)
        if not fresh and cached is not None and now - cached[0] < OUTLOOK_TTL_S:
            return cached[1]
        try:
            serves = not self.transport.breaker_ends_batch(url, since=self.since, max_host_wait_s=self.max_host_wait_s)
            value = outlook_from_snapshot(self.transport.snapshot(url), serves=serves)
        except Exception:  # noqa: BLE001 - a host the transport cannot describe is taken as open
            value = OPEN
        self._outlooks[key] = (now, value)
        return value

    def due(self, now: float, reports: int) -> bool:
        """Whether queued papers should be revised now (*reports*: how many dispatches came back so far)."""
        if not self.movable:
            return False
        since = now - self.revised_at
        return since >= max(REVISE_S, self._gap) or (reports != self.reports_seen and since >= self._gap)
