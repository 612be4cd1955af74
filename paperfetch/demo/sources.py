"""The demo world's Semantic Scholar, bioRxiv/medRxiv and PMC Cloud Service bucket, answered in their shapes."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from typing import Any
from urllib.parse import parse_qs, unquote
from xml.sax.saxutils import escape

from paperfetch.testing import Reply, Request

__all__ = ["PMC_ARTICLES", "PREPRINTS", "S2_ONLY", "demo_pdf", "fake_pdf", "serve"]


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
#: The PMC bucket's articles: PMCID → (DOI, PMID, title, licence code); one published version each.
PMC_ARTICLES: dict[str, tuple[str, int, str, str]] = {
    "PMC9000001": ("10.5555/demo.pmc", 90000001, "A paper in PubMed Central", "CC BY"),
}
_S3 = "http://s3.amazonaws.com/doc/2006-03-01/"


def fake_pdf(name: str, size: int = 4000) -> bytes:
    """A small well-formed-looking PDF whose bytes depend on *name*."""
    filler = (name.encode() * (size // max(1, len(name)) + 1))[:size]
    return b"%PDF-1.4\n% paperfetch demo\n1 0 obj <<>> endobj\n" + filler + b"\ntrailer <<>>\n%%EOF\n"


def demo_pdf(path: str) -> bytes:
    """The PDF served at *path*: its paper's one-page PDF with a text layer (synthetic, written by
    tests/write_demo_data.py, named after the path's last part), else :func:`fake_pdf`'s bytes (no text layer)."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".pdf").removesuffix(".full")
    found = files("paperfetch.demo").joinpath("data").joinpath(f"pdf_{stem}.pdf")
    return found.read_bytes() if found.is_file() else fake_pdf(path)


def serve(host: str, request: Request, base_url: Callable[[str], str]) -> Reply | None:
    """The answer for *request* on the demo host named *host*, or None for the world's other hosts
    (*base_url(name)*: the base URL of the demo host *name*)."""
    if host == "semanticscholar":
        return _serve_semanticscholar(request, base_url("fast"))
    if host == "biorxiv":
        return _serve_biorxiv(request, base_url("biorxiv"))
    return _serve_pmc(request) if host == "pmc" else None


def _serve_semanticscholar(request: Request, publisher: str) -> Reply:
    """``POST /graph/v1/paper/batch`` in the recorded 2024-25 shape: a list in the request's order, ``null`` for
    every unknown id; the PDFs are on the *publisher* host."""
    if request.path != "/graph/v1/paper/batch" or request.method != "POST":
        return Reply.json({"error": "Not found"}, 404)
    try:
        ids = json.loads(request.body or b"{}").get("ids")
    except (ValueError, AttributeError):
        ids = None
    if not isinstance(ids, list) or not ids:
        return Reply.json({"error": "No valid paper ids given"}, 400)
    if len(ids) > 500:
        return Reply.json({"error": "Cannot process more than 500 ids"}, 400)
    answers: list[Any] = []
    for raw in ids:
        kind, _, value = str(raw).partition(":")
        paper = _S2_BY_DOI.get(value.lower()) if kind.upper() == "DOI" else None
        if paper is None:
            answers.append(None)
            continue
        pdf_url = f"{publisher}/pdf/{paper.doi.split('/', 1)[1]}.pdf"
        answers.append({"paperId": "0" * 40, "externalIds": {"DOI": paper.doi, "CorpusId": 1}, "title": paper.title,
                        "year": paper.year, "openAccessPdf": {"url": pdf_url, "status": paper.status,
                                                              "license": paper.license, "disclaimer": "demo"}})
    return Reply.json(answers)


def _serve_biorxiv(request: Request, base_url: str) -> Reply:
    """``/details/{server}/{doi}`` (the documented shape; none was recorded) and each version's PDF under
    ``/content/{doi}v{n}.full.pdf``; *base_url* is this host's."""
    parts = request.path.split("/")
    if request.path.startswith("/content/") and request.path.endswith(".full.pdf"):
        return Reply.pdf(demo_pdf(request.path))
    if len(parts) < 5 or parts[1] != "details":
        return Reply.json({"messages": [{"status": "not found"}], "collection": []}, 404)
    server, doi = parts[2], unquote("/".join(parts[3:])).lower()
    preprint = PREPRINTS.get(doi)
    if preprint is None or preprint.server != server:
        return Reply.json({"messages": [{"status": "no posts found"}], "collection": []})
    collection = [{
        "doi": preprint.doi, "title": preprint.title, "authors": "Demo, A.", "date": f"2026-01-0{n}", "version": str(n),
        "type": "new results", "license": preprint.license, "category": "bioinformatics",
        "jatsxml": f"{base_url}/content/early/2026/01/0{n}/{preprint.doi.split('/', 1)[1]}.source.xml",
        "published": preprint.published, "server": server} for n in range(1, preprint.versions + 1)]
    return Reply.json({"messages": [{"status": "ok"}], "collection": collection})


def _serve_pmc(request: Request) -> Reply:
    """The PMC Cloud Service's bucket (the documented shapes; none was recorded): the ListObjectsV2 listing of
    ``?list-type=2&prefix=PMC{n}.&delimiter=/`` (``KeyCount`` 0 for an unknown article), each version's
    ``PMC{n}.{v}.json``, a short JATS ``PMC{n}.{v}.xml`` and the PDF; S3's ``NoSuchKey`` 404 for anything else."""
    if request.path == "/":
        prefix = (parse_qs(request.query).get("prefix") or [""])[0]
        folders = [f"{pmcid}.1/" for pmcid in PMC_ARTICLES if f"{pmcid}.1/".startswith(prefix)] if prefix else []
        listed = "".join(f"<CommonPrefixes><Prefix>{escape(f)}</Prefix></CommonPrefixes>" for f in folders)
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="{_S3}"><Name>pmc-oa-opendata</Name>'
                f"<Prefix>{escape(prefix)}</Prefix><KeyCount>{len(folders)}</KeyCount><MaxKeys>1000</MaxKeys>"
                f"<Delimiter>/</Delimiter><IsTruncated>false</IsTruncated>{listed}</ListBucketResult>")
        return Reply(200, body, {"Content-Type": "application/xml"})
    folder, _, name = request.path.strip("/").partition("/")
    pmcid, _, version = folder.partition(".")
    article = PMC_ARTICLES.get(pmcid)
    kind = name[len(folder) + 1:] if name.startswith(folder + ".") else ""
    if article is None or version != "1" or kind not in ("pdf", "xml", "json"):
        return Reply(404, f"<Error><Code>NoSuchKey</Code><Key>{escape(request.path)}</Key></Error>",
                     {"Content-Type": "application/xml"})
    doi, pmid, title, licence = article
    if kind == "pdf":
        return Reply.pdf(demo_pdf(request.path))
    if kind == "xml":
        jats = (f'<article><front><article-meta><article-id pub-id-type="pmc">{pmcid}</article-id>'
                f'<article-id pub-id-type="doi">{doi}</article-id><title-group><article-title>{escape(title)}'
                f"</article-title></title-group></article-meta></front><body><p>{escape(title)}.</p></body></article>")
        return Reply(200, jats, {"Content-Type": "application/xml"})
    s3 = f"s3://pmc-oa-opendata/{folder}/{folder}"
    return Reply.json({
        "pmcid": pmcid, "version": 1, "pmid": pmid, "doi": doi, "mid": None, "title": title,
        "citation": "PMC Reports. 2020;1:1", "is_pmc_openaccess": True, "is_manuscript": False,
        "is_historical_ocr": False, "is_retracted": False, "license_code": licence,
        "xml_url": f"{s3}.xml?md5=0", "pdf_url": f"{s3}.pdf?md5=0", "text_url": f"{s3}.txt?md5=0", "media_urls": [],
    })
