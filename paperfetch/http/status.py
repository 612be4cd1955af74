"""``domain_status()`` as data: one row per host from the transport's own snapshots (docs/politeness.md,
"domain_status()"). The transport builds the rows; how people see them (the notebook Styler, the terminal
table, the dashboard) is :mod:`paperfetch.dashboard.tables`'s business.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from paperfetch.http.hosts import HostSnapshot
from paperfetch.http.pools import Pool, pool_host, pool_label, pool_name

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["DOMAIN_STATES", "DOMAIN_STATUS_COLUMNS", "domain_status_frame", "host_state", "shown_host", "shown_hosts",
           "status_rows"]

#: ``domain_status()``'s columns: state, host, hold and suppression, breaker, this process's counts, pacing.
DOMAIN_STATUS_COLUMNS = [
    "state", "host", "held_until", "hold_status", "suppressed", "suppressed_reason", "suppressed_until", "breaker",
    "failures", "breaker_open_until", "breaker_reason", "next_allowed_at", "requests", "in_flight", "ok", "errors", "last_status",
    "delay_min_s", "delay_max_s", "backoff_s", "learned_interval_s", "crawl_delay_s", "robots",
    "pool", "windows", "binding_window", "window_starts",  # the pool by request kind; the windows, the binding one
    "credits_left",  # the host's budget left (its last X-RateLimit-Remaining)
]
#: The words of ``domain_status()``'s ``state`` column, worst first.
DOMAIN_STATES = ("SUPPRESSED", "HELD", "UNREACHABLE", "OPEN BREAKER", "ok")
_DATETIMES = ("held_until", "suppressed_until", "breaker_open_until", "next_allowed_at")
_INTS = ("last_status", "hold_status", "credits_left", "window_starts")
_FLOATS = ("delay_min_s", "delay_max_s", "backoff_s", "learned_interval_s", "crawl_delay_s")
_TEXTS = ("state", "host", "suppressed_reason", "breaker", "breaker_reason", "robots", "pool", "windows",
          "binding_window")
_SNAPSHOT_FIELDS = frozenset(f.name for f in fields(HostSnapshot))
def shown_host(key: str, pools: Mapping[str, tuple[Pool, ...]]) -> str:
    """A pacing key for people: ``api.crossref.org#polite-array`` → ``api.crossref.org (list queries)``, the
    label the pool's declaration in *pools* gave (:func:`~paperfetch.http.pools.pool_label`)."""
    return f"{pool_host(key)} ({pool_label(key, pools)})" if pool_name(key) else key


def shown_hosts(keys: Iterable[str], pools: Mapping[str, tuple[Pool, ...]]) -> list[str]:
    """Each pacing key of *keys* for people: the host alone where *keys* hold one pool of it (or none), else
    :func:`shown_host` by the labels of *pools* (``api.crossref.org (list queries)``)."""
    keys = list(keys)
    seen: defaultdict[str, set[str]] = defaultdict(set)
    for key in keys:
        seen[pool_host(key)].add(pool_name(key))
    return [pool_host(key) if len(seen[pool_host(key)]) == 1 else shown_host(key, pools) for key in keys]


def host_state(snap: HostSnapshot) -> str:
    """One word for a host (:data:`DOMAIN_STATES`; ``UNREACHABLE`` is marked above the transport, which keeps
    no record of a host that never answered: :func:`paperfetch.report.mark_unreachable`)."""
    if snap.suppressed:
        return "SUPPRESSED"
    if snap.held_until is not None:
        return "HELD"
    if snap.breaker == "open":  # half-open: the period is over, a probe is allowed
        return "OPEN BREAKER"
    return "ok"


def status_rows(snapshots: Iterable[HostSnapshot]) -> list[dict[str, Any]]:
    """One plain dict per host, sorted by host, keyed by :data:`DOMAIN_STATUS_COLUMNS`; a host not held has no
    ``hold_status``."""
    rows = []
    for snap in sorted(snapshots, key=lambda s: s.host):
        row = {name: getattr(snap, name) for name in DOMAIN_STATUS_COLUMNS if name in _SNAPSHOT_FIELDS}
        row["state"] = host_state(snap)
        if snap.held_until is None:
            row["hold_status"] = None
        rows.append(row)
    return rows


def domain_status_frame(snapshots: Iterable[HostSnapshot]) -> pd.DataFrame:
    """:func:`status_rows` as the frame ``domain_status()`` returns, one dtype and one missing marker a column:
    times as UTC datetimes (``NaT``), counts as ``Int64``, seconds as ``Float64``, words as ``string`` (``<NA>``)
    (pandas is imported only here)."""
    import pandas as pd

    frame = pd.DataFrame(status_rows(snapshots), columns=DOMAIN_STATUS_COLUMNS)
    for column in _DATETIMES:
        frame[column] = pd.to_datetime(frame[column], utc=True).astype("datetime64[us, UTC]")
    types = {**dict.fromkeys(_TEXTS, "string"), **dict.fromkeys(_FLOATS, "Float64"), **dict.fromkeys(_INTS, "Int64")}
    return frame.astype(types)
