"""The tables people read: ``domain_status()``, ``requests()``, the one folding of per-host columns (Styler,
CLI, dashboard) and the yield per source (docs/outcomes.md). It formats what it is given.
"""

from __future__ import annotations

import html
import math
from dataclasses import fields
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from paperfetch.cells import clip, is_missing
from paperfetch.http.hosts import HostSnapshot

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from pandas.io.formats.style import Styler

__all__ = [
    "DOMAIN_STATES",
    "DOMAIN_STATUS_COLUMNS",
    "HELD_COLOUR",
    "REQUEST_COLUMNS",
    "STATUS_TEXT_LIMIT",
    "SUPPRESSED_COLOUR",
    "YIELD_COLUMNS",
    "YIELD_LEGEND",
    "breaker_cell",
    "delay_cell",
    "domain_status_frame",
    "duration_cell",
    "fold_host_columns",
    "hold_cell",
    "host_state",
    "host_table_text",
    "mark_unreachable",
    "plot",
    "requests_frame",
    "robots_cell",
    "seconds_cell",
    "state_words",
    "store_label",
    "style_domain_status",
    "suppression_cell",
    "time_cell",
    "yield_by_source",
    "yield_line",
]

#: ``domain_status()``'s columns: state, host, hold and suppression, breaker, this process's counts, pacing.
DOMAIN_STATUS_COLUMNS = [
    "state", "host", "held_until", "hold_status", "suppressed", "suppressed_reason", "suppressed_until", "breaker",
    "failures", "breaker_open_until", "next_allowed_at", "requests", "in_flight", "ok", "errors", "last_status",
    "delay_min_s", "delay_max_s", "backoff_s", "learned_interval_s", "crawl_delay_s", "robots",
    "pool", "windows", "binding_window", "window_starts",  # the pool by request kind; the windows, the binding one
    "credits_left",  # the host's budget left (its last X-RateLimit-Remaining)
]
#: The words of ``domain_status()``'s ``state`` column, worst first.
DOMAIN_STATES = ("SUPPRESSED", "HELD", "UNREACHABLE", "OPEN BREAKER", "ok")
_DATETIMES = ("held_until", "suppressed_until", "breaker_open_until", "next_allowed_at")
_INTS = ("last_status", "hold_status", "credits_left", "window_starts")

#: :func:`yield_by_source`'s columns.
YIELD_COLUMNS = ["source", "offered", "downloaded", "only_here"]

REQUEST_COLUMNS = ["time", "host", "url", "status", "waited_s", "elapsed_s", "source", "identifier", "outcome"]

#: Row colours: held (amber) and suppressed (red). The row also says HELD / SUPPRESSED in words.
HELD_COLOUR = "#fff3cd"
SUPPRESSED_COLOUR = "#f8d7da"
#: Text cells longer than this are cut by the Styler, the whole text on hover.
STATUS_TEXT_LIMIT = 24


def host_state(snap: HostSnapshot, *, unreachable: bool = False) -> str:
    """One word for a host (:data:`DOMAIN_STATES`); *unreachable* or the snapshot's own flag gives ``UNREACHABLE``."""
    if snap.suppressed:
        return "SUPPRESSED"
    if snap.held_until is not None:
        return "HELD"
    if unreachable or bool(getattr(snap, "unreachable", False)):
        return "UNREACHABLE"
    if snap.breaker == "open":  # half-open: the period is over, a probe is allowed
        return "OPEN BREAKER"
    return "ok"


def domain_status_frame(snapshots: Iterable[HostSnapshot], *, unreachable: Iterable[str] = ()) -> pd.DataFrame:
    """One row per host, sorted, :data:`DOMAIN_STATUS_COLUMNS`; *unreachable*: hosts known unreachable."""
    import pandas as pd

    names = {f.name for f in fields(HostSnapshot)}
    gone = set(unreachable)
    rows = []
    for snap in sorted(snapshots, key=lambda s: s.host):
        row = {name: getattr(snap, name) for name in DOMAIN_STATUS_COLUMNS if name in names}
        row["state"] = host_state(snap, unreachable=snap.host in gone)
        if snap.held_until is None:
            row["hold_status"] = None
        rows.append(row)
    frame = pd.DataFrame(rows, columns=DOMAIN_STATUS_COLUMNS)
    for column in _DATETIMES:
        frame[column] = pd.to_datetime(frame[column], utc=True)
    for column in _INTS:
        frame[column] = frame[column].astype("Int64")
    return frame


def mark_unreachable(frame: pd.DataFrame, hosts: Iterable[str]) -> pd.DataFrame:
    """*frame* with ``state`` ``UNREACHABLE`` for *hosts* neither held nor suppressed (in place; returned)."""
    gone = set(hosts)
    if not gone or "state" not in frame.columns or "host" not in frame.columns:
        return frame
    plain = frame["host"].isin(gone) & frame["state"].isin(["ok", "OPEN BREAKER"])
    frame.loc[plain, "state"] = "UNREACHABLE"
    return frame


def requests_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per HTTP request (``time`` in epoch seconds in, UTC datetimes to the millisecond out)."""
    import pandas as pd

    frame = pd.DataFrame(list(rows), columns=REQUEST_COLUMNS)
    frame["time"] = pd.to_datetime(frame["time"], unit="s", utc=True).dt.round("ms").astype("datetime64[ms, UTC]")
    frame["status"] = frame["status"].astype("Int64")
    return frame


# ---------------------------------------------------------------------- cells
def seconds_cell(value: Any) -> str:
    """Seconds to one decimal: ``2.3``; empty for an empty cell."""
    return "" if is_missing(value) else f"{float(value):.1f}"


def time_cell(value: Any) -> str:
    """A datetime, Timestamp or epoch as ``16:04:10`` UTC (with the date when not today); empty for an empty cell."""
    if is_missing(value):
        return ""
    if isinstance(value, datetime):
        at = value
    elif isinstance(value, (int, float)):
        at = datetime.fromtimestamp(float(value), tz=timezone.utc)
    else:
        import pandas as pd

        at = pd.Timestamp(value).to_pydatetime()
    at = at.replace(tzinfo=timezone.utc) if at.tzinfo is None else at.astimezone(timezone.utc)
    today = datetime.now(timezone.utc).date()
    return at.strftime("%H:%M:%S" if at.date() == today else "%Y-%m-%d %H:%M:%S")


def delay_cell(low: Any, high: Any, *, dash: str = "–") -> str:
    """The delay range in one cell: ``0.2–0.4``, ``0.5`` when both ends are one; empty without a floor."""
    if is_missing(low):
        return ""
    if is_missing(high) or high == low:
        return seconds_cell(low)
    return f"{seconds_cell(low)}{dash}{seconds_cell(high)}"


def hold_cell(until: Any, status: Any) -> str:
    """The hold in one cell: ``16:04:10 (503)``; empty when not held."""
    if is_missing(until):
        return ""
    return time_cell(until) + ("" if is_missing(status) else f" ({int(status)})")


def suppression_cell(suppressed: Any, until: Any) -> str:
    """Until when a host is suppressed: ``16:04:10``, ``until further notice``; empty when not."""
    if not is_missing(until):
        return time_cell(until)
    return "until further notice" if not is_missing(suppressed) and bool(suppressed) else ""


def breaker_cell(state: Any, failures: Any = None, open_until: Any = None) -> str:
    """The breaker in one cell: ``open → 16:04:10 (3 failed)``, ``probe allowed (3 failed)`` once half-open;
    empty for a closed breaker with no failure."""
    state = "" if is_missing(state) else str(state)
    text = "probe allowed" if state == "half_open" else "" if state in ("", "closed") else state
    if not is_missing(open_until) and state == "open":
        text += f" → {time_cell(open_until)}"
    if not is_missing(failures) and int(failures) > 0:
        text = (text + " " if text else "") + f"({int(failures)} failed)"
    return text.strip()


def state_words(*, suppressed: bool = False, held: bool = False, in_flight: int = 0, queued: int = 0,
                backoff_s: float = 0.0, unreachable: bool = False, breaker_open: bool = False,
                ended: bool = False) -> str:
    """A host's state in words: ``SUPPRESSED``, ``HELD`` (both, joined by ``+``), ``UNREACHABLE``,
    ``OPEN BREAKER``, ``busy``, ``queued`` (``not started`` once the run has *ended*), ``backoff``
    or ``idle``."""
    words = [w for w, on in (("SUPPRESSED", suppressed), ("HELD", held)) if on]
    if words:
        return " + ".join(words)
    if unreachable:
        return "UNREACHABLE"
    if breaker_open:
        return "OPEN BREAKER"
    if in_flight and not ended:
        return "busy"
    if queued:
        return "not started" if ended else "queued"
    if backoff_s > 0:
        return "backoff"
    return "idle"


def duration_cell(seconds: float | None) -> str:
    """A countdown: ``0:42``, ``12:34``, ``1:00:00`` (whole seconds, rounded up); ``?`` when unknown."""
    if seconds is None or seconds != seconds or seconds == math.inf:
        return "?"
    total = max(0, math.ceil(seconds))
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def robots_cell(value: Any) -> str:
    """robots.txt's status in words: ``parsed``, ``no rules`` (a 404), ``unreachable``; empty when not consulted."""
    if is_missing(value):
        return ""
    text = str(value)
    return "no rules" if text == "unavailable" else text


def store_label(name: str) -> str:
    """The store's name for saved output, never the user's home (``sqlite (user cache)``, ``~/…``)."""
    if not name.startswith("sqlite:"):
        return name
    import os
    from pathlib import Path

    path = name[len("sqlite:"):]
    try:
        import platformdirs

        cache = os.path.realpath(platformdirs.user_cache_dir("paperfetch", appauthor=False))
        if os.path.realpath(path).startswith(cache + os.sep):
            return "sqlite (user cache)"
    except Exception:  # noqa: BLE001 - a label never fails
        pass
    for home in {str(Path.home()), os.path.realpath(str(Path.home()))}:
        if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
            return "sqlite:~" + path[len(home):]
    return name


# ---------------------------------------------------------------------- domain_status(), folded
#: The folded columns (text already; never cut, aligned as numbers).
_FOLDED = ("delay_s", "held_until", "suppressed_until", "breaker", "until")


def fold_host_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``domain_status()`` with pairs folded into one text column each: ``delay_s`` (``0.2–0.4``), ``held_until``
    (``16:04:10 (503)``), ``suppressed_until``, ``breaker`` (``open → 16:04:10 (3 failed)``); other columns pass."""
    import pandas as pd

    columns = list(frame.columns)
    nothing = [None] * len(frame)
    out: dict[str, Any] = {}
    for c in columns:
        if c == "delay_min_s" and "delay_max_s" in columns:
            out["delay_s"] = [delay_cell(lo, hi) for lo, hi in zip(frame["delay_min_s"], frame["delay_max_s"])]
        elif c == "held_until" and "hold_status" in columns:
            out["held_until"] = [hold_cell(at, st) for at, st in zip(frame["held_until"], frame["hold_status"])]
        elif c == "suppressed_until" and "suppressed" in columns:
            out[c] = [suppression_cell(on, at) for at, on in zip(frame[c], frame["suppressed"].fillna(False))]
        elif c == "breaker":
            failures = frame["failures"] if "failures" in columns else nothing
            until = frame["breaker_open_until"] if "breaker_open_until" in columns else nothing
            out[c] = [breaker_cell(state, n, at) for state, n, at in zip(frame[c], failures, until)]
        elif c in ("delay_max_s", "hold_status", "failures", "breaker_open_until") or (
                c == "suppressed" and "suppressed_reason" in columns):
            continue
        else:
            out[c] = frame[c]
    return pd.DataFrame(out, index=frame.index)


#: The CLI's per-host table: its columns of the folded frame, and their headers (units in the header).
_TEXT_COLUMNS = {
    "state": "state", "host": "host",
    "requests": "sent", "last_status": "last", "delay_s": "delay s", "learned_interval_s": "learned s",
    "backoff_s": "backoff s", "crawl_delay_s": "crawl-delay s", "held_until": "held until UTC",
    "suppressed_until": "suppressed until UTC", "breaker": "breaker (UTC)",
    "credits_left": "credits left",  # only when some host counts them (OpenAlex's budget)
    "binding_window": "window",  # only when some host has windows (Europe PMC's 500/min)
}


def host_table_text(frame: pd.DataFrame, *, width: int | None = None) -> str:
    """``domain_status()`` for a terminal (the CLI's ``-v`` table), folded as :func:`fold_host_columns` does
    (times in UTC, as the headers say). Rows wider than *width* lose the columns with nothing to show, then
    the pacing columns, then the rightmost ones (state and host stay)."""
    import pandas as pd

    if not len(frame):
        return "(no host was asked)"
    view = fold_host_columns(frame)
    table: dict[str, list[str]] = {}
    for name, header in _TEXT_COLUMNS.items():
        if name not in view.columns:
            continue
        values = list(view[name])
        if name in ("learned_interval_s", "backoff_s"):
            cells = ["" if is_missing(v) or float(v) <= 0 else seconds_cell(v) for v in values]
        elif name == "crawl_delay_s":
            cells = [seconds_cell(v) for v in values]
        elif name in ("requests", "last_status"):
            cells = ["" if is_missing(v) else str(int(v)) for v in values]
        elif name == "credits_left":
            cells = ["" if is_missing(v) else f"{int(v):,}" for v in values]
            if not any(cells):
                continue
        elif name == "binding_window":
            cells = ["" if is_missing(v) else str(v) for v in values]
            if not any(cells):
                continue
        elif name == "state":
            cells = ["" if is_missing(v) or v == "ok" else str(v) for v in values]
        else:
            cells = ["" if is_missing(v) else str(v) for v in values]
        table[header] = cells
    text = pd.DataFrame(table).to_string(index=False)
    if width is None or _widest(text) <= width:
        return text
    table = {header: cells for header, cells in table.items() if header in ("state", "host") or any(cells)}
    text = pd.DataFrame(table).to_string(index=False)
    dropped = [h for h in _DROPPED_FIRST if h in table] + [h for h in reversed(table) if h not in _DROPPED_FIRST]
    for header in dropped:
        if _widest(text) <= width or len(table) <= 2:
            break
        if header not in ("state", "host"):
            table.pop(header)
            text = pd.DataFrame(table).to_string(index=False)
    return text


#: The CLI table's columns a narrow terminal loses first (the pacing details), before the holds and breakers.
_DROPPED_FIRST = ("crawl-delay s", "learned s", "backoff s", "delay s", "last", "sent")


def _widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


#: How style_domain_status names domain_status()'s columns (units in the header, not in every cell).
_STATUS_LABELS = {
    "state": "state", "in_flight": "in flight", "ok": "OK", "last_status": "last", "delay_s": "delay (s)",
    "backoff_s": "backoff (s)", "held_until": "held until (UTC)", "suppressed_until": "suppressed until (UTC)",
    "until": "until (UTC)",
    "suppressed_reason": "why", "crawl_delay_s": "Crawl-delay (s)",
    "next_allowed_at": "next allowed (UTC)", "learned_interval_s": "learned (s)", "requests": "sent",
    "credits_left": "credits left today", "binding_window": "window",
}


def _plain_cell(value: Any) -> str:
    if is_missing(value) or value is False:
        return ""
    if value is True:
        return "yes"
    text = str(value)
    if len(text) <= STATUS_TEXT_LIMIT:
        return html.escape(text)
    return f'<span title="{html.escape(text, quote=True)}">{html.escape(clip(text, STATUS_TEXT_LIMIT))}</span>'


def _all_empty(series: pd.Series, name: str) -> bool:
    """Whether every cell of a styled column would show empty (0 counts as empty where it means none)."""
    for value in series:
        if is_missing(value) or value is False or value == "":
            continue
        if name in _ZERO_IS_NONE and isinstance(value, (int, float)) and float(value) <= 0:
            continue
        return False
    return True


#: Text columns that wrap instead of being cut.
_WRAPPED = ("suppressed_reason",)
#: Columns the notebook view leaves out: rarely needed, and they make the table wider than a notebook.
_STYLE_DROPPED = ("in_flight", "next_allowed_at", "pool", "windows", "window_starts")  # the pool: in the host's key
#: Seconds columns where 0 means "none" and shows empty.
_ZERO_IS_NONE = ("backoff_s", "learned_interval_s")


def style_domain_status(frame: pd.DataFrame) -> Styler:
    """``domain_status()`` for people, narrow enough for a notebook: the state in words first, held rows amber
    and suppressed rows red, the folded columns of :func:`fold_host_columns`, one ``until`` column, reasons
    wrapped, units in the headers, and columns with nothing to show left out.
    A display: its ``.data`` is the folded table, not *frame*.

    >>> style_domain_status(r.domain_status())   # doctest: +SKIP
    """
    import pandas as pd

    view = fold_host_columns(frame)
    if "held_until" in view.columns and "suppressed_until" in view.columns:
        # one "until" column: the state says whether it is the hold's or the suppression's
        ends = zip(view["held_until"], view["suppressed_until"])
        view["held_until"] = [h if h else ("" if is_missing(u) else u) for h, u in ends]
        view = view.drop(columns=["suppressed_until"]).rename(columns={"held_until": "until"})
    if "robots" in view.columns:
        view["robots"] = [robots_cell(v) for v in view["robots"]]
    dropped = [c for c in _STYLE_DROPPED if c in view.columns]
    dropped += [c for c in view.columns if c not in ("state", "host") and c not in dropped and _all_empty(view[c], c)]
    view = view.drop(columns=dropped)
    columns = list(view.columns)

    def row_style(row: pd.Series) -> list[str]:
        source = frame.loc[row.name]
        suppressed = "suppressed" in source.index and pd.notna(source["suppressed"]) and bool(source["suppressed"])
        held = "held_until" in source.index and pd.notna(source["held_until"])
        if not (held or suppressed):
            return [""] * len(columns)
        colour = SUPPRESSED_COLOUR if suppressed else HELD_COLOUR
        marked = {"state", "host", "suppressed_reason", "until"} if suppressed else {"state", "host", "until"}
        return [f"background-color: {colour}; color: #000" + ("; font-weight: bold" if c in marked else "") for c in columns]

    formatters: dict[str, Callable[[Any], str]] = {}
    numeric = []
    for c in columns:
        series = view[c]
        if pd.api.types.is_datetime64_any_dtype(series):
            formatters[c] = time_cell
            numeric.append(c)
        elif c in _ZERO_IS_NONE and pd.api.types.is_numeric_dtype(series):
            formatters[c] = lambda v: "" if is_missing(v) or float(v) <= 0 else seconds_cell(v)
            numeric.append(c)
        elif str(c).endswith("_s") and pd.api.types.is_numeric_dtype(series):
            formatters[c] = seconds_cell
            numeric.append(c)
        elif pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            formatters[c] = lambda v: "" if is_missing(v) else str(v)
            numeric.append(c)
        elif c in _FOLDED:  # folded by fold_host_columns: never cut
            formatters[c] = lambda v: "" if is_missing(v) else html.escape(str(v))
            numeric.append(c)
        elif c in _WRAPPED:
            formatters[c] = lambda v: "" if is_missing(v) else html.escape(str(v))
        else:
            formatters[c] = _plain_cell
    styler = (
        view.style.apply(row_style, axis=1)
        .format(formatters, escape=None)
        .format_index(lambda c: _STATUS_LABELS.get(c, str(c).replace("_", " ")), axis=1)
        .hide(axis="index")
        .set_table_attributes('class="paperfetch-domain-status"')
        .set_table_styles([
            {"selector": "", "props": "border-collapse: collapse; font-size: 12px; table-layout: auto"},
            {"selector": "th", "props": "padding: 2px 6px; text-align: left; vertical-align: bottom; "
                                        "border-bottom: 1px solid #888; max-width: 7em"},
            {"selector": "td", "props": "padding: 1px 6px; border-bottom: 1px solid rgba(128,128,128,.25)"},
        ])
    )
    wrapped = [c for c in columns if c in _WRAPPED]
    if wrapped:  # the reason wraps in a narrow column: never cut, never wider than the notebook
        styler = styler.set_properties(subset=wrapped, **{"white-space": "normal", "min-width": "10em",
                                                          "max-width": "16em", "overflow-wrap": "anywhere"})
    one_line = [c for c in columns if c not in _WRAPPED]
    if one_line:
        styler = styler.set_properties(subset=one_line, **{"white-space": "nowrap"})
    if numeric:
        styler = styler.set_properties(subset=numeric, **{"text-align": "right", "font-variant-numeric": "tabular-nums"})
    text = [c for c in columns if c not in numeric]
    if text:
        styler = styler.set_properties(subset=text, **{"text-align": "left"})
    return styler


def _paper_key(row: Mapping[str, Any]) -> str | None:
    """One key per paper (the DOI first: a PMID that led to a DOI is that DOI's paper); None for no identifier."""
    for column in ("doi", "pmcid", "pmid", "arxiv_id"):
        value = row.get(column)
        if not is_missing(value) and str(value):
            return f"{column}:{str(value).lower()}"
    return None


def plot(outcomes: pd.DataFrame, requests: pd.DataFrame | None = None) -> Any:
    """The summary figure of *outcomes*: by status, by source, and the time per host of *requests*
    (``Retriever.requests()``), a matplotlib Figure (:func:`paperfetch.plot.summary_figure`; docs/outcomes.md).
    Needs the optional extra ``plot`` (matplotlib); without it an ImportError saying how to install it."""
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
    counts: dict[str, list[int]] = {}
    for _done, offered, source in best.values():
        for name in offered:
            tally = counts.setdefault(name, [0, 0, 0])
            tally[0] += 1
            tally[1] += name == source
            tally[2] += len(offered) == 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1][1], -item[1][0], item[0]))
    rows = [(name, *tally) for name, tally in ranked]
    frame = pd.DataFrame(rows, columns=YIELD_COLUMNS)
    for column in YIELD_COLUMNS[1:]:
        frame[column] = frame[column].astype("int64")
    return frame


#: How to read :func:`yield_line`: the line the CLI prints under it.
YIELD_LEGEND = "(per source: papers downloaded from its copy of those it offered; only here: no other source offered them)"


def yield_line(table: pd.DataFrame) -> str:
    """:func:`yield_by_source` in one line (``yield: openalex 5 of 9 (2 only here), …``); empty when none offered any."""
    parts = []
    for row in table.itertuples(index=False):
        only = f" ({row.only_here} only here)" if row.only_here else ""
        parts.append(f"{row.source} {row.downloaded} of {row.offered}{only}")
    return f"yield: {', '.join(parts)}" if parts else ""
