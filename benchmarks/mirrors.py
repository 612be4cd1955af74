"""Benchmark: papers with several equivalent copies, each fetched from the host that serves it soonest.

    python benchmarks/mirrors.py             # 184 papers over 9 hosts: T*, the fixed-order bound, both runs (~1.5 min)
    python benchmarks/mirrors.py --quick     # 92 papers (~45 s)
    python benchmarks/mirrors.py --no-fixed  # skip the fixed-order run (its bound is still printed)

The world: nine PDF hosts on 127.0.4.1 … 127.0.4.9, each with a robots.txt whose Crawl-delay is
between 0.1 and 0.5 s, and one of 15 s that holds copies (some listed first) but is never a paper's only copy
(``respect_robots_txt=True``: the host's interval is its Crawl-delay), and an
OpenAlex double on 127.0.4.20 whose batched ``/works?filter=doi:…`` answers list every copy of every
paper as an open ``publishedVersion`` location (so every copy is in the same version tier). Each paper
has 1–4 copies on distinct hosts; the first-listed copy piles most papers on the two slowest hosts.
The servers run in a child process (their arrival stamps are not delayed by the client's threads).
The Retriever runs with ``sources=["openalex"]``, ``state="memory"``, no metadata cache.

Figures, from the servers' logs:

* **T\\*** — the optimal makespan of the world: the least T such that every paper can be given one of
  its copies' hosts with host *h* starting at most ⌊T / I_h⌋ + 1 requests (binary search over the
  candidate values k·I_h, each tested with a max-flow, Dinic's algorithm, paper → eligible host →
  sink with capacity ⌊T / I_h⌋); robots.txt takes each host's first slot, so its first PDF starts at I_h.
* **fixed-order bound** — each paper on its first-listed copy: max over hosts of (papers − 1) · I_h.
* **achieved** — from the call to ``download()`` (the lookups and robots.txt included) to the last PDF
  request. The goal: ≤ 1.1 · T* + 1 s.
* **below interval** — gaps in a host's arrival log (robots.txt included) shorter than its
  Crawl-delay by more than 2 ms; **each paper once** — every paper got exactly one 200 for its PDF.

The **fixed-order** run is the same world with OpenAlex listing only each paper's first copy (every
paper has one copy: a fixed order, each paper's first copy). The **503 variant**: one of the two piled hosts
answers every PDF request with ``503 + Retry-After: 30`` for the first 30 s after its first request
(robots.txt stays 200); every paper on it has another copy, so T* is the world without that host. The **held
copy** case: four papers whose PDF and page are on the 503 host and whose open copy is elsewhere, known by its
landing page only (``citation_pdf_url``): after the 503 each is served from the other copy before the hold ends.
The **open breaker** case: the same four papers, the host answering a plain ``500`` (no Retry-After, so no hold)
with ``breaker_failures=1`` and a 30 s backoff: its first 500 opens its breaker until the probe, and each paper is
served from its other copy before then.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import tempfile
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n" + b"0" * 900 + b"\n%%EOF\n"
TOLERANCE = 0.002
MARGIN = 0.002  # the transport's pacing margin (defaults.PACING_MARGIN_S)
CRAWL_DELAYS = (0.5, 0.4, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 15.0)
SLOW_HOST = 8      # Crawl-delay 15 s: it holds copies (some listed first) but is never a paper's only copy
DOWN_HOST = 1      # the host of the 503 variant (the second pile)
DOWN_FOR_S = 30.0  # its 503 + Retry-After: 30 window, from its first PDF request


# ---------------------------------------------------------------------- the world
def make_world(papers: int, seed: int = 18) -> list[list[int]]:
    """Each paper's copies as host indices, the first-listed first."""
    rng = random.Random(seed)
    hosts = range(len(CRAWL_DELAYS))
    world = []
    for _ in range(papers):
        count = rng.choices((1, 2, 3, 4), weights=(2, 3, 3, 2))[0]
        first = rng.choices(hosts, weights=(62, 22, 2, 2, 3, 3, 3, 3, 4))[0]
        if count == 1 and first in (DOWN_HOST, SLOW_HOST):  # their papers all have another copy
            count = 2
        others = [h for h in hosts if h != first]
        rng.shuffle(others)
        world.append([first, *others[: count - 1]])
    return world


def doi(i: int) -> str:
    return f"10.5555/mirror.{i}"


# ---------------------------------------------------------------------- the servers (child process)
class PdfHost:
    def __init__(self, index: int, down_for: float, plain: bool = False) -> None:
        self.index, self.down_for, self.plain = index, down_for, plain
        self.lock = threading.Lock()
        self.log: list[tuple[float, str, int]] = []
        self.first: float | None = None

    def __call__(self, request: Any) -> Any:
        from paperfetch.testing import Reply

        with self.lock:
            if request.path == "/robots.txt":
                reply = Reply(200, f"User-agent: *\nCrawl-delay: {CRAWL_DELAYS[self.index]}\n", {"Content-Type": "text/plain"})
            elif request.path.startswith("/a/") and not self.down_for:  # a landing page naming its PDF
                page = f'<html><head><meta name="citation_pdf_url" content="/p/{request.path[3:]}.pdf"></head></html>'
                reply = Reply(200, page.encode(), {"Content-Type": "text/html"})
            else:
                self.first = request.arrived if self.first is None else self.first
                if request.arrived - self.first < self.down_for and self.plain:
                    reply = Reply(500, b"broken")  # no Retry-After: no hold, a failure towards the breaker
                elif request.arrived - self.first < self.down_for:
                    reply = Reply(503, b"down for maintenance", {"Retry-After": "30"})
                else:
                    reply = Reply(200, PDF, {"Content-Type": "application/pdf"})
            self.log.append((request.arrived, request.path, reply.status))
            return reply


def openalex(world: list[list[int]], bases: list[str], first_only: bool, pages: bool = False) -> Any:
    """The OpenAlex double; with *pages*, the first copy is a PDF and its landing page, the others pages only."""
    def work(i: int) -> dict[str, Any]:
        copies = world[i][:1] if first_only else world[i]
        locations = [{"is_oa": True, "pdf_url": f"{bases[h]}/p/{i}.pdf" if not (pages and n) else None,
                      "landing_page_url": f"{bases[h]}/a/{i}" if pages else None, "license": "cc-by",
                      "version": "publishedVersion", "source": {"type": "repository" if n else "journal"}}
                     for n, h in enumerate(copies)]
        return {"id": f"https://openalex.org/W{i}", "doi": f"https://doi.org/{doi(i)}", "title": f"Mirrored paper {i}",
                "publication_year": 2024, "ids": {"doi": f"https://doi.org/{doi(i)}"},
                "primary_location": {"source": {"display_name": "Mirror Journal"}},
                "open_access": {"is_oa": True, "oa_status": "gold", "oa_url": locations[0]["pdf_url"]},
                "best_oa_location": locations[0], "locations": locations}

    def serve(request: Any) -> Any:
        from paperfetch.testing import Reply

        wanted = parse_qs(request.query).get("filter", [""])[0].removeprefix("doi:").split("|")
        found = [work(int(d.rsplit(".", 1)[1])) for d in wanted if d.lower().startswith("10.5555/mirror.")]
        body = {"meta": {"count": len(found), "page": 1, "per_page": 50}, "results": found, "group_by": []}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    return serve


def serve(conn: Any, world: list[list[int]], first_only: bool, down: int | None, pages: bool = False,
          plain: bool = False) -> None:
    from paperfetch.testing import LoopbackHost, Reply

    hosts = [PdfHost(i, DOWN_FOR_S if i == down else 0.0, plain) for i in range(len(CRAWL_DELAYS))]
    servers = [LoopbackHost(f"127.0.4.{i + 1}", {"*": h}).start() for i, h in enumerate(hosts)]
    bases = [s.base_url for s in servers]
    servers.append(LoopbackHost("127.0.4.20", {"*": openalex(world, bases, first_only, pages)}).start())
    servers.append(LoopbackHost("127.0.4.21", {"*": Reply(404, b"not here")}).start())
    conn.send((bases, servers[-2].base_url, servers[-1].base_url))
    conn.recv()  # "logs"
    conn.send([list(h.log) for h in hosts])
    conn.recv()  # "stop"
    for server in servers:
        server.stop()
    conn.send(True)


# ---------------------------------------------------------------------- T*: binary search + max-flow
class Dinic:
    def __init__(self, n: int) -> None:
        self.graph: list[list[list[int]]] = [[] for _ in range(n)]  # edges [to, capacity, index of reverse]

    def add(self, a: int, b: int, cap: int) -> None:
        self.graph[a].append([b, cap, len(self.graph[b])])
        self.graph[b].append([a, 0, len(self.graph[a]) - 1])

    def flow(self, s: int, t: int) -> int:
        total = 0
        while True:
            level = [-1] * len(self.graph)
            level[s] = 0
            todo = deque([s])
            while todo:
                v = todo.popleft()
                for to, cap, _ in self.graph[v]:
                    if cap > 0 and level[to] < 0:
                        level[to] = level[v] + 1
                        todo.append(to)
            if level[t] < 0:
                return total
            it = [0] * len(self.graph)

            def push(v: int, f: int) -> int:
                if v == t:
                    return f
                while it[v] < len(self.graph[v]):
                    edge = self.graph[v][it[v]]
                    to, cap, rev = edge
                    if cap > 0 and level[to] == level[v] + 1:
                        got = push(to, min(f, cap))
                        if got:
                            edge[1] -= got
                            self.graph[to][rev][1] += got
                            return got
                    it[v] += 1
                return 0

            while True:
                got = push(s, 1 << 30)
                if not got:
                    break
                total += got


def capacity(horizon: float, interval: float, available_from: float = 0.0) -> int:
    """Requests a host can start by *horizon*: ⌊(T − available_from) / I⌋ + 1."""
    if horizon < available_from - 1e-9:
        return 0
    return int((horizon - available_from) / interval + 1e-9) + 1


def feasible(world: list[list[int]], intervals: list[float], horizon: float, available: list[float]) -> bool:
    n, m = len(world), len(intervals)
    g = Dinic(n + m + 2)
    s, t = n + m, n + m + 1
    for p, copies in enumerate(world):
        g.add(s, p, 1)
        for h in copies:
            g.add(p, n + h, 1)
    for h, interval in enumerate(intervals):
        g.add(n + h, t, capacity(horizon, interval, available[h]))
    return g.flow(s, t) == n


def optimal_makespan(world: list[list[int]], intervals: list[float], available: list[float] | None = None) -> float:
    available = available or [0.0] * len(intervals)
    candidates = sorted({a + k * i for i, a in zip(intervals, available) for k in range(len(world) + 1)})
    lo, hi = 0, len(candidates) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(world, intervals, candidates[mid], available):
            hi = mid
        else:
            lo = mid + 1
    return candidates[lo]


def fixed_order_bound(world: list[list[int]], intervals: list[float]) -> float:
    counts = [0] * len(intervals)
    for copies in world:
        counts[copies[0]] += 1
    return max((c - 1) * i for c, i in zip(counts, intervals) if c)


# ---------------------------------------------------------------------- a run
def run(world: list[list[int]], *, first_only: bool = False, down: int | None = None, pages: bool = False,
        plain: bool = False) -> dict[str, Any]:
    from paperfetch import Retriever

    ctx = multiprocessing.get_context("spawn")
    conn, child = ctx.Pipe()
    process = ctx.Process(target=serve, args=(child, world, first_only, down, pages, plain), daemon=True)
    process.start()
    bases, openalex_base, void = conn.recv()
    try:
        names = ("unpaywall", "crossref", "europepmc", "ncbi_idconv", "ncbi_eutils", "arxiv", "doi", "semanticscholar",
                 "biorxiv")
        endpoints = {"openalex": openalex_base, **{name: void for name in names}}
        with tempfile.TemporaryDirectory() as out:
            r = Retriever(email="bench@uni.example", out_dir=out, sources=["openalex"], endpoints=endpoints, progress=False,
                          verbosity=0, cache=False, state="memory", http_options={
                              "network_retry_base_s": 0.05,
                              # the plain 500s: one opens the breaker, shut for the backoff until its probe
                              **({"breaker_failures": 1, "backoff_base_s": DOWN_FOR_S} if plain else {})})
            started = time.monotonic()
            frame = r.download([doi(i) for i in range(len(world))])
            wall = time.monotonic() - started
            r.close()
        conn.send("logs")
        logs = conn.recv()
    finally:
        conn.send("stop")
        conn.recv()
        process.join(5)
    return analyse(world, logs, frame, wall, started)


def analyse(world: list[list[int]], logs: list[list[tuple[float, str, int]]], frame: Any, wall: float,
            first: float) -> dict[str, Any]:
    last = max((t for log in logs for t, path, _ in log if path != "/robots.txt"), default=first)
    below = 0
    for h, log in enumerate(logs):
        times = sorted(t for t, _, _ in log)
        below += sum(1 for a, b in zip(times, times[1:]) if b - a < CRAWL_DELAYS[h] - TOLERANCE)
    served: dict[int, int] = {}
    for log in logs:
        for _, path, status in log:
            if status == 200 and path.startswith("/p/"):
                paper = int(path[3:].split(".")[0])
                served[paper] = served.get(paper, 0) + 1
    once = sum(1 for i in range(len(world)) if served.get(i) == 1)
    per_host = [sum(1 for _, p, s in log if s == 200 and p.startswith("/p/")) for log in logs]
    downloaded = int((frame["status"] == "downloaded").sum())
    return {"makespan": last - first, "wall": wall, "below": below, "once": once, "downloaded": downloaded,
            "per_host": per_host, "copies": frame["copies"].tolist(), "5xx": sum(s >= 500 for log in logs for _, _, s in log)}


def report(label: str, result: dict[str, Any], n: int, goal: float | None = None) -> None:
    goal_text = "" if goal is None else f"  (goal <= {goal:5.2f} s: {'met' if result['makespan'] <= goal else 'NOT met'})"
    print(f"    {label:<26} achieved {result['makespan']:6.2f} s{goal_text}")
    print(f"    {'':<26} below interval {result['below']}  each paper once {result['once']}/{n}  "
          f"downloaded {result['downloaded']}/{n}  5xx {result['5xx']}  wall {result['wall']:.1f} s")
    print(f"    {'':<26} PDFs per host {result['per_host']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="92 papers instead of 184")
    parser.add_argument("--no-fixed", action="store_true", help="skip the fixed-order run")
    parser.add_argument("--no-503", action="store_true", help="skip the 503 variant")
    args = parser.parse_args(argv)
    n = 92 if args.quick else 184
    world = make_world(n)
    intervals = [d + MARGIN for d in CRAWL_DELAYS]
    robots_first = list(intervals)  # robots.txt takes each host's first slot: its first PDF starts one interval in
    t_star = optimal_makespan(world, intervals, robots_first)
    bound = fixed_order_bound(world, intervals)
    firsts = [sum(1 for c in world if c[0] == h) for h in range(len(intervals))]
    print(f"{n} papers, copies per paper {sorted({len(c) for c in world})}, {sum(len(c) for c in world)} copies, "
          f"first-listed copies per host {firsts}")
    print(f"Crawl-delays {list(CRAWL_DELAYS)}")
    print(f"    T* {t_star:.2f} s   fixed-order bound {bound:.2f} s ({bound / t_star:.1f} x T*)")
    goal = 1.1 * t_star + 1.0
    assigned = run(world)
    report("assigned", assigned, n, goal)
    if not args.no_fixed:
        fixed = run(world, first_only=True)
        report("fixed order (first copy)", fixed, n)
        print(f"    speed-up over the fixed order: {fixed['makespan'] / assigned['makespan']:.1f} x")
    if not args.no_503:
        available = list(robots_first)
        available[DOWN_HOST] = DOWN_FOR_S + intervals[DOWN_HOST]
        t_down = optimal_makespan(world, intervals, available)
        print(f"503 variant: host {DOWN_HOST} (Crawl-delay {CRAWL_DELAYS[DOWN_HOST]}) answers 503 + Retry-After: 30 "
              f"for its first {DOWN_FOR_S:.0f} s; {firsts[DOWN_HOST]} papers list it first")
        print(f"    T* {t_down:.2f} s (the host unavailable for {DOWN_FOR_S:.0f} s)")
        down = run(world, down=DOWN_HOST)
        report("assigned, 503 host", down, n, 1.1 * t_down + 1.0)
    if not args.no_503:
        held_copy_case(intervals)
    return 0


def held_copy_case(intervals: list[float]) -> None:
    """Four papers, each a PDF and its page on the 503 host and an open copy elsewhere known by its page only: after
    the 503 each goes to the copy that can start now (T*: the other host's page and PDF, after its robots.txt)."""
    world = [[DOWN_HOST, h] for h in (2, 3, 4, 5)]
    t_star = max(2 * intervals[h] for _, h in world)  # robots.txt, the page, then the PDF on each other host
    print(f"503 held copy: {len(world)} papers, each a PDF and page on host {DOWN_HOST} (503 + Retry-After: 30) and a page "
          f"elsewhere\n    T* {t_star:.2f} s")
    report("assigned, held copy", run(world, down=DOWN_HOST, pages=True), len(world), 1.1 * t_star + 1.0)
    print(f"500 open breaker: the same {len(world)} papers, host {DOWN_HOST} answering a plain 500 (no Retry-After) "
          f"that opens its breaker for {DOWN_FOR_S:.0f} s\n    T* {t_star:.2f} s")
    report("assigned, open breaker", run(world, down=DOWN_HOST, pages=True, plain=True), len(world), 1.1 * t_star + 1.0)


if __name__ == "__main__":
    sys.exit(main())
