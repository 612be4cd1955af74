"""A live dashboard for a batch: a plain model fed by events, and a thin ipywidgets view over it.

Three parts, each usable alone:

* :class:`DashboardModel` listens: it subscribes to the transport's events
  (:meth:`HttpClient.subscribe <paperfetch.http.client.HttpClient.subscribe>`) and is told about
  finished items (:meth:`~DashboardModel.item_finished`). It only counts, under one lock, a few
  microseconds per event. :meth:`~DashboardModel.snapshot` returns a :class:`BatchSnapshot`:
  plain frozen data, cheap to take, safe from any thread.
* :class:`Dashboard` shows: an ipywidgets view (progress bar with counts by status, a per-host
  table, the recent notable events) redrawn from snapshots by a timer, at most
  ``1 / interval_s`` times a second (4 by default) whatever the event rate, and once more on
  :meth:`~Dashboard.close`. ``Dashboard(enabled=False)`` does nothing. Its ``repr`` is text, for
  terminals.
* :func:`style_domain_status` colours :meth:`Retriever.domain_status
  <paperfetch.Retriever.domain_status>`'s held and suppressed rows (a pandas ``Styler``).

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
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from paperfetch.clock import SYSTEM_CLOCK, Clock
from paperfetch.http.events import Event, EventKind
from paperfetch.http.hosts import host_key
from paperfetch.outcomes import Status
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
NOTABLE_STATUSES = frozenset({Status.INVALID_PDF.value})
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
        state = "running" if self.running else ("finished" if self.finished_at is not None else "idle")
        elapsed = self.elapsed_s
        head = f"paperfetch {state}: {self.done}/{self.total} done"
        if elapsed is not None:
            head += f" in {elapsed:.1f}s"
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
            self._running = True
            self._started_at = self._clock.time()
            self._finished_at = None
            self.version += 1

    def add_total(self, n: int) -> None:
        with self._lock:
            self._total += int(n)
            self.version += 1

    def finish(self) -> None:
        """The run is over: stop listening, keep the scheduler's last queue lengths, nothing is in flight."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        final = self._queues()
        self._scheduler = None
        with self._lock:
            self._final_queues = final
            for h in self._hosts.values():
                h.in_flight = 0
            if self._running:
                self._finished_at = self._clock.time()
            self._running = False
            self.version += 1

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
        """The state now, as plain frozen data. Thread-safe; costs a few microseconds per host."""
        queues = self._queues() if self._scheduler is not None else None
        politeness = self._politeness()
        now = self._clock.time()
        with self._lock:
            if queues is None:
                queues = dict(self._final_queues)
            hosts = {k: _copy(h) for k, h in self._hosts.items()}
            counts = {s: self._counts[s] for s in _STATUS_ORDER if s in self._counts}
            counts.update({s: n for s, n in self._counts.items() if s not in counts})
            snap = dict(
                at=now, total=self._total, done=self._done, counts=counts, events=tuple(self._events),
                running=self._running, started_at=self._started_at, finished_at=self._finished_at, version=self.version,
            )
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
            for limiter in registry.hosts():
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
    if value is None:
        return ""
    return f"{value:g} s"


def _delay(h: HostSnapshot) -> str:
    if h.delay_min_s is None:
        return "none"
    if h.delay_max_s is None or h.delay_max_s == h.delay_min_s:
        return f"{h.delay_min_s:g} s"
    return f"{h.delay_min_s:g}-{h.delay_max_s:g} s"


def _hold_text(h: HostSnapshot) -> str:
    if not h.held:
        return ""
    status = f" (HTTP {h.hold_status})" if h.hold_status else ""
    return f"held {_duration(h.hold_left_s)} left{status}"


def _suppression_text(h: HostSnapshot) -> str:
    if not h.suppressed:
        return ""
    until = f" until {_clock_time(h.suppressed_until)} UTC" if h.suppressed_until is not None else ""
    return f"SUPPRESSED: {h.suppressed_reason or 'HTTP 403'}{until}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ordered(hosts: Iterable[HostSnapshot]) -> list[HostSnapshot]:
    """Held and suppressed hosts first, then those this run touched, then the rest; by name within."""
    def rank(h: HostSnapshot) -> tuple[int, str]:
        return (0 if (h.held or h.suppressed) else 1 if h.touched else 2, h.host)

    return sorted(hosts, key=rank)


HOST_COLUMNS = (
    "host", "state", "queued", "in flight", "done", "OK", "errors", "not sent", "last status", "delay range",
    "backoff", "hold", "suppression", "Crawl-delay",
)


def render_hosts_html(snapshot: BatchSnapshot, max_rows: int = 50) -> str:
    """The per-host table: ``<table class="paperfetch-hosts">``, one ``<tr data-host=...>`` per host."""
    esc = html.escape
    head = "".join(f"<th>{esc(c)}</th>" for c in HOST_COLUMNS)
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
        state = f"<b>{esc(h.state)}</b>" if (h.held or h.suppressed) else esc(h.state)
        cells = [
            f"<td>{esc(h.host)}</td>", f"<td>{state}</td>",
            *(f'<td style="text-align:right">{n}</td>' for n in (h.queued, h.in_flight, h.done, h.ok, h.errors, h.not_sent)),
            f"<td>{'' if h.last_status is None else h.last_status}</td>",
            f"<td>{esc(_delay(h))}</td>",
            f"<td>{esc(_seconds(h.backoff_s) if h.backoff_s else '')}</td>",
            f"<td>{esc(_hold_text(h))}</td>",
            f"<td>{esc(_clip(_suppression_text(h), 200))}</td>",
            f"<td>{esc(_seconds(h.crawl_delay_s))}</td>",
        ]
        body.append(f'<tr data-host="{esc(h.host, quote=True)}" class="{css}"{style}>{"".join(cells)}</tr>')
    if rest:
        body.append(f'<tr class="paperfetch-more"><td colspan="{len(HOST_COLUMNS)}">… {len(rest)} more host(s)</td></tr>')
    if not body:
        body.append(f'<tr class="paperfetch-empty"><td colspan="{len(HOST_COLUMNS)}">no host yet</td></tr>')
    return (
        '<div style="max-height:24em;overflow:auto">'
        '<table class="paperfetch-hosts" style="border-collapse:collapse;font-size:90%">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


_EVENT_LABELS = {
    "hold": "HOLD", "hold_released": "RELEASED", "suppress": "SUPPRESS", "disallowed": "DISALLOWED",
    "robots": "ROBOTS", "invalid_pdf": "INVALID PDF",
}


def render_events_html(snapshot: BatchSnapshot) -> str:
    """The recent notable events, newest first, in a box that scrolls."""
    esc = html.escape
    lines = [
        f'<div data-kind="{esc(e.kind)}">{_clock_time(e.at)} <b>{esc(_EVENT_LABELS.get(e.kind, e.kind.upper()))}</b> '
        f"{esc(e.host)} {esc(e.message)}</div>"
        for e in reversed(snapshot.events)
    ]
    if not lines:
        lines = ['<div class="paperfetch-none">no notable events</div>']
    return (
        '<div class="paperfetch-events" style="max-height:10em;overflow-y:auto;font-family:monospace;font-size:85%">'
        f"<div><b>recent events (UTC)</b></div>{''.join(lines)}</div>"
    )


def render_counts_html(snapshot: BatchSnapshot) -> str:
    esc = html.escape
    parts = [f"<b>{snapshot.done} / {snapshot.total}</b>"]
    elapsed = snapshot.elapsed_s
    if elapsed is not None:
        parts.append(f"{elapsed:.1f} s")
    parts += [f"{esc(status.replace('_', ' '))} {n}" for status, n in snapshot.counts.items() if n]
    held, suppressed = len(snapshot.held), len(snapshot.suppressed)
    if held:
        parts.append(f"<b>{held} HELD</b>")
    if suppressed:
        parts.append(f"<b>{suppressed} SUPPRESSED</b>")
    return " · ".join(parts)


def render_text(snapshot: BatchSnapshot, max_rows: int = 20, max_events: int = 10) -> str:
    """The dashboard as plain text: summary, host table, recent events."""
    lines = [snapshot.summary()]
    hosts = _ordered(snapshot.hosts)
    if hosts:
        table = [("host", "state", "queued", "in flight", "done", "ok", "errors", "last", "delay", "hold / suppression")]
        for h in hosts[:max_rows]:
            extra = "; ".join(t for t in (_hold_text(h), _suppression_text(h)) if t)
            table.append((
                h.host, h.state, str(h.queued), str(h.in_flight), str(h.done), str(h.ok), str(h.errors),
                "" if h.last_status is None else str(h.last_status), _delay(h), _clip(extra, 80),
            ))
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
        for row in table:
            lines.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
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
    ``hosts`` (HTML) and ``events`` (HTML) are its parts. ``redraws`` counts the redraws.
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
        self.redraws = 0
        self.widget = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._draw_lock = threading.Lock()
        self._drawn_version = -1
        self._drawn_at = 0.0
        self._countdown = False
        self._last: BatchSnapshot | None = None
        if not self.enabled:
            return
        if self.model is None:
            self.model = DashboardModel()
        import ipywidgets as w

        self.progress_bar = w.IntProgress(value=0, min=0, max=0, description=title, bar_style="",
                                          layout=w.Layout(width="40%"))
        self.counts = w.HTML(value="")
        self.hosts = w.HTML(value="")
        self.events = w.HTML(value="")
        self.widget = w.VBox([w.HBox([self.progress_bar, self.counts]), self.hosts, self.events])
        self.refresh()
        if autostart is None:
            autostart = in_notebook()
        if autostart:
            self.start()

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
        model = self.model
        now = time.monotonic()
        if model.version != self._drawn_version or (self._countdown and now - self._drawn_at >= 1.0):
            self.refresh()
        return model.running or self._countdown

    def refresh(self) -> None:
        """Redraw now from a fresh snapshot."""
        if not self.enabled:
            return
        self._redraw(self.model.snapshot())

    def _redraw(self, snap: BatchSnapshot) -> None:
        with self._draw_lock:
            bar = self.progress_bar
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
            self._countdown = bool(snap.held)
            self._last = snap
            self.redraws += 1

    def close(self) -> None:
        """Stop the timer and redraw one last time."""
        if not self.enabled:
            return
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2.0)
        self._thread = None
        try:
            self.refresh()
        except Exception:  # noqa: BLE001 - close() runs in a download's finally: it must not mask its outcome
            logger.debug("final dashboard redraw failed", exc_info=True)

    # -- display -------------------------------------------------------------------
    def snapshot(self) -> BatchSnapshot | None:
        return self.model.snapshot() if self.enabled else None

    def text(self) -> str:
        if not self.enabled:
            return "Dashboard(disabled)"
        return render_text(self.model.snapshot(), max_rows=self.max_rows)

    def show(self) -> None:
        """Display the widget, when in a Jupyter kernel (elsewhere: nothing)."""
        if self.enabled and in_notebook():
            from IPython.display import display

            display(self.widget)

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.text() if not cycle else "Dashboard(...)")

    def _ipython_display_(self) -> None:
        if not self.enabled:
            return
        if in_notebook():
            from IPython.display import display

            display(self.widget)
        else:
            print(self.text())


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
def style_domain_status(frame: "pd.DataFrame") -> "Styler":
    """``domain_status()`` with held rows amber and suppressed rows red (and those cells in bold).

    >>> style_domain_status(r.domain_status())   # doctest: +SKIP
    """
    columns = list(frame.columns)

    def row_style(row: "pd.Series") -> list[str]:
        import pandas as pd

        suppressed = bool(row["suppressed"]) if "suppressed" in row.index and pd.notna(row["suppressed"]) else False
        held = "held_until" in row.index and pd.notna(row["held_until"])
        if not (held or suppressed):
            return [""] * len(columns)
        colour = SUPPRESSED_COLOUR if suppressed else HELD_COLOUR
        marked = {"host", "suppressed", "suppressed_reason"} if suppressed else {"host", "held_until", "hold_status"}
        return [f"background-color: {colour}; color: #000" + ("; font-weight: bold" if c in marked else "") for c in columns]

    return frame.style.apply(row_style, axis=1).set_table_attributes('class="paperfetch-domain-status"')
