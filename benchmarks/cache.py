"""Metadata cache benchmark. Prints figures; asserts nothing.

    python benchmarks/cache.py [--items 2000] [--batch 40]

1. Lookup overhead per item, in µs, of :class:`paperfetch.cache.CachedFetcher` over the bare fetcher it
   wraps (an in-process fetcher answering a 2 kB JSON body at once, so only the cache's own cost is
   measured): a miss (look up + store) and a hit (look up + rebuild the response), against a no-cache
   baseline of the same run; the SQLite file is on disk (the real setting).
2. A batch of DOIs from the demo world (loopback servers), run twice with a cache and twice without:
   metadata requests the servers logged in each run, and wall time of the run.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import requests

from paperfetch.cache import CachedFetcher, MetadataCache

BODY = (b'{"doi": "10.5555/x", "title": "' + b"t" * 1900 + b'"}')


class InstantFetcher:
    def fetch(self, url, *, classify=None, params=None, headers=None):  # noqa: ANN001, ANN201
        response = requests.Response()
        response.status_code, response._content, response.url = 200, BODY, url
        response.headers["Content-Type"] = "application/json"
        return response


def lookup_overhead(items: int) -> None:
    urls = [f"https://api.example.org/works/10.5555/{i}" for i in range(items)]
    params = {"mailto": "you@uni.example"}
    with tempfile.TemporaryDirectory() as tmp:
        cache = MetadataCache(Path(tmp) / "bench.sqlite")
        bare, cached = InstantFetcher(), CachedFetcher(InstantFetcher(), cache)

        def per_item(fn) -> float:  # noqa: ANN001
            t0 = time.perf_counter()
            for url in urls:
                fn(url, params=params)
            return (time.perf_counter() - t0) / items * 1e6

        baseline = [per_item(bare.fetch) for _ in range(3)]
        miss = per_item(cached.fetch)  # every URL new: look up, ask the fetcher, store
        hits = [per_item(cached.fetch) for _ in range(3)]
        cache.close()
    base = statistics.median(baseline)
    hit = statistics.median(hits)
    print(f"1. cache lookup overhead, {items} items, SQLite on disk")
    print(f"   no cache (baseline)   {base:8.1f} µs/item")
    print(f"   miss (lookup + store) {miss:8.1f} µs/item   (+{miss - base:.1f} µs, x{miss / base:.1f} of baseline)")
    print(f"   hit  (lookup + read)  {hit:8.1f} µs/item   (+{hit - base:.1f} µs over the baseline, which sends nothing;")
    print("                                           a real request to a metadata service is paced at 100-340 ms)")


def demo_runs(batch: int) -> None:
    from paperfetch import Retriever
    from paperfetch.demo import DemoWorld
    from paperfetch.demo.world import PAPERS

    dois = [p.doi for p in PAPERS][:batch]
    metadata = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi")

    def logged(world: DemoWorld) -> int:
        return sum(1 for name in metadata for _, path in world.hosts[name].log if not path.startswith(("/articles/", "/robots.txt")))

    print(f"\n2. the same {len(dois)} DOIs twice against the demo world (metadata requests from the servers' logs)")
    with DemoWorld(base_ip=200) as world, tempfile.TemporaryDirectory() as tmp:
        for label, cache in (("no cache", False), ("cache", Path(tmp) / "c.sqlite")):
            for run in (1, 2):
                before = logged(world)
                t0 = time.perf_counter()
                with Retriever(email="you@uni.example", out_dir=Path(tmp) / f"{label}-{run}", endpoints=world.endpoints,
                               progress=False, verbosity=0, cache=cache, delay_min_s=0.05, delay_max_s=0.1,
                               http_options={"rate_limit_min_s": 0.05, "rate_limit_max_s": 0.1, "network_retry_base_s": 0.05}) as r:
                    r.download(dois)
                print(f"   {label:<8} run {run}: {logged(world) - before:3d} metadata requests, {time.perf_counter() - t0:6.2f} s")


def main() -> None:
    import logging

    logging.getLogger("paperfetch").setLevel(logging.ERROR)  # the demo's wrong article warns on every run
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=40)
    args = parser.parse_args()
    lookup_overhead(args.items)
    demo_runs(args.batch)


if __name__ == "__main__":
    main()
