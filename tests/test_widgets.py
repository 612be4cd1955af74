"""The dashboard: a plain model fed by events, a thin ipywidgets view asserted by its trait values."""

from __future__ import annotations

import sys
import threading
import time
import types
from dataclasses import replace

import pandas as pd
import pytest

from paperfetch import FakeClock, HttpClient
from paperfetch.dashboard import (
    RECENT_EVENTS,
    BatchSnapshot,
    Dashboard,
    DashboardModel,
    HostRow,
    in_notebook,
    render_text,
    style_domain_status,
)
from paperfetch.dashboard.tables import HELD_COLOUR, SUPPRESSED_COLOUR
from paperfetch.demo import DemoWorld
from paperfetch.http.events import Event, EventKind
from paperfetch.http.hosts import HostRegistry
from paperfetch.http.scheduler import HostScheduler
from paperfetch.outcomes import Status
from tests._quick import retriever


def ev(kind: EventKind, host: str, clock: FakeClock | None = None, **fields) -> Event:
    return Event(kind, host, clock.time() if clock is not None else time.time(), **fields)


def feed(model: DashboardModel, clock: FakeClock) -> None:
    """a.example: two answers and a network error; b.example: held 12:34; c.example: suppressed; d: robots."""
    for kind, fields in [
        (EventKind.REQUEST, {}), (EventKind.RESPONSE, {"status": 200}),
        (EventKind.REQUEST, {}), (EventKind.RESPONSE, {"status": 404}),
        (EventKind.REQUEST, {}), (EventKind.NETWORK_ERROR, {"detail": "ConnectionError"}),
        (EventKind.REQUEST, {}),  # still in flight
        (EventKind.WAIT, {"seconds": 1.0, "detail": "pacing"}),
        (EventKind.BACKOFF, {"seconds": 2.0, "detail": "0s -> 2s"}),
    ]:
        model.on_event(ev(kind, "a.example", clock, url="http://a.example/x", **fields))
    model.on_event(ev(EventKind.REQUEST, "b.example", clock))
    model.on_event(ev(EventKind.RESPONSE, "b.example", clock, status=503))
    model.on_event(ev(EventKind.HOLD, "b.example", clock, status=503, seconds=754.0,
                      detail="HTTP 503 with Retry-After: 754s"))
    model.on_event(ev(EventKind.HELD, "b.example", clock, status=503, seconds=754.0))
    model.on_event(ev(EventKind.REQUEST, "c.example", clock))
    model.on_event(ev(EventKind.RESPONSE, "c.example", clock, status=403))
    model.on_event(ev(EventKind.SUPPRESS, "c.example", clock, status=403, seconds=3600.0,
                      detail="HTTP 403 for http://c.example/pdf"))
    model.on_event(ev(EventKind.SUPPRESSED, "c.example", clock, status=403))
    model.on_event(ev(EventKind.DISALLOWED, "d.example", clock, url="http://d.example/pdf/1.pdf", detail="parsed"))


# ---------------------------------------------------------------------- the model
def test_model_counts_transport_events_per_host():
    clock = FakeClock()
    model = DashboardModel(clock=clock)
    feed(model, clock)
    snap = model.snapshot()
    assert isinstance(snap, BatchSnapshot)
    assert [h.host for h in snap.hosts] == ["a.example", "b.example", "c.example", "d.example"]
    a = snap.host("a.example")
    assert (a.requests, a.in_flight, a.ok, a.not_found, a.errors, a.not_sent, a.done) == (4, 1, 1, 1, 1, 0, 3)  # a 404 is no error
    assert a.last_status == 404 and a.backoff_s == 2.0 and a.state == "busy"
    b = snap.host("b.example")
    assert b.held and b.hold_left_s == pytest.approx(754.0) and b.hold_status == 503 and b.not_sent == 1
    assert b.held_until == pytest.approx(clock.time() + 754.0) and b.state == "HELD"
    c = snap.host("c.example")
    assert c.suppressed and c.suppressed_reason == "HTTP 403 for http://c.example/pdf" and c.state == "SUPPRESSED"
    assert (c.errors, c.not_sent, c.last_status) == (1, 1, 403)
    assert snap.host("d.example").not_sent == 1
    assert snap.requests == 6
    assert [h.host for h in snap.held] == ["b.example"] and [h.host for h in snap.suppressed] == ["c.example"]
    # the recent events: hold, suppression, robots refusal; oldest first, no WAIT/BACKOFF noise
    assert [(e.kind, e.host) for e in snap.events] == [
        ("hold", "b.example"), ("suppress", "c.example"), ("disallowed", "d.example"),
    ]
    assert snap.events[0].message == "held for 12:34: HTTP 503 with Retry-After: 754s"
    assert "robots.txt disallows http://d.example/pdf/1.pdf" == snap.events[2].message


def test_countdown_and_expiry_follow_the_clock():
    clock = FakeClock()
    model = DashboardModel(clock=clock)
    feed(model, clock)
    clock.advance(100)
    assert model.snapshot().host("b.example").hold_left_s == pytest.approx(654.0)
    clock.advance(700)  # the hold is over; the suppression (an hour) is not
    snap = model.snapshot()
    assert not snap.host("b.example").held and snap.host("c.example").suppressed
    clock.advance(3000)
    assert not model.snapshot().host("c.example").suppressed
    model.on_event(ev(EventKind.HOLD, "b.example", clock, status=429, seconds=30.0, detail="HTTP 429"))
    assert model.snapshot().host("b.example").hold_left_s == pytest.approx(30.0)
    clock.advance(31)
    assert not model.snapshot().host("b.example").held


def test_item_completions_count_by_status_and_log_invalid_pdfs():
    clock = FakeClock()
    model = DashboardModel(clock=clock)
    model.start(5)
    model.item_finished(Status.DOWNLOADED)
    model.item_finished("downloaded")
    model.item_finished("invalid_identifier")
    model.item_finished(
        "invalid_pdf", key="doi:10.1/x", url="http://p.example/x.pdf?email=me@uni.example",
        error="openalex http://p.example/x.pdf: an HTML page, not a PDF; landing http://q/y: other",
    )
    snap = model.snapshot()
    assert (snap.total, snap.done, snap.running) == (5, 4, True)
    assert dict(snap.counts) == {"downloaded": 2, "invalid_identifier": 1, "invalid_pdf": 1}
    assert list(snap.counts) == ["downloaded", "invalid_identifier", "invalid_pdf"]  # Status order
    note = snap.events[-1]
    assert (note.kind, note.host) == ("invalid_pdf", "p.example")
    assert note.message == "doi:10.1/x: openalex http://p.example/x.pdf: an HTML page, not a PDF"
    model.finish()
    snap = model.snapshot()
    assert not snap.running and snap.finished_at == clock.time()
    assert snap.summary().startswith("paperfetch ended 22:13:20 UTC: 4/5 done")


def test_recent_events_are_a_short_ring():
    model = DashboardModel()
    for i in range(RECENT_EVENTS + 30):
        model.on_event(ev(EventKind.DISALLOWED, "r.example", url=f"http://r.example/{i}"))
    events = model.snapshot().events
    assert len(events) == RECENT_EVENTS
    assert events[-1].message.endswith(f"/{RECENT_EVENTS + 29}") and events[0].message.endswith("/30")


def test_snapshot_is_frozen_and_safe_under_concurrent_publishers():
    model = DashboardModel()
    stop = threading.Event()
    seen: list[BatchSnapshot] = []

    def publish(host: str) -> None:
        for _ in range(2000):
            model.on_event(ev(EventKind.REQUEST, host))
            model.on_event(ev(EventKind.RESPONSE, host, status=200))
        for _ in range(100):
            model.item_finished("downloaded")

    def read() -> None:
        while not stop.is_set():
            seen.append(model.snapshot())

    reader = threading.Thread(target=read)
    reader.start()
    threads = [threading.Thread(target=publish, args=(f"h{i}.example",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    reader.join()
    snap = model.snapshot()
    assert all((h.requests, h.ok, h.in_flight) == (2000, 2000, 0) for h in snap.hosts)
    assert snap.done == 400 and snap.counts["downloaded"] == 400
    assert seen and all(h.in_flight in (0, 1) for s in seen for h in s.hosts)
    with pytest.raises(AttributeError):
        snap.done = 0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        snap.hosts[0].ok = 0  # type: ignore[misc]


def test_queued_comes_from_the_scheduler():
    client = HttpClient(registry=HostRegistry(), delay_min_s=0, delay_max_s=0)
    gate = threading.Event()

    class Job:
        def __init__(self, url: str) -> None:
            self.url: str | None = url

        def advance(self) -> None:
            gate.wait(5)
            self.url = None

    model = DashboardModel().watch(client)
    scheduler = HostScheduler(client, workers=4)
    model.track(scheduler)
    jobs = [Job(f"http://a.example/{i}") for i in range(5)] + [Job(f"http://b.example/{i}") for i in range(3)]
    runner = threading.Thread(target=scheduler.run, args=(jobs,))
    runner.start()
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            snap = model.snapshot()
            if (snap.host("a.example") and snap.host("b.example")
                    and (snap.host("a.example").queued, snap.host("b.example").queued) == (4, 2)):
                break
            time.sleep(0.01)
        assert (snap.host("a.example").queued, snap.host("b.example").queued) == (4, 2)
        assert snap.host("a.example").state == "queued"
    finally:
        gate.set()
        runner.join(5)
    model.finish()
    assert all(h.queued == 0 for h in model.snapshot().hosts)


def test_politeness_is_read_from_the_watched_client():
    clock = FakeClock()
    client = HttpClient(registry=HostRegistry(clock), clock=clock, delay_min_s=0.5, delay_max_s=1.5)
    held = client.host_limiter("http://held.example/")
    held.set_hold(clock.monotonic() + 3600, status=503, reason="HTTP 503 with Retry-After: 3600s")
    client.host_limiter("http://shut.example/").suppress("HTTP 403 for http://shut.example/x", clock.monotonic(), None)
    client.host_limiter("http://plain.example/")
    model = DashboardModel(clock=clock).watch(client, events=False)
    snap = model.snapshot()
    assert [h.host for h in snap.hosts] == ["held.example", "plain.example", "shut.example"]
    h = snap.host("held.example")
    assert h.held and h.hold_left_s == 3600 and h.hold_status == 503 and h.hold_reason.startswith("HTTP 503")
    assert (h.delay_min_s, h.delay_max_s) == (0.5, 1.5)
    s = snap.host("shut.example")
    assert s.suppressed and s.suppressed_until is None and s.suppressed_reason == "HTTP 403 for http://shut.example/x"
    assert len(client.events) == 0  # events=False: not subscribed
    client.release_holds()  # publishes no event; the model sees it anyway
    assert not model.snapshot().host("held.example").held
    unsubscribed = DashboardModel().watch(client)
    assert len(client.events) == 1
    unsubscribed.finish()
    assert len(client.events) == 0


def test_the_learned_interval_and_the_breaker_reach_the_dashboard():
    from dataclasses import replace

    from paperfetch.state.base import BreakerState

    clock = FakeClock()
    client = HttpClient(registry=HostRegistry(clock), clock=clock)
    client.host_limiter("http://strict.example/").update(
        lambda f: replace(f, learned_interval_s=1.6, breaker_state=BreakerState.OPEN, breaker_open_until=clock.time() + 30)
    )
    h = DashboardModel(clock=clock).watch(client, events=False).snapshot().host("strict.example")
    assert (h.learned_interval_s, h.breaker, h.delay_min_s) == (1.6, "open", 1.6)


# ---------------------------------------------------------------------- the view
def test_dashboard_traits_after_a_redraw():
    clock = FakeClock()
    model = DashboardModel(clock=clock)
    model.start(10)
    for status in ("downloaded", "downloaded", "downloaded", "host_held"):
        model.item_finished(status)
    feed(model, clock)
    dash = Dashboard(model, autostart=False)
    assert dash.redraws == 1  # drawn once when built
    assert (dash.progress_bar.value, dash.progress_bar.max) == (4, 10)
    assert "4 / 10" in dash.counts.value and "downloaded 3" in dash.counts.value and "host held 1" in dash.counts.value
    table = dash.hosts.value
    assert '<table class="paperfetch-hosts"' in table
    for host in ("a.example", "b.example", "c.example", "d.example"):
        assert f'<tr data-host="{host}"' in table
    held_row = table.split('<tr data-host="b.example"')[1].split("</tr>")[0]
    assert "HELD" in held_row and "HELD 12:34 left (HTTP 503)" in held_row and HELD_COLOUR in held_row
    suppressed_row = table.split('<tr data-host="c.example"')[1].split("</tr>")[0]
    assert "SUPPRESSED" in suppressed_row and SUPPRESSED_COLOUR in suppressed_row
    assert "HTTP 403 for http://c.example/pdf" in suppressed_row
    plain_row = table.split('<tr data-host="a.example"')[1].split("</tr>")[0]
    assert "HELD" not in plain_row and "background" not in plain_row
    log = dash.events.value
    assert 'class="paperfetch-events"' in log and ".paperfetch-events{max-height:8em;overflow-y:auto" in table
    assert "held for 12:34: HTTP 503 with Retry-After: 754s" in log
    assert log.index("DISALLOWED") < log.index("HOLD")  # newest first
    assert dash.widget.children[1] is dash.hosts and dash.widget.children[2] is dash.events

    clock.advance(60)  # the countdown moves on the next redraw
    dash.refresh()
    assert "HELD 11:34 left" in dash.hosts.value
    model.finish()
    dash.close()
    assert dash.progress_bar.bar_style == "danger"  # finished with 4 of 10
    # the run ended: the countdown stops, the hold is a clock time, and later views say the same
    held_row = dash.hosts.value.split('<tr data-host="b.example"')[1].split("</tr>")[0]
    assert " left (HTTP" not in held_row and "HELD until 22:25:54 UTC (HTTP 503)" in held_row
    assert "ended 22:14:20 UTC" in dash.counts.value and not dash._countdown
    clock.advance(600)
    assert dash.tick() is False and Dashboard(model, autostart=False).hosts.value == dash.hosts.value


def test_html_is_escaped():
    model = DashboardModel()
    model.on_event(ev(EventKind.SUPPRESS, "x.example", detail="<script>alert(1)</script>", seconds=None))
    dash = Dashboard(model, autostart=False)
    assert "<script>" not in dash.hosts.value and "&lt;script&gt;" in dash.hosts.value
    assert "<script>" not in dash.events.value


def test_redraws_are_coalesced_without_a_timer():
    model = DashboardModel()
    dash = Dashboard(model, autostart=False)
    for i in range(10_000):
        model.on_event(ev(EventKind.REQUEST, f"h{i % 7}.example"))
    assert dash.redraws == 1  # events never draw by themselves
    dash.tick()
    dash.tick()  # nothing changed since: no redraw
    assert dash.redraws == 2
    assert dash.progress_bar.max == 0 and "h6.example" in dash.hosts.value


def test_redraw_rate_is_bounded_whatever_the_event_rate():
    model = DashboardModel()
    model.start(10_000)
    interval = 0.05
    dash = Dashboard(model, interval_s=interval, autostart=True)
    start = time.monotonic()
    for i in range(10_000):
        model.on_event(ev(EventKind.REQUEST, f"h{i % 5}.example"))
        model.on_event(ev(EventKind.RESPONSE, f"h{i % 5}.example", status=200))
        model.item_finished("downloaded")
        if i % 500 == 0:
            time.sleep(0.01)  # spread the events over a few timer periods
    model.finish()
    dash.close()
    elapsed = time.monotonic() - start
    # one redraw when built, at most one per period, one final redraw on close
    assert dash.redraws <= elapsed / interval + 3
    assert dash.redraws >= 2
    assert (dash.progress_bar.value, dash.progress_bar.max, dash.progress_bar.bar_style) == (10_000, 10_000, "success")
    assert dash._thread is None


def wait_for(predicate, timeout: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def test_the_view_keeps_redrawing_when_only_its_widget_is_kept():
    import gc

    model = DashboardModel()
    model.start(3)
    widget = Dashboard(model, interval_s=0.01, autostart=True).widget  # as in panel.children = [r.dashboard().widget]
    gc.collect()
    bar = widget.children[0].children[0]
    model.item_finished("downloaded")
    assert wait_for(lambda: bar.value == 1)
    model.finish()
    assert wait_for(lambda: bar.bar_style == "danger")


def test_closing_the_widget_stops_the_timer():
    model = DashboardModel()
    model.start(3)
    dash = Dashboard(model, interval_s=0.01, autostart=True)
    thread = dash._thread
    dash.widget.close()
    thread.join(2)
    assert not thread.is_alive()
    model.finish()


def test_timer_stops_by_itself_when_nothing_can_change():
    model = DashboardModel()
    dash = Dashboard(model, interval_s=0.01, autostart=True)
    thread = dash._thread
    thread.join(2)
    assert not thread.is_alive()


def test_disabled_dashboard_does_nothing(capsys):
    dash = Dashboard(enabled=False)
    assert dash.widget is None and dash.model is None and dash._thread is None
    dash.start()
    dash.refresh()
    assert dash.tick() is False
    dash.close()
    dash.show()
    assert dash._repr_mimebundle_() == {"text/plain": "Dashboard(disabled)"}
    assert dash.redraws == 0 and dash._thread is None and dash.snapshot() is None
    assert repr(dash) == "Dashboard(disabled)"
    assert capsys.readouterr().out == ""
    model = DashboardModel()
    Dashboard(model, enabled=False)
    assert model.snapshot().version == 0  # nothing touched the model


def test_repr_is_text():
    from IPython.lib.pretty import pretty

    clock = FakeClock()
    model = DashboardModel(clock=clock)
    model.start(3)
    model.item_finished("downloaded")
    feed(model, clock)
    dash = Dashboard(model, autostart=False)
    text = repr(dash)
    assert text.startswith("paperfetch running: 1/3 done") and "downloaded 1" in text
    assert "<" not in text.split("\n")[0]
    lines = text.splitlines()
    assert any(line.strip().startswith("b.example") and "HELD" in line and "HELD 12:34 left" in line for line in lines)
    assert any(line.strip().startswith("c.example") and "SUPPRESSED" in line for line in lines)
    assert "recent events (UTC):" in text and "HOLD b.example held for 12:34" in text
    assert pretty(dash) == text
    assert str(dash) == text


def test_hosts_frame_and_host_snapshot_defaults():
    frame = BatchSnapshot(at=0.0, hosts=(HostRow("a.example", ok=2, errors=1),)).hosts_frame()
    assert list(frame["host"]) == ["a.example"] and frame.loc[0, "done"] == 3 and frame.loc[0, "state"] == "idle"


def test_in_notebook_detection(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert in_notebook() is False

    def fake_ipython(shell):
        module = types.ModuleType("IPython")
        module.get_ipython = lambda: shell
        monkeypatch.setitem(sys.modules, "IPython", module)

    fake_ipython(None)
    assert in_notebook() is False
    ZMQInteractiveShell = type("ZMQInteractiveShell", (), {"config": {}})
    fake_ipython(ZMQInteractiveShell())
    assert in_notebook() is True
    TerminalInteractiveShell = type("TerminalInteractiveShell", (), {"config": {}})
    fake_ipython(TerminalInteractiveShell())
    assert in_notebook() is False
    OtherKernelShell = type("OtherKernelShell", (), {"config": {"IPKernelApp": {}}})
    fake_ipython(OtherKernelShell())
    assert in_notebook() is True


# ---------------------------------------------------------------------- domain_status, styled
def test_style_domain_status_marks_held_and_suppressed_rows():
    clock = FakeClock()
    client = HttpClient(registry=HostRegistry(clock), clock=clock)
    client.host_limiter("http://held.example/").set_hold(clock.monotonic() + 60, status=429, reason="HTTP 429")
    client.host_limiter("http://shut.example/").suppress("HTTP 403", clock.monotonic(), 3600)
    client.host_limiter("http://plain.example/")
    frame = client.domain_status()
    styler = style_domain_status(frame)
    assert isinstance(styler, pd.io.formats.style.Styler)
    ctx = styler._compute().ctx  # {(row, col): [(property, value), ...]}
    colours = {frame.loc[r, "host"]: dict(props)["background-color"] for (r, c), props in ctx.items()
               if c == 0 and "background-color" in dict(props)}
    assert colours == {"held.example": HELD_COLOUR, "shut.example": SUPPRESSED_COLOUR}
    html = styler.to_html()
    assert 'class="paperfetch-domain-status"' in html and HELD_COLOUR in html and SUPPRESSED_COLOUR in html


def test_style_domain_status_is_formatted_for_people():
    import re

    clock = FakeClock()
    client = HttpClient(registry=HostRegistry(clock), clock=clock, rate_limit_min_s=0.1, rate_limit_max_s=0.25)
    reason = "HTTP 403 for http://shut.example/" + "a" * 80
    client.host_limiter("http://held.example/").set_hold(clock.monotonic() + 60.123456, status=429, reason="HTTP 429")
    client.host_limiter("http://shut.example/").suppress(reason, clock.monotonic(), 3600)
    client.host_limiter("http://plain.example/").update(lambda facts: replace(facts, backoff_s=2.345678))
    frame = client.domain_status()
    html = style_domain_status(frame).to_html()
    cells = re.findall(r"<td[^>]*>(.*?)</td>", html)
    assert cells and not {"nan", "None", "NaT", "<NA>", "False"} & set(cells)
    assert "2.345678" not in html and ">2.3<" in html and ">0.0<" not in html  # one decimal; no backoff: empty
    times = [c for c in cells if re.fullmatch(r"[\d:\- ]{8,}", c)]
    assert times and all(re.fullmatch(r"(\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d", t) for t in times)  # to the second
    assert reason in html and "white-space: normal" in html  # the reason wraps in a narrow column, never cut
    width = len(cells) // len(frame)  # one row per host, its state in words first
    assert cells[::width] == ["HELD", "ok", "SUPPRESSED"]
    assert cells[1::width] == ["held.example", "plain.example", "shut.example"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(429\)", cells[2])  # the hold and its status, one cell
    assert "suppressed" not in style_domain_status(frame).data.columns  # the reason and the colour say it
    assert ">delay (s)<" in html and ">until (UTC)<" in html and ">0.1–0.2<" not in html  # units in the header
    assert "white-space: nowrap" in html and 'class="row_heading' not in html  # no index column


# ---------------------------------------------------------------------- with the Retriever
@pytest.fixture(scope="module")
def world():
    with DemoWorld(base_ip=100) as w:
        yield w


INPUTS = [
    "10.5555/demo.fast",
    "https://doi.org/10.5555/DEMO.FAST",  # a duplicate
    "10.5555/demo.forbidden",
    "10.5555/demo.held",
    "10.5555/demo.robots",
    "10.5555/demo.closed",
    "not an identifier",
]


def test_a_real_run_fills_the_dashboard(world, tmp_path, monkeypatch):
    import tqdm.auto

    bars = []
    real_tqdm = tqdm.auto.tqdm

    def recording_tqdm(*args, **kwargs):
        bars.append(kwargs.get("disable"))
        return real_tqdm(*args, **kwargs)

    monkeypatch.setattr(tqdm.auto, "tqdm", recording_tqdm)
    with retriever(tmp_path, world.endpoints, progress=True, dashboard=True) as r:
        outcomes = r.download(INPUTS)
        dash = r.dashboard()
        assert bars == [True]  # the dashboard replaced the tqdm bar
        assert len(r.web.events) == 1 and len(r.api.events) == 1  # the run's model unsubscribed
        snap = dash.snapshot()
        expected = outcomes["status"].astype(str).value_counts().to_dict()
        assert dict(snap.counts) == expected
        assert snap.done == snap.total == len(INPUTS) and not snap.running
        assert (dash.progress_bar.value, dash.progress_bar.max) == (len(INPUTS), len(INPUTS))
        status = r.domain_status()
        assert {h.shown for h in snap.hosts} == set(status["host"])  # both as people read them
        for host in status["host"]:
            assert f'<tr data-host="{host}"' in dash.hosts.value
        held_host = world.hosts["held"].base_url.split("//")[1]
        forbidden_host = world.hosts["forbidden"].base_url.split("//")[1]
        robots_host = world.hosts["robots"].base_url.split("//")[1]
        assert snap.host(held_host).held and snap.host(held_host).hold_status == 503
        assert snap.host(forbidden_host).suppressed
        held_row = dash.hosts.value.split(f'<tr data-host="{held_host}"')[1].split("</tr>")[0]
        assert "HELD" in held_row and "HELD until " in held_row and " left" not in held_row  # the run ended
        bundle = dash._repr_mimebundle_()
        assert set(bundle) == {"text/html", "text/plain"}  # a finished run: its final state, no widget
        assert "paperfetch ended " in bundle["text/plain"] and "paperfetch-hosts" in bundle["text/html"]
        kinds = {(e.kind, e.host) for e in snap.events}
        assert {("hold", held_host), ("suppress", forbidden_host), ("disallowed", robots_host)} <= kinds
        assert "tester@uni.example" not in repr(dash) and "tester@uni.example" not in dash.events.value
        fast = snap.host(world.hosts["fast"].base_url.split("//")[1])
        assert fast.ok >= 1 and fast.in_flight == 0 and fast.queued == 0
        # per-host request counts match the transport's own count for this run
        assert snap.requests == r.web.requests_sent + r.api.requests_sent


def test_auto_mode_shows_the_dashboard_only_in_a_notebook(world, tmp_path, monkeypatch):
    import paperfetch.dashboard as widgets

    with retriever(tmp_path, world.endpoints, progress=True) as r:
        model, view = r._batch.dashboard_begin(3)
        model.finish()
        assert view is None  # a terminal: tqdm as before
        monkeypatch.setattr(widgets, "in_notebook", lambda: True)
        shown = []
        monkeypatch.setattr(widgets.Dashboard, "show", lambda self: shown.append(self))
        model, view = r._batch.dashboard_begin(3)
        try:
            assert isinstance(view, Dashboard) and shown == [view] and view._thread is not None
        finally:
            model.finish()
            view.close()
    with retriever(tmp_path, world.endpoints, progress=False) as r:
        model, view = r._batch.dashboard_begin(3)  # progress=False disables both
        model.finish()
        assert view is None
    with retriever(tmp_path, world.endpoints, progress=True, dashboard=False) as r:
        model, view = r._batch.dashboard_begin(3)
        model.finish()
        assert view is None


def test_dashboard_before_any_run_shows_the_known_hosts(world, tmp_path):
    with retriever(tmp_path, world.endpoints, progress=False) as r:
        r.web.host_limiter("http://already.example/").suppress("HTTP 403 earlier", 0.0, None)
        dash = r.dashboard()
        assert len(r.web.events) == 1  # only the Retriever's own subscriber
        snap = dash.snapshot()
        assert snap.total == 0 and snap.host("already.example").suppressed
        assert "SUPPRESSED" in dash.hosts.value
        assert repr(dash).startswith("paperfetch idle: 0/0 done")


# ---------------------------------------------------------------------- display: mime bundle, saved outputs
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def test_mimebundle_delegates_to_the_widget_while_the_run_goes():
    clock = FakeClock()
    model = DashboardModel(clock=clock)
    model.start(3)
    feed(model, clock)
    dash = Dashboard(model, autostart=False)
    bundle = dash._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == dash.widget.model_id
    # the fallbacks a saved notebook, an HTML export or a terminal show: the same moment, readable
    assert bundle["text/plain"].startswith("paperfetch running: 0/3 done") and "VBox(" not in bundle["text/plain"]
    assert '<div class="paperfetch-dashboard"' in bundle["text/html"] and "HELD 12:34 left" in bundle["text/html"]
    model.finish()
    bundle = dash._repr_mimebundle_()
    assert WIDGET_VIEW not in bundle
    assert "ended 22:13:20 UTC" in bundle["text/html"] and "HELD until 22:25:54 UTC" in bundle["text/plain"]


def test_show_then_close_replaces_the_output_with_the_final_state(monkeypatch):
    import IPython.display

    from paperfetch.dashboard import env

    class Handle:
        def __init__(self):
            self.updates = []

        def update(self, obj, raw=False):
            self.updates.append((obj, raw))

    shown = []

    def fake_display(obj, display_id=None):
        shown.append((obj._repr_mimebundle_(), display_id))
        return Handle()

    monkeypatch.setattr(IPython.display, "display", fake_display)
    monkeypatch.setattr(env, "in_notebook", lambda: True)  # where the view asks
    clock = FakeClock()
    model = DashboardModel(clock=clock)
    model.start(2)
    dash = Dashboard(model, autostart=False)
    dash.show()
    (bundle, display_id), = shown
    assert display_id is True and WIDGET_VIEW in bundle
    handle = dash._handles[0]
    model.item_finished("downloaded")
    model.item_finished("no_oa_copy")
    model.finish()
    dash.close()
    (final, raw), = handle.updates
    assert raw is True and set(final) == {"text/html", "text/plain"}
    assert final["text/plain"].startswith("paperfetch ended 22:13:20 UTC: 2/2 done")
    assert "2 / 2" in final["text/html"] and "ended 22:13:20 UTC" in final["text/html"]


def test_a_redraw_sends_one_message_per_part():
    model = DashboardModel()
    dash = Dashboard(model, autostart=False)
    sent = {name: [] for name in ("progress_bar", "counts", "hosts", "events")}
    for name, calls in sent.items():
        getattr(dash, name).send_state = lambda key=None, calls=calls: calls.append(set(key or ()))
    model.start(5)
    model.on_event(ev(EventKind.REQUEST, "a.example"))
    model.item_finished("downloaded")
    dash.refresh()
    assert all(len(calls) == 1 for calls in sent.values()), sent
    assert {"value", "max"} <= set(sent["progress_bar"][0])


def test_host_table_is_compact_problem_hosts_first_reasons_on_a_second_line_styled_by_classes():
    clock = FakeClock()
    model = DashboardModel(clock=clock)
    model.start(1)
    feed(model, clock)
    long_reason = "HTTP 403 for http://z.example/" + "x" * 300
    model.on_event(ev(EventKind.SUPPRESS, "z.example", clock, status=403, detail=long_reason))
    html_table = Dashboard(model, autostart=False).hosts.value
    rows = [part.split('"')[0] for part in html_table.split('<tr data-host="')[1:]]
    assert rows == ["b.example", "c.example", "z.example", "a.example", "d.example"]  # held, suppressed first
    head = html_table.split("<thead>")[1].split("</thead>")[0]
    # every column but the credits, which no host here counts
    assert head.count("<th") == len([c for c in widgets_module().HOST_COLUMNS if not c.sparse])
    assert ">in flight</th>" in head and ">not sent</th>" in head and ">not found</th>" in head
    a_row = html_table.split('<tr data-host="a.example"')[1].split("</tr>")[0]
    numbers = [cell for cell in a_row.split("<td>")[1:] if cell.split("<")[0].isdigit()]
    assert len(numbers) >= 8 and "style=" not in a_row  # aligned by the style block, no inline style on a plain row
    assert "text-align:right" in html_table.split("</style>")[0]
    z_row = html_table.split('<tr data-host="z.example"')[1].split("</tr>")[0]
    assert f'title="SUPPRESSED: {long_reason}"' in z_row and '<div class="why">' in z_row  # reason on line 2
    assert html_table.count("<style>") == 1 and "table-layout:fixed" in html_table
    assert "@container (max-width:940px){.paperfetch-hosts :is(th,td):is(:nth-child(4)," in html_table
    text = render_text(model.snapshot())
    z_line = next(line for line in text.splitlines() if line.strip().startswith("z.example"))
    assert len(z_line) < 250 and z_line.endswith("…")


def widgets_module():
    import paperfetch.dashboard as widgets

    return widgets


def test_text_view_right_aligns_numbers():
    model = DashboardModel()
    for _ in range(12):
        model.on_event(ev(EventKind.REQUEST, "many.example"))
        model.on_event(ev(EventKind.RESPONSE, "many.example", status=200))
    model.on_event(ev(EventKind.REQUEST, "one.example"))
    model.on_event(ev(EventKind.RESPONSE, "one.example", status=403))
    lines = render_text(model.snapshot()).splitlines()
    header = lines[1]
    ok_end = header.index(" OK") + 3
    many = next(line for line in lines if "many.example" in line)
    one = next(line for line in lines if "one.example" in line)
    assert many[ok_end - 2:ok_end] == "12" and one[ok_end - 1] == "0" and one[ok_end - 2] == " "


def test_the_widget_itself_reprs_as_the_summary_line():
    model = DashboardModel()
    model.start(2)
    model.item_finished("downloaded")
    dash = Dashboard(model, autostart=False)
    bundle = dash.widget._repr_mimebundle_()
    assert bundle["text/plain"].startswith("paperfetch running: 1/2 done") and WIDGET_VIEW in bundle


# ---------------------------------------------------------------------- a dashboard about this run
def _shared_client(clock):
    """A client whose store holds two other runs' hosts: one held, one suppressed, one plain."""
    client = HttpClient(registry=HostRegistry(clock), clock=clock)
    client.host_limiter("http://other-held.example/").set_hold(clock.monotonic() + 600, status=503, reason="HTTP 503")
    client.host_limiter("http://other-shut.example/").suppress("HTTP 403", clock.monotonic(), None)
    client.host_limiter("http://other-plain.example/")
    return client


def test_a_run_shows_only_its_hosts_and_folds_the_shared_state_into_one_line():
    clock = FakeClock()
    client = _shared_client(clock)
    model = DashboardModel(clock=clock).watch(client, events=False)
    assert len(model.snapshot().hosts) == 3  # before any run: the hosts the store knows
    model.start(1)
    model.on_event(ev(EventKind.REQUEST, "mine.example", clock))
    model.on_event(ev(EventKind.RESPONSE, "mine.example", clock, status=200))
    snap = model.snapshot()
    assert [h.host for h in snap.hosts] == ["mine.example"]
    assert sorted(h.host for h in snap.others) == ["other-held.example", "other-shut.example"]
    line = "2 other hosts held or suppressed in the shared state — r.domain_status()"
    assert snap.others_line() == line and line in render_text(snap)
    html = Dashboard(model, autostart=False).html()
    assert "2 other hosts held or suppressed in the shared state — <code>r.domain_status()</code>" in html
    assert "other-held.example" not in html and "HELD" not in html.split("paperfetch-counts")[1].split("</span>")[0]


def test_the_shared_state_line_counts_what_it_names_and_forgets_lapsed_breakers():
    from paperfetch.state.base import BreakerState

    clock = FakeClock()
    client = _shared_client(clock)
    for n in range(19):  # breakers whose open period ended two minutes ago: a probe is allowed
        client.host_limiter(f"http://lapsed-{n:02d}.example/").update(
            lambda f: replace(f, breaker_state=BreakerState.OPEN, breaker_failures=3, breaker_open_until=clock.time() - 120))
    client.host_limiter("http://open.example/").update(
        lambda f: replace(f, breaker_state=BreakerState.OPEN, breaker_failures=3, breaker_open_until=clock.time() + 30))
    model = DashboardModel(clock=clock).watch(client, events=False)
    model.start(1)
    model.on_event(ev(EventKind.REQUEST, "mine.example", clock))
    snap = model.snapshot()
    assert sorted(h.host for h in snap.others) == ["open.example", "other-held.example", "other-shut.example"]
    assert snap.others_line() == ("2 other hosts held or suppressed and 1 with an open breaker in the shared state"
                                  " — r.domain_status()")
    client.host_limiter("http://other-held.example/").overwrite(lambda f: replace(f, hold_until=None))
    client.host_limiter("http://other-shut.example/").overwrite(lambda f: replace(f, suppressed_until=None))
    assert model.snapshot().others_line() == "1 other host with an open breaker in the shared state — r.domain_status()"


def test_offline_is_one_line_and_the_hosts_read_unreachable():
    clock = FakeClock()
    model = DashboardModel(clock=clock)
    model.start(8)
    for n in range(8):
        host = f"api{n}.example"
        model.on_event(ev(EventKind.REQUEST, host, clock))
        model.on_event(ev(EventKind.NETWORK_ERROR, host, clock, detail=(
            "ConnectionError: HTTPSConnectionPool: Max retries exceeded (Caused by NameResolutionError("
            "\"Failed to resolve 'x' ([Errno -3] Temporary failure in name resolution)\"))")))
    snap = model.snapshot()
    assert snap.offline_line() == "could not reach any service (DNS failed for 8 hosts): offline, or behind a proxy?"
    assert all(h.state == "UNREACHABLE" for h in snap.hosts)
    assert snap.offline_line() in render_text(snap)
    dash = Dashboard(model, autostart=False)
    assert "could not reach any service (DNS failed for 8 hosts)" in dash.hosts.value
    assert "8 UNREACHABLE" in dash.counts.value
    model.on_event(ev(EventKind.RESPONSE, "api0.example", clock, status=200))  # one answered: not offline
    assert model.snapshot().offline_line() == "" and model.snapshot().host("api0.example").state != "UNREACHABLE"
    refused = DashboardModel(clock=clock)
    refused.start(1)
    refused.on_event(ev(EventKind.NETWORK_ERROR, "r.example", clock, detail="ConnectionError: [Errno 111] Connection refused"))
    assert "1 host refused the connection" in refused.snapshot().offline_line()


def test_an_interrupted_run_says_interrupted_and_its_queued_hosts_read_not_started():
    class Queues:
        def queued(self):
            return {"slow.example": 3}

    clock = FakeClock()
    model = DashboardModel(clock=clock)
    model.start(4)
    model.track(Queues())
    assert model.snapshot().host("slow.example").state == "queued"
    with pytest.raises(KeyboardInterrupt):
        try:
            raise KeyboardInterrupt
        finally:
            model.finish()
    snap = model.snapshot()
    assert snap.ending == "interrupted" and snap.summary().startswith("paperfetch interrupted ")
    assert snap.host("slow.example").state == "not started"
    html = Dashboard(model, autostart=False).html()
    assert "<b>interrupted " in html and "not started" in html
    stopped = DashboardModel(clock=clock)
    stopped.start(1)
    stopped.finish(ending="stopped")
    assert stopped.snapshot().summary().startswith("paperfetch stopped ")


def test_a_404_robots_txt_and_a_not_found_answer_are_not_errors():
    model = DashboardModel()
    model.on_event(ev(EventKind.REQUEST, "h.example", url="http://h.example/robots.txt"))
    model.on_event(ev(EventKind.RESPONSE, "h.example", url="http://h.example/robots.txt", status=404))
    model.on_event(ev(EventKind.REQUEST, "h.example", url="http://h.example/v2/10.1/x"))
    model.on_event(ev(EventKind.RESPONSE, "h.example", url="http://h.example/v2/10.1/x", status=404))
    h = model.snapshot().host("h.example")
    assert (h.errors, h.not_found, h.done) == (0, 2, 2)


def test_the_store_is_named_without_the_users_home(tmp_path, monkeypatch):
    from paperfetch.dashboard.tables import store_label
    from paperfetch.state.sqlite import SqliteStore

    home = tmp_path / "home" / "zqxuserjw"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    store = SqliteStore()
    assert "zqxuserjw" in store.name  # the store itself knows its path
    assert store_label(store.name) == "sqlite (user cache)"
    assert store_label(f"sqlite:{home}/projects/state.sqlite3") == "sqlite:~/projects/state.sqlite3"
    assert store_label("memory") == "memory"
    clock = FakeClock()
    client = HttpClient(registry=HostRegistry(clock, store), clock=clock)
    client.host_limiter("http://h.example/").suppress("HTTP 403 for http://h.example/x", clock.monotonic(), None)
    model = DashboardModel(clock=clock).watch(client)
    model.start(1)
    model.on_event(ev(EventKind.REQUEST, "h.example", clock))
    model.finish()
    dash = Dashboard(model, autostart=False)
    bundle = dash._repr_mimebundle_()
    saved = "".join(str(v) for v in bundle.values()) + dash.html() + dash.text()
    assert "sqlite (user cache)" in saved and "zqxuserjw" not in saved and str(home) not in saved
    store.close()


def test_a_saved_20_host_dashboard_is_under_15_kb():
    clock = FakeClock()
    model = DashboardModel(clock=clock)
    model.start(60)
    for n in range(20):
        host = f"publisher-{n:02d}.example.org"
        for _ in range(5):
            model.on_event(ev(EventKind.REQUEST, host, clock, url=f"https://{host}/pdf/x.pdf"))
            model.on_event(ev(EventKind.RESPONSE, host, clock, url=f"https://{host}/pdf/x.pdf", status=200))
        if n % 4 == 0:
            model.on_event(ev(EventKind.HOLD, host, clock, status=503, seconds=900.0,
                              detail=f"HTTP 503 with Retry-After: 900s for https://{host}/pdf/x.pdf"))
        if n % 5 == 1:
            model.on_event(ev(EventKind.SUPPRESS, host, clock, status=403, detail=f"HTTP 403 for https://{host}/pdf/y.pdf"))
    for n in range(60):
        model.item_finished("downloaded" if n % 3 else "invalid_pdf", url=f"https://publisher-{n % 20:02d}.example.org/x",
                            error="not a PDF: text/html body from https://publisher.example.org/pdf/x.pdf", key=f"doi:10.1/{n}")
    model.finish()
    html = Dashboard(model, autostart=False).html()
    assert len(model.snapshot().hosts) == 20 and len(model.snapshot().events) >= 25
    assert len(html.encode()) < 15_000, len(html.encode())
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    problems = sum(1 for h in model.snapshot().hosts if h.held or h.suppressed)
    assert html.count("<style>") == 1 and body.count("style=") == problems  # classes; inline: only the row colours


# ---------------------------------------------------------------------- tables for people
def test_domain_status_puts_the_state_first_in_words():
    from paperfetch.state.base import BreakerState
    from paperfetch.http.status import DOMAIN_STATUS_COLUMNS
    from paperfetch.report import mark_unreachable

    clock = FakeClock()
    client = _shared_client(clock)
    client.host_limiter("http://open.example/").update(
        lambda f: replace(f, breaker_state=BreakerState.OPEN, breaker_open_until=clock.time() + 30))
    client.host_limiter("http://gone.example/")
    frame = client.domain_status()
    assert list(frame.columns) == DOMAIN_STATUS_COLUMNS and list(frame.columns[:3]) == ["state", "host", "held_until"]
    states = dict(zip(frame["host"], frame["state"]))
    assert states == {"gone.example": "ok", "open.example": "OPEN BREAKER", "other-held.example": "HELD",
                      "other-plain.example": "ok", "other-shut.example": "SUPPRESSED"}
    marked = mark_unreachable(frame, ["gone.example", "other-held.example"])
    assert dict(zip(marked["host"], marked["state"]))["gone.example"] == "UNREACHABLE"
    assert dict(zip(marked["host"], marked["state"]))["other-held.example"] == "HELD"  # a hold says more


def test_style_domain_status_fits_a_notebook_and_says_the_state_in_words():
    import re

    clock = FakeClock()
    client = _shared_client(clock)
    client.host_limiter("http://norules.example/").update(lambda f: f)
    frame = client.domain_status()
    frame.loc[frame["host"] == "norules.example", "robots"] = "unavailable"  # a 404 robots.txt
    styler = style_domain_status(frame)
    html = styler.to_html()
    cells = re.findall(r"<td[^>]*>(.*?)</td>", html)
    assert {"HELD", "SUPPRESSED", "ok"} <= set(cells) and "no rules" in cells and "unavailable" not in cells
    assert "in_flight" not in styler.data.columns and "next_allowed_at" not in styler.data.columns
    assert "learned_interval_s" not in styler.data.columns  # all zero: left out
    assert len(styler.data.columns) <= 14


def test_requests_are_timed_to_the_millisecond():
    from paperfetch.report import requests_frame

    frame = requests_frame([{"time": 1700000000.123456789, "host": "a.example", "status": 200}])
    assert str(frame["time"].dtype) == "datetime64[ms, UTC]"
    assert str(frame["time"][0]) == "2023-11-14 22:13:20.123000+00:00" and "22:13:20.123" in frame.to_string()


def test_a_second_run_on_a_shared_store_shows_its_own_hosts_and_one_line_for_the_others(world, tmp_path):
    store = f"sqlite:///{tmp_path / 'state.sqlite3'}"
    with retriever(tmp_path / "first", world.endpoints, state=store, progress=False, cache=False) as first:
        first.download(["10.5555/demo.forbidden", "10.5555/demo.held"])
        held_or_suppressed = {h.host for h in first.run_snapshot().hosts if h.held or h.suppressed}
    assert len(held_or_suppressed) == 2
    with retriever(tmp_path / "second", world.endpoints, state=store, progress=False, cache=False) as second:
        second.download(["10.5555/demo.fast"])
        snap = second.run_snapshot()
        status = second.domain_status()
        text = second.dashboard().text()
    mine = {h.host for h in snap.hosts}
    assert mine and not mine & held_or_suppressed and all(h.touched for h in snap.hosts)
    assert {h.host for h in snap.others} == held_or_suppressed
    assert "2 other hosts held or suppressed in the shared state — r.domain_status()" in text
    assert "HELD" not in text.splitlines()[0] and "SUPPRESSED" not in text.splitlines()[0]
    assert held_or_suppressed <= set(status["host"])  # the state now lists them all


# ---------------------------------------------------------------------- how the run ended, at a glance
def _ended_run(statuses: dict[str, int], *, ending: str | None = None, unreachable: int = 0) -> DashboardModel:
    clock = FakeClock()
    model = DashboardModel(clock=clock)
    model.start(sum(statuses.values()))
    for i in range(unreachable):
        host = f"h{i}.example"
        model.on_event(ev(EventKind.REQUEST, host, clock))
        model.on_event(ev(EventKind.NETWORK_ERROR, host, clock, detail="NameResolutionError: getaddrinfo failed"))
    for status, n in statuses.items():
        for _ in range(n):
            model.item_finished(status)
    clock.advance(3.0)
    model.finish(ending=ending)
    return model


@pytest.mark.parametrize("statuses, ending, unreachable, headline, word, share, style, colour", [
    # Ctrl-C in download(): 15 finished, 10 stopped
    ({"downloaded": 15, "stopped": 10}, "interrupted", 0, "15 / 25", "interrupted", 60.0, "warning", "#ff9800"),
    # a background job's Stop: the rows it never reached are stopped
    ({"downloaded": 12, "stopped": 13}, None, 0, "12 / 25", "stopped", 48.0, "warning", "#ff9800"),
    # offline: every row a network error, no host reached
    ({"network_error": 3}, None, 9, "3 / 3", "ended", 100.0, "danger", "#f44336"),
    # every row has its PDF
    ({"downloaded": 4, "already_downloaded": 1}, None, 0, "5 / 5", "ended", 100.0, "success", "#4caf50"),
])
def test_the_final_bar_says_how_the_run_ended(statuses, ending, unreachable, headline, word, share, style, colour):
    from paperfetch.dashboard.render import render_counts_html, render_html

    model = _ended_run(statuses, ending=ending, unreachable=unreachable)
    snap = model.snapshot()
    assert snap.ending == word and snap.bar_style == style
    counts = render_counts_html(snap)
    assert counts.startswith(f'<span class="paperfetch-counts"><b>{headline}</b> · ')
    assert f" · {'' if word == 'ended' else '<b>'}{word} " in counts
    assert snap.summary().startswith(f"paperfetch {word} ") and f": {headline.replace(' / ', '/')} done" in snap.summary()
    page = render_html(snap)
    assert f'class="paperfetch-fill" style="width:{share:.1f}%;background:{colour}"' in page
    dash = Dashboard(model, autostart=False)
    total = sum(statuses.values())
    assert (dash.progress_bar.value, dash.progress_bar.max) == (round(total * share / 100), total)
    assert dash.progress_bar.bar_style == style
    if unreachable:
        assert snap.offline_line() and f"{unreachable} UNREACHABLE" in counts


def test_a_run_with_some_rows_that_did_not_finish_well_is_not_green():
    snap = _ended_run({"downloaded": 3, "no_open_copy": 1, "invalid_pdf": 1}).snapshot()
    assert (snap.finished, snap.bar_style) == (5, "warning")
    assert _ended_run({"no_open_copy": 2}).snapshot().bar_style == "danger"  # nothing to read
    running = DashboardModel()
    running.start(2)
    running.item_finished("downloaded")
    assert running.snapshot().bar_style == ""


# ---------------------------------------------------------------------- the saved dashboard keeps its layout
def test_the_saved_dashboard_pins_its_table_layout_against_the_notebooks_table_css():
    from paperfetch.dashboard.render import render_html

    page = render_html(_ended_run({"downloaded": 1}).snapshot())
    css = page.split("<style>")[1].split("</style>")[0]
    # JupyterLab's rendered HTML: ``:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td{text-align:right}`` (two
    # classes and a type) and ``.jp-RenderedHTMLCommon td{white-space:normal;padding:.5em;…}``: the dashboard's
    # cell rules name two classes and two types, so they win wherever the style blocks come
    cells = ".paperfetch-hosts-box table.paperfetch-hosts :is(th,td){"
    assert cells in css
    rule = css.split(cells)[1].split("}")[0]
    for declaration in ("text-align:left", "white-space:nowrap", "padding:1px 4px", "vertical-align:top",
                        "line-height:1.4"):
        assert declaration in rule, declaration
    numeric = css.split(".paperfetch-hosts-box table.paperfetch-hosts :is(th,td):is(:nth-child(3),")[1].split("}")[0]
    assert "text-align:right" in numeric
    state = css.split(".paperfetch-hosts-box table.paperfetch-hosts td.s{")[1].split("}")[0]
    assert "word-break:normal" in state and "overflow-wrap:normal" in state and "anywhere" not in state
    assert "tr.paperfetch-unreachable{background-color:#e2e3e5}" in css  # over the notebook's striped rows
    # a narrow table (a saved notebook at 540 px) leaves out the last status and the delay: room for the state
    from paperfetch.dashboard.render import HOST_COLUMNS

    spare = [i for i, c in enumerate(HOST_COLUMNS, 1) if c.header in ("last", "delay", "credits")]
    picked = ",".join(f":nth-child({i})" for i in spare)
    assert f"@container (max-width:600px){{.paperfetch-hosts :is(th,td):is({picked})" in css


# ---------------------------------------------------------------------- the credits column
def test_the_credits_column_shows_only_when_a_host_counts_credits():
    from paperfetch.dashboard.render import HOST_COLUMNS, render_hosts_html
    from paperfetch.dashboard.snapshot import HostRow
    from paperfetch.http.hosts import HostSnapshot as Politeness

    plain = BatchSnapshot(at=1e9, hosts=(HostRow("a.example", requests=2, ok=2),))
    counted = BatchSnapshot(at=1e9, hosts=(
        HostRow("a.example", requests=2, ok=2),
        HostRow("api.openalex.org", requests=1, ok=1, politeness=Politeness("api.openalex.org", credits_left=9876)),
    ))
    assert ">credits</th>" not in render_hosts_html(plain) and "credits" not in render_text(plain)
    table = render_hosts_html(counted)
    assert ">credits</th>" in table and "<td>9,876</td>" in table
    assert "credits" in render_text(counted) and "9,876" in render_text(counted)
    # left out of a table narrower than 600 px, and the last column (the CSS picks columns by position)
    credits = next(c for c in HOST_COLUMNS if c.header == "credits")
    assert credits.spare and credits.sparse and [c for c in HOST_COLUMNS if c.sparse] == [HOST_COLUMNS[-1]]
