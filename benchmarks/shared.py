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

Through the real transport (``HttpClient(state=...)``, its batch scheduler, end-to-end pacing with a
lease): 4 processes x ``get_many`` over 8 loopback hosts — makespan against the politeness bound of
the combined load (goal <= 1.2x) and arrivals below the interval; and a Dask run (a LocalCluster of 2
worker processes x 2 threads, 4 partitions) of 2,000 URLs over 40 loopback hosts through the Redis
store, against the same bound.
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


def _transport_worker(spec: str, urls: list[str], interval: float, barrier) -> None:
    from paperfetch import HttpClient

    client = HttpClient(state=spec, delay_min_s=interval, delay_max_s=interval, max_retries=0)
    barrier.wait(120)
    answers = client.get_many(urls)
    bad = [a for a in answers if getattr(a, "status_code", None) != 200]
    if bad:
        raise SystemExit(f"{len(bad)} requests failed: {bad[:3]}")
    client.close()


def _servers(count: int, first_ip: int):
    from paperfetch.testing import LoopbackHost, Reply

    return [LoopbackHost(f"127.0.{first_ip // 250}.{first_ip % 250 + i + 1}", {"*": Reply(200, b"x" * 256)}).start()
            for i in range(count)]


def _judge(servers, t0: float, per_host: int, interval: float) -> tuple[float, float, int]:
    from paperfetch.testing import gaps

    makespan = max(max(server.arrivals("/item")) for server in servers) - t0
    below = sum(gap < interval for server in servers for gap in gaps(sorted(server.arrivals("/item"))))
    return makespan, per_host * interval, below


def transport_batch(spec: str, *, processes: int = 4, hosts: int = 8, per_host: int = 30,
                    interval: float = 0.05) -> tuple[float, float, int]:
    """4 processes of ``HttpClient(state=spec).get_many`` share 8 hosts' items: (makespan, bound, arrivals below)."""
    servers = _servers(hosts, 130)
    try:
        items = [servers[h].url(f"/item/{n}") for n in range(per_host) for h in range(hosts)]
        random.Random(1).shuffle(items)
        context = multiprocessing.get_context("spawn")
        barrier = context.Barrier(processes + 1)
        workers = [context.Process(target=_transport_worker, args=(spec, items[p::processes], interval, barrier))
                   for p in range(processes)]
        for worker in workers:
            worker.start()
        barrier.wait(120)
        t0 = time.monotonic()
        for worker in workers:
            worker.join()
        if any(worker.exitcode for worker in workers):
            raise RuntimeError("a batch process failed")
        return _judge(servers, t0, per_host, interval)
    finally:
        for server in servers:
            server.stop()


def _dask_partition(urls: list[str], spec: str, interval: float) -> int:
    from paperfetch import HttpClient

    client = HttpClient(state=spec, delay_min_s=interval, delay_max_s=interval, max_retries=0)
    answers = client.get_many(urls)
    client.close()
    return sum(getattr(a, "status_code", None) == 200 for a in answers)


def dask_batch(spec: str, *, hosts: int = 40, per_host: int = 50, interval: float = 0.05,
               partitions: int = 4) -> tuple[float, float, int, int]:
    """2,000 URLs over 40 hosts on a Dask LocalCluster through *spec*: (makespan, bound, below, ok)."""
    from dask.distributed import Client, LocalCluster

    servers = _servers(hosts, 140)
    cluster = LocalCluster(n_workers=2, threads_per_worker=2, processes=True, host="127.0.0.1",
                           dashboard_address=None, memory_limit=0)
    try:
        with Client(cluster) as client:
            client.submit(_dask_partition, [], spec, interval).result()  # workers import paperfetch first
            items = [servers[h].url(f"/item/{n}") for n in range(per_host) for h in range(hosts)]
            random.Random(2).shuffle(items)
            t0 = time.monotonic()
            futures = [client.submit(_dask_partition, items[p::partitions], spec, interval, pure=False)
                       for p in range(partitions)]
            ok = sum(f.result() for f in futures)
        makespan, bound, below = _judge(servers, t0, per_host, interval)
        return makespan, bound, below, ok
    finally:
        cluster.close()
        for server in servers:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--only-transport", action="store_true", help="only the runs through HttpClient and Dask")
    args = parser.parse_args()
    from tests._services import RedisServer

    folder = Path(tempfile.mkdtemp(prefix="paperfetch-bench-"))
    server = RedisServer().start()
    try:
        specs = {"memory": "memory", "sqlite": f"sqlite:///{folder}/state.sqlite3", "redis": server.url}
        if args.only_transport:
            return _transport_figures(specs, folder, server)
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
        _transport_figures(specs, folder, server)
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def _transport_figures(specs: dict[str, str], folder: Path, server) -> None:
    import redis

    print("\nthrough the transport: 4 processes x HttpClient(state=...).get_many, 8 loopback hosts x 30 requests, "
          "interval 50 ms (bound 1.50 s):")
    for name in ("memory", "sqlite", "redis"):
        spec = specs[name] if name != "sqlite" else f"sqlite:///{folder}/transport.sqlite3"
        if name == "redis":
            redis.Redis.from_url(spec).flushdb()
        makespan, bound, below = transport_batch(spec)
        print(f"  {name:7} makespan {makespan:5.2f} s ({makespan / bound:4.2f}x the bound), arrivals below the interval: {below}")
    print("\nDask LocalCluster (2 processes x 2 threads, 4 partitions), 2,000 URLs over 40 loopback hosts, Redis store:")
    for interval in (0.05, 0.1):
        redis.Redis.from_url(specs["redis"]).flushdb()
        makespan, bound, below, ok = dask_batch(specs["redis"], interval=interval)
        print(f"  interval {interval * 1e3:3.0f} ms: makespan {makespan:5.2f} s ({makespan / bound:4.2f}x the bound {bound:.2f} s), "
              f"arrivals below the interval: {below}, answered 200: {ok}")


if __name__ == "__main__":
    main()
