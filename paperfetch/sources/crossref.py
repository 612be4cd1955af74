"""Crossref ``/works/{doi}``: metadata and publisher full-text links (docs/sources.md); an ``unspecified`` link
counts only when its path ends in ``.pdf`` (the recorded others are text-mining endpoints and HTML).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from paperfetch.config import Identification
from paperfetch.ids import Identifier, IdType
from paperfetch.names import from_crossref
from paperfetch.sources.base import Record, RequestSpec, Source, dedupe, quote_path
from paperfetch.sources.notices import crossref_notices, crossref_versions
from paperfetch.sources.schema import OBJECT, OBJECTS, TEXT, URL, YEAR, at, load_json, top_object

__all__ = ["CrossrefSource"]


class CrossrefSource(Source):
    name = "crossref"
    default_base_url = "https://api.crossref.org"
    # public pool 5 requests/s, polite pool (a mailto) 10/s: docs/sources.md, "The services"
    min_interval_s = 0.2
    faster_with = ("email", 0.1)
    wants_contact = True  #: asks for a contact e-mail in the User-Agent (the transport sends it here only)
    accepts = frozenset({IdType.DOI})
    identity = {"mailto": "email"}

    @classmethod
    def concurrency_for(cls, identification: Identification) -> int:
        """Crossref's pool cap on requests in flight (``x-concurrency-limit`` since 2025-12-01): 3 with an e-mail
        (the polite pool), 1 without; a header applies under it."""
        return 3 if identification.email else 1

    @classmethod
    def pools_for(cls, identification: Identification) -> dict[str, tuple[str, float, int, str]]:
        """Crossref's pools per request kind, each ``name: (regex of path and query, interval, in flight, label)``,
        the list pool first (measured 2026-10-03: ``x-api-pool: public-array`` 1/s, ``public-single`` 5/s, one in
        flight). The polite pool's list figure was not measured: it keeps the public 1/s."""
        from paperfetch.http.pools import CROSSREF_LIST

        kind = "polite" if identification.email else "public"
        return {f"{kind}-array": (CROSSREF_LIST, 1.0, 1, "list queries"),
                f"{kind}-single": (".", cls.interval_for(identification), cls.concurrency_for(identification),
                                   "single lookups")}

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        return RequestSpec(path=f"/works/{quote_path(ids[0].value)}", params={}, ids=ids)

    def parse(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        data = top_object(load_json(body, self.name), self.name)
        work = at(data, "message", kind=OBJECT) if data.get("status") == "ok" else {}
        doi = at(work, "DOI", kind=TEXT)
        if not doi:
            return {}
        license_url = at(work, "license", 0, "URL", kind=TEXT)
        candidates = [
            self.candidate(at(link, "URL", kind=URL), kind="pdf", version=_VERSIONS.get(at(link, "content-version", kind=TEXT)),
                           license=license_url, host_type="publisher")
            for link in at(work, "link", kind=OBJECTS)
            if _is_pdf_link(link)
        ]
        record = Record(
            doi=doi.lower(),
            title=at(work, "title", 0, kind=TEXT),
            year=_year(work),
            journal=at(work, "container-title", 0, kind=TEXT),
            license=license_url,
            candidates=dedupe(candidates),
            authors=[n for n in map(from_crossref, at(work, "author", kind=OBJECTS)) if n] or None,
            **crossref_notices(work),  # retraction and preprint links ride on the same answer
            **crossref_versions(work),
        )
        return {spec.ids[0].key: record}


# Crossref's content-version vocabulary -> the Unpaywall/OpenAlex one used on Candidate.
_VERSIONS = {"vor": "publishedVersion", "am": "acceptedVersion"}


def _is_pdf_link(link: dict[str, Any]) -> bool:
    content_type = (at(link, "content-type", kind=TEXT) or "").lower()
    if content_type == "application/pdf":
        return True
    try:
        path = urlsplit(at(link, "URL", kind=URL) or "").path
    except ValueError:  # "http://[" and the like
        return False
    return content_type == "unspecified" and path.lower().endswith(".pdf")


def _year(work: dict[str, Any]) -> int | None:
    for key in ("published", "issued", "published-print", "published-online"):
        year = at(work, key, "date-parts", 0, 0, kind=YEAR)
        if year is not None:
            return year
    return None
