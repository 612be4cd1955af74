"""The summary plot of a batch (docs/outcomes.md, "The summary plot"): outcomes by status, outcomes by
source, and the time spent per host, drawn with matplotlib, the optional extra ``plot``. It draws what it is
given, leaving out a panel with nothing to show; :class:`RunSummary` keeps a run's outcomes so the saved
dashboard can show the same figure.
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
#: The figure's width in inches: at :data:`IMAGE_DPI` about the width of a notebook's output in a 1024 px window,
#: so the saved image, drawn at the output's width, keeps its text at the size it was drawn.
FIGURE_WIDTH_IN = 11.0
IMAGE_DPI = 80
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


def _sources(outcomes: pd.DataFrame) -> list[str]:
    column = outcomes["source"].astype(object) if "source" in outcomes.columns else [None] * len(outcomes)
    return ["(none)" if is_missing(s) else str(s) for s in column]


def _per_host(requests: pd.DataFrame | None) -> pd.DataFrame | None:
    """Seconds on the wire and waited per host, the slowest first; None without requests. The hosts are
    ``Retriever.requests()``'s, read as people read them already (a pool by the label its client declared)."""
    if requests is None or len(requests) == 0 or "host" not in requests.columns:
        return None
    import pandas as pd

    frame = pd.DataFrame({"host": requests["host"].astype(str),
                          "elapsed": pd.to_numeric(requests.get("elapsed_s"), errors="coerce").fillna(0.0),
                          "waited": pd.to_numeric(requests.get("waited_s"), errors="coerce").fillna(0.0)})
    per_host = frame.groupby("host", sort=False).sum()
    per_host = per_host.assign(total=per_host["elapsed"] + per_host["waited"])
    return per_host.sort_values(["total"], ascending=False, kind="stable").head(HOSTS_SHOWN)


def _by_status(ax: Any, outcomes: pd.DataFrame) -> None:
    statuses = _statuses(outcomes)
    order = [s.value for s in Status]
    names = sorted(set(statuses), key=lambda s: (order.index(s) if s in order else len(order), s))
    ax.set_title("outcomes by status")
    bars = ax.barh(names, [statuses.count(n) for n in names], color=[_colour(n) for n in names])
    ax.bar_label(bars, padding=2)
    _counts_axis(ax)
    ax.margins(x=0.15)


def _by_source(ax: Any, outcomes: pd.DataFrame) -> None:
    statuses, sources = _statuses(outcomes), _sources(outcomes)
    well = Counter(source for source, status in zip(sources, statuses) if status in FINISHED_WELL_STATUSES)
    every = Counter(sources)
    ax.set_title("outcomes by source")
    names = sorted(every, key=lambda s: (s == "(none)", -every[s], s))
    ok = [well[n] for n in names]
    ax.barh(names, ok, color=_WELL, label="downloaded")
    ax.barh(names, [every[n] - well[n] for n in names], left=ok, color=_FAILED, label="not downloaded")
    _counts_axis(ax)
    ax.legend(loc="lower right", fontsize="small")


def _time_per_host(ax: Any, per_host: pd.DataFrame) -> None:
    ax.set_title("time per host")
    names = list(per_host.index)
    ax.barh(names, per_host["elapsed"], color="#1976d2", label="requests")
    ax.barh(names, per_host["waited"], left=per_host["elapsed"], color=_WAIT, label="waiting (pacing)")
    ax.invert_yaxis()
    ax.set_xlabel("seconds")
    ax.legend(loc="lower right", fontsize="small")


def summary_figure(outcomes: pd.DataFrame, requests: pd.DataFrame | None = None) -> Figure:
    """A matplotlib Figure of up to three panels: the *outcomes* by status, by source (downloaded or not), and
    the time per host from *requests* (``Retriever.requests()``: time on the wire and time waited for the
    pacing, the slowest :data:`HOSTS_SHOWN` hosts). A panel with no data (no source named, no request) is left
    out. Works headless (no display needed); without matplotlib an ImportError naming the extra ``plot``."""
    figure_class = _figure_class()
    per_host = _per_host(requests)
    panels: list[Callable[[Any], None]] = [lambda ax: _by_status(ax, outcomes)]
    if any(source != "(none)" for source in _sources(outcomes)):
        panels.append(lambda ax: _by_source(ax, outcomes))
    if per_host is not None:
        panels.append(lambda ax: _time_per_host(ax, per_host))
    bars = max(len(set(_statuses(outcomes))), len(set(_sources(outcomes))), 0 if per_host is None else len(per_host))
    fig = figure_class(figsize=(FIGURE_WIDTH_IN, min(4.2, 1.3 + 0.25 * bars)), layout="constrained")
    for ax, draw in zip(fig.subplots(1, len(panels), squeeze=False)[0], panels):
        draw(ax)
    fig.suptitle(_headline(outcomes))
    return fig


def _headline(outcomes: pd.DataFrame) -> str:
    statuses = _statuses(outcomes)
    return f"paperfetch: {sum(s in FINISHED_WELL_STATUSES for s in statuses)} of {len(statuses)} input(s) downloaded"


def figure_png(fig: Figure, *, dpi: int = IMAGE_DPI) -> bytes:
    """*fig* as PNG bytes (matplotlib's Agg renderer, no display) in a palette of 64 colours: flat bars and
    text need no more, and the image a notebook keeps is a fraction of the size."""
    from PIL import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    buffer.seek(0)
    small = io.BytesIO()
    Image.open(buffer).convert("RGB").quantize(colors=64).save(small, format="png", optimize=True)
    return small.getvalue()


@dataclass
class RunSummary:
    """An ended run's outcomes and where to read its requests (*requests*, a callable returning
    ``Retriever.requests()``; the rows between *started* and *ended*, epoch seconds, are the run's).
    *asked* is False for a run made on the user's behalf (``fulltext``'s batch): it leaves no image."""

    outcomes: pd.DataFrame
    requests: Callable[[], pd.DataFrame] | None = None
    started: float = float("-inf")
    ended: float = float("inf")
    asked: bool = True
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
        """The figure as a static ``<img>`` (an inline PNG, drawn at the output's width) for the saved dashboard,
        made once; ``""`` for a run not :attr:`asked` or that downloaded nothing, without matplotlib, or when
        drawing fails (a view never breaks a run)."""
        if self._image is None and not (self.asked and Status.DOWNLOADED.value in _statuses(self.outcomes)):
            self._image = ""
        if self._image is None:
            try:
                fig = self.figure()
                data = base64.b64encode(figure_png(fig)).decode("ascii")
                alt = html.escape(_headline(self.outcomes))
                self._image = (f'<div class="paperfetch-summary-plot"><img alt="{alt}" src="data:image/png;base64,'
                               f'{data}" style="width:100%;height:auto"></div>')
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
