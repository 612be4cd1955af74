"""A live dashboard for a batch: a plain model fed by events, and a thin ipywidgets view over it.

Three parts, each usable alone:

* :class:`DashboardModel` listens: it subscribes to the transport's events
  (:meth:`HttpClient.subscribe <paperfetch.http.client.HttpClient.subscribe>`) and is told about
  finished items (:meth:`~DashboardModel.item_finished`). It only counts, under one lock, a few
  microseconds per event. :meth:`~DashboardModel.snapshot` returns a :class:`BatchSnapshot`:
  plain frozen data, cheap to take, safe from any thread.
* :class:`Dashboard` shows: an ipywidgets view (progress bar with counts by status, a per-host
  table, the recent notable events) redrawn from snapshots by a timer, at most
  ``1 / interval_s`` times a second (4 by default) whatever the event rate, each redraw inside
  ``hold_sync()``, and once more on :meth:`~Dashboard.close`. Displayed, it is a mime bundle: the
  widget's view plus static ``text/html`` and ``text/plain`` of the same moment; once the run has
  ended, the final state alone, and the output :meth:`~Dashboard.show` made is replaced by it, so
  a saved notebook keeps a readable record without a kernel. ``Dashboard(enabled=False)`` does
  nothing. Its ``repr`` is text, for terminals.
* :func:`style_domain_status` formats :meth:`Retriever.domain_status
  <paperfetch.Retriever.domain_status>` for people (a pandas ``Styler``): held rows amber and
  suppressed rows red, seconds to one decimal, times to the second, empty cells empty.

One answer per notebook
-----------------------

While a run goes, holds count down ("HELD 12:34 left"). When it ends, :meth:`DashboardModel.finish`
freezes the model: every view of that run (the one shown during it, any ``r.dashboard()`` later)
shows the same final snapshot, "ended HH:MM:SS UTC", holds as clock times ("HELD until 17:04:10
UTC"), and nothing counts down any more. The politeness state *now* is ``r.domain_status()``.

The host table
--------------

One line per host, problem hosts (held, suppressed) first. Its columns are :data:`HOST_COLUMNS`,
one :class:`HostColumn` each, used by the HTML and the text view alike: a new per-host figure is
a field of :class:`HostSnapshot`, filled where the host's state is read (:func:`_read_limiter`,
the one place that reads the transport's per-host record, or the events), and one line in
:data:`HOST_COLUMNS`. The HTML table has fixed column widths (``table-layout: fixed``): numbers
right-aligned with padding, the state column (with until when and why) takes the room left and
cuts its text with ``…``, the whole text on hover. It fits a 1024 px window.

Where each number comes from
----------------------------

* **counts by status, done, total** — :meth:`~DashboardModel.start` and
  :meth:`~DashboardModel.item_finished` (the Retriever calls them once per input row).
* **queued** — the :class:`~paperfetch.batch.HostScheduler`'s per-host queues
  (:meth:`~DashboardModel.track`), read under the scheduler's lock when a snapshot is taken.
  Events cannot tell this: a job waiting in a queue makes none. Jobs whose next step sends no
  request (the scheduler's ``"(no request)"`` queue) are not shown.
* **in flight** — ``REQUEST`` events minus ``RESPONSE`` and ``NETWORK_ERROR`` events, per host:
  requests on the wire, robots.txt and redirect hops included, from every watched client (the
  scheduler's own in-flight figure counts jobs, including those sleeping inside the transport).
* **requests, OK, errors, last status, not sent** — events: OK is a response below 400 (as
  :class:`~paperfetch.http.hosts.HostLimiter` counts), errors are other responses and network
  errors, *not sent* are requests answered without sending (``HELD``, ``SUPPRESSED``,
  ``DISALLOWED``). *done* is their sum. These count this run only.
* **delay range, backoff, hold, suppression, Crawl-delay, robots** — the host's shared record
  read through the client that paces it, exactly as ``domain_status()`` does, when the snapshot is
  taken: so a hold set before the run, or released by hand (which publishes no event), shows as it
  is. Without a watched client (a model fed events by hand), from ``HOLD``, ``SUPPRESS`` and
  ``BACKOFF`` events.

The host table lists every host the watched clients' registry knows (the process-wide state that
``domain_status()`` shows) plus every host seen in this run's events or queues.
"""

from __future__ import annotations

import html
import importlib.util
import logging
import math
import sys
import threading
import time
import weakref
from collections import deque
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, cast

from paperfetch.clock import SYSTEM_CLOCK, Clock
from paperfetch.http.events import Event, EventKind
from paperfetch.http.hosts import host_key
from paperfetch.outcomes import NOTABLE_STATUSES, Status
from paperfetch.redact import redact_text

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from pandas.io.formats.style import Styler

    from paperfetch.batch import HostScheduler
    from paperfetch.http.client import HttpClient
    from paperfetch.retriever import Retriever

__all__ = [
    "BatchSnapshot",
    "Dashboard",
    "DashboardModel",
    "HOST_COLUMNS",
    "HostColumn",
    "HostSnapshot",
    "RecentEvent",
    "in_notebook",
    "style_domain_status",
    "widgets_available",
]

logger = logging.getLogger("paperfetch.widgets")

#: How many notable events the model keeps.
RECENT_EVENTS = 50
#: Item statuses that are logged as notable events (the transport reports the others itself).
#: Row colours: held (amber) and suppressed (red). The row also says HELD / SUPPRESSED in words.
HELD_COLOUR = "#fff3cd"
SUPPRESSED_COLOUR = "#f8d7da"

_STATUS_ORDER = [s.value for s in Status]
_IGNORED = frozenset({EventKind.WAIT, EventKind.RETRY, EventKind.REDIRECT})
_NO_REQUEST = "(no request)"  # paperfetch.batch.NO_REQUEST, not imported: no import cycle


# ---------------------------------------------------------------------- environment
def in_notebook() -> bool:
    """Whether this runs inside a Jupyter kernel (not a terminal IPython, not plain Python)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:  # not imported: not in IPython
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # noqa: BLE001
        return False
    if shell is None:
        return False
    if type(shell).__name__ == "ZMQInteractiveShell":
        return True
    try:
        return "IPKernelApp" in shell.config
    except Exception:  # noqa: BLE001
        return False


def widgets_available() -> bool:
    """Whether ipywidgets can be imported."""
    try:
        return importlib.util.find_spec("ipywidgets") is not None
    except (ImportError, ValueError):
        return False


# ---------------------------------------------------------------------- snapshots
@dataclass(frozen=True)
class RecentEvent:
    """One notable event: a hold set or released, a suppression, a robots.txt refusal, an invalid PDF."""

    at: float        #: wall-clock time (epoch seconds)
    host: str
    kind: str        #: ``hold``, ``hold_released``, ``suppress``, ``disallowed``, ``robots``, ``invalid_pdf``
    message: str     #: no secrets: URLs are redacted


@dataclass(frozen=True)
class HostSnapshot:
    """One host's row. Counts are this run's; the politeness fields are the host's state now."""

    host: str
    queued: int = 0
    in_flight: int = 0
    requests: int = 0            #: requests sent (robots.txt and redirect hops included)
    ok: int = 0                  #: responses below 400
    errors: int = 0              #: other responses, and network errors
    not_sent: int = 0            #: answered without a request: held, suppressed, disallowed
    last_status: int | None = None
    delay_min_s: float | None = None
    delay_max_s: float | None = None
    backoff_s: float = 0.0
    held_until: float | None = None      #: epoch seconds; None when not held
    hold_left_s: float = 0.0
    hold_status: int | None = None
    hold_reason: str = ""
    suppressed: bool = False
    suppressed_reason: str | None = None
    suppressed_until: float | None = None  #: epoch seconds; None: until further notice
    crawl_delay_s: float | None = None
    robots: str | None = None
    learned_interval_s: float = 0.0      #: the interval learned from the host's 429s
    breaker: str = "closed"              #: the host's circuit breaker: closed, open, half_open

    @property
    def done(self) -> int:
        return self.ok + self.errors + self.not_sent

    @property
    def held(self) -> bool:
        return self.hold_left_s > 0

    @property
    def touched(self) -> bool:
        """Whether this run did anything with the host (or has something queued for it)."""
        return bool(self.queued or self.in_flight or self.requests or self.not_sent)

    @property
    def state(self) -> str:
        """In words: ``SUPPRESSED``, ``HELD`` (both, joined by ``+``), ``busy``, ``queued``, ``backoff`` or ``idle``."""
        words = [w for w, on in (("SUPPRESSED", self.suppressed), ("HELD", self.held)) if on]
        if words:
            return " + ".join(words)
        if self.in_flight:
            return "busy"
        if self.queued:
            return "queued"
        if self.backoff_s > 0:
            return "backoff"
        return "idle"


@dataclass(frozen=True)
class BatchSnapshot:
    """Everything the dashboard shows, at one moment. Plain data: compare it, print it, test it."""

    at: float                                   #: wall-clock time of the snapshot (epoch seconds)
    total: int = 0
    done: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)   #: outcome status -> rows, in Status order
    hosts: tuple[HostSnapshot, ...] = ()        #: sorted by host
    events: tuple[RecentEvent, ...] = ()        #: oldest first
    running: bool = False
    started_at: float | None = None
    finished_at: float | None = None
    version: int = 0                            #: grows with every change the model saw
    store: str = ""                             #: the host-state store the hosts were read from ("memory", "sqlite:/…", "redis://…")

    def host(self, key: str) -> HostSnapshot | None:
        for h in self.hosts:
            if h.host == key:
                return h
        return None

    @property
    def held(self) -> tuple[HostSnapshot, ...]:
        return tuple(h for h in self.hosts if h.held)

    @property
    def suppressed(self) -> tuple[HostSnapshot, ...]:
        return tuple(h for h in self.hosts if h.suppressed)

    @property
    def requests(self) -> int:
        return sum(h.requests for h in self.hosts)

    @property
    def elapsed_s(self) -> float | None:
        if self.started_at is None:
            return None
        end = self.finished_at if self.finished_at is not None else self.at
        return max(0.0, end - self.started_at)

    def summary(self) -> str:
        """One line: progress and counts by status."""
        elapsed = self.elapsed_s
        took = f" in {elapsed:.1f}s" if elapsed is not None else ""
        if self.running:
            head = f"paperfetch running: {self.done}/{self.total} done{took}"
        elif self.finished_at is not None:
            ended = datetime.fromtimestamp(self.finished_at, tz=timezone.utc).strftime("%H:%M:%S")
            head = f"paperfetch ended {ended} UTC: {self.done}/{self.total} done{took}"
        else:
            head = f"paperfetch idle: {self.done}/{self.total} done"
        counts = ", ".join(f"{status} {n}" for status, n in self.counts.items() if n)
        return f"{head}" + (f" ({counts})" if counts else "")

    def hosts_frame(self) -> "pd.DataFrame":
        """The host table as a DataFrame (one row per host, the fields of :class:`HostSnapshot`, plus state)."""
        import pandas as pd

        names = [f for f in HostSnapshot.__dataclass_fields__]
        rows = [{**{n: getattr(h, n) for n in names}, "done": h.done, "state": h.state} for h in self.hosts]
        return pd.DataFrame(rows, columns=[*names, "done", "state"])


# ---------------------------------------------------------------------- the model
class _Host:
    __slots__ = (
        "key", "requests", "in_flight", "ok", "errors", "not_sent", "last_status", "backoff_s", "held_until",
        "hold_status", "hold_reason", "suppressed_reason", "suppressed_until", "suppressed", "robots",
    )

    def __init__(self, key: str) -> None:
        self.key = key
        self.requests = self.in_flight = self.ok = self.errors = self.not_sent = 0
        self.last_status: int | None = None
        self.backoff_s = 0.0
        self.held_until: float | None = None
        self.hold_status: int | None = None
        self.hold_reason = ""
        self.suppressed = False
        self.suppressed_reason: str | None = None
        self.suppressed_until: float | None = None
        self.robots: str | None = None


class DashboardModel:
    """Counts what a batch does, from transport events and item completions; see the module doc.

    :param clock: the clock the countdowns of event-fed holds are measured on (wall time);
        a watched client's own clock is used for the holds read from it.
    :param recent: how many notable events to keep.
    """

    def __init__(self, *, clock: Clock | None = None, recent: int = RECENT_EVENTS) -> None:
        self._clock: Clock = clock if clock is not None else SYSTEM_CLOCK
        self._lock = threading.Lock()
        self._hosts: dict[str, _Host] = {}
        self._counts: dict[str, int] = {}
        self._events: deque[RecentEvent] = deque(maxlen=recent)
        self._total = 0
        self._done = 0
        self._running = False
        self._started_at: float | None = None
        self._finished_at: float | None = None
        self._clients: list[tuple["HttpClient", frozenset[str] | None]] = []
        self._unsubscribe: list[Callable[[], None]] = []
        self._scheduler: "HostScheduler | None" = None
        self._final_queues: dict[str, int] = {}
        self._final: BatchSnapshot | None = None  # the run's end, frozen: every later snapshot
        #: Grows with every change; a view redraws only when it moved (read without the lock).
        self.version = 0

    # -- wiring ----------------------------------------------------------------
    def watch(self, client: "HttpClient", *, hosts: Iterable[str] | None = None, events: bool = True) -> "DashboardModel":
        """Read *client*'s politeness state (for *hosts* only, when given; it then wins over a client
        watched without *hosts*) and, with *events*, subscribe to its events until :meth:`finish`."""
        if any(c is client and (h is None) == (hosts is None) for c, h in self._clients):
            return self
        self._clients.append((client, None if hosts is None else frozenset(h.lower() for h in hosts)))
        if events:
            self._unsubscribe.append(client.subscribe(self.on_event))
        return self

    def watch_retriever(self, retriever: "Retriever", *, events: bool = True) -> "DashboardModel":
        """Watch both clients of a Retriever; the metadata services' hosts are read through its API
        client, the others through its web client (as ``Retriever.domain_status()`` does)."""
        self.watch(retriever.web, events=events)
        if retriever.api is not retriever.web:
            api_hosts = set(retriever.api_hosts)
            self.watch(retriever.api, hosts=api_hosts, events=events)
        return self

    def track(self, scheduler: "HostScheduler") -> None:
        """Read the queued jobs per host from *scheduler* (until :meth:`finish`)."""
        self._scheduler = scheduler

    def start(self, total: int) -> None:
        """A run of *total* items begins."""
        with self._lock:
            self._total = int(total)
            self._final = None
            self._running = True
            self._started_at = self._clock.time()
            self._finished_at = None
            self.version += 1

    def add_total(self, n: int) -> None:
        with self._lock:
            self._total += int(n)
            self.version += 1

    def finish(self) -> None:
        """The run is over: stop listening, keep the scheduler's last queue lengths, nothing is in flight,
        and freeze: from now on :meth:`snapshot` returns the state at this moment (until the next
        :meth:`start`), so every view of the run tells the same story; its holds no longer count down."""
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
            self._running = False
            self.version += 1
        if ran:
            self._final = self._take_snapshot()

    @property
    def running(self) -> bool:
        return self._running

    # -- feeding -----------------------------------------------------------------
    def on_event(self, event: Event) -> None:
        """The event subscriber (called in the transport's threads)."""
        kind = event.kind
        if kind in _IGNORED:
            return
        note: RecentEvent | None = None
        with self._lock:
            h = self._hosts.get(event.host)
            if h is None:
                h = self._hosts[event.host] = _Host(event.host)
            if kind is EventKind.REQUEST:
                h.requests += 1
                h.in_flight += 1
            elif kind is EventKind.RESPONSE:
                if h.in_flight > 0:
                    h.in_flight -= 1
                status = event.status
                h.last_status = status
                if status is not None and 200 <= status < 400:
                    h.ok += 1
                else:
                    h.errors += 1
            elif kind is EventKind.NETWORK_ERROR:
                if h.in_flight > 0:
                    h.in_flight -= 1
                h.errors += 1
            elif kind is EventKind.HELD or kind is EventKind.SUPPRESSED:
                h.not_sent += 1
            elif kind is EventKind.DISALLOWED:
                h.not_sent += 1
                note = RecentEvent(event.at, event.host, "disallowed", f"robots.txt disallows {event.url or 'the URL'}")
            elif kind is EventKind.HOLD:
                seconds = event.seconds or 0.0
                h.held_until = event.at + seconds
                h.hold_status = event.status
                h.hold_reason = event.detail
                note = RecentEvent(event.at, event.host, "hold", f"held for {_duration(seconds)}: {event.detail}".rstrip(": "))
            elif kind is EventKind.HOLD_RELEASED:
                h.held_until = None
                h.hold_status = None
                h.hold_reason = ""
                note = RecentEvent(event.at, event.host, "hold_released", "hold released")
            elif kind is EventKind.SUPPRESS:
                h.suppressed = True
                h.suppressed_reason = event.detail or "HTTP 403"
                h.suppressed_until = event.at + event.seconds if event.seconds else None
                ttl = f" for {_duration(event.seconds)}" if event.seconds else ""
                note = RecentEvent(event.at, event.host, "suppress", f"suppressed{ttl}: {h.suppressed_reason}")
            elif kind is EventKind.BACKOFF:
                h.backoff_s = event.seconds or 0.0
            elif kind is EventKind.ROBOTS:
                h.robots = event.detail.split(":", 1)[0] or None
                if event.detail.startswith("unreachable"):
                    note = RecentEvent(event.at, event.host, "robots", f"robots.txt {event.detail}")
            if note is not None:
                self._events.append(note)
            self.version += 1

    def note(self, kind: str, message: str, *, url: str | None = None) -> None:
        """A line in the recent events that no transport event carries (issue 12: a title mismatch)."""
        try:
            host = host_key(url) if url else ""
        except Exception:  # noqa: BLE001
            host = ""
        with self._lock:
            self._events.append(RecentEvent(self._clock.time(), host, kind, _clip(redact_text(message), 300)))
            self.version += 1

    def item_finished(self, status: str | Status, *, url: str | None = None, error: str | None = None,
                      key: str | None = None) -> None:
        """One item (one input row) has its outcome."""
        status = status.value if isinstance(status, Status) else str(status)
        note = None
        if status in NOTABLE_STATUSES:
            host = ""
            if url:
                try:
                    host = host_key(url)
                except Exception:  # noqa: BLE001
                    host = ""
            first = (error or "").split("; ")[0] or status.replace("_", " ")
            message = redact_text(f"{key}: {first}" if key else first)
            note = RecentEvent(self._clock.time(), host, status, _clip(message, 300))
        with self._lock:
            self._counts[status] = self._counts.get(status, 0) + 1
            self._done += 1
            if note is not None:
                self._events.append(note)
            self.version += 1

    # -- reading -----------------------------------------------------------------
    def snapshot(self) -> BatchSnapshot:
        """The state now, as plain frozen data; once the run has ended, the state at its end.
        Thread-safe; costs a few microseconds per host."""
        final = self._final
        if final is not None:
            return final
        return self._take_snapshot()

    def _take_snapshot(self) -> BatchSnapshot:
        queues = self._queues() if self._scheduler is not None else None
        politeness = self._politeness()
        now = self._clock.time()
        with self._lock:
            if queues is None:
                queues = dict(self._final_queues)
            hosts = {k: _copy(h) for k, h in self._hosts.items()}
            counts = {s: self._counts[s] for s in _STATUS_ORDER if s in self._counts}
            counts.update({s: n for s, n in self._counts.items() if s not in counts})
            snap: dict[str, Any] = dict(
                at=now, total=self._total, done=self._done, counts=counts, events=tuple(self._events),
                running=self._running, started_at=self._started_at, finished_at=self._finished_at, version=self.version,
            )
        snap["store"] = self._store_name()
        keys = sorted(set(hosts) | set(queues) | set(politeness))
        rows = []
        for key in keys:
            h = hosts.get(key)
            fields: dict[str, Any] = {"host": key, "queued": queues.get(key, 0)}
            if h is not None:
                fields.update(
                    in_flight=h.in_flight, requests=h.requests, ok=h.ok, errors=h.errors, not_sent=h.not_sent,
                    last_status=h.last_status, backoff_s=h.backoff_s, robots=h.robots,
                )
            live = politeness.get(key)
            if live is not None:
                fields.update(live)
            elif h is not None:  # events only
                left = (h.held_until - now) if h.held_until is not None else 0.0
                if left > 0:
                    fields.update(held_until=h.held_until, hold_left_s=left, hold_status=h.hold_status, hold_reason=h.hold_reason)
                if h.suppressed and (h.suppressed_until is None or now < h.suppressed_until):
                    fields.update(suppressed=True, suppressed_reason=h.suppressed_reason, suppressed_until=h.suppressed_until)
            rows.append(HostSnapshot(**fields))
        return BatchSnapshot(hosts=tuple(rows), **snap)

    def _queues(self) -> dict[str, int]:
        scheduler = self._scheduler
        if scheduler is None:
            return {}
        try:
            return {k: n for k, n in scheduler.queued().items() if k != _NO_REQUEST and n}
        except Exception:  # noqa: BLE001 - a dashboard never breaks a run
            return {}

    def _store_name(self) -> str:
        for client, _ in self._clients:
            try:
                return str(client.registry.store.name)
            except Exception:  # noqa: BLE001
                continue
        return ""

    def _politeness(self) -> dict[str, dict[str, Any]]:
        """Each known host's politeness state, read through the client that paces it."""
        if not self._clients:
            return {}
        result: dict[str, dict[str, Any]] = {}
        general = [(c, h) for c, h in self._clients if h is None]
        specific = [(c, h) for c, h in self._clients if h is not None]
        seen: set[int] = set()
        for client, _ in general + specific:
            try:
                registry = client.registry
            except Exception:  # noqa: BLE001
                continue
            if id(registry) in seen:
                continue
            seen.add(id(registry))
            try:  # every host of the store: holds other processes set included
                limiters = registry.known_hosts(refresh=False)
            except Exception:  # noqa: BLE001 - a store that does not answer never breaks a view
                logger.debug("could not list the hosts of %s", registry.store.name, exc_info=True)
                limiters = registry.hosts()
            for limiter in limiters:
                owner = next((c for c, hosts in specific if limiter.key in hosts), None)
                if owner is None:
                    owner = general[0][0] if general else client
                try:
                    result[limiter.key] = _read_limiter(owner, limiter)
                except Exception:  # noqa: BLE001
                    logger.debug("could not read the state of %s", limiter.key, exc_info=True)
        return result


def _copy(h: _Host) -> _Host:
    c = _Host.__new__(_Host)
    for name in _Host.__slots__:
        setattr(c, name, getattr(h, name))
    return c


def _read_limiter(client: "HttpClient", limiter: Any) -> dict[str, Any]:
    """What ``client.domain_status()`` says about one host (its public snapshot), without a DataFrame."""
    snap = client.snapshot(limiter.key)
    state: dict[str, Any] = {
        "delay_min_s": snap.delay_min_s,
        "delay_max_s": snap.delay_max_s,
        "backoff_s": snap.backoff_s,
        "crawl_delay_s": snap.crawl_delay_s,
        "robots": snap.robots,
        "learned_interval_s": snap.learned_interval_s,
        "breaker": snap.breaker,
    }
    wall = client.clock.time()
    if snap.held_until is not None:
        until = snap.held_until.timestamp()
        state.update(held_until=until, hold_left_s=max(0.0, until - wall), hold_status=snap.hold_status,
                     hold_reason=snap.hold_reason)
    if snap.suppressed:
        state.update(
            suppressed=True, suppressed_reason=snap.suppressed_reason,
            suppressed_until=None if snap.suppressed_until is None else snap.suppressed_until.timestamp(),
        )
    return state


# ---------------------------------------------------------------------- rendering (pure)
def _duration(seconds: float | None) -> str:
    """``0:42``, ``12:34``, ``1:00:00`` (whole seconds, rounded up)."""
    if seconds is None or seconds != seconds or seconds == math.inf:
        return "?"
    total = max(0, math.ceil(seconds))
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _clock_time(at: float | None) -> str:
    if at is None:
        return ""
    return datetime.fromtimestamp(at, tz=timezone.utc).strftime("%H:%M:%S")


def _seconds(value: float | None) -> str:
    """``0.3 s``, ``12 s``; empty for None."""
    if value is None or value != value:
        return ""
    return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"


def _delay(h: HostSnapshot) -> str:
    if h.delay_min_s is None:
        return "none"
    low = _seconds(h.delay_min_s)[:-2]
    if h.delay_max_s is None or h.delay_max_s == h.delay_min_s:
        return f"{low} s"
    return f"{low}–{_seconds(h.delay_max_s)}"


def _hold_text(h: HostSnapshot, ended: bool = False) -> str:
    """``HELD 12:34 left (HTTP 503)`` while the run goes; ``HELD until 17:04:10 UTC (HTTP 503)`` once it ended."""
    if not h.held:
        return ""
    status = f" (HTTP {h.hold_status})" if h.hold_status else ""
    if ended:
        return f"HELD until {_clock_time(h.held_until)} UTC{status}"
    return f"HELD {_duration(h.hold_left_s)} left{status}"


def _suppression_text(h: HostSnapshot) -> str:
    if not h.suppressed:
        return ""
    until = f" until {_clock_time(h.suppressed_until)} UTC" if h.suppressed_until is not None else ""
    return f"SUPPRESSED{until}: {h.suppressed_reason or 'HTTP 403'}"


def _state_text(h: HostSnapshot, ended: bool = False) -> str:
    """The state in words; for a suppressed or held host, with until when and why, in one line."""
    parts = [_suppression_text(h)]
    hold = _hold_text(h, ended)
    if hold:
        parts.append(f"{hold}: {h.hold_reason}" if h.hold_reason else hold)
    return "; ".join(p for p in parts if p) or h.state


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ordered(hosts: Iterable[HostSnapshot]) -> list[HostSnapshot]:
    """Held and suppressed hosts first, then those this run touched, then the rest; by name within."""
    def rank(h: HostSnapshot) -> tuple[int, str]:
        return (0 if (h.held or h.suppressed) else 1 if h.touched else 2, h.host)

    return sorted(hosts, key=rank)


def _ended(snapshot: BatchSnapshot) -> bool:
    return snapshot.finished_at is not None and not snapshot.running


@dataclass(frozen=True)
class HostColumn:
    """One column of the host table, for the HTML and the text view alike.

    ``cell(host, ended)`` gives the text; ``numeric`` columns are right-aligned. In HTML each
    column is ``width`` wide (em; 0: the room left, for the last column), its text on one line, cut
    with ``…`` when longer, the whole text in the cell's ``title`` (shown on hover). A ``clip``
    column is also cut in the text view, at that many characters.
    """

    header: str
    cell: Callable[[HostSnapshot, bool], str]
    numeric: bool = False
    width: float = 0.0     #: em; 0: what is left
    clip: int = 0          #: the text view's limit; 0: never cut
    hint: str = ""         #: the header's tooltip


def _count(value: int) -> str:
    return str(value)


#: The host table, left to right. A new per-host figure is one line here (and a field of HostSnapshot).
HOST_COLUMNS: tuple[HostColumn, ...] = (
    HostColumn("host", lambda h, e: h.host, width=11.5, clip=40),
    HostColumn("state", _state_text, clip=90,
               hint="idle, busy, queued, backoff; SUPPRESSED or HELD with until when and why"),
    HostColumn("queued", lambda h, e: _count(h.queued), True, 6, hint="jobs waiting in the scheduler's queue"),
    HostColumn("in flight", lambda h, e: _count(h.in_flight), True, 5.8, hint="requests on the wire"),
    HostColumn("done", lambda h, e: _count(h.done), True, 4.2, hint="OK + errors + not sent, this run"),
    HostColumn("OK", lambda h, e: _count(h.ok), True, 3, hint="responses below 400, this run"),
    HostColumn("errors", lambda h, e: _count(h.errors), True, 5, hint="other responses, and network errors, this run"),
    HostColumn("not sent", lambda h, e: _count(h.not_sent), True, 5.8,
               hint="answered without a request: held, suppressed, disallowed"),
    HostColumn("last", lambda h, e: "" if h.last_status is None else str(h.last_status), True, 3.6, hint="the last HTTP status"),
    HostColumn("delay", lambda h, e: _delay(h), True, 6.2, hint="the pause between two requests to the host"),
    HostColumn("backoff", lambda h, e: _seconds(h.backoff_s) if h.backoff_s else "", True, 5.6, hint="added after errors"),
    HostColumn("crawl", lambda h, e: _seconds(h.crawl_delay_s), True, 4.6, hint="robots.txt Crawl-delay"),
)

# Inline styles (a saved notebook may drop <style> blocks); the notebook's own table CSS (fixed layout,
# right-aligned cells) is overridden on every cell.
_CELL = ("padding:1px 6px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;"
         "border-bottom:1px solid rgba(128,128,128,.25)")


def _align(column: HostColumn) -> str:
    return "text-align:right;font-variant-numeric:tabular-nums" if column.numeric else "text-align:left"


def _td(column: HostColumn, text: str) -> str:
    esc = html.escape
    title = f' title="{esc(text, quote=True)}"' if text and not column.numeric else ""
    return f'<td style="{_CELL};{_align(column)}"{title}>{esc(text)}</td>'


def render_hosts_html(snapshot: BatchSnapshot, max_rows: int = 50) -> str:
    """The per-host table: ``<table class="paperfetch-hosts">``, one ``<tr data-host=...>`` per host,
    problem hosts first, in a box that scrolls (``div.paperfetch-hosts-box``)."""
    esc = html.escape
    ended = _ended(snapshot)
    cols = "".join(f'<col style="width:{c.width:g}em">' if c.width else "<col>" for c in HOST_COLUMNS)
    head = "".join(
        f'<th style="{_CELL};{_align(c)};font-weight:bold;border-bottom:1px solid #888"'
        + (f' title="{esc(c.hint, quote=True)}"' if c.hint else "") + f">{esc(c.header)}</th>"
        for c in HOST_COLUMNS
    )
    ordered = _ordered(snapshot.hosts)
    shown, rest = ordered[:max_rows], ordered[max_rows:]
    body = []
    for h in shown:
        css, colour = "", ""
        if h.suppressed:
            css, colour = "paperfetch-suppressed", SUPPRESSED_COLOUR
        elif h.held:
            css, colour = "paperfetch-held", HELD_COLOUR
        style = f' style="background-color:{colour};color:#000"' if colour else ""
        cells = "".join(_td(c, c.cell(h, ended)) for c in HOST_COLUMNS)
        body.append(f'<tr data-host="{esc(h.host, quote=True)}" class="{css}"{style}>{cells}</tr>')
    if rest:
        body.append(f'<tr class="paperfetch-more"><td colspan="{len(HOST_COLUMNS)}" style="{_CELL};text-align:left">'
                    f"… {len(rest)} more host(s)</td></tr>")
    if not body:
        body.append(f'<tr class="paperfetch-empty"><td colspan="{len(HOST_COLUMNS)}" style="{_CELL};text-align:left">'
                    "no host yet</td></tr>")
    return (
        '<div class="paperfetch-hosts-box" style="max-height:20em;overflow:auto;max-width:100%">'
        '<table class="paperfetch-hosts" style="border-collapse:collapse;table-layout:fixed;width:100%;'
        'min-width:70em;font-size:12px;line-height:1.5;margin:0">'
        f"<colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


_EVENT_LABELS = {
    "hold": "HOLD", "hold_released": "RELEASED", "suppress": "SUPPRESS", "disallowed": "DISALLOWED",
    "robots": "ROBOTS", "invalid_pdf": "INVALID PDF",
}


def render_events_html(snapshot: BatchSnapshot) -> str:
    """The recent notable events, newest first, in a box that scrolls; long lines cut, whole on hover."""
    esc = html.escape
    lines = []
    for e in reversed(snapshot.events):
        text = f"{_clock_time(e.at)} {_EVENT_LABELS.get(e.kind, e.kind.upper())} {e.host} {e.message}"
        lines.append(
            f'<div data-kind="{esc(e.kind)}" title="{esc(text, quote=True)}" '
            'style="white-space:nowrap;overflow:hidden;text-overflow:ellipsis">'
            f"{_clock_time(e.at)} <b>{esc(_EVENT_LABELS.get(e.kind, e.kind.upper()))}</b> {esc(e.host)} {esc(e.message)}</div>"
        )
    if not lines:
        lines = ['<div class="paperfetch-none">no notable events</div>']
    return (
        '<div class="paperfetch-events" style="max-height:8em;overflow-y:auto;font-family:monospace;font-size:11px;'
        'line-height:1.45;margin-top:4px">'
        f"<div><b>recent events (UTC)</b></div>{''.join(lines)}</div>"
    )


def _state_line(snapshot: BatchSnapshot) -> str:
    """``running 4.2 s``, ``ended 16:05:01 UTC after 4.2 s``, or ``idle``."""
    elapsed = snapshot.elapsed_s
    took = f"{elapsed:.1f} s" if elapsed is not None else ""
    if snapshot.running:
        return f"running {took}".rstrip()
    if snapshot.finished_at is not None:
        return f"ended {_clock_time(snapshot.finished_at)} UTC after {took}"
    return "idle"


def render_counts_html(snapshot: BatchSnapshot) -> str:
    esc = html.escape
    parts = [f"<b>{snapshot.done} / {snapshot.total}</b>", esc(_state_line(snapshot))]
    parts += [f"{esc(status.replace('_', ' '))} {n}" for status, n in snapshot.counts.items() if n]
    held, suppressed = len(snapshot.held), len(snapshot.suppressed)
    if held:
        parts.append(f"<b>{held} HELD</b>")
    if suppressed:
        parts.append(f"<b>{suppressed} SUPPRESSED</b>")
    return '<span class="paperfetch-counts">' + " · ".join(parts) + "</span>"


def render_html(snapshot: BatchSnapshot, max_rows: int = 50, title: str = "paperfetch") -> str:
    """The whole dashboard as static HTML (what a saved notebook keeps): bar, counts, hosts, events."""
    total, done = max(0, snapshot.total), min(snapshot.done, max(0, snapshot.total))
    share = 100.0 * done / total if total else 0.0
    colour = "#2196f3" if not _ended(snapshot) else ("#4caf50" if snapshot.done >= snapshot.total else "#f44336")
    bar = (
        '<div style="display:flex;align-items:center;gap:8px;flex-wrap:wrap">'
        f'<b>{html.escape(title)}</b>'
        '<div style="width:12em;height:10px;background:#e0e0e0;border-radius:2px;overflow:hidden">'
        f'<div style="width:{share:.1f}%;height:100%;background:{colour}"></div></div>'
        f"{render_counts_html(snapshot)}"
        + (f'<span class="paperfetch-store" style="color:#757575">host state: {html.escape(snapshot.store)}</span>'
           if snapshot.store else "")
        + "</div>"
    )
    return (
        '<div class="paperfetch-dashboard" style="max-width:100%;overflow:hidden">'
        f"{bar}{render_hosts_html(snapshot, max_rows)}{render_events_html(snapshot)}</div>"
    )


def render_text(snapshot: BatchSnapshot, max_rows: int = 20, max_events: int = 10) -> str:
    """The dashboard as plain text: summary, host table, recent events."""
    lines = [snapshot.summary()]
    if snapshot.store:
        lines.append(f"host state: {snapshot.store}")
    hosts = _ordered(snapshot.hosts)
    ended = _ended(snapshot)
    if hosts:
        # the column that takes the room left in HTML (the state, with its reasons) goes last in text
        columns = [c for c in HOST_COLUMNS if c.width] + [c for c in HOST_COLUMNS if not c.width]
        table = [tuple(c.header for c in columns)]
        for h in hosts[:max_rows]:
            table.append(tuple(_clip(c.cell(h, ended), c.clip) if c.clip else c.cell(h, ended) for c in columns))
        widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
        for row in table:
            cells = [
                cell.rjust(w) if c.numeric else cell.ljust(w)
                for c, cell, w in zip(columns[:-1], row[:-1], widths[:-1])
            ]
            lines.append("  " + "  ".join(cells) + "  " + row[-1])
        if len(hosts) > max_rows:
            lines.append(f"  … {len(hosts) - max_rows} more host(s)")
    if snapshot.events:
        lines.append("recent events (UTC):")
        for e in list(snapshot.events)[-max_events:][::-1]:
            lines.append(f"  {_clock_time(e.at)} {_EVENT_LABELS.get(e.kind, e.kind.upper())} {e.host} {_clip(e.message, 160)}")
    return "\n".join(line.rstrip() for line in lines)


# ---------------------------------------------------------------------- the view
class Dashboard:
    """The ipywidgets view of a :class:`DashboardModel`: progress, hosts, recent events.

    :param model: what to show; a new, empty model when omitted.
    :param enabled: ``False``: no widgets, no thread, no cost; every method does nothing.
    :param interval_s: the shortest time between two redraws (the timer's period).
    :param autostart: start the redraw timer now; default: when in a Jupyter kernel. Without
        the timer the widgets show the moment of the last :meth:`refresh`; the text repr is
        always taken fresh.
    :param max_rows: hosts shown in the table (held and suppressed ones first).

    ``widget`` is the root ``VBox``; ``progress_bar`` (IntProgress), ``counts`` (HTML),
    ``hosts`` (HTML) and ``events`` (HTML) are its parts. ``redraws`` counts the redraws;
    each redraw sends its changes inside ``hold_sync()``, one message per part.

    **Displayed**, the dashboard is a mime bundle (``_repr_mimebundle_``): the widget's view, plus
    ``text/html`` and ``text/plain`` renderings of the same moment, which a notebook saved without
    its widget state, an HTML export or a terminal show instead. Once its run has ended the
    bundle is the final state alone (``text/html`` and ``text/plain``, no widget): nothing can
    change any more. :meth:`show` displays it with a display id and :meth:`close` replaces that
    output with the final state, so a saved notebook keeps a readable record of the run (the way
    tqdm leaves its last line) instead of "model not found".

    **One answer per notebook**: while a run goes, holds count down ("HELD 12:34 left"). When it
    ends, its model freezes (:meth:`DashboardModel.finish`): every view of that run, the one shown
    during it and any ``r.dashboard()`` afterwards, shows the same final snapshot, "ended HH:MM:SS
    UTC", holds as clock times ("HELD until 17:04:10 UTC"), no countdown. The politeness state as
    it is now is ``r.domain_status()``.
    """

    def __init__(
        self,
        model: DashboardModel | None = None,
        *,
        enabled: bool = True,
        interval_s: float = 0.25,
        autostart: bool | None = None,
        max_rows: int = 50,
        title: str = "paperfetch",
    ) -> None:
        self.enabled = bool(enabled)
        self.model = model
        self.interval_s = float(interval_s)
        self.max_rows = int(max_rows)
        self.title = title
        self.redraws = 0
        self.widget: Any = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._draw_lock = threading.Lock()
        self._drawn_version = -1
        self._drawn_at = 0.0
        self._countdown = False
        self._last: BatchSnapshot | None = None
        self._handles: list[Any] = []
        if not self.enabled:
            return
        if self.model is None:
            self.model = DashboardModel()
        import ipywidgets as w

        self.progress_bar = w.IntProgress(value=0, min=0, max=0, description=title, bar_style="",
                                          layout=w.Layout(width="22em"))
        self.counts = w.HTML(value="", layout=w.Layout(width="auto"))
        self.hosts = w.HTML(value="", layout=w.Layout(width="100%"))
        self.events = w.HTML(value="", layout=w.Layout(width="100%"))
        self.widget = _root_class()([w.HBox([self.progress_bar, self.counts]), self.hosts, self.events],
                                    layout=w.Layout(width="100%", max_width="100%"))
        self.widget.paperfetch_view = weakref.ref(self)
        self.refresh()
        if autostart is None:
            autostart = in_notebook()
        if autostart:
            self.start()

    @property
    def _model(self) -> DashboardModel:
        """The model of an enabled dashboard (every caller checks ``enabled`` first)."""
        return cast(DashboardModel, self.model)

    # -- the timer -----------------------------------------------------------------
    def start(self) -> None:
        """Start the redraw timer (a daemon thread; it ends by itself once nothing can change)."""
        if not self.enabled or (self._thread is not None and self._thread.is_alive()):
            return
        self._stop.clear()
        # The thread holds the dashboard: a notebook often keeps only ``.widget`` (in a VBox, say),
        # and the view must go on redrawing it. The thread ends by itself (see tick), on close(),
        # or when the widget is closed.
        thread = threading.Thread(target=_tick_loop, args=(self, self._stop, self.interval_s),
                                  name="paperfetch-dashboard", daemon=True)
        self._thread = thread
        thread.start()

    def tick(self) -> bool:
        """Redraw if the model changed (or once a second while a hold counts down).
        Returns whether the view still needs the timer."""
        if not self.enabled or getattr(self.widget, "comm", True) is None:  # disabled, or its widget closed
            return False
        model = self._model
        now = time.monotonic()
        if model.version != self._drawn_version or (self._countdown and now - self._drawn_at >= 1.0):
            self.refresh()
        return model.running or self._countdown

    def refresh(self) -> None:
        """Redraw now from a fresh snapshot."""
        if not self.enabled:
            return
        self._redraw(self._model.snapshot())

    def _redraw(self, snap: BatchSnapshot) -> None:
        with self._draw_lock, ExitStack() as held:
            bar = self.progress_bar
            for part in (bar, self.counts, self.hosts, self.events):
                held.enter_context(part.hold_sync())  # one message per part, sent on exit
            total = max(0, snap.total)
            if bar.max != total:
                if total < bar.value:
                    bar.value = 0
                bar.max = total
            bar.value = min(snap.done, total)
            if snap.running:
                bar.bar_style = ""
            elif snap.finished_at is not None:
                bar.bar_style = "success" if snap.done >= snap.total else "danger"
            self.counts.value = render_counts_html(snap)
            self.hosts.value = render_hosts_html(snap, self.max_rows)
            self.events.value = render_events_html(snap)
            self._drawn_version = snap.version
            self._drawn_at = time.monotonic()
            self._countdown = bool(snap.held) and not _ended(snap)  # a finished run counts nothing down
            self._last = snap
            self.redraws += 1

    def close(self) -> None:
        """Stop the timer, redraw one last time, and put the final state in the outputs :meth:`show` made."""
        if not self.enabled:
            return
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2.0)
        self._thread = None
        try:
            self.refresh()
            bundle = self._static_bundle(self._last or self._model.snapshot())
            for handle in self._handles:
                handle.update(bundle, raw=True)
        except Exception:  # noqa: BLE001 - close() runs in a download's finally: it must not mask its outcome
            logger.debug("final dashboard redraw failed", exc_info=True)
        self._handles = []

    # -- display -------------------------------------------------------------------
    @property
    def last_drawn(self) -> BatchSnapshot | None:
        """The snapshot the widget shows now (``None`` before the first redraw)."""
        return self._last

    def snapshot(self) -> BatchSnapshot | None:
        return self._model.snapshot() if self.enabled else None

    def text(self) -> str:
        if not self.enabled:
            return "Dashboard(disabled)"
        return render_text(self._model.snapshot(), max_rows=self.max_rows)

    def html(self) -> str:
        """The dashboard now as static HTML (no widget)."""
        if not self.enabled:
            return ""
        return render_html(self._model.snapshot(), self.max_rows, self.title)

    def _static_bundle(self, snap: BatchSnapshot) -> dict[str, str]:
        return {"text/html": render_html(snap, self.max_rows, self.title),
                "text/plain": render_text(snap, max_rows=self.max_rows)}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict[str, Any]:
        """The widget's view plus static renderings of the same moment; the final state alone once the run ended."""
        if not self.enabled:
            return {"text/plain": "Dashboard(disabled)"}
        snap = self._model.snapshot()
        bundle: dict[str, Any] = {}
        if not _ended(snap) and getattr(self.widget, "comm", None) is not None:
            bundle.update(self.widget._repr_mimebundle_(include=include, exclude=exclude, **kwargs) or {})
        bundle.update(self._static_bundle(snap))
        return bundle

    def show(self) -> None:
        """Display the dashboard, when in a Jupyter kernel (elsewhere: nothing); :meth:`close` later
        replaces this output with the final state."""
        if self.enabled and in_notebook():
            from IPython.display import display

            handle = display(self, display_id=True)
            if handle is not None:
                self._handles.append(handle)

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.text() if not cycle else "Dashboard(...)")


_ROOT: Any = None


def _root_class() -> Any:
    """A ``VBox`` whose ``repr`` (the ``text/plain`` of its mime bundle, when the widget itself is
    displayed) is the dashboard's summary line, not ``VBox(children=(...``."""
    global _ROOT
    if _ROOT is None:
        import ipywidgets as w

        class DashboardBox(w.VBox):
            paperfetch_view: Any = None  # a weak reference to the Dashboard it shows

            def __repr__(self) -> str:
                view = self.paperfetch_view() if self.paperfetch_view is not None else None
                snap = view.last_drawn if view is not None else None
                return snap.summary() if snap is not None else "paperfetch dashboard"

        _ROOT = DashboardBox
    return _ROOT


def _tick_loop(dashboard: Dashboard, stop: threading.Event, interval: float) -> None:
    while not stop.wait(interval):
        try:
            keep = dashboard.tick()
        except Exception:  # noqa: BLE001 - a view never breaks a run
            logger.debug("dashboard redraw failed", exc_info=True)
            keep = True
        if not keep:
            return


# ---------------------------------------------------------------------- domain_status, styled
#: How style_domain_status names domain_status()'s columns (units in the header, not in every cell).
_STATUS_LABELS = {
    "in_flight": "in flight", "ok": "OK", "last_status": "last", "delay_s": "delay (s)",
    "backoff_s": "backoff (s)", "held_until": "held until (UTC)", "suppressed_until": "suppressed until (UTC)",
    "suppressed_reason": "suppressed because", "crawl_delay_s": "Crawl-delay (s)",
    "next_allowed_at": "next allowed (UTC)", "learned_interval_s": "learned (s)", "requests": "sent",
}
#: Text cells longer than this are cut, the whole text on hover.
STATUS_TEXT_LIMIT = 24


def _is_empty(value: Any) -> bool:
    import pandas as pd

    try:
        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _time_cell(value: Any) -> str:
    """A timestamp to the second, UTC: ``16:04:10``, with the date when it is not today."""
    if _is_empty(value):
        return ""
    import pandas as pd

    ts = pd.Timestamp(value)
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    today = datetime.now(timezone.utc).date()
    return ts.strftime("%H:%M:%S" if ts.date() == today else "%Y-%m-%d %H:%M:%S")


def _seconds_cell(value: Any) -> str:
    return "" if _is_empty(value) else f"{float(value):.1f}"


def _plain_cell(value: Any) -> str:
    if _is_empty(value) or value is False:
        return ""
    if value is True:
        return "yes"
    text = str(value)
    if len(text) <= STATUS_TEXT_LIMIT:
        return html.escape(text)
    return f'<span title="{html.escape(text, quote=True)}">{html.escape(_clip(text, STATUS_TEXT_LIMIT))}</span>'


def _status_view(frame: "pd.DataFrame") -> "pd.DataFrame":
    """domain_status() with pairs folded into one column each: the delay range (``0.2–0.4``), the
    hold (``16:04:10 (503)``); ``suppressed`` goes (the reason and the row colour say it). Other
    columns, including any the transport adds later, pass as they are."""
    import pandas as pd

    columns = list(frame.columns)
    out: dict[str, Any] = {}
    for c in columns:
        if c == "delay_min_s" and "delay_max_s" in columns:
            out["delay_s"] = [
                "" if _is_empty(lo) else (_seconds_cell(lo) if _is_empty(hi) or hi == lo
                                          else f"{_seconds_cell(lo)}–{_seconds_cell(hi)}")
                for lo, hi in zip(frame["delay_min_s"], frame["delay_max_s"])
            ]
        elif c == "held_until" and "hold_status" in columns:
            out["held_until"] = [
                "" if _is_empty(at) else _time_cell(at) + ("" if _is_empty(st) else f" ({int(st)})")
                for at, st in zip(frame["held_until"], frame["hold_status"])
            ]
        elif c == "suppressed_until" and "suppressed" in columns:
            out[c] = [
                _time_cell(at) if not _is_empty(at) else ("until further notice" if bool(on) else "")
                for at, on in zip(frame[c], frame["suppressed"].fillna(False))
            ]
        elif c == "breaker":
            # the breaker, its failures and its open-until in one cell: "open → 16:04:10 (3)"; closed with no failure: empty
            failures = frame["failures"] if "failures" in columns else [None] * len(frame)
            until = frame["breaker_open_until"] if "breaker_open_until" in columns else [None] * len(frame)
            cells = []
            for state, n, at in zip(frame[c], failures, until):
                state = "" if _is_empty(state) else str(state)
                text = "" if state in ("", "closed") else state
                if not _is_empty(at) and state != "closed":
                    text += f" → {_time_cell(at)}"
                if not _is_empty(n) and int(n) > 0:
                    text = (text + " " if text else "") + f"({int(n)} failed)"
                cells.append(text.strip())
            out[c] = cells
        elif c in ("delay_max_s", "hold_status", "failures", "breaker_open_until") or (
                c == "suppressed" and "suppressed_reason" in columns):
            continue
        else:
            out[c] = frame[c]
    return pd.DataFrame(out, index=frame.index)


def style_domain_status(frame: "pd.DataFrame") -> "Styler":
    """``domain_status()`` for people: held rows amber and suppressed rows red (host and reason in
    bold), seconds to one decimal, times to the second (UTC), empty cells empty, the delay range
    and the hold each in one column, long reasons cut (whole on hover), units in the headers, no
    index. A display: its ``.data`` is that folded table, not *frame*.

    >>> style_domain_status(r.domain_status())   # doctest: +SKIP
    """
    import pandas as pd

    view = _status_view(frame)
    columns = list(view.columns)

    def row_style(row: "pd.Series") -> list[str]:
        source = frame.loc[row.name]
        suppressed = "suppressed" in source.index and pd.notna(source["suppressed"]) and bool(source["suppressed"])
        held = "held_until" in source.index and pd.notna(source["held_until"])
        if not (held or suppressed):
            return [""] * len(columns)
        colour = SUPPRESSED_COLOUR if suppressed else HELD_COLOUR
        marked = {"host", "suppressed_reason", "suppressed_until"} if suppressed else {"host", "held_until"}
        return [f"background-color: {colour}; color: #000" + ("; font-weight: bold" if c in marked else "") for c in columns]

    formatters: dict[str, Callable[[Any], str]] = {}
    numeric = []
    for c in columns:
        series = view[c]
        if pd.api.types.is_datetime64_any_dtype(series):
            formatters[c] = _time_cell
            numeric.append(c)
        elif str(c).endswith("_s") and pd.api.types.is_numeric_dtype(series):
            formatters[c] = _seconds_cell
            numeric.append(c)
        elif pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            formatters[c] = lambda v: "" if _is_empty(v) else str(v)
            numeric.append(c)
        elif c in ("delay_s", "held_until", "suppressed_until", "breaker"):  # folded by _status_view: never cut
            formatters[c] = lambda v: "" if _is_empty(v) else html.escape(str(v))
            numeric.append(c)
        else:
            formatters[c] = _plain_cell
    styler = (
        view.style.apply(row_style, axis=1)
        .format(formatters, escape=None)
        .format_index(lambda c: _STATUS_LABELS.get(c, str(c).replace("_", " ")), axis=1)
        .hide(axis="index")
        .set_table_attributes('class="paperfetch-domain-status"')
        .set_table_styles([
            {"selector": "", "props": "border-collapse: collapse; font-size: 12px; table-layout: auto"},
            {"selector": "th", "props": "padding: 2px 6px; text-align: left; vertical-align: bottom; "
                                        "border-bottom: 1px solid #888; max-width: 7em"},
            {"selector": "td", "props": "padding: 1px 6px; white-space: nowrap; "
                                        "border-bottom: 1px solid rgba(128,128,128,.25)"},
        ])
    )
    if numeric:
        styler = styler.set_properties(subset=numeric, **{"text-align": "right", "font-variant-numeric": "tabular-nums"})
    text = [c for c in columns if c not in numeric]
    if text:
        styler = styler.set_properties(subset=text, **{"text-align": "left"})
    return styler
