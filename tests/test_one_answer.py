"""One answer per question in the polite transport, on the fake clock.

Each question the transport answers ("when may this host go next?", "how long is it held?", "how long may a
call wait?", "when does the k-th queued request of a host start?") has one function; these tests ask every
caller of each and fail when two of them disagree. Then: the item's waits are the transport's to count, the
per-item context has one writer, and a request's deadline runs on the client's clock.
"""

from __future__ import annotations

import ast
import io
import random
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from urllib3.response import HTTPResponse

from paperfetch import FakeClock, HttpClient
from paperfetch.dashboard.snapshot import BatchSnapshot, HostRow
from paperfetch.demo import fake_pdf
from paperfetch.errors import DeadlineExceeded, TooSlow
from paperfetch.http import context
from paperfetch.http.assign import Placement, outlook_from_snapshot
from paperfetch.http.hosts import HostRegistry, host_key
from paperfetch.http.scheduler import HostScheduler
from paperfetch.job import estimate_eta
from paperfetch.requestlog import RequestLog
from paperfetch.testing import Reply, scripted_session

PACED = "https://paced.example"
HELD = "https://held.example"
BACKED_OFF = "https://backed-off.example"
OPEN = "https://open.example"
ROUTES = {
    f"{PACED}/x": Reply(200, b"ok"),
    f"{HELD}/x": Reply(429, b"", {"Retry-After": "600"}),
    f"{BACKED_OFF}/x": Reply(503, b""),
    f"{OPEN}/x": Reply(500, b""),
}


def make(routes=ROUTES, **kwargs):
    clock = kwargs.pop("clock", None) or FakeClock()
    session, adapter = scripted_session(routes, clock)
    kwargs.setdefault("rng", random.Random(7))
    client = HttpClient(session=session, clock=clock, registry=HostRegistry(clock), **kwargs)
    return client, adapter, clock


def hosts_in_every_state():
    """A client whose hosts are paced (a 2 s gap), held (Retry-After 600), backed off (a 503) and open (a 500)."""
    client, _, clock = make(delay_min_s=2.0, delay_max_s=2.0, max_retries=0, breaker_failures=3)
    for base in (PACED, HELD, BACKED_OFF):
        client.get(f"{base}/x")
    opened = HttpClient(session=client.session, clock=clock, registry=client.registry, max_retries=0, breaker_failures=1,
                        backoff_base_s=30.0)  # the breaker opens for 30 s, longer than the 2 s gap
    opened.get(f"{OPEN}/x")
    return client, clock


# ---------------------------------------------------------------------- when may this host go next
@pytest.mark.parametrize("base", [PACED, HELD, BACKED_OFF, OPEN])
def test_the_snapshots_next_allowed_at_and_ready_in_are_the_policys_next_start(base):
    client, clock = hosts_in_every_state()
    snap = client.snapshot(base)
    ready = client.ready_in(f"{base}/x")
    assert ready > 1.0  # every one of them has something to wait for
    assert snap.ready_in_s == pytest.approx(ready)
    assert snap.next_allowed_at is not None
    assert snap.next_allowed_at.timestamp() == pytest.approx(clock.time() + ready, abs=1e-5)


def test_the_hold_the_scheduler_tests_is_the_one_the_snapshot_and_the_limiter_show():
    client, clock = hosts_in_every_state()
    snap = client.snapshot(HELD)
    assert snap.held_until is not None
    held = client.hold_remaining(f"{HELD}/x")
    assert held == pytest.approx(600.0)
    assert held == pytest.approx(snap.held_until.timestamp() - clock.time(), abs=1e-5)
    assert held == pytest.approx(client.host_limiter(HELD).hold_remaining(clock.monotonic()))
    assert client.hold_remaining(f"{PACED}/x") == 0.0 and client.snapshot(PACED).held_until is None


# ---------------------------------------------------------------------- how long may one call wait
@pytest.mark.parametrize(("max_retry_after_s", "max_elapsed"), [(300.0, None), (300.0, 40.0), (20.0, 40.0)])
def test_the_schedulers_defer_limit_is_what_a_call_waits_out(max_retry_after_s, max_elapsed):
    client, _, clock = make({f"{HELD}/x": Reply(200, b"ok")}, max_retry_after_s=max_retry_after_s,
                            max_elapsed=max_elapsed)
    allowance = client.call_allowance()
    assert allowance == min(max_retry_after_s, max_elapsed or float("inf"))
    assert HostScheduler(client).defer_limit_s == allowance
    limiter = client.host_limiter(HELD)
    limiter.set_hold(clock.monotonic() + allowance + 1, status=429, reason="longer than a call waits")
    assert client.get(f"{HELD}/x").headers.get("X-Paperfetch-Synthetic") == "held" and clock.slept == 0
    limiter.release()
    limiter.set_hold(clock.monotonic() + allowance - 1, status=429, reason="shorter than a call waits")
    assert client.get(f"{HELD}/x").status_code == 200 and clock.slept == pytest.approx(allowance - 1)


# ---------------------------------------------------------------------- when does the k-th queued request start
@pytest.mark.parametrize("base", [PACED, HELD, BACKED_OFF])
def test_the_eta_and_the_assignment_give_the_same_kth_start(base):
    client, clock = hosts_in_every_state()
    snap = client.snapshot(base)
    assert snap.interval_s == pytest.approx(snap.delay_min_s + client.pacing_margin_s)  # a fixed range: its middle
    placement = Placement(client, since=clock.time(), max_host_wait_s=3600.0)
    for k in range(5):
        row = HostRow(host=host_key(base), queued=k + 1, politeness=snap)
        eta = estimate_eta(BatchSnapshot(at=clock.time(), total=k + 1, hosts=(row,), running=True))
        assigned = placement.outlook(host_key(base), f"{base}/x", clock.monotonic(), fresh=True).start_at(k)
        assert eta == pytest.approx(snap.start_of(k))
        assert outlook_from_snapshot(snap).start_at(k) == pytest.approx(snap.start_of(k))
        assert assigned == pytest.approx(snap.start_of(k))
        assert snap.start_of(k) == pytest.approx(snap.ready_in_s + k * snap.interval_s)


# ---------------------------------------------------------------------- the item's waits are the transport's
def test_the_transport_counts_the_items_waits_and_requests_without_any_subscriber():
    client, _, clock = make(delay_min_s=2.0, delay_max_s=2.0, pacing_margin_s=0.0)
    tally = context.Tally()
    with context.scope(item=object(), tally=tally, source="s"):
        for _ in range(3):
            client.get(f"{PACED}/x")
    client.get(f"{PACED}/x")  # outside the item: not its wait
    assert len(client.events) == 0
    assert tally.waited_s == pytest.approx(4.0) and tally.requests == 3
    assert clock.slept == pytest.approx(6.0)


def test_the_request_log_reads_the_items_tally_and_writes_nothing_into_it():
    client, _, clock = make(delay_min_s=2.0, delay_max_s=2.0, pacing_margin_s=0.0)
    log = RequestLog({})
    client.subscribe(log.on_event)
    job = SimpleNamespace(identifier=SimpleNamespace(key="doi:10.1/x"))
    tally = context.Tally()
    with context.scope(item=job, tally=tally, source="s"):
        for _ in range(3):
            client.get(f"{PACED}/x")
    frame = log.frame()
    assert list(frame["waited_s"]) == pytest.approx([0.0, 2.0, 2.0])
    assert frame["waited_s"].sum() == pytest.approx(tally.waited_s)
    assert set(frame["identifier"]) == {"doi:10.1/x"} and set(frame["source"]) == {"s"}
    assert vars(tally) == {"waited_s": pytest.approx(4.0), "requests": 3}
    assert vars(job) == {"identifier": job.identifier}


# ---------------------------------------------------------------------- one writer of the per-item context
def test_scopes_nest_and_restore_the_context_they_found():
    stop = context.current().stop
    assert context.current() == context.CallContext()
    item, tally = object(), context.Tally()
    with context.scope(item=item, tally=tally, source="a"):
        with context.answer_now():
            now = context.current()
            assert (now.item, now.tally, now.source, now.answer_now) == (item, tally, "a", True)
            with context.scope(source="b"):
                assert context.current().source == "b" and context.answering_now()
            assert context.current() is now
        assert not context.answering_now() and context.current().item is item
    assert context.current() == context.CallContext() and context.stop_event() is stop


def test_only_the_context_module_keeps_per_thread_state_for_a_call():
    package = Path(__file__).resolve().parent.parent / "paperfetch"
    makers = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "local":
                makers.add(path.relative_to(package).as_posix())
    # http/limits.py: the deadline of the request being sent (deadline_scope), below the call
    assert makers == {"http/context.py", "http/limits.py"}


# ---------------------------------------------------------------------- a request's deadline, on the client's clock
class _Trickle(io.RawIOBase):
    """A body that gives one byte per read and moves the fake clock on by *per_byte_s* each time."""

    def __init__(self, clock: FakeClock, data: bytes, per_byte_s: float) -> None:
        super().__init__()
        self.clock, self.data, self.per_byte_s = clock, data, per_byte_s

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # noqa: ANN001
        if not self.data:
            return 0
        self.clock.advance(self.per_byte_s)
        buffer[0], self.data = self.data[0], self.data[1:]
        return 1


class _TrickleAdapter(BaseAdapter):
    """Answers ``{path: (body, seconds per byte, content type)}`` with bodies that trickle on the fake clock."""

    def __init__(self, clock: FakeClock, routes: dict[str, tuple[bytes, float, str]]) -> None:
        super().__init__()
        self.clock, self.routes = clock, routes

    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):  # noqa: ANN001
        path = requests.utils.urlparse(request.url).path
        body, per_byte_s, kind = self.routes.get(path, (b"{}", 0.0, "application/json"))
        headers = {"Content-Length": str(len(body)), "Content-Type": kind}
        raw = io.BufferedReader(_Trickle(self.clock, body, per_byte_s), buffer_size=1)
        response = requests.Response()
        response.status_code, response.url, response.request, response.encoding = 200, request.url, request, "utf-8"
        response.headers = CaseInsensitiveDict(headers)
        response.raw = HTTPResponse(body=raw, headers=headers, status=200, preload_content=False)
        return response

    def close(self) -> None:
        pass


def trickling(routes, **kwargs):
    clock = FakeClock()
    session = requests.Session()
    session.mount("https://", _TrickleAdapter(clock, routes))
    client = HttpClient(session=session, clock=clock, registry=HostRegistry(clock), max_retries=0, **kwargs)
    return client, clock


def test_a_body_trickling_one_byte_per_second_ends_at_the_deadline_on_the_clients_clock():
    client, clock = trickling({"/x": (b"a" * 100, 1.0, "application/json")}, request_deadline_s=2.0,
                              breaker_failures=1)
    started = clock.monotonic()
    with pytest.raises(DeadlineExceeded, match="deadline of 2 s"):
        client.fetch(f"{PACED}/x")
    assert 2.0 <= clock.monotonic() - started <= 3.0  # fake seconds: the wait went to the client's clock
    snap = client.snapshot(PACED)
    assert (snap.failures, snap.breaker) == (1, "open")  # a deadline is the host's failure
    assert "DeadlineExceeded" in client.host_limiter(PACED).facts.breaker_reason


def test_a_trickling_pdf_ends_at_the_deadline_and_leaves_no_file(tmp_path):
    client, clock = trickling({"/slow.pdf": (fake_pdf("slow"), 0.2, "application/pdf")}, request_deadline_s=0.6,
                              breaker_failures=1)
    with pytest.raises(DeadlineExceeded):
        client.download(f"{PACED}/slow.pdf", tmp_path / "slow.pdf")
    assert (client.snapshot(PACED).failures, client.snapshot(PACED).breaker) == (1, "open")
    assert list(tmp_path.iterdir()) == []


def test_a_body_under_the_minimum_rate_ends_with_too_slow_on_the_clients_clock(tmp_path):
    client, clock = trickling({"/slow.pdf": (fake_pdf("slow", size=5000), 0.01, "application/pdf")},
                              min_rate_bytes_s=1000, min_rate_window_s=0.5)
    started = clock.monotonic()
    with pytest.raises(TooSlow, match="minimum of 1000 bytes/s"):
        client.download(f"{PACED}/slow.pdf", tmp_path / "slow.pdf")
    assert clock.monotonic() - started == pytest.approx(0.5, abs=0.05)
    assert list(tmp_path.iterdir()) == []


def test_a_trickling_robots_txt_ends_at_its_own_deadline_on_the_clients_clock():
    client, clock = trickling({"/robots.txt": (b"User-agent: *\nDisallow:\n" * 100, 0.05, "text/plain")},
                              respect_robots_txt=True, robots_deadline_s=0.5, min_rate_bytes_s=0,
                              rate_limit_min_s=0.0, rate_limit_max_s=0.0)
    assert client.fetch(f"{PACED}/x").content == b"{}"  # unreachable -> allowed, as configured
    assert client.snapshot(PACED).robots == "unreachable"
    assert clock.monotonic() - 1000.0 < 1.0


def test_a_body_under_the_minimum_rate_is_its_hosts_failure_and_not_asked_again_at_once(tmp_path):
    clock = FakeClock()
    session = requests.Session()
    session.mount("https://", _TrickleAdapter(clock, {"/slow.pdf": (fake_pdf("slow", size=5000), 0.01,
                                                                     "application/pdf")}))
    client = HttpClient(session=session, clock=clock, registry=HostRegistry(clock), max_retries=3,
                        min_rate_bytes_s=1000, min_rate_window_s=0.5, breaker_failures=1)
    started = clock.monotonic()
    with pytest.raises(TooSlow):
        client.download(f"{PACED}/slow.pdf", tmp_path / "slow.pdf")
    assert clock.monotonic() - started == pytest.approx(0.5, abs=0.05)  # one window, not one per attempt
    snap = client.snapshot(PACED)
    assert (snap.failures, snap.breaker) == (1, "open")  # a trickle is the host's failure
    assert "TooSlow" in client.host_limiter(PACED).facts.breaker_reason
    assert list(tmp_path.iterdir()) == []
