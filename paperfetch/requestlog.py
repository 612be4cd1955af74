"""The request log behind ``Retriever.requests()``: an event subscriber making one row per request."""

from __future__ import annotations

import threading
from typing import Any

import pandas as pd

from paperfetch.http.events import Event, EventKind
from paperfetch.items import current_job, current_source
from paperfetch.redact import redact_frame
from paperfetch.report import requests_frame

__all__ = ["RequestLog"]

_LOGGED = frozenset({EventKind.RESPONSE, EventKind.NETWORK_ERROR, EventKind.HELD, EventKind.SUPPRESSED,
                     EventKind.DISALLOWED})


class RequestLog:
    """Rows of the requests sent (and refused before sending), thread-safe; :meth:`frame` is the DataFrame."""

    def __init__(self) -> None:
        self._rows: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def on_event(self, event: Event) -> None:
        job = current_job()
        if event.kind is EventKind.WAIT and job is not None:
            job.waited_s += event.seconds or 0.0
            return
        if event.kind not in _LOGGED:
            return
        waited = None
        if job is not None:
            waited = job.waited_s - job.waited_reported_s
            job.waited_reported_s = job.waited_s
            if event.kind in (EventKind.RESPONSE, EventKind.NETWORK_ERROR):
                job.requests += 1
        row = {
            "time": event.at,
            "host": event.host,
            "url": event.url,
            "status": event.status,
            "waited_s": waited,
            "elapsed_s": event.seconds if event.kind is EventKind.RESPONSE else None,
            "source": current_source(),
            "identifier": job.identifier.key if job is not None else None,
            "outcome": event.kind.value,
        }
        with self._lock:
            self._rows.append(row)

    def frame(self) -> pd.DataFrame:
        """One row per request: time (UTC, ms), host, URL, status, waited, elapsed, source, identifier, outcome."""
        with self._lock:
            rows = list(self._rows)
        return redact_frame(requests_frame(rows))
