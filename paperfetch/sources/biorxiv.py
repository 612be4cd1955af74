"""bioRxiv and medRxiv: a preprint's versions from ``api.biorxiv.org/details`` (docs/sources.md); bioRxiv is
asked first. No ``details`` answer was found recorded: its cassette is marked synthetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from paperfetch.ids import Identifier, IdType
from paperfetch.sources.base import Fetcher, Record, RequestSpec, Source, dedupe, license_key, quote_path
from paperfetch.sources.schema import OBJECTS, TEXT, at, load_json, top_object

__all__ = ["BIORXIV_DOI_PREFIXES", "BiorxivSource", "SERVERS", "biorxiv_license", "is_biorxiv_doi"]

#: The DOI prefixes of bioRxiv and medRxiv preprints (10.64898 since December 2025).
BIORXIV_DOI_PREFIXES = ("10.1101/", "10.64898/")
#: Asked in this order.
SERVERS = ("biorxiv", "medrxiv")


def is_biorxiv_doi(doi: str | None) -> bool:
    return bool(doi) and str(doi).lower().startswith(BIORXIV_DOI_PREFIXES)


class BiorxivSource(Source):
    name = "biorxiv"
    default_base_url = "https://api.biorxiv.org"
    #: Where the PDFs are (``www.biorxiv.org`` / ``www.medrxiv.org``), by server.
    pdf_base_urls: ClassVar[dict[str, str]] = {"biorxiv": "https://www.biorxiv.org", "medrxiv": "https://www.medrxiv.org"}
    stage: ClassVar[str] = "lookup"
    # No published limit; one request a second keeps clear of the Cloudflare 1015 seen on the www pages.
    min_interval_s = 1.0
    accepts = frozenset({IdType.DOI})

    def related_hosts(self) -> tuple[str, ...]:
        return tuple(self.service_url(base) for base in self.pdf_base_urls.values())

    def requests_for(self, ids: Sequence[Identifier]) -> list[RequestSpec]:
        wanted = [i for i in self.accepted(ids) if is_biorxiv_doi(i.value)]
        return [self.server_spec(server, ident) for ident in wanted for server in SERVERS]

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        return self.server_spec(SERVERS[0], ids[0])

    def lookup(self, http: Fetcher, ids: Sequence[Identifier]) -> dict[str, Record]:
        """Like :meth:`Source.lookup`, but medRxiv is asked only for the DOIs bioRxiv did not know."""
        records: dict[str, Record] = {}
        for spec in self.requests_for(ids):
            if spec.ids[0].key not in records:
                records.update(self.lookup_spec(http, spec))
        return records

    def server_spec(self, server: str, ident: Identifier) -> RequestSpec:
        prefix, _, suffix = ident.value.partition("/")
        # The DOI keeps its one "/" (the API's documented form); each side is quoted as a single segment.
        return RequestSpec(path=f"/details/{server}/{quote_path(prefix)}/{quote_path(suffix)}", params={}, ids=(ident,))

    def parse(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        data = top_object(load_json(body, self.name), self.name)
        ident = spec.ids[0]
        versions = [v for v in at(data, "collection", kind=OBJECTS)
                    if (at(v, "doi", kind=TEXT) or "").lower() == ident.value.lower()]
        if not versions:
            return {}  # "no posts found"
        latest = max(versions, key=_version_number)
        server = (at(latest, "server", kind=TEXT) or spec.path.split("/")[2]).lower()
        licence = biorxiv_license(at(latest, "license", kind=TEXT))
        published = at(latest, "published", kind=TEXT)
        version = _version_number(latest)
        pdf_base = self.pdf_base_urls.get(server)
        pdf = f"{self.service_url(pdf_base)}/content/{ident.value}v{version}.full.pdf" if pdf_base and version > 0 else None
        candidates = dedupe([self.candidate(pdf, kind="pdf", version="submittedVersion", license=licence,
                                            host_type="repository")])
        date = at(latest, "date", kind=TEXT) or ""
        return {ident.key: Record(
            doi=ident.value.lower(),
            title=at(latest, "title", kind=TEXT),
            year=int(date[:4]) if date[:4].isdigit() else None,
            journal="medRxiv" if server == "medrxiv" else "bioRxiv",
            oa_status="green" if candidates else None,
            license=licence,
            is_oa=bool(candidates) or None,
            jats_url=at(latest, "jatsxml", kind=TEXT),
            published_doi=published.lower() if published and published.upper() != "NA" and "/" in published else None,
            candidates=candidates,
        )}


def biorxiv_license(value: str | None) -> str | None:
    """``cc_by_nc_nd`` -> ``cc-by-nc-nd``; ``cc_no`` (no Creative Commons licence) -> None."""
    if not value or value.strip().lower() in ("cc_no", "none", "na"):
        return None
    return license_key(value)


def _version_number(version: dict[str, Any]) -> int:
    value = version.get("version")
    text = str(value).strip().lstrip("v") if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    return int(text) if text.isdigit() else 0
