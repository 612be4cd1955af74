"""The dashboard drawn: pure functions of a snapshot, as HTML and as text (docs/dashboard.md, "The host table")."""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Iterable

from paperfetch import defaults
from paperfetch.cells import clip
from paperfetch.dashboard.model import BatchSnapshot, HostRow
from paperfetch.dashboard.tables import HELD_COLOUR, SUPPRESSED_COLOUR, duration_cell, seconds_cell
from paperfetch.integrity import met_line

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


def _label(kind: str) -> str:
    """An event's kind as the recent events name it: ``HOLD``, ``INVALID PDF``."""
    return kind.upper().replace("_", " ")


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


def _state_parts(h: HostRow, ended: bool = False) -> tuple[str, str]:
    """(the state with until when, why), e.g. ``("HELD 12:34 left (HTTP 503)", "HTTP 503 with Retry-After")``, the
    hold ``HELD until 17:04:10 UTC`` once the run ended; a host both suppressed and held has the hold in the why."""
    status = f" (HTTP {h.hold_status})" if h.hold_status else ""
    until = f"until {_clock_time(h.held_until)} UTC" if ended else f"{duration_cell(h.hold_left_s)} left"
    hold = f"HELD {until}{status}" if h.held else ""
    hold_why = f"{hold}: {h.hold_reason}" if hold and h.hold_reason else hold
    if h.suppressed:
        until = f" until {_clock_time(h.suppressed_until)} UTC" if h.suppressed_until is not None else ""
        why = h.suppressed_reason or "HTTP 403"
        return f"SUPPRESSED{until}", f"{why}; {hold_why}" if hold else why
    if hold:
        return hold, h.hold_reason
    if h.unreachable:
        return "UNREACHABLE", "DNS failed" if h.unreachable == "dns" else "connection refused"
    if h.binding_window and (h.window_wait_s or 0.0) >= 0.5 and not ended:  # a full window keeps the next request
        return h.state, f"{h.binding_window} window full: next in {duration_cell(h.window_wait_s)}"
    return h.state, ""


def _ordered(hosts: Iterable[HostRow]) -> list[HostRow]:
    """Problem hosts first, then those this run touched, then the rest; by name within."""
    def rank(h: HostRow) -> tuple[int, str]:
        return (0 if (h.held or h.suppressed) else 1 if h.problem else 2 if h.touched else 3, h.host)

    return sorted(hosts, key=rank)


@dataclass(frozen=True)
class HostColumn:
    """One column of the host table, for the HTML and the text view alike: ``cell(host, ended)`` gives the
    text; in HTML each cell is one line, cut with ``…`` and whole on hover."""

    header: str
    cell: Callable[[HostRow, bool], str]
    numeric: bool = False
    width: float = 0.0     #: em; 0: what is left
    clip: int = 0          #: the text view's limit; 0: never cut
    hint: str = ""         #: the header's tooltip
    wide: bool = False     #: left out of a table narrower than :data:`WIDE_FROM_PX` (HTML only)
    spare: bool = False    #: left out of a table narrower than :data:`SPARE_FROM_PX` too (HTML only)
    #: left out when every host's cell is empty (the CSS picks columns by position: only the last columns are)
    sparse: bool = False


#: The host table, left to right. A new per-host figure is one line here (and a field of HostRow or its politeness).
HOST_COLUMNS: tuple[HostColumn, ...] = (
    HostColumn("host", lambda h, e: h.shown, width=10, clip=40),
    HostColumn("state", lambda h, e: ": ".join(part for part in _state_parts(h, e) if part), clip=90,
               hint="idle, busy, queued (not started, after the end), backoff; "
                    "SUPPRESSED, HELD, UNREACHABLE or OPEN BREAKER with until when and why; "
                    "a full window (500/min) with when it lets the next request go"),
    HostColumn("queued", lambda h, e: str(h.queued), True, 4.4, hint="jobs waiting in the scheduler's queue"),
    HostColumn("in flight", lambda h, e: str(h.in_flight), True, 4.6, hint="requests on the wire", wide=True),
    HostColumn("done", lambda h, e: str(h.done), True, 3.6, hint="OK + not found + errors + not sent, this run",
               wide=True),
    HostColumn("OK", lambda h, e: str(h.ok), True, 2.8, hint="responses below 400, this run"),
    HostColumn("not found", lambda h, e: str(h.not_found), True, 5.2, wide=True,
               hint="404 and 410 answers, this run: not errors (a 404 robots.txt means no rules)"),
    HostColumn("errors", lambda h, e: str(h.errors), True, 3.8,
               hint="other responses, and network errors, this run"),
    HostColumn("not sent", lambda h, e: str(h.not_sent), True, 5,
               hint="answered without a request: held, suppressed, disallowed", wide=True),
    HostColumn("last", lambda h, e: "" if h.last_status is None else str(h.last_status), True, 2.8,
               hint="the last HTTP status", spare=True),
    HostColumn("delay", lambda h, e: _delay(h), True, 5.6, hint="the pause between two requests to the host",
               spare=True),
    HostColumn("backoff", lambda h, e: _seconds(h.backoff_s) if h.backoff_s else "", True, 4.6,
               hint="added after errors", wide=True),
    HostColumn("crawl", lambda h, e: _seconds(h.crawl_delay_s), True, 3.8, hint="robots.txt Crawl-delay", wide=True),
    HostColumn("credits", lambda h, e: "" if h.credits_left is None else f"{h.credits_left:,}", True, 4.6,
               spare=True, sparse=True,
               hint="credits left today, when the host counts them (OpenAlex: its last X-RateLimit-Remaining)"),
)

#: Characters of a reason that two lines of the state column hold at 700 px; of a host name in its column.
_WHY_FITS, _HOST_FITS = 70, 17
#: Table widths (px) below which the ``wide`` columns, and then the ``spare`` ones, are left out (the state
#: column keeps room for its words: about 150 px of a 440 px table).
WIDE_FROM_PX = 940
SPARE_FROM_PX = 600


def _columns(hosts: Iterable[HostRow], ended: bool) -> list[HostColumn]:
    """The columns of a table of *hosts*: :data:`HOST_COLUMNS`, less the ``sparse`` ones no host has a value for."""
    hosts = list(hosts)
    return [c for c in HOST_COLUMNS if not c.sparse or any(c.cell(h, ended) for h in hosts)]


def _nth(which: Callable[[HostColumn], bool]) -> str:
    """A CSS selector for the cells of the columns *which* picks (by position: no class on every cell)."""
    picked = ",".join(f":nth-child({i})" for i, c in enumerate(HOST_COLUMNS, 1) if which(c))
    return f".paperfetch-hosts :is(th,td):is({picked})"


#: The one style block of the dashboard (classes only; scoped by the ``paperfetch-`` prefix).
DASHBOARD_CSS = (
    ".paperfetch-dashboard{max-width:100%;overflow:hidden}"
    ".paperfetch-bar{display:flex;align-items:center;gap:2px 8px;flex-wrap:wrap}"
    ".paperfetch-track{flex:0 0 10em;height:10px;background:#e0e0e0;border-radius:2px;overflow:hidden}"
    ".paperfetch-fill{height:100%}"
    ".paperfetch-store{color:#757575}"
    ".paperfetch-note{font-size:12px;margin:2px 0}"
    ".paperfetch-offline{font-weight:bold;color:#b71c1c}"
    ".paperfetch-hosts-box{max-height:20em;overflow-y:auto;overflow-x:hidden;max-width:100%;container-type:inline-size}"
    # frozen (a saved notebook's): every row shown, however narrow the view and however many lines its states take
    ".paperfetch-dashboard .paperfetch-hosts-box{max-height:none}"
    # the table's rules outrank a notebook's own table CSS (JupyterLab's rendered HTML sets every cell
    # right-aligned and wrapping, at two classes and a type): each names the box, the table and the cell
    ".paperfetch-hosts-box table.paperfetch-hosts{border-collapse:collapse;table-layout:fixed;width:100%;"
    "font-size:12px;line-height:1.4;margin:0;border:none}"
    ".paperfetch-hosts-box table.paperfetch-hosts :is(th,td){padding:1px 4px;white-space:nowrap;overflow:hidden;"
    "text-overflow:ellipsis;text-align:left;vertical-align:top;line-height:1.4;max-width:none;border:none;"
    "border-bottom:1px solid rgba(128,128,128,.25)}"
    ".paperfetch-hosts-box table.paperfetch-hosts th{font-weight:bold;border-bottom:1px solid #888}"
    ".paperfetch-hosts-box table" + _nth(lambda c: c.numeric) + "{text-align:right;font-variant-numeric:tabular-nums}"
    # the state wraps between words, never inside one; only its reason (a URL, say) breaks anywhere
    ".paperfetch-hosts-box table.paperfetch-hosts td.s{white-space:normal;word-break:normal;overflow-wrap:normal}"
    ".paperfetch-hosts .why{font-size:11px;opacity:.8;display:-webkit-box;-webkit-line-clamp:2;"
    "-webkit-box-orient:vertical;overflow:hidden;overflow-wrap:anywhere}"
    ".paperfetch-held td,.paperfetch-suppressed td,.paperfetch-unreachable td{color:#000}"
    ".paperfetch-hosts-box table.paperfetch-hosts tr.paperfetch-unreachable{background-color:#e2e3e5}"
    f"@container (max-width:{WIDE_FROM_PX}px){{{_nth(lambda c: c.wide)}{{display:none}}}}"
    f"@container (max-width:{SPARE_FROM_PX}px){{{_nth(lambda c: c.spare)}{{display:none}}}}"
    ".paperfetch-events{max-height:8em;overflow-y:auto;font-family:monospace;font-size:11px;line-height:1.45;"
    "margin-top:4px;overflow-wrap:anywhere}"
)


def _state_cell(h: HostRow, ended: bool) -> str:
    """The state cell: the word (and the countdown or until when) on the first line, the reason on a second."""
    esc = html.escape
    head, why = _state_parts(h, ended)
    # the whole text on hover only where two lines may not hold it (every byte counts in a saved notebook)
    title = f' title="{esc(f"{head}: {why}", quote=True)}"' if len(why) > _WHY_FITS else ""
    body = f"<b>{esc(head)}</b>" if h.problem else esc(head)
    if why:
        body += f'<div class="why">{esc(why)}</div>'
    return f'<td class="s"{title}>{body}</td>'


def _td(column: HostColumn, h: HostRow, ended: bool) -> str:
    if column.header == "state":
        return _state_cell(h, ended)
    text = column.cell(h, ended)
    title = f' title="{html.escape(text, quote=True)}"' if not column.numeric and len(text) > _HOST_FITS else ""
    return f"<td{title}>{html.escape(text)}</td>"


def _row_class(h: HostRow) -> tuple[str, str]:
    """(class, inline background) of a host's row."""
    if h.suppressed:
        return "paperfetch-suppressed", SUPPRESSED_COLOUR
    if h.held:
        return "paperfetch-held", HELD_COLOUR
    if h.unreachable:
        return "paperfetch-unreachable", ""
    return "", ""


def _notes_html(snapshot: BatchSnapshot) -> str:
    esc = html.escape
    notes = []
    offline = snapshot.offline_line()
    if offline:
        notes.append(f'<div class="paperfetch-note paperfetch-offline">{esc(offline)}</div>')
    others = snapshot.others_line()
    if others:
        head, _, call = others.rpartition(" — ")
        notes.append(f'<div class="paperfetch-note paperfetch-others">{esc(head)} — <code>{esc(call)}</code></div>')
    return "".join(notes)


def render_hosts_html(snapshot: BatchSnapshot, max_rows: int = defaults.DASHBOARD_MAX_ROWS, *,
                      style: bool = True) -> str:
    """The per-host table, problem hosts first, in a scrolling box; *style* puts :data:`DASHBOARD_CSS` first."""
    esc = html.escape
    ended = snapshot.ended
    columns = _columns(snapshot.hosts, ended)
    heads = [
        ("<th" + (f' style="width:{c.width:g}em"' if c.width else "")
         + (f' title="{esc(c.hint, quote=True)}"' if c.hint else "") + f">{esc(c.header)}</th>")
        for c in columns
    ]
    head = "".join(heads)
    ordered = _ordered(snapshot.hosts)
    shown, rest = ordered[:max_rows], ordered[max_rows:]
    body = []
    for h in shown:
        css, colour = _row_class(h)
        attrs = (f' class="{css}"' if css else "") + (f' style="background-color:{colour}"' if colour else "")
        cells = "".join(_td(c, h, ended) for c in columns)
        body.append(f'<tr data-host="{esc(h.shown, quote=True)}"{attrs}>{cells}</tr>')
    if rest:
        body.append(f'<tr class="paperfetch-more"><td colspan="{len(columns)}">… {len(rest)} more host(s)</td></tr>')
    if not body:
        body.append(f'<tr class="paperfetch-empty"><td colspan="{len(columns)}">no host yet</td></tr>')
    css = f"<style>{DASHBOARD_CSS}</style>" if style else ""
    return (
        f'{css}{_notes_html(snapshot)}<div class="paperfetch-hosts-box"><table class="paperfetch-hosts">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def render_events_html(snapshot: BatchSnapshot, max_events: int | None = None) -> str:
    """The recent notable events, newest first, in a box that scrolls; long lines wrap."""
    esc = html.escape
    events = list(snapshot.events)
    if max_events is not None:
        events = events[-max_events:]
    lines = [
        f'<div data-kind="{esc(e.kind)}">{_clock_time(e.at)} <b>{esc(_label(e.kind))}</b> '
        f"{esc(e.host)} {esc(e.message)}</div>"
        for e in reversed(events)
    ]
    if not lines:
        lines = ['<div class="paperfetch-none">no notable events</div>']
    return f'<div class="paperfetch-events"><div><b>recent events (UTC)</b></div>{"".join(lines)}</div>'


def _state_line(snapshot: BatchSnapshot) -> str:
    """``running 4.2 s``, ``ended 16:05:01 UTC after 4.2 s`` (or ``interrupted``, ``stopped``), or ``idle``."""
    elapsed = snapshot.elapsed_s
    took = f"{elapsed:.1f} s" if elapsed is not None else ""
    if snapshot.running:
        return f"running {took}".rstrip()
    if snapshot.finished_at is not None:
        how = snapshot.ending if snapshot.ending in ("interrupted", "stopped") else "ended"
        return f"{how} {_clock_time(snapshot.finished_at)} UTC after {took}"
    return "idle"


def render_counts_html(snapshot: BatchSnapshot) -> str:
    esc = html.escape
    state = esc(_state_line(snapshot))
    if snapshot.ending in ("interrupted", "stopped"):
        state = f"<b>{state}</b>"
    parts = [f"<b>{snapshot.finished} / {snapshot.total}</b>", state]
    parts += [f"{esc(status.replace('_', ' '))} {n}" for status, n in snapshot.counts.items() if n]
    if met_line(snapshot.met):
        parts.append(f"<b>met {esc(met_line(snapshot.met))}</b>")
    for n, word in ((len(snapshot.held), "HELD"), (len(snapshot.suppressed), "SUPPRESSED"),
                    (len(snapshot.unreachable), "UNREACHABLE")):
        if n:
            parts.append(f"<b>{n} {word}</b>")
    return '<span class="paperfetch-counts">' + " · ".join(parts) + "</span>"


#: The bar's fill for each :attr:`BatchSnapshot.bar_style` (the colours of ipywidgets' bar styles).
_BAR_COLOURS = {"": "#2196f3", "success": "#4caf50", "warning": "#ff9800", "danger": "#f44336"}


def render_html(snapshot: BatchSnapshot, max_rows: int = defaults.DASHBOARD_MAX_ROWS, title: str = "paperfetch",
                max_events: int = 15) -> str:
    """The whole dashboard as static HTML, what a saved notebook keeps (the last *max_events* events)."""
    total, done = max(0, snapshot.total), max(0, min(snapshot.finished, max(0, snapshot.total)))
    share = 100.0 * done / total if total else 0.0
    colour = _BAR_COLOURS[snapshot.bar_style]
    store = (f'<span class="paperfetch-store">host state: {html.escape(snapshot.store)}</span>'
             if snapshot.store else "")
    bar = (
        f'<div class="paperfetch-bar"><b>{html.escape(title)}</b>'
        f'<div class="paperfetch-track"><div class="paperfetch-fill" style="width:{share:.1f}%;background:{colour}">'
        f"</div></div>{render_counts_html(snapshot)}{store}</div>"
    )
    return (
        f'<style>{DASHBOARD_CSS}</style><div class="paperfetch-dashboard">'
        f"{bar}{render_hosts_html(snapshot, max_rows, style=False)}{render_events_html(snapshot, max_events)}</div>"
    )


def render_text(snapshot: BatchSnapshot, max_rows: int = 20, max_events: int = 10) -> str:
    """The dashboard as plain text: summary, host table, recent events."""
    lines = [snapshot.summary()]
    if snapshot.store:
        lines.append(f"host state: {snapshot.store}")
    lines += [line for line in (snapshot.offline_line(), snapshot.others_line()) if line]
    hosts = _ordered(snapshot.hosts)
    if hosts:
        lines += _host_lines(hosts, snapshot.ended, max_rows)
    if snapshot.events:
        lines.append("recent events (UTC):")
        for e in list(snapshot.events)[-max_events:][::-1]:
            lines.append(f"  {_clock_time(e.at)} {_label(e.kind)} {e.host} {clip(e.message, 160)}")
    return "\n".join(line.rstrip() for line in lines)


def _host_lines(hosts: list[HostRow], ended: bool, max_rows: int) -> list[str]:
    """The host table as text lines, aligned; the column that takes the room left in HTML (the state, with its
    reasons) goes last, unpadded."""
    shown = _columns(hosts, ended)
    columns = [c for c in shown if c.width] + [c for c in shown if not c.width]
    table = [tuple(c.header for c in columns)]
    for h in hosts[:max_rows]:
        table.append(tuple(clip(c.cell(h, ended), c.clip) if c.clip else c.cell(h, ended) for c in columns))
    widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
    lines = []
    for row in table:
        cells = [cell.rjust(w) if c.numeric else cell.ljust(w) for c, cell, w in zip(columns[:-1], row[:-1], widths[:-1])]
        lines.append("  " + "  ".join(cells) + "  " + row[-1])
    if len(hosts) > max_rows:
        lines.append(f"  … {len(hosts) - max_rows} more host(s)")
    return lines
