"""Crossref REST ``/works/{doi}``: bibliographic metadata and publisher full-text links.

Crossref does not say whether a work is open access, so ``is_oa`` and
``oa_status`` stay None. Candidates come from ``message.link``: entries with
``content-type: application/pdf`` are PDF candidates. ``unspecified`` links are
used only when the URL path itself ends in ``.pdf`` — in the recorded bodies they
are text-mining API endpoints (``api.wiley.com/onlinelibrary/tdm/…``) and
similarity-checking pages (``dx.plos.org/…``, ``onlinelibrary.wiley.com/doi/pdf/…``)
that need tokens or answer HTML. ``text/html``, ``text/xml``, ``text/plain`` and
``application/xml`` links are never PDFs and are ignored.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from paperfetch.config import Identification
from paperfetch.ids import Identifier, IdType
from paperfetch.sources.base import Record, RequestSpec, Source, dedupe, quote_path

__all__ = ["CrossrefSource"]


class CrossrefSource(Source):
    name = "crossref"
    default_base_url = "https://api.crossref.org"
    # Crossref's public pool allows 5 requests/s at concurrency 1 (x-rate-limit-limit: 5 and
    # x-concurrency-limit: 1 in the 2026 recording fixtures/real/crossref/works_404_notarealdoi.vcr.yaml);
    # the polite pool (a mailto) allows 10/s. Older recordings (2022/2023) still say 50/s.
    min_interval_s = 0.2
    accepts = frozenset({IdType.DOI})

    @classmethod
    def interval_for(cls, identification: Identification) -> float:
        return 0.1 if identification.email else cls.min_interval_s

    def identity_params(self) -> dict[str, str]:
        return {"mailto": self.identification.email} if self.identification.email else {}

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        return RequestSpec(path=f"/works/{quote_path(ids[0].value)}", params={}, ids=ids)

    def parse(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        data = json.loads(body)
        work = data.get("message") if isinstance(data, dict) and data.get("status") == "ok" else None
        if not isinstance(work, dict) or not work.get("DOI"):
            return {}
        licenses = work.get("license") or []
        license_url = licenses[0].get("URL") if licenses else None
        candidates = [
            self.candidate(link.get("URL"), kind="pdf", version=_VERSIONS.get(link.get("content-version")),
                           license=license_url, host_type="publisher")
            for link in work.get("link") or []
            if _is_pdf_link(link)
        ]
        record = Record(
            doi=work["DOI"].lower(),
            title=_first(work.get("title")),
            year=_year(work),
            journal=_first(work.get("container-title")),
            license=license_url,
            candidates=dedupe(candidates),
        )
        return {spec.ids[0].key: record}


# Crossref's content-version vocabulary -> the Unpaywall/OpenAlex one used on Candidate.
_VERSIONS = {"vor": "publishedVersion", "am": "acceptedVersion"}


def _is_pdf_link(link: dict[str, Any]) -> bool:
    content_type = (link.get("content-type") or "").lower()
    if content_type == "application/pdf":
        return True
    return content_type == "unspecified" and urlsplit(link.get("URL") or "").path.lower().endswith(".pdf")


def _first(values: Any) -> str | None:
    return values[0] if isinstance(values, list) and values and isinstance(values[0], str) else None


def _year(work: dict[str, Any]) -> int | None:
    for key in ("published", "issued", "published-print", "published-online"):
        parts = (work.get(key) or {}).get("date-parts") or [[None]]
        if parts and parts[0] and isinstance(parts[0][0], int):
            return parts[0][0]
    return None
