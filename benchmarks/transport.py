"""Transport benchmark against loopback servers. Prints figures; asserts nothing.

    python benchmarks/transport.py [--requests 1000] [--paced 60]

1. Per-request overhead of ``HttpClient.get`` over a bare ``requests.Session``
   (median per-request time, ratio, same run, interleaved blocks; also with ``polite_mode=False``),
   and the median of the ratios of blocks run side by side (less sensitive to a machine whose load
   changes during the run), with its quartiles.
2. Pacing accuracy on a host whose robots.txt says ``Crawl-delay: 0.1``:
   server-side arrival gap minus the required 0.1 s (median, max, min), and the lateness:
   how much later than a bare ``requests.Session`` that sleeps the same gap (Crawl-delay plus
   ``pacing_margin_s``) after each answer, measured in the same run. The baseline's own excess
   is what loopback and a sleep cost any client (the server reads the request after the
   client sends it, and the gap runs from the previous answer, not from its arrival).
3. 1,000 calls to a host that answered 503 with ``Retry-After: 30``:
   requests that reached the server, total time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import requests

from paperfetch import HttpClient, defaults, is_synthetic
from paperfetch.http.hosts import HostRegistry
from paperfetch.testing import LoopbackHost, Reply, gaps


def overhead(n: int) -> None:
    with LoopbackHost("127.0.0.2", {"*": Reply(200, b"x" * 512)}) as host:
        session = requests.Session()
        client = HttpClient(registry=HostRegistry())
        raw = HttpClient(registry=HostRegistry(), polite_mode=False)
        url = host.url("/item")
        for _ in range(20):  # warm the connection pools
            session.get(url)
            client.get(url)
            raw.get(url)
        runs: dict[str, list[float]] = {"bare": [], "polite": [], "unpaced": []}
        rounds: list[tuple[float, float]] = []  # per round: (polite, unpaced) over bare, blocks side by side
        block = 10
        for _ in range(max(1, n // block)):
            medians = {}
            for name, fn in (("bare", session.get), ("polite", client.get), ("unpaced", raw.get)):
                times = []
                for _ in range(block):
                    t0 = time.perf_counter()
                    fn(url)
                    times.append(time.perf_counter() - t0)
                runs[name] += times
                medians[name] = statistics.median(times)
            rounds.append((medians["polite"] / medians["bare"], medians["unpaced"] / medians["bare"]))
        b, p, r = (statistics.median(runs[name]) for name in ("bare", "polite", "unpaced"))
        print(f"overhead: requests.Session median {b * 1e6:.0f} us, HttpClient.get median {p * 1e6:.0f} us "
              f"over {len(runs['polite'])} requests each -> ratio {p / b:.2f} (polite_mode=False: {r * 1e6:.0f} us, "
              f"ratio {r / b:.2f})")
        polite, unpaced = ([q[i] for q in rounds] for i in (0, 1))
        print(f"overhead: per round of {block} requests each, side by side: ratio median {statistics.median(polite):.3f} "
              f"(quartiles {_quartiles(polite)}), polite_mode=False {statistics.median(unpaced):.3f} "
              f"(quartiles {_quartiles(unpaced)})")


def _quartiles(values: list[float]) -> str:
    q1, _, q3 = statistics.quantiles(values, n=4)
    return f"{q1:.3f}-{q3:.3f}"


def pacing(n: int) -> None:
    delay, margin = 0.1, defaults.PACING_MARGIN_S
    routes = {"/robots.txt": Reply(200, f"User-agent: *\nCrawl-delay: {delay}\n"), "*": Reply(200, b"%PDF-1.4 ok")}
    with LoopbackHost("127.0.0.3", routes) as host, LoopbackHost("127.0.0.5", routes) as plain:
        client = HttpClient(respect_robots_txt=True, registry=HostRegistry())
        for i in range(n):
            client.get(host.url(f"/p/{i}"))
        session = requests.Session()  # the baseline: the same gap after each answer, by a plain sleep
        for i in range(n):
            session.get(plain.url(f"/p/{i}"))
            time.sleep(delay + margin)
        excess = [g - delay for g in gaps(host.arrivals("/p/"))]
        base = [g - delay for g in gaps(plain.arrivals("/p/"))]
        print(f"pacing: Crawl-delay {delay:g} s, {len(excess) + 1} requests: gap - required: "
              f"median {statistics.median(excess) * 1e3:.2f} ms, "
              f"max {max(excess) * 1e3:.2f} ms, min {min(excess) * 1e3:.2f} ms "
              f"({'no gap below the floor' if min(excess) >= 0 else 'GAP BELOW THE FLOOR'})")
        late = statistics.median(excess) - statistics.median(base)
        ratio = (delay + statistics.median(excess)) / (delay + statistics.median(base))
        print(f"pacing: requests.Session sleeping {delay:g} s + pacing_margin_s {margin * 1e3:g} ms after each answer: "
              f"gap - required: median {statistics.median(base) * 1e3:.2f} ms, min {min(base) * 1e3:.2f} ms "
              f"-> HttpClient lateness {late * 1e3:.2f} ms on median (gap ratio {ratio:.3f})")


def held_host(calls: int) -> None:
    with LoopbackHost("127.0.0.4", {"*": Reply(503, b"busy", {"Retry-After": "30"})}) as host:
        client = HttpClient(registry=HostRegistry(), max_retry_after_s=5.0)
        t0 = time.perf_counter()
        synthetic = 0
        for i in range(calls):
            response = client.get(host.url(f"/item/{i}"))
            synthetic += bool(is_synthetic(response))
        elapsed = time.perf_counter() - t0
        print(f"held host: {calls} calls to a host that answered 503 Retry-After: 30 -> {host.hits()} request(s) sent, "
              f"{synthetic} answered without a request, total {elapsed * 1e3:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--paced", type=int, default=60)
    args = parser.parse_args()
    overhead(args.requests)
    pacing(args.paced)
    held_host(1000)


if __name__ == "__main__":
    main()
