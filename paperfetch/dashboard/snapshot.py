"""What the dashboard shows at one moment, as plain frozen data: :class:`BatchSnapshot`, :class:`HostRow`."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Mapping

from paperfetch.http.hosts import HostSnapshot
from paperfetch.integrity import met_line
from paperfetch.outcomes import FINISHED_WELL_STATUSES, Status

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["BatchSnapshot", "HostRow", "ROW_COLUMNS", "RecentEvent"]

@dataclass(frozen=True)
class RecentEvent:
    """One notable event: a hold set, a suppression, a robots.txt refusal, an invalid PDF."""

    at: float        #: wall-clock time (epoch seconds)
    host: str
    kind: str        #: ``hold``, ``suppress``, ``disallowed``, ``robots``, ``invalid_pdf``, an item status
    message: str     #: no secrets: URLs are redacted


@dataclass(frozen=True)
class HostRow:
    """One host's row: this run's counts, and ``politeness``, the transport's HostSnapshot (None: nothing known)."""

    host: str
    queued: int = 0
    in_flight: int = 0
    requests: int = 0            #: requests sent (robots.txt and redirect hops included)
    ok: int = 0                  #: responses below 400
    errors: int = 0              #: other responses, and network errors
    not_sent: int = 0            #: answered without a request: held, suppressed, disallowed
    last_status: int | None = None
    hold_left_s: float = 0.0
    politeness: HostSnapshot | None = None
    not_found: int = 0           #: 404 and 410 answers (not errors: "no rules", "no such record")
    unreachable: str = ""        #: ``dns`` or ``refused`` when the host could not be reached (this run)
    run_ended: bool = False      #: the run is over: queued jobs read ``not started``
    #: the host as people read it (a pool's label, not ``host#pool``: :func:`paperfetch.http.status.shown_hosts`);
    #: ``""``: the host
    label: str = ""

    # -- the politeness record, read (a host nothing is known of without one): set from ``politeness`` --------
    delay_min_s: float | None = field(init=False)
    delay_max_s: float | None = field(init=False)
    backoff_s: float = field(init=False)
    held_until: float | None = field(init=False)  #: epoch seconds; None when not held
    hold_status: int | None = field(init=False)
    hold_reason: str = field(init=False)
    suppressed: bool = field(init=False)
    suppressed_reason: str | None = field(init=False)
    suppressed_until: float | None = field(init=False)  #: epoch seconds; None: until further notice
    crawl_delay_s: float | None = field(init=False)
    robots: str | None = field(init=False)
    learned_interval_s: float = field(init=False)  #: the interval learned from the host's 429s
    breaker: str = field(init=False)  #: the host's circuit breaker: closed, open, half_open
    credits_left: int | None = field(init=False)  #: the budget left today; None when the host never said
    binding_window: str = field(init=False)  #: the window that binds the host now (``500/min``); "" for none
    window_wait_s: float = field(init=False)  #: seconds until that window lets the next request start

    def __post_init__(self) -> None:
        record = self.politeness or HostSnapshot(self.host)
        for read in fields(self):
            if not read.init:
                value = getattr(record, read.name)
                object.__setattr__(self, read.name, value.timestamp() if isinstance(value, datetime) else value)

    @property
    def done(self) -> int:
        return self.ok + self.not_found + self.errors + self.not_sent

    @property
    def shown(self) -> str:
        return self.label or self.host

    @property
    def held(self) -> bool:
        return self.hold_left_s > 0

    @property
    def touched(self) -> bool:
        """Whether this run did anything with the host (or has something queued for it)."""
        return bool(self.queued or self.in_flight or self.requests or self.not_sent)

    @property
    def problem(self) -> bool:
        """Held, suppressed, unreachable or with its breaker open: what the view puts first."""
        return self.held or self.suppressed or bool(self.unreachable) or self.breaker == "open"

    @property
    def state(self) -> str:
        """In words: ``SUPPRESSED``, ``HELD``, ``UNREACHABLE``, ``OPEN BREAKER``, ``busy``, ``queued``, ``backoff``, ``idle``."""
        words = [w for w, on in (("SUPPRESSED", self.suppressed), ("HELD", self.held)) if on]
        if words:
            return " + ".join(words)  # both, when both
        if self.unreachable:
            return "UNREACHABLE"
        if self.breaker == "open":
            return "OPEN BREAKER"
        if self.in_flight and not self.run_ended:
            return "busy"
        if self.queued:
            return "not started" if self.run_ended else "queued"
        return "backoff" if self.backoff_s > 0 else "idle"


#: The columns of :meth:`BatchSnapshot.hosts_frame` (before ``done`` and ``state``): HostRow's data fields.
ROW_COLUMNS = tuple(f.name for f in fields(HostRow) if f.name not in ("politeness", "run_ended", "label"))


@dataclass(frozen=True)
class BatchSnapshot:
    """Everything the dashboard shows, at one moment. Plain data: compare it, print it, test it."""

    at: float                                   #: wall-clock time of the snapshot (epoch seconds)
    total: int = 0
    done: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)   #: outcome status -> rows, in Status order
    hosts: tuple[HostRow, ...] = ()             #: sorted by host
    events: tuple[RecentEvent, ...] = ()        #: oldest first
    running: bool = False
    started_at: float | None = None
    finished_at: float | None = None
    version: int = 0                            #: grows with every change the model saw
    store: str = ""                             #: the host-state store, for people ("memory", "sqlite (user cache)", "redis://…")
    #: other hosts of the shared store, held, suppressed or with an open breaker, that this run never asked
    others: tuple[HostRow, ...] = ()
    ending: str = ""                            #: "", or once over: "ended", "interrupted", "stopped"
    #: the retracted papers and notices among the rows (``{"retracted": 2, "notices": 1}``; paperfetch.integrity)
    met: Mapping[str, int] = field(default_factory=dict)

    def host(self, key: str) -> HostRow | None:
        return next((h for h in self.hosts if h.host == key), None)

    @property
    def held(self) -> tuple[HostRow, ...]:
        return tuple(h for h in self.hosts if h.held)

    @property
    def suppressed(self) -> tuple[HostRow, ...]:
        return tuple(h for h in self.hosts if h.suppressed)

    @property
    def requests(self) -> int:
        return sum(h.requests for h in self.hosts)

    @property
    def unreachable(self) -> tuple[HostRow, ...]:
        return tuple(h for h in self.hosts if h.unreachable)

    def offline_line(self) -> str:
        """``could not reach any service (DNS failed for 8 hosts): offline, or behind a proxy?`` when so; else ``""``."""
        gone = self.unreachable
        if not gone or any(h.ok or h.not_found or h.last_status is not None for h in self.hosts):
            return ""
        dns = sum(1 for h in gone if h.unreachable == "dns")
        refused = len(gone) - dns
        parts = [f"DNS failed for {dns} host{'s' if dns != 1 else ''}"] if dns else []
        if refused:
            parts.append(f"{refused} host{'s' if refused != 1 else ''} refused the connection")
        return f"could not reach any service ({', '.join(parts)}): offline, or behind a proxy?"

    def others_line(self) -> str:
        """``3 other hosts held or suppressed and 1 with an open breaker in the shared state —
        r.domain_status()``, each part only when it counts some; ``""`` when none."""
        stopped = sum(1 for h in self.others if h.held or h.suppressed)
        opened = sum(1 for h in self.others if not (h.held or h.suppressed) and h.breaker == "open")
        if not (stopped or opened):
            return ""
        first = stopped or opened
        said = f"{first} other host{'s' if first != 1 else ''}" + (" held or suppressed" if stopped else "")
        if opened:
            said += f" and {opened} with an open breaker" if stopped else " with an open breaker"
        return f"{said} in the shared state — r.domain_status()"

    @property
    def ended(self) -> bool:
        """Whether the run is over (its holds no longer count down)."""
        return self.finished_at is not None and not self.running

    @property
    def finished(self) -> int:
        """Rows that got an outcome of their own: done, less those a stop or an interrupt left ``stopped``."""
        return self.done - self.counts.get(Status.STOPPED.value, 0)

    @property
    def bar_style(self) -> str:
        """The progress bar's colour, as ipywidgets names it: ``""`` while the run goes (or before it); once
        over, ``success`` when every row has its PDF, ``danger`` when none has one or rows were left without
        an outcome, ``warning`` when only some have theirs."""
        if not self.ended:
            return ""
        good = sum(n for status, n in self.counts.items() if status in FINISHED_WELL_STATUSES)
        if good >= self.total:
            return "success"
        if good == 0 or self.done < self.total:
            return "danger"
        return "warning"

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
            head = f"paperfetch running: {self.finished}/{self.total} done{took}"
        elif self.finished_at is not None:
            ended = datetime.fromtimestamp(self.finished_at, tz=timezone.utc).strftime("%H:%M:%S")
            how = self.ending if self.ending in ("interrupted", "stopped") else "ended"
            head = f"paperfetch {how} {ended} UTC: {self.finished}/{self.total} done{took}"
        else:
            head = f"paperfetch idle: {self.finished}/{self.total} done"
        counts = ", ".join(f"{status} {n}" for status, n in self.counts.items() if n)
        met = met_line(self.met)
        return f"{head}" + (f" ({counts})" if counts else "") + (f"; met {met}" if met else "")

    def hosts_frame(self) -> pd.DataFrame:
        """The host table as a DataFrame (one row per host, :data:`ROW_COLUMNS`, plus done and state)."""
        import pandas as pd

        rows = [{**{n: getattr(h, n) for n in ROW_COLUMNS}, "host": h.shown, "done": h.done, "state": h.state}
                for h in self.hosts]
        return pd.DataFrame(rows, columns=[*ROW_COLUMNS, "done", "state"])
