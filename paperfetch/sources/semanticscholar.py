"""Semantic Scholar: up to 500 papers per ``POST /graph/v1/paper/batch`` (docs/sources.md); the answer lists
records in request order (``null`` if unknown), matched by position, never by DOI.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar
from urllib.parse import urlsplit

from paperfetch.errors import MalformedResponse
from paperfetch.ids import Identifier, IdType
from paperfetch.sources.base import Candidate, Record, RequestSpec, Source, dedupe, license_key
from paperfetch.sources.schema import ID, OBJECT, TEXT, URL, YEAR, at, load_json

__all__ = ["FIELDS", "SemanticScholarSource", "s2_id", "s2_license"]

#: The fields asked for: just what becomes a candidate and the record's identifiers.
FIELDS = "openAccessPdf,externalIds,title,year"

_PREFIX = {IdType.DOI: "DOI", IdType.PMID: "PMID", IdType.PMCID: "PMCID", IdType.ARXIV: "ARXIV"}
_PUBLISHER_STATUSES = frozenset({"GOLD", "HYBRID", "BRONZE"})
_LANDING_HOSTS = frozenset({"doi.org", "dx.doi.org", "www.doi.org"})


class SemanticScholarSource(Source):
    name = "semanticscholar"
    default_base_url = "https://api.semanticscholar.org"
    #: Asked in batches before the items run (paperfetch.flow.decide.Stage.PREFETCHED), like OpenAlex.
    stage: ClassVar[str] = "prefetched"
    min_interval_s = 1.0  # "1 request per second" for a key holder (the API licence)
    batch_size = 500  # "up to 500 paper IDs" per /paper/batch call
    accepts = frozenset({IdType.DOI, IdType.PMID, IdType.PMCID, IdType.ARXIV})
    identity_header = {"x-api-key": "s2_api_key"}

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        body = json.dumps({"ids": [s2_id(i) for i in ids]}, separators=(",", ":"))
        return RequestSpec(path="/graph/v1/paper/batch", params={"fields": FIELDS}, ids=ids, body=body)

    def parse(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        papers = load_json(body, self.name)
        if not isinstance(papers, list) or len(papers) != len(spec.ids):
            got = f"{len(papers)} entries" if isinstance(papers, list) else "no list"
            raise MalformedResponse(f"{self.name}: expected a list of {len(spec.ids)} entries in request order, got {got}")
        # null: this id is unknown, and only this one
        return {ident.key: self._record(paper) for ident, paper in zip(spec.ids, papers) if isinstance(paper, dict)}

    def _record(self, paper: dict[str, Any]) -> Record:
        ids = at(paper, "externalIds", kind=OBJECT)
        pmcid = ID(ids.get("PubMedCentral"))
        doi = at(ids, "DOI", kind=TEXT)
        pdf = at(paper, "openAccessPdf", kind=OBJECT)
        status = (at(pdf, "status", kind=TEXT) or "").upper()
        licence = s2_license(at(pdf, "license", kind=TEXT))
        candidates: list[Candidate | None] = []
        url = at(pdf, "url", kind=URL)
        if url and status != "CLOSED":
            publisher = status in _PUBLISHER_STATUSES
            candidates.append(self.candidate(
                url, kind="landing" if (urlsplit(url).hostname or "").lower() in _LANDING_HOSTS else "pdf",
                version="publishedVersion" if publisher else None, license=licence,
                host_type="publisher" if publisher else ("repository" if status == "GREEN" else None)))
        return Record(
            doi=doi.lower() if doi else None,
            pmid=ID(ids.get("PubMed")),
            pmcid=(pmcid if pmcid.upper().startswith("PMC") else f"PMC{pmcid}") if pmcid else None,
            arxiv_id=ID(ids.get("ArXiv")),
            title=at(paper, "title", kind=TEXT),
            year=at(paper, "year", kind=YEAR),
            oa_status=status.lower() or None,
            license=licence,
            is_oa=bool(candidates) or None,
            candidates=dedupe(candidates),
        )


def s2_id(identifier: Identifier) -> str:
    """The batch endpoint's form of an id: ``DOI:10.…``, ``PMID:123``, ``PMCID:2323736`` (no "PMC"), ``ARXIV:2106.15928``."""
    value = identifier.value
    if identifier.type is IdType.PMCID and value.upper().startswith("PMC"):
        value = value[3:]
    return f"{_PREFIX[identifier.type]}:{value}"


def s2_license(value: str | None) -> str | None:
    """Semantic Scholar's ``CCBY``/``CCBYNCND``/``CC0`` as the ``cc-by``/``cc-by-nc-nd``/``cc0`` the other sources write."""
    key = license_key(value)
    return key.lower() if key else None
