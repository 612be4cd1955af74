"""Per-operation overhead of the shared host-state stores against the in-process one. Prints figures; asserts nothing.

    python benchmarks/shared.py [--ops 2000]

For each store (memory, SQLite in a temporary folder, Redis on a redis-server started here on a
free loopback port): the median time of each operation the transport makes per request —
``reserve`` (take the host's start slot), ``finish`` (release it), ``get`` (read the facts before
deciding) and ``update`` (write what the response taught) — and their sum, a request's
bookkeeping, in µs and as a ratio to memory, all in one run (stores interleaved in blocks, so
a busy machine slows each alike). Also: 4 processes reserving 200 slots each on one host —
the smallest gap between any two reserved starts must be >= the interval (0 violations); and
4 processes requesting from 8 loopback hosts through the store (``paperfetch.state.pacing.acquire``),
start-to-start and end-to-end: makespan against the politeness bound, and the requests the servers
saw below the interval (memory: every process paces alone).
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests._services: the redis-server helper

from paperfetch.state import HostFacts, open_store  # noqa: E402

HOSTS = [f"pub{i}.example:443" for i in range(40)]


def _ops(store, i: int, now: float) -> dict[str, float]:
    host = HOSTS[i % len(HOSTS)]
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    slot = store.reserve(host, 0.0, now, lease_s=30.0)
    t1 = time.perf_counter()
    store.finish(slot, now, 0.0)
    t2 = time.perf_counter()
    store.get(host, now)
    t3 = time.perf_counter()
    store.update(host, lambda f: replace(f, learned_interval_s=1.0, breaker_failures=0), now)
    t4 = time.perf_counter()
    times.update(reserve=t1 - t0, finish=t2 - t1, get=t3 - t2, update=t4 - t3, request=t4 - t0)
    return times


def _reserve_many(spec: str, count: int, queue) -> None:
    store = open_store(spec)
    queue.put([store.reserve("shared.example:443", 0.002, time.time()).start_at for _ in range(count)])
    store.close()


def violations(spec: str, processes: int = 4, count: int = 200) -> tuple[int, float, float]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [context.Process(target=_reserve_many, args=(spec, count, queue)) for _ in range(processes)]
    t0 = time.perf_counter()
    for worker in workers:
        worker.start()
    starts = sorted(s for _ in workers for s in queue.get(timeout=300))
    for worker in workers:
        worker.join()
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    return sum(g < 0.002 - 2e-6 for g in gaps), min(gaps), time.perf_counter() - t0


def _batch_worker(spec: str, urls: list[tuple[str, str]], interval: float, margin: float, lease_s: float, barrier) -> None:
    import requests

    from paperfetch.state.pacing import acquire

    import threading

    store = open_store(spec)
    by_host: dict[str, list[str]] = {}
    for host, url in urls:
        by_host.setdefault(host, []).append(url)

    def serve(host: str, host_urls: list[str]) -> None:  # one thread per host, as the batch scheduler does
        with requests.Session() as session:
            for url in host_urls:
                slot = acquire(store, host, interval + margin, lease_s=lease_s, poll_s=0.005)
                try:
                    session.get(url, timeout=30)
                finally:
                    if lease_s:
                        store.finish(slot, time.time(), gap_s=interval + margin)

    threads = [threading.Thread(target=serve, args=item) for item in by_host.items()]
    barrier.wait(120)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    store.close()


def batch(spec: str, *, lease_s: float, processes: int = 4, hosts: int = 8, per_host: int = 30,
          interval: float = 0.05, margin: float = 0.002) -> tuple[float, float, int]:
    """4 processes share 8 loopback hosts' items; returns (makespan, politeness bound, arrivals below the interval)."""
    from paperfetch.testing import LoopbackHost, Reply, gaps

    servers = [LoopbackHost(f"127.0.0.{120 + i}", {"*": Reply(200, b"x" * 256)}).start() for i in range(hosts)]
    try:
        items = [(f"h{h}", servers[h].url(f"/item/{n}")) for n in range(per_host) for h in range(hosts)]
        random.Random(0).shuffle(items)  # every process gets items of every host
        shares = [items[p::processes] for p in range(processes)]
        context = multiprocessing.get_context("spawn")
        barrier = context.Barrier(processes + 1)
        workers = [context.Process(target=_batch_worker, args=(spec, share, interval, margin, lease_s, barrier)) for share in shares]
        for worker in workers:
            worker.start()
        barrier.wait(120)
        t0 = time.monotonic()  # the servers stamp arrivals with time.monotonic() in this process
        for worker in workers:
            worker.join()
        makespan = max(max(server.arrivals("/item")) for server in servers) - t0  # to the last request, not process exit
        below = sum(gap < interval for server in servers for gap in gaps(sorted(server.arrivals("/item"))))
    finally:
        for server in servers:
            server.stop()
    return makespan, per_host * interval, below


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=2000)
    args = parser.parse_args()
    from tests._services import RedisServer

    folder = Path(tempfile.mkdtemp(prefix="paperfetch-bench-"))
    server = RedisServer().start()
    try:
        specs = {"memory": "memory", "sqlite": f"sqlite:///{folder}/state.sqlite3", "redis": server.url}
        stores = {name: open_store(spec) for name, spec in specs.items()}
        for store in stores.values():
            store.put(HostFacts(HOSTS[0]), time.time())
            for i in range(50):
                _ops(store, i, time.time())  # warm up
        samples: dict[str, dict[str, list[float]]] = {name: {} for name in stores}
        block = 50
        for b in range(max(1, args.ops // block)):
            for name, store in stores.items():
                for i in range(block):
                    for op, seconds in _ops(store, b * block + i, time.time()).items():
                        samples[name].setdefault(op, []).append(seconds)
        ops = ["reserve", "finish", "get", "update", "request"]
        print(f"median µs per operation, {args.ops} each, ratio to memory in brackets")
        print(f"{'store':8}" + "".join(f"{op:>20}" for op in ops))
        base = {op: statistics.median(samples["memory"][op]) for op in ops}
        for name in stores:
            cells = []
            for op in ops:
                median = statistics.median(samples[name][op])
                cells.append(f"{median * 1e6:9.1f} ({median / base[op]:6.1f}x)")
            print(f"{name:8}" + "".join(f"{cell:>20}" for cell in cells))
        for store in stores.values():
            store.close()
        print("\n4 processes x 200 reservations on one host, interval 2 ms:")
        for name in ("sqlite", "redis"):
            spec = specs[name] if name == "redis" else f"sqlite:///{folder}/race.sqlite3"
            count, smallest, seconds = violations(spec)
            print(f"  {name:7} violations {count}, smallest gap {smallest * 1e3:.3f} ms, {seconds:.2f} s")
        print("\n4 processes, 8 loopback hosts x 30 requests, interval 50 ms (bound: 30 x 50 ms = 1.50 s per host):")
        runs = [("start-to-start", 0.0, 0.002), ("start-to-start", 0.0, 0.010), ("end-to-end", 5.0, 0.002)]
        for n, (mode, lease, margin) in enumerate(runs):
            for name in ("memory", "sqlite", "redis"):
                spec = specs[name] if name != "sqlite" else f"sqlite:///{folder}/batch-{n}.sqlite3"
                makespan, bound, below = batch(spec, lease_s=lease, margin=margin)
                print(f"  {mode:15} margin {margin * 1e3:4.0f} ms {name:7} makespan {makespan:5.2f} s "
                      f"({makespan / bound:4.2f}x the bound), arrivals below the interval: {below}")
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
