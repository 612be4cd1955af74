"""The notebook views: the live dashboard of a batch (docs/dashboard.md) and the per-host table for people
(:func:`style_domain_status`)."""

from __future__ import annotations

from paperfetch.dashboard.env import in_notebook, widgets_available
from paperfetch.dashboard.model import RECENT_EVENTS, BatchSnapshot, DashboardModel, HostRow, RecentEvent
from paperfetch.dashboard.render import HOST_COLUMNS, HostColumn, render_html, render_text
from paperfetch.dashboard.tables import style_domain_status
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
    "style_domain_status",
    "widgets_available",
]
