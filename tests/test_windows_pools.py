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

from paperfetch import HttpClient
from paperfetch.clock import FakeClock
from paperfetch.errors import ConfigurationError, RateLimited
from paperfetch.http.batch import get_many
from paperfetch.http.hosts import HostRegistry, host_key
from paperfetch.http.pools import CROSSREF_LIST, parse_pools, request_key
from paperfetch.sources.crossref import CrossrefSource
from paperfetch.state import MemoryStore, open_store
from paperfetch.state.base import Window, window_floor
from paperfetch.testing import LoopbackHost, Reply, Request
from tests._quick import unpaced

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


# ---------------------------------------------------------------------- the transport: pools

CROSSREF_POOLS = {"public-array": CROSSREF_LIST, "public-single": "."}


@pytest.mark.parametrize(("target", "params", "pool"), [
    ("/works/10.1038/nature12373", None, "public-single"),
    ("/works/10.1038/nature12373", {"mailto": "a@b.org"}, "public-single"),
    ("/works/10.1000/works", None, "public-single"),  # a DOI that ends in a collection's name
    ("/works/10.1038/nature12373/agency", None, "public-single"),
    ("/works?filter=from-pub-date:2020", None, "public-array"),
    ("/works", {"filter": "has-full-text:true", "rows": "20"}, "public-array"),
    ("/works", {"query.bibliographic": "nanopore"}, "public-array"),
    ("/works", None, "public-array"),
    ("/members/98/works", None, "public-array"),
    ("/funders/10.13039/501100000780/works", None, "public-array"),
    ("/journals?query=nature", None, "public-array"),
    ("/members/98", None, "public-single"),
])
def test_the_pool_is_chosen_from_the_request_itself(target, params, pool):
    pools = parse_pools({"api.crossref.org": CROSSREF_POOLS})
    assert request_key(f"https://api.crossref.org{target}", params, pools) == f"api.crossref.org#{pool}"
    assert request_key("https://www.ebi.ac.uk/europepmc/webservices/rest/search", None, pools) == "www.ebi.ac.uk"


def _crossref_client(clock: FakeClock, key: str, registry: HostRegistry | None = None) -> HttpClient:
    """A client with Crossref's pools as the Retriever declares them (the public pool's figures)."""
    pools = CrossrefSource.pools_for(CrossrefSource().identification)
    return HttpClient(clock=clock, registry=registry or HostRegistry(clock), verbosity=0, pacing_margin_s=0.0,
                      max_retries=0, host_pools={key: {name: (rule[0], rule[3]) for name, rule in pools.items()}},
                      host_intervals={f"{key}#{name}": rule[1] for name, rule in pools.items()},
                      host_concurrency={f"{key}#{name}": rule[2] for name, rule in pools.items()})


def test_crossref_list_requests_keep_1_per_second_while_single_lookups_run_at_5_beside_them():
    clock = FakeClock(start_wall=NOW)
    log = ClockLog(clock)
    with LoopbackHost("127.0.0.1", {"*": log}) as server:
        key = host_key(server.base_url)
        with _crossref_client(clock, key) as client:
            for i in range(10):
                client.get(server.url("/works"), params={"filter": f"from-pub-date:{2000 + i}"})
                for j in range(5):
                    client.get(server.url(f"/works/10.1/{i}.{j}"))
            rows = client.domain_status().set_index("host")
    lists, singles = log.times("filter="), log.times("/works/10.1/")
    assert len(lists) == 10 and len(singles) == 50
    assert min(gaps_of(lists)) >= 1.0 - 1e-6 and min(gaps_of(singles)) >= 0.2 - 1e-6
    assert max(lists) - min(lists) == pytest.approx(9.0, abs=0.05)  # 1/s, not slowed by the 50 lookups
    assert max(singles) - min(singles) <= 10.0  # 5/s beside them, not held to the list pool's 1/s
    assert set(rows.index) >= {f"{key}#public-array", f"{key}#public-single"}
    assert rows.loc[f"{key}#public-array", "pool"] == "public-array" and rows.loc[f"{key}#public-array", "requests"] == 10
    assert client.snapshot(f"{key}#public-single").max_in_flight == 1


def gaps_of(times: list[float]) -> list[float]:
    ordered = sorted(times)
    return [b - a for a, b in zip(ordered, ordered[1:])]


def test_a_batch_queues_each_pool_apart_and_keeps_both_paces():
    clock = FakeClock(start_wall=NOW)
    log = ClockLog(clock)
    with LoopbackHost("127.0.0.1", {"*": log}) as server:
        key = host_key(server.base_url)
        with _crossref_client(clock, key) as client:
            urls = [server.url(f"/works?filter=type:{i}") for i in range(4)]
            urls += [server.url(f"/works/10.1/{i}") for i in range(12)]
            answers = get_many(client, urls, workers=4)
            keys = {client.pacing_key(url) for url in urls}
    assert all(a.status_code == 200 for a in answers)
    assert keys == {f"{key}#public-array", f"{key}#public-single"}
    assert min(gaps_of(log.times("filter="))) >= 1.0 - 1e-6 and min(gaps_of(log.times("/works/10.1/"))) >= 0.2 - 1e-6


def test_a_429_in_the_list_pool_holds_that_pool_only():
    """Crossref's pools are separate: a refusal of list requests says nothing about single lookups."""
    clock = FakeClock(start_wall=NOW)
    lists = ClockLog(clock)
    singles = ClockLog(clock)

    def route(request: Request) -> Reply:
        if "filter=" in request.query:
            lists(request)
            return Reply(429, b"slow down", {"Retry-After": "600"})
        return singles(request)

    with LoopbackHost("127.0.0.1", {"*": route}) as server:
        key = host_key(server.base_url)
        with _crossref_client(clock, key) as client:
            first = client.get(server.url("/works"), params={"filter": "type:journal-article"})
            again = client.get(server.url("/works"), params={"filter": "type:book"})
            single = client.get(server.url("/works/10.1/x"))
            with pytest.raises(RateLimited) as refused:  # what people read names the pool by its label
                client.fetch(server.url("/works"), params={"filter": "type:dataset"})
            held = client.snapshot(f"{key}#public-array")
            free = client.snapshot(f"{key}#public-single")
    assert first.status_code == 429 and again.headers.get("X-Paperfetch-Synthetic") == "held"
    assert single.status_code == 200 and len(lists.hits) == 1 and len(singles.hits) == 1
    assert held.held_until is not None and free.held_until is None
    assert str(refused.value).startswith(f"{key} (list queries) asked for no requests until ") and "#" not in str(refused.value)


def test_the_retriever_declares_the_pools_and_windows_for_every_caller(tmp_path):
    from tests._quick import retriever

    with LoopbackHost("127.0.0.1", {"*": Reply(200, b"{}", {"Content-Type": "application/json"})}) as crossref, \
            LoopbackHost("127.0.0.1", {"*": Reply(200, b"{}")}) as ebi:
        endpoints = {"crossref": crossref.base_url, "europepmc": ebi.base_url}
        with retriever(tmp_path, endpoints) as r:
            key = host_key(crossref.base_url)
            r.api.get(crossref.url("/works"), params={"query.bibliographic": "nanopore"})  # as r.api.get is called
            r.api.get(crossref.url("/works/10.1/x"))
            status = r.api.domain_status().set_index("host")
            windows = r.api.config.hosts[host_key(ebi.base_url)].windows
    assert [str(w) for w in windows] == ["10/s", "500/min"]
    # with an e-mail, Crossref's polite pool: its single lookups at 10/s, three in flight
    assert r.api.config.hosts[f"{key}#polite-single"].interval_s == 0.1
    assert r.api.config.hosts[f"{key}#polite-single"].in_flight == 3
    assert r.api.config.hosts[f"{key}#polite-array"].interval_s == 1.0
    assert status.loc[f"{key}#polite-array", "requests"] == 1 and status.loc[f"{key}#polite-single", "requests"] == 1


# ---------------------------------------------------------------------- shown: domain_status() and the dashboard
def test_domain_status_and_the_tables_name_the_binding_window_and_the_pools():
    from paperfetch.dashboard.tables import host_table_text, style_domain_status
    from paperfetch.http.status import DOMAIN_STATUS_COLUMNS

    clock = FakeClock(start_wall=NOW)
    log = ClockLog(clock)
    with LoopbackHost("127.0.0.1", {"*": log}) as server:
        key = host_key(server.base_url)
        with HttpClient(clock=clock, registry=HostRegistry(clock), verbosity=0, pacing_margin_s=0.0,
                        host_intervals={key: 0.1}, host_windows={key: ["3/min"]}) as client:
            for i in range(3):
                client.get(server.url(f"/rest/{i}"))
            frame = client.domain_status().set_index("host")
            ready = client.ready_in(server.url("/rest/4"))  # what a batch asks before it dispatches
    before = ["state", "host", "held_until", "hold_status", "suppressed", "suppressed_reason", "suppressed_until",
              "breaker", "failures", "breaker_open_until", "next_allowed_at", "requests", "in_flight", "ok", "errors",
              "last_status", "delay_min_s", "delay_max_s", "backoff_s", "learned_interval_s", "crawl_delay_s", "robots",
              "credits_left"]
    assert [c for c in DOMAIN_STATUS_COLUMNS if c in before] == before  # every column kept, in its order
    assert DOMAIN_STATUS_COLUMNS[-1] == "credits_left"
    row = frame.loc[key]
    assert row["windows"] == "3/min" and row["binding_window"] == "3/min" and row["window_starts"] == 3
    assert row["pool"] == "" and row["state"] == "ok"
    assert ready == pytest.approx(60.0 - 0.2, abs=0.01)  # three starts 0.1 s apart: the minute frees at 60 s
    assert row["next_allowed_at"].timestamp() == pytest.approx(NOW + 60.0, abs=0.01)
    assert "window" in host_table_text(frame.reset_index()) and "3/min" in host_table_text(frame.reset_index())
    assert ">window</th>" in style_domain_status(frame.reset_index()).to_html()


def test_the_dashboard_says_when_a_full_window_lets_the_next_request_go():
    from paperfetch.dashboard.render import HOST_COLUMNS, render_hosts_html, render_text
    from paperfetch.dashboard.snapshot import BatchSnapshot, HostRow
    from paperfetch.http.hosts import HostSnapshot

    full = HostSnapshot("www.ebi.ac.uk", windows="10/s, 500/min", binding_window="500/min", window_starts=500,
                        window_wait_s=12.0)
    free = HostSnapshot("api.crossref.org#public-array", pool="public-array")
    snapshot = BatchSnapshot(at=NOW, hosts=(HostRow("www.ebi.ac.uk", queued=3, politeness=full),
                                            HostRow("api.crossref.org#public-array", queued=1, politeness=free)))
    table = render_hosts_html(snapshot)
    assert '<div class="why">500/min window full: next in 0:12</div>' in table
    assert 'data-host="api.crossref.org#public-array"' in table  # a pool is a row of its own
    assert "500/min window full" in render_text(snapshot)
    assert [c.header for c in HOST_COLUMNS][-1] == "credits"  # the columns as they were


def test_a_demo_run_shows_pools_as_people_read_them(tmp_path, caplog):
    """The demo's Crossref lookups go to its single-lookup pool only: every table, plot and warning names the
    host alone, never ``host#polite-single``; a host with both pools shows each by its label."""
    import logging
    import re

    from paperfetch import Retriever
    from paperfetch.dashboard.render import render_html, render_text
    from paperfetch.dashboard.snapshot import BatchSnapshot, HostRow
    from paperfetch.demo import DEMO_INPUTS, DemoWorld
    from paperfetch.http.status import shown_hosts

    caplog.set_level(logging.WARNING, logger="paperfetch")
    with DemoWorld() as world:
        crossref = host_key(world.endpoints["crossref"])
        # no service's own interval (bioRxiv's 1 s) but Crossref's, whose pools take theirs from it
        intervals = {host: 0.0 for host in unpaced(world.endpoints) if host != crossref}
        with Retriever(email="demo@uni.example", out_dir=tmp_path, endpoints=world.endpoints, verbosity=0, cache=False,
                       state="memory", dashboard=False, progress=False,
                       http_options={"network_retry_base_s": 0.1, "rate_limit_min_s": 0.1, "rate_limit_max_s": 0.3,
                                     "host_intervals": intervals}) as r:
            r.download(DEMO_INPUTS)
            snapshot, hosts, settings, requests = r.run_snapshot(), r.domain_status(), r.settings._repr_html_(), r.requests()
            keys = {h.host for h in snapshot.hosts}
    assert f"{crossref}#polite-single" in keys  # paced in its pool, shown as the host
    assert crossref in set(hosts["host"]) and crossref in set(snapshot.hosts_frame()["host"])
    shown = [hosts.to_string(), snapshot.hosts_frame().to_string(), render_html(snapshot), render_text(snapshot),
             caplog.text, settings, requests.to_string()]
    assert not [text for text in shown if "#polite-" in text]
    assert crossref in set(requests["host"])  # the requests of its one pool: the host alone
    assert "(single lookups)" in settings and "(list queries)" in settings  # the settings name both pools
    assert "Window(" not in settings and "tex2jax_ignore" in settings
    outside_code = re.sub(r"<code>.*?</code>", "", settings, flags=re.S)
    assert "$" not in outside_code and "&#36;" not in outside_code  # a regex's $ only inside <code>: no maths
    pools = parse_pools({"c.org": {"polite-array": ("filter=", "list queries"), "polite-single": (".", "single lookups")}})
    assert shown_hosts(["c.org#polite-array", "c.org#polite-single", "d.org#polite-single"], pools) == [
        "c.org (list queries)", "c.org (single lookups)", "d.org"]
    both = BatchSnapshot(at=NOW, hosts=(HostRow("c.org#polite-array", label="c.org (list queries)"),))
    assert 'data-host="c.org (list queries)"' in render_html(both)


# ---------------------------------------------------------------------- configured where intervals are
def test_windows_and_pools_are_settings_of_the_transport(tmp_path):
    from paperfetch.http.config import TransportConfig
    from paperfetch.settings import load_settings

    path = tmp_path / "config.toml"
    path.write_text('host_windows = { "www.ebi.ac.uk" = ["10/s", "500/min"] }\n'
                    'host_pools = { "api.crossref.org" = { "public-array" = "filter=", "public-single" = "." } }\n'
                    'host_intervals = { "api.crossref.org#public-array" = 1.0 }\n')
    settings = load_settings({}, environ={}, config_path=path)
    config = settings.transport
    assert config.hosts["www.ebi.ac.uk"].windows == (Window(10, 1.0), Window(500, 60.0))
    assert str(config.hosts["www.ebi.ac.uk"]) == "10 per 1 s; 500 per 60 s"  # one rule per host, in plain words
    assert config.host_pools == {"api.crossref.org": {"public-array": "filter=", "public-single": "."}}
    assert settings.origin["host_windows"].startswith("file")
    client = HttpClient.from_config(config, registry=HostRegistry())
    assert client.pacing_key("https://api.crossref.org/works?filter=type:book") == "api.crossref.org#public-array"
    assert client.pacing_key("https://api.crossref.org/works/10.1/x") == "api.crossref.org#public-single"
    assert client.pacing_key("https://www.ebi.ac.uk/europepmc/webservices/rest/search") == "www.ebi.ac.uk"
    assert client.config.user_agent_for("api.crossref.org#public-array") == client.config.user_agent
    with pytest.raises(ConfigurationError):
        TransportConfig(host_windows={"h": ["500 a minute"]})
    with pytest.raises(ConfigurationError):
        TransportConfig(host_pools={"h": {"list": "(unclosed"}})
    with pytest.raises(ConfigurationError):
        TransportConfig(host_pools={"h": {"a#b": "."}})
    mailed = TransportConfig(contact_email="me@uni.example", contact_hosts=["api.crossref.org"])
    assert "me@uni.example" in mailed.user_agent_for("api.crossref.org#public-single")  # a pool of a host that asks


def test_a_pool_is_shown_by_the_label_its_declaration_gives_never_by_its_name_s_ending(tmp_path):
    from paperfetch.http.config import TransportConfig
    from paperfetch.http.status import shown_host, shown_hosts
    from paperfetch.settings import load_settings

    config = TransportConfig(host_pools={"lab.example": {"bulk-array": ["[?&]cursor=", "exports"], "x-single": "."}})
    assert config.host_pools == {"lab.example": {"bulk-array": ("[?&]cursor=", "exports"), "x-single": "."}}
    assert str(config.hosts["lab.example"]) == "pools: exports (bulk-array: [?&]cursor=), x-single (.)"
    assert shown_hosts(["lab.example#bulk-array", "lab.example#x-single"], config.pools) == [
        "lab.example (exports)", "lab.example (x-single)"]  # a name ending -array or -single is no label
    path = tmp_path / "config.toml"  # a config file declares a label as a pair
    path.write_text('host_pools = { "files.example" = { "big" = ["^/big/", "large files"] } }\n')
    settings = load_settings({}, environ={}, config_path=path)
    assert settings.transport.host_pools == {"files.example": {"big": ("^/big/", "large files")}}
    assert shown_host("files.example#big", settings.transport.pools) == "files.example (large files)"
    assert shown_host("files.example#big", config.pools) == "files.example (big)"  # not declared there: its name
    with pytest.raises(ConfigurationError):
        TransportConfig(host_pools={"h": {"list": ["filter=", "a label", "a third"]}})


def test_two_declarations_labelling_one_pool_differently_each_show_their_own():
    """Labels come from the declaration in hand: parsing a second declaration of the same ``host#pool`` with
    another label changes nothing the first one shows, in the settings, the requests and the host table."""
    import pandas as pd

    from paperfetch.http.config import TransportConfig
    from paperfetch.http.events import Event, EventKind
    from paperfetch.http.pools import pool_label
    from paperfetch.http.status import shown_host
    from paperfetch.report import for_people
    from paperfetch.requestlog import RequestLog

    first = parse_pools({"lab.example": {"bulk": ("[?&]cursor=", "exports"), "one": "."}})
    second = TransportConfig(host_pools={"lab.example": {"bulk": ("[?&]cursor=", "bulk downloads"), "one": "."}})
    assert pool_label("lab.example#bulk", first) == "exports"
    assert pool_label("lab.example#bulk", second.pools) == "bulk downloads"
    assert shown_host("lab.example#bulk", first) == "lab.example (exports)"
    assert shown_host("lab.example#bulk", second.pools) == "lab.example (bulk downloads)"
    assert pool_label("lab.example#bulk", {}) == "bulk"  # no declaration in hand: its name
    keys = ["lab.example#bulk", "lab.example#one"]
    logs = RequestLog(first), RequestLog(second.pools)
    for log in logs:
        for key in keys:
            log.on_event(Event(EventKind.RESPONSE, key, 0.0, "https://lab.example/x", status=200, seconds=0.1))
    assert [list(log.frame()["host"]) for log in logs] == [
        ["lab.example (exports)", "lab.example (one)"], ["lab.example (bulk downloads)", "lab.example (one)"]]
    table = pd.DataFrame({"host": keys, "pool": ["bulk", "one"]})
    assert list(for_people(table.copy(), first)["host"]) == ["lab.example (exports)", "lab.example (one)"]
    assert list(for_people(table.copy(), second.pools)["pool"]) == ["bulk downloads", "one"]


def test_a_crossref_interval_the_caller_gives_paces_each_pool(tmp_path):
    """A caller's ``host_intervals`` for Crossref's host is kept as before: it paces both pools."""
    from tests._quick import retriever

    with LoopbackHost("127.0.0.1", {"*": Reply(200, b"{}")}) as crossref:
        key = host_key(crossref.base_url)
        with retriever(tmp_path, {"crossref": crossref.base_url}, sources=["crossref"],
                       http_options={"host_intervals": {key: 0.0}}) as r:
            paced = {r.api.snapshot(f"{key}#{pool}").delay_min_s for pool in ("polite-single", "polite-array")}
            assert r.api.pacing_key(crossref.url("/works?filter=x")) == f"{key}#polite-array"
    assert paced == {None}  # no delay: the caller's 0 for the host, in both pools


def test_a_batch_waits_for_the_window_and_fails_nothing():
    clock = FakeClock(start_wall=NOW)
    log = ClockLog(clock)
    with LoopbackHost("127.0.0.1", {"*": log}) as server:
        key = host_key(server.base_url)
        with HttpClient(clock=clock, registry=HostRegistry(clock), verbosity=0, pacing_margin_s=0.0, max_retries=0,
                        host_intervals={key: 0.1}, host_windows={key: ["10/min"]}) as client:
            answers = get_many(client, [server.url(f"/rest/{i}") for i in range(25)], workers=4)
    assert [a.status_code for a in answers] == [200] * 25
    assert most_in_any(log.times(), 60.0) <= 10 and max(log.times()) - min(log.times()) >= 120.0


def test_one_rule_per_host_and_a_pool_takes_its_hosts_interval_and_cap_where_it_declares_none():
    from paperfetch.http.config import TransportConfig

    config = TransportConfig(host_intervals={"H.org": 2.0}, host_concurrency={"h.org": 3},
                             host_windows={"h.org": ["5/s"], "h.org#list": "1/s"}, host_pools={"h.org": {"list": "filter="}})
    assert str(config.hosts["h.org"]) == "1 request per 2 s; 3 in flight; 5 per 1 s; pools: list (filter=)"
    pool = config.rule("h.org#list")
    assert (pool.interval_s, pool.in_flight, [str(w) for w in pool.windows]) == (2.0, 3, ["1/s"])
    assert config.rule("h.org#single").windows == ()  # windows are counted under their own key only
    assert config.rule("arxiv.org").interval_s == 3.0 and config.rule("other.org").interval_s is None
