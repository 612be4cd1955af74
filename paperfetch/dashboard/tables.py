"""The per-host table for people, in the forms they read it: the cells the live dashboard shows, the notebook
Styler (:func:`style_domain_status`) and the terminal table (:func:`host_table_text`, the CLI's ``-v``).
One folding of ``domain_status()``'s columns (:func:`fold_host_columns`) serves all three, so a hold reads
the same everywhere. The rows themselves are the transport's (:mod:`paperfetch.http.status`).
"""

from __future__ import annotations

import html
import math
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

from paperfetch.cells import clip, is_missing

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from pandas.io.formats.style import Styler

__all__ = [
    "HELD_COLOUR",
    "STATUS_TEXT_LIMIT",
    "SUPPRESSED_COLOUR",
    "breaker_cell",
    "delay_cell",
    "duration_cell",
    "fold_host_columns",
    "hold_cell",
    "host_table_text",
    "robots_cell",
    "seconds_cell",
    "store_label",
    "style_domain_status",
    "suppression_cell",
    "time_cell",
]

#: Row colours: held (amber) and suppressed (red). The row also says HELD / SUPPRESSED in words.
HELD_COLOUR = "#fff3cd"
SUPPRESSED_COLOUR = "#f8d7da"
#: Text cells longer than this are cut by the Styler, the whole text on hover.
STATUS_TEXT_LIMIT = 24


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


def breaker_cell(state: Any, failures: Any = None, open_until: Any = None, held: bool = False) -> str:
    """The breaker in one cell: ``open → 16:04:10 (3 failed)``, ``probe allowed (3 failed)`` once half-open;
    empty for a closed breaker with no failure; ``(held: try later)`` for a held host's closed one (the host
    asked for a pause: its answers are no failures)."""
    state = "" if is_missing(state) else str(state)
    text = "probe allowed" if state == "half_open" else "" if state in ("", "closed") else state
    if not is_missing(open_until) and state == "open":
        text += f" → {time_cell(open_until)}"
    if held and not text:
        return "(held: try later)"
    if not is_missing(failures) and int(failures) > 0:
        text = (text + " " if text else "") + f"({int(failures)} failed)"
    return text.strip()


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
            held = [not is_missing(at) for at in frame["held_until"]] if "held_until" in columns else [False] * len(frame)
            out[c] = [breaker_cell(state, n, at, h) for state, n, at, h in zip(frame[c], failures, until, held)]
        elif c in ("delay_max_s", "hold_status", "failures", "breaker_open_until") or (
                c == "suppressed" and "suppressed_reason" in columns):
            continue
        else:
            out[c] = frame[c]
    return pd.DataFrame(out, index=frame.index)


#: How both tables name domain_status()'s columns, units in the header and not in every cell (the terminal's
#: drops the brackets: ``delay s``); others: the name with spaces.
_HEADERS = {
    "state": "state", "in_flight": "in flight", "ok": "OK", "last_status": "last", "delay_s": "delay (s)",
    "backoff_s": "backoff (s)", "held_until": "held until (UTC)", "suppressed_until": "suppressed until (UTC)",
    "until": "until (UTC)", "breaker": "breaker (UTC)",
    "suppressed_reason": "why", "crawl_delay_s": "Crawl-delay (s)",
    "next_allowed_at": "next allowed (UTC)", "learned_interval_s": "learned (s)", "requests": "sent",
    "credits_left": "credits left today", "binding_window": "window",
}
#: The CLI's per-host table: its columns of the folded frame, left to right.
_TEXT_COLUMNS = ("state", "host", "requests", "last_status", "delay_s", "learned_interval_s", "backoff_s",
                 "crawl_delay_s", "held_until", "suppressed_until", "breaker", "credits_left", "binding_window")
#: Columns the terminal table shows only when some host has a value in them (OpenAlex's budget, Europe PMC's 500/min).
_TEXT_OPTIONAL = ("credits_left", "binding_window")
#: The terminal table's columns that stay however narrow the terminal.
_TEXT_KEPT = ("state", "host")
#: The CLI table's columns a narrow terminal loses first (the pacing details), before the holds and breakers.
_DROPPED_FIRST = ("crawl_delay_s", "learned_interval_s", "backoff_s", "delay_s", "last_status", "requests")


def _header(column: str) -> str:
    return _HEADERS.get(column, str(column).replace("_", " "))


def _text(value: Any) -> str:
    return "" if is_missing(value) else str(value)


def _positive_seconds(value: Any) -> str:  # 0 means none
    return "" if is_missing(value) or float(value) <= 0 else seconds_cell(value)


def _thousands(value: Any) -> str:
    return "" if is_missing(value) else f"{int(value):,}"


def host_table_text(frame: pd.DataFrame, *, width: int | None = None) -> str:
    """``domain_status()`` for a terminal (the CLI's ``-v`` table), folded as :func:`fold_host_columns` does
    (times in UTC, as the headers say). Rows wider than *width* lose the columns with nothing to show, then
    the pacing columns, then the rightmost ones (state and host stay)."""
    if not len(frame):
        return "(no host was asked)"
    table = _text_table(fold_host_columns(frame))
    text = _table_text(table)
    if width is None or _widest(text) <= width:
        return text
    table = {name: cells for name, cells in table.items() if name in _TEXT_KEPT or any(cells)}
    text = _table_text(table)
    dropped = [c for c in _DROPPED_FIRST if c in table] + [c for c in reversed(table) if c not in _DROPPED_FIRST]
    for name in dropped:
        if _widest(text) <= width or len(table) <= len(_TEXT_KEPT):
            break
        if name not in _TEXT_KEPT:
            table.pop(name)
            text = _table_text(table)
    return text


def _text_table(view: pd.DataFrame) -> dict[str, list[str]]:
    """The terminal table's cells by column (:data:`_TEXT_COLUMNS`); a host that is ``ok`` says nothing."""
    table: dict[str, list[str]] = {}
    for name in (c for c in _TEXT_COLUMNS if c in view.columns):
        cell = _cell_format(name, view[name])[0]
        cells = ["" if name == "state" and v == "ok" else cell(v) for v in view[name]]
        if name not in _TEXT_OPTIONAL or any(cells):
            table[name] = cells
    return table


def _table_text(table: dict[str, list[str]]) -> str:
    import pandas as pd

    headers = {name: _header(name).replace("(", "").replace(")", "") for name in table}
    return pd.DataFrame({headers[name]: cells for name, cells in table.items()}).to_string(index=False)


def _widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def _plain_cell(value: Any) -> str:
    if is_missing(value) or value is False:
        return ""
    if value is True:
        return "yes"
    text = str(value)
    if len(text) <= STATUS_TEXT_LIMIT:
        return html.escape(text)
    return f'<span title="{html.escape(text, quote=True)}">{html.escape(clip(text, STATUS_TEXT_LIMIT))}</span>'


#: Text columns that wrap instead of being cut.
_WRAPPED = ("suppressed_reason",)
#: Columns the notebook view leaves out: rarely needed, and they make the table wider than a notebook.
_STYLE_DROPPED = ("in_flight", "next_allowed_at", "pool", "windows", "window_starts")  # the pool: in the host's key
#: Seconds columns where 0 means "none" and shows empty.
_ZERO_IS_NONE = ("backoff_s", "learned_interval_s")


#: The Styler's table: compact, rules under the header and between rows.
_TABLE_STYLES = [
    {"selector": "", "props": "border-collapse: collapse; font-size: 12px; table-layout: auto"},
    {"selector": "th", "props": "padding: 2px 6px; text-align: left; vertical-align: bottom; "
                                "border-bottom: 1px solid #888; max-width: 7em"},
    {"selector": "td", "props": "padding: 1px 6px; border-bottom: 1px solid rgba(128,128,128,.25)"},
]


def style_domain_status(frame: pd.DataFrame) -> Styler:
    """``domain_status()`` for people, narrow enough for a notebook: the state in words first, held rows amber
    and suppressed rows red, the folded columns of :func:`fold_host_columns`, one ``until`` column, reasons
    wrapped, units in the headers, and columns with nothing to show left out.
    A display: its ``.data`` is the folded table, not *frame*."""
    view = _status_view(frame)
    columns = list(view.columns)
    formats = {c: _html_format(c, view[c]) for c in columns}
    numeric = [c for c in columns if formats[c][1]]
    styler = (
        view.style.apply(_row_colours(frame, columns), axis=1)
        .format({c: formatter for c, (formatter, _) in formats.items()}, escape=None)
        .format_index(_header, axis=1)
        .hide(axis="index")
        .set_table_attributes('class="paperfetch-domain-status"')
        .set_table_styles(_TABLE_STYLES)
    )
    return _aligned(styler, columns, numeric)


def _status_view(frame: pd.DataFrame) -> pd.DataFrame:
    """The folded table the Styler shows: one ``until`` column, robots.txt in words, the empty columns left out."""
    view = fold_host_columns(frame)
    if "held_until" in view.columns and "suppressed_until" in view.columns:
        # one "until" column: the state says whether it is the hold's or the suppression's
        ends = zip(view["held_until"], view["suppressed_until"])
        view["held_until"] = [h if h else ("" if is_missing(u) else u) for h, u in ends]
        view = view.drop(columns=["suppressed_until"]).rename(columns={"held_until": "until"})
    if "robots" in view.columns:
        view["robots"] = [robots_cell(v) for v in view["robots"]]
    dropped = [c for c in _STYLE_DROPPED if c in view.columns]
    # and the columns whose every cell shows empty (0 where it means none: see _cell_format)
    dropped += [c for c in view.columns if c not in _TEXT_KEPT and c not in dropped
                and not any(map(_html_format(c, view[c])[0], view[c]))]
    return view.drop(columns=dropped)


def _row_colours(frame: pd.DataFrame, columns: list[str]) -> Callable[[pd.Series], list[str]]:
    """The row styler: held rows amber, suppressed rows red (read from *frame*, the unfolded table)."""
    def row_style(row: pd.Series) -> list[str]:
        source = frame.loc[row.name]
        suppressed = not is_missing(source.get("suppressed")) and bool(source.get("suppressed"))
        held = not is_missing(source.get("held_until"))
        if not (held or suppressed):
            return [""] * len(columns)
        colour = SUPPRESSED_COLOUR if suppressed else HELD_COLOUR
        marked = {"state", "host", "suppressed_reason", "until"} if suppressed else {"state", "host", "until"}
        return [f"background-color: {colour}; color: #000" + ("; font-weight: bold" if c in marked else "") for c in columns]

    return row_style


def _cell_format(column: str, series: pd.Series) -> tuple[Callable[[Any], str], bool]:
    """A column's cell as text, in either table, and whether it aligns as numbers (the folded columns do)."""
    from pandas.api import types

    numeric = types.is_numeric_dtype(series) and not types.is_bool_dtype(series)
    if types.is_datetime64_any_dtype(series):
        return time_cell, True
    if column in _ZERO_IS_NONE and numeric:
        return _positive_seconds, True
    if str(column).endswith("_s") and numeric:
        return seconds_cell, True
    if column == "credits_left" and numeric:
        return _thousands, True
    return _text, numeric or column in _FOLDED


def _html_format(column: str, series: pd.Series) -> tuple[Callable[[Any], str], bool]:
    """A styled column's cell formatter: escaped, other text cut to :data:`STATUS_TEXT_LIMIT` unless it wraps."""
    cell, numeric = _cell_format(column, series)
    if numeric or column in _WRAPPED:
        return lambda value: html.escape(cell(value)), numeric
    return _plain_cell, False


def _aligned(styler: Styler, columns: list[str], numeric: list[str]) -> Styler:
    """Reasons wrap in a narrow column (never cut, never wider than the notebook), the rest on one line;
    numbers to the right in tabular figures, text to the left."""
    wrapped = [c for c in columns if c in _WRAPPED]
    styler = styler.set_properties(subset=wrapped, **{"white-space": "normal", "min-width": "10em",
                                                      "max-width": "16em", "overflow-wrap": "anywhere"})
    styler = styler.set_properties(subset=[c for c in columns if c not in _WRAPPED], **{"white-space": "nowrap"})
    styler = styler.set_properties(subset=numeric, **{"text-align": "right", "font-variant-numeric": "tabular-nums"})
    return styler.set_properties(subset=[c for c in columns if c not in numeric], **{"text-align": "left"})
