"""Europe PMC REST search (``resultType=core``): ids, metadata and PMC full-text PDFs.

One id per request: ``DOI:"…"``, ``EXT_ID:<pmid> AND SRC:MED`` or ``PMCID:PMC…``.
A search can return several records (a MEDLINE record and a preprint sharing a
DOI); the first one whose id equals the requested id is kept, MEDLINE first.

PDF candidates: when ``isOpenAccess == "Y"`` and there is a PMCID, Europe PMC's
render endpoint ``{render}/articles/{PMCID}?pdf=render``; then every
``fullTextUrlList.fullTextUrl`` entry with ``documentStyle == "pdf"`` whose
``availability`` is "Open access" or "Free" (the recorded Lancet erratum
PMC12124214 is "Free" but ``isOpenAccess`` "N"). The render endpoint lives on
``https://europepmc.org``, not on the API host; it follows the base-URL
override when one is given so a test double or mirror serves it too.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from paperfetch.ids import Identifier, IdType
from paperfetch.sources.base import Record, RequestSpec, Source, dedupe

__all__ = ["EuropePMCSource"]

_FREE = frozenset({"open access", "free"})


class EuropePMCSource(Source):
    name = "europepmc"
    default_base_url = "https://www.ebi.ac.uk"
    render_base_url: ClassVar[str] = "https://europepmc.org"
    # Europe PMC publishes no numeric limit for its REST API; 10 requests/s is a modest default.
    min_interval_s = 0.1
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
        results = (json.loads(body).get("resultList") or {}).get("result") or []
        ident = spec.ids[0]
        field = {IdType.DOI: "doi", IdType.PMID: "pmid", IdType.PMCID: "pmcid"}[ident.type]
        matches = [r for r in results if str(r.get(field) or "").lower() == ident.value.lower()]
        matches.sort(key=lambda r: r.get("source") != "MED")  # stable: MEDLINE first, then service order
        return {ident.key: self._record(matches[0])} if matches else {}

    def _record(self, result: dict[str, Any]) -> Record:
        pmcid = result.get("pmcid")
        license_ = result.get("license")
        # Author manuscripts (authMan / epmcAuthMan / nihAuthMan) are accepted versions.
        manuscript = any(result.get(k) == "Y" for k in ("authMan", "epmcAuthMan", "nihAuthMan"))
        meta = {"version": "acceptedVersion" if manuscript else None, "license": license_, "host_type": "repository"}
        candidates = []
        if result.get("isOpenAccess") == "Y" and pmcid:
            render = f"{self.service_url(self.render_base_url)}/articles/{pmcid}?pdf=render"
            candidates.append(self.candidate(render, kind="pdf", **meta))
        for entry in (result.get("fullTextUrlList") or {}).get("fullTextUrl") or []:
            if entry.get("documentStyle") == "pdf" and (entry.get("availability") or "").lower() in _FREE:
                host_type = "repository" if entry.get("site") == "Europe_PMC" else None
                candidates.append(self.candidate(entry.get("url"), kind="pdf", **{**meta, "host_type": host_type}))
        journal = ((result.get("journalInfo") or {}).get("journal") or {}).get("title") or result.get("journalTitle")
        year = result.get("pubYear")
        return Record(
            doi=(result.get("doi") or "").lower() or None,
            pmid=result.get("pmid"),
            pmcid=pmcid,
            title=result.get("title"),
            year=int(year) if year and str(year).isdigit() else None,
            journal=journal,
            license=license_,
            is_oa=result.get("isOpenAccess") == "Y" if result.get("isOpenAccess") in ("Y", "N") else None,
            candidates=dedupe(candidates),
        )
