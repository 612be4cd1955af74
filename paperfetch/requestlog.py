"""The request log behind ``Retriever.requests()``: an event subscriber making one row per request, naming the
item and source that asked (the worker thread's :mod:`paperfetch.http.context`); it only reads, writing into no item.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Mapping

import pandas as pd

from paperfetch.http.context import Tally
from paperfetch.http.context import current as current_context
from paperfetch.http.events import Event, EventKind
from paperfetch.http.pools import Pool
from paperfetch.http.status import shown_hosts
from paperfetch.redact import redact_frame
from paperfetch.report import requests_frame

__all__ = ["RequestLog"]

_LOGGED = frozenset({EventKind.RESPONSE, EventKind.NETWORK_ERROR, EventKind.HELD, EventKind.SUPPRESSED,
                     EventKind.DISALLOWED})


class RequestLog:
    """Rows of the requests sent (and refused before sending), thread-safe; :meth:`frame` is the DataFrame, its
    pools named by the labels of *pools* (the clients' declarations, as :func:`~paperfetch.http.pools.parse_pools`
    gives them)."""

    def __init__(self, pools: Mapping[str, tuple[Pool, ...]]) -> None:
        self._pools = pools
        self._rows: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        #: each item's Tally.waited_s (the transport's) as of its last row: a row's waited_s is its own wait (gone with the item)
        self._reported: weakref.WeakKeyDictionary[Tally, float] = weakref.WeakKeyDictionary()

    def on_event(self, event: Event) -> None:
        if event.kind not in _LOGGED:
            return
        context = current_context()  # the item and source this worker thread asks for
        job, tally = context.item, context.tally
        waited = None
        if job is not None and tally is not None:
            with self._lock:
                waited = tally.waited_s - self._reported.get(tally, 0.0)
                self._reported[tally] = tally.waited_s
        row = {
            "time": event.at,
            "host": event.host,
            "url": event.url,
            "status": event.status,
            "waited_s": waited,
            "elapsed_s": event.seconds if event.kind is EventKind.RESPONSE else None,
            "source": context.source,
            "identifier": job.identifier.key if job is not None else None,
            "outcome": event.kind.value,
        }
        with self._lock:
            self._rows.append(row)

    def frame(self) -> pd.DataFrame:
        """One row per request: time (UTC, ms), host, URL, status, waited, elapsed, source, identifier, outcome;
        a pool's host as people read it (``api.crossref.org (list queries)``, not its pacing key)."""
        with self._lock:
            rows = list(self._rows)
        frame = requests_frame(rows)
        frame["host"] = shown_hosts([str(host) for host in frame["host"]], self._pools)
        return redact_frame(frame)
