"""Four processes pacing one loopback host through a store: the server's own log shows the difference.

With a shared store (SQLite, Redis) no two requests arrive closer than the interval; with "memory"
(each process its own store, as the transport is today) the same run shows the violations — so the
shared store is what prevents them.
"""

from __future__ import annotations

import pytest
import requests

from paperfetch.clock import FakeClock
from paperfetch.state import MemoryStore, open_store
from paperfetch.state.pacing import acquire
from paperfetch.testing import LoopbackHost, Reply, gaps
from tests._services import fresh_processes

INTERVAL = 0.05
PROCESSES = 4
PER_PROCESS = 8


def _paced_client(spec: str, url: str, barrier, lease_s: float) -> None:  # runs in a child process
    store = open_store(spec)
    session = requests.Session()
    barrier.wait(60)
    import time

    for _ in range(PER_PROCESS):
        slot = acquire(store, "pacing.test", INTERVAL, lease_s=lease_s)
        try:
            session.get(url, timeout=30)
        finally:
            if lease_s:
                store.finish(slot, time.time(), gap_s=INTERVAL)
    session.close()
    store.close()


def _run(spec: str, address: str, lease_s: float) -> list[float]:
    context = fresh_processes(__name__)
    with LoopbackHost(address, {"*": Reply(200, b"ok")}) as host:
        barrier = context.Barrier(PROCESSES)
        workers = [context.Process(target=_paced_client, args=(spec, host.url("/x"), barrier, lease_s)) for _ in range(PROCESSES)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(120)
        assert [worker.exitcode for worker in workers] == [0] * PROCESSES
        arrivals = host.arrivals("/x")
    assert len(arrivals) == PROCESSES * PER_PROCESS
    return gaps(sorted(arrivals))


@pytest.mark.slow
def test_with_memory_each_process_paces_alone_and_the_server_sees_violations():
    observed = _run("memory", "127.0.0.91", lease_s=5.0)
    assert sum(gap < INTERVAL for gap in observed) > 0


@pytest.mark.slow
def test_with_sqlite_no_request_arrives_below_the_interval(tmp_path):
    observed = _run(f"sqlite:///{tmp_path}/state.sqlite3", "127.0.0.92", lease_s=5.0)
    assert min(observed) >= INTERVAL


@pytest.mark.slow
def test_with_redis_no_request_arrives_below_the_interval(redis_url):
    observed = _run(redis_url, "127.0.0.93", lease_s=5.0)
    assert min(observed) >= INTERVAL


def test_acquire_sleeps_to_the_start_and_polls_while_the_host_is_held():
    clock = FakeClock(start_wall=1_800_000_000.0)
    store = MemoryStore()
    first = acquire(store, "h", 1.0, clock=clock)
    second = acquire(store, "h", 1.0, clock=clock)
    assert second.start_at - first.start_at == pytest.approx(1.0) and clock.sleeps == [pytest.approx(1.0)]
    holder = acquire(store, "h", 1.0, clock=clock, lease_s=0.1)  # holds the host for 0.1 s: nobody finishes it
    clock.sleeps.clear()
    third = acquire(store, "h", 1.0, clock=clock, lease_s=0.1, poll_s=0.02)
    assert third.granted and third.start_at >= holder.lease_until
    assert len(clock.sleeps) >= 5 and all(s <= 0.02 + 1e-9 for s in clock.sleeps[:-1])
