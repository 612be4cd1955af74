"""Benchmark: what the live dashboard costs a batch, with versus without, in the same run.

    python benchmarks/dashboard.py                 # 8 hosts x 150 URLs, 15 rounds (~1 min)
    python benchmarks/dashboard.py --quick         # 4 hosts x 100 URLs, 7 rounds
    python benchmarks/dashboard.py --hosts 16 --per-host 200 --rounds 11

The batch: ``--hosts`` loopback hosts (127.0.3.1, 127.0.3.2, ...) answering 200 with a
1 KB body at once, ``--per-host`` URLs each, fetched through a
:class:`~paperfetch.http.batch.HostScheduler` over one :class:`~paperfetch.HttpClient` with no
pacing (``delay_min_s = delay_max_s = 0``), so the batch is as fast as the client's CPU
allows and any cost of the dashboard shows in the wall time. Each request publishes two
events (REQUEST, RESPONSE) and each job one completion: thousands of events per run.

The scheduler gets one worker per host (``--workers``): with at most one request in flight
per host, more threads only add GIL churn, and noise. Three variants run in turn, round after
round (the order rotates every round), each with a fresh host registry and a warm connection
pool:

* ``bare`` — nothing listens; the transport does not even build its events;
* ``listener`` — one subscriber that does nothing: what a Retriever already pays, since
  it always listens (for ``Retriever.requests()``);
* ``dashboard`` — a :class:`~paperfetch.dashboard.DashboardModel` subscribed to the client,
  tracking the scheduler's queues and told of every finished job, plus a
  :class:`~paperfetch.dashboard.Dashboard` (ipywidgets, built for real) redrawing from
  snapshots on its timer, 4 times a second.

Printed: the median wall time and the client process's CPU time (all its threads) of each
variant; the ratios dashboard/bare, dashboard/listener and listener/bare, both of the medians
and as the median of each round's own ratio (its runs are seconds apart, so a change in the
machine's load between rounds cancels out); the redraws per run. Then the *accounted* cost:
each thing the dashboard adds (one event into the model, one completion, one snapshot, one
redraw, building an event at all) timed alone, multiplied by how often a run does it, over the
bare run's CPU. On a shared machine the runs' own ratios spread by several percent either
way; the accounted figure is the steady one. The HTTP servers run in a child process, so that
their work does not compete with the client for the GIL. Nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BODY = b"%PDF-1.4\n" + b"0" * 1000 + b"\n%%EOF\n"


# ---------------------------------------------------------------------- the servers (child process)
def serve(conn: Any, addresses: list[str]) -> None:
    from paperfetch.testing import LoopbackHost, Reply

    servers = [LoopbackHost(a, {"*": Reply(200, BODY, {"Content-Type": "application/pdf"})}).start() for a in addresses]
    conn.send([s.base_url for s in servers])
    conn.recv()  # "stop"
    for server in servers:
        server.stop()
    conn.send(True)


class World:
    def __init__(self, hosts: int) -> None:
        addresses = [f"127.0.3.{i + 1}" for i in range(hosts)]
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(target=serve, args=(child, addresses), daemon=True)
        self._process.start()
        self.bases: list[str] = self._conn.recv()

    def close(self) -> None:
        try:
            self._conn.send("stop")
            self._conn.recv()
        finally:
            self._process.join(5)
            if self._process.is_alive():
                self._process.kill()


# ---------------------------------------------------------------------- the batch
class GetJob:
    __slots__ = ("url", "client", "status")

    def __init__(self, client: Any, url: str) -> None:
        self.url: str | None = url
        self.client = client
        self.status: int | None = None

    def advance(self) -> None:
        response = self.client.get(self.url)
        self.status = response.status_code
        response.close()
        self.url = None


def run_once(variant: str, urls: list[str], session: Any, workers: int | None = None) -> dict[str, Any]:
    from paperfetch import HttpClient
    from paperfetch.dashboard import Dashboard, DashboardModel
    from paperfetch.http.hosts import HostRegistry
    from paperfetch.http.scheduler import HostScheduler

    client = HttpClient(registry=HostRegistry(), session=session, delay_min_s=0, delay_max_s=0, verbosity=0)
    model = view = None
    on_finished = None
    unsubscribe = None
    if variant == "listener":
        unsubscribe = client.subscribe(lambda event: None)
    elif variant == "dashboard":
        model = DashboardModel().watch(client)

        def on_finished(job: GetJob) -> None:
            model.item_finished("downloaded" if job.status == 200 else "http_error")

    jobs = [GetJob(client, url) for url in urls]
    scheduler = HostScheduler(client, workers=workers, on_finished=on_finished)
    t0 = time.perf_counter()
    c0 = time.process_time()
    if model is not None:
        model.start(len(jobs))
        model.track(scheduler)
        view = Dashboard(model, interval_s=0.25, autostart=True)
    scheduler.run(jobs)
    if model is not None:
        model.finish()
        view.close()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    if unsubscribe is not None:
        unsubscribe()
    assert all(job.status == 200 for job in jobs), "every request should have succeeded"
    result: dict[str, Any] = {"wall": wall, "cpu": cpu, "requests": client.requests_sent}
    if view is not None:
        snap = model.snapshot()
        assert snap.done == len(jobs) and snap.requests == len(jobs), (snap.done, snap.requests)
        result["redraws"] = view.redraws
    return result


def unit_costs(urls: list[str]) -> dict[str, float]:
    """Microseconds per call of what the dashboard adds, timed in isolation (medians of 7 blocks)."""
    from paperfetch.dashboard import Dashboard, DashboardModel
    from paperfetch.http.events import Event, EventKind
    from paperfetch.redact import redact_url

    hosts = [url.split("//")[1].split("/")[0] for url in urls]
    now = time.time()
    events = [Event(EventKind.REQUEST if i % 2 == 0 else EventKind.RESPONSE, hosts[i // 2], now,
                    status=None if i % 2 == 0 else 200) for i in range(2 * len(urls))]

    def median_us(fn: Any, count: int) -> float:
        times = []
        for _ in range(7):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) / count * 1e6)
        return statistics.median(times)

    model = DashboardModel()
    model.start(len(urls))
    costs = {
        "event": median_us(lambda: [Event(EventKind.REQUEST, h, time.time(), redact_url(u)) for h, u in zip(hosts, urls)], len(urls)),
        "on_event": median_us(lambda: [model.on_event(e) for e in events], len(events)),
        "item_finished": median_us(lambda: [model.item_finished("downloaded") for _ in urls], len(urls)),
    }
    view = Dashboard(model, autostart=False)
    costs["snapshot"] = median_us(lambda: [model.snapshot() for _ in range(50)], 50)
    snap = model.snapshot()
    costs["redraw"] = median_us(lambda: [view._redraw(snap) for _ in range(50)], 50)
    return costs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--per-host", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--workers", type=int, default=None, help="worker threads (default: one per host)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.hosts, args.per_host, args.rounds = 4, 100, 7
    workers = args.workers or args.hosts  # one request in flight per host: more threads only add GIL churn

    import requests
    from requests.adapters import HTTPAdapter

    world = World(args.hosts)
    try:
        urls = [f"{base}/pdf/{i}.pdf" for i in range(args.per_host) for base in world.bases]  # hosts interleaved
        session = requests.Session()
        adapter = HTTPAdapter(pool_connections=64, pool_maxsize=64)
        session.mount("http://", adapter)
        variants = ["bare", "listener", "dashboard"]
        run_once("bare", urls[: 20 * args.hosts], session, workers)  # warm the pools and the imports
        run_once("dashboard", urls[: 20 * args.hosts], session, workers)
        walls: dict[str, list[float]] = {v: [] for v in variants}
        cpus: dict[str, list[float]] = {v: [] for v in variants}
        redraws: list[int] = []
        for r in range(args.rounds):
            order = variants[r % 3:] + variants[: r % 3]
            for variant in order:
                result = run_once(variant, urls, session, workers)
                walls[variant].append(result["wall"])
                cpus[variant].append(result["cpu"])
                if "redraws" in result:
                    redraws.append(result["redraws"])
            print(f"round {r + 1}/{args.rounds}: "
                  + ", ".join(f"{v} {walls[v][-1]:.3f}s ({cpus[v][-1]:.3f}s CPU)" for v in variants), flush=True)
        med = {v: statistics.median(walls[v]) for v in variants}
        cpu = {v: statistics.median(cpus[v]) for v in variants}
        n = len(urls)
        print()
        print(f"{n} requests over {args.hosts} hosts per run ({workers} workers), {args.rounds} rounds; "
              f"{2 * n} events + {n} completions per run")
        for v in variants:
            print(f"  {v:<10} wall median {med[v]:.3f}s ({n / med[v]:.0f} requests/s; min {min(walls[v]):.3f}s, "
                  f"max {max(walls[v]):.3f}s); client CPU median {cpu[v]:.3f}s ({cpu[v] / n * 1e6:.0f} us/request)")
        print("  ratios: of the medians, and the median of the rounds' own ratios [quartiles] (runs side by side")
        print("  in time, so a change in the machine's load between rounds cancels out)")
        print("                              wall                          client CPU")
        for a, b, note in (("dashboard", "bare", ""), ("dashboard", "listener", ""),
                           ("listener", "bare", "  (events built at all: a Retriever always pays this)")):
            cells = []
            for series, medians in ((walls, med), (cpus, cpu)):
                paired = sorted(x / y for x, y in zip(series[a], series[b]))
                q = statistics.quantiles(paired, n=4) if len(paired) > 1 else [paired[0]] * 3
                cells.append(f"{medians[a] / medians[b]:.3f}  {statistics.median(paired):.3f} [{q[0]:.3f}-{q[2]:.3f}]")
            print(f"  ratio {a} / {b}:{' ' * (21 - len(a) - len(b))}{cells[0]}   {cells[1]}{note}")
        print(f"  redraws per dashboard run: median {statistics.median(redraws):.0f} "
              f"(<= 4 per second of {med['dashboard']:.2f}s + initial + final)")
        costs = unit_costs(urls)
        per_run_redraws = statistics.median(redraws)
        added = (2 * costs["on_event"] + costs["item_finished"]) * n + per_run_redraws * (costs["snapshot"] + costs["redraw"])
        built = 2 * costs["event"] * n
        base = cpu["bare"] * 1e6
        print(f"  accounted: model {costs['on_event']:.2f} us per event, {costs['item_finished']:.2f} us per completion; "
              f"snapshot {costs['snapshot']:.0f} us, redraw {costs['redraw']:.0f} us ({args.hosts} hosts); "
              f"building an event {costs['event']:.2f} us")
        print(f"  accounted ratio dashboard / listener: {(base + built + added) / (base + built):.4f}; "
              f"dashboard / bare: {(base + built + added) / base:.4f} (of the bare run's median CPU)")
    finally:
        world.close()


if __name__ == "__main__":
    main()
