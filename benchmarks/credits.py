"""Requests and OpenAlex credits per 1,000 DOIs. Prints figures; asserts nothing.

    python benchmarks/credits.py [--dois 1000]

Part 1, through the real transport: 1,000 DOIs asked of a loopback OpenAlex stand-in three ways —
the batched OR-filter list query paperfetch sends (``/works?filter=doi:a|b|…&per-page=50``), the
free ``/works/doi:{doi}`` singleton (paperfetch's form for a lone DOI) and the old
``/works/https://doi.org/{doi}`` singleton. The stand-in bills each answer the way the recorded
2026 headers do (``X-RateLimit-Credits-Used``: 1 for a list page and for the doi.org singleton —
``fixtures/real/openalex/*.vcr.yaml`` — 0 for the ``doi:`` singleton, per the OpenAlex docs) and
sends ``X-RateLimit-Limit/-Remaining/-Reset``; the credits are read back from the client's
``domain_status()`` (``credits_left``), i.e. from the headers the transport read.

Part 2, without a network: the requests each of the default sources plans for the same 1,000
DOIs (``Source.requests_for``): the batched ones (OpenAlex, Semantic Scholar) ask per page, the
others per DOI (bioRxiv only for its own ``10.1101/`` and ``10.64898/`` DOIs).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from urllib.parse import parse_qs, unquote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paperfetch.config import Identification  # noqa: E402
from paperfetch.http.client import HttpClient  # noqa: E402
from paperfetch.ids import parse_identifier  # noqa: E402
from paperfetch.sources import SOURCES  # noqa: E402
from paperfetch.sources.base import RequestSpec, quote_path  # noqa: E402
from paperfetch.sources.openalex import OpenAlexSource  # noqa: E402
from paperfetch.testing import LoopbackHost, Reply, Request  # noqa: E402

#: A keyed day's budget, so that no way of asking runs out before the 1,000 DOIs are asked.
BUDGET = 100_000


class OpenAlexStandIn:
    """``/works`` on loopback, billing as OpenAlex does in 2026 and saying so in X-RateLimit-* headers."""

    def __init__(self) -> None:
        self.remaining = BUDGET
        self.lock = threading.Lock()
        self.host = LoopbackHost(routes={"*": self.serve})

    def serve(self, request: Request) -> Reply:
        if request.path == "/works":
            wanted = parse_qs(request.query).get("filter", [""])[0].removeprefix("doi:").split("|")
            body: dict = {"meta": {"count": len(wanted)}, "results": [self.work(d) for d in wanted if d]}
            cost = 1  # one list page, whatever its 50 results
        elif request.path.startswith("/works/doi:"):
            body, cost = self.work(unquote(request.path[len("/works/doi:"):])), 0  # the free singleton
        elif request.path.startswith("/works/https://doi.org/"):
            body, cost = self.work(unquote(request.path[len("/works/https://doi.org/"):])), 1  # the old form
        else:
            return Reply(404, b'{"error": "not found"}', {"Content-Type": "application/json"})
        with self.lock:
            self.remaining -= cost
            left = self.remaining
        return Reply(200, json.dumps(body).encode(), {
            "Content-Type": "application/json", "X-RateLimit-Limit": str(BUDGET), "X-RateLimit-Remaining": str(left),
            "X-RateLimit-Credits-Used": str(cost), "X-RateLimit-Reset": "43200"})

    @staticmethod
    def work(doi: str) -> dict:
        return {"id": "https://openalex.org/W1", "doi": f"https://doi.org/{doi}", "title": doi,
                "open_access": {"is_oa": False}, "locations": []}


def dois(n: int) -> list:
    return [parse_identifier(f"10.5555/credits.{i:05d}") for i in range(n)]


def ask(way: str, n: int) -> tuple[int, int]:
    """Ask a fresh stand-in for *n* DOIs the *way* named; (requests the server saw, credits the headers billed)."""
    stand_in = OpenAlexStandIn()
    with stand_in.host:
        source = OpenAlexSource(base_url=stand_in.host.base_url, identification=Identification())
        client = HttpClient(rate_limit_min_s=0.0, rate_limit_max_s=0.0, verbosity=0,
                            host_intervals={stand_in.host.base_url: 0.0})
        with client:
            ids = dois(n)
            if way == "batched":
                source.lookup(client, ids)  # paperfetch's own planning: pages of 50
            elif way == "doi:":
                for ident in ids:
                    source.lookup(client, [ident])  # a lone DOI: /works/doi:{doi}
            else:
                for ident in ids:
                    spec = RequestSpec(path=f"/works/https://doi.org/{quote_path(ident.value)}", params={}, ids=(ident,))
                    source.lookup_spec(client, spec)
            left = int(client.domain_status()["credits_left"].dropna().iloc[-1])
        return len(stand_in.host.log), BUDGET - left


def planned(n: int) -> dict[str, int]:
    """Requests each default source plans for *n* DOIs (a tenth of them bioRxiv's, as a mixed list might hold)."""
    ids = dois(n - n // 10) + [parse_identifier(f"10.1101/2026.01.{i:06d}") for i in range(n // 10)]
    identification = Identification(email="bench@paperfetch.invalid")
    counts = {}
    for name in ("openalex", "semanticscholar", "unpaywall", "europepmc", "biorxiv", "crossref"):
        source = SOURCES[name](identification=identification)
        counts[name] = len(source.requests_for(ids))
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dois", type=int, default=1000)
    n = parser.parse_args().dois
    print(f"OpenAlex, {n} DOIs through the transport (credits as the X-RateLimit-* headers billed them):")
    print(f"  {'way':<40} {'requests':>8} {'credits':>8}")
    for way, label in (("batched", "/works?filter=doi:a|b|... (50 a page)"), ("doi:", "/works/doi:{doi} singletons"),
                       ("doi.org", "/works/https://doi.org/{doi} (old)")):
        sent, billed = ask(way, n)
        print(f"  {label:<40} {sent:>8} {billed:>8}")
    print(f"\nrequests each source plans for {n} DOIs ({n // 10} of them bioRxiv's):")
    for name, count in planned(n).items():
        print(f"  {name:<16} {count:>6}")


if __name__ == "__main__":
    main()
