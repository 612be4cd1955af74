"""Benchmark: a batch over many polite hosts, side by side (get_many) against one after another.

    python benchmarks/batch.py            # the publisher world, parallel and sequential (~50 s)
    python benchmarks/batch.py --quick    # a smaller world (~15 s)
    python benchmarks/batch.py --scale    # 10,000 URLs over 100 hosts: memory and CPU per request
    python benchmarks/batch.py --order shuffled   # the input order; the sequential loop follows it
    python benchmarks/batch.py --scale --pool 128 # what-if: a session keeping 128 host pools

Everything runs on loopback addresses (127.0.0.x, 127.0.1.x). The HTTP servers run in
a child process, so that their arrival stamps are not delayed by the client's threads
holding the GIL and the client's peak memory is the client's alone.

The world (default mode): eleven hosts on 127.0.0.11 … 127.0.0.21, each with its
robots.txt (``respect_robots_txt=True``) and a client paced at a fixed 0.1 s per host
(``delay_min_s = delay_max_s = 0.1``, so that a host's required interval is one
number, raised by its Crawl-delay):

========  ====  ===============================================================
host      URLs  behaviour
========  ====  ===============================================================
big         60  no Crawl-delay (0.1 s)
cd25        20  Crawl-delay 0.25
cd50        12  Crawl-delay 0.5
cd60        10  Crawl-delay 0.6
behind   10+10  Crawl-delay 0.3; 10 more URLs reach it through ``redir``
redir       10  302 to ``behind``
rl-ra        5  at most one request per 0.3 s, else 429 + ``Retry-After: 1``
rl-reset     5  at most one request per 0.3 s, else 429 + ``X-RateLimit-Reset`` (epoch)
flaky       12  its first three requests answer 503 without Retry-After
forbidden   10  403 for everything
robots      15  Crawl-delay 0.2, five of the URLs under a disallowed path
========  ====  ===============================================================

Figures, from each run's own server logs:

* **lower bound** — for each host, the sum over its consecutive served requests of the
  gap the politeness rules require: the host's interval (0.1 s or its Crawl-delay),
  raised after a response by the backoff it causes (replayed with the client's
  :class:`~paperfetch.http.delays.BackoffPolicy`) and by the wait it names
  (Retry-After, X-RateLimit-Reset); the largest over hosts. No schedule can finish
  sooner without breaking a rule.
* **violations** — gaps in a server's arrival log shorter than that required gap
  by more than 2 ms (how many of them are a host's first gap, the one after the
  request that opened the connection, is shown too).

The sequential run is a plain loop of ``client.get`` over the same URLs in the same
order, with a fresh host registry. In the default (grouped) order it needs the sum
over hosts; in a shuffled order the transport already overlaps part of the waits
(it only sleeps when the same host comes back too soon), so the speed-up is smaller.

``--scale``: 100 hosts on 127.0.1.1 … 127.0.1.100, 100 URLs each, 0.01 s per host,
no robots.txt, tiny bodies; first with jobs that keep only the status (what a
downloader that streams to disk keeps), then as ``get_many`` (every response kept).
``ru_maxrss`` is a lifetime peak, hence that order. The client's transport keeps 64
host pools (``HTTPAdapter(pool_connections=64)``); ``--pool N`` gives it a session
with N instead, to show what connection reuse over 100 hosts changes.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import resource
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n" + b"0" * 900 + b"\n%%EOF\n"
TINY_PDF = b"%PDF-1.4\n%%EOF\n"
TOLERANCE = 0.002
BASE_INTERVAL = 0.1
SCALE_INTERVAL = 0.01


# ---------------------------------------------------------------------- the servers (child process)
class Behaviour:
    """One host's answers, with a log of (arrival monotonic, path, status, wait asked in seconds)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.bases: dict[str, str] = {}
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.log: list[tuple[float, str, int, float]] = []
            self.last_ok: float | None = None
            self.count = 0

    def robots(self) -> Any:
        from paperfetch.testing import Reply

        spec = self.spec
        if spec["kind"] in ("ratelimit", "redirector", "flaky", "plain"):
            return Reply(404, b"no robots.txt")
        if spec["kind"] == "forbidden":
            return Reply(403, b"forbidden")
        lines = ["User-agent: *"]
        if spec.get("crawl_delay"):
            lines.append(f"Crawl-delay: {spec['crawl_delay']}")
        lines.append(f"Disallow: {spec.get('disallow', '')}")
        return Reply(200, "\n".join(lines) + "\n", {"Content-Type": "text/plain"})

    def answer(self, request: Any) -> tuple[Any, float]:
        from paperfetch.testing import Reply

        spec = self.spec
        kind = spec["kind"]
        body = TINY_PDF if spec.get("tiny") else PDF
        pdf = Reply(200, body, {"Content-Type": "application/pdf"})
        if request.path == "/robots.txt":
            return self.robots(), 0.0
        if kind == "forbidden":
            return Reply(403, b"forbidden"), 0.0
        if kind == "redirector":
            target = self.bases[spec["redirect_to"]] + request.path[len("/go"):]
            return Reply(302, b"", {"Location": target}), 0.0
        if kind == "flaky":
            self.count += 1
            if self.count <= spec["fail_first"]:
                return Reply(503, b"try later"), 0.0
            return pdf, 0.0
        if kind == "ratelimit":
            if self.last_ok is not None and request.arrived - self.last_ok < spec["limit_s"]:
                if spec["header"] == "retry-after":
                    return Reply(429, b"slow down", {"Retry-After": "1"}), 1.0
                reset = time.time() + 1.0
                return Reply(429, b"slow down", {"X-RateLimit-Reset": f"{reset:.3f}", "X-RateLimit-Remaining": "0"}), 1.0
            self.last_ok = request.arrived
            return pdf, 0.0
        return pdf, 0.0

    def __call__(self, request: Any) -> Any:
        with self.lock:
            reply, wait = self.answer(request)
            self.log.append((request.arrived, request.path, reply.status, wait))
        return reply


def serve(conn: Any, specs: list[dict[str, Any]]) -> None:
    """The child process: start every host, then answer 'reset', 'logs' and 'stop'."""
    from paperfetch.testing import LoopbackHost

    behaviours = {spec["name"]: Behaviour(spec) for spec in specs}
    servers = {spec["name"]: LoopbackHost(spec["address"], {"*": behaviours[spec["name"]]}).start() for spec in specs}
    bases = {name: server.base_url for name, server in servers.items()}
    for behaviour in behaviours.values():
        behaviour.bases = bases
    conn.send(bases)
    while True:
        command = conn.recv()
        if command == "reset":
            for behaviour in behaviours.values():
                behaviour.reset()
            conn.send(True)
        elif command == "logs":
            conn.send({name: list(b.log) for name, b in behaviours.items()})
        else:
            for server in servers.values():
                server.stop()
            conn.send(True)
            return


class World:
    """The child process of servers, seen from the benchmark."""

    def __init__(self, specs: list[dict[str, Any]]) -> None:
        self.specs = {spec["name"]: spec for spec in specs}
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(target=serve, args=(child, specs), daemon=True)
        self._process.start()
        self.bases: dict[str, str] = self._conn.recv()

    def reset(self) -> None:
        self._conn.send("reset")
        self._conn.recv()

    def logs(self) -> dict[str, list[tuple[float, str, int, float]]]:
        self._conn.send("logs")
        return self._conn.recv()

    def close(self) -> None:
        try:
            self._conn.send("stop")
            self._conn.recv()
        finally:
            self._process.join(5)
            if self._process.is_alive():
                self._process.kill()


# ---------------------------------------------------------------------- the worlds
def publisher_world(quick: bool) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Host specs and the URL plan [(host, path)]."""
    k = 3 if quick else 1  # --quick: a third of the URLs

    def n(count: int) -> int:
        return max(2, count // k)

    specs = [
        {"name": "big", "address": "127.0.0.11", "kind": "publisher", "urls": n(60)},
        {"name": "cd25", "address": "127.0.0.12", "kind": "publisher", "crawl_delay": 0.25, "urls": n(20)},
        {"name": "cd50", "address": "127.0.0.13", "kind": "publisher", "crawl_delay": 0.5, "urls": n(12)},
        {"name": "cd60", "address": "127.0.0.14", "kind": "publisher", "crawl_delay": 0.6, "urls": n(10)},
        {"name": "behind", "address": "127.0.0.15", "kind": "publisher", "crawl_delay": 0.3, "urls": n(10)},
        {"name": "redir", "address": "127.0.0.16", "kind": "redirector", "redirect_to": "behind", "urls": n(10)},
        {"name": "rl-ra", "address": "127.0.0.17", "kind": "ratelimit", "limit_s": 0.3, "header": "retry-after", "urls": n(5)},
        {"name": "rl-reset", "address": "127.0.0.18", "kind": "ratelimit", "limit_s": 0.3, "header": "reset-epoch", "urls": n(5)},
        {"name": "flaky", "address": "127.0.0.19", "kind": "flaky", "fail_first": 3, "urls": n(12)},
        {"name": "forbidden", "address": "127.0.0.20", "kind": "forbidden", "urls": n(10)},
        {"name": "robots", "address": "127.0.0.21", "kind": "publisher", "crawl_delay": 0.2, "disallow": "/private/",
         "urls": n(15), "disallowed": max(1, n(15) // 3)},
    ]
    plan: list[tuple[str, str]] = []
    for spec in specs:
        name = spec["name"]
        for i in range(spec["urls"]):
            if spec["kind"] == "redirector":
                plan.append((name, f"/go/via/{i}.pdf"))
            elif i < spec.get("disallowed", 0):
                plan.append((name, f"/private/{i}.pdf"))
            else:
                plan.append((name, f"/paper/{i}.pdf"))
    return specs, plan


def scale_world(hosts: int = 100, per_host: int = 100) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    specs = [{"name": f"h{i}", "address": f"127.0.1.{i}", "kind": "plain", "tiny": True, "urls": per_host}
             for i in range(1, hosts + 1)]
    plan = [(spec["name"], f"/paper/{j}.pdf") for j in range(per_host) for spec in specs]
    return specs, plan


# ---------------------------------------------------------------------- measuring
def required_gaps(log: list[tuple[float, str, int, float]], interval: float, client: Any) -> list[float]:
    """For each consecutive pair of served requests, the gap the politeness rules require."""
    from paperfetch.http.delays import BackoffPolicy

    policy = BackoffPolicy(client.backoff_base_s, client.backoff_multiplier, client.backoff_max_s, client.backoff_decay_s)
    backoff = 0.0
    floors = []
    for _, _, status, wait in log[:-1]:
        if status in (503, 504) or (status == 429 and wait <= 0):
            backoff = policy.increase(backoff)
        elif 200 <= status < 300 and backoff > 0:
            backoff = policy.decrease(backoff)
        floors.append(max(interval, backoff, wait))
    return floors


def analyse(world: World, client: Any, interval_of: dict[str, float]) -> dict[str, Any]:
    logs = world.logs()
    bound = 0.0
    busiest = ""
    violations: list[tuple[str, int, float, float]] = []
    served = {}
    for name, log in logs.items():
        log.sort()
        served[name] = len(log)
        if len(log) < 2:
            continue
        floors = required_gaps(log, interval_of[name], client)
        host_bound = sum(floors)
        if host_bound > bound:
            bound, busiest = host_bound, name
        for i, (floor, (a, b)) in enumerate(zip(floors, zip(log, log[1:]))):
            gap = b[0] - a[0]
            if gap < floor - TOLERANCE:
                violations.append((name, i, gap, floor))
    return {"bound": bound, "busiest": busiest, "violations": violations, "served": served}


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


POOL: int | None = None  # --pool: what-if, a session whose adapter keeps this many host pools


def make_client(scale: bool) -> Any:
    from paperfetch import HttpClient
    from paperfetch.http.hosts import HostRegistry

    interval = SCALE_INTERVAL if scale else BASE_INTERVAL
    session = None
    if POOL is not None:
        import requests
        from requests.adapters import HTTPAdapter

        session = requests.Session()
        adapter = HTTPAdapter(pool_connections=POOL, pool_maxsize=64)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
    return HttpClient(
        session=session,
        registry=HostRegistry(),
        respect_robots_txt=not scale,
        delay_min_s=interval,
        delay_max_s=interval,
        backoff_base_s=0.25,
        timeout=(5.0, 10.0),
        verbosity=0,
    )


def outcome(result: Any) -> Any:
    from paperfetch import is_synthetic

    if result is None or isinstance(result, BaseException):
        return result if result is None else type(result).__name__
    return (result.status_code, is_synthetic(result))


class StatusJob:
    """A job that keeps only the status of its response, as a downloader that streams to disk would."""

    __slots__ = ("url", "client", "result", "error")

    def __init__(self, client: Any, url: str) -> None:
        self.url: str | None = url
        self.client = client
        self.result: Any = None
        self.error: BaseException | None = None

    def advance(self) -> None:
        response = self.client.get(self.url)
        self.result = (response.status_code, None) if response is not None else None
        if response is not None:
            response.close()
        self.url = None


CONNECTS = [0]


def count_connections() -> None:
    """Count TCP connections the client opens (to see connection reuse)."""
    import socket

    original = socket.socket.connect

    def connect(self: Any, address: Any) -> Any:
        CONNECTS[0] += 1
        return original(self, address)

    socket.socket.connect = connect  # type: ignore[method-assign]


def run_parallel(world: World, urls: list[str], scale: bool, keep: bool = True) -> dict[str, Any]:
    from paperfetch.http.batch import _GetJob
    from paperfetch.http.scheduler import HostScheduler

    world.reset()
    client = make_client(scale)
    connects0 = CONNECTS[0]
    # what get_many does (keeping every response), keeping the scheduler for its stats
    jobs = [_GetJob(client, i, url, {}) if keep else StatusJob(client, url) for i, url in enumerate(urls)]
    scheduler = HostScheduler(client)
    cpu0 = time.process_time()
    started = time.perf_counter()
    scheduler.run(jobs)
    makespan = time.perf_counter() - started
    cpu = time.process_time() - cpu0
    results = [job.error if job.error is not None else job.result for job in jobs]
    return {"makespan": makespan, "cpu": cpu, "stats": scheduler.stats,
            "results": [r if isinstance(r, tuple) else outcome(r) for r in results],
            "client": client, "wire": client.requests_sent, "rss": rss_mb(), "connects": CONNECTS[0] - connects0}


def run_get_many(world: World, urls: list[str], scale: bool) -> dict[str, Any]:
    world.reset()
    client = make_client(scale)
    started = time.perf_counter()
    results = client.get_many(urls)
    return {"makespan": time.perf_counter() - started, "results": [outcome(r) for r in results], "client": client}


def run_sequential(world: World, urls: list[str], scale: bool) -> dict[str, Any]:
    world.reset()
    client = make_client(scale)
    results = []
    cpu0 = time.process_time()
    started = time.perf_counter()
    for url in urls:
        try:
            results.append(client.get(url))
        except Exception as exc:  # noqa: BLE001
            results.append(exc)
    makespan = time.perf_counter() - started
    return {"makespan": makespan, "cpu": time.process_time() - cpu0, "results": [outcome(r) for r in results],
            "client": client, "wire": client.requests_sent}


def describe_violations(violations: list[tuple[str, int, float, float]]) -> str:
    if not violations:
        return "0"
    first = sum(1 for _, i, _, _ in violations if i == 0)
    worst = max(violations, key=lambda v: v[3] - v[2])
    return (f"{len(violations)} ({first} of them the first gap of a host; worst {worst[0]} gap #{worst[1]}: "
            f"{worst[2] * 1000:.1f} ms < {worst[3] * 1000:.0f} ms)")


def report_parallel(title: str, par: dict[str, Any], pa: dict[str, Any], n: int, baseline_rss: float) -> None:
    stats = par["stats"]
    print(f"\n{title}")
    print(f"  makespan            {par['makespan']:8.2f} s")
    print(f"  lower bound         {pa['bound']:8.2f} s  (busiest host: {pa['busiest']}, {pa['served'][pa['busiest']]} requests)")
    print(f"  makespan / bound    {par['makespan'] / pa['bound']:8.3f}")
    print(f"  violations          {describe_violations(pa['violations'])}")
    print(f"  requests            {par['wire']} sent over {par['connects']} new connections, "
          f"{stats['requests_started']} jobs dispatched, {stats['workers']} workers")
    print(f"  peak RSS            {par['rss']:8.1f} MB (before: {baseline_rss:.0f} MB)")
    print(f"  CPU per URL         {par['cpu'] / n * 1e3:8.3f} ms process, {stats['scheduling_cpu_s'] / n * 1e6:.1f} µs scheduling "
          f"(total scheduling {stats['scheduling_cpu_s']:.3f} s, {stats['wakeups']} wake-ups)")
    print(f"  worker idle         {stats['worker_idle_s']:8.1f} s summed over workers")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a third of the URLs")
    parser.add_argument("--scale", action="store_true", help="10,000 URLs over 100 hosts; no sequential run")
    parser.add_argument("--order", choices=("grouped", "shuffled"), default="grouped",
                        help="input order (the sequential loop follows it): host after host (default), or shuffled")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pool", type=int, default=None,
                        help="what-if: give the client a session whose adapter keeps N host pools (the transport's is 64)")
    args = parser.parse_args(argv)
    global POOL
    POOL = args.pool
    count_connections()

    import paperfetch  # noqa: F401  (imported here so that the baseline RSS includes it)

    baseline_rss = rss_mb()
    specs, plan = scale_world() if args.scale else publisher_world(args.quick)
    if args.order == "shuffled":
        random.Random(args.seed).shuffle(plan)
    interval_of = {}
    for spec in specs:
        interval_of[spec["name"]] = max(SCALE_INTERVAL if args.scale else BASE_INTERVAL, spec.get("crawl_delay") or 0.0)

    world = World(specs)
    try:
        urls = [world.bases[name] + path for name, path in plan]
        print(f"world: {len(specs)} hosts, {len(urls)} URLs, order {args.order}; client RSS before: {baseline_rss:.0f} MB")

        n = len(urls)
        if args.scale:
            # first jobs that keep only a status (ru_maxrss is a lifetime peak: the smaller run goes first)
            lean = run_parallel(world, urls, args.scale, keep=False)
            report_parallel("parallel, jobs keeping only the status", lean, analyse(world, lean["client"], interval_of), n, baseline_rss)
        par = run_parallel(world, urls, args.scale)
        pa = analyse(world, par["client"], interval_of)
        report_parallel("parallel (HostScheduler, as get_many: every response kept)", par, pa, n, baseline_rss)
        if args.scale:
            ok = sum(1 for r in par["results"] if isinstance(r, tuple) and r[0] == 200)
            print(f"  200 responses       {ok} of {n}")
            return 0

        many = run_get_many(world, urls, args.scale)
        same_many = many["results"] == par["results"]
        print(f"\nget_many              {many['makespan']:8.2f} s; results equal to the scheduler run's: {same_many}")

        seq = run_sequential(world, urls, args.scale)
        sa = analyse(world, seq["client"], interval_of)
        print("\nsequential (a loop of client.get, fresh registry)")
        print(f"  makespan            {seq['makespan']:8.2f} s")
        print(f"  lower bound         {sa['bound']:8.2f} s  (busiest host: {sa['busiest']})")
        print(f"  makespan / bound    {seq['makespan'] / sa['bound']:8.3f}")
        print(f"  sum over hosts      {sum(sum(required_gaps(sorted(log), interval_of[h], seq['client'])) for h, log in world.logs().items() if len(log) > 1):8.2f} s of required gaps")
        print(f"  violations          {describe_violations(sa['violations'])}")
        print(f"  requests            {seq['wire']} sent")
        same = seq["results"] == par["results"]
        print(f"\nspeed-up parallel vs sequential: {seq['makespan'] / par['makespan']:.2f}x; same results: {same}")
        if not same:
            for i, (a, b) in enumerate(zip(par["results"], seq["results"])):
                if a != b:
                    print(f"  differs at {i} {urls[i]}: parallel {a}, sequential {b}")
    finally:
        world.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
