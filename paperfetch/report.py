"""The tables people read: ``domain_status()`` (one row per host) and ``requests()`` (one row per request).

Built from :class:`~paperfetch.http.hosts.HostSnapshot` values and request records, so the
transport itself (:mod:`paperfetch.http`) never imports pandas.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Iterable, Mapping

import pandas as pd

from paperfetch.http.hosts import HostSnapshot

__all__ = ["DOMAIN_STATUS_COLUMNS", "REQUEST_COLUMNS", "domain_status_frame", "requests_frame"]

DOMAIN_STATUS_COLUMNS = [
    "host", "requests", "in_flight", "ok", "errors", "last_status", "delay_min_s", "delay_max_s", "backoff_s",
    "learned_interval_s", "held_until", "hold_status", "suppressed", "suppressed_reason", "suppressed_until",
    "crawl_delay_s", "robots", "breaker", "failures", "breaker_open_until", "next_allowed_at",
]
_DATETIMES = ("held_until", "suppressed_until", "breaker_open_until", "next_allowed_at")
_INTS = ("last_status", "hold_status")

REQUEST_COLUMNS = ["time", "host", "url", "status", "waited_s", "elapsed_s", "source", "identifier", "outcome"]


def domain_status_frame(snapshots: Iterable[HostSnapshot]) -> pd.DataFrame:
    """One row per host, sorted by host."""
    names = {f.name for f in fields(HostSnapshot)}
    rows = []
    for snap in sorted(snapshots, key=lambda s: s.host):
        row = {name: getattr(snap, name) for name in DOMAIN_STATUS_COLUMNS if name in names}
        if snap.held_until is None:
            row["hold_status"] = None
        rows.append(row)
    frame = pd.DataFrame(rows, columns=DOMAIN_STATUS_COLUMNS)
    for column in _DATETIMES:
        frame[column] = pd.to_datetime(frame[column], utc=True)
    for column in _INTS:
        frame[column] = frame[column].astype("Int64")
    return frame


def requests_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per HTTP request (``time`` in epoch seconds in, UTC datetimes out)."""
    frame = pd.DataFrame(list(rows), columns=REQUEST_COLUMNS)
    frame["time"] = pd.to_datetime(frame["time"], unit="s", utc=True)
    frame["status"] = frame["status"].astype("Int64")
    return frame
