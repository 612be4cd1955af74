"""Europe PMC REST search (``resultType=core``): ids, metadata and PMC full-text PDFs (docs/sources.md)."""

from __future__ import annotations

from typing import Any, ClassVar

from paperfetch.ids import Identifier, IdType
from paperfetch.names import from_europepmc
from paperfetch.sources.base import Record, RequestSpec, Source, dedupe, quote_path
from paperfetch.sources.notices import europepmc_notices
from paperfetch.sources.schema import ID, OBJECTS, TEXT, YEAR, at, load_json, top_object

__all__ = ["EuropePMCSource"]

_FREE = frozenset({"open access", "free"})


class EuropePMCSource(Source):
    name = "europepmc"
    default_base_url = "https://www.ebi.ac.uk"
    render_base_url: ClassVar[str] = "https://europepmc.org"
    # 10 requests/s and 500 requests/min for the REST API (Europe PMC staff post, checked 2026-02-26)
    min_interval_s = 0.1
    rate_windows = ("10/s", "500/min")
    accepts = frozenset({IdType.DOI, IdType.PMID, IdType.PMCID})

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        ident = ids[0]
        query = {
            IdType.DOI: f'DOI:"{ident.value}"',
            IdType.PMID: f"EXT_ID:{ident.value} AND SRC:MED",
            IdType.PMCID: f"PMCID:{ident.value}",
        }[ident.type]
        return RequestSpec(
            path="/europepmc/webservices/rest/search",
            params={"query": query, "resultType": "core", "format": "json"},
            ids=ids,
        )

    def parse(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        data = top_object(load_json(body, self.name), self.name)
        results = at(data, "resultList", "result", kind=OBJECTS)
        ident = spec.ids[0]
        field = {IdType.DOI: "doi", IdType.PMID: "pmid", IdType.PMCID: "pmcid"}[ident.type]
        matches = [r for r in results if (ID(r.get(field)) or "").lower() == ident.value.lower()]
        matches.sort(key=lambda r: r.get("source") != "MED")  # stable: MEDLINE first, then service order
        return {ident.key: self._record(matches[0])} if matches else {}

    def _record(self, result: dict[str, Any]) -> Record:
        pmcid = at(result, "pmcid", kind=TEXT)
        license_ = at(result, "license", kind=TEXT)
        # Author manuscripts (authMan / epmcAuthMan / nihAuthMan) are accepted versions.
        manuscript = any(result.get(k) == "Y" for k in ("authMan", "epmcAuthMan", "nihAuthMan"))
        meta = {"version": "acceptedVersion" if manuscript else None, "license": license_, "host_type": "repository"}
        candidates = []
        if result.get("isOpenAccess") == "Y" and pmcid:
            try:
                render = f"{self.service_url(self.render_base_url)}/articles/{quote_path(pmcid)}?pdf=render"
            except ValueError:  # "..", a lone surrogate: not a PMCID the render endpoint could take
                render = None
            candidates.append(self.candidate(render, kind="pdf", **meta))
        for entry in at(result, "fullTextUrlList", "fullTextUrl", kind=OBJECTS):
            if entry.get("documentStyle") == "pdf" and (at(entry, "availability", kind=TEXT) or "").lower() in _FREE:
                host_type = "repository" if entry.get("site") == "Europe_PMC" else None
                candidates.append(self.candidate(entry.get("url"), kind="pdf", **{**meta, "host_type": host_type}))
        journal = at(result, "journalInfo", "journal", "title", kind=TEXT) or at(result, "journalTitle", kind=TEXT)
        doi = at(result, "doi", kind=TEXT)
        return Record(
            doi=doi.lower() if doi else None,
            pmid=ID(result.get("pmid")),
            pmcid=pmcid,
            title=at(result, "title", kind=TEXT),
            year=at(result, "pubYear", kind=YEAR),
            journal=journal,
            license=license_,
            is_oa=result.get("isOpenAccess") == "Y" if result.get("isOpenAccess") in ("Y", "N") else None,
            candidates=dedupe(candidates),
            authors=[n for n in map(from_europepmc, at(result, "authorList", "author", kind=OBJECTS)) if n] or None,
            **europepmc_notices(result),
        )
