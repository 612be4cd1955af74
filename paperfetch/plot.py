"""The summary plot of a batch (docs/outcomes.md, "The summary plot"): outcomes by status, outcomes by
source, and the time spent per host, drawn with matplotlib, the optional extra ``plot``. It draws what it is
given; :class:`RunSummary` keeps a run's outcomes so the saved dashboard can show the same figure.
"""

from __future__ import annotations

import base64
import html
import io
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from paperfetch.cells import is_missing
from paperfetch.outcomes import BLOCKED_STATUSES, FINISHED_WELL_STATUSES, Status

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["MISSING_MATPLOTLIB", "RunSummary", "figure_png", "summary_figure"]

logger = logging.getLogger(__name__)

#: What a plot without matplotlib raises (an ImportError): the extra that brings it.
MISSING_MATPLOTLIB = "the summary plot needs matplotlib, an optional extra: pip install 'paperfetch-oa[plot]'"
#: Hosts shown in the time panel (the slowest).
HOSTS_SHOWN = 10
_WELL, _BLOCKED, _STOPPED, _FAILED, _WAIT = "#4caf50", "#ff9800", "#9e9e9e", "#f44336", "#90caf9"


_FIGURE_CLASS: Any = None


def _figure_class() -> Any:
    """matplotlib's Figure with a PNG repr: a notebook shows it as the cell's result even when pyplot (whose
    backend registers the display of figures) was never imported."""
    global _FIGURE_CLASS
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(MISSING_MATPLOTLIB, name="matplotlib") from exc
    if _FIGURE_CLASS is None:
        class SummaryFigure(Figure):
            def _repr_png_(self) -> bytes:
                return figure_png(self, dpi=100)

        _FIGURE_CLASS = SummaryFigure
    return _FIGURE_CLASS


def _colour(status: str) -> str:
    if status in FINISHED_WELL_STATUSES:
        return _WELL
    if status == Status.STOPPED.value:
        return _STOPPED
    return _BLOCKED if status in BLOCKED_STATUSES else _FAILED


def _statuses(outcomes: pd.DataFrame) -> list[str]:
    return [str(s) for s in outcomes["status"].astype(object).fillna("?")] if "status" in outcomes.columns else []


def _counts_axis(ax: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.invert_yaxis()
    ax.set_xlabel("inputs")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # whole inputs, never 2.5


def _empty(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#555")
    ax.set_xticks([])
    ax.set_yticks([])


def _by_status(ax: Any, outcomes: pd.DataFrame) -> None:
    statuses = _statuses(outcomes)
    order = [s.value for s in Status]
    names = sorted(set(statuses), key=lambda s: (order.index(s) if s in order else len(order), s))
    ax.set_title("outcomes by status")
    if not names:
        _empty(ax, "no rows")
        return
    bars = ax.barh(names, [statuses.count(n) for n in names], color=[_colour(n) for n in names])
    ax.bar_label(bars, padding=2)
    _counts_axis(ax)
    ax.margins(x=0.15)


def _by_source(ax: Any, outcomes: pd.DataFrame) -> None:
    statuses = _statuses(outcomes)
    column = outcomes["source"].astype(object) if "source" in outcomes.columns else [None] * len(statuses)
    sources = ["(none)" if is_missing(s) else str(s) for s in column]
    well = Counter(source for source, status in zip(sources, statuses) if status in FINISHED_WELL_STATUSES)
    every = Counter(sources)
    ax.set_title("outcomes by source")
    names = sorted(every, key=lambda s: (s == "(none)", -every[s], s))
    if not names:
        _empty(ax, "no rows")
        return
    ok = [well[n] for n in names]
    ax.barh(names, ok, color=_WELL, label="downloaded")
    ax.barh(names, [every[n] - well[n] for n in names], left=ok, color=_FAILED, label="not downloaded")
    _counts_axis(ax)
    ax.legend(loc="lower right", fontsize="small")


def _time_per_host(ax: Any, requests: pd.DataFrame | None) -> None:
    ax.set_title("time per host")
    if requests is None or len(requests) == 0 or "host" not in requests.columns:
        _empty(ax, "no requests")
        return
    import pandas as pd

    frame = pd.DataFrame({"host": requests["host"].astype(str),
                          "elapsed": pd.to_numeric(requests.get("elapsed_s"), errors="coerce").fillna(0.0),
                          "waited": pd.to_numeric(requests.get("waited_s"), errors="coerce").fillna(0.0)})
    per_host = frame.groupby("host", sort=False).sum()
    per_host = per_host.assign(total=per_host["elapsed"] + per_host["waited"])
    per_host = per_host.sort_values(["total"], ascending=False, kind="stable").head(HOSTS_SHOWN)
    names = list(per_host.index)
    ax.barh(names, per_host["elapsed"], color="#1976d2", label="requests")
    ax.barh(names, per_host["waited"], left=per_host["elapsed"], color=_WAIT, label="waiting (pacing)")
    ax.invert_yaxis()
    ax.set_xlabel("seconds")
    ax.legend(loc="lower right", fontsize="small")


def summary_figure(outcomes: pd.DataFrame, requests: pd.DataFrame | None = None) -> Figure:
    """A matplotlib Figure of three panels: the *outcomes* by status, by source (downloaded or not), and the
    time per host from *requests* (``Retriever.requests()``: time on the wire and time waited for the pacing,
    the slowest :data:`HOSTS_SHOWN` hosts). Works headless (no display needed); without matplotlib an
    ImportError naming the extra ``plot``."""
    figure_class = _figure_class()
    fig = figure_class(figsize=(14, 4.2), layout="constrained")
    status_ax, source_ax, time_ax = fig.subplots(1, 3)
    _by_status(status_ax, outcomes)
    _by_source(source_ax, outcomes)
    _time_per_host(time_ax, requests)
    fig.suptitle(_headline(outcomes))
    return fig


def _headline(outcomes: pd.DataFrame) -> str:
    statuses = _statuses(outcomes)
    return f"paperfetch: {sum(s in FINISHED_WELL_STATUSES for s in statuses)} of {len(statuses)} input(s) downloaded"


def figure_png(fig: Figure, *, dpi: int = 80) -> bytes:
    """*fig* as PNG bytes (matplotlib's Agg renderer, no display)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


@dataclass
class RunSummary:
    """An ended run's outcomes and where to read its requests (*requests*, a callable returning
    ``Retriever.requests()``; the rows between *started* and *ended*, epoch seconds, are the run's)."""

    outcomes: pd.DataFrame
    requests: Callable[[], pd.DataFrame] | None = None
    started: float = float("-inf")
    ended: float = float("inf")
    _image: str | None = field(default=None, init=False, repr=False)

    def requests_frame(self) -> pd.DataFrame | None:
        if self.requests is None:
            return None
        import pandas as pd

        frame = self.requests()
        seconds = (pd.to_datetime(frame["time"], utc=True) - pd.Timestamp(0, tz="UTC")).dt.total_seconds()
        return frame[(seconds >= self.started - 1e-3) & (seconds <= self.ended + 1e-3)]

    def figure(self) -> Figure:
        """:func:`summary_figure` of this run."""
        return summary_figure(self.outcomes, self.requests_frame())

    def image_html(self) -> str:
        """The figure as a static ``<img>`` (an inline PNG) for the saved dashboard, made once; ``""`` without
        matplotlib, or when drawing fails (a view never breaks a run)."""
        if self._image is None:
            try:
                fig = self.figure()
                data = base64.b64encode(figure_png(fig)).decode("ascii")
                alt = html.escape(_headline(self.outcomes))
                self._image = (f'<div class="paperfetch-summary-plot"><img alt="{alt}" src="data:image/png;base64,'
                               f'{data}" style="max-width:100%;height:auto"></div>')
            except Exception:  # noqa: BLE001 - no matplotlib, or a figure that could not be drawn: no image
                logger.debug("no summary plot in the saved dashboard", exc_info=True)
                self._image = ""
        return self._image

    def show(self) -> None:
        """Display the figure as an output of its own (in a Jupyter kernel, the calling cell's): the image and
        a line of text; nothing without matplotlib. ``download`` calls it below its frozen dashboard."""
        image = self.image_html()
        if not image:
            return
        try:
            from IPython.display import display

            display({"text/html": image, "text/plain": f"{_headline(self.outcomes)} (summary plot: r.plot())"}, raw=True)
        except Exception:  # noqa: BLE001 - runs as a download ends: it must not mask the outcome
            logger.debug("the summary plot could not be displayed", exc_info=True)
