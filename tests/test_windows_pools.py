"""Limits with more than one window, and pools per request kind.

* Europe PMC's 10 requests/s and 500 requests/min (Europe PMC staff post, 2026-02-26): every start is logged in the
  host-state store, so at most 500 start in any 60 s, across every client of the store, and the rest wait;
* Crossref's two pools (measured 2026-10-03): ``/works/{doi}`` in ``public-single`` (5/s, one in flight),
  ``/works`` with a filter or a query in ``public-array`` (1/s), each with its own pacing, holds and breaker.

The servers here are loopback servers; their bodies are synthetic (``{}``), their log is the fake clock's time
of each hit, so no test waits the minutes it measures.
"""

from __future__ import annotations

import bisect

import pytest

from paperfetch.clock import FakeClock
from paperfetch.errors import ConfigurationError
from paperfetch.state import MemoryStore, open_store
from paperfetch.state.base import Window, window_floor

NOW = 1_772_064_000.0  # 2026-02-26 00:00 UTC


def most_in_any(times: list[float], span: float) -> int:
    """The most of *times* in any half-open span ``[t, t + span)``."""
    ordered = sorted(times)
    return max((bisect.bisect_left(ordered, t + span) - i for i, t in enumerate(ordered)), default=0)


def test_a_window_is_written_as_a_rate():
    assert Window.parse("500/min") == Window(500, 60.0) and str(Window(500, 60.0)) == "500/min"
    assert Window.parse("10/s") == Window(10, 1.0) and str(Window.parse("10 / s")) == "10/s"
    assert Window.parse("100/10s") == Window(100, 10.0) and str(Window(100, 10.0)) == "100/10s"
    assert Window.parse("100000/day") == Window(100000, 86400.0) and Window.parse((5, 1)) == Window(5, 1.0)
    for bad in ("500", "x/min", "5/fortnight", "0/s", (1, 0), (1, float("nan"))):
        with pytest.raises(ConfigurationError):
            Window.parse(bad)


def test_the_floor_is_the_count_th_newest_start_plus_the_span():
    recent = [9.0, 8.0, 7.0]  # newest first
    assert window_floor(recent, [Window(3, 60.0)], now=10.0) == 67.0
    assert window_floor(recent, [Window(4, 60.0)], now=10.0) == 0.0  # not full yet
    assert window_floor(recent, [Window(2, 1.0), Window(3, 60.0)], now=10.0) == 67.0
    assert window_floor([500.0], [Window(1, 60.0)], now=10.0) == 70.0  # a start "ahead" (clock moved back): one span


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
def test_each_store_keeps_every_window_for_the_starts_it_grants(kind, tmp_path, request):
    spec = {"memory": "memory", "sqlite": f"sqlite:///{tmp_path}/state.sqlite3"}.get(kind)
    store = open_store(spec if spec else request.getfixturevalue("redis_url"))
    windows = (Window(10, 1.0), Window(500, 60.0))
    clock = FakeClock(start_wall=NOW)
    starts = []
    for _ in range(700):
        slot = store.reserve("www.ebi.ac.uk", 0.1, clock.time(), 0.0, windows)
        assert slot.granted
        starts.append(slot.start_at)
        clock.sleep(max(0.0, slot.start_at - clock.time()))
    assert most_in_any(starts, 60.0) == 500 and most_in_any(starts, 1.0) == 10
    assert starts[500] - starts[0] == pytest.approx(60.0)  # the 501st waits for the window, not a failure
    assert store.starts("www.ebi.ac.uk", 3) == sorted(starts, reverse=True)[:3]
    store.clear("www.ebi.ac.uk")
    assert store.starts("www.ebi.ac.uk", 3) == []
    store.close()


# ---------------------------------------------------------------------- the transport: windows
from paperfetch import HttpClient  # noqa: E402
from paperfetch.http.hosts import HostRegistry, host_key  # noqa: E402
from paperfetch.testing import LoopbackHost, Reply, Request  # noqa: E402

EUROPE_PMC = ["10/s", "500/min"]  # the staff post of 2026-02-26


class ClockLog:
    """A handler answering ``{}`` that logs each hit's path and query on the injected clock."""

    def __init__(self, clock: FakeClock, status: int = 200) -> None:
        self.clock = clock
        self.status = status
        self.hits: list[tuple[float, str]] = []

    def __call__(self, request: Request) -> Reply:
        self.hits.append((self.clock.time(), f"{request.path}?{request.query}"))
        return Reply(self.status, b"{}", {"Content-Type": "application/json"})

    def times(self, contains: str = "") -> list[float]:
        return [t for t, target in self.hits if contains in target]


def _client(clock: FakeClock, registry: HostRegistry, key: str, **knobs) -> HttpClient:
    return HttpClient(clock=clock, registry=registry, verbosity=0, pacing_margin_s=0.0, max_retries=0,
                      host_intervals={key: 0.1}, host_windows={key: EUROPE_PMC}, **knobs)


def test_700_europe_pmc_requests_at_10_per_second_reach_at_most_500_in_any_minute():
    clock = FakeClock(start_wall=NOW)
    log = ClockLog(clock)
    with LoopbackHost("127.0.0.1", {"*": log}) as server:
        key = host_key(server.base_url)
        with _client(clock, HostRegistry(clock), key) as client:
            answers = [client.get(server.url(f"/europepmc/webservices/rest/search?query=EXT_ID:{i}")) for i in range(500)]
            full = client.snapshot(server.base_url)  # 500 in 50 s: the minute is full for 10 s more
            answers += [client.get(server.url(f"/europepmc/webservices/rest/search?query=EXT_ID:{i}"))
                        for i in range(500, 700)]
    assert [a.status_code for a in answers] == [200] * 700  # the rest waited: none failed, none was held
    times = log.times()
    assert len(times) == 700 and most_in_any(times, 60.0) <= 500 and most_in_any(times, 1.0) <= 10
    assert times[500] - times[0] >= 60.0 and times[499] - times[0] < 50.0  # the minute window is what waits
    assert full.windows == "10/s, 500/min" and full.binding_window == "500/min" and full.window_starts == 500
    assert full.window_wait_s == pytest.approx(10.0, abs=0.2)


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_two_clients_on_one_store_share_the_window(kind, tmp_path, request):
    spec = f"sqlite:///{tmp_path}/state.sqlite3" if kind == "sqlite" else request.getfixturevalue("redis_url")
    clock = FakeClock(start_wall=NOW)
    log = ClockLog(clock)
    with LoopbackHost("127.0.0.1", {"*": log}) as server:
        key = host_key(server.base_url)
        stores = [open_store(spec), open_store(spec)]  # two clients, as two processes would open it
        clients = [_client(clock, HostRegistry(clock, store), key) for store in stores]
        for i in range(300):  # turn about, each at 10/s on its own
            for client in clients:
                assert client.get(server.url(f"/rest/search?query={i}")).status_code == 200
        for client, store in zip(clients, stores):
            client.close()
            store.close()
    times = log.times()
    assert len(times) == 600 and most_in_any(times, 60.0) <= 500 and most_in_any(times, 1.0) <= 10
    assert max(times) - min(times) >= 60.0


def test_without_a_shared_store_each_client_keeps_its_own_window():
    """The control for the test above: two memory stores count apart, so together they pass 500 in a minute."""
    clock = FakeClock(start_wall=NOW)
    log = ClockLog(clock)
    with LoopbackHost("127.0.0.1", {"*": log}) as server:
        key = host_key(server.base_url)
        clients = [_client(clock, HostRegistry(clock, MemoryStore()), key) for _ in range(2)]
        for i in range(300):
            for client in clients:
                client.get(server.url(f"/rest/search?query={i}"))
    assert most_in_any(log.times(), 60.0) > 500
