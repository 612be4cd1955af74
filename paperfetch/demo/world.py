"""The demo world's servers: metadata services and publishers on loopback addresses (127.0.0.x), answering in
the real services' shapes (reduced to the fields paperfetch reads). docs/cli.md lists the publishers and outcomes.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import parse_qs, unquote

from paperfetch.demo import fulltext as _fulltext
from paperfetch.demo import research as _research
from paperfetch.demo import sources as _sources
from paperfetch.demo.sources import demo_pdf, fake_pdf
from paperfetch.settings import ENDPOINT_NAMES
from paperfetch.testing import LoopbackHost, Reply, Request

__all__ = ["DEMO_INPUTS", "DemoWorld", "fake_pdf"]


LANDING = """<!doctype html><html><head><title>{title}</title>
<meta name="citation_title" content="{title}">
<meta name="citation_pdf_url" content="{pdf}">
</head><body><h1>{title}</h1><p>Landing page.</p></body></html>"""

CHALLENGE = """<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="refresh" content="390"></head><body><div id="challenge-running">
Checking if the site connection is secure</div><script src="/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1"></script>
</body></html>"""


@dataclass(frozen=True)
class _Paper:
    doi: str
    title: str
    year: int
    journal: str
    publisher: str | None      # which publisher host serves its PDF (None: no open copy)
    via: str                   # "openalex" | "unpaywall" | "europepmc" | "landing" | "none"


PAPERS = [
    _Paper("10.5555/demo.fast", "A fast publisher's paper", 2021, "Journal of Fast Results", "fast", "openalex"),
    _Paper("10.5555/demo.fast2", "Another fast paper", 2022, "Journal of Fast Results", "fast", "openalex"),
    _Paper("10.5555/demo.slow1", "Slow but steady I", 2019, "Slow Letters", "slow", "unpaywall"),
    _Paper("10.5555/demo.slow2", "Slow but steady II", 2019, "Slow Letters", "slow", "unpaywall"),
    _Paper("10.5555/demo.slow3", "Slow but steady III", 2020, "Slow Letters", "slow", "unpaywall"),
    _Paper("10.5555/demo.limited", "Rate limits in practice", 2023, "Limited Review", "limited", "openalex"),
    _Paper("10.5555/demo.limited2", "Rate limits, again", 2023, "Limited Review", "limited", "openalex"),
    _Paper("10.5555/demo.forbidden", "Behind a locked door", 2018, "Forbidden Annals", "forbidden", "unpaywall"),
    _Paper("10.5555/demo.html", "A landing page in disguise", 2020, "HTML Quarterly", "html", "unpaywall"),
    _Paper("10.5555/demo.challenge", "Bots not welcome", 2021, "Challenge Journal", "challenge", "openalex"),
    _Paper("10.5555/demo.robots", "Disallowed by robots", 2017, "Robots Weekly", "robots", "openalex"),
    _Paper("10.5555/demo.held", "Come back tomorrow", 2022, "Held Proceedings", "held", "openalex"),
    _Paper("10.5555/demo.landing", "Only the landing page knows", 2016, "Landing Letters", "fast", "landing"),
    _Paper("10.5555/demo.gone", "Retracted and removed", 2014, "Gone Journal", "gone", "openalex"),
    _Paper("10.5555/demo.gone.retraction", "Retraction Note: Retracted and removed", 2024, "Gone Journal", None, "none"),
    _Paper("10.5555/demo.down", "A server that is down", 2013, "Down Journal", "down", "openalex"),
    _Paper("10.5555/demo.closed", "A closed-access paper", 2015, "Closed Journal", None, "none"),
    _Paper("10.5555/demo.pmc", "A paper in PubMed Central", 2020, "PMC Reports", "europepmc", "europepmc"),
    # the bioRxiv preprint's journal version (not an input): Unpaywall, which prefer="published" asks, has its copy
    _Paper("10.5555/demo.vor", "A preprint and its journal version", 2026, "Journal of Fast Results", "fast", "unpaywall"),
]
# the six recorded PubMed hits, served by the "press" publisher
PAPERS += [_Paper(p["doi"], p["title"], p["year"], p["journal"], "press", "openalex") for p in _research.science_papers()]
_BY_DOI = {p.doi: p for p in PAPERS}
#: Every synthetic paper's authors, as OpenAlex (one name a string) and Crossref (given/family, or ``name`` for an
#: organisation) answer: a person, a person with a particle, and a consortium in odd years.
_AUTHORS = (("Ada", "Lovelace"), ("Karin", "van der Berg"))


def _authors(paper: _Paper) -> list[tuple[str | None, str]]:
    return [*_AUTHORS, (None, "Demo Consortium")] if paper.year % 2 else list(_AUTHORS)
#: The robots.txt of the publishers that have one.
_ROBOTS = {"slow": "User-agent: *\nCrawl-delay: 0.5\n", "robots": "User-agent: *\nDisallow: /pdf/\n"}
#: The publishers that answer every other request the same way.
_REFUSALS = {"forbidden": Reply(403, b"<html><body>Forbidden</body></html>", {"Content-Type": "text/html"}),
             "gone": Reply(410, b"gone", {"Content-Type": "text/plain"}),
             "held": Reply(503, b"maintenance", {"Retry-After": "3600"})}
#: DOI → (PMID, PMCID) of the papers in PubMed Central.
_PMC_IDS = {doi: (str(pmid), pmcid) for pmcid, (doi, pmid, *_) in _sources.PMC_ARTICLES.items()}
#: Retracted papers: the notice's DOI and its date (OpenAlex says is_retracted, Crossref names the notice)
RETRACTED = {"10.5555/demo.gone": ("10.5555/demo.gone.retraction", (2024, 5, 1))}
_NOTICE_OF = {notice: paper for paper, (notice, _) in RETRACTED.items()}

#: The demo batch: every identifier type and every outcome.
DEMO_INPUTS: list[Any] = [
    "10.5555/demo.fast",
    "https://doi.org/10.5555/DEMO.FAST",      # a duplicate, written differently
    "doi:10.5555/demo.fast2",
    *(paper.doi for paper in PAPERS[2:17]),   # slow1 to closed: every publisher, the retraction notice of demo.gone
    "10.5555/demo.unknown",
    "PMID:90000001",
    "arXiv:2101.00001v2",
    # a paper only Semantic Scholar knows, a bioRxiv preprint, a medRxiv one (asked after bioRxiv)
    "10.5555/demo.s2only",
    "10.1101/2026.01.05.000001",
    "10.64898/2026.02.02.000002",
    "not an identifier",
    None,
]


class DemoWorld:
    """Start with ``with DemoWorld() as world:``; pass ``world.endpoints`` to the Retriever."""

    def __init__(self, base_ip: int = 40) -> None:
        self._ip = base_ip
        self.hosts: dict[str, LoopbackHost] = {}
        self._lock = threading.Lock()
        self._last_limited = 0.0

    def start(self) -> "DemoWorld":
        names = ["unpaywall", "openalex", "crossref", "europepmc", "ncbi", "doi", "arxiv",
                 "fast", "slow", "limited", "forbidden", "html", "challenge", "robots", "held", "gone", "press",
                 "semanticscholar", "biorxiv", "pmc"]
        for offset, name in enumerate(names):
            self.hosts[name] = LoopbackHost(f"127.0.0.{self._ip + offset}", {"*": self._router(name)}).start()
        return self

    def stop(self) -> None:
        for host in self.hosts.values():
            host.stop()

    def __enter__(self) -> "DemoWorld":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def endpoints(self) -> dict[str, str]:
        return {name: self.hosts[name.split("_")[0]].base_url for name in ENDPOINT_NAMES}  # both NCBI services on one host

    def host_names(self) -> dict[str, str]:
        """The name of each demo host by its ``address:port`` (as ``domain_status()`` lists it): ``fast``,
        ``unpaywall``, …, and ``down`` for the address where nothing listens."""
        names = {host.base_url.split("://", 1)[1]: name for name, host in self.hosts.items()}
        names[f"127.0.0.{self._ip + 30}:9"] = "down"
        return names

    def requests_served(self) -> int:
        return sum(host.hits() for host in self.hosts.values())

    def _router(self, name: str) -> Callable[[Request], Reply]:
        def route(request: Request) -> Reply:
            if (jats := _fulltext.serve(name, request)) is not None:  # JATS for some papers
                return jats
            if (found := _research.serve(name, request, lambda doi: self._work(_BY_DOI[doi]))) is not None:
                return found  # the literature search's answers
            if (found := _sources.serve(name, request, lambda host: self.hosts[host].base_url)) is not None:
                return found
            handler = getattr(self, f"_serve_{name}", None)
            if handler is None:
                return self._publisher(name, request)
            return handler(request)

        return route

    def pdf_url(self, paper: _Paper) -> str:
        if paper.publisher == "down":  # nothing listens on port 9 of this loopback address: connection refused
            return f"http://127.0.0.{self._ip + 30}:9/pdf/{paper.doi.split('/', 1)[1]}.pdf"
        if paper.publisher is None:
            raise ValueError(f"{paper.doi} has no open copy to serve")
        return self.hosts[paper.publisher].url(f"/pdf/{paper.doi.split('/', 1)[1]}.pdf")

    def landing_url(self, paper: _Paper) -> str:
        host = paper.publisher if paper.publisher in self.hosts else "gone"
        return self.hosts[host].url(f"/article/{paper.doi.split('/', 1)[1]}")

    def _serve_unpaywall(self, request: Request) -> Reply:
        doi = unquote(request.path[len("/v2/"):]).lower()
        paper = _BY_DOI.get(doi)
        if paper is None:  # since 2025 a plain HTML page (Unpaywall answers from OpenAlex's data)
            return Reply(404, b"<!doctype html><title>404 Not Found</title><h1>Not Found</h1>", {"Content-Type": "text/html"})
        location = None
        if paper.via == "unpaywall":
            location = {"url": self.pdf_url(paper), "url_for_pdf": self.pdf_url(paper),
                        "url_for_landing_page": self.landing_url(paper), "host_type": "publisher", "license": "cc-by",
                        "version": "publishedVersion"}
        return Reply.json({
            "doi": doi, "title": paper.title, "year": paper.year, "journal_name": paper.journal, "is_oa": location is not None,
            "oa_status": "gold" if location else "closed", "best_oa_location": location,
            "oa_locations": [location] if location else [],
        })

    def _work(self, paper: _Paper) -> dict[str, Any]:
        best = None
        if paper.via == "openalex":
            best = {"is_oa": True, "pdf_url": self.pdf_url(paper), "landing_page_url": self.landing_url(paper),
                    "license": "cc-by", "version": "publishedVersion",
                    "source": {"type": "journal", "display_name": paper.journal}}
        ids = {"doi": f"https://doi.org/{paper.doi}"}
        if paper.doi in _PMC_IDS:
            ids["pmid"] = f"https://pubmed.ncbi.nlm.nih.gov/{_PMC_IDS[paper.doi][0]}"
        return {
            "id": "https://openalex.org/W0", "doi": f"https://doi.org/{paper.doi}", "title": paper.title,
            "display_name": paper.title,
            "publication_year": paper.year, "ids": ids,
            "primary_location": {"source": {"display_name": paper.journal}, "license": None},
            "open_access": {"is_oa": best is not None, "oa_status": "gold" if best else "closed",
                            "oa_url": best["pdf_url"] if best else None},
            "best_oa_location": best, "locations": [best] if best else [],
            "authorships": [{"raw_author_name": " ".join(p for p in (given, family) if p),
                             "author": {"display_name": " ".join(p for p in (given, family) if p)}}
                            for given, family in _authors(paper)],
            "is_retracted": paper.doi in RETRACTED,
        }

    def _serve_openalex(self, request: Request) -> Reply:
        prefix = next((p for p in ("/works/doi:", "/works/https://doi.org/") if request.path.startswith(p)), None)
        if prefix is not None:  # /works/doi:{doi} is the free singleton (2026); the doi.org form costs a credit
            doi = unquote(request.path[len(prefix):]).lower()
            paper = _BY_DOI.get(doi)
            return Reply.json(self._work(paper)) if paper else Reply.json({"error": "not found"}, 404)
        query = parse_qs(request.query)
        wanted = (query.get("filter", [""])[0]).removeprefix("doi:").split("|")
        results = [self._work(_BY_DOI[d.lower()]) for d in wanted if d.lower() in _BY_DOI]
        return Reply.json({"meta": {"count": len(results), "page": 1, "per_page": 50}, "results": results, "group_by": []})

    def _serve_crossref(self, request: Request) -> Reply:
        doi = unquote(request.path[len("/works/"):]).lower()
        paper = _BY_DOI.get(doi)
        if paper is None:
            return Reply(404, b"Resource not found.", {"Content-Type": "text/plain"})
        return Reply.json({"status": "ok", "message-type": "work", "message": {
            "DOI": paper.doi, "title": [paper.title], "container-title": [paper.journal],
            "issued": {"date-parts": [[paper.year]]}, "link": [], **_notices(paper.doi),
            "author": [{"given": given, "family": family} if given else {"name": family} for given, family in _authors(paper)]}})

    def _serve_europepmc(self, request: Request) -> Reply:
        if request.path.startswith("/articles/"):
            return Reply.pdf(demo_pdf(request.path + ".1"))  # the render of its one version
        query = parse_qs(request.query).get("query", [""])[0]
        results = []
        for doi, (pmid, pmcid) in _PMC_IDS.items():
            if pmid in query or pmcid in query or doi in query.lower():
                paper = _BY_DOI[doi]
                results.append({"id": pmid, "source": "MED", "pmid": pmid, "pmcid": pmcid, "doi": doi,
                                "title": paper.title,
                                "pubYear": str(paper.year), "journalInfo": {"journal": {"title": paper.journal}},
                                "isOpenAccess": "Y", "license": "cc by"})
        return Reply.json({"version": "6.9", "hitCount": len(results), "resultList": {"result": results}})

    def _serve_ncbi(self, request: Request) -> Reply:
        query = parse_qs(request.query)
        if request.path.startswith(("/pmc/utils/idconv", "/tools/idconv/api/v1/articles")):
            records = []
            for value in query.get("ids", [""])[0].split(","):
                found = next((doi for doi, ids in _PMC_IDS.items() if value in (*ids, doi)), None)
                if found:
                    pmid, pmcid = _PMC_IDS[found]
                    records.append({"pmcid": pmcid, "pmid": int(pmid), "doi": found, "requested-id": value})
                else:
                    records.append({"requested-id": value, "errmsg": "Identifier not found in PMC"})
            return Reply.json({"status": "ok", "response-date": "2026-11-29 00:00:00", "request": "demo", "records": records})
        return Reply(200, b"<?xml version=\"1.0\"?><PubmedArticleSet></PubmedArticleSet>", {"Content-Type": "text/xml"})

    def _serve_doi(self, request: Request) -> Reply:
        doi = unquote(request.path.lstrip("/")).lower()
        paper = _BY_DOI.get(doi)
        if paper is None:
            return Reply(404, b"DOI not found", {"Content-Type": "text/html"})
        return Reply(302, b"", {"Location": self.landing_url(paper)})

    def _serve_arxiv(self, request: Request) -> Reply:
        if request.path == "/robots.txt":
            return Reply(200, "User-agent: *\nDisallow: /search\n")
        return Reply.pdf(demo_pdf(request.path))

    def _publisher(self, name: str, request: Request) -> Reply:
        path = request.path
        if path == "/robots.txt":
            return Reply(200, _ROBOTS[name]) if name in _ROBOTS else Reply(404, b"no robots.txt")
        if name in _REFUSALS:
            return _REFUSALS[name]
        if name == "challenge":
            return Reply(403 if path.startswith("/article") else 200, CHALLENGE, {"Content-Type": "text/html"})
        if path.startswith("/article/"):
            doi = "10.5555/" + path[len("/article/"):]
            paper = _BY_DOI.get(doi)
            if paper is None:
                return Reply(404, b"no such article", {"Content-Type": "text/html"})
            if paper.publisher is None:  # a closed paper: the landing page offers no PDF
                return Reply(200, LANDING.replace('<meta name="citation_pdf_url" content="{pdf}">', "").format(title=paper.title),
                             {"Content-Type": "text/html"})
            pdf = self.hosts[name].url(f"/pdf/{doi.split('/', 1)[1]}.pdf")
            return Reply(200, LANDING.format(title=paper.title, pdf=pdf), {"Content-Type": "text/html"})
        if name == "html" and path.startswith("/pdf/"):  # an HTML page served where the PDF should be
            stem = path[len("/pdf/"):-4]
            pdf = self.hosts["html"].url(f"/files/{stem}.pdf")
            return Reply(200, LANDING.format(title=stem, pdf=pdf), {"Content-Type": "application/pdf"})
        if name == "limited":
            with self._lock:
                now = time.monotonic()
                too_fast = now - self._last_limited < 1.0
                self._last_limited = now
            if too_fast:
                return Reply(429, b"slow down", {"Retry-After": "1"})
        return Reply.pdf(demo_pdf(path))


def _notices(doi: str) -> dict[str, Any]:
    """Crossref's ``updated-by`` on a retracted demo paper, ``update-to`` on its notice (Retraction Watch's shape)."""
    def entry(target: str, date: tuple[int, int, int]) -> dict[str, Any]:
        return {"type": "retraction", "label": "Retraction", "DOI": target, "source": "retraction-watch",
                "updated": {"date-parts": [list(date)]}}

    if doi in RETRACTED:
        notice, date = RETRACTED[doi]
        return {"updated-by": [entry(notice, date)]}
    if doi in _NOTICE_OF:
        return {"update-to": [entry(_NOTICE_OF[doi], RETRACTED[_NOTICE_OF[doi]][1])]}
    return {}
