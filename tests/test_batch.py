"""HostScheduler and HttpClient.get_many against real HTTP servers on loopback addresses.

Real time, kept short. Gaps are measured from the servers' own arrival logs and must
not be shorter than the floor by more than 2 ms (``TOLERANCE``: the two clocks are the
same monotonic clock, read at slightly different points of a request's life).
"""

from __future__ import annotations

import _thread
import threading
import time

import pytest

from paperfetch import FakeClock, HttpClient, InvalidURL, is_synthetic
from paperfetch.http.batch import get_many
from paperfetch.http.hosts import HostRegistry, host_key
from paperfetch.http.scheduler import NO_REQUEST, HostScheduler, default_workers
from paperfetch.testing import Reply, gaps, scripted_session

TOLERANCE = 0.002
PDF = b"%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF\n"


def client(**kwargs) -> HttpClient:
    kwargs.setdefault("registry", HostRegistry())
    kwargs.setdefault("timeout", (2.0, 5.0))
    return HttpClient(**kwargs)


def robots(delay: float, extra: str = "") -> Reply:
    return Reply(200, f"User-agent: *\nCrawl-delay: {delay}\n{extra}")


def assert_paced(arrivals, floor):
    """Every gap between consecutive arrivals at least *floor*, within TOLERANCE."""
    measured = gaps(arrivals)
    assert measured, "fewer than two requests"
    assert min(measured) >= floor - TOLERANCE, measured


def summary(response):
    if response is None or isinstance(response, BaseException):
        return response if response is None else type(response)
    return (response.status_code, response.content, is_synthetic(response))


class Hop:
    """A job of several requests: its URL list may span hosts."""

    def __init__(self, client: HttpClient, urls: list[str]) -> None:
        self.client = client
        self.todo = list(urls)
        self.statuses: list[int] = []
        self.error: BaseException | None = None

    @property
    def url(self) -> str | None:
        return self.todo[0] if self.todo else None

    def advance(self) -> None:
        self.url_done = self.todo.pop(0)
        response = self.client.get(self.url_done)
        self.statuses.append(response.status_code)


# ---------------------------------------------------------------- get_many
def test_get_many_returns_what_get_returns_in_input_order(hosts):
    a = hosts("127.0.0.2", {"/robots.txt": Reply(200, "User-agent: *\nCrawl-delay: 0.05\nDisallow: /private\n"),
                            "/pdf": Reply(200, PDF), "/gone": Reply(404, b"no"), "/boom": Reply(500, b"err")})
    b = hosts("127.0.0.3", {"/robots.txt": Reply(404), "/go": Reply(302, headers={"Location": a.url("/pdf")}),
                            "*": Reply(200, b"b")})
    urls = [a.url("/pdf"), b.url("/x"), a.url("/private/1"), a.url("/gone"), b.url("/go"), "ftp://127.0.0.2/x",
            a.url("/boom"), b.url("/y"), a.url("/private/2"), a.url("/pdf")]
    config = dict(respect_robots_txt=True, rate_limit_min_s=0.05, rate_limit_max_s=0.05)

    many = client(**config).get_many(urls)
    single = client(**config)
    expected = []
    for url in urls:
        try:
            expected.append(single.get(url))
        except Exception as exc:  # noqa: BLE001
            expected.append(exc)

    assert [summary(r) for r in many] == [summary(r) for r in expected]
    assert many[2] is None and many[8] is None and isinstance(many[5], InvalidURL)
    assert many[4].status_code == 200 and many[4].content == PDF and len(many[4].history) == 1
    assert a.hits("/private/1") == a.hits("/private/2") == 0


def test_get_many_return_exceptions_false_raises_the_first_error(hosts):
    a = hosts("127.0.0.2", {"*": Reply(200, b"ok")})
    c = client()
    with pytest.raises(InvalidURL):
        c.get_many([a.url("/1"), "mailto:someone@uni.example", a.url("/2")], return_exceptions=False)
    assert c.get_many([]) == []


# ---------------------------------------------------------------- pacing and makespan
def test_hosts_are_served_side_by_side_each_at_its_own_pace(hosts):
    delay, per_host = 0.2, 8
    servers = [hosts(f"127.0.0.{i}", {"/robots.txt": robots(delay), "*": Reply(200, PDF)}) for i in (2, 3, 4)]
    urls = [s.url(f"/paper/{n}") for n in range(per_host) for s in servers]
    c = client(respect_robots_txt=True)
    jobs = [Hop(c, [u]) for u in urls]
    scheduler = HostScheduler(c)
    scheduler.run(jobs)
    scheduler_stats = scheduler.stats

    assert all(job.statuses == [200] for job in jobs)
    for server in servers:
        arrivals = server.arrivals()
        assert len(arrivals) == per_host + 1  # robots.txt + the papers
        assert_paced(arrivals, delay)
    # side by side: every host is served while every other one is (their arrival windows overlap), so the
    # batch needs the busiest host's time, not the sum (on the fake clock: test_fake_clock_batch_takes_…)
    windows = [(s.arrivals()[0], s.arrivals()[-1]) for s in servers]
    assert max(first for first, _ in windows) < min(last for _, last in windows)
    assert scheduler_stats["requests_started"] == len(urls)
    assert sorted(scheduler_stats["per_host"].values()) == [per_host] * 3
    assert scheduler_stats["workers"] == default_workers(3) == 12
    # waiting is done on a condition with a timeout, not by spinning
    assert scheduler_stats["wakeups"] < 400
    assert scheduler_stats["scheduling_cpu_s"] < 0.5


def test_concurrency_per_host_never_exceeds_max_in_flight(hosts):
    lock = threading.Lock()
    current: dict[str, int] = {}
    peak: dict[str, int] = {}

    def slow(name):
        def handler(request):
            with lock:
                current[name] = current.get(name, 0) + 1
                peak[name] = max(peak.get(name, 0), current[name])
            time.sleep(0.03)
            with lock:
                current[name] -= 1
            return Reply(200, b"ok")
        return handler

    servers = [hosts(f"127.0.0.{i}", {"*": slow(str(i))}) for i in (2, 3)]
    c = client(max_in_flight_per_host=2)
    urls = [s.url(f"/{n}") for s in servers for n in range(12)]
    results = c.get_many(urls, workers=8)
    assert [r.status_code for r in results] == [200] * len(urls)
    assert peak == {"2": 2, "3": 2}


# ---------------------------------------------------------------- holds, suppression, robots
def test_a_long_hold_neither_slows_the_others_nor_costs_more_than_two_requests(hosts):
    held = hosts("127.0.0.2", {"*": Reply(503, b"busy", {"Retry-After": "30"})})
    paced = hosts("127.0.0.3", {"*": Reply(200, PDF)})
    interval = 0.1
    c = client(max_retry_after_s=1, host_intervals={host_key(paced.base_url): interval})
    urls = [held.url(f"/h{n}") for n in range(10)] + [paced.url(f"/p{n}") for n in range(6)]

    results = c.get_many(urls)

    assert held.hits() <= 2
    assert [r.status_code for r in results[:10]] == [503] * 10
    assert [is_synthetic(r) for r in results[1:10]] == ["held"] * 9
    assert [r.status_code for r in results[10:]] == [200] * 6
    assert_paced(paced.arrivals(), interval)  # the batch's time, on the fake clock: test_fake_clock_holds_…


def test_a_short_hold_defers_only_its_own_host(hosts):
    replies = iter([Reply(429, b"slow down", {"Retry-After": "0.5"})])

    def first_429(request):
        return next(replies, Reply(200, b"ok"))

    limited = hosts("127.0.0.2", {"*": first_429})
    paced = hosts("127.0.0.3", {"*": Reply(200, b"ok")})
    interval = 0.1
    c = client(host_intervals={host_key(paced.base_url): interval, host_key(limited.base_url): 0.05})
    jobs = [Hop(c, [limited.url(f"/l{n}")]) for n in range(4)] + [Hop(c, [paced.url(f"/p{n}")]) for n in range(4)]
    HostScheduler(c).run(jobs)
    assert all(job.statuses[-1:] == [200] for job in jobs)
    arrivals = limited.arrivals()
    assert len(arrivals) == 5 and gaps(arrivals)[0] >= 0.5 - TOLERANCE  # the 429, then its retry after 0.5 s
    assert_paced(paced.arrivals(), interval)
    assert paced.arrivals()[1] < arrivals[1]  # the paced host went on during the other one's hold


def test_a_suppressed_host_drains_at_once(hosts):
    forbidden = hosts("127.0.0.2", {"*": Reply(403, b"no")})
    paced = hosts("127.0.0.3", {"*": Reply(200, b"ok")})
    c = client(host_intervals={host_key(paced.base_url): 0.1, host_key(forbidden.base_url): 0.1})
    jobs = [Hop(c, [forbidden.url(f"/f{n}")]) for n in range(200)] + [Hop(c, [paced.url(f"/p{n}")]) for n in range(4)]

    HostScheduler(c).run(jobs)

    assert forbidden.hits() == 1  # 199 synthetic 403s (no pacing gap between them, on the fake clock:
    assert all(job.statuses == [403] for job in jobs[:200])  # test_fake_clock_holds_and_refusals_…)
    assert all(job.statuses == [200] for job in jobs[200:])


def test_robots_disallowed_urls_wait_for_no_pacing_gap(hosts):
    delay = 0.2
    server = hosts("127.0.0.2", {"/robots.txt": robots(delay, "Disallow: /private\n"), "*": Reply(200, b"ok")})
    c = client(respect_robots_txt=True)
    urls = [server.url("/a"), *[server.url(f"/private/{n}") for n in range(5)], server.url("/b")]
    scheduler = HostScheduler(c)
    jobs = [Hop(c, [u]) for u in urls]
    scheduler.run(jobs)
    assert server.hits() == 3 and server.hits("/private/0") == 0
    # robots.txt, /a, /b: two gaps, not seven (on the fake clock: test_fake_clock_robots_disallowed_urls_take_no_slot)
    assert scheduler.stats["per_host"][NO_REQUEST] >= 4


# ---------------------------------------------------------------- jobs
def test_jobs_that_move_host_are_requeued_and_finish(hosts):
    a = hosts("127.0.0.2", {"*": Reply(200, b"a")})
    b = hosts("127.0.0.3", {"*": Reply(200, b"b")})
    interval = 0.05
    c = client(host_intervals={host_key(a.base_url): interval, host_key(b.base_url): interval})
    jobs = [Hop(c, [a.url(f"/{n}"), b.url(f"/{n}"), a.url(f"/{n}/again")]) for n in range(5)]
    done = []
    scheduler = HostScheduler(c, on_finished=done.append)
    scheduler.run(jobs)
    assert all(job.statuses == [200, 200, 200] and job.url is None for job in jobs)
    assert sorted(map(id, done)) == sorted(map(id, jobs))
    assert a.hits() == 10 and b.hits() == 5
    assert_paced(a.arrivals(), interval)
    assert scheduler.stats["per_host"] == {host_key(a.base_url): 10, host_key(b.base_url): 5}


class Exploding:
    __slots__ = ("url",)  # no room for ``error``: the failure is logged instead

    def __init__(self, url):
        self.url = url

    def advance(self):
        raise RuntimeError("job bug")


def test_an_exception_in_advance_does_not_stop_the_batch(hosts, caplog):
    server = hosts("127.0.0.2", {"*": Reply(200, b"ok")})
    c = client()

    class Failing(Hop):
        def advance(self):
            super().advance()
            raise ValueError("parse failed")

    good = [Hop(c, [server.url(f"/g{n}")]) for n in range(5)]
    bad = [Failing(c, [server.url(f"/b{n}"), server.url("/never")]) for n in range(3)]
    slotted = Exploding(server.url("/x"))
    done = []
    scheduler = HostScheduler(c, workers=2, on_finished=done.append)
    with caplog.at_level("WARNING", logger="paperfetch.http.batch"):
        scheduler.run([*bad, slotted, *good])
    assert all(job.statuses == [200] and job.error is None for job in good)
    assert all(isinstance(job.error, ValueError) for job in bad)
    assert server.hits("/never") == 0
    assert len(done) == 9 and scheduler.stats["errors"] == 4
    assert "job bug" in caplog.text


def _batch_threads():
    return [t for t in threading.enumerate() if t.name.startswith("paperfetch-")]


def test_stop_from_another_thread_ends_the_run_and_nothing_is_sent_after(hosts):
    answered = threading.Event()

    def slow_answer(request):
        answered.wait(5)
        return Reply(200, b"late")

    slow = hosts("127.0.0.2", {"*": slow_answer})
    interval = 0.1
    paced = hosts("127.0.0.3", {"*": Reply(200, b"ok")})
    c = client(host_intervals={host_key(paced.base_url): interval})
    jobs = [Hop(c, [slow.url(f"/{n}")]) for n in range(5)] + [Hop(c, [paced.url(f"/{n}")]) for n in range(50)]
    scheduler = HostScheduler(c)

    def stop_then_answer():
        scheduler.stop()
        answered.set()  # the request on the wire is answered after the stop

    timer = threading.Timer(0.35, stop_then_answer)
    try:
        timer.start()
        scheduler.run(jobs)
    finally:
        answered.set()
        timer.cancel()
    # run() returned only when every worker had ended, paced ones woken from their sleeps at once
    assert _batch_threads() == []
    hits = (paced.hits(), slow.hits())
    time.sleep(2 * interval)
    assert (paced.hits(), slow.hits()) == hits  # nothing is sent once run() has returned
    assert slow.hits() == 1 and paced.hits() < 10
    stats = scheduler.stats
    assert stats["unfinished"] == 55 - stats["finished"] and stats["finished"] == paced.hits() + 1


def test_keyboard_interrupt_while_dispatching_stops_and_reraises(hosts):
    server = hosts("127.0.0.2", {"*": Reply(200, b"ok")})
    interval = 0.2
    c = client(host_intervals={host_key(server.base_url): interval})
    jobs = [Hop(c, [server.url(f"/{n}")]) for n in range(20)]
    scheduler = HostScheduler(c)
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        scheduler.run(jobs)
    assert _batch_threads() == []
    hits = server.hits()
    time.sleep(2 * interval)
    assert server.hits() == hits  # nothing is sent once run() has raised
    assert 1 <= hits < 20 and scheduler.stats["unfinished"] == 20 - hits


def test_keyboard_interrupt_while_reading_the_jobs(hosts):
    server = hosts("127.0.0.2", {"*": Reply(200, b"ok")})
    c = client()

    def jobs():
        yield Hop(c, [server.url("/1")])
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        HostScheduler(c).run(jobs())
    assert server.hits() == 0


def test_a_stopped_run_waits_for_the_request_on_the_wire_then_the_next_run_is_clean(hosts):
    answered = threading.Event()

    def slow_answer(request):
        answered.wait(5)
        return Reply(200, b"late")

    slow = hosts("127.0.0.2", {"*": slow_answer})
    other = hosts("127.0.0.3", {"*": Reply(200, b"ok")})
    c = client(host_intervals={host_key(other.base_url): 0.1})
    scheduler = HostScheduler(c)
    late = Hop(c, [slow.url("/x"), other.url("/never")])

    def stop_then_answer():
        scheduler.stop()
        answered.set()

    threading.Timer(0.2, stop_then_answer).start()
    try:
        scheduler.run([late])
    finally:
        answered.set()
    # the answer on the wire was read; the job's next request was not sent
    assert late.statuses == [200] and scheduler.stats["unfinished"] == 1 and _batch_threads() == []
    jobs = [Hop(c, [other.url(f"/{n}")]) for n in range(5)]
    scheduler.run(jobs)
    assert all(job.statuses == [200] for job in jobs)
    stats = scheduler.stats
    assert stats["finished"] == 5 and stats["requests_started"] == 5 and stats["unfinished"] == 0
    assert other.hits("/never") == 0


def test_an_exception_in_on_finished_stops_the_batch_and_is_raised(hosts):
    server = hosts("127.0.0.2", {"*": Reply(200, b"ok")})
    c = client(host_intervals={host_key(server.base_url): 0.05})

    def broken(job):
        raise OSError("disk full")

    jobs = [Hop(c, [server.url(f"/{n}")]) for n in range(20)]
    with pytest.raises(OSError, match="disk full"):
        HostScheduler(c, on_finished=broken).run(jobs)
    assert server.hits() == 1 and _batch_threads() == []


def test_iter_many_yields_as_each_finishes_and_leaving_early_stops_the_batch(hosts):
    server = hosts("127.0.0.2", {"*": Reply(200, b"ok")})
    interval = 0.05
    c = client(host_intervals={host_key(server.base_url): interval})
    urls = [server.url(f"/{n}") for n in range(30)]
    seen = []
    for index, response in c.iter_many(urls):
        seen.append((index, response.status_code))
        if len(seen) == 3:
            break
    assert seen == [(0, 200), (1, 200), (2, 200)]
    assert _batch_threads() == []
    hits = server.hits()
    time.sleep(2 * interval)
    assert server.hits() == hits <= 4


def test_leaving_the_clients_with_block_stops_its_batch(hosts):
    server = hosts("127.0.0.2", {"*": Reply(200, b"ok")})
    interval = 0.1
    with client(host_intervals={host_key(server.base_url): interval}) as c:
        pairs = c.iter_many([server.url(f"/{n}") for n in range(30)])
        assert next(pairs)[1].status_code == 200
    # the client is closed: the batch's dispatcher notices within MAX_WAIT_S and stops
    remaining = list(pairs)
    assert len(remaining) < 29 and _batch_threads() == []
    hits = server.hits()
    time.sleep(2 * interval)
    assert server.hits() == hits


def test_finished_jobs_and_an_empty_batch():
    c = client()
    done = []
    job = Hop(c, [])
    scheduler = HostScheduler(c, on_finished=done.append)
    scheduler.run(iter([job]))
    assert done == [job] and scheduler.stats["workers"] == 0
    scheduler.run([])


def test_fake_clock_batch_takes_the_busiest_hosts_time_not_the_sum():
    clock = FakeClock()
    session, adapter = scripted_session({"https://a.example/x": Reply(200), "https://b.example/x": Reply(200)}, clock)
    c = HttpClient(session=session, clock=clock, host_intervals={"a.example": 1.0, "b.example": 1.0}, pacing_margin_s=0.0)
    start = clock.monotonic()
    results = get_many(c, ["https://a.example/x", "https://b.example/x"] * 5)
    assert [r.status_code for r in results] == [200] * 10
    for host in ("https://a.example", "https://b.example"):
        starts = [t for t, u in adapter.calls if u.startswith(host)]
        assert min(gaps(starts)) >= 1.0
    assert clock.monotonic() - start < 6.0  # 4 s for each host, side by side; 8 s in a row


def test_fake_clock_holds_and_refusals_cost_the_other_hosts_nothing():
    """On the fake clock: a host held for 30 s and one that refused with 403 leave the paced host's batch its own
    time, and their other papers finish at once (synthetic answers, no pacing gap)."""
    clock = FakeClock()
    session, adapter = scripted_session({
        "https://held.example/x": Reply(503, b"busy", {"Retry-After": "30"}),
        "https://shut.example/x": Reply(403, b"no"),
        "https://paced.example/x": Reply(200),
    }, clock)
    c = HttpClient(session=session, clock=clock, max_retry_after_s=1, pacing_margin_s=0.0,
                   host_intervals={"paced.example": 0.1, "shut.example": 0.1, "held.example": 0.1})
    finished: dict[str, list[float]] = {"held": [], "shut": [], "paced": []}
    jobs = [Hop(c, [f"https://{host}.example/x?n={n}"]) for n in range(6) for host in finished]
    start = clock.monotonic()
    HostScheduler(c, on_finished=lambda job: finished[job.url_done.split("/")[2].split(".")[0]].append(
        clock.monotonic() - start)).run(jobs)
    assert max(finished["paced"]) == pytest.approx(5 * 0.1, abs=0.01)  # its own five gaps, not the hold's 30 s
    assert finished["held"] == finished["shut"] == [0.0] * 6  # drained at once
    assert [sum(1 for _, url in adapter.calls if host in url) for host in finished] == [1, 1, 6]


def test_fake_clock_robots_disallowed_urls_take_no_slot():
    clock = FakeClock()
    session, adapter = scripted_session({
        "https://r.example/robots.txt": robots(1.0, "Disallow: /private\n"),
        "https://r.example/a": Reply(200), "https://r.example/b": Reply(200)}, clock)
    c = HttpClient(session=session, clock=clock, respect_robots_txt=True, pacing_margin_s=0.0)
    urls = ["https://r.example/a", *[f"https://r.example/private/{n}" for n in range(5)], "https://r.example/b"]
    start = clock.monotonic()
    HostScheduler(c).run([Hop(c, [u]) for u in urls])
    assert [url for _, url in adapter.calls] == ["https://r.example/robots.txt", urls[0], urls[-1]]
    assert clock.monotonic() - start == pytest.approx(2 * 1.0, abs=0.01)  # robots.txt, /a, /b: two gaps, not seven
