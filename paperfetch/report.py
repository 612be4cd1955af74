"""The run's tables as data: ``requests()``, the ``UNREACHABLE`` marks on ``domain_status()`` (built by the
transport, :mod:`paperfetch.http.status`), the yield per source (docs/outcomes.md) and the summary plot.
How people see the per-host table is :mod:`paperfetch.dashboard.tables`.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from paperfetch.cells import is_missing

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from paperfetch.http.pools import Pool

__all__ = [
    "REQUEST_COLUMNS",
    "YIELD_COLUMNS",
    "YIELD_LEGEND",
    "for_people",
    "mark_unreachable",
    "plot",
    "requests_frame",
    "yield_by_source",
    "yield_line",
]

#: :func:`yield_by_source`'s columns.
YIELD_COLUMNS = ["source", "offered", "downloaded", "only_here"]

REQUEST_COLUMNS = ["time", "host", "url", "status", "waited_s", "elapsed_s", "source", "identifier", "outcome"]

def mark_unreachable(frame: pd.DataFrame, hosts: Iterable[str]) -> pd.DataFrame:
    """*frame* with ``state`` ``UNREACHABLE`` for *hosts* neither held nor suppressed (in place; returned)."""
    gone = set(hosts)
    if not gone or "state" not in frame.columns or "host" not in frame.columns:
        return frame
    plain = frame["host"].isin(gone) & frame["state"].isin(["ok", "OPEN BREAKER"])
    frame.loc[plain, "state"] = "UNREACHABLE"
    return frame


def for_people(frame: pd.DataFrame, pools: Mapping[str, tuple[Pool, ...]]) -> pd.DataFrame:
    """*frame* (``domain_status()``'s) with its hosts and pools as people read them: ``host`` without its
    ``#pool`` where the pool is the host's only one, else with the label *pools* (the clients' declarations)
    give it; ``pool`` the label (in place)."""
    import pandas as pd

    from paperfetch.http.pools import pool_label
    from paperfetch.http.status import shown_hosts

    if "pool" in frame.columns and "host" in frame.columns:  # the label the pool's declaration gave, by its key
        frame["pool"] = pd.array([value if is_missing(value) else pool_label(str(key), pools)
                                  for key, value in zip(frame["host"], frame["pool"])], dtype=frame["pool"].dtype)
    if "host" in frame.columns:  # each column keeps its dtype (domain_status_frame's)
        frame["host"] = pd.array(shown_hosts(frame["host"].astype(str), pools), dtype=frame["host"].dtype)
    return frame


def requests_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per HTTP request (``time`` in epoch seconds in, UTC datetimes to the millisecond out)."""
    import pandas as pd

    frame = pd.DataFrame(list(rows), columns=REQUEST_COLUMNS)
    frame["time"] = pd.to_datetime(frame["time"], unit="s", utc=True).dt.round("ms").astype("datetime64[ms, UTC]")
    frame["status"] = frame["status"].astype("Int64")
    return frame


def _paper_key(row: Mapping[str, Any]) -> str | None:
    """One key per paper (the DOI first: a PMID that led to a DOI is that DOI's paper); None for no identifier."""
    for column in ("doi", "pmcid", "pmid", "arxiv_id"):
        value = row.get(column)
        if not is_missing(value) and str(value):
            return f"{column}:{str(value).lower()}"
    return None


def plot(outcomes: pd.DataFrame, requests: pd.DataFrame | None = None) -> Any:
    """The summary figure of *outcomes* and *requests* (``Retriever.requests()``): :func:`paperfetch.plot.summary_figure`."""
    from paperfetch.plot import summary_figure

    return summary_figure(outcomes, requests)


def yield_by_source(outcomes: pd.DataFrame) -> pd.DataFrame:
    """For each source, the papers it ``offered``, those ``downloaded`` from its copy and those ``only_here``
    (docs/sources.md, "Which source supplied what"); a paper asked twice counts once. Most downloaded first."""
    import pandas as pd

    from paperfetch.outcomes import FINISHED_WELL_STATUSES

    best: dict[str, tuple[bool, list[str], str | None]] = {}
    for row in outcomes.to_dict("records"):
        key = _paper_key(row)
        if key is None:
            continue
        offered = [] if is_missing(row.get("offered_by")) else [s for s in str(row["offered_by"]).split(",") if s]
        done = str(row.get("status")) in FINISHED_WELL_STATUSES and not is_missing(row.get("source"))
        source = str(row["source"]) if done else None
        if source is not None and source not in offered:
            offered.append(source)  # resumed from the ledger: the earlier run's copy was offered then
        if key not in best or (done and not best[key][0]):
            best[key] = (done, offered, source)
    offers, downloads, only = Counter[str](), Counter[str](), Counter[str]()
    for _done, offered, source in best.values():
        offers.update(offered)
        downloads.update([source] if source is not None else [])  # its source is among those that offered it
        only.update(offered if len(offered) == 1 else [])
    ranked = sorted(offers, key=lambda name: (-downloads[name], -offers[name], name))
    rows = [(name, offers[name], downloads[name], only[name]) for name in ranked]
    return pd.DataFrame(rows, columns=YIELD_COLUMNS).astype({column: "int64" for column in YIELD_COLUMNS[1:]})


#: How to read :func:`yield_line`: the line the CLI prints under it.
YIELD_LEGEND = "(per source: papers downloaded from its copy of those it offered; only here: no other source offered them)"


def yield_line(table: pd.DataFrame) -> str:
    """:func:`yield_by_source` in one line (``yield: openalex 5 of 9 (2 only here), …``); empty when none offered any."""
    parts = []
    for row in table.itertuples(index=False):
        only = f" ({row.only_here} only here)" if row.only_here else ""
        parts.append(f"{row.source} {row.downloaded} of {row.offered}{only}")
    return f"yield: {', '.join(parts)}" if parts else ""
