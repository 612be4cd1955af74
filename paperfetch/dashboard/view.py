"""The dashboard shown: the ipywidgets view of a DashboardModel, imported only when enabled (docs/dashboard.md)."""

from __future__ import annotations

import functools
import logging
import threading
import time
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

logger = logging.getLogger(__name__)


class Dashboard:
    """The ipywidgets view of a :class:`DashboardModel` (docs/dashboard.md): progress, hosts, recent events.

    :param model: what to show; a new, empty model when omitted.
    :param enabled: ``False``: no widgets, no thread, no cost; every method does nothing.
    :param interval_s: the shortest time between two redraws.
    :param autostart: start the redraw timer now (default: in a Jupyter kernel); the text repr is always fresh.
    :param max_rows: hosts shown in the table (held and suppressed ones first).

    ``widget`` is the root ``VBox`` of ``progress_bar``, ``counts``, ``hosts`` and ``events``. Displayed, it is
    the widget plus static HTML and text; once its run ended, the static final state alone.
    """

    #: The name of the redraw timer's thread.
    thread_name = "paperfetch-dashboard"

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
        self._frozen = False  # the final state is in every output shown
        if not self.enabled:
            return
        if self.model is None:
            self.model = DashboardModel()
        import ipywidgets as w

        # the bar keeps its width; the counts wrap beside it, or below it in a narrow notebook
        self.progress_bar = w.IntProgress(value=0, min=0, max=0, description=title, bar_style="",
                                          layout=w.Layout(width="18em", min_width="14em", flex="0 0 auto"))
        self.counts = w.HTML(value="", layout=w.Layout(width="auto", flex="1 1 16em", min_width="0"))
        self.hosts = w.HTML(value="", layout=w.Layout(width="100%"))
        self.events = w.HTML(value="", layout=w.Layout(width="100%"))
        top = w.HBox([self.progress_bar, self.counts], layout=w.Layout(flex_flow="row wrap", width="100%"))
        self.widget = self._box = _root_class()([top, self.hosts, self.events],
                                                layout=w.Layout(width="100%", max_width="100%"))
        self.refresh()
        if autostart is None:
            autostart = env.in_notebook()
        if autostart:
            self.start()

    @property
    def _model(self) -> DashboardModel:
        """The model of an enabled dashboard (every caller checks ``enabled`` first)."""
        return cast(DashboardModel, self.model)

    def start(self) -> None:
        """Start the redraw timer (a daemon thread; it ends by itself once nothing can change)."""
        if not self.enabled or (self._thread is not None and self._thread.is_alive()):
            return
        self._stop.clear()
        # The thread holds the dashboard, since a notebook often keeps only ``.widget``; it ends by
        # itself (see tick), on close(), or when the widget is closed.
        self._thread = threading.Thread(target=self._timer, name=self.thread_name, daemon=True)
        self._thread.start()

    def _timer(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                if not self.tick():
                    return
            except Exception:  # noqa: BLE001 - a view never breaks a run
                logger.debug("dashboard redraw failed", exc_info=True)

    def tick(self) -> bool:
        """Redraw if the model changed (or each second while a hold counts down); whether the timer is still needed."""
        if not self.enabled or getattr(self.widget, "comm", True) is None:  # disabled, or its widget closed
            return False
        model = self._model
        if model.version != self._drawn_version or (self._countdown and time.monotonic() - self._drawn_at >= 1.0):
            self.refresh()
        return model.running or self._countdown

    def refresh(self, snapshot: BatchSnapshot | None = None) -> None:
        """Redraw now, from *snapshot* (default: the model's now)."""
        if not self.enabled:
            return
        self._redraw(snapshot if snapshot is not None else self._model.snapshot())

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
            bar.value = max(0, min(snap.finished, total))
            if snap.running or snap.finished_at is not None:
                bar.bar_style = snap.bar_style
            self.counts.value = render_counts_html(snap)
            self.hosts.value = render_hosts_html(snap, self.max_rows)
            self.events.value = render_events_html(snap)
            self._drawn_version = snap.version
            self._drawn_at = time.monotonic()
            self._countdown = bool(snap.held) and not snap.ended  # a finished run counts nothing down
            self._last = snap
            self._box.summary_line = snap.summary()
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
            bundle = self.static_bundle(self._last)
            with self._draw_lock:
                self._frozen = True
                handles, self._handles = self._handles, []
            for handle in handles:
                handle.update(bundle, raw=True)
        except Exception:  # noqa: BLE001 - close() runs in a download's finally: it must not mask its outcome
            logger.debug("final dashboard redraw failed", exc_info=True)

    def snapshot(self) -> BatchSnapshot | None:
        return self._model.snapshot() if self.enabled else None

    def text(self) -> str:
        if not self.enabled:
            return "Dashboard(disabled)"
        return render_text(self._model.snapshot(), max_rows=self.max_rows)

    def html(self, snapshot: BatchSnapshot | None = None) -> str:
        """The dashboard now (or at *snapshot*) as static HTML (no widget)."""
        if not self.enabled:
            return ""
        return render_html(snapshot if snapshot is not None else self._model.snapshot(), self.max_rows, self.title)

    def static_bundle(self, snapshot: BatchSnapshot | None = None) -> dict[str, str]:
        """The static renderings (HTML, text) of *snapshot* (default: the model's now), what a saved notebook keeps."""
        snap = snapshot if snapshot is not None else self._model.snapshot()
        return {"text/html": self.html(snap), "text/plain": render_text(snap, max_rows=self.max_rows)}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict[str, Any]:
        """The widget's view plus static renderings of the same moment; the final state alone once the run ended."""
        if not self.enabled:
            return {"text/plain": "Dashboard(disabled)"}
        snap = self._model.snapshot()
        bundle: dict[str, Any] = {}
        if not (snap.ended or self._frozen) and getattr(self.widget, "comm", None) is not None:
            bundle.update(self.widget._repr_mimebundle_(include=include, exclude=exclude, **kwargs) or {})
        bundle.update(self.static_bundle(snap))
        return bundle

    def show(self) -> None:
        """Display the dashboard (in a Jupyter kernel only); :meth:`close` later puts the final state there."""
        if self.enabled and env.in_notebook():
            from IPython.display import display

            handle = display(self, display_id=True)
            if handle is None:
                return
            with self._draw_lock:
                if not self._frozen:
                    self._handles.append(handle)
                    return
            handle.update(self.static_bundle(), raw=True)  # it ended while it was being shown

    def __repr__(self) -> str:  # IPython's pretty printer shows it too
        return self.text()


@functools.cache
def _root_class() -> Any:
    """A ``VBox`` whose ``repr`` is the dashboard's summary line, not ``VBox(children=(...``."""
    import ipywidgets as w

    class DashboardBox(w.VBox):
        summary_line = "paperfetch dashboard"  # the summary of the snapshot drawn last

        def __repr__(self) -> str:
            return self.summary_line

    return DashboardBox
