"""The dashboard shown: an ipywidgets view of a :class:`~paperfetch.dashboard.model.DashboardModel`.

:class:`Dashboard` is a progress bar with counts by status, the per-host table and the recent
notable events, redrawn from the model's snapshots by a timer, at most ``1 / interval_s`` times a
second (4 by default) whatever the event rate, each redraw inside ``hold_sync()``, and once more on
:meth:`~Dashboard.close`. Displayed, it is a mime bundle: the widget's view plus static
``text/html`` and ``text/plain`` of the same moment (:mod:`paperfetch.dashboard.render`); once the
run has ended, the final state alone, and the output :meth:`~Dashboard.show` made is replaced by
it, so a saved notebook keeps a readable record without a kernel. ``Dashboard(enabled=False)``
does nothing. Its ``repr`` is text, for terminals.

It neither counts (the model does) nor formats (the renderer does); ipywidgets is imported when an
enabled dashboard is made, not with this module.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from contextlib import ExitStack
from typing import Any, cast

from paperfetch import defaults
from paperfetch.dashboard import env
from paperfetch.dashboard.model import BatchSnapshot, DashboardModel
from paperfetch.dashboard.render import (
    render_counts_html,
    render_events_html,
    render_hosts_html,
    render_html,
    render_text,
)

__all__ = ["Dashboard"]

logger = logging.getLogger("paperfetch.widgets")


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
        max_rows: int = defaults.DASHBOARD_MAX_ROWS,
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

        # The bar keeps its width (it never shrinks to a sliver); the counts wrap beside it, or below it
        # in a narrow notebook (1024 px with the file browser open).
        self.progress_bar = w.IntProgress(value=0, min=0, max=0, description=title, bar_style="",
                                          layout=w.Layout(width="18em", min_width="14em", flex="0 0 auto"))
        self.counts = w.HTML(value="", layout=w.Layout(width="auto", flex="1 1 16em", min_width="0"))
        self.hosts = w.HTML(value="", layout=w.Layout(width="100%"))
        self.events = w.HTML(value="", layout=w.Layout(width="100%"))
        top = w.HBox([self.progress_bar, self.counts], layout=w.Layout(flex_flow="row wrap", width="100%"))
        self.widget = _root_class()([top, self.hosts, self.events],
                                    layout=w.Layout(width="100%", max_width="100%"))
        self.widget.paperfetch_view = weakref.ref(self)
        self.refresh()
        if autostart is None:
            autostart = env.in_notebook()
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
            self._countdown = bool(snap.held) and not snap.ended  # a finished run counts nothing down
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
        if not snap.ended and getattr(self.widget, "comm", None) is not None:
            bundle.update(self.widget._repr_mimebundle_(include=include, exclude=exclude, **kwargs) or {})
        bundle.update(self._static_bundle(snap))
        return bundle

    def show(self) -> None:
        """Display the dashboard, when in a Jupyter kernel (elsewhere: nothing); :meth:`close` later
        replaces this output with the final state."""
        if self.enabled and env.in_notebook():
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
