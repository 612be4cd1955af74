"""A background job's dashboard: the batch dashboard with a Stop button, an ETA and the log. It knows the
job only by :class:`JobControl` (docs/background.md, "Displayed").
"""

from __future__ import annotations

import html
import logging
import threading
from typing import Any, Protocol, Sequence

from paperfetch.dashboard.model import BatchSnapshot, DashboardModel
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
    @property
    def stop_requested(self) -> bool: ...


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


def _summary_html(model: DashboardModel, *, ended: bool) -> str:
    """The ended run's summary plot as an image (:meth:`paperfetch.plot.RunSummary.image_html`), else ``""``."""
    return model.summary.image_html() if ended and model.summary is not None else ""


class JobDashboard(Dashboard):
    """A running job's dashboard: the batch :class:`Dashboard` of its *model* below a Stop button and the job's
    line, the job's log last; :meth:`close` freezes it. Each redraw draws the line and the batch dashboard from
    one snapshot, so the line's count is the dashboard's."""

    thread_name = "paperfetch-job-view"

    def __init__(self, job: JobControl, model: DashboardModel, *, interval_s: float = 0.25) -> None:
        import ipywidgets as w

        self.job = job
        self.line = w.HTML(value="", layout=w.Layout(width="auto"))
        self.stop_button = w.Button(description="Stop", icon="stop", button_style="danger",
                                    tooltip="stop the batch: finished rows are kept, the others get 'stopped'",
                                    layout=w.Layout(width="auto"))
        self.stop_button.add_class("paperfetch-stop")
        self.stop_button.on_click(self._clicked)
        self.log = w.HTML(value="", layout=w.Layout(width="100%"))
        self._drawn = threading.Event()  # the final frame is in every output shown
        super().__init__(model, interval_s=interval_s, autostart=False)
        self.widget = w.VBox([w.HBox([self.stop_button, self.line]), self.widget, self.log],
                             layout=w.Layout(width="100%", max_width="100%"))
        self.widget.add_class("paperfetch-job")
        self.start()

    def _clicked(self, button: Any) -> None:
        button.disabled = True
        button.description = "Stopping…"
        try:
            self.job.stop()
        except Exception:  # noqa: BLE001 - a view never breaks a run
            logger.debug("stop from the dashboard failed", exc_info=True)

    def tick(self) -> bool:
        self.refresh()
        return True

    def _redraw(self, snap: BatchSnapshot) -> None:
        super()._redraw(snap)
        self.line.value = _line_html(self.job.progress_line(snap), ended=self.closed)  # a widget sends only a change
        self.log.value = _log_html(list(self.job.log))

    def close(self) -> None:
        """Freeze: disable the button and stop the timer at once; a thread of the view's own then draws the final
        frame (the summary plot included) into :meth:`show`'s outputs, so a stop never waits for the drawing."""
        self.stop_button.disabled = True
        self.stop_button.description = "Stopped" if self.job.stop_requested else "Finished"
        self._stop.set()
        # started by the closing thread (in a kernel, its outputs go where the closer's would)
        threading.Thread(target=self._draw_final, name=self.thread_name, daemon=True).start()

    def _draw_final(self) -> None:
        """The last redraw and the final state in every output shown."""
        try:
            super().close()  # its timer's last redraw ends first
        finally:
            self._drawn.set()

    def wait_drawn(self, timeout: float | None = None) -> bool:
        """Block until the final frame is drawn (after :meth:`close`) or *timeout*; whether it is."""
        return self._drawn.wait(timeout)

    @property
    def closed(self) -> bool:
        return self._stop.is_set()

    def text(self) -> str:
        return f"{self.job!r}\n{super().text()}"

    def static_bundle(self, snapshot: BatchSnapshot | None = None) -> dict[str, str]:
        snap = snapshot if snapshot is not None else self._model.snapshot()
        ended = self.closed
        body = (_line_html(self.job.progress_line(snap), ended=ended) + self.html(snap)
                + _log_html(list(self.job.log)) + _summary_html(self._model, ended=ended))
        return {"text/html": f'<div class="paperfetch-job">{body}</div>', "text/plain": self.text()}
