"""The dashboard drawn: a :class:`~paperfetch.dashboard.model.BatchSnapshot` as HTML and as text.

Pure functions of a snapshot (no widget, no clock, no transport): :func:`render_html` is what a
saved notebook keeps, :func:`render_text` what a terminal prints, and the widget view
(:mod:`paperfetch.dashboard.view`) puts :func:`render_counts_html`, :func:`render_hosts_html` and
:func:`render_events_html` in its parts.

The host table
--------------

One line per host, problem hosts (held, suppressed) first. Its columns are :data:`HOST_COLUMNS`,
one :class:`HostColumn` each, used by the HTML and the text view alike: a new per-host figure is
a field of the transport's :class:`~paperfetch.http.hosts.HostSnapshot` (or a run count of
:class:`~paperfetch.dashboard.model.HostRow`) and one line in :data:`HOST_COLUMNS`. The HTML table
has fixed column widths (``table-layout: fixed``): numbers right-aligned with padding, the state
column (with until when and why) takes the room left and cuts its text with ``…``, the whole text
on hover. It fits a 1024 px window. The state words and the row colours are
:mod:`paperfetch.report`'s, as in every per-host table people read.

While a run goes, holds count down ("HELD 12:34 left"); once it ended, holds are clock times
("HELD until 17:04:10 UTC").
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Iterable

from paperfetch.dashboard.model import BatchSnapshot, HostRow
from paperfetch.report import HELD_COLOUR, SUPPRESSED_COLOUR, clip, duration_cell, seconds_cell

__all__ = [
    "HOST_COLUMNS",
    "HostColumn",
    "render_counts_html",
    "render_events_html",
    "render_hosts_html",
    "render_html",
    "render_text",
]


def _clock_time(at: float | None) -> str:
    if at is None:
        return ""
    return datetime.fromtimestamp(at, tz=timezone.utc).strftime("%H:%M:%S")


def _seconds(value: float | None) -> str:
    """``0.3 s``, ``12 s``; empty for None (whole seconds from 10 s: the table's cells are narrow)."""
    if value is None or value != value:
        return ""
    return f"{seconds_cell(value)} s" if value < 10 else f"{value:.0f} s"


def _delay(h: HostRow) -> str:
    if h.delay_min_s is None:
        return "none"
    low = _seconds(h.delay_min_s)[:-2]
    if h.delay_max_s is None or h.delay_max_s == h.delay_min_s:
        return f"{low} s"
    return f"{low}–{_seconds(h.delay_max_s)}"


def _hold_text(h: HostRow, ended: bool = False) -> str:
    """``HELD 12:34 left (HTTP 503)`` while the run goes; ``HELD until 17:04:10 UTC (HTTP 503)`` once it ended."""
    if not h.held:
        return ""
    status = f" (HTTP {h.hold_status})" if h.hold_status else ""
    if ended:
        return f"HELD until {_clock_time(h.held_until)} UTC{status}"
    return f"HELD {duration_cell(h.hold_left_s)} left{status}"


def _suppression_text(h: HostRow) -> str:
    if not h.suppressed:
        return ""
    until = f" until {_clock_time(h.suppressed_until)} UTC" if h.suppressed_until is not None else ""
    return f"SUPPRESSED{until}: {h.suppressed_reason or 'HTTP 403'}"


def _state_text(h: HostRow, ended: bool = False) -> str:
    """The state in words; for a suppressed or held host, with until when and why, in one line."""
    parts = [_suppression_text(h)]
    hold = _hold_text(h, ended)
    if hold:
        parts.append(f"{hold}: {h.hold_reason}" if h.hold_reason else hold)
    return "; ".join(p for p in parts if p) or h.state


def _ordered(hosts: Iterable[HostRow]) -> list[HostRow]:
    """Held and suppressed hosts first, then those this run touched, then the rest; by name within."""
    def rank(h: HostRow) -> tuple[int, str]:
        return (0 if (h.held or h.suppressed) else 1 if h.touched else 2, h.host)

    return sorted(hosts, key=rank)


@dataclass(frozen=True)
class HostColumn:
    """One column of the host table, for the HTML and the text view alike.

    ``cell(host, ended)`` gives the text; ``numeric`` columns are right-aligned. In HTML each
    column is ``width`` wide (em; 0: the room left, for the last column), its text on one line, cut
    with ``…`` when longer, the whole text in the cell's ``title`` (shown on hover). A ``clip``
    column is also cut in the text view, at that many characters.
    """

    header: str
    cell: Callable[[HostRow, bool], str]
    numeric: bool = False
    width: float = 0.0     #: em; 0: what is left
    clip: int = 0          #: the text view's limit; 0: never cut
    hint: str = ""         #: the header's tooltip


def _count(value: int) -> str:
    return str(value)


#: The host table, left to right. A new per-host figure is one line here (and a field of HostRow or its politeness).
HOST_COLUMNS: tuple[HostColumn, ...] = (
    HostColumn("host", lambda h, e: h.host, width=11.5, clip=40),
    HostColumn("state", _state_text, clip=90,
               hint="idle, busy, queued, backoff; SUPPRESSED or HELD with until when and why"),
    HostColumn("queued", lambda h, e: _count(h.queued), True, 6, hint="jobs waiting in the scheduler's queue"),
    HostColumn("in flight", lambda h, e: _count(h.in_flight), True, 5.8, hint="requests on the wire"),
    HostColumn("done", lambda h, e: _count(h.done), True, 4.2, hint="OK + errors + not sent, this run"),
    HostColumn("OK", lambda h, e: _count(h.ok), True, 3, hint="responses below 400, this run"),
    HostColumn("errors", lambda h, e: _count(h.errors), True, 5, hint="other responses, and network errors, this run"),
    HostColumn("not sent", lambda h, e: _count(h.not_sent), True, 5.8,
               hint="answered without a request: held, suppressed, disallowed"),
    HostColumn("last", lambda h, e: "" if h.last_status is None else str(h.last_status), True, 3.6, hint="the last HTTP status"),
    HostColumn("delay", lambda h, e: _delay(h), True, 6.2, hint="the pause between two requests to the host"),
    HostColumn("backoff", lambda h, e: _seconds(h.backoff_s) if h.backoff_s else "", True, 5.6, hint="added after errors"),
    HostColumn("crawl", lambda h, e: _seconds(h.crawl_delay_s), True, 4.6, hint="robots.txt Crawl-delay"),
)

# Inline styles (a saved notebook may drop <style> blocks); the notebook's own table CSS (fixed layout,
# right-aligned cells) is overridden on every cell.
_CELL = ("padding:1px 6px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;"
         "border-bottom:1px solid rgba(128,128,128,.25)")


def _align(column: HostColumn) -> str:
    return "text-align:right;font-variant-numeric:tabular-nums" if column.numeric else "text-align:left"


def _td(column: HostColumn, text: str) -> str:
    esc = html.escape
    title = f' title="{esc(text, quote=True)}"' if text and not column.numeric else ""
    return f'<td style="{_CELL};{_align(column)}"{title}>{esc(text)}</td>'


def render_hosts_html(snapshot: BatchSnapshot, max_rows: int = 50) -> str:
    """The per-host table: ``<table class="paperfetch-hosts">``, one ``<tr data-host=...>`` per host,
    problem hosts first, in a box that scrolls (``div.paperfetch-hosts-box``)."""
    esc = html.escape
    ended = snapshot.ended
    cols = "".join(f'<col style="width:{c.width:g}em">' if c.width else "<col>" for c in HOST_COLUMNS)
    head = "".join(
        f'<th style="{_CELL};{_align(c)};font-weight:bold;border-bottom:1px solid #888"'
        + (f' title="{esc(c.hint, quote=True)}"' if c.hint else "") + f">{esc(c.header)}</th>"
        for c in HOST_COLUMNS
    )
    ordered = _ordered(snapshot.hosts)
    shown, rest = ordered[:max_rows], ordered[max_rows:]
    body = []
    for h in shown:
        css, colour = "", ""
        if h.suppressed:
            css, colour = "paperfetch-suppressed", SUPPRESSED_COLOUR
        elif h.held:
            css, colour = "paperfetch-held", HELD_COLOUR
        style = f' style="background-color:{colour};color:#000"' if colour else ""
        cells = "".join(_td(c, c.cell(h, ended)) for c in HOST_COLUMNS)
        body.append(f'<tr data-host="{esc(h.host, quote=True)}" class="{css}"{style}>{cells}</tr>')
    if rest:
        body.append(f'<tr class="paperfetch-more"><td colspan="{len(HOST_COLUMNS)}" style="{_CELL};text-align:left">'
                    f"… {len(rest)} more host(s)</td></tr>")
    if not body:
        body.append(f'<tr class="paperfetch-empty"><td colspan="{len(HOST_COLUMNS)}" style="{_CELL};text-align:left">'
                    "no host yet</td></tr>")
    return (
        '<div class="paperfetch-hosts-box" style="max-height:20em;overflow:auto;max-width:100%">'
        '<table class="paperfetch-hosts" style="border-collapse:collapse;table-layout:fixed;width:100%;'
        'min-width:70em;font-size:12px;line-height:1.5;margin:0">'
        f"<colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


_EVENT_LABELS = {
    "hold": "HOLD", "suppress": "SUPPRESS", "disallowed": "DISALLOWED",
    "robots": "ROBOTS", "invalid_pdf": "INVALID PDF",
}


def render_events_html(snapshot: BatchSnapshot) -> str:
    """The recent notable events, newest first, in a box that scrolls; long lines cut, whole on hover."""
    esc = html.escape
    lines = []
    for e in reversed(snapshot.events):
        text = f"{_clock_time(e.at)} {_EVENT_LABELS.get(e.kind, e.kind.upper())} {e.host} {e.message}"
        lines.append(
            f'<div data-kind="{esc(e.kind)}" title="{esc(text, quote=True)}" '
            'style="white-space:nowrap;overflow:hidden;text-overflow:ellipsis">'
            f"{_clock_time(e.at)} <b>{esc(_EVENT_LABELS.get(e.kind, e.kind.upper()))}</b> {esc(e.host)} {esc(e.message)}</div>"
        )
    if not lines:
        lines = ['<div class="paperfetch-none">no notable events</div>']
    return (
        '<div class="paperfetch-events" style="max-height:8em;overflow-y:auto;font-family:monospace;font-size:11px;'
        'line-height:1.45;margin-top:4px">'
        f"<div><b>recent events (UTC)</b></div>{''.join(lines)}</div>"
    )


def _state_line(snapshot: BatchSnapshot) -> str:
    """``running 4.2 s``, ``ended 16:05:01 UTC after 4.2 s``, or ``idle``."""
    elapsed = snapshot.elapsed_s
    took = f"{elapsed:.1f} s" if elapsed is not None else ""
    if snapshot.running:
        return f"running {took}".rstrip()
    if snapshot.finished_at is not None:
        return f"ended {_clock_time(snapshot.finished_at)} UTC after {took}"
    return "idle"


def render_counts_html(snapshot: BatchSnapshot) -> str:
    esc = html.escape
    parts = [f"<b>{snapshot.done} / {snapshot.total}</b>", esc(_state_line(snapshot))]
    parts += [f"{esc(status.replace('_', ' '))} {n}" for status, n in snapshot.counts.items() if n]
    held, suppressed = len(snapshot.held), len(snapshot.suppressed)
    if held:
        parts.append(f"<b>{held} HELD</b>")
    if suppressed:
        parts.append(f"<b>{suppressed} SUPPRESSED</b>")
    return '<span class="paperfetch-counts">' + " · ".join(parts) + "</span>"


def render_html(snapshot: BatchSnapshot, max_rows: int = 50, title: str = "paperfetch") -> str:
    """The whole dashboard as static HTML (what a saved notebook keeps): bar, counts, hosts, events."""
    total, done = max(0, snapshot.total), min(snapshot.done, max(0, snapshot.total))
    share = 100.0 * done / total if total else 0.0
    colour = "#2196f3" if not snapshot.ended else ("#4caf50" if snapshot.done >= snapshot.total else "#f44336")
    bar = (
        '<div style="display:flex;align-items:center;gap:8px;flex-wrap:wrap">'
        f'<b>{html.escape(title)}</b>'
        '<div style="width:12em;height:10px;background:#e0e0e0;border-radius:2px;overflow:hidden">'
        f'<div style="width:{share:.1f}%;height:100%;background:{colour}"></div></div>'
        f"{render_counts_html(snapshot)}"
        + (f'<span class="paperfetch-store" style="color:#757575">host state: {html.escape(snapshot.store)}</span>'
           if snapshot.store else "")
        + "</div>"
    )
    return (
        '<div class="paperfetch-dashboard" style="max-width:100%;overflow:hidden">'
        f"{bar}{render_hosts_html(snapshot, max_rows)}{render_events_html(snapshot)}</div>"
    )


def render_text(snapshot: BatchSnapshot, max_rows: int = 20, max_events: int = 10) -> str:
    """The dashboard as plain text: summary, host table, recent events."""
    lines = [snapshot.summary()]
    if snapshot.store:
        lines.append(f"host state: {snapshot.store}")
    hosts = _ordered(snapshot.hosts)
    ended = snapshot.ended
    if hosts:
        # the column that takes the room left in HTML (the state, with its reasons) goes last in text
        columns = [c for c in HOST_COLUMNS if c.width] + [c for c in HOST_COLUMNS if not c.width]
        table = [tuple(c.header for c in columns)]
        for h in hosts[:max_rows]:
            table.append(tuple(clip(c.cell(h, ended), c.clip) if c.clip else c.cell(h, ended) for c in columns))
        widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
        for row in table:
            cells = [
                cell.rjust(w) if c.numeric else cell.ljust(w)
                for c, cell, w in zip(columns[:-1], row[:-1], widths[:-1])
            ]
            lines.append("  " + "  ".join(cells) + "  " + row[-1])
        if len(hosts) > max_rows:
            lines.append(f"  … {len(hosts) - max_rows} more host(s)")
    if snapshot.events:
        lines.append("recent events (UTC):")
        for e in list(snapshot.events)[-max_events:][::-1]:
            lines.append(f"  {_clock_time(e.at)} {_EVENT_LABELS.get(e.kind, e.kind.upper())} {e.host} {clip(e.message, 160)}")
    return "\n".join(line.rstrip() for line in lines)
