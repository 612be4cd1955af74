"""The demo world's literature search: PubMed, OpenAlex, Crossref and Europe PMC answers written for the demo in
the services' shapes (``paperfetch/demo/data/``, all synthetic; docs/research.md, "The demo world and the tests").
"""

from __future__ import annotations

import json
import re
import textwrap
import xml.etree.ElementTree as ET
from functools import lru_cache
from importlib.resources import files
from typing import Any, Callable
from urllib.parse import parse_qs, unquote

from paperfetch.testing import Reply, Request

__all__ = [
    "CITED_DOI", "EPMC_CITED", "HISTORY_QUERY", "REFERENCED", "SEARCH_QUERY", "WRONG_PDF_DOI", "WRONG_PDF_SHOWS", "data",
    "science_papers", "serve", "text_pdf"
]

SEARCH_QUERY = "demo studies[journal] AND soil microbes AND 2021[pdat]"
HISTORY_QUERY = "10.5555/demo.history"
WRONG_PDF_DOI = "10.5555/demo.search.4"
WRONG_PDF_SHOWS = "10.5555/demo.search.5"
#: The OpenAlex works the six PubMed hits reference: one no service knows, one the demo world downloads.
REFERENCED = ("W5555000201", "W5555000202")
#: A work OpenAlex knows 5 citing works of and Crossref 65 references (with DOIs) of.
CITED_DOI = "10.5555/demo.cited"
WORKS = {CITED_DOI: "openalex_work_cited.json", "10.5555/demo.cited.both": "openalex_work_cited_both.json"}
CROSSREF_WORKS = {CITED_DOI: "crossref_work_cited.json", "10.5555/demo.cited.both": "crossref_work_cited_both.json"}
#: The PMID whose 23 citations Europe PMC gives (any other PMID: none).
EPMC_CITED = "90000301"
_MAX_IDS = 200
#: ESearch's answers by query (any other query: no hits).
_ESEARCH = {SEARCH_QUERY: "pubmed_esearch.xml", HISTORY_QUERY: "pubmed_esearch_history.xml"}


@lru_cache(maxsize=None)
def data(name: str) -> bytes:
    """A body from ``paperfetch/demo/data``."""
    return files("paperfetch.demo").joinpath("data").joinpath(name).read_bytes()


def _xml(body: bytes) -> Reply:
    return Reply(200, body, {"Content-Type": "text/xml; charset=UTF-8"})


@lru_cache(maxsize=None)
def _articles() -> dict[str, bytes]:
    """PMID -> the demo's <PubmedArticle> element, serialised."""
    root = ET.fromstring(data("pubmed_efetch.xml"))
    return {a.findtext("MedlineCitation/PMID", ""): ET.tostring(a, encoding="utf-8") for a in root.iter("PubmedArticle")}


@lru_cache(maxsize=None)
def science_papers() -> list[dict[str, Any]]:
    """The six PubMed hits of :data:`SEARCH_QUERY`: pmid, doi, title, journal, year (from the EFetch body)."""
    from paperfetch.sources.pubmed import parse_efetch

    return [{"pmid": h.pmid, "doi": h.doi, "title": h.title, "journal": h.journal, "year": h.year}
            for h in parse_efetch(data("pubmed_efetch.xml"))]


def serve(host: str, request: Request, demo_work: Callable[[str], dict[str, Any]]) -> Reply | None:
    """The answer for *request* on the demo host named *host*, or None for the world's other answers
    (*demo_work(doi)*: the world's OpenAlex work body for a DOI it knows). The "press" host is all here."""
    if host == "openalex":
        return _serve_openalex(request, demo_work)
    handler = {"ncbi": _serve_ncbi, "crossref": _serve_crossref, "europepmc": _serve_europepmc, "press": _serve_press}.get(host)
    return handler(request) if handler else None


def _serve_ncbi(request: Request) -> Reply | None:
    """ESearch and EFetch (db=pubmed) for the search hits, or None for the demo world's other NCBI answers.

    EFetch omits ids with no record, as a real answer does; a ``retmax`` above 10,000 or an ``id=`` list above
    200 ids gets a 414 page (the live service refuses long URLs).
    """
    query = {k: v[0] for k, v in parse_qs(request.query).items()}
    if request.path.endswith("/esearch.fcgi"):
        if int(query.get("retmax", "20") or 0) > 10_000 or len(request.query) > 8000:
            return _too_long()
        term = " ".join(query.get("term", "").split())
        return _xml(data(_ESEARCH.get(term, "pubmed_esearch_zero.xml")))
    if request.path.endswith("/efetch.fcgi") and query.get("db") == "pubmed":
        if "WebEnv" in query:  # the history server: the set holds one PMID with no record
            return _xml(b'<?xml version="1.0" ?>\n<PubmedArticleSet></PubmedArticleSet>')
        ids = [i for i in query.get("id", "").split(",") if i]
        if len(ids) > _MAX_IDS or len(request.query) > 8000:
            return _too_long()
        known = _articles()
        if ids == list(known):
            return _xml(data("pubmed_efetch.xml"))
        if any(i in known for i in ids):
            return _xml(b'<?xml version="1.0" ?>\n<PubmedArticleSet>' + b"".join(known[i] for i in ids if i in known)
                        + b"</PubmedArticleSet>")
    return None  # everything else: the demo's own NCBI answers


def _too_long() -> Reply:
    return Reply(414, data("ncbi_414.html"), {"Content-Type": "text/html; charset=utf-8"})


def _serve_openalex(request: Request, demo_work: Callable[[str], dict[str, Any]]) -> Reply | None:
    """The search's OpenAlex works and pages, or None for the demo world's other answers (*demo_work(doi)*: the
    world's work body for a DOI it knows). The six PubMed hits' works list :data:`REFERENCED` as references; the
    page after the cites page is an empty last page; ``/works/pmid:…`` and ``/works/pmcid:…`` answer 404.
    """
    prefix = next((p for p in ("/works/doi:", "/works/https://doi.org/") if request.path.startswith(p)), "")
    if prefix:
        doi = unquote(request.path[len(prefix):]).lower()
        if doi in WORKS:
            return Reply.json(data(WORKS[doi]))
        if any(p["doi"] == doi for p in science_papers()):
            work = demo_work(doi)
            work["id"] = "https://openalex.org/W9" + re.sub(r"\D", "", doi)[-9:].rjust(9, "0")
            work["referenced_works"] = [f"https://openalex.org/{w}" for w in REFERENCED]
            return Reply.json(work)
        return None
    if request.path.startswith(("/works/pmid:", "/works/pmcid:")):
        return Reply.json({"error": "not found"}, 404)
    if request.path != "/works":
        return None
    query = {k: v[0] for k, v in parse_qs(request.query).items()}
    flt = query.get("filter", "")
    first = query.get("cursor", "*") == "*"
    if flt.startswith("openalex:"):
        if sorted(flt[len("openalex:"):].split("|")) == sorted(REFERENCED) and first:
            return Reply.json(data("openalex_referenced_page1.json"))
        return Reply.json(data("openalex_last_page.json"))
    if flt.startswith("cites:"):
        return Reply.json(data("openalex_citing_page1.json") if first else data("openalex_last_page.json"))
    return None


def _serve_europepmc(request: Request) -> Reply | None:
    """``/MED/{pmid}/citations``: the 23 citations of :data:`EPMC_CITED`, sliced by ``page``/``pageSize``; any
    other PMID gets the empty answer."""
    match = re.fullmatch(r"/europepmc/webservices/rest/MED/(\d+)/citations", request.path)
    if match is None:
        return None
    if match.group(1) != EPMC_CITED:
        return Reply.json(data("europepmc_citations_none.json"))
    query = {k: v[0] for k, v in parse_qs(request.query).items()}
    page, size = max(1, int(query.get("page", "1") or 1)), max(1, min(1000, int(query.get("pageSize", "25") or 25)))
    whole = json.loads(data("europepmc_citations.json"))
    rows = whole["citationList"]["citation"]
    if (page, size) == (1, 1000):
        return Reply.json(data("europepmc_citations.json"))  # the whole body, as written
    doc = {**whole, "request": {"id": EPMC_CITED, "source": "MED", "page": page},
           "citationList": {"citation": rows[(page - 1) * size : page * size]}}
    return Reply.json(doc)


def _serve_crossref(request: Request) -> Reply | None:
    """The ``/works/{doi}`` bodies with ``reference`` lists, or None for any other request."""
    doi = unquote(request.path[len("/works/"):]).lower() if request.path.startswith("/works/") else ""
    if doi in CROSSREF_WORKS:
        return Reply.json(data(CROSSREF_WORKS[doi]))
    return None


def _serve_press(request: Request) -> Reply:
    """The six PubMed hits' PDFs with a text layer; the one for :data:`WRONG_PDF_DOI` carries its sister
    article's first page (``WRONG_PDF_SHOWS``)."""
    if request.path == "/robots.txt":
        return Reply(404, b"no robots.txt")
    match = re.fullmatch(r"/pdf/(.+)\.pdf", request.path)
    papers = {p["doi"].split("/", 1)[1]: p for p in science_papers()}
    paper = papers.get(match.group(1)) if match else None
    if paper is None:
        return Reply(404, b"no such file", {"Content-Type": "text/plain"})
    shown = paper
    if paper["doi"] == WRONG_PDF_DOI:
        shown = next(p for p in science_papers() if p["doi"] == WRONG_PDF_SHOWS)
    title = textwrap.wrap(shown["title"] or "", 60, break_long_words=False, break_on_hyphens=False)
    lines = [f"{shown['journal']} {shown['year']}", "", *title, "", f"doi:{shown['doi']}",
             "", "Reproduced in the paperfetch demo world; the article text is not included."]
    return Reply.pdf(text_pdf(lines))


def text_pdf(lines: list[str]) -> bytes:
    """A one-page PDF whose text layer holds *lines* (Helvetica, ASCII), with a correct xref table."""
    def esc(s: str) -> str:
        s = s.encode("ascii", "replace").decode("ascii")
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    ops = ["BT", "/F1 14 Tf", "72 760 Td", "18 TL"] + [f"({esc(line)}) Tj T*" for line in lines] + ["ET"]
    stream = "\n".join(ops).encode("ascii")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
