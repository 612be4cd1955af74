"""The dashboard's model: it counts a batch's events and reads the clients' snapshots (docs/dashboard.md)."""

from __future__ import annotations

import copy
import logging
import math
import sys
import threading
from collections import Counter, deque
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol

from paperfetch.cells import clip
from paperfetch.clock import SYSTEM_CLOCK, Clock, utc
from paperfetch.dashboard.snapshot import ROW_COLUMNS, BatchSnapshot, HostRow, RecentEvent
from paperfetch.dashboard.tables import duration_cell, store_label
from paperfetch.http.events import Event, EventKind
from paperfetch.http.exceptions import unreachable_kind
from paperfetch.http.hosts import HostSnapshot, host_key
from paperfetch.http.pools import Pool, pool_host
from paperfetch.http.scheduler import NO_REQUEST
from paperfetch.http.status import shown_hosts
from paperfetch.integrity import met_by
from paperfetch.outcomes import NOTABLE_STATUSES, Status
from paperfetch.redact import redact_text

if TYPE_CHECKING:  # pragma: no cover

    from paperfetch.http.client import HttpClient

__all__ = ["BatchSnapshot", "DashboardModel", "HostRow", "QueueSource", "RECENT_EVENTS", "ROW_COLUMNS", "RecentEvent"]

logger = logging.getLogger(__name__)

#: How many notable events the model keeps.
RECENT_EVENTS = 50

_STATUS_ORDER = [s.value for s in Status]
_IGNORED = frozenset({EventKind.WAIT, EventKind.RETRY, EventKind.REDIRECT})
_NOT_FOUND = frozenset({404, 410})


class QueueSource(Protocol):
    """What :meth:`DashboardModel.track` reads: jobs queued per host (a :class:`~paperfetch.http.scheduler.HostScheduler`)."""

    def queued(self) -> Mapping[str, int]: ...


class _Host:
    """This run's counts for one host, plus the politeness a model without a client learns from events (``record``)."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.requests = self.in_flight = self.ok = self.errors = self.not_sent = self.not_found = 0
        self.unreachable = ""
        self.last_status: int | None = None
        self.record = HostSnapshot(key)  # its counts are the row's own

    def apply(self, event: Event) -> RecentEvent | None:
        """Count *event* (one of this host's); the line it adds to the recent events, if any."""
        kind, detail = event.kind, event.detail
        if kind in (EventKind.RESPONSE, EventKind.NETWORK_ERROR):
            self.in_flight = max(0, self.in_flight - 1)
        if kind is EventKind.REQUEST:
            self.requests += 1
            self.in_flight += 1
        elif kind is EventKind.RESPONSE:
            self.last_status = status = event.status
            self.unreachable = ""  # it answered
            if status is not None and 200 <= status < 400:
                self.ok += 1
            elif status in _NOT_FOUND:
                self.not_found += 1
            else:
                self.errors += 1
        elif kind is EventKind.NETWORK_ERROR:
            self.errors += 1
            self.unreachable = unreachable_kind(detail)
        elif kind in (EventKind.HELD, EventKind.SUPPRESSED, EventKind.DISALLOWED):
            self.not_sent += 1
            if detail.startswith("breaker open: unreachable") and not self.unreachable:
                self.unreachable = unreachable_kind(detail) or "dns"
        return self._politeness(event)

    def _politeness(self, event: Event) -> RecentEvent | None:
        """What a politeness event changes (a model without a client shows it); the line of a notable one."""
        kind, detail, seconds = event.kind, event.detail, event.seconds
        if kind is EventKind.DISALLOWED:
            return RecentEvent(event.at, event.host, "disallowed", f"robots.txt disallows {event.url or 'the URL'}")
        if kind is EventKind.HOLD:
            self.record = replace(self.record, held_until=utc(event.at + (seconds or 0.0)), hold_status=event.status,
                                  hold_reason=detail)
            return RecentEvent(event.at, event.host, "hold", f"held for {duration_cell(seconds or 0.0)}: {detail}".rstrip(": "))
        if kind is EventKind.SUPPRESS:
            self.record = replace(self.record, suppressed=True, suppressed_reason=detail or "HTTP 403",
                                  suppressed_until=utc(event.at + seconds) if seconds else None)
            ttl = f" for {duration_cell(seconds)}" if seconds else ""
            return RecentEvent(event.at, event.host, "suppress", f"suppressed{ttl}: {self.record.suppressed_reason}")
        if kind is EventKind.BACKOFF:
            self.record = replace(self.record, backoff_s=seconds or 0.0)
        elif kind is EventKind.ROBOTS:
            self.record = replace(self.record, robots=detail.split(":", 1)[0] or None)
            if detail.startswith("unreachable"):
                return RecentEvent(event.at, event.host, "robots", f"robots.txt {detail}")
        return None


def _from_events(h: _Host, now: float) -> tuple[HostSnapshot, float]:
    """The politeness record a model without a client knows from events, its ended hold and suppression
    gone; and the hold's time left."""
    record = h.record
    left = record.held_until.timestamp() - now if record.held_until is not None else 0.0
    if left <= 0:
        record = replace(record, held_until=None, hold_status=None, hold_reason="")
    if record.suppressed_until is not None and now >= record.suppressed_until.timestamp():
        record = replace(record, suppressed=False, suppressed_reason=None, suppressed_until=None)
    ready = math.inf if record.suppressed else max(0.0, left)
    return replace(record, next_allowed_at=record.held_until, ready_in_s=ready), max(0.0, left)


class DashboardModel:
    """Counts what a batch does, from transport events and item completions (docs/dashboard.md). *clock*
    measures the countdowns of event-fed holds (a watched client's own clock those read from it);
    *recent* is how many notable events to keep."""

    def __init__(self, *, clock: Clock | None = None, recent: int = RECENT_EVENTS) -> None:
        self._clock: Clock = clock if clock is not None else SYSTEM_CLOCK
        self._lock = threading.Lock()
        self._hosts: dict[str, _Host] = {}
        self._counts: Counter[str] = Counter()
        self._met: Counter[str] = Counter()  # retracted papers and notices the batch met (paperfetch.integrity)
        self._events: deque[RecentEvent] = deque(maxlen=recent)
        self._total = 0
        self._done = 0
        self._running = False
        self._started_at: float | None = None
        self._finished_at: float | None = None
        self._clients: list[tuple[HttpClient, frozenset[str] | None]] = []
        self._unsubscribe: list[Callable[[], None]] = []
        self._scheduler: QueueSource | None = None
        self._final_queues: dict[str, int] = {}
        self._final: BatchSnapshot | None = None  # the run's end, frozen: every later snapshot
        self._ending = ""
        #: The ended run's outcomes (a :class:`paperfetch.plot.RunSummary`): the saved view's summary plot.
        self.summary: Any = None
        #: Grows with every change; a view redraws only when it moved (read without the lock).
        self.version = 0

    def watch(self, client: HttpClient, *, hosts: Iterable[str] | None = None, events: bool = True) -> DashboardModel:
        """Read *client*'s snapshots (of *hosts* only, when given) and, with *events*, its events until :meth:`finish`."""
        if any(c is client and (h is None) == (hosts is None) for c, h in self._clients):
            return self
        self._clients.append((client, None if hosts is None else frozenset(h.lower() for h in hosts)))
        if events:
            self._unsubscribe.append(client.subscribe(self.on_event))
        return self

    def track(self, scheduler: QueueSource) -> None:
        """Read the queued jobs per host from *scheduler* (until :meth:`finish`)."""
        self._scheduler = scheduler

    def start(self, total: int) -> None:
        with self._lock:
            self._total = int(total)
            self._final = None
            self._running = True
            self._started_at = self._clock.time()
            self._finished_at = None
            self._ending = ""
            self.summary = None
            self.version += 1

    def finish(self, *, ending: str | None = None) -> None:
        """The run is over: stop listening and freeze, so :meth:`snapshot` returns this moment until the next
        :meth:`start`. *ending* (``ended``, ``interrupted``, ``stopped``) defaults to what the exception on its way
        says, else ``stopped`` when rows were counted ``stopped`` (a job's Stop), else ``ended``."""
        if ending is None:
            pending = sys.exc_info()[1]
            if isinstance(pending, KeyboardInterrupt):
                ending = "interrupted"
            elif pending is not None or self._counts.get(Status.STOPPED.value):
                ending = "stopped"
            else:
                ending = "ended"
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        final = self._queues()
        self._scheduler = None
        with self._lock:
            self._final_queues = final
            for h in self._hosts.values():
                h.in_flight = 0
            ran = self._running
            if ran:
                self._finished_at = self._clock.time()
                self._ending = ending
            self._running = False
            self.version += 1
        if ran:
            self._final = self._take_snapshot()

    @property
    def running(self) -> bool:
        return self._running

    def on_event(self, event: Event) -> None:
        """The event subscriber (called in the transport's threads)."""
        if event.kind in _IGNORED:
            return
        with self._lock:
            note = self._hosts.setdefault(event.host, _Host(event.host)).apply(event)
            if note is not None:
                self._events.append(note)
            self.version += 1

    def note(self, kind: str, message: str, *, url: str | None = None) -> None:
        """A line in the recent events that no transport event carries (a title mismatch)."""
        host = _host_of(url)
        with self._lock:
            self._events.append(RecentEvent(self._clock.time(), host, kind, clip(redact_text(message), 300)))
            self.version += 1

    def item_finished(self, status: str | Status, *, url: str | None = None, error: str | None = None,
                      key: str | None = None, row: Mapping[str, Any] | None = None) -> None:
        name = status.value if isinstance(status, Status) else str(status)
        note = None
        if name in NOTABLE_STATUSES:
            first = (error or "").split("; ")[0] or name.replace("_", " ")
            message = redact_text(f"{key}: {first}" if key else first)
            note = RecentEvent(self._clock.time(), _host_of(url), name, clip(message, 300))
        with self._lock:
            self._counts[name] += 1
            self._met.update(met_by(row))
            self._done += 1
            if note is not None:
                self._events.append(note)
            self.version += 1

    def snapshot(self) -> BatchSnapshot:
        """The state now (once ended: at its end), as frozen data; thread-safe, microseconds per host."""
        final = self._final
        return final if final is not None else self._take_snapshot()

    def _take_snapshot(self) -> BatchSnapshot:
        queues = self._queues() if self._scheduler is not None else None
        politeness = self._politeness()
        now = self._clock.time()
        with self._lock:
            if queues is None:
                queues = dict(self._final_queues)
            hosts = {k: copy.copy(h) for k, h in self._hosts.items()}
            counts = {s: self._counts[s] for s in _STATUS_ORDER if s in self._counts}
            counts.update({s: n for s, n in self._counts.items() if s not in counts})
            snap: dict[str, Any] = dict(
                at=now, total=self._total, done=self._done, counts=counts, events=list(self._events),
                running=self._running, started_at=self._started_at, finished_at=self._finished_at, version=self.version,
                ending=self._ending, met=dict(self._met),
            )
            ended = not self._running and self._finished_at is not None
        snap["store"] = store_label(self._store_name())
        keys = sorted(set(hosts) | set(queues) | set(politeness))
        labels = dict(zip(keys, shown_hosts(keys, self._pools())))  # pools as people read them
        snap["events"] = tuple(replace(e, host=labels.get(e.host) or pool_host(e.host)) for e in snap["events"])
        rows = [replace(_host_row(key, hosts.get(key), queues.get(key, 0), politeness.get(key), ended, now),
                        label=labels[key]) for key in keys]
        if snap["started_at"] is None:  # before any run: the hosts the store knows, as they are
            return BatchSnapshot(hosts=tuple(rows), **snap)
        seen = set(hosts) | set(queues)  # the hosts of this run's events and queues
        mine = tuple(r for r in rows if r.host in seen)
        others = tuple(r for r in rows if r.host not in seen and (r.held or r.suppressed or r.breaker == "open"))
        return BatchSnapshot(hosts=mine, others=others, **snap)

    def _queues(self) -> dict[str, int]:
        scheduler = self._scheduler
        if scheduler is None:
            return {}
        try:
            return {k: n for k, n in scheduler.queued().items() if k != NO_REQUEST and n}
        except Exception:  # noqa: BLE001 - a dashboard never breaks a run
            return {}

    def _pools(self) -> dict[str, tuple[Pool, ...]]:
        """The pools the watched clients declare (their labels are what people read), by host."""
        return {host: rules for client, _ in self._clients for host, rules in client.config.pools.items()}

    def _store_name(self) -> str:
        for client, _ in self._clients:
            try:
                return str(client.store.name)
            except Exception:  # noqa: BLE001
                continue
        return ""

    def _politeness(self) -> dict[str, tuple[HostSnapshot, float]]:
        """Each known host's snapshot and hold time left, read through the client that paces (or was watched for) it."""
        result: dict[str, tuple[HostSnapshot, float]] = {}
        general = any(hosts is None for _, hosts in self._clients)
        listed: list[Any] = []  # the registries whose hosts are listed already
        for client, hosts in sorted(self._clients, key=lambda pair: pair[1] is not None):  # the general ones first
            try:
                registry = client.registry
                if hosts is not None and any(registry is seen for seen in listed):
                    # the same store, listed already: only this client's hosts, read through it
                    snapshots = [client.snapshot(key) for key in sorted(hosts & result.keys())]
                else:  # every host of the store: holds other processes set included
                    snapshots = client.snapshots()
                    listed.append(registry)
                wall = client.clock.time()
            except Exception:  # noqa: BLE001 - a store that does not answer never breaks a view
                logger.debug("could not read the hosts of a watched client", exc_info=True)
                continue
            for snap in snapshots:
                left = 0.0 if snap.held_until is None else max(0.0, snap.held_until.timestamp() - wall)
                mine = hosts is not None and snap.host in hosts  # a specific client's own host wins
                if mine or (snap.host not in result and (hosts is None or not general)):
                    result[snap.host] = (snap, left)
        return result


def _host_of(url: str | None) -> str:
    if not url:
        return ""
    try:
        return host_key(url)
    except Exception:  # noqa: BLE001
        return ""


def _host_row(key: str, h: _Host | None, queued: int, live: tuple[HostSnapshot, float] | None, ended: bool,
              now: float) -> HostRow:
    """One host's row: this run's counts, and its politeness from the client (else from the events)."""
    fields: dict[str, Any] = {"host": key, "queued": queued, "run_ended": ended}
    if h is not None:
        fields.update(in_flight=h.in_flight, requests=h.requests, ok=h.ok, errors=h.errors, not_sent=h.not_sent,
                      last_status=h.last_status, not_found=h.not_found, unreachable=h.unreachable)
    if live is None and h is not None:  # no client: what the events said
        live = _from_events(h, now)
    if live is not None:
        fields.update(politeness=live[0], hold_left_s=live[1])
    return HostRow(**fields)
