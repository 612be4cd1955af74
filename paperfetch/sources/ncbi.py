"""NCBI: the PMC ID converter and E-utilities efetch for PubMed records; ids and metadata, no candidates
(docs/sources.md). E-utilities' 429 echoes the caller's IP, which the classifiers register for redaction.
"""

from __future__ import annotations

import json
import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any, ClassVar

import requests

from paperfetch.errors import MalformedResponse, NetworkError, NotFoundError, RateLimited, ServiceError
from paperfetch.http.outcome import Outcome, default_classify
from paperfetch.ids import Identifier, IdType
from paperfetch.names import from_pubmed
from paperfetch.redact import register_secrets
from paperfetch.sources.base import Fetcher, Record, RequestSpec, Source, batched
from paperfetch.sources.notices import pubmed_notices
from paperfetch.sources.schema import ID, OBJECTS, TEXT, at, load_json, load_xml, top_object

__all__ = ["NCBIEutilsSource", "NCBIIdConvSource", "mask_rate_limit_echo", "pubmed_article", "pubmed_authors"]

logger = logging.getLogger(__name__)


class _NCBISource(Source):
    """What the two NCBI services share: identification and pacing."""

    min_interval_s = 0.34  # 3 requests/s without an API key
    faster_with = ("ncbi_api_key", 0.1)  # 10 requests/s with a key
    wants_contact = True  #: asks for a contact e-mail in the User-Agent (the transport sends it here only)
    identity = {"tool": "tool", "email": "email", "api_key": "ncbi_api_key"}

    def classify(self, response: requests.Response) -> Outcome:
        mask_rate_limit_echo(response)
        return default_classify(response)


class NCBIIdConvSource(_NCBISource):
    name = "ncbi_idconv"
    default_base_url = "https://pmc.ncbi.nlm.nih.gov"
    path: ClassVar[str] = "/tools/idconv/api/v1/articles/"
    #: The pre-2025 home, asked when the new one fails (a network error or a server error, never a "no record").
    fallback_base_url: ClassVar[str] = "https://www.ncbi.nlm.nih.gov"
    fallback_path: ClassVar[str] = "/pmc/utils/idconv/v1.0/"
    # "up to 200 IDs in a single request", all of one type (PMC ID Converter API documentation).
    batch_size = 200
    accepts = frozenset({IdType.PMID, IdType.PMCID, IdType.DOI})

    def requests_for(self, ids: Sequence[Identifier]) -> list[RequestSpec]:
        # ids are comma-separated on the wire, so a DOI containing a comma cannot be asked for.
        accepted = [i for i in self.accepted(ids) if "," not in i.value]
        return [self.spec_for(batch) for id_type in (IdType.PMID, IdType.PMCID, IdType.DOI)  # one type per request
                for batch in batched([i for i in accepted if i.type == id_type], self.batch_size)]

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        return RequestSpec(
            path=self.path,
            params={"ids": ",".join(i.value for i in ids), "idtype": ids[0].type.value, "format": "json"},
            ids=ids,
        )

    def related_hosts(self) -> tuple[str, ...]:
        return (self.service_url(self.fallback_base_url),)

    def send(self, http: Fetcher, spec: RequestSpec) -> requests.Response:
        """Like :meth:`Source.send`, asking the old URL for a batch the new one could not answer."""
        try:
            return super().send(http, spec)
        except (NetworkError, ServiceError) as exc:
            if not _worth_the_fallback(exc):
                raise
            logger.info("%s: the new converter URL failed (%s); asking the old one", self.name, type(exc).__name__)
            old = self.service_url(self.fallback_base_url) + self.fallback_path  # on the override host when one is given
            return http.fetch(old, classify=self.classify, params=self.url_for(spec)[1])

    def classify(self, response: requests.Response) -> Outcome:
        outcome = super().classify(response)
        # A 404 carrying {"status": "error", "message": "ID type 'doi' mismatch …"} rejects the request
        # itself (recorded in fixtures/real/ncbi_idconv); asking again cannot help, and it is not "no record".
        if response.status_code == 404 and _error_json(response).get("status") == "error":
            return Outcome.FATAL
        return outcome

    def parse(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        data = top_object(load_json(body, self.name), self.name)
        by_value = {_fold(i.type, i.value): i.key for i in spec.ids}
        id_type = spec.ids[0].type
        records = {}
        for item in at(data, "records", kind=OBJECTS):
            if item.get("status") == "error" or item.get("errmsg"):
                continue  # an id the converter does not know ("Identifier not found in PMC", "invalid article id")
            # 2025 shape: "requested-id" echoes the asked id; the old one echoed it under its own type's key.
            requested = ID(item.get("requested-id")) or ID(item.get(id_type.value))
            key = by_value.get(_fold(id_type, requested or ""))
            if key is None:
                continue
            doi = at(item, "doi", kind=TEXT)
            records[key] = Record(doi=doi.lower() if doi else None, pmid=ID(item.get("pmid")),
                                  pmcid=at(item, "pmcid", kind=TEXT))
        return records


class NCBIEutilsSource(_NCBISource):
    name = "ncbi_eutils"
    default_base_url = "https://eutils.ncbi.nlm.nih.gov"
    # 200 PMIDs keep the URL near 2 kB; a recorded 2,000-id (20 kB) URL was refused with 414
    batch_size = 200
    accepts = frozenset({IdType.PMID})

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        return RequestSpec(
            path="/entrez/eutils/efetch.fcgi",
            params={"db": "pubmed", "id": ",".join(i.value for i in ids), "retmode": "xml"},
            ids=ids,
        )

    def parse(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        wanted = {i.value: i.key for i in spec.ids}
        records = {}
        for article in load_xml(body, self.name).iter("PubmedArticle"):
            fields = pubmed_article(article)
            if fields["pmid"] in wanted:
                records[wanted[fields["pmid"]]] = Record(**fields, authors=pubmed_authors(article), **pubmed_notices(article))
        return records


def _worth_the_fallback(exc: ServiceError) -> bool:
    """The new URL is down or broken (network, 5xx), not "no record", not a refused request, not a hold."""
    if isinstance(exc, (NotFoundError, RateLimited, MalformedResponse)):
        return False
    status = getattr(exc, "status_code", None)
    return isinstance(exc, NetworkError) or status is None or status >= 500


def mask_rate_limit_echo(response: requests.Response) -> None:
    """Register the ``api-key`` of an E-utilities error body (the caller's IP without a key) for redaction."""
    echo = _error_json(response).get("api-key")
    if isinstance(echo, str) and echo.strip():
        register_secrets([echo.strip()])


def _error_json(response: requests.Response) -> dict[str, Any]:
    """The JSON object of a short error answer; ``{}`` for anything else."""
    if response.status_code < 400 or len(response.content) > 4096:
        return {}
    try:
        data = json.loads(response.content)
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _fold(id_type: IdType, value: str) -> str:
    return value.upper() if id_type == IdType.PMCID else value.lower()


def _text(element: ET.Element | None) -> str | None:
    """All text inside an element (titles may hold <i>, <sup> …), whitespace collapsed."""
    if element is None:
        return None
    return " ".join("".join(element.itertext()).split()) or None


def pubmed_authors(article: ET.Element) -> list[dict[str, str]] | None:
    """The article's ``AuthorList``, typed (:func:`paperfetch.names.from_pubmed`: ``ForeName`` kept,
    ``CollectiveName`` an organisation)."""
    names = [from_pubmed(a) for a in article.findall("MedlineCitation/Article/AuthorList/Author")]
    return [n for n in names if n] or None


def pubmed_article(article: ET.Element) -> dict[str, Any]:
    """A PubmedArticle's PMID, its own ids (a ReferenceList's ArticleIdLists are the cited works'), title, journal
    and year."""
    own = {el.get("IdType"): (el.text or "").strip() for el in article.findall("PubmedData/ArticleIdList/ArticleId")}
    doi = own.get("doi") or _elocation_doi(article)
    return {"pmid": (article.findtext("MedlineCitation/PMID") or "").strip(), "doi": doi.lower() if doi else None,
            "pmcid": own.get("pmc") or None, "title": _text(article.find("MedlineCitation/Article/ArticleTitle")),
            "journal": _text(article.find("MedlineCitation/Article/Journal/Title")), "year": _pub_year(article)}


def _elocation_doi(article: ET.Element) -> str | None:
    for el in article.findall("MedlineCitation/Article/ELocationID"):
        if el.get("EIdType") == "doi" and el.text:
            return el.text.strip()
    return None


def _pub_year(article: ET.Element) -> int | None:
    pub_date = article.find("MedlineCitation/Article/Journal/JournalIssue/PubDate")
    if pub_date is None:
        return None
    text = pub_date.findtext("Year") or pub_date.findtext("MedlineDate") or ""  # MedlineDate: "2021 Oct-Dec"
    match = re.search(r"\b(\d{4})\b", text)
    return int(match.group(1)) if match else None
