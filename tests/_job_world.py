"""A loopback world for the background-job tests: OpenAlex knows every DOI, one publisher serves
every PDF and asks for ``Crawl-delay`` in its robots.txt, so the batch is bound by that one host."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

from paperfetch.demo import fake_pdf
from paperfetch.testing import LoopbackHost, Reply, Request


class JobWorld:
    """``with JobWorld(n=10, crawl_delay=1.0) as world:``; ``world.endpoints`` and ``world.dois``."""

    def __init__(self, n: int = 10, crawl_delay: float = 1.0, base_ip: int = 210) -> None:
        self.dois = [f"10.5555/job.{i}" for i in range(n)]
        self.crawl_delay = crawl_delay
        self.openalex = LoopbackHost(f"127.0.0.{base_ip}", {"*": self._openalex})
        self.publisher = LoopbackHost(f"127.0.0.{base_ip + 1}", {"*": self._publisher})

    def start(self) -> "JobWorld":
        self.openalex.start()
        self.publisher.start()
        return self

    def stop(self) -> None:
        self.openalex.stop()
        self.publisher.stop()

    def __enter__(self) -> "JobWorld":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def endpoints(self) -> dict[str, str]:
        return {"openalex": self.openalex.base_url}

    def retriever_code(self, out_dir: str) -> str:
        """The Python that makes this world's Retriever (for a kernel)."""
        return (f"Retriever(email='you@uni.example', out_dir={out_dir!r}, endpoints={self.endpoints!r}, "
                "sources=('openalex',), state='memory', verbosity=0, delay_min_s=0.0, delay_max_s=0.0, cache=False)")

    def requests_after(self, t: float) -> int:
        """Requests either server received after monotonic time *t* (the same clock in every process)."""
        return sum(1 for host in (self.openalex, self.publisher) for at, _ in list(host.log) if at > t)

    def pdf_paths_after(self, t: float) -> list[str]:
        return [p for at, p in list(self.publisher.log) if at > t and p.startswith("/pdf/")]

    def pdf_path(self, doi: str) -> str:
        return f"/pdf/{doi.split('/', 1)[1]}.pdf"

    def _publisher(self, request: Request) -> Reply:
        if request.path == "/robots.txt":
            return Reply(200, f"User-agent: *\nCrawl-delay: {self.crawl_delay}\n")
        return Reply(200, fake_pdf(request.path), {"Content-Type": "application/pdf"})

    def _work(self, doi: str) -> dict:
        pdf = self.publisher.url(self.pdf_path(doi))
        return {
            "id": "https://openalex.org/W0", "doi": f"https://doi.org/{doi}", "title": f"Paper {doi}",
            "display_name": f"Paper {doi}", "publication_year": 2020, "ids": {"doi": f"https://doi.org/{doi}"},
            "primary_location": {"source": {"display_name": "Journal of Jobs"}, "license": None},
            "open_access": {"is_oa": True, "oa_status": "gold", "oa_url": pdf},
            "best_oa_location": {"is_oa": True, "pdf_url": pdf, "landing_page_url": None, "license": "cc-by",
                                 "version": "publishedVersion",
                                 "source": {"type": "journal", "display_name": "Journal of Jobs"}},
            "locations": [],
        }

    def _openalex(self, request: Request) -> Reply:
        wanted = parse_qs(request.query).get("filter", [""])[0].removeprefix("doi:").split("|")
        results = [self._work(d.lower()) for d in wanted if d.lower() in self.dois]
        body = {"meta": {"count": len(results), "page": 1, "per_page": 50}, "results": results, "group_by": []}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})
