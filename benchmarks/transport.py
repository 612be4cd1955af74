"""Transport benchmark against loopback servers. Prints figures; asserts nothing.

    python benchmarks/transport.py [--requests 400] [--paced 60]

1. Per-request overhead of ``HttpClient.get`` over a bare ``requests.Session``
   (median per-request time, ratio, same run, interleaved blocks).
2. Pacing accuracy on a host whose robots.txt says ``Crawl-delay: 0.1``:
   server-side arrival gap minus the required 0.1 s (median, max, min).
3. 1,000 calls to a host that answered 503 with ``Retry-After: 30``:
   requests that reached the server, total time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import requests

from paperfetch import HttpClient, is_synthetic
from paperfetch.http.hosts import HostRegistry
from paperfetch.testing import LoopbackHost, Reply, gaps


def overhead(n: int) -> None:
    with LoopbackHost("127.0.0.2", {"*": Reply(200, b"x" * 512)}) as host:
        session = requests.Session()
        client = HttpClient(registry=HostRegistry())
        url = host.url("/item")
        for _ in range(20):  # warm both connection pools
            session.get(url)
            client.get(url)
        bare: list[float] = []
        polite: list[float] = []
        block = 25
        for _ in range(max(1, n // block)):
            for fn, sink in ((session.get, bare), (client.get, polite)):
                for _ in range(block):
                    t0 = time.perf_counter()
                    fn(url)
                    sink.append(time.perf_counter() - t0)
        b, p = statistics.median(bare), statistics.median(polite)
        print(f"overhead: requests.Session median {b * 1e6:.0f} us, HttpClient.get median {p * 1e6:.0f} us "
              f"over {len(polite)} requests each -> ratio {p / b:.2f}")


def pacing(n: int) -> None:
    routes = {"/robots.txt": Reply(200, "User-agent: *\nCrawl-delay: 0.1\n"), "*": Reply(200, b"%PDF-1.4 ok")}
    with LoopbackHost("127.0.0.3", routes) as host:
        client = HttpClient(respect_robots_txt=True, registry=HostRegistry())
        for i in range(n):
            client.get(host.url(f"/p/{i}"))
        excess = [g - 0.1 for g in gaps(host.arrivals("/p/"))]
        print(f"pacing: Crawl-delay 0.1 s, {len(excess) + 1} requests: gap - required: median {statistics.median(excess) * 1e3:.2f} ms, "
              f"max {max(excess) * 1e3:.2f} ms, min {min(excess) * 1e3:.2f} ms "
              f"({'no gap below the floor' if min(excess) >= 0 else 'GAP BELOW THE FLOOR'})")


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
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--paced", type=int, default=60)
    args = parser.parse_args()
    overhead(args.requests)
    pacing(args.paced)
    held_host(1000)


if __name__ == "__main__":
    main()
