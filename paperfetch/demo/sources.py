"""The demo world's Semantic Scholar and bioRxiv/medRxiv: papers only they know, answered in their shapes."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from paperfetch.testing import Reply, Request

__all__ = ["PREPRINTS", "S2_ONLY", "serve_biorxiv", "serve_semanticscholar"]


@dataclass(frozen=True)
class _S2Paper:
    doi: str
    title: str
    year: int
    status: str
    license: str | None


@dataclass(frozen=True)
class _Preprint:
    doi: str
    server: str  # "biorxiv" | "medrxiv"
    title: str
    versions: int
    license: str
    published: str  # the journal version's DOI, or "NA"


#: Papers only Semantic Scholar knows (no other demo service has them): their PDF is on the "fast" publisher.
S2_ONLY = [_S2Paper("10.5555/demo.s2only", "Known to Semantic Scholar alone", 2024, "GREEN", "CCBY")]
#: Preprints by DOI: one on bioRxiv linked to its journal version, one on medRxiv under the 2025 prefix.
PREPRINTS = {
    p.doi: p for p in [
        _Preprint("10.1101/2026.01.05.000001", "biorxiv", "A preprint and its journal version", 2, "cc_by", "10.5555/demo.vor"),
        _Preprint("10.64898/2026.02.02.000002", "medrxiv", "A medRxiv preprint under the new prefix", 1, "cc_by_nc_nd", "NA"),
    ]
}
_S2_BY_DOI = {p.doi: p for p in S2_ONLY}


def _json(data: Any, status: int = 200) -> Reply:
    return Reply(status, json.dumps(data).encode(), {"Content-Type": "application/json"})


def serve_semanticscholar(request: Request, pdf_url: Callable[[str], str]) -> Reply:
    """``POST /graph/v1/paper/batch`` in the recorded 2024-25 shape: a list in the request's order, ``null`` for
    every unknown id. *pdf_url(doi)*: where the demo serves that paper's PDF."""
    if request.path != "/graph/v1/paper/batch" or request.method != "POST":
        return _json({"error": "Not found"}, 404)
    try:
        ids = json.loads(request.body or b"{}").get("ids")
    except (ValueError, AttributeError):
        ids = None
    if not isinstance(ids, list) or not ids:
        return _json({"error": "No valid paper ids given"}, 400)
    if len(ids) > 500:
        return _json({"error": "Cannot process more than 500 ids"}, 400)
    answers: list[Any] = []
    for raw in ids:
        kind, _, value = str(raw).partition(":")
        paper = _S2_BY_DOI.get(value.lower()) if kind.upper() == "DOI" else None
        if paper is None:
            answers.append(None)
            continue
        answers.append({"paperId": "0" * 40, "externalIds": {"DOI": paper.doi, "CorpusId": 1}, "title": paper.title,
                        "year": paper.year, "openAccessPdf": {"url": pdf_url(paper.doi), "status": paper.status,
                                                              "license": paper.license, "disclaimer": "demo"}})
    return _json(answers)


def serve_biorxiv(request: Request, base_url: str, pdf: Callable[[str], bytes]) -> Reply:
    """``/details/{server}/{doi}`` (the documented shape; none was recorded) and each version's PDF under
    ``/content/{doi}v{n}.full.pdf``; *base_url* is this host's, *pdf(name)* a PDF body."""
    parts = request.path.split("/")
    if request.path.startswith("/content/") and request.path.endswith(".full.pdf"):
        return Reply(200, pdf("biorxiv:" + request.path), {"Content-Type": "application/pdf"})
    if len(parts) < 5 or parts[1] != "details":
        return _json({"messages": [{"status": "not found"}], "collection": []}, 404)
    server, doi = parts[2], unquote("/".join(parts[3:])).lower()
    preprint = PREPRINTS.get(doi)
    if preprint is None or preprint.server != server:
        return _json({"messages": [{"status": "no posts found"}], "collection": []})
    collection = [{
        "doi": preprint.doi, "title": preprint.title, "authors": "Demo, A.", "date": f"2026-01-0{n}", "version": str(n),
        "type": "new results", "license": preprint.license, "category": "bioinformatics",
        "jatsxml": f"{base_url}/content/early/2026/01/0{n}/{preprint.doi.split('/', 1)[1]}.source.xml",
        "published": preprint.published, "server": server} for n in range(1, preprint.versions + 1)]
    return _json({"messages": [{"status": "ok"}], "collection": collection})
