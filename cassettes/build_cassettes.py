#!/usr/bin/env python
"""Generate the vcrpy cassettes the tests replay.

Offline (the default) every cassette is built into ``cassettes/built/`` (ignored by git):
the ones made of the real recorded bodies in the shared fixture folder (other people's
recordings, never committed) and the ones this script writes itself. Request URIs are
taken from the sources' own ``url_for`` (identity parameters removed, exactly as vcrpy's
``filter_query_parameters`` stores them). The output is deterministic. The tests build
the same folder when they start (``tests/_fixtures.py``). ``--ours`` writes only the
cassettes whose every body this script wrote (marked SYNTHETIC), and the README, into
``cassettes/``: those are committed.

``--live`` re-records the same cases against the real services with vcrpy
(``record_mode="all"``, the same filters the tests replay with) into
``cassettes/live/`` unless ``--out`` says otherwise; replay them with
``PAPERFETCH_CASSETTE_DIR=cassettes/live``. It needs network access and a real
contact e-mail, and cannot run in the offline build environment.

    python cassettes/build_cassettes.py [--fixtures DIR] [--out DIR]
    python cassettes/build_cassettes.py --ours
    python cassettes/build_cassettes.py --live --email your.name@your-university.edu [--openalex-key K] [--ncbi-key K]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import requests
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout without installing

from paperfetch.config import Identification  # noqa: E402
from paperfetch.errors import NotFoundError, ServiceError  # noqa: E402
from paperfetch.http.outcome import Outcome  # noqa: E402
from paperfetch.ids import Identifier  # noqa: E402
from paperfetch.sources import SOURCES  # noqa: E402
from paperfetch.sources.base import RequestSpec  # noqa: E402

from paperfetch.testing import CASSETTE_FILTER_QUERY_PARAMETERS as FILTER_QUERY_PARAMETERS  # noqa: E402
from paperfetch.testing import cassette_vcr  # noqa: E402

PLACEHOLDER_EMAIL = "your.name@your-university.edu"  # Unpaywall refuses example.com (paperfetch.sources.unpaywall)
_SECRETS = re.compile(r"you(?:@|%40)example\.com|your\.name(?:@|%40)your-university\.edu|<<ncbi-key>>")
_DROPPED_HEADERS = {"content-encoding", "transfer-encoding", "content-length", "set-cookie", "status"}


# --------------------------------------------------------------------------- identifiers and URIs


ident = Identifier.from_key  # an Identifier from its canonical key, unvalidated


def scrub_uri(uri: str) -> str:
    """What vcrpy stores with ``filter_query_parameters``: the URI minus identity parameters."""
    parts = urlsplit(uri)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in FILTER_QUERY_PARAMETERS]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), parts.fragment))


def uris_for(source_name: str, keys: list[str]) -> list[str]:
    """Every request URI the source sends for *keys*, as the cassette stores it."""
    source = SOURCES[source_name](identification=Identification(email=PLACEHOLDER_EMAIL))
    return [_spec_uri(source, spec) for spec in source.requests_for([ident(k) for k in keys])]


def _spec_uri(source: Any, spec: RequestSpec) -> str:
    url, params = source.url_for(spec)
    return scrub_uri(requests.Request("GET", url, params=params).prepare().url)


def uri_for_spec(source_name: str, path: str, params: dict[str, str], keys: list[str]) -> str:
    """The URI for a hand-made spec (a request the sources would not build, recorded for its error)."""
    source = SOURCES[source_name](identification=Identification(email=PLACEHOLDER_EMAIL))
    return _spec_uri(source, RequestSpec(path=path, params=params, ids=tuple(ident(k) for k in keys)))


# --------------------------------------------------------------------------- reading the fixture formats


def _decode(body: Any, headers: dict[str, list[str]]) -> bytes:
    data = body.encode("utf-8") if isinstance(body, str) else (body or b"")
    encoding = next((v[0] for k, v in headers.items() if k.lower() == "content-encoding"), "")
    if "gzip" in encoding and data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if "deflate" in encoding:
        return zlib.decompress(data)
    return data


def vcr_responses(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(request uri, response) pairs of a vcrpy cassette, bodies decompressed."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    out = []
    for item in doc["interactions"]:
        resp = item["response"]
        headers = {k: list(v) for k, v in resp["headers"].items()}
        body = _decode(resp["body"]["string"], headers)
        out.append((item["request"]["uri"], _response(resp["status"]["code"], resp["status"]["message"], headers, body)))
    return out


def rvcr_responses(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(request uri, response) pairs of an R-vcr cassette (``http_interactions``)."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    out = []
    for item in doc["http_interactions"]:
        resp = item["response"]
        headers = {k: [str(v)] for k, v in (resp.get("headers") or {}).items()}
        body = _decode(resp["body"]["string"], {})  # R-vcr stores the decoded text
        status = resp["status"]
        if isinstance(status, int):  # R vcr 2.0 stores the bare code
            status = {"status_code": status, "message": {200: "OK", 400: "Bad Request", 404: "Not Found"}.get(status, "")}
        out.append((item["request"]["uri"], _response(int(status["status_code"]), status.get("message", ""), headers, body)))
    return out


def sidecar_response(body_path: Path, meta_path: Path) -> dict[str, Any]:
    """An Unpaywall body with its ``response_meta.json`` (status line and headers)."""
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    headers = {k: [v] for k, v in meta["headers"].items()}
    return _response(meta["status_code"], meta["reason"], headers, body_path.read_bytes())


def arxiv_recorded(path: Path) -> tuple[str, dict[str, Any]]:
    """arxiv.py's ``{url, status_code, body}`` recording; it kept no headers, so Content-Type is supplied."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    return doc["url"], _atom(doc["status_code"], doc["body"].encode("utf-8"))


def _atom(status: int, body: bytes) -> dict[str, Any]:
    message = {200: "OK", 400: "Bad Request"}[status]
    return _response(status, message, {"Content-Type": ["application/atom+xml; charset=utf-8"]}, body)


def _response(code: int, message: str, headers: dict[str, list[str]], body: bytes) -> dict[str, Any]:
    kept = {k: v for k, v in headers.items() if k.lower() not in _DROPPED_HEADERS}
    kept["Content-Length"] = [str(len(body))]
    return {"status": {"code": int(code), "message": message}, "headers": kept, "body": body}


def interaction(uri: str, response: dict[str, Any], *, method: str = "GET", body_sent: str | None = None) -> dict[str, Any]:
    body = response["body"].decode("utf-8")
    return {
        "request": {"body": body_sent, "headers": {}, "method": method, "uri": uri},
        "response": {"body": {"string": body}, "headers": response["headers"], "status": response["status"]},
    }


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return _SECRETS.sub("REDACTED", value)
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _with_body(response: dict[str, Any], body: bytes) -> dict[str, Any]:
    return _response(response["status"]["code"], response["status"]["message"], response["headers"], body)


# --------------------------------------------------------------------------- the cases


@dataclass(frozen=True)
class Case:
    """One cassette: where it goes, what it is made of, and how to re-record it live."""

    path: str
    origin: str  # "recorded" | "converted" | "assembled" | "synthetic"
    fixtures: tuple[str, ...]
    note: str
    build: Callable[[Path], list[dict[str, Any]]]
    source: str | None = None  # for --live; None: cannot be provoked on demand, offline only
    live_ids: tuple[str, ...] = ()

    @property
    def ours(self) -> bool:
        """Written by this script alone (its "fixtures" only name the evidence, in parentheses): committed."""
        return all(f.startswith("(") for f in self.fixtures)


UNPAYWALL_DOIS = [
    "10.1038/nature12373",
    "10.1103/physreve.88.012814",
    "10.1016/j.tmaid.2020.101663",
    "10.1016/j.envint.2020.105730",
    "10.1016/j.jns.2020.116832",
]


def build_unpaywall(fx: Path) -> list[dict[str, Any]]:
    keys = [f"doi:{d}" for d in UNPAYWALL_DOIS]
    out = []
    for doi, uri in zip(UNPAYWALL_DOIS, uris_for("unpaywall", keys)):
        stem = f"unpaywall/v2_{doi.replace('/', '_')}"
        out.append(interaction(uri, sidecar_response(fx / f"{stem}.body.json", fx / f"{stem}.response_meta.json")))
    return out


OPENALEX_SINGLE = [
    "10.1371/journal.pone.0000030",
    "10.1101/097196",
    "10.1007/s00120-007-1345-2",
    "10.1155/2012/291294",
    "10.1038/hdy.2013.26",
    "10.4018/978-1-4666-1891-6.ch004",
]


def openalex_single(doi: str) -> Callable[[Path], list[dict[str, Any]]]:
    def build(fx: Path) -> list[dict[str, Any]]:
        [(recorded_uri, response)] = vcr_responses(fx / f"openalex/works_doi_{doi.replace('/', '_')}.vcr.yaml")
        [uri] = uris_for("openalex", [f"doi:{doi}"])
        # recorded on /works/https://doi.org/{doi}; we ask the free singleton /works/doi:{doi} for the same work
        assert unquote(uri).replace("/works/doi:", "/works/https://doi.org/") == unquote(recorded_uri), (uri, recorded_uri)
        return [interaction(uri, response)]

    return build


OPENALEX_BATCH = ["10.7717/peerj.4375", "10.1038/hdy.2013.26", "10.1007/s00120-007-1345-2", "10.1371/notarealdoi"]


def build_openalex_batch(fx: Path) -> list[dict[str, Any]]:
    # Real work bodies spliced byte for byte into OpenAlex's documented list envelope, in an order
    # other than the request's (OpenAlex does not keep it); the unknown DOI simply has no result.
    works = [
        (fx / "openalex/works_doi_10.1038_hdy.2013.26.body.json").read_bytes().strip(),
        (fx / "openalex/work_W2741809807_doi_10.7717_peerj.4375.json").read_bytes().strip(),
        (fx / "openalex/works_doi_10.1007_s00120-007-1345-2.body.json").read_bytes().strip(),
    ]
    meta = b'{"meta":{"count":3,"db_response_time_ms":0,"page":1,"per_page":50,"groups_count":null},"results":['
    body = meta + b",".join(works) + b'],"group_by":[]}'
    [(_, template)] = vcr_responses(fx / "openalex/works_doi_10.1038_hdy.2013.26.vcr.yaml")
    [uri] = uris_for("openalex", [f"doi:{d}" for d in OPENALEX_BATCH])
    return [interaction(uri, _with_body(template, body))]


CROSSREF_FIVE = [
    "10.1016/j.neurobiolaging.2010.03.024",
    "10.1002/jor.1100150407",
    "10.1038/srep16696",
    "10.1109/icdcsw.2003.1203662",
    "10.3892/ijo_00000353",
]


def crossref_recorded(fixture: str, dois: list[str]) -> Callable[[Path], list[dict[str, Any]]]:
    def build(fx: Path) -> list[dict[str, Any]]:
        pairs = vcr_responses(fx / fixture) if fixture.endswith(".vcr.yaml") else rvcr_responses(fx / fixture)
        recorded = {unquote(uri): response for uri, response in pairs}  # as the server reads the path
        out = []
        for uri in uris_for("crossref", [f"doi:{d}" for d in dois]):
            out.append(interaction(uri, recorded[unquote(uri)]))  # KeyError if the source's URI ever drifts from the recording
        return out

    return build


def crossref_raw(fixture: str) -> Callable[[Path], list[dict[str, Any]]]:
    """A real Crossref 5xx on another endpoint; kept with its own URI (no source would send it)."""

    def build(fx: Path) -> list[dict[str, Any]]:
        reader = vcr_responses if fixture.endswith(".vcr.yaml") else rvcr_responses
        return [interaction(scrub_uri(uri), response) for uri, response in reader(fx / fixture)]

    return build


EUROPEPMC_IDS = ["doi:10.1002/hpja.70059", "pmid:39709208", "pmcid:PMC12174270", "doi:10.1371/notarealdoi"]


def build_europepmc(fx: Path) -> list[dict[str, Any]]:
    # Europe PMC was recorded only for query=cancer (25 core records) and for a query with no hits.
    # Each interaction here is one real core record (or the real empty answer) in the real envelope.
    core = json.loads((fx / "europepmc/search_cancer_resultType-core_pageSize25.json").read_text(encoding="utf-8"))
    empty = json.loads((fx / "europepmc/search_no_results_resultType-lite.json").read_text(encoding="utf-8"))
    by_field = {
        "doi": {r.get("doi"): r for r in core["resultList"]["result"]},
        "pmid": {r.get("pmid"): r for r in core["resultList"]["result"]},
        "pmcid": {r.get("pmcid"): r for r in core["resultList"]["result"]},
    }
    out = []
    for key, uri in zip(EUROPEPMC_IDS, uris_for("europepmc", EUROPEPMC_IDS)):
        id_type, value = key.split(":", 1)
        query = dict(parse_qsl(urlsplit(uri).query))["query"]
        found = by_field[id_type].get(value)
        envelope = {
            "version": core["version"],
            "hitCount": 1 if found else 0,
            "request": {**core["request"], "queryString": query, "resultType": "core"},
            "resultList": {"result": [found] if found else empty["resultList"]["result"]},
        }
        body = json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        headers = {"Content-Type": ["application/json;charset=UTF-8"]}  # the fixture kept no headers
        out.append(interaction(uri, _response(200, "OK", headers, body)))
    return out


def build_idconv_doi(fx: Path) -> list[dict[str, Any]]:
    [(_, response)] = rvcr_responses(fx / "ncbi_idconv/idconv_doi_10.1038_ng.590.rvcr.yml")
    [uri] = uris_for("ncbi_idconv", ["doi:10.1038/ng.590"])
    return [interaction(uri, response)]


def build_idconv_mismatch(fx: Path) -> list[dict[str, Any]]:
    [(_, response)] = rvcr_responses(fx / "ncbi_idconv/idconv_error_idtype_mismatch_28371833.rvcr.yml")
    params = {"ids": "28371833", "idtype": "doi", "format": "json"}  # a PMID sent as idtype=doi, as recorded
    uri = uri_for_spec("ncbi_idconv", SOURCES["ncbi_idconv"].path, params, ["pmid:28371833"])  # type: ignore[attr-defined]
    return [interaction(uri, response)]


def efetch_recorded(pmid: str) -> Callable[[Path], list[dict[str, Any]]]:
    def build(fx: Path) -> list[dict[str, Any]]:
        # Recorded as a POST with a form body; the source sends the same parameters as a GET query.
        [(_, response)] = vcr_responses(fx / f"ncbi_eutils/efetch_pubmed_{pmid}.vcr.yaml")
        [uri] = uris_for("ncbi_eutils", [f"pmid:{pmid}"])
        return [interaction(uri, response)]

    return build


EFETCH_BATCH = ["34709863", "34529508", "35108047"]


def build_efetch_batch(fx: Path) -> list[dict[str, Any]]:
    # Three real single-article efetch bodies (metapub) joined into one PubmedArticleSet.
    articles = []
    head = b""
    for pmid in EFETCH_BATCH:
        xml = (fx / f"ncbi_eutils/efetch_pubmed_{pmid}.xml").read_bytes()
        start, end = xml.index(b"<PubmedArticle>"), xml.rindex(b"</PubmedArticle>") + len(b"</PubmedArticle>")
        head = head or xml[:start]
        articles.append(xml[start:end])
    body = head + b"\n".join(articles) + b"</PubmedArticleSet>"
    [(_, template)] = vcr_responses(fx / "ncbi_eutils/efetch_pubmed_29915538.vcr.yaml")
    [uri] = uris_for("ncbi_eutils", [f"pmid:{p}" for p in EFETCH_BATCH])
    return [interaction(uri, _with_body(template, body))]


def build_esummary_414(fx: Path) -> list[dict[str, Any]]:
    pairs = rvcr_responses(fx / "ncbi_eutils/esummary_414_request_uri_too_long.rvcr.yml")
    return [interaction(scrub_uri(uri), response) for uri, response in pairs if response["status"]["code"] == 414]


def arxiv_case(stem: str, key: str) -> Callable[[Path], list[dict[str, Any]]]:
    def build(fx: Path) -> list[dict[str, Any]]:
        if stem.endswith("2016format"):  # a raw body saved by the 2016 test suite: no status, no headers
            response = _atom(200, (fx / f"arxiv/query_id_list_{stem}.atom.xml").read_bytes())
        else:
            _, response = arxiv_recorded(fx / f"arxiv/query_id_list_{stem}.recorded.json")
        [uri] = uris_for("arxiv", [key])
        return [interaction(uri, response)]

    return build


ARXIV_BATCH = ["arxiv:1605.08386", "arxiv:1707.08567", "arxiv:astro-ph/0601001"]


def build_arxiv_batch(fx: Path) -> list[dict[str, Any]]:
    # The three real single-id feeds' <entry> elements under the 1605.08386 feed head.
    entries = []
    head = tail = ""
    for stem in ("1605.08386", "1707.08567", "astro-ph_0601001"):
        _, response = arxiv_recorded(fx / f"arxiv/query_id_list_{stem}.recorded.json")
        text = response["body"].decode("utf-8")
        start, end = text.index("  <entry>"), text.rindex("</entry>") + len("</entry>\n")
        head, tail = head or text[:start], tail or text[end:]
        entries.append(text[start:end])
    head = head.replace("<opensearch:totalResults>1<", "<opensearch:totalResults>3<")
    [uri] = uris_for("arxiv", ARXIV_BATCH)
    return [interaction(uri, _atom(200, (head + "".join(entries) + tail).encode("utf-8")))]


CASES: list[Case] = [
    Case("unpaywall/v2_five_dois.yaml", "converted",
         tuple(f"unpaywall/v2_{d.replace('/', '_')}.body.json (+ .response_meta.json)" for d in UNPAYWALL_DOIS),
         "five real 200 answers (green, hybrid, two bronze, gold), one interaction each",
         build_unpaywall, "unpaywall", tuple(f"doi:{d}" for d in UNPAYWALL_DOIS)),
    *[
        Case(f"openalex/works_doi_{d.replace('/', '_')}.yaml", "converted",
             (f"openalex/works_doi_{d.replace('/', '_')}.vcr.yaml",),
             "single-work lookup recorded on /works/https://doi.org/…, stored under /works/doi:…",
             openalex_single(d), "openalex", (f"doi:{d}",))
        for d in OPENALEX_SINGLE
    ],
    Case("openalex/works_filter_four_dois.yaml", "assembled",
         ("openalex/works_doi_10.1038_hdy.2013.26.body.json", "openalex/work_W2741809807_doi_10.7717_peerj.4375.json",
          "openalex/works_doi_10.1007_s00120-007-1345-2.body.json", "openalex/works_doi_10.1038_hdy.2013.26.vcr.yaml (headers)"),
         "batched /works?filter=doi:a|b|c|d: three real work bodies in the documented {meta, results} envelope; "
         "10.1371/notarealdoi has no result", build_openalex_batch, "openalex", tuple(f"doi:{d}" for d in OPENALEX_BATCH)),
    Case("crossref/works_five_dois.yaml", "recorded", ("crossref/works_five_dois.vcr.yaml",),
         "five real 200 answers (Elsevier TDM text/xml links, Wiley unspecified links, Nature application/pdf, IEEE, Spandidos)",
         crossref_recorded("crossref/works_five_dois.vcr.yaml", CROSSREF_FIVE), "crossref",
         tuple(f"doi:{d}" for d in CROSSREF_FIVE)),
    Case("crossref/works_10.1371_journal.pone.0033693.yaml", "recorded",
         ("crossref/works_10.1371_journal.pone.0033693.vcr.yaml",), "PLOS; only an `unspecified` similarity-checking link",
         crossref_recorded("crossref/works_10.1371_journal.pone.0033693.vcr.yaml", ["10.1371/journal.pone.0033693"]),
         "crossref", ("doi:10.1371/journal.pone.0033693",)),
    Case("crossref/works_10.7554_elife.01567.yaml", "recorded", ("crossref/works_10.7554_elife.01567.vcr.yaml",),
         "eLife; application/pdf + application/xml links (the doi.org/ra interaction is dropped)",
         crossref_recorded("crossref/works_10.7554_elife.01567.vcr.yaml", ["10.7554/elife.01567"]),
         "crossref", ("doi:10.7554/elife.01567",)),
    Case("crossref/works_10.1038_nnano.2014.279.yaml", "converted", ("crossref/works_10.1038_nnano.2014.279_and_404.rvcr.yml",),
         "R-vcr; the 200 for nnano.2014.279 once (the repeats and /works/blblbl, not a DOI, are dropped)",
         crossref_recorded("crossref/works_10.1038_nnano.2014.279_and_404.rvcr.yml", ["10.1038/nnano.2014.279"]),
         "crossref", ("doi:10.1038/nnano.2014.279",)),
    Case("crossref/works_404_notarealdoi.yaml", "recorded", ("crossref/works_404_notarealdoi.vcr.yaml",),
         "404 text/plain `Resource not found.`",
         crossref_recorded("crossref/works_404_notarealdoi.vcr.yaml", ["10.1371/notarealdoi"]),
         "crossref", ("doi:10.1371/notarealdoi",)),
    Case("crossref/funders_500_server_error.yaml", "recorded", ("crossref/funders_500_server_error.vcr.yaml",),
         "real Crossref 500 on /funders, kept with its own URI (replayed directly, not through a source)",
         crossref_raw("crossref/funders_500_server_error.vcr.yaml")),
    Case("crossref/journals_504_gateway_timeout.yaml", "converted", ("crossref/journals_504_gateway_timeout.rvcr.yml",),
         "real 504 from Crossref's load balancer on /journals/…/works, kept with its own URI",
         crossref_raw("crossref/journals_504_gateway_timeout.rvcr.yml")),
    Case("europepmc/search_core_four_ids.yaml", "assembled",
         ("europepmc/search_cancer_resultType-core_pageSize25.json", "europepmc/search_no_results_resultType-lite.json"),
         "one search per id (DOI, PMID, PMCID, unknown DOI): each a real core record from the query=cancer answer, "
         "or the real empty resultList, in the real envelope with hitCount/queryString set; headers supplied",
         build_europepmc, "europepmc", tuple(EUROPEPMC_IDS)),
    Case("ncbi_idconv/idconv_doi_10.1038_ng.590.yaml", "converted", ("ncbi_idconv/idconv_doi_10.1038_ng.590.rvcr.yml",),
         "R-vcr (2022, old URL); request URI rewritten to the source's new URL (adds idtype=doi); the echoed e-mail in the body is REDACTED",
         build_idconv_doi, "ncbi_idconv", ("doi:10.1038/ng.590",)),
    Case("ncbi_idconv/idconv_error_idtype_mismatch_28371833.yaml", "converted",
         ("ncbi_idconv/idconv_error_idtype_mismatch_28371833.rvcr.yml",),
         "HTTP 404 {status: error, ID type 'doi' mismatch}; recorded on the old URL, stored under the new one, minus tool/email",
         build_idconv_mismatch),
    Case("ncbi_eutils/efetch_pubmed_29915538.yaml", "converted", ("ncbi_eutils/efetch_pubmed_29915538.vcr.yaml",),
         "recorded as POST with a form body; stored as the GET the source sends",
         efetch_recorded("29915538"), "ncbi_eutils", ("pmid:29915538",)),
    Case("ncbi_eutils/efetch_pubmed_22528466.yaml", "converted", ("ncbi_eutils/efetch_pubmed_22528466.vcr.yaml",),
         "recorded as POST with a form body; stored as the GET the source sends",
         efetch_recorded("22528466"), "ncbi_eutils", ("pmid:22528466",)),
    Case("ncbi_eutils/efetch_pubmed_three_pmids.yaml", "assembled",
         tuple(f"ncbi_eutils/efetch_pubmed_{p}.xml" for p in EFETCH_BATCH) + ("ncbi_eutils/efetch_pubmed_29915538.vcr.yaml (headers)",),
         "batched efetch id=a,b,c: three real PubmedArticle elements in one PubmedArticleSet",
         build_efetch_batch, "ncbi_eutils", tuple(f"pmid:{p}" for p in EFETCH_BATCH)),
    Case("ncbi_eutils/esummary_414_request_uri_too_long.yaml", "converted",
         ("ncbi_eutils/esummary_414_request_uri_too_long.rvcr.yml",),
         "R-vcr; the 414 for a 20 kB esummary URI (2,000 ids), own URI minus email/tool/api_key",
         build_esummary_414),
    *[
        Case(f"arxiv/query_id_list_{stem}.yaml", "converted",
             (f"arxiv/query_id_list_{stem}{'.atom.xml' if stem.endswith('2016format') else '.recorded.json'}",),
             note, arxiv_case(stem, key), "arxiv", (key,))
        for stem, key, note in [
            ("1605.08386", "arxiv:1605.08386", "one entry"),
            ("1707.08567", "arxiv:1707.08567", "one entry; the recording's author names are mojibake (UTF-8 read as Latin-1)"),
            ("astro-ph_0601001", "arxiv:astro-ph/0601001", "old-style id, one entry"),
            ("0000.0000_empty", "arxiv:0000.0000", "well-formed unknown id: 200, no entry"),
            ("abc_error_400", "arxiv:abc", "malformed id: 400 with an Atom error entry"),
            ("1111.2011v2_2016format", "arxiv:1111.2011v2", "2016 schema with `arxiv:doi`; raw body, no status/headers recorded (200 and Content-Type supplied)"),
        ]
    ],
    Case("arxiv/query_id_list_three.yaml", "assembled",
         ("arxiv/query_id_list_1605.08386.recorded.json", "arxiv/query_id_list_1707.08567.recorded.json",
          "arxiv/query_id_list_astro-ph_0601001.recorded.json"),
         "batched id_list=a,b,c: the three real entries under the 1605.08386 feed head (totalResults set to 3)",
         build_arxiv_batch, "arxiv", tuple(ARXIV_BATCH)),
]


# --------------------------------------------------------------------------- search, references, citations
# Offline only (source=None): --live re-records single lookups, and these are multi-step conversations.


def _research_uri(source_name: str, path: str, params: dict[str, str]) -> str:
    source = SOURCES[source_name](identification=Identification(email=PLACEHOLDER_EMAIL))
    return _spec_uri(source, RequestSpec(path=path, params=params, ids=()))


def _xml_reply(body: bytes) -> dict[str, Any]:
    return _response(200, "OK", {"Content-Type": ["text/xml; charset=UTF-8"]}, body)


PUBMED_QUERY = "science[journal] AND breast cancer AND 2008[pdat]"
PUBMED_PMIDS = ["19008416", "18927361", "18787170", "18487186", "18239126", "18239125"]


def build_pubmed_search(fx: Path) -> list[dict[str, Any]]:
    from paperfetch.sources.pubmed import EFETCH, ESEARCH, SearchResult, efetch_params, esearch_params

    # hawc recorded both as POST with a form body; stored as the GETs PubMedSearch sends.
    search = vcr_responses(fx / "ncbi_eutils/hawc__TestPubMedSearch.test_standard_query.yaml")[1][1]
    [(_, fetch)] = vcr_responses(fx / "ncbi_eutils/hawc__TestPubMedFetch.test_standard_query.yaml")
    result = SearchResult(count=6, pmids=PUBMED_PMIDS)
    return [
        interaction(_research_uri("ncbi_eutils", ESEARCH, esearch_params(PUBMED_QUERY, 20)), search),
        interaction(_research_uri("ncbi_eutils", EFETCH, efetch_params(result, 0)), fetch),
    ]


def build_efetch_post(fx: Path) -> list[dict[str, Any]]:
    """hawc's real POST to EFetch: the same response, the request body rewritten to the form PubMedSearch sends
    (``db``, ``retmode``, ``id=a,b,…``; the identity fields are left out as the query filters leave them out)."""
    from paperfetch.sources.pubmed import EFETCH, SearchResult, efetch_params

    [(uri, fetch)] = vcr_responses(fx / "ncbi_eutils/hawc__TestPubMedFetch.test_standard_query.yaml")
    source = SOURCES["ncbi_eutils"](identification=Identification(email=PLACEHOLDER_EMAIL))
    url = source.base_url + EFETCH
    assert uri == url, uri
    form = efetch_params(SearchResult(count=6, pmids=PUBMED_PMIDS), 0)
    body = requests.Request("POST", url, data=form).prepare().body
    recorded = interaction(url, fetch)
    recorded["request"].update(method="POST", body=body,
                               headers={"Content-Type": ["application/x-www-form-urlencoded"]})
    return [recorded]


def esearch_saved(fixture: str, term: str) -> Callable[[Path], list[dict[str, Any]]]:
    def build(fx: Path) -> list[dict[str, Any]]:
        from paperfetch.sources.pubmed import ESEARCH, esearch_params

        return [interaction(_research_uri("ncbi_eutils", ESEARCH, esearch_params(term, 20)), _xml_reply((fx / fixture).read_bytes()))]

    return build


OPENALEX_TWO = ["W3045921891", "W3046863325"]


def build_openalex_ids_paged(fx: Path) -> list[dict[str, Any]]:
    from paperfetch.sources.references import page_params

    pairs = rvcr_responses(fx / "openalex/openalexPro__pro_snowball.yml")
    first, last = pairs[2][1], pairs[4][1]
    cursor = json.loads(first["body"])["meta"]["next_cursor"]
    params = {"filter": "openalex:" + "|".join(OPENALEX_TWO)}
    return [interaction(_research_uri("openalex", "/works", page_params(params, c)), r) for c, r in (("*", first), (cursor, last))]


def build_openalex_cites_paged(fx: Path) -> list[dict[str, Any]]:
    from paperfetch.sources.references import page_params

    [_, (_, first)] = rvcr_responses(fx / "openalex/openalexPro__oa_snowball__CUT-cites-only.yml")
    last = rvcr_responses(fx / "openalex/openalexPro__pro_snowball.yml")[4][1]  # a real empty last page, of another query
    cursor = json.loads(first["body"])["meta"]["next_cursor"]
    params = {"filter": "cites:W3046863325|W3045921891"}
    return [interaction(_research_uri("openalex", "/works", page_params(params, c)), r) for c, r in (("*", first), (cursor, last))]


LINK_DOIS = ["10.1073/pnas.1414271111", "10.1023/a:1007154515475"]


def build_links_works(fx: Path) -> list[dict[str, Any]]:
    from paperfetch.sources.references import openalex_work_path

    out = []
    for doi, cassette in zip(LINK_DOIS, ("paper_attributes4", "paper_attributes1")):
        pairs = vcr_responses(fx / f"openalex/paper-qa__test_doi_search-{cassette}.yaml")
        work = next(r for u, r in pairs if u.startswith("https://api.openalex.org/works/"))
        crossref = next(r for u, r in pairs if u.startswith("https://api.crossref.org/works/") and "transform" not in u)
        out.append(interaction(_research_uri("openalex", openalex_work_path(ident(f"doi:{doi}")), {}), work))
        out.append(interaction(_research_uri("crossref", "/works/" + doi, {}), crossref))
    return out


def build_openalex_work_404(fx: Path) -> list[dict[str, Any]]:
    from paperfetch.sources.references import openalex_work_path

    [(_, response)] = vcr_responses(fx / "openalex/paper-qa__test_does_openalex_work-not-in-openalex.yaml")
    return [interaction(_research_uri("openalex", openalex_work_path(ident("doi:10.1046/j.1365-2699.2003.00795")), {}), response)]


EPMC_CITED = "17183631"
EPMC_UNCITED = "20098740"
EPMC_PAGED_SIZE = 12


def _epmc_uri(pmid: str, page: int, size: int) -> str:
    from paperfetch.sources.references import europepmc_citations_path

    return _research_uri("europepmc", europepmc_citations_path(pmid),
                         {"format": "json", "page": str(page), "pageSize": str(size)})


def _json_reply(body: bytes) -> dict[str, Any]:
    return _response(200, "OK", {"Content-Type": ["application/json;charset=UTF-8"]}, body)


def epmc_citations_saved(fixture: str, pmid: str) -> Callable[[Path], list[dict[str, Any]]]:
    def build(fx: Path) -> list[dict[str, Any]]:
        from paperfetch.sources.references import EUROPEPMC_PAGE_SIZE

        return [interaction(_epmc_uri(pmid, 1, EUROPEPMC_PAGE_SIZE), _json_reply((fx / fixture).read_bytes()))]

    return build


def build_epmc_citations_paged(fx: Path) -> list[dict[str, Any]]:
    whole = json.loads((fx / "europepmc/lagotto__europe_pmc__MED-17183631_citations.json").read_text(encoding="utf-8"))
    rows = whole["citationList"]["citation"]
    out = []
    for page, start in enumerate(range(0, len(rows), EPMC_PAGED_SIZE), start=1):
        doc = {**whole, "request": {"id": EPMC_CITED, "source": "MED", "page": page},
               "citationList": {"citation": rows[start : start + EPMC_PAGED_SIZE]}}
        out.append(interaction(_epmc_uri(EPMC_CITED, page, EPMC_PAGED_SIZE),
                               _json_reply(json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8"))))
    return out


CASES += [
    Case("europepmc/citations_MED_17183631.yaml", "assembled", ("europepmc/lagotto__europe_pmc__MED-17183631_citations.json",),
         "a real citations answer (hitCount 23, one page) recorded on the old v3 path `/MED/{id}/citations/1/json`; "
         "the request reconstructed as today's `/MED/{id}/citations?format=json&page=1&pageSize=1000` (same body shape), "
         "Content-Type supplied", epmc_citations_saved("europepmc/lagotto__europe_pmc__MED-17183631_citations.json", EPMC_CITED)),
    Case("europepmc/citations_MED_17183631_paged.yaml", "assembled",
         ("europepmc/lagotto__europe_pmc__MED-17183631_citations.json",),
         f"the same 23 real citations split into pages of {EPMC_PAGED_SIZE} (page 1: 12, page 2: 11, hitCount 23) "
         "to replay paging by hitCount; request reconstructed as above", build_epmc_citations_paged),
    Case("europepmc/citations_MED_20098740_none.yaml", "assembled",
         ("europepmc/lagotto__europe_pmc_nil__MED-20098740_citations.json",),
         "a real empty citations answer (hitCount 0); request reconstructed as above",
         epmc_citations_saved("europepmc/lagotto__europe_pmc_nil__MED-20098740_citations.json", EPMC_UNCITED)),
    Case("ncbi_eutils/pubmed_search_science_breast_cancer_2008.yaml", "converted",
         ("ncbi_eutils/hawc__TestPubMedSearch.test_standard_query.yaml", "ncbi_eutils/hawc__TestPubMedFetch.test_standard_query.yaml"),
         "ESearch (6 PMIDs, no WebEnv) then EFetch id=<the 6>; recorded as POSTs, stored as the GETs PubMedSearch sends",
         build_pubmed_search),
    Case("ncbi_eutils/efetch_post_six_pmids.yaml", "converted", ("ncbi_eutils/hawc__TestPubMedFetch.test_standard_query.yaml",),
         "a real POST to EFetch (form body, 6 PMIDs); the body rewritten to the form PubMedSearch posts "
         "(db, retmode, id=a,b,…; identity fields left out)", build_efetch_post),
    Case("ncbi_eutils/esearch_usehistory_webenv.yaml", "converted", ("ncbi_eutils/dspace__pubmedimport-fetch-test__esearch_usehistory.xml",),
         "ESearch with usehistory=y: WebEnv and QueryKey; a saved body (request reconstructed, Content-Type supplied)",
         esearch_saved("ncbi_eutils/dspace__pubmedimport-fetch-test__esearch_usehistory.xml", "10.1016/j.nepr.2023.103548")),
    Case("ncbi_eutils/esearch_zero_results.yaml", "converted", ("ncbi_eutils/biopython__esearch8__zero_results.xml",),
         "ESearch with Count 0, PhraseNotFound and \"No items found.\" (recorded on db=protein; same shape as pubmed)",
         esearch_saved("ncbi_eutils/biopython__esearch8__zero_results.xml", "abcXYZ")),
    Case("openalex/works_filter_openalex_two_ids_paged.yaml", "converted", ("openalex/openalexPro__pro_snowball.yml",),
         "R-vcr; filter=openalex:W1|W2, cursor=* (next_cursor set) then the next cursor (empty, next_cursor null); "
         "per_page kept, api_key dropped", build_openalex_ids_paged),
    Case("openalex/works_filter_cites_two_ids_paged.yaml", "assembled",
         ("openalex/openalexPro__oa_snowball__CUT-cites-only.yml", "openalex/openalexPro__pro_snowball.yml (last page)"),
         "filter=cites:W1|W2, cursor=* (5 citing works, next_cursor set; recorded as per-page, stored as per_page), then "
         "pro_snowball's real empty last page as the page after (that page of this query was not recorded)",
         build_openalex_cites_paged),
    Case("openalex/links_two_works.yaml", "converted",
         ("openalex/paper-qa__test_doi_search-paper_attributes4.yaml", "openalex/paper-qa__test_doi_search-paper_attributes1.yaml"),
         "the OpenAlex work (referenced_works: 73 and 36) and the Crossref work (reference: 69 and 38) for two DOIs; "
         "URIs with / instead of %2F, mailto dropped", build_links_works),
    Case("openalex/works_doi_not_in_openalex_404.yaml", "converted", ("openalex/paper-qa__test_does_openalex_work-not-in-openalex.yaml",),
         "404 text/html for an unknown DOI (recorded with select=open_access,doi, stored without)", build_openalex_work_404),
]


# --------------------------------------------------------------------------- the 2025-26 recordings (PROVENANCE-3)
# and, marked "synthetic", what was never recorded (built in the shape the evidence gives; see the README's notes).


def recorded_at(fixture: str, host_and_path: str) -> Callable[[Path], dict[str, Any]]:
    """The response of the one interaction of a vcrpy cassette whose URI contains *host_and_path*."""

    def read(fx: Path) -> dict[str, Any]:
        [response] = [r for uri, r in vcr_responses(fx / fixture) if host_and_path in unquote(uri)]
        return response

    return read


def readdressed(fixture: str, host_and_path: str, source: str, keys: list[str]) -> Callable[[Path], list[dict[str, Any]]]:
    """A recorded answer stored under the request the source sends today (its body and headers as recorded)."""

    def build(fx: Path) -> list[dict[str, Any]]:
        [uri] = uris_for(source, keys)
        return [interaction(uri, recorded_at(fixture, host_and_path)(fx))]

    return build


def raw_recorded(fixture: str) -> Callable[[Path], list[dict[str, Any]]]:
    """Every interaction of a vcrpy cassette with its own URI (errors no source would send; replayed directly)."""

    def build(fx: Path) -> list[dict[str, Any]]:
        return [interaction(scrub_uri(uri), response) for uri, response in vcr_responses(fx / fixture)]

    return build


def saved_body(fixture: str, uri: str, content_type: str) -> Callable[[Path], list[dict[str, Any]]]:
    def build(fx: Path) -> list[dict[str, Any]]:
        body = (fx / fixture).read_bytes()
        return [interaction(uri, _response(200, "OK", {"Content-Type": [content_type]}, body))]

    return build


S2_BATCH = ["doi:10.5555/not-in-semantic-scholar", "doi:10.2139/ssrn.288970", "doi:10.2139/ssrn.2250500",
            "doi:10.1257/rct.1355"]
S2_SINGLES = [  # (DOI, fixture): single-paper answers assembled into one batch answer, in request order
    ("10.1038/s42256-024-00832-8", "graph-v1-paper-DOI-10.1038-s42256-024-00832-8__openAccessPdf-HYBRID.json"),
    ("10.1063/1.4938384", "graph-v1-paper-DOI-10.1063-1.4938384__openAccessPdf-CLOSED.json"),
    ("10.1101/2024.04.01.587366", None),  # recorded as a 404: null in the batch answer
    ("10.48550/arxiv.2312.07559", "graph-v1-paper-DOI-10.48550-arxiv.2312.07559__openAccessPdf-empty.json"),
    ("10.1073/pnas.1414271111", "graph-v1-paper-DOI-10.1073-pnas.1414271111__openAccessPdf-BRONZE.json"),
    ("10.1016/j.xgen.2025.100814", "graph-v1-paper-DOI-10.1016-j.xgen.2025.100814__openAccessPdf-GOLD.json"),
]


def _s2_interaction(keys: list[str], response: dict[str, Any]) -> dict[str, Any]:
    source = SOURCES["semanticscholar"](identification=Identification(email=PLACEHOLDER_EMAIL))
    [spec] = source.requests_for([ident(k) for k in keys])
    return interaction(_spec_uri(source, spec), response, method="POST", body_sent=spec.body)


def build_s2_batch(fx: Path) -> list[dict[str, Any]]:
    # The recorded batch asked CorpusId/paperId forms; the answer is positional, so it is stored under our request for
    # the DOIs its entries carry, in the same order (the first, null, under a DOI nobody knows).
    [(_, response)] = vcr_responses(fx / "semanticscholar/semanticscholar__test_get_papers_not_found_warning.yaml")
    return [_s2_interaction(S2_BATCH, response)]


def build_s2_singles(fx: Path) -> list[dict[str, Any]]:
    parts = [b"null" if name is None else (fx / "semanticscholar" / name).read_bytes().strip() for _, name in S2_SINGLES]
    body = b"[" + b",".join(parts) + b"]"
    return [_s2_interaction([f"doi:{d}" for d, _ in S2_SINGLES], _response(200, "OK", {"Content-Type": ["application/json"]}, body))]


def _synthetic(status: int, message: str, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    return _response(status, message, {k: [v] for k, v in headers.items()}, body)


UNPAYWALL_422 = json.dumps({"HTTP_status_code": 422, "error": True,
                            "message": "Email address required in API call, see http://unpaywall.org/products/api"},
                           sort_keys=True, indent=4).encode()  # oadoi views.py: abort_json(422, …), sort_keys, indent 4
UNPAYWALL_404 = b"<!doctype html>\n<html lang=en>\n<title>404 Not Found</title>\n<h1>Not Found</h1>\n" \
    b"<p>The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.</p>\n"


def build_unpaywall_errors(fx: Path) -> list[dict[str, Any]]:
    uris = uris_for("unpaywall", ["doi:10.5555/unknown-to-unpaywall", "doi:10.1038/nature12373"])
    return [interaction(uris[0], _synthetic(404, "NOT FOUND", {"Content-Type": "text/html; charset=utf-8"}, UNPAYWALL_404)),
            interaction(uris[1], _synthetic(422, "UNPROCESSABLE ENTITY", {"Content-Type": "application/json"}, UNPAYWALL_422))]


def build_idconv_2025(fx: Path) -> list[dict[str, Any]]:
    # The recorded 2022 answer for 10.1038/ng.590 rewritten into the 2025 record shape (requested-id, integer pmid,
    # response-date), with a second id answered "Identifier not found in PMC".
    old = json.loads(rvcr_responses(fx / "ncbi_idconv/idconv_doi_10.1038_ng.590.rvcr.yml")[0][1]["body"])
    [record] = old["records"]
    body = {"status": "ok", "response-date": "2025-11-20 10:00:00", "request": {"ids": ["10.1038/ng.590", "10.5555/not-in-pmc"],
            "idtype": "doi", "format": "json"},
            "records": [{"requested-id": "10.1038/ng.590", "pmcid": record["pmcid"], "pmid": int(record["pmid"]),
                         "doi": record["doi"]},
                        {"requested-id": "10.5555/not-in-pmc", "errmsg": "Identifier not found in PMC"}]}
    [uri] = uris_for("ncbi_idconv", ["doi:10.1038/ng.590", "doi:10.5555/not-in-pmc"])
    data = json.dumps(body, indent=1).encode()
    return [interaction(uri, _synthetic(200, "OK", {"Content-Type": "application/json; charset=UTF-8"}, data))]


#: The documentation address (RFC 5737 TEST-NET-3) where NCBI echoes the caller's IP.
NCBI_429_IP = "203.0.113.7"


def build_eutils_429(fx: Path) -> list[dict[str, Any]]:
    body = json.dumps({"error": "API rate limit exceeded", "api-key": NCBI_429_IP, "count": "4", "limit": "3"}).encode()
    [uri] = uris_for("ncbi_eutils", ["pmid:29915538"])
    return [interaction(uri, _synthetic(429, "Too Many Requests", {"Content-Type": "application/json", "Retry-After": "1"}, body))]


def build_openalex_budget_429(fx: Path) -> list[dict[str, Any]]:
    headers = {"Content-Type": "application/json", "Retry-After": "43200", "X-RateLimit-Limit": "1000",
               "X-RateLimit-Remaining": "0", "X-RateLimit-Credits-Used": "0", "X-RateLimit-Credits-Required": "1",
               "X-RateLimit-Reset": "43200", "X-RateLimit-Limit-USD": "0.1", "X-RateLimit-Remaining-USD": "0"}
    body = json.dumps({"error": "Rate limit exceeded", "message": "Daily credit budget exhausted; get a free API key "
                       "at https://openalex.org/settings/api to raise it. Resets at midnight UTC."}).encode()
    [uri] = uris_for("openalex", ["doi:10.1093/nar/gkw1164"])
    return [interaction(uri, _synthetic(429, "Too Many Requests", headers, body))]


CROSSREF_429 = b"<html><body><h1>429 Too Many Requests</h1>\nYou have sent too many requests in a given amount of time.\n</body></html>\n"


def build_crossref_429(fx: Path) -> list[dict[str, Any]]:
    headers = {"Content-Type": "text/html", "x-api-pool": "public", "x-rate-limit-limit": "5", "x-rate-limit-interval": "1s",
               "x-concurrency-limit": "1", "Retry-After": "1"}
    [uri] = uris_for("crossref", ["doi:10.1371/journal.pone.0033693"])
    return [interaction(uri, _synthetic(429, "Too Many Requests", headers, CROSSREF_429))]


BIORXIV_PREPRINT = "10.1101/2024.04.01.587366"


def build_biorxiv_details(fx: Path) -> list[dict[str, Any]]:
    # Built on the Crossref record of the same preprint (title, posted date, is-preprint-of); version and licence
    # are not in that record and are chosen for the test (one version, cc_by_nc_nd, bioRxiv's most common licence).
    work = json.loads((fx / "crossref/works__10.1101-2024.04.01.587366__biorxiv-preprint_plus-pool.json").read_text())["message"]
    y, m, d = work["posted"]["date-parts"][0]
    date = f"{y:04d}-{m:02d}-{d:02d}"
    [journal] = work["relation"]["is-preprint-of"]
    version = {"doi": BIORXIV_PREPRINT, "title": work["title"][0], "date": date, "version": "1", "type": "new results",
               "license": "cc_by_nc_nd", "category": work["group-title"].lower(),
               "jatsxml": f"https://www.biorxiv.org/content/early/{y:04d}/{m:02d}/{d:02d}/2024.04.01.587366.source.xml",
               "published": journal["id"], "server": "biorxiv"}
    found = {"messages": [{"status": "ok"}], "collection": [version]}
    empty = {"messages": [{"status": "no posts found"}], "collection": []}
    uris = uris_for("biorxiv", [f"doi:{BIORXIV_PREPRINT}", "doi:10.64898/2025.12.01.000001"])
    reply = lambda doc: _synthetic(200, "OK", {"Content-Type": "application/json; charset=UTF-8"}, json.dumps(doc).encode())  # noqa: E731
    return [interaction(uris[0], reply(found)), interaction(uris[2], reply(empty)), interaction(uris[3], reply(empty))]


XGEN = "10.1016/j.xgen.2025.100814"
CASES += [
    Case("unpaywall/v2_2025_two_dois.yaml", "converted",
         ("unpaywall/paper-qa__test_doi_search-paper_attributes0.yaml", "unpaywall/paper-qa__test_doi_search-paper_attributes3.yaml"),
         "the 2025 schema (answered from OpenAlex's data): evidence/updated \"deprecated\", oa_date, url_for_pdf null; "
         "interaction #1 of each, email dropped",
         lambda fx: [interaction(uris_for("unpaywall", [f"doi:{d}"])[0], recorded_at(f, f"api.unpaywall.org/v2/{d}")(fx))
                     for d, f in ((XGEN, "unpaywall/paper-qa__test_doi_search-paper_attributes0.yaml"),
                                  ("10.1016/j.addr.2015.01.008", "unpaywall/paper-qa__test_doi_search-paper_attributes3.yaml"))],
         "unpaywall", (f"doi:{XGEN}", "doi:10.1016/j.addr.2015.01.008")),
    Case("unpaywall/v2_errors_404_html_422_email.yaml", "synthetic", ("(ourresearch/oadoi views.py: abort_json)",),
         "SYNTHETIC: an unknown DOI's plain HTML 404 (Flask's page), and the 422 JSON error for a missing/example.com e-mail",
         build_unpaywall_errors),
    Case("openalex/works_doi_10.1016_j.xgen.2025.100814.yaml", "converted", ("unpaywall/paper-qa__test_doi_search-paper_attributes0.yaml",),
         "a 2025 work (recorded on /works/https://doi.org/…, billed 1 credit since 2026) stored under /works/doi:… (free)",
         readdressed("unpaywall/paper-qa__test_doi_search-paper_attributes0.yaml", "api.openalex.org/works/", "openalex",
                     [f"doi:{XGEN}"]), "openalex", (f"doi:{XGEN}",)),
    Case("openalex/works_doi_10.1093_nar_gkw1164.yaml", "converted", ("openalex/paper-qa__test_does_openalex_work-oa-in-openalex2.yaml",),
         "2025-11 answer (select=open_access,doi: only those two fields), Heroku RateLimit-* headers; stored under /works/doi:…",
         readdressed("openalex/paper-qa__test_does_openalex_work-oa-in-openalex2.yaml", "api.openalex.org/works/", "openalex",
                     ["doi:10.1093/nar/gkw1164"]), "openalex", ("doi:10.1093/nar/gkw1164",)),
    Case("openalex/works_doi_budget_spent_429.yaml", "synthetic", ("(OpenAlex docs and CLI; no 429 body recorded)",),
         "SYNTHETIC: 429 with X-RateLimit-Remaining 0 < X-RateLimit-Credits-Required 1 and a Retry-After of hours",
         build_openalex_budget_429),
    Case("semanticscholar/paper_batch_four_ids_first_null.yaml", "converted",
         ("semanticscholar/semanticscholar__test_get_papers_not_found_warning.yaml",),
         "a real POST /paper/batch answer (null first, two GREEN, one openAccessPdf null); request re-addressed to the DOIs "
         "its entries carry, in order, with our fields", build_s2_batch, "semanticscholar", tuple(S2_BATCH)),
    Case("semanticscholar/paper_batch_six_dois_assembled.yaml", "assembled",
         tuple(f"semanticscholar/{n}" for _, n in S2_SINGLES if n),
         "five real 2025 single-paper answers (HYBRID CCBY, CLOSED, empty, BRONZE, GOLD doi.org URL) and null for the "
         "bioRxiv DOI recorded as 404, as one batch answer in request order", build_s2_singles, "semanticscholar",
         tuple(f"doi:{d}" for d, _ in S2_SINGLES)),
    Case("semanticscholar/paper_errors_404.yaml", "recorded",
         ("semanticscholar/semanticscholar__test_not_found.yaml",), "real 404 JSON errors of single-paper/author lookups, own URIs",
         raw_recorded("semanticscholar/semanticscholar__test_not_found.yaml")),
    Case("semanticscholar/paper_search_match_404.yaml", "recorded", ("semanticscholar/paper-qa__test_bad_dois.yaml",),
         "404 {\"error\":\"Title match not found\"} and Crossref's zero-hit title query, own URIs",
         raw_recorded("semanticscholar/paper-qa__test_bad_dois.yaml")),
    Case("biorxiv/details_two_dois.yaml", "synthetic",
         ("crossref/works__10.1101-2024.04.01.587366__biorxiv-preprint_plus-pool.json (title, date, is-preprint-of)",),
         "SYNTHETIC: details/biorxiv for a preprint (one version, jatsxml, published = its journal DOI); a 10.64898 DOI "
         "that neither server knows (\"no posts found\")", build_biorxiv_details),
    Case("crossref/works_10.1101_2024.04.01.587366_biorxiv_preprint.yaml", "converted",
         ("semanticscholar/paper-qa__test_bulk_doi_search.yaml",),
         "2025-09 Crossref record of a bioRxiv preprint (posted-content, is-preprint-of), Plus-pool headers",
         readdressed("semanticscholar/paper-qa__test_bulk_doi_search.yaml", "api.crossref.org/works/10.1101/2024.04.01.587366?",
                     "crossref", [f"doi:{BIORXIV_PREPRINT}"]), "crossref", (f"doi:{BIORXIV_PREPRINT}",)),
    Case("crossref/errors_400_2026.yaml", "recorded",
         ("crossref/habanero__test_funders_fail_limit__2026.yaml", "crossref/habanero__test_works_query_filters_not_allowed_with_dois.yaml"),
         "2026 public-pool 400 validation failures with x-rate-limit-limit 5, x-concurrency-limit 1; own URIs",
         lambda fx: raw_recorded("crossref/habanero__test_funders_fail_limit__2026.yaml")(fx)
         + raw_recorded("crossref/habanero__test_works_query_filters_not_allowed_with_dois.yaml")(fx)),
    Case("crossref/works_429_public_pool.yaml", "synthetic", ("(CrossRef/rest-api-doc#159 body; 2026 headers of the 400s above)",),
         "SYNTHETIC: 429 with the public pool's headers (5/s, concurrency 1)", build_crossref_429),
    Case("ncbi_idconv/idconv_2025_shape_two_dois.yaml", "synthetic", ("ncbi_idconv/idconv_doi_10.1038_ng.590.rvcr.yml",),
         "SYNTHETIC: the recorded record rewritten to the 2025 shape at the new URL (requested-id, integer pmid, "
         "response-date) and an \"Identifier not found in PMC\" record", build_idconv_2025),
    Case("ncbi_eutils/efetch_429_rate_limit.yaml", "synthetic", ("(issue threads; no body recorded)",),
         f"SYNTHETIC: 429 {{error: API rate limit exceeded, api-key: <the caller's IP>}} ({NCBI_429_IP}, a documentation address)",
         build_eutils_429),
    Case("doi_org/errors_2026.yaml", "recorded",
         ("doi_org/habanero__test_content_negotiation_throws_warnings.yaml",
          "doi_org/habanero__test_content_negotiation_raises_an_http_error_with_bad_requests.yaml"),
         "doi.org 302 Handle Redirect (to api.crossref.org with %2F), the bibtex transform, 400 Not a DOI, 404 DOI Not Found; own URIs",
         lambda fx: raw_recorded("doi_org/habanero__test_content_negotiation_throws_warnings.yaml")(fx)
         + raw_recorded("doi_org/habanero__test_content_negotiation_raises_an_http_error_with_bad_requests.yaml")(fx)),
    *[
        Case(f"europepmc/fulltextxml_{pmcid}.yaml", "converted", (f"europepmc/rest__{pmcid}__fullTextXML.xml",),
             "a saved JATS body (2021, CC BY 4.0) under its REST URI; for the full-text reader (no source asks it yet)",
             saved_body(f"europepmc/rest__{pmcid}__fullTextXML.xml",
                        f"https://www.ebi.ac.uk/europepmc/webservices/rest/{pmcid}/fullTextXML", "application/xml"))
        for pmcid in ("PMC8118396", "PMC8164761")
    ],
]



# --------------------------------------------------------------------------- the PMC Cloud Service (all synthetic)
# No body from the bucket was ever recorded (NCBI's samples are abbreviated, not valid JSON): the listings are S3
# ListObjectsV2 XML, the metadata JSON the documented fields. PMC2883744 (pmid 20495566, doi 10.1038/ng.590) and its
# two versions come from the real ID-converter record in ncbi_idconv/; the other PMCIDs are made up.
PMC_BUCKET = "https://pmc-oa-opendata.s3.amazonaws.com"
_S3_XML = {"Content-Type": "application/xml", "Server": "AmazonS3"}


def _pmc_listing(pmcid: str, versions: list[int]) -> dict[str, Any]:
    folders = "".join(f"<CommonPrefixes><Prefix>{pmcid}.{v}/</Prefix></CommonPrefixes>" for v in versions)
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            f"<Name>pmc-oa-opendata</Name><Prefix>{pmcid}.</Prefix><KeyCount>{len(versions)}</KeyCount>"
            f"<MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter><IsTruncated>false</IsTruncated>{folders}</ListBucketResult>")
    uri = uris_for("pmc", [f"pmcid:{pmcid}"])[0]
    return interaction(uri, _synthetic(200, "OK", _S3_XML, body.encode()))


def _pmc_json(pmcid: str, version: int, **fields: Any) -> dict[str, Any]:
    folder = f"{pmcid}.{version}"
    s3 = f"s3://pmc-oa-opendata/{folder}/{folder}"
    meta: dict[str, Any] = {
        "pmcid": pmcid, "version": version, "pmid": None, "doi": None, "mid": None, "title": None, "citation": None,
        "is_pmc_openaccess": True, "is_manuscript": False, "is_historical_ocr": False, "is_retracted": False,
        "license_code": "CC BY", "xml_url": f"{s3}.xml?md5=5d41402abc4b2a76b9719d911017c592",
        "pdf_url": f"{s3}.pdf?md5=7d793037a0760186574b0282f2f435e7", "text_url": f"{s3}.txt?md5=9e107d9d372bb6826bd81d3542a419d6",
        "media_urls": [],
    }
    meta.update(fields)
    meta = {k: v for k, v in meta.items() if v is not ...}  # ...: the field is left out
    body = json.dumps(meta, indent=2).encode()
    return interaction(f"{PMC_BUCKET}/{folder}/{folder}.json",
                       _synthetic(200, "OK", {"Content-Type": "application/json", "Server": "AmazonS3"}, body))


def build_pmc_versions(fx: Path) -> list[dict[str, Any]]:
    [record] = json.loads((fx / "ncbi_idconv/idconv_doi_10.1038_ng.590.body.json").read_text())["records"]
    pmcid, pmid, doi = record["pmcid"], int(record["pmid"]), record["doi"]
    title = "Genome-wide association study identifies five new schizophrenia loci"
    return [
        # the recorded versions: .1 an author manuscript, .2 (marked current) the published version
        _pmc_listing(pmcid, [1, 2]),
        _pmc_json(pmcid, 2, pmid=pmid, doi=doi, title=title, citation="Nat Genet. 2010;42(6):482-4"),
        # made up: the newest version is an author manuscript beside the published version 1
        _pmc_listing("PMC9900001", [1, 2]),
        _pmc_json("PMC9900001", 2, is_manuscript=True, mid="NIHMS9900001", license_code="CC BY-NC-ND"),
        _pmc_json("PMC9900001", 1, doi="10.5555/pmc.published", license_code="CC BY-NC"),
    ]


def build_pmc_edges(fx: Path) -> list[dict[str, Any]]:
    return [
        # an unknown PMCID: 200 with KeyCount 0, never a 404
        _pmc_listing("PMC9900002", []),
        # a text-mining-only author manuscript: no pdf_url, the JATS only; an unknown field besides
        _pmc_listing("PMC9900003", [1]),
        _pmc_json("PMC9900003", 1, is_manuscript=True, license_code="TDM", pdf_url=..., mid="NIHMS9900003",
                  is_pmc_openaccess=False, new_field_2027={"ignored": True}),
        # no licence code at all (null), retracted
        _pmc_listing("PMC9900004", [1]),
        _pmc_json("PMC9900004", 1, license_code=None, is_retracted=True, pmid="9900004"),
    ]


def build_pmc_errors(fx: Path) -> list[dict[str, Any]]:
    denied = b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>'
    slow = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
            b"<Message>Please reduce your request rate.</Message></Error>")
    return [interaction(uris_for("pmc", ["pmcid:PMC9900005"])[0], _synthetic(403, "Forbidden", _S3_XML, denied)),
            interaction(uris_for("pmc", ["pmcid:PMC9900006"])[0], _synthetic(503, "Slow Down", _S3_XML, slow))]


CASES += [
    Case("pmc/versions_manuscript_and_published.yaml", "synthetic",
         ("ncbi_idconv/idconv_doi_10.1038_ng.590.body.json (ids, versions)",),
         "SYNTHETIC: S3 listings of two versions and the metadata JSON; PMC2883744 (the recorded versions: .1 manuscript, "
         ".2 published) and a made-up article whose newest version is a manuscript beside the published .1",
         build_pmc_versions),
    Case("pmc/keycount_zero_tdm_null_licence.yaml", "synthetic", ("(NCBI's \"Accessing PMC Article Datasets Using AWS\")",),
         "SYNTHETIC: KeyCount 0 for an unknown PMCID; a TDM manuscript without pdf_url (and an unknown field); "
         "license_code null with is_retracted true", build_pmc_edges),
    Case("pmc/listing_403_503.yaml", "synthetic", ("(S3's AccessDenied and SlowDown error bodies)",),
         "SYNTHETIC: 403 AccessDenied and 503 SlowDown from the bucket", build_pmc_errors),
]

#: Retraction Watch's data reached Crossref's API in 2025, but no recorded answer carries an entry of it
#: (PROVENANCE-3): the notices below are written by hand in the shape Crossref documents (``updated-by`` on the
#: paper, ``update-to`` on the notice: type, label, DOI, updated.date-parts, source, record-id) onto real records.
#: The notice DOIs are under Crossref's test prefix 10.5555, so no real work is named.
RETRACTED_DOI = "10.1038/srep16696"
RETRACTION_NOTICE = "10.5555/retraction.srep16696"
CONCERN_DOI = "10.1073/pnas.1414271111"
CONCERN_NOTICE = "10.5555/concern.pnas.1414271111"


def _notice_entry(kind: str, label: str, doi: str, date: tuple[int, int, int], record_id: int) -> dict[str, Any]:
    y, m, d = date
    return {"type": kind, "label": label, "DOI": doi, "source": "retraction-watch", "record-id": record_id,
            "updated": {"date-parts": [[y, m, d]], "date-time": f"{y:04d}-{m:02d}-{d:02d}T00:00:00Z"}}


def _crossref_reply(doc: dict[str, Any]) -> dict[str, Any]:
    return _synthetic(200, "OK", {"Content-Type": "application/json"}, json.dumps(doc, ensure_ascii=False).encode())


def build_crossref_retraction_watch(fx: Path) -> list[dict[str, Any]]:
    paper = json.loads((fx / "crossref/works_10.1038_srep16696.body.json").read_text())
    paper["message"]["updated-by"] = [_notice_entry("retraction", "Retraction", RETRACTION_NOTICE, (2024, 5, 1), 54321)]
    notice = json.loads(json.dumps(paper))
    work = notice["message"]
    for name in ("updated-by", "link", "reference", "relation"):
        work.pop(name, None)
    work.update(DOI=RETRACTION_NOTICE, URL=f"https://doi.org/{RETRACTION_NOTICE}", title=[f"Retraction Note: {work['title'][0]}"],
                **{"update-to": [_notice_entry("retraction", "Retraction", RETRACTED_DOI, (2024, 5, 1), 54321)],
                   "reference-count": 0, "references-count": 0})
    concern = json.loads((fx / "crossref/works__10.1073-pnas.1414271111.json").read_text())
    concern["message"]["updated-by"].append(
        _notice_entry("expression_of_concern", "Expression of Concern", CONCERN_NOTICE, (2023, 2, 14), 61234))
    uris = uris_for("crossref", [f"doi:{RETRACTED_DOI}", f"doi:{RETRACTION_NOTICE}", f"doi:{CONCERN_DOI}"])
    return [interaction(uri, _crossref_reply(doc)) for uri, doc in zip(uris, (paper, notice, concern))]


def build_openalex_one_retracted(fx: Path) -> list[dict[str, Any]]:
    # The assembled four-DOI page with is_retracted set on one work (OpenAlex's field; every recorded work has false).
    [recorded] = build_openalex_batch(fx)
    body = json.loads(recorded["response"]["body"]["string"])
    for work in body["results"]:
        work["is_retracted"] = work["doi"].lower().endswith("10.1038/hdy.2013.26")
    return [interaction(recorded["request"]["uri"], _with_body(recorded["response"], json.dumps(body).encode()))]


CASES += [
    Case("crossref/works_retraction_watch_notices.yaml", "synthetic",
         ("crossref/works_10.1038_srep16696.body.json", "crossref/works__10.1073-pnas.1414271111.json"),
         f"SYNTHETIC: a Retraction Watch retraction (updated-by) on {RETRACTED_DOI}, its notice {RETRACTION_NOTICE} "
         f"(update-to, title \"Retraction Note: …\"), and an expression of concern added beside the real correction of "
         f"{CONCERN_DOI}", build_crossref_retraction_watch),
    Case("openalex/works_filter_four_dois_one_retracted.yaml", "synthetic", ("openalex/works_filter_four_dois.yaml (as built)",),
         "SYNTHETIC: the assembled four-DOI page with is_retracted true on 10.1038/hdy.2013.26 (no recorded work has it)",
         build_openalex_one_retracted),
]


# --------------------------------------------------------------------------- writing


def dump(interactions: list[dict[str, Any]]) -> str:
    doc = _scrub({"interactions": interactions, "version": 1})
    return yaml.dump(doc, Dumper=yaml.SafeDumper, allow_unicode=True, sort_keys=True, width=120)


OURS_HEADER = "# SYNTHETIC: every body here was written by cassettes/build_cassettes.py; nothing was recorded.\n"


def build_offline(fixtures: Path | None, out: Path, *, ours_only: bool = False) -> list[Path]:
    """Write the cassettes into *out*: ours always, the ones made of recorded bodies when *fixtures* is given
    (and not *ours_only*); the README only with *ours_only* (it belongs beside the committed ones)."""
    written = []
    for case in CASES:
        if not case.ours and (ours_only or fixtures is None):
            continue
        target = out / case.path
        target.parent.mkdir(parents=True, exist_ok=True)
        text = dump(case.build(fixtures or Path("no-fixtures-needed")))
        target.write_text(OURS_HEADER + text if case.ours else text, encoding="utf-8", newline="\n")
        written.append(target)
    if ours_only:
        readme = out / "README.md"
        readme.write_text(render_readme(), encoding="utf-8", newline="\n")
        written.append(readme)
    return written


def render_readme() -> str:
    rows = "\n".join(
        f"| `{c.path}` | {c.origin}{' (ours, committed)' if c.ours else ''} | {'<br>'.join(f'`{f}`' for f in c.fixtures)} | "
        f"{c.note.replace('|', chr(92) + '|')}{'' if c.source else ' *(offline only)*'} |"
        for c in CASES
    )
    return README_TEMPLATE.format(rows=rows, filters=", ".join(f'"{p}"' for p in FILTER_QUERY_PARAMETERS))


README_TEMPLATE = """\
# Cassettes

vcrpy cassettes for the tests (`tests/test_sources.py` and others), **generated** by `cassettes/build_cassettes.py`.
This README is generated too (`--ours`); edit the script, not the output.

Most are made of real recorded responses: the shared fixture folder `shared/fixtures/real` beside the checkout
(or `$PAPERFETCH_FIXTURES`; see its `PROVENANCE.md`), copied out of other people's public repositories. Those
recordings are for building and testing only, so neither they nor cassettes made of them are committed or shipped:
the tests build every cassette into `cassettes/built/` (ignored by git) when they start (`tests/_fixtures.py`;
deterministic, a second or two, rebuilt when the fixtures, this script or the sources change). Without the fixture
folder only the cassettes marked *ours* below are built, and the tests that need the others skip with one line
(under `CI` they fail). By hand (offline, deterministic):

    python cassettes/build_cassettes.py            # every cassette into cassettes/built/; --fixtures DIR, --out DIR
    python cassettes/build_cassettes.py --ours     # only ours, and this README, into cassettes/ (committed)

The cassettes committed here (`cassettes/<service>/…`) are the ones whose every body this script wrote, in the
shapes the recordings and the services' documentation show; each starts with a `# SYNTHETIC` line.
`tests/test_sources.py` checks that a build is deterministic and that the committed ones equal a fresh `--ours`,
and `tests/test_provenance.py` that no committed file carries a recorded body.

## How they are made

* Request URIs are what the source's `url_for` produces for the case, with the identity query parameters
  ({filters}) removed — exactly what vcrpy stores with `filter_query_parameters`. Replay uses
  `record_mode="none"`, `match_on=["method", "scheme", "host", "port", "path", "query"]`,
  `filter_headers=["authorization", "user-agent"]`; vcrpy applies the same filters to the live request before
  matching, so a request that carries `email=`/`mailto=`/`tool=`/`api_key=` still finds its interaction.
* Secrets are scrubbed: no request headers are stored; e-mail placeholders and key markers that the recordings
  carried (`you@example.com`, `you%40example.com`, the build's `your.name@your-university.edu`, `<<ncbi-key>>`, e.g. NCBI's echo of the request in the ID
  converter body) are replaced by `REDACTED`. No requester's e-mail address or key is in any cassette (author
  addresses that are part of the published metadata in response bodies are left as recorded).
* Bodies are stored decompressed as plain strings. `Content-Encoding`, `Transfer-Encoding`, `Set-Cookie` and
  R-vcr's `status` pseudo-header are dropped; `Content-Length` is set to the stored body's length.
* Origin: **recorded** = a real vcrpy interaction, only normalised as above; **converted** = a real response
  from another recording format (R-vcr, arxiv.py's JSON, Unpaywall's body + sidecar) or with its request
  rewritten to the one the source sends; **assembled** = a synthetic response put together from real parts
  because no recording of that request exists (the parts are named); **synthetic** = nothing of the kind was
  ever recorded (PROVENANCE-3, "Searched for but not found"): built by hand in the shape the evidence gives
  (the server's code, the documentation, issue threads, a related real record), and named SYNTHETIC in its note.
* OpenAlex single works were recorded on `/works/https://doi.org/…` and are stored under `/works/doi:…`, the free
  singleton the source asks since 2026 (the same work body either way).

## Cassettes

| cassette | origin | from fixture(s) | what |
|---|---|---|---|
{rows}

*(offline only)*: error responses that cannot be provoked on demand; `--live` skips them.

tests/test_fulltext_frames.py uses no cassette: its loopback Europe PMC serves the eight real
`fulltext_pairs/*.xml` bodies as they are; the search answers it gives are SYNTHETIC (the DOI and PMCID each body
names, a made-up `PMC900000n` for the two bodies without one, `isOpenAccess: Y`). Its small JATS articles (link
forms, a spanned table, an image-only table, licence and DOI forms) are SYNTHETIC too, written in the test.

## Re-recording against the live services

    python cassettes/build_cassettes.py --live --email your.name@your-university.edu

re-records every case not marked offline-only with vcrpy (`record_mode="all"`, the same filters, compressed
bodies decoded), pacing each service at its `interval_s`, into `cassettes/live/` (`--out DIR` to change;
`--openalex-key`/`--ncbi-key` to send keys, which are filtered out like the e-mail). Replay the contract tests
against that recording with `PAPERFETCH_CASSETTE_DIR=cassettes/live pytest tests/test_sources.py`. Fresh
answers can differ from the pinned values (a new OA location, a changed title); the fixture-derived cassettes
here stay the reference. This needs network access: in the offline build environment it was exercised only
against a loopback stub (all `PAPERFETCH_<NAME>_URL` pointed at 127.0.0.1), never against the real services.
## Bodies written inside the export tests (not cassettes)

`tests/test_export_readers.py` and `tests/test_export_names.py` read recorded bodies (shared/fixtures/real:
PubMed EFetch, among them hawc's six hits, Crossref works, Europe PMC's core search, paper-qa's OpenAlex work)
and hold a few SYNTHETIC ones no recording shows: a PubMed EFetch with initials but no `ForeName`,
a `CollectiveName`, a particle and a `Suffix` (`HARD_EFETCH`, `SYNTHETIC_EFETCH`); Crossref works whose titles
carry `<i>`, `<sub>`, `<sup>`, `<scp>`, MathML and `&amp;`, with a `name`-only author (`HARD_CROSSREF`); and
rows with unbalanced braces, TeX specials, `--`, non-Latin names, no authors, preprints and a DOI given twice
(`HARD_ROWS`). `tests/data/csl/csl-data.json` is the official CSL-JSON schema (citation-style-language/schema at
e3ce254, MIT).
"""


# --------------------------------------------------------------------------- live re-recording


class LiveFetcher:
    """A plain requests session with the transport's ``fetch`` contract and the source's pacing."""

    def __init__(self, interval_s: float) -> None:
        self.session = requests.Session()
        self.session.headers["User-Agent"] = "paperfetch-cassette-recorder"
        self.interval_s = interval_s
        self._last = 0.0

    def fetch(self, url: str, *, classify: Any, params: dict[str, str] | None = None, headers: dict[str, str] | None = None,
              method: str = "GET", data: Any = None) -> requests.Response:
        time.sleep(max(0.0, self._last + self.interval_s - time.monotonic()))
        self._last = time.monotonic()
        response = self.session.request(method, url, params=params, headers=headers, data=data, timeout=30)
        outcome = classify(response)
        if outcome is Outcome.ABSENT:
            raise NotFoundError("not found", status_code=response.status_code, url=url, response=response)
        if outcome is not Outcome.OK:
            raise ServiceError(f"{outcome.value}: HTTP {response.status_code}", status_code=response.status_code, url=url, response=response)
        return response


def record_live(out: Path, identification: Identification) -> None:
    def scrub_response(response: dict[str, Any]) -> dict[str, Any]:
        body = response["body"]["string"]
        for secret in identification.secrets():
            for form in {secret, secret.replace("@", "%40")}:
                body = body.replace(form.encode(), b"REDACTED") if isinstance(body, bytes) else body.replace(form, "REDACTED")
        response["body"]["string"] = body
        return response

    recorder = cassette_vcr("all", before_record_response=scrub_response)
    for case in CASES:
        if case.source is None:
            print(f"skip {case.path} (offline only)")
            continue
        source = SOURCES[case.source](identification=identification)
        with recorder.use_cassette(str(out / case.path)):
            try:
                source.lookup(LiveFetcher(source.interval_s), [ident(k) for k in case.live_ids])
            except ServiceError as exc:  # the error response is recorded all the same
                print(f"{case.path}: {exc}")
        print(f"recorded {case.path}")


# --------------------------------------------------------------------------- command line


def find_fixtures(explicit: str | None) -> Path:
    """--fixtures, else $PAPERFETCH_FIXTURES, else ``shared/fixtures/real`` beside the checkout."""
    candidate = Path(explicit or os.environ.get("PAPERFETCH_FIXTURES") or REPO.parent / "shared/fixtures/real")
    if (candidate / "PROVENANCE.md").is_file():
        return candidate
    raise SystemExit(f"fixture folder not found ({candidate}); pass --fixtures DIR")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixtures", help="the fixtures/real folder (default: $PAPERFETCH_FIXTURES, else "
                        "<repo>/../shared/fixtures/real)")
    parser.add_argument("--out", help="build every cassette into this folder (default: cassettes/built/)")
    parser.add_argument("--ours", action="store_true", help="write only the committed ones (ours, and the README) "
                        "into cassettes/; needs no fixtures")
    parser.add_argument("--live", action="store_true", help="re-record against the live services (needs network)")
    parser.add_argument("--email", help="contact e-mail for --live (required by Unpaywall)")
    parser.add_argument("--openalex-key", help="OpenAlex api_key for --live")
    parser.add_argument("--ncbi-key", help="NCBI api_key for --live")
    args = parser.parse_args(argv)
    if args.live:
        if not args.email:
            parser.error("--live needs --email")
        out = Path(args.out) if args.out else REPO / "cassettes/live"
        record_live(out, Identification(email=args.email, openalex_api_key=args.openalex_key, ncbi_api_key=args.ncbi_key))
        return 0
    if args.ours:
        written = build_offline(None, REPO / "cassettes", ours_only=True)
        out = REPO / "cassettes"
    else:
        out = Path(args.out) if args.out else REPO / "cassettes/built"
        written = build_offline(find_fixtures(args.fixtures), out)
    for path in written:
        print(path.relative_to(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
