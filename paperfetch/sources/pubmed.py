"""PubMed search: ESearch on the history server, then EFetch (docs/research.md, "search_pubmed")."""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

import requests

from paperfetch import defaults
from paperfetch.errors import ConfigurationError, ServiceError
from paperfetch.http.outcome import Outcome, default_classify
from paperfetch.sources.base import Fetcher, RequestSpec
from paperfetch.sources.ncbi import NCBIEutilsSource, _text, mask_rate_limit_echo, pubmed_article, pubmed_authors
from paperfetch.sources.schema import load_xml

__all__ = [
    "EFETCH_BATCH", "MAX_GET_URL", "MAX_RESULTS", "PubMedHit", "PubMedSearch",
    "SearchResult", "efetch_params", "esearch_params", "get_url", "parse_efetch", "parse_esearch"
]

logger = logging.getLogger("paperfetch.pubmed")

#: ids per EFetch request; NCBI recommends at most 200 per URL.
EFETCH_BATCH = 200
#: ESearch returns at most 10,000 ids of a result set (NCBI's documented retmax limit).
MAX_RESULTS = 10_000

#: Longest URL sent as a GET; longer requests go as POST (NCBI answers 414 to long URLs).
MAX_GET_URL = 2000

ESEARCH = "/entrez/eutils/esearch.fcgi"
EFETCH = "/entrez/eutils/efetch.fcgi"


@dataclass
class SearchResult:
    """What ESearch answered: the total count, the ids returned, the history-server handle."""

    count: int
    pmids: list[str]
    webenv: str | None = None
    query_key: str | None = None
    messages: list[str] = field(default_factory=list)  #: ErrorList/WarningList texts ("No items found.")


@dataclass
class PubMedHit:
    pmid: str
    doi: str | None = None
    pmcid: str | None = None
    title: str | None = None
    journal: str | None = None
    year: int | None = None
    authors: str | None = None  #: "Last FM; Last FM; …"
    abstract: str | None = None
    #: the authors typed, as the hits frame's ``authors`` column holds them (:mod:`paperfetch.names`)
    names: list[dict[str, str]] | None = None


def _classify(response: requests.Response) -> Outcome:
    mask_rate_limit_echo(response)  # E-utilities' 429 body echoes the key, or the caller's IP without one
    if response.status_code == 414:  # the URL itself is refused: sending it again cannot help
        return Outcome.FATAL
    return default_classify(response)


class PubMedSearch:
    """ESearch + EFetch through *http* (the transport, which paces NCBI's host)."""

    def __init__(self, source: NCBIEutilsSource) -> None:
        self.source = source

    def _get(self, http: Fetcher, path: str, params: dict[str, str]) -> bytes:
        url, query = self.source.url_for(RequestSpec(path=path, params=params, ids=()))
        try:
            if len(get_url(url, query)) > MAX_GET_URL:  # an id list too long for a URL: a form body instead
                return http.fetch(url, classify=_classify, method="POST", data=query).content
            return http.fetch(url, classify=_classify, params=query).content
        except ServiceError as exc:
            if exc.status_code == 414:
                raise ServiceError(
                    "NCBI refused the request URL as too long (HTTP 414); ask for fewer ids per request "
                    f"(at most {EFETCH_BATCH}) or use the history server (WebEnv)",
                    status_code=414, url=exc.url, response=exc.response,
                ) from exc
            raise

    def esearch(self, http: Fetcher, query: str, *, max_results: int = defaults.SEARCH_MAX_RESULTS,
                mindate: str | None = None, maxdate: str | None = None) -> SearchResult:
        if not isinstance(query, str) or not query.strip():
            raise ConfigurationError("a PubMed search needs a non-empty query, e.g. 'crispr AND 2020[pdat]'")
        if not 0 < max_results <= MAX_RESULTS:
            raise ConfigurationError(f"max_results must be between 1 and {MAX_RESULTS}, not {max_results!r}")
        result = parse_esearch(self._get(http, ESEARCH, esearch_params(query, max_results, mindate, maxdate)))
        del result.pmids[max_results:]  # a server (or a proxy) that ignores retmax sends more: at most max_results
        return result

    def efetch(self, http: Fetcher, result: SearchResult) -> list[PubMedHit]:
        """Every record of *result*, in its PMID order; PMIDs EFetch did not return keep a bare hit."""
        found: dict[str, PubMedHit] = {}
        for start in range(0, len(result.pmids), EFETCH_BATCH):
            for hit in parse_efetch(self._get(http, EFETCH, efetch_params(result, start))):
                found.setdefault(hit.pmid, hit)
        return [found.get(pmid) or PubMedHit(pmid=pmid) for pmid in result.pmids]

    def search(self, http: Fetcher, query: str, **kwargs: Any) -> list[PubMedHit]:
        result = self.esearch(http, query, **kwargs)
        for message in result.messages:
            logger.info("PubMed: %s", message)
        return self.efetch(http, result) if result.pmids else []


def get_url(url: str, params: dict[str, str]) -> str:
    """The URL a GET with *params* would request (encoded as ``requests`` encodes it)."""
    return requests.Request("GET", url, params=params).prepare().url or url


def esearch_params(query: str, max_results: int = defaults.SEARCH_MAX_RESULTS, mindate: str | None = None,
                   maxdate: str | None = None) -> dict[str, str]:
    """The ESearch query (without identification)."""
    params = {"db": "pubmed", "term": query.strip(), "usehistory": "y", "retmax": str(max_results), "retmode": "xml"}
    if mindate or maxdate:  # NCBI wants both; an open end is the earliest/latest date it knows
        params.update(datetype="pdat", mindate=str(mindate or "1800"), maxdate=str(maxdate or "3000"))
    return params


def efetch_params(result: SearchResult, start: int) -> dict[str, str]:
    """The EFetch query for the batch of *result* starting at *start* (without identification)."""
    batch = result.pmids[start : start + EFETCH_BATCH]
    params = {"db": "pubmed", "retmode": "xml"}
    if result.webenv and result.query_key:
        params.update(WebEnv=result.webenv, query_key=result.query_key, retstart=str(start), retmax=str(len(batch)))
    else:
        params["id"] = ",".join(batch)
    return params


def parse_esearch(body: bytes) -> SearchResult:
    root = load_xml(body, "ESearch")
    if root.tag != "eSearchResult":
        raise ServiceError(f"ESearch answered <{root.tag}>, not <eSearchResult>")
    error = root.findtext("ERROR")
    if error:
        raise ServiceError(f"ESearch refused the query: {error.strip()}")
    pmids = [(el.text or "").strip() for el in root.findall("IdList/Id") if (el.text or "").strip()]
    messages = [" ".join("".join(el.itertext()).split()) for el in [*root.findall("ErrorList/*"), *root.findall("WarningList/*")]]
    return SearchResult(
        count=int(root.findtext("Count") or 0), pmids=pmids,
        webenv=(root.findtext("WebEnv") or "").strip() or None, query_key=(root.findtext("QueryKey") or "").strip() or None,
        messages=[m for m in messages if m],
    )


def parse_efetch(body: bytes) -> list[PubMedHit]:
    hits = []
    for article in load_xml(body, "EFetch").iter("PubmedArticle"):
        fields = pubmed_article(article)
        if fields["pmid"]:
            hits.append(PubMedHit(**fields, authors=_authors(article), abstract=_abstract(article),
                                  names=pubmed_authors(article)))
    return hits


def _authors(article: ET.Element) -> str | None:
    names = []
    for author in article.findall("MedlineCitation/Article/AuthorList/Author"):
        last, initials = author.findtext("LastName"), author.findtext("Initials")
        name = " ".join(p for p in (last, initials) if p) or author.findtext("CollectiveName")
        if name:
            names.append(name.strip())
    return "; ".join(names) or None


def _abstract(article: ET.Element) -> str | None:
    parts = []
    for section in article.findall("MedlineCitation/Article/Abstract/AbstractText"):
        text = _text(section)
        if text:
            label = section.get("Label")
            parts.append(f"{label}: {text}" if label else text)
    return "\n".join(parts) or None
