"""Benchmark: batches against misbehaving hosts, with the breaker and the learned interval, and without.

    python benchmarks/adverse.py            # every figure, each beside its baseline (~8 min)
    python benchmarks/adverse.py a c        # only some of them

Every host is a real HTTP server on a loopback address (127.0.0.x) in this process; each run
gets fresh ports and a fresh host registry, so no run inherits another's politeness state.
Each figure is measured twice: with the defaults ("breaker+learn") and with
``breaker_failures=0, learn_interval=False`` ("baseline": the transport before the breaker and
the learned interval). A baseline that would run for hours is stopped at a cap (closing the
client stops its batch) and reported as such.

(a) 200 URLs of a host answering every request 503 + ``Retry-After: 30``;
    ``HttpClient(respect_robots_txt=True).get_many(urls)``; then the same with ``max_retry_after_s=5``.
(b) a host whose robots.txt says ``Crawl-delay: 0.2`` but that enforces 0.5 s between accepted
    requests with 429 + ``Retry-After: 1``; 20 URLs.
(c) a host answering 503 + ``Retry-After: 3`` for its first 10 s, then 200; 20 URLs.
(d) three DOIs through the Retriever with every service unreachable (refused connections).
(e) three hosts saying ``Crawl-delay: 1`` but enforcing 1.5 s, refusing with 429 and
    ``RateLimit-Reset`` (seconds), ``X-RateLimit-Reset`` (epoch) or no header; 8 URLs each.
"""

from __future__ import annotations

import math
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paperfetch import HttpClient, Retriever, is_synthetic  # noqa: E402
from paperfetch.http.hosts import HostRegistry  # noqa: E402
from paperfetch.testing import LoopbackHost, Reply, gaps  # noqa: E402

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n" + b"0" * 900 + b"\n%%EOF\n"
OFF = {"breaker_failures": 0, "learn_interval": False}
MODES = (("breaker+learn", {}), ("baseline", OFF))


def client(options: dict[str, Any], **kwargs: Any) -> HttpClient:
    return HttpClient(registry=HostRegistry(), verbosity=0, **{**kwargs, **options})


def run_batch(c: HttpClient, urls: list[str], cap_s: float | None = None) -> tuple[list[Any], float, bool]:
    """``get_many`` through ``iter_many``; the client is closed (stopping the batch) after *cap_s*."""
    results: list[Any] = [None] * len(urls)
    answered = [False] * len(urls)
    timer = threading.Timer(cap_s, c.close) if cap_s else None
    started = time.monotonic()
    if timer:
        timer.start()
    try:
        for index, result in c.iter_many(urls):
            results[index] = result
            answered[index] = True
    finally:
        if timer:
            timer.cancel()
    elapsed = time.monotonic() - started
    capped = not all(answered)
    return [r if a else "unanswered" for r, a in zip(results, answered)], elapsed, capped


def status(result: Any) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, BaseException):
        return type(result).__name__
    if result is None:
        return "disallowed"
    return f"{result.status_code}{' (synthetic)' if is_synthetic(result) else ''}"


def line(mode: str, text: str) -> None:
    print(f"    {mode:<36} {text}")


# ---------------------------------------------------------------------- (a)
def figure_a() -> None:
    print("(a) 200 URLs, every request 503 + Retry-After: 30 (respect_robots_txt=True)")
    for extra, cap in (({}, 100.0), ({"max_retry_after_s": 5}, 100.0)):
        label = ", max_retry_after_s=5" if extra else ", defaults"
        for mode, options in MODES:
            with LoopbackHost("127.0.0.21", {"*": Reply(503, b"down", {"Retry-After": "30"})}) as host:
                urls = [host.url(f"/p/{i}") for i in range(200)]
                results, elapsed, capped = run_batch(client(options, respect_robots_txt=True, **extra), urls, cap)
                answered = sum(1 for r in results if r != "unanswered")
                line(mode + label,
                     f"requests to it {host.hits():3d}  answered {answered:3d}/200  "
                     f"{'stopped at the cap after' if capped else 'returned in'} {elapsed:6.1f} s")


# ---------------------------------------------------------------------- enforcing hosts
def enforcing(interval: float, refuse: Callable[[float], dict[str, str]]) -> tuple[Callable, list[tuple[float, int]]]:
    """A handler allowing one accepted request per *interval*; *refuse(wait)* gives the 429's headers."""
    state = {"last": None}
    log: list[tuple[float, int]] = []
    lock = threading.Lock()

    def handler(request):
        with lock:
            now = request.arrived
            last = state["last"]
            if last is not None and now - last < interval:
                log.append((now, 429))
                return Reply(429, b"slow down", refuse(interval - (now - last)))
            state["last"] = now
            log.append((now, 200))
            return Reply(200, PDF, {"Content-Type": "application/pdf"})

    return handler, log


def settled_violations(log: list[tuple[float, int]], interval: float) -> int:
    """Requests after the last 429 that came sooner than *interval* after the previous one."""
    times = [t for t, _ in sorted(log)]
    last_429 = max((i for i, (_, s) in enumerate(sorted(log)) if s == 429), default=-1)
    after = times[last_429 + 1:] if last_429 >= 0 else times
    return sum(1 for g in gaps(after) if g < interval - 0.002)


def figure_b() -> None:
    print("(b) Crawl-delay 0.2, the host enforces 0.5 s with 429 + Retry-After: 1; 20 URLs")
    for mode, options in MODES:
        handler, log = enforcing(0.5, lambda wait: {"Retry-After": str(max(1, math.ceil(wait)))})
        with LoopbackHost("127.0.0.22", {"/robots.txt": Reply(200, "User-agent: *\nCrawl-delay: 0.2\n"), "*": handler}) as host:
            c = client(options, respect_robots_txt=True)
            results, elapsed, _ = run_batch(c, [host.url(f"/p/{i}") for i in range(20)], 300)
            refused = sum(1 for _, s in log if s == 429)
            ok = sum(1 for r in results if status(r) == "200")
            learned = c.snapshot(host.url("/")).learned_interval_s
            line(mode, f"429s {refused:2d}  below 0.5 s after the last 429 {settled_violations(log, 0.5):2d}  "
                       f"200s {ok:2d}/20  learned {learned:.2f} s  {elapsed:5.1f} s")


def figure_c() -> None:
    print("(c) 503 + Retry-After: 3 for the host's first 10 s, then 200; 20 URLs")
    for mode, options in MODES:
        start: dict[str, float] = {}

        def handler(request):
            first = start.setdefault("t", request.arrived)
            if request.arrived - first < 10.0:
                return Reply(503, b"down", {"Retry-After": "3"})
            return Reply(200, PDF, {"Content-Type": "application/pdf"})

        with LoopbackHost("127.0.0.23", {"*": handler}) as host:
            results, elapsed, _ = run_batch(client(options), [host.url(f"/p/{i}") for i in range(20)], 300)
            ok = sum(1 for r in results if status(r) == "200")
            line(mode, f"downloaded {ok:2d}/20  requests {host.hits():3d}  {elapsed:5.1f} s")


def figure_d() -> None:
    print("(d) three DOIs, every service unreachable (connections refused)")
    names = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi_idconv", "ncbi_eutils", "arxiv", "doi")
    for mode, options in MODES:
        endpoints = {name: f"http://127.0.0.{40 + i}:9" for i, name in enumerate(names)}  # nothing listens there
        with tempfile.TemporaryDirectory() as out:
            r = Retriever(email="bench@uni.example", out_dir=out, endpoints=endpoints, progress=False, verbosity=0,
                          http_options=options)
            started = time.monotonic()
            frame = r.download(["10.5555/a.1", "10.5555/b.2", "10.5555/c.3"])
            elapsed = time.monotonic() - started
            r.close()
        statuses = ", ".join(sorted(set(frame["status"].astype(str))))
        says = sum("unreachable" in str(e) for e in frame["error"])
        line(mode, f"{elapsed:5.1f} s  statuses: {statuses}  rows saying 'unreachable': {says}/3")


def figure_e() -> None:
    print("(e) three hosts, Crawl-delay 1, enforcing 1.5 s; 429 with RateLimit-Reset / X-RateLimit-Reset / no header")
    kinds = {
        "RateLimit-Reset": lambda wait: {"RateLimit-Reset": str(max(1, math.ceil(wait)))},
        "X-RateLimit-Reset": lambda wait: {"X-RateLimit-Reset": str(math.ceil(time.time() + wait))},
        "no header": lambda wait: {},
    }
    for mode, options in MODES:
        hosts, logs = [], {}
        for i, (kind, refuse) in enumerate(kinds.items()):
            handler, log = enforcing(1.5, refuse)
            logs[kind] = log
            hosts.append(LoopbackHost(f"127.0.0.{24 + i}", {"/robots.txt": Reply(200, "User-agent: *\nCrawl-delay: 1\n"),
                                                           "*": handler}).start())
        try:
            urls = [h.url(f"/p/{n}") for n in range(8) for h in hosts]
            results, elapsed, capped = run_batch(client(options, respect_robots_txt=True), urls, 180)
            per_host = "  ".join(f"{kind}: {sum(1 for _, s in log if s == 429)}" for kind, log in logs.items())
            ok = sum(1 for r in results if status(r) == "200")
            line(mode, f"429s per host  {per_host}  200s {ok}/24  "
                       f"{'stopped at the cap after' if capped else 'returned in'} {elapsed:5.1f} s")
        finally:
            for h in hosts:
                h.stop()


FIGURES = {"a": figure_a, "b": figure_b, "c": figure_c, "d": figure_d, "e": figure_e}


def main(argv: list[str]) -> None:
    chosen = argv or list(FIGURES)
    for name in chosen:
        FIGURES[name]()
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
