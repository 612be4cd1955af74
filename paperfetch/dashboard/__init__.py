"""The live notebook dashboard of a batch, in five rooms.

* :mod:`~paperfetch.dashboard.snapshot` — :class:`BatchSnapshot` and :class:`HostRow`, plain frozen
  data: what the dashboard shows at one moment, and what it says in words (a host's state, the
  offline line, the line for the other hosts of a shared store).
* :mod:`~paperfetch.dashboard.model` — :class:`DashboardModel` counts the run's events and item
  outcomes and reads politeness from the watched clients' snapshots; it makes the snapshots.
* :mod:`~paperfetch.dashboard.render` — pure functions: a snapshot as HTML and as text.
* :mod:`~paperfetch.dashboard.view` — :class:`Dashboard`, the ipywidgets view (timer, ``hold_sync``
  redraws, the mime bundle a saved notebook keeps).
* :mod:`~paperfetch.dashboard.env` — whether this is a Jupyter kernel, whether ipywidgets is there.

One answer per notebook: while a run goes, holds count down ("HELD 12:34 left"). When it ends,
:meth:`DashboardModel.finish` freezes the model: every view of that run shows the same final
snapshot, "ended HH:MM:SS UTC", holds as clock times, nothing counting down. The politeness state
*now* is ``r.domain_status()`` (for people: :func:`paperfetch.report.style_domain_status`).

The dashboard knows no Retriever: whoever runs a batch makes the model, watches its clients with
it (:meth:`DashboardModel.watch`) and tells it about items. :mod:`paperfetch.widgets` is the
import face that keeps the names where they were.
"""

from __future__ import annotations

from paperfetch.dashboard.env import in_notebook, widgets_available
from paperfetch.dashboard.model import RECENT_EVENTS, BatchSnapshot, DashboardModel, HostRow, RecentEvent
from paperfetch.dashboard.render import HOST_COLUMNS, HostColumn, render_html, render_text
from paperfetch.dashboard.view import Dashboard

__all__ = [
    "BatchSnapshot",
    "Dashboard",
    "DashboardModel",
    "HOST_COLUMNS",
    "HostColumn",
    "HostRow",
    "RECENT_EVENTS",
    "RecentEvent",
    "in_notebook",
    "render_html",
    "render_text",
    "widgets_available",
]
