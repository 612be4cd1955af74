"""The demo world's JATS: two Europe PMC ``fullTextXML`` bodies written for the demo (synthetic, one with a table),
served as the services serve them."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs

from paperfetch.demo.research import data
from paperfetch.testing import Reply, Request

__all__ = ["JATS_DOIS", "JATS_PAPERS", "serve"]

#: PMCID → (DOI, title, year, journal, Europe PMC's isOpenAccess).
JATS_PAPERS: dict[str, tuple[str, str, int, str, str]] = {
    "PMC9000201": ("10.5555/demo.jats.sensor", "A clip-on sensor for the water content of plant stems", 2021,
                   "Demo Plant Methods", "Y"),
    "PMC9000202": ("10.5555/demo.jats.genome", "Complete chloroplast genome of the invented fern Demopteris exemplaris",
                   2021, "Demo Genomes Part B", "N"),
}
#: The DOIs whose JATS the demo serves, in :data:`JATS_PAPERS` order.
JATS_DOIS: tuple[str, ...] = tuple(doi for doi, *_ in JATS_PAPERS.values())

_FULLTEXT = re.compile(r"/europepmc/webservices/rest/([^/]+)/fullTextXML")


def serve(host: str, request: Request) -> Reply | None:
    """The answer for *request* on the demo host named *host*, or None when this module does not know it: Europe PMC
    search for :data:`JATS_PAPERS` (``isOpenAccess`` ``Y`` for PMC9000201, whose JATS is ``fullTextXML``, ``N`` for
    PMC9000202, whose JATS is PMC EFetch), ``/{PMCID}/fullTextXML`` (404 for others), ``efetch.fcgi?db=pmc``.
    """
    if host == "europepmc":
        return _europepmc(request)
    if host == "ncbi" and request.path == "/entrez/eutils/efetch.fcgi":
        return _efetch(request)
    return None


def _europepmc(request: Request) -> Reply | None:
    match = _FULLTEXT.fullmatch(request.path)
    if match:
        pmcid = match.group(1).upper()
        if pmcid not in JATS_PAPERS:
            return Reply(404, b"<error>no full text</error>", {"Content-Type": "application/xml"})
        return Reply(200, data(f"jats_{pmcid}.xml"), {"Content-Type": "application/xml"})
    if request.path != "/europepmc/webservices/rest/search":
        return None
    query = parse_qs(request.query).get("query", [""])[0]
    results = [_result(pmcid) for pmcid, (doi, *_) in JATS_PAPERS.items() if doi in query.lower() or pmcid in query]
    if not results:
        return None
    body = {"version": "6.9", "hitCount": len(results), "resultList": {"result": results}}
    return Reply.json(body)


def _result(pmcid: str) -> dict[str, Any]:
    doi, title, year, journal, open_access = JATS_PAPERS[pmcid]
    return {"id": pmcid, "source": "PMC", "pmcid": pmcid, "doi": doi, "title": title, "pubYear": str(year),
            "journalInfo": {"journal": {"title": journal}}, "isOpenAccess": open_access, "inEPMC": "Y",
            "license": "cc by"}


def _efetch(request: Request) -> Reply | None:
    query = parse_qs(request.query)
    if query.get("db", [""])[0] != "pmc":
        return None
    articles = []
    for number in query.get("id", [""])[0].split(","):
        pmcid = "PMC" + number.strip().upper().removeprefix("PMC")
        if pmcid in JATS_PAPERS:
            body = data(f"jats_{pmcid}.xml")
            articles.append(body[body.index(b"<article"):])
    body = b'<?xml version="1.0" encoding="UTF-8"?>\n<pmc-articleset>' + b"".join(articles) + b"</pmc-articleset>"
    return Reply(200, body, {"Content-Type": "text/xml"})
