"""A batch beside you: :class:`Job`, the handle of ``Retriever.start(ids)`` (docs/background.md). It knows no
Retriever (``start`` hands it the run function; :class:`RunHooks` report back) and neither schedules nor paces.
"""

from __future__ import annotations

import atexit
import logging
import math
import sys
import threading
import time
import warnings
import weakref
from collections import deque
from concurrent import futures
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable

from paperfetch.http.scheduler import NO_REQUEST
from paperfetch.ids import parse_many
from paperfetch.outcomes import Status, outcomes_frame
from paperfetch.redact import redact_frame, redact_text

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from paperfetch.dashboard.job import JobDashboard
    from paperfetch.dashboard.model import BatchSnapshot

__all__ = ["Job", "RunHooks", "estimate_eta", "format_eta"]

logger = logging.getLogger(__name__)

#: Lines of the job's own log kept (``job.log``).
LOG_LINES = 200
#: How often ``stop()`` tells the scheduler again while the batch winds down (one just starting would miss it).
STOP_POLL_S = 0.02


def estimate_eta(snapshot: BatchSnapshot | None) -> float | None:
    """Seconds until the busiest host has served its queue (docs/background.md, "The ETA"); ``None`` while no
    host has anything queued. A suppressed host (``inf``) sends nothing: its next start counts 0."""
    finishes = []
    for row in snapshot.hosts if snapshot is not None else ():
        if row.queued > 0 and row.host != NO_REQUEST:
            record = row.politeness
            if record is not None and not math.isfinite(record.ready_in_s):  # suppressed: answered without waiting
                record = replace(record, ready_in_s=0.0)
            finishes.append(0.0 if record is None else record.start_of(row.queued - 1))
    return max(finishes, default=None)


def format_eta(seconds: float | None, *, at_least: bool = False) -> str:
    """``ETA 45 s``, ``ETA 14 min``, ``ETA 1 h 05 min``; ``ETA unknown`` for ``None``. *at_least*: the
    estimate is a lower bound (``ETA at least 45 s``)."""
    if seconds is None:
        return "ETA unknown"
    prefix = "ETA at least" if at_least else "ETA"
    if seconds < 60:
        return f"{prefix} {max(1, math.ceil(seconds))} s"
    minutes = math.ceil(seconds / 60)
    if minutes < 60:
        return f"{prefix} {minutes} min"
    return f"{prefix} {minutes // 60} h {minutes % 60:02d} min"


@dataclass
class RunHooks:
    """What the run tells a Job (the model, the scheduler, each row in the thread that decided it) and the stop it obeys."""

    stop: threading.Event
    on_begin: Callable[[Any], None]
    on_scheduler: Callable[[Any], None]
    on_row: Callable[[int, dict[str, Any]], None]
    #: the scheduler's jobs (their ``leads_on``: whether the ETA is a lower bound)
    on_items: Callable[[list[Any]], None] | None = None


class Job(futures.Future):
    """The handle of a batch running in the background, made by :meth:`paperfetch.Retriever.start`: *run* is
    ``run(inputs, hooks) -> outcomes frame``, *join* turns outcome rows into the caller's frame."""

    def __init__(self, *, run: Callable[..., pd.DataFrame], ids: Iterable[object] | Any,
                 join: Callable[[list[int], pd.DataFrame], pd.DataFrame] | None = None) -> None:
        super().__init__()
        self._inputs = [item.input for item in parse_many(ids)]
        self._run_fn = run
        self._join = join
        self._stop = threading.Event()
        self._rows: dict[int, dict[str, Any]] = {}
        self._rows_lock = threading.Lock()
        self._frame_cache: tuple[int, Any] | None = None
        self._model: Any = None
        self._began = threading.Event()
        self._scheduler: Any = None
        self._items: list[Any] = []  # the run's item jobs, once it has them
        self._view: JobDashboard | None = None
        self._view_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._started = time.time()
        self._ended: float | None = None
        self._final_state: str | None = None  # set as the run ends, just before the result
        self._error: BaseException | None = None
        self.log: deque[str] = deque(maxlen=LOG_LINES)
        self._unroute: Callable[[], None] = lambda: None  # the output router's removal, once begun

    def begin(self) -> None:
        """Start the runner thread (``Retriever.start`` calls it once)."""
        if self._thread is not None:
            raise RuntimeError("this Job has begun already")
        self.set_running_or_notify_cancel()
        _RUNNING.add(self)
        self._unroute = _route_output(self)
        self._thread = threading.Thread(target=self._main, name="paperfetch-job", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        from paperfetch.http.context import stopping_with

        hooks = RunHooks(stop=self._stop, on_begin=self._on_begin, on_scheduler=self._on_scheduler, on_row=self._on_row,
                         on_items=self._on_items)
        try:
            with stopping_with(self._stop):  # the batch lookups' waits end at the stop too
                frame = self._run_fn(self._inputs, hooks)
            if self._join is not None:
                frame = self._join(list(range(len(self._inputs))), frame)
        except BaseException as exc:  # noqa: BLE001 - handed to result()/exception()
            self._finish("failed", exc)
            self.set_exception(exc)
        else:
            self._finish("stopped" if self._stop.is_set() else "finished")
            self.set_result(frame)
        finally:
            self._began.set()
            _RUNNING.discard(self)

    def _finish(self, state: str, error: BaseException | None = None) -> None:
        """The run is over: the final state first (the frozen dashboard shows it), then the view freezes."""
        self._error = error
        self._ended = time.time()
        self._final_state = state
        self._unroute()
        with self._view_lock:
            view = self._view
        if view is not None:
            view.close()

    def stop(self, timeout: float | None = None) -> None:
        """Stop the batch and return once it has stopped (docs/background.md); safe from any thread, more
        than once. With *timeout*, return after at most that long even if a request is still on the wire."""
        self._stop.set()
        thread = self._thread
        if thread is None or thread is threading.current_thread():
            return
        deadline = None if timeout is None else time.monotonic() + timeout
        while thread.is_alive():
            scheduler = self._scheduler
            if scheduler is not None:
                scheduler.stop()
            left = STOP_POLL_S if deadline is None else min(STOP_POLL_S, deadline - time.monotonic())
            if left <= 0:
                return
            thread.join(left)

    def cancel(self) -> bool:
        """:meth:`stop`; False when it had ended already. ``cancelled()`` stays False: the job keeps a result."""
        if self.done():
            return False
        self.stop()
        return True

    @property
    def runner_thread(self) -> threading.Thread | None:
        """The thread that runs the batch (its scheduler's workers are ``paperfetch-batch-*``)."""
        return self._thread

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends or *timeout*, showing progress; Ctrl-C stops the job. Whether it has ended."""
        from paperfetch.dashboard.env import in_notebook

        handle: Any = None
        notebook = in_notebook()
        if notebook and not self.done():
            from IPython.display import display

            handle = display({"text/plain": repr(self)}, raw=True, display_id=True)
        deadline = None if timeout is None else time.monotonic() + timeout

        def show(end: str = "") -> None:
            if handle is not None:
                handle.update({"text/plain": repr(self)}, raw=True)
            elif not notebook:
                sys.stderr.write("\r" + repr(self) + end)
                sys.stderr.flush()

        try:
            while not self.done():
                show()
                left = 0.5 if deadline is None else min(0.5, deadline - time.monotonic())
                if left <= 0:
                    break
                futures.wait([self], timeout=left)
        except KeyboardInterrupt:
            self.stop()
        show("\n")
        return self.done()

    def _on_begin(self, model: Any) -> None:
        self._model = model
        self._began.set()

    def _on_scheduler(self, scheduler: Any) -> None:
        self._scheduler = scheduler
        if self._stop.is_set():
            scheduler.stop()

    def _on_items(self, items: list[Any]) -> None:
        self._items = list(items)

    def _on_row(self, position: int, row: dict[str, Any]) -> None:
        with self._rows_lock:
            self._rows[position] = dict(row)

    @property
    def total(self) -> int:
        return len(self._inputs)

    @property
    def finished(self) -> int:
        """Inputs with their row so far."""
        with self._rows_lock:
            return len(self._rows)

    @property
    def frame(self) -> pd.DataFrame:
        """The rows finished so far, indexed by input position (once ended, the result); cheap in a loop."""
        if self.done() and self.exception() is None:
            return self.result()
        with self._rows_lock:
            items = sorted(self._rows.items())
            cached = self._frame_cache
        if cached is not None and cached[0] == len(items):
            return cached[1]
        positions = [p for p, _ in items]
        outcomes = redact_frame(outcomes_frame({"input": self._inputs[p], **row} for p, row in items))
        outcomes.index = positions
        frame = self._join(positions, outcomes) if self._join is not None else outcomes
        with self._rows_lock:
            self._frame_cache = (len(items), frame)
        return frame

    def snapshot(self) -> BatchSnapshot | None:
        """The batch dashboard's snapshot now (``None`` before the run began)."""
        model = self._model
        return None if model is None else model.snapshot()

    def eta_s(self) -> float | None:
        """Seconds left by :func:`estimate_eta` (``None``: not known yet, or the job ended); a lower bound while
        :attr:`eta_is_lower_bound`."""
        return None if self._final_state is not None else estimate_eta(self.snapshot())

    @property
    def eta_is_lower_bound(self) -> bool:
        """Whether some unfinished item will go on to a host not queued yet (after a lookup, a landing page or
        a doi.org redirect): those requests are in no queue, so the ETA counts them not (docs/background.md)."""
        return self._final_state is None and any(getattr(item, "leads_on", False) for item in self._items)

    @property
    def state(self) -> str:
        """``running``, ``stopping``, ``stopped``, ``finished`` or ``failed``."""
        if self._final_state is not None:
            return self._final_state
        return "stopping" if self._stop.is_set() else "running"

    def progress_line(self, snapshot: BatchSnapshot | None = None) -> str:
        """``57/500 finished, 3 hosts busy, ETA 14 min`` (while it runs); what it did once it ended. The count is
        the dashboard's: that of *snapshot* (default: the snapshot now) when the run has a model."""
        done = self.finished
        if self._final_state is None:
            snap = self.snapshot() if snapshot is None else snapshot
            if snap is not None:
                done = snap.done
            hosts = 0 if snap is None else sum(1 for row in snap.hosts if row.queued > 0 or row.in_flight > 0)  # busy
            eta = format_eta(estimate_eta(snap), at_least=self.eta_is_lower_bound)
            return f"{done}/{self.total} finished, {hosts} host{'s' if hosts != 1 else ''} busy, {eta}"
        took = f" in {self._ended - self._started:.1f} s" if self._ended is not None else ""
        exc = self._error
        if exc is not None:
            return f"{done}/{self.total} finished{took}; {type(exc).__name__}: {redact_text(str(exc))[:200]}"
        with self._rows_lock:
            ended = sum(1 for row in self._rows.values() if row.get("status") != Status.STOPPED.value)
        stopped = self.total - ended if self._final_state == "stopped" else 0  # a row or not: not finished
        return f"{ended}/{self.total} finished" + (f", {stopped} stopped" if stopped else "") + took

    def __repr__(self) -> str:
        return f"<paperfetch Job {self.state}: {self.progress_line()}>"

    @property
    def dashboard_view(self) -> JobDashboard | None:
        """The job's :class:`~paperfetch.dashboard.job.JobDashboard` (``None`` without ipywidgets)."""
        from paperfetch.dashboard.env import widgets_available

        with self._view_lock:
            if self._view is not None or not widgets_available():
                return self._view
        self._began.wait(10.0)  # the run makes its model at once (after parsing the inputs)
        from paperfetch.dashboard.job import JobDashboard

        with self._view_lock:
            if self._view is None:
                self._view = JobDashboard(self, self._model)
                if self.done():
                    self._view.close()
            return self._view

    @property
    def dashboard(self) -> Any:
        """The live dashboard widget (an ipywidgets ``VBox``); ``None`` without ipywidgets."""
        view = self.dashboard_view
        return None if view is None else view.widget

    def _notebook_view(self) -> JobDashboard | None:
        """The dashboard in a Jupyter kernel; ``None`` elsewhere (a terminal IPython shows the line)."""
        from paperfetch.dashboard.env import in_notebook

        return self.dashboard_view if in_notebook() else None

    def _ipython_display_(self) -> None:
        from IPython.display import display

        view = self._notebook_view()
        if view is None:
            display({"text/plain": repr(self)}, raw=True)
            return
        view.show()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict[str, Any]:
        view = self._notebook_view()
        return {"text/plain": repr(self)} if view is None else view._repr_mimebundle_(include, exclude, **kwargs)


def _route_output(job: Job) -> Callable[[], None]:
    """In a Jupyter kernel, log records and warnings from the job's threads go to ``job.log``
    (docs/background.md, "Output from the background threads"): a filter on every ``paperfetch`` logger
    (filters see records before any handler) and a wrapper of :func:`warnings.showwarning`. Returns what
    removes both (nothing to remove outside a kernel)."""
    from paperfetch.dashboard.env import in_notebook

    if not in_notebook():
        return lambda: None
    ref = weakref.ref(job)

    def kept(line: str) -> bool:
        """Keep *line* (redacted, with the time) in the job's log when the calling thread is one of the job's
        own (its runner or its batch workers); whether it was."""
        owner, thread = ref(), threading.current_thread()
        if owner is None or not (thread is owner.runner_thread or thread.name.startswith("paperfetch-batch-")):
            return False
        if line:
            owner.log.append(f"{time.strftime('%H:%M:%S')} {redact_text(line)}")
        return True

    def route(record: logging.LogRecord) -> bool:
        """The loggers' filter: a record of a job thread goes to the job's log (or nowhere), any other passes."""
        return not kept(_log_line(record))

    loggers = [logging.getLogger(n) for n in _package_logger_names()]
    for log in loggers:
        log.addFilter(route)
    previous = warnings.showwarning

    def showwarning(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
                    line: str | None = None) -> None:
        if not kept(f"{category.__name__}: {message}"):
            previous(message, category, filename, lineno, file, line)

    warnings.showwarning = showwarning

    def uninstall() -> None:
        for log in loggers:
            log.removeFilter(route)
        if warnings.showwarning is showwarning:
            warnings.showwarning = previous

    return uninstall


#: (module, function) of the transport's records that say what one of its events says (a hold, a suppression,
#: an open breaker, a robots.txt refusal or an unreachable robots.txt), which the job's dashboard shows already
#: in its host table and recent events; None: any function of the module.
_SHOWN_AS_EVENTS: frozenset[tuple[str, str | None]] = frozenset({("hostside", None), ("client", "_robots_refusal")})


def _log_line(record: logging.LogRecord) -> str:
    """The line of the job's log for *record*: its message, ``ERROR`` before it from that level up; ``""``
    for a transport record the dashboard shows as an event (:data:`_SHOWN_AS_EVENTS`)."""
    if record.name.startswith("paperfetch.http.") and (
            (record.module, None) in _SHOWN_AS_EVENTS or (record.module, record.funcName) in _SHOWN_AS_EVENTS):
        return ""
    message = record.getMessage()
    return f"{record.levelname} {message}" if record.levelno >= logging.ERROR else message


def _package_logger_names() -> list[str]:
    """Every ``paperfetch`` logger there is and every one a module not imported yet will make (its
    ``__name__``), and urllib3's: a filter on a logger only sees the records logged on that very logger."""
    from pathlib import Path

    manager = logging.getLogger().manager
    names = {n for n in list(manager.loggerDict) if n == "paperfetch" or n.startswith("paperfetch.")}
    root = Path(__file__).resolve().parent
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.add(".".join(("paperfetch", *parts)))
    names.update(("urllib3", "urllib3.connectionpool"))  # the transport's connections, logged in the workers
    return sorted(names)


_RUNNING: weakref.WeakSet[Job] = weakref.WeakSet()


def _stop_running_jobs() -> None:
    """At interpreter exit, stop every running job cleanly: the ledger records what finished."""
    for job in list(_RUNNING):
        try:
            job.stop(timeout=10.0)
        except Exception:  # noqa: BLE001 - exiting anyway
            logger.debug("stopping %r at exit failed", job, exc_info=True)


atexit.register(_stop_running_jobs)
