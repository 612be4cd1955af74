"""The transport over a shared host-state store: real HttpClient batches in four processes
against the same loopback hosts, judged by the servers' own logs; a process killed mid-batch; Redis
stopped and restarted mid-batch; a CLI re-run that remembers a one-hour Retry-After."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from paperfetch import HttpClient
from paperfetch.errors import StoreUnavailable
from paperfetch.http.hosts import HostRegistry, host_key
from paperfetch.state import open_store
from paperfetch.testing import LoopbackHost, Reply, gaps
from tests._services import fresh_processes

INTERVAL = 0.1
PROCESSES = 4
PER_HOST = 6  # per process and host


def _batch(spec: str, urls: list[str], barrier, result: str, lease_s: float | None = None) -> None:  # a child process
    if lease_s is None:
        client = HttpClient(state=spec, delay_min_s=INTERVAL, delay_max_s=INTERVAL, max_retries=0)
    else:
        registry = HostRegistry(store=open_store(spec), lease_s=lease_s)
        client = HttpClient(registry=registry, delay_min_s=INTERVAL, delay_max_s=INTERVAL, max_retries=0, timeout=60)
    if barrier is not None:
        barrier.wait(120)
    answers = client.get_many(urls)
    statuses = [getattr(a, "status_code", type(a).__name__) for a in answers]
    Path(result).write_text(json.dumps({"statuses": statuses, "store": client.store.name}))
    client.close()


def _batch_when_released(spec: str, urls: list[str], barrier, result: str, lease_s: float) -> None:  # a child process
    """:func:`_batch`, started ahead: it opens the store only once *barrier* lets it go."""
    barrier.wait(120)
    _batch(spec, urls, None, result, lease_s)


def _four_processes(spec: str, servers: list[LoopbackHost], tmp_path: Path) -> list[dict]:
    context = fresh_processes(__name__)
    barrier = context.Barrier(PROCESSES)
    workers, results = [], []
    for p in range(PROCESSES):
        urls = [server.url(f"/p{p}/{n}") for n in range(PER_HOST) for server in servers]
        results.append(tmp_path / f"result-{p}.json")
        workers.append(context.Process(target=_batch, args=(spec, urls, barrier, str(results[-1]))))
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(300)
    assert [worker.exitcode for worker in workers] == [0] * PROCESSES
    return [json.loads(path.read_text()) for path in results]


def _below_interval(servers: list[LoopbackHost]) -> int:
    return sum(gap < INTERVAL for server in servers for gap in gaps(sorted(server.arrivals("/p"))))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "redis", "memory"])
def test_four_processes_of_http_client_batches_keep_every_interval_through_a_shared_store(kind, tmp_path, request):
    """SQLite and Redis: 0 arrivals below any host's interval across all processes; memory: violations."""
    spec = {"sqlite": f"sqlite:///{tmp_path}/state.sqlite3", "memory": "memory"}.get(kind)
    if kind == "redis":
        spec = request.getfixturevalue("redis_url")
    base = {"sqlite": 150, "redis": 152, "memory": 154}[kind]
    servers = [LoopbackHost(f"127.0.0.{base + i}", {"*": Reply(200, b"x" * 512)}).start() for i in range(2)]
    try:
        results = _four_processes(spec, servers, tmp_path)
        below = _below_interval(servers)
        counts = [len(server.arrivals("/p")) for server in servers]
    finally:
        for server in servers:
            server.stop()
    assert all(r["statuses"] == [200] * (2 * PER_HOST) for r in results)
    assert counts == [PROCESSES * PER_HOST] * 2
    if kind == "memory":
        assert below > 0, "with state='memory' each process paces alone: the servers must see violations"
    else:
        assert below == 0
        assert {r["store"] for r in results} == {open_store(spec).name}


@pytest.mark.slow
def test_a_process_killed_mid_request_blocks_its_host_no_longer_than_the_lease(tmp_path):
    lease = 2.0  # the others are started ahead and let go at the kill: their wait for the lease is seen
    entered = threading.Event()

    def slow(request):
        entered.set()
        time.sleep(30)  # the killed process's request: its slot is held until the lease runs out
        return Reply(200, b"late")

    server = LoopbackHost("127.0.0.156", {"/slow": slow, "*": Reply(200, b"x")}).start()
    spec = f"sqlite:///{tmp_path}/state.sqlite3"
    context = fresh_processes(__name__)
    try:
        release = context.Barrier(3)  # the two others and this process
        others = [
            context.Process(target=_batch_when_released, args=(spec, [server.url(f"/p{p}/{n}") for n in range(4)], release,
                                                                str(tmp_path / f"other-{p}.json"), lease))
            for p in range(2)
        ]
        for worker in others:
            worker.start()
        barrier = context.Barrier(1)
        victim = context.Process(target=_batch, args=(spec, [server.url("/slow")], barrier, str(tmp_path / "victim.json"), lease))
        victim.start()
        assert entered.wait(120), "the victim never sent its request"
        killed_at = time.monotonic()
        os.kill(victim.pid, signal.SIGKILL)
        victim.join(30)
        release.wait(120)
        for worker in others:
            worker.join(120)
        assert [w.exitcode for w in others] == [0, 0]
        first_after = min(server.arrivals("/p"))
        arrivals = sorted(server.arrivals("/p"))
    finally:
        server.stop()
    assert victim.exitcode == -signal.SIGKILL
    slow_arrival = server.arrivals("/slow")[0]
    # the host was blocked by the dead holder for at most its lease (plus the interval and a busy machine's slack)
    assert first_after - slow_arrival <= lease + INTERVAL + 3.0
    assert first_after - slow_arrival >= lease - 0.05, "the others did not wait for the holder's lease"
    assert killed_at < first_after
    assert len(arrivals) == 8 and min(gaps(arrivals)) >= INTERVAL
    for p in range(2):
        assert json.loads((tmp_path / f"other-{p}.json").read_text())["statuses"] == [200] * 4


def test_a_lost_redis_is_a_typed_error_and_with_fallback_local_the_requests_go_on(tmp_path, hosts, monkeypatch):
    from tests._services import RedisServer, redis_available

    if not redis_available():
        from tests._services import missing

        missing("redis-server or redis-py is not installed")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the fallback's SQLite file
    server = RedisServer().start()
    host = hosts("127.0.0.157", {"*": Reply(200, b"x")})
    try:
        strict = HttpClient(state=server.url, delay_min_s=0.01, delay_max_s=0.01)
        tolerant = HttpClient(state=server.url, state_fallback="local", delay_min_s=0.01, delay_max_s=0.01)
        assert strict.get(host.url("/a")).status_code == 200
        server.stop()
        with pytest.raises(StoreUnavailable, match="does not answer.*fallback='local'"):
            strict.get(host.url("/b"))
        assert tolerant.get(host.url("/c")).status_code == 200
        assert tolerant.store.on_fallback
    finally:
        server.cleanup()


@pytest.mark.slow
def test_redis_stopped_and_restarted_mid_batch_every_item_gets_a_row(tmp_path, hosts, monkeypatch):
    from tests._services import RedisServer, redis_available

    if not redis_available():
        from tests._services import missing

        missing("redis-server or redis-py is not installed")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    server = RedisServer().start()
    host = hosts("127.0.0.158", {"*": Reply(200, b"x")})
    urls = [host.url(f"/item/{n}") for n in range(40)]
    try:
        client = HttpClient(state=server.url, state_fallback="local", delay_min_s=0.05, delay_max_s=0.05)
        client.store._retry_after_s = 0.2  # ask Redis again soon after it comes back

        def outage() -> None:
            while len(host.arrivals("/item")) < 10:
                time.sleep(0.01)
            server.stop()
            while len(host.arrivals("/item")) < 20:
                time.sleep(0.01)
            server.start()

        thread = threading.Thread(target=outage)
        thread.start()
        answers = client.get_many(urls)
        thread.join(60)
    finally:
        server.cleanup()
    assert len(answers) == len(urls)
    assert [getattr(a, "status_code", a) for a in answers] == [200] * len(urls)
    assert sorted(p for _, p in host.log) == sorted(f"/item/{n}" for n in range(40))


@pytest.mark.slow
def test_a_cli_rerun_remembers_a_one_hour_retry_after_and_reports_host_held(tmp_path):
    from paperfetch.demo import DemoWorld

    def busy(request):
        return Reply(429, b"slow down", headers={"Retry-After": "3600"})

    state = f"sqlite:///{tmp_path}/state.sqlite3"
    with DemoWorld(base_ip=160) as world:
        blocker = LoopbackHost("127.0.0.170", {"*": busy}).start()
        try:
            env = {**os.environ, "PAPERFETCH_CONFIG": str(tmp_path / "none.toml")}
            env.update({f"PAPERFETCH_{name.upper()}_URL": url for name, url in world.endpoints.items()})
            env["PAPERFETCH_DOI_URL"] = blocker.base_url  # the landing page of demo.unknown answers 429, Retry-After: 1 h
            env.pop("PAPERFETCH_STATE", None)
            runs = []
            for n in range(2):
                report = tmp_path / f"report-{n}.csv"
                done = subprocess.run(
                    [sys.executable, "-m", "paperfetch", "download", "10.5555/demo.unknown", "--email", "t@uni.example",
                     "--out", str(tmp_path / "pdfs"), "--report", str(report), "--no-progress", "--state", state],
                    capture_output=True, text=True, env=env, timeout=300,
                )
                runs.append((done, pd.read_csv(report), len(blocker.log)))
        finally:
            blocker.stop()
    (first, first_rows, after_first), (second, second_rows, after_second) = runs
    assert after_first >= 1, first.stderr
    assert after_second == after_first, "the second run asked the held host again"
    assert first_rows["status"].tolist() == ["host_held"]
    row = second_rows.iloc[0]
    assert row["status"] == "host_held", second.stderr
    held = open_store(state).get(host_key(blocker.base_url), time.time())
    assert held.hold_until is not None and held.hold_until > time.time() + 3000
    # the row says when the host may be asked again
    text = " ".join(str(v) for v in row.to_dict().values())
    assert "no request sent" in text and f"until {time.strftime('%H:%M', time.gmtime(held.hold_until))}" in text, text


def test_domain_status_and_the_dashboard_show_a_hold_another_process_set_and_name_the_store(tmp_path, hosts):
    """Two registries over one SQLite file stand for two processes (each has its own connection)."""
    from paperfetch.dashboard import DashboardModel, render_html, render_text

    server = hosts("127.0.0.159", {"*": Reply(429, b"busy", headers={"Retry-After": "600"})})
    path = tmp_path / "state.sqlite3"
    first = HttpClient(registry=HostRegistry(store=open_store(path)), max_retries=0)
    second = HttpClient(registry=HostRegistry(store=open_store(f"sqlite:///{path}")))
    assert first.get(server.url("/a")).status_code == 429
    assert len(server.log) == 1
    status = second.domain_status()
    assert status.attrs["store"] == f"sqlite:{path.resolve()}" == second.store.name
    row = status.set_index("host").loc[host_key(server.base_url)]
    assert row["hold_status"] == 429 and row["held_until"] is not None and row["requests"] == 0
    answer = second.get(server.url("/b"))  # held: answered without a request
    assert answer.status_code == 429 and len(server.log) == 1
    model = DashboardModel().watch(HttpClient(registry=HostRegistry(store=open_store(path))), events=False)
    snap = model.snapshot()
    assert snap.store == second.store.name and snap.host(host_key(server.base_url)).held
    assert f"host state: {second.store.name}" in render_text(snap)
    assert "host state:" in render_html(snap)


def test_the_retriever_defaults_to_sqlite_in_the_user_cache_dir_and_a_plain_client_to_memory(tmp_path, monkeypatch):
    from paperfetch import Retriever

    monkeypatch.delenv("PAPERFETCH_STATE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with Retriever(out_dir=tmp_path / "pdfs", progress=False, cache=False) as retriever:
        assert retriever.store.name == f"sqlite:{(tmp_path / 'cache' / 'paperfetch' / 'host-state.sqlite3').resolve()}"
        assert retriever.web.store is retriever.api.store
    assert HttpClient().store.name == "memory"
    monkeypatch.setenv("PAPERFETCH_STATE", "memory")
    with Retriever(out_dir=tmp_path / "pdfs", progress=False, cache=False) as retriever:
        assert retriever.store.name == "memory"
    with Retriever(out_dir=tmp_path / "pdfs", progress=False, cache=False, state=tmp_path / "x.sqlite3") as retriever:
        assert retriever.store.name == f"sqlite:{(tmp_path / 'x.sqlite3').resolve()}"


def test_the_domain_status_of_a_shared_store_leaves_out_hosts_it_merely_remembers(tmp_path, hosts):
    server = hosts("127.0.0.161", {"*": Reply(200, b"x")})
    path = tmp_path / "state.sqlite3"
    earlier = HttpClient(registry=HostRegistry(store=open_store(path)), delay_min_s=0.01, delay_max_s=0.01)
    assert earlier.get(server.url("/a")).status_code == 200  # the store now knows the host (its slot)
    store = open_store(path)
    assert host_key(server.base_url) in store.hosts()
    store.update("other.example", lambda f: replace(f, backoff_s=0.0, breaker_failures=0, successes=3), time.time())
    assert "other.example" in store.hosts()
    later = HttpClient(registry=HostRegistry(store=store))
    assert later.domain_status().empty  # nothing in force: an earlier run's calm hosts are not listed


@pytest.mark.slow
def test_a_retriever_whose_redis_is_gone_gives_every_item_a_row(tmp_path, monkeypatch):
    from paperfetch import Retriever
    from paperfetch.demo import DemoWorld
    from tests._services import RedisServer, redis_available

    if not redis_available():
        from tests._services import missing

        missing("redis-server or redis-py is not installed")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    server = RedisServer().start()
    dois = ["10.5555/demo.fast", "10.5555/demo.unknown", "not a doi"]
    try:
        with DemoWorld(base_ip=175) as world:
            strict = Retriever(email="t@uni.example", out_dir=tmp_path / "a", endpoints=world.endpoints, state=server.url,
                               progress=False, cache=False, http_options={"delay_min_s": 0.01, "delay_max_s": 0.01})
            tolerant = Retriever(email="t@uni.example", out_dir=tmp_path / "b", endpoints=world.endpoints,
                                 state=server.url, state_fallback="local", progress=False, cache=False,
                                 http_options={"delay_min_s": 0.01, "delay_max_s": 0.01})
            server.stop()
            with strict, tolerant:
                lost = strict.download(dois)
                fallen_back = tolerant.download(dois)
    finally:
        server.cleanup()
    assert lost["input"].tolist() == dois == fallen_back["input"].tolist()
    assert lost["status"].tolist()[2] == "invalid_identifier"
    assert all(status not in ("downloaded", "interrupted") for status in lost["status"].tolist()[:2])
    assert any("does not answer" in str(error) for error in lost["error"].tolist()), lost.to_dict("records")
    assert fallen_back["status"].tolist()[0] == "downloaded"


def test_every_field_of_host_facts_survives_the_store_and_back():
    from dataclasses import fields

    from paperfetch.http.hosts import robots_of, with_robots
    from paperfetch.http.robots import RobotsRules, RobotsStatus, UnreachablePolicy
    from paperfetch.state.base import BreakerState, HostFacts

    rules = RobotsRules.parse(b"User-agent: *\nDisallow: /private\nCrawl-delay: 2\n", fetched_at=1e9, expires_at=1e9 + 60,
                              truncated=True)
    facts = with_robots(HostFacts(
        "h.example", hold_until=1e9 + 30, hold_status=429, hold_reason="Retry-After", suppressed_until=float("inf"),
        suppression_reason="HTTP 403", suppressed_since=1e9, updated_at=1e9,
        backoff_s=4.0, learned_interval_s=1.5, successes=2, breaker_state=BreakerState.OPEN, breaker_failures=5,
        failing_since=1e9 - 9, breaker_open_until=1e9 + 8, breaker_period_s=8.0, breaker_reason="HTTP 503 (5 failures in a row)",
        failure_status=503,
        credits_limit=1000, credits_left=0, credits_reset_at=1e9 + 3600, budget_spent_until=1e9 + 3600,
        announced_interval_s=0.1, concurrency_limit=3,
    ), replace(rules, unreachable_policy=UnreachablePolicy.DISALLOW, detail="cut at the size limit"))
    assert all(getattr(facts, f.name) != f.default for f in fields(HostFacts)), "a field was left at its default"
    back = HostFacts.from_json(json.loads(json.dumps(facts.to_json())))  # through JSON, as SQLite and Redis keep it
    assert back == facts and back.breaker_state is BreakerState.OPEN
    robots = robots_of(back)
    assert robots is not None and robots.crawl_delay("*", 60) == 2.0
    assert not robots.can_fetch("https://h.example/private/x", "bot") and robots.can_fetch("https://h.example/ok", "bot")
    assert (robots.fetched_at, robots.expires_at) == (1e9, 1e9 + 60)
    unreachable = RobotsRules(RobotsStatus.UNREACHABLE, 1.0, 2.0, unreachable_policy=UnreachablePolicy.DISALLOW, detail="HTTP 500")
    again = robots_of(HostFacts.from_json(with_robots(HostFacts("h"), unreachable).to_json()))
    assert again == unreachable


def test_robots_txt_fetched_by_one_process_serves_another(tmp_path, hosts):
    server = hosts("127.0.0.162", {"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /no\n"), "*": Reply(200, b"x")})
    path = tmp_path / "state.sqlite3"
    first = HttpClient(registry=HostRegistry(store=open_store(path)), respect_robots_txt=True, robots_cache_ttl_s=60)
    second = HttpClient(registry=HostRegistry(store=open_store(path)), respect_robots_txt=True, robots_cache_ttl_s=60)
    assert first.get(server.url("/a")).status_code == 200
    assert second.get(server.url("/b")).status_code == 200
    assert second.get(server.url("/no/c")) is None  # disallowed by the robots.txt the first one fetched
    assert [p for _, p in server.log] == ["/robots.txt", "/a", "/b"]
