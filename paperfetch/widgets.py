"""The import face of the dashboard and of ``style_domain_status``: every name where it always was, no code;
``HostSnapshot`` here is the dashboard's :class:`~paperfetch.dashboard.snapshot.HostRow`.
"""

from __future__ import annotations

from paperfetch.dashboard.env import in_notebook, widgets_available
from paperfetch.dashboard.model import RECENT_EVENTS as RECENT_EVENTS
from paperfetch.dashboard.model import BatchSnapshot, DashboardModel, HostRow, RecentEvent
from paperfetch.dashboard.render import HOST_COLUMNS, HostColumn
from paperfetch.dashboard.render import render_counts_html as render_counts_html
from paperfetch.dashboard.render import render_events_html as render_events_html
from paperfetch.dashboard.render import render_hosts_html as render_hosts_html
from paperfetch.dashboard.render import render_html as render_html
from paperfetch.dashboard.render import render_text as render_text
from paperfetch.dashboard.tables import HELD_COLOUR as HELD_COLOUR
from paperfetch.dashboard.tables import STATUS_TEXT_LIMIT as STATUS_TEXT_LIMIT
from paperfetch.dashboard.tables import SUPPRESSED_COLOUR as SUPPRESSED_COLOUR
from paperfetch.dashboard.tables import style_domain_status
from paperfetch.dashboard.view import Dashboard

#: The dashboard's per-host row, under the name this module always gave it.
HostSnapshot = HostRow

# also importable from here, not in __all__: RECENT_EVENTS, render_*, HELD_COLOUR, SUPPRESSED_COLOUR, STATUS_TEXT_LIMIT
__all__ = [
    "BatchSnapshot",
    "Dashboard",
    "DashboardModel",
    "HOST_COLUMNS",
    "HostColumn",
    "HostRow",
    "HostSnapshot",
    "RecentEvent",
    "in_notebook",
    "style_domain_status",
    "widgets_available",
]
