"""Unpaywall v2: one DOI per request, OA locations ranked by Unpaywall itself.

Field names follow the recorded v2 bodies in ``fixtures/real/unpaywall`` (2020
schema: ``best_oa_location``, ``oa_locations``, ``url_for_pdf``,
``url_for_landing_page``, ``journal_name``; the licence lives on each location,
there is no top-level ``license``).
"""

from __future__ import annotations

import requests

from paperfetch.http.outcome import Outcome, default_classify
from paperfetch.ids import Identifier, IdType
from paperfetch.sources.base import Record, RequestSpec, Source, dedupe, quote_path
from paperfetch.sources.schema import FLAG, OBJECT, OBJECTS, TEXT, YEAR, at, load_json, top_object

__all__ = ["UnpaywallSource"]


class UnpaywallSource(Source):
    name = "unpaywall"
    default_base_url = "https://api.unpaywall.org"
    # Unpaywall publishes a daily quota (100,000 calls/day, https://unpaywall.org/products/api),
    # not a per-second one. 0.1 s (10/s) keeps bursts modest; the daily quota is the caller's to budget.
    min_interval_s = 0.1
    wants_contact = True  #: asks for a contact e-mail in the User-Agent (the transport sends it here only)
    accepts = frozenset({IdType.DOI})
    requires_email = True

    def identity_params(self) -> dict[str, str]:
        return {"email": self.identification.email or ""}

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        return RequestSpec(path=f"/v2/{quote_path(ids[0].value)}", params={}, ids=ids)

    def classify(self, response: requests.Response) -> Outcome:
        # 422 is Unpaywall's answer to a string that is not a DOI it can look up: no such record.
        if response.status_code == 422:
            return Outcome.ABSENT
        return default_classify(response)

    def parse(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        work = top_object(load_json(body, self.name), self.name)
        doi = at(work, "doi", kind=TEXT)
        if not doi:
            return {}
        best = at(work, "best_oa_location", kind=OBJECT) or None
        locations = [best] + [loc for loc in at(work, "oa_locations", kind=OBJECTS) if loc != best]
        candidates = []
        for loc in filter(None, locations):
            meta = {"version": loc.get("version"), "license": loc.get("license"), "host_type": loc.get("host_type")}
            pdf, url = at(loc, "url_for_pdf", kind=TEXT), at(loc, "url", kind=TEXT)
            candidates.append(self.candidate(pdf, kind="pdf", **meta))
            # `url` is url_for_pdf when there is one, else the landing page; dedupe drops the repeat.
            candidates.append(self.candidate(url, kind="pdf" if url == pdf else "landing", **meta))
            candidates.append(self.candidate(at(loc, "url_for_landing_page", kind=TEXT), kind="landing", **meta))
        record = Record(
            doi=doi.lower(),
            title=at(work, "title", kind=TEXT),
            year=at(work, "year", kind=YEAR),
            journal=at(work, "journal_name", kind=TEXT),
            oa_status=at(work, "oa_status", kind=TEXT),
            license=at(best, "license", kind=TEXT),
            is_oa=at(work, "is_oa", kind=FLAG),
            candidates=dedupe(candidates),
        )
        return {spec.ids[0].key: record}
