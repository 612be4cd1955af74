"""A background job's dashboard: the batch dashboard with a Stop button, an ETA and the log. It knows the
job only by :class:`JobControl` (docs/background.md, "Displayed").
"""

from __future__ import annotations

import html
import logging
import threading
from typing import Any, Protocol, Sequence

from paperfetch.dashboard import env
from paperfetch.dashboard.view import Dashboard

__all__ = ["JobControl", "JobDashboard"]

logger = logging.getLogger(__name__)

#: Lines of the job's log the dashboard shows (the newest).
LOG_SHOWN = 8


class JobControl(Protocol):
    """What the dashboard asks a job (:class:`paperfetch.job.Job` is one)."""

    def stop(self, timeout: float | None = None) -> None: ...
    def progress_line(self, snapshot: Any = None) -> str: ...
    @property
    def log(self) -> Sequence[str]: ...
    def done(self) -> bool: ...


def _line_html(text: str, *, ended: bool) -> str:
    css = "paperfetch-job-line" + (" paperfetch-job-ended" if ended else "")
    return f'<div class="{css}" style="font-family:monospace;padding:2px 0">{html.escape(text)}</div>'


def _log_html(lines: list[str]) -> str:
    if not lines:
        return ""
    shown = "<br>".join(html.escape(line) for line in lines[-LOG_SHOWN:])
    # its own line height: an HTML widget's (28 px, a button's) would space each line as a paragraph
    return (f'<div class="paperfetch-job-log" style="font-family:monospace;font-size:85%;line-height:1.4;color:#555">'
            f"<b>log of the job</b><br>{shown}</div>")


def _summary_html(model: Any, *, ended: bool) -> str:
    """The ended run's summary plot as an image (:meth:`paperfetch.plot.RunSummary.image_html`), else ``""``."""
    summary = getattr(model, "summary", None)
    return summary.image_html() if ended and summary is not None else ""


class JobDashboard:
    """A running job's widget (``widget``, ``line``, ``stop_button``, ``dashboard``, ``log``); :meth:`close` freezes it.
    Each redraw draws the line and *dashboard* from one snapshot, so the line's count is the dashboard's."""

    def __init__(self, job: JobControl, dashboard: Dashboard, *, interval_s: float = 0.25) -> None:
        import ipywidgets as w

        self.job = job
        self.dashboard = dashboard
        self.interval_s = float(interval_s)
        self.line = w.HTML(value="", layout=w.Layout(width="auto"))
        self.stop_button = w.Button(description="Stop", icon="stop", button_style="danger",
                                    tooltip="stop the batch: finished rows are kept, the others get 'stopped'",
                                    layout=w.Layout(width="auto"))
        self.stop_button.add_class("paperfetch-stop")
        self.stop_button.on_click(self._clicked)
        self.log = w.HTML(value="", layout=w.Layout(width="100%"))
        parts = [w.HBox([self.stop_button, self.line]), dashboard.widget, self.log]
        self.widget = w.VBox([p for p in parts if p is not None], layout=w.Layout(width="100%", max_width="100%"))
        self.widget.add_class("paperfetch-job")
        self._handles: list[Any] = []
        self._frozen = False  # the final state is in every output shown
        self._closed = threading.Event()
        self._final_started = False
        self._drawn = threading.Event()  # the final frame is in every output shown
        self._lock = threading.Lock()
        self.refresh()
        self._thread = threading.Thread(target=self._tick, name="paperfetch-job-view", daemon=True)
        self._thread.start()

    def _clicked(self, button: Any) -> None:
        button.disabled = True
        button.description = "Stopping…"
        try:
            self.job.stop()
        except Exception:  # noqa: BLE001 - a view never breaks a run
            logger.debug("stop from the dashboard failed", exc_info=True)

    def _tick(self) -> None:
        while not self._closed.wait(self.interval_s):
            try:
                self.refresh()
            except Exception:  # noqa: BLE001 - a view never breaks a run
                logger.debug("job dashboard redraw failed", exc_info=True)

    def refresh(self) -> None:
        with self._lock:
            ended = self._closed.is_set()
            snap = self.dashboard.snapshot()
            self.dashboard.refresh(snap)
            self.line.value = _line_html(self.job.progress_line(snap), ended=ended)  # a widget sends only a change
            self.log.value = _log_html(list(self.job.log))

    def close(self) -> None:
        """Freeze: disable the button and stop the timer at once; the view's own thread then draws the final frame
        (the summary plot included) into :meth:`show`'s outputs, so a stop never waits for the drawing."""
        self.stop_button.disabled = True
        self.stop_button.description = "Stopped" if getattr(self.job, "stop_requested", False) else "Finished"
        self._closed.set()
        # a thread of its own, started by the closing thread (in a kernel, its outputs go where the closer's would)
        threading.Thread(target=self._draw_final, name="paperfetch-job-view", daemon=True).start()

    def _draw_final(self) -> None:
        """The last redraw and the final state in every output shown; once, whichever thread comes first."""
        with self._lock:
            if self._final_started:
                return
            self._final_started = True
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)  # its last redraw ends before the final one
        try:
            self.dashboard.close()
            self.refresh()
            bundle = self.static_bundle()
            with self._lock:
                self._frozen = True
                handles, self._handles = self._handles, []
            for handle in handles:
                handle.update(bundle, raw=True)
        except Exception:  # noqa: BLE001 - a view never breaks a run
            logger.debug("final job dashboard redraw failed", exc_info=True)
        finally:
            self._drawn.set()

    def wait_drawn(self, timeout: float | None = None) -> bool:
        """Block until the final frame is drawn (after :meth:`close`) or *timeout*; whether it is."""
        return self._drawn.wait(timeout)

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def text(self) -> str:
        return f"{self.job!r}\n{self.dashboard.text()}"

    def static_bundle(self) -> dict[str, str]:
        ended = self._closed.is_set()
        snap = self.dashboard.snapshot()
        body = (_line_html(self.job.progress_line(snap), ended=ended) + self.dashboard.html(snap)
                + _log_html(list(self.job.log)) + _summary_html(self.dashboard.model, ended=ended))
        return {"text/html": f'<div class="paperfetch-job">{body}</div>', "text/plain": self.text()}

    def bundle(self) -> dict[str, Any]:
        """The widget's view plus the static renderings; the static ones alone once the job ended."""
        bundle: dict[str, Any] = {}
        if not self._closed.is_set() and getattr(self.widget, "comm", None) is not None:
            bundle.update(self.widget._repr_mimebundle_() or {})
        bundle.update(self.static_bundle())
        return bundle

    def show(self) -> None:
        """Display with a display id (in a Jupyter kernel only), which :meth:`close` later fills with the final state."""
        if not env.in_notebook():
            return
        from IPython.display import display

        handle = display(self.bundle(), raw=True, display_id=True)
        if handle is None:
            return
        with self._lock:
            if not self._frozen:
                self._handles.append(handle)
                return
        handle.update(self.static_bundle(), raw=True)  # the job ended while it was being shown

    def __repr__(self) -> str:
        return self.text()
