"""OpenAlex works: one DOI via the free single-work endpoint, several via one OR-filter (docs/sources.md);
only ``is_oa`` locations become candidates. The ``X-RateLimit-*`` budget is the transport's to act on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from paperfetch.config import Identification
from paperfetch.ids import Identifier, IdType
from paperfetch.names import from_openalex
from paperfetch.sources.base import Candidate, Record, RequestSpec, Source, batched, dedupe, quote_path
from paperfetch.sources.schema import FLAG, OBJECT, OBJECTS, TEXT, URL, YEAR, at, load_json, top_object

__all__ = ["OpenAlexSource"]

_DOI_PREFIXES = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/")
_PMID_PREFIXES = ("https://pubmed.ncbi.nlm.nih.gov/", "http://pubmed.ncbi.nlm.nih.gov/")
# OpenAlex writes PMCIDs as https://www.ncbi.nlm.nih.gov/pmc/articles/5815332 — without the "PMC".
_PMCID_PREFIXES = (
    "https://www.ncbi.nlm.nih.gov/pmc/articles/",
    "http://www.ncbi.nlm.nih.gov/pmc/articles/",
    "https://pmc.ncbi.nlm.nih.gov/articles/",
)


class OpenAlexSource(Source):
    name = "openalex"
    default_base_url = "https://api.openalex.org"
    # at most 10 requests/s (https://docs.openalex.org); the daily budget is not a pacing matter
    min_interval_s = 0.1
    wants_contact = True  #: asks for a contact e-mail in the User-Agent (the transport sends it here only)
    batch_size = 50  # "up to 50 DOIs in a single API call" with the | OR filter; per-page matches it
    accepts = frozenset({IdType.DOI})
    identity = {"mailto": "email", "api_key": "openalex_api_key"}

    @classmethod
    def budget_remedy(cls, identification: Identification) -> str:
        """What the one warning of a spent daily budget tells the user to do (the transport says when it renews)."""
        if identification.openalex_api_key:
            return "the key's budget renews then"
        return ("A free OpenAlex API key raises the budget: set PAPERFETCH_OPENALEX_API_KEY "
                "(or Retriever(openalex_api_key=...)).")

    def requests_for(self, ids: Sequence[Identifier]) -> list[RequestSpec]:
        accepted = self.accepted(ids)
        # "," and "|" are the filter syntax itself; such DOIs are asked for one by one.
        single = [i for i in accepted if "," in i.value or "|" in i.value]
        listed = [i for i in accepted if i not in single]
        specs = [self.spec_for(batch) for batch in batched(listed, self.batch_size)]
        return specs + [self.spec_for((ident,)) for ident in single]

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        if len(ids) == 1:
            return RequestSpec(path=f"/works/doi:{quote_path(ids[0].value)}", params={}, ids=ids)
        dois = "|".join(i.value for i in ids)
        return RequestSpec(path="/works", params={"filter": f"doi:{dois}", "per-page": str(self.batch_size)}, ids=ids)

    def parse(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        data = top_object(load_json(body, self.name), self.name)
        # The list endpoint answers {"results": [...]}; the single-work endpoint answers the work itself.
        works = OBJECTS(data.get("results")) if "results" in data else [data]
        wanted = {i.value.lower(): i.key for i in spec.ids}
        records = {}
        for work in works:
            doi = _strip(at(work, "doi", kind=TEXT), _DOI_PREFIXES)
            if doi and doi.lower() in wanted:
                records[wanted[doi.lower()]] = self._record(work, doi.lower())
        return records

    def _record(self, work: dict[str, Any], doi: str) -> Record:
        ids = at(work, "ids", kind=OBJECT)
        oa = at(work, "open_access", kind=OBJECT)
        best = at(work, "best_oa_location", kind=OBJECT)
        primary = at(work, "primary_location", kind=OBJECT)
        pmcid = _strip(at(ids, "pmcid", kind=TEXT), _PMCID_PREFIXES)
        best_pdf = at(best, "pdf_url", kind=URL)
        oa_url = at(oa, "oa_url", kind=URL)
        candidates = [
            self._from_location(best, best_pdf, "pdf"),
            # oa_url is the best location's pdf_url when it has one, otherwise its landing page.
            self._from_location(best, oa_url, "pdf" if oa_url == best_pdf else "landing"),
        ]
        for loc in at(work, "locations", kind=OBJECTS):
            if at(loc, "is_oa", kind=FLAG):
                candidates.append(self._from_location(loc, at(loc, "pdf_url", kind=URL), "pdf"))
                candidates.append(self._from_location(loc, at(loc, "landing_page_url", kind=URL), "landing"))
        return Record(
            doi=doi,
            pmid=_strip(at(ids, "pmid", kind=TEXT), _PMID_PREFIXES),
            pmcid=(pmcid if pmcid.upper().startswith("PMC") else f"PMC{pmcid}") if pmcid else None,
            title=at(work, "title", kind=TEXT) or at(work, "display_name", kind=TEXT),
            year=at(work, "publication_year", kind=YEAR),
            journal=at(primary, "source", "display_name", kind=TEXT),
            oa_status=at(oa, "oa_status", kind=TEXT),
            license=at(best, "license", kind=TEXT) or at(primary, "license", kind=TEXT),
            is_oa=at(oa, "is_oa", kind=FLAG),
            candidates=dedupe(candidates),
            authors=[n for n in map(from_openalex, at(work, "authorships", kind=OBJECTS)) if n] or None,
            retracted=at(work, "is_retracted", kind=FLAG),
        )

    def _from_location(self, loc: dict[str, Any], url: Any, kind: str) -> Candidate | None:
        source_type = at(loc, "source", "type", kind=TEXT)
        host_type = None if source_type is None else ("repository" if source_type == "repository" else "publisher")
        return self.candidate(url, kind=kind, version=loc.get("version"), license=loc.get("license"), host_type=host_type)


def _strip(value: Any, prefixes: tuple[str, ...]) -> str | None:
    """The identifier part of an OpenAlex id URL (``https://pubmed.ncbi.nlm.nih.gov/123`` -> ``123``)."""
    if not isinstance(value, str) or not value:
        return None
    for prefix in prefixes:
        if value.lower().startswith(prefix):
            return value[len(prefix) :].strip("/")
    return value
