"""References and citations of one work (docs/research.md, "references(id) and citations(id)")."""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields, replace
from typing import Any, Iterable

from paperfetch.errors import ConfigurationError, NotFoundError
from paperfetch.ids import Identifier, IdType
from paperfetch.names import from_openalex, parse_name
from paperfetch.sources.base import Fetcher, Metadata, RequestSpec, Source, batched, quote_path
from paperfetch.sources.schema import OBJECTS, TEXT, TEXTS, YEAR, at, load_json, top_object

__all__ = [
    "EUROPEPMC_PAGE_SIZE", "Link", "LinkFinder", "OPENALEX_IDS_PER_REQUEST",
    "europepmc_citations_path", "merge_links", "openalex_work_path", "page_params"
]

logger = logging.getLogger("paperfetch.references")

#: OpenAlex takes at most 100 values in one OR filter.
OPENALEX_IDS_PER_REQUEST = 100
PER_PAGE = "200"
#: A stop for cursor paging, should a service never say "last page" (50 pages of 200 = 10,000 works).
MAX_PAGES = 50
#: Europe PMC's largest page of citations.
EUROPEPMC_PAGE_SIZE = 1000


@dataclass(frozen=True, kw_only=True)
class Link(Metadata):
    """A work one work cites or is cited by: its metadata, ids and the services that named it."""

    openalex_id: str | None = None
    sources: tuple[str, ...] = ()
    other_id: str | None = None  #: a service's own id when there is no DOI, PMID or OpenAlex id ("PPR:PPR123")

    def keys(self) -> list[str]:
        """What identifies this work, strongest first: two links sharing any key are one work."""
        named = {"doi": self.doi, "pmid": self.pmid, "openalex": self.openalex_id, "other": self.other_id}
        return [f"{kind}:{value}" for kind, value in named.items() if value] or [f"object:{id(self)}"]

    def row(self) -> dict[str, Any]:
        return {"doi": self.doi, "pmid": self.pmid, "openalex_id": self.openalex_id, "title": self.title,
                "year": self.year, "source_of_link": ";".join(sorted(set(self.sources)))}


class LinkFinder:
    """Asks OpenAlex (and Crossref, for references) through *http*; either source may be None."""

    def __init__(self, *, openalex: Source | None, crossref: Source | None = None, europepmc: Source | None = None) -> None:
        self.openalex = openalex
        self.crossref = crossref
        self.europepmc = europepmc

    def references(self, http: Fetcher, ident: Identifier) -> list[Link]:
        links: list[Link] = []
        doi = ident if ident.type is IdType.DOI else None
        if self.openalex is not None:
            work = self._openalex_work(http, ident)
            if work is not None:
                ids = [_short_id(w) for w in at(work, "referenced_works", kind=TEXTS)]
                links += self._openalex_by_ids(http, [i for i in ids if i])
                work_doi = _openalex_link(work).doi
                if doi is None and work_doi:  # a PMID/PMCID: Crossref is asked by the work's DOI
                    doi = Identifier.from_key("doi:" + work_doi)
        if self.crossref is not None and doi is not None:
            links += self._crossref_references(http, doi)
        return merge_links(links)

    def citations(self, http: Fetcher, ident: Identifier) -> list[Link]:
        links: list[Link] = []
        work = self._openalex_work(http, ident) if self.openalex is not None else None
        if work is not None:
            links += self._openalex_pages(http, {"filter": f"cites:{_short_id(work.get('id'))}"})
        if self.europepmc is not None:
            pmid = ident.value if ident.type is IdType.PMID else (_openalex_link(work).pmid if work else None)
            if pmid:
                links += self._europepmc_citations(http, pmid)
            else:
                logger.info("Europe PMC's citations need a PMID; none is known for %s", ident.key)
        return merge_links(links)

    def _europepmc_citations(self, http: Fetcher, pmid: str) -> list[Link]:
        links: list[Link] = []
        path = europepmc_citations_path(pmid)
        for page in range(1, MAX_PAGES + 1):
            params = {"format": "json", "page": str(page), "pageSize": str(EUROPEPMC_PAGE_SIZE)}
            try:
                data = self._get_json(http, self.europepmc, path, params)
            except NotFoundError:
                return links
            rows = (data.get("citationList") or {}).get("citation") or []
            links += [_europepmc_link(c) for c in rows]
            if not rows or len(links) >= int(data.get("hitCount") or 0):
                break
        return links

    def _get_json(self, http: Fetcher, source: Source | None, path: str, params: dict[str, str],
                  ident: Identifier | None = None) -> dict[str, Any]:
        """The answer's JSON object; anything else is a MalformedResponse naming the service."""
        if source is None:  # the public methods ask only the sources they were given
            raise ConfigurationError(f"no service is configured for {path}")
        body = source.send(http, RequestSpec(path=path, params=params, ids=(ident,) if ident else ())).content
        return top_object(load_json(body, source.name), source.name)

    def _openalex_work(self, http: Fetcher, ident: Identifier) -> dict[str, Any] | None:
        path = openalex_work_path(ident)
        if path is None:
            return None
        try:
            return self._get_json(http, self.openalex, path, {}, ident)
        except NotFoundError:
            logger.info("OpenAlex does not know %s", ident.key)
            return None

    def _openalex_by_ids(self, http: Fetcher, ids: list[str]) -> list[Link]:
        return [link for batch in batched(ids, OPENALEX_IDS_PER_REQUEST)
                for link in self._openalex_pages(http, {"filter": "openalex:" + "|".join(batch)})]

    def _openalex_pages(self, http: Fetcher, params: dict[str, str]) -> list[Link]:
        links: list[Link] = []
        cursor = "*"
        for _ in range(MAX_PAGES):
            page = self._get_json(http, self.openalex, "/works", page_params(params, cursor))
            results = at(page, "results", kind=OBJECTS)
            links += [_openalex_link(w) for w in results]
            next_cursor = at(page, "meta", "next_cursor", kind=TEXT)
            if not next_cursor or not results:
                break
            cursor = next_cursor
        return links

    def _crossref_references(self, http: Fetcher, ident: Identifier) -> list[Link]:
        try:
            data = self._get_json(http, self.crossref, "/works/" + quote_path(ident.value), {}, ident)
        except NotFoundError:
            return []
        links = []
        for ref in at(data, "message", "reference", kind=OBJECTS):
            doi = (at(ref, "DOI", kind=TEXT) or "").strip().lower()
            if not doi:
                continue
            first = parse_name(at(ref, "author", kind=TEXT) or "")
            links.append(Link(doi=doi, title=at(ref, "article-title", kind=TEXT), year=at(ref, "year", kind=YEAR),
                              sources=("crossref",), journal=at(ref, "journal-title", kind=TEXT),
                              authors=[first] if first else None))
        return links


def openalex_work_path(ident: Identifier) -> str | None:
    """OpenAlex's single-work path for a DOI, PMID or PMCID."""
    if ident.type is IdType.DOI:
        return "/works/https://doi.org/" + quote_path(ident.value)
    if ident.type in (IdType.PMID, IdType.PMCID):
        return f"/works/{ident.type.value}:{ident.value}"  # pmid:… or pmcid:…
    return None


def europepmc_citations_path(pmid: str) -> str:
    return f"/europepmc/webservices/rest/MED/{quote_path(pmid)}/citations"


def page_params(params: dict[str, str], cursor: str) -> dict[str, str]:
    """One page of an OpenAlex list query."""
    return {**params, "per_page": PER_PAGE, "cursor": cursor}


def _europepmc_link(citation: dict[str, Any]) -> Link:
    source, value = str(citation.get("source") or ""), str(citation.get("id") or "").strip()
    doi = str(citation.get("doi") or "").strip().lower() or None
    year = str(citation.get("pubYear") or "")
    names = [parse_name(n) for n in str(citation.get("authorString") or "").rstrip(".").split(", ")]
    return Link(doi=doi, pmid=value if source == "MED" and value else None, title=citation.get("title") or None,
                year=int(year) if year.isdigit() else None, sources=("europepmc",),
                other_id=f"{source}:{value}" if source != "MED" and value else None,
                journal=at(citation, "journalAbbreviation", kind=TEXT), authors=[n for n in names if n] or None)


def merge_links(links: Iterable[Link]) -> list[Link]:
    """One link per work (a shared DOI, PMID or OpenAlex id), first occurrence's order, fields and sources merged."""
    merged: list[Link] = []
    index: dict[str, int] = {}  # a key -> the position in merged of the link it names
    for link in links:
        position = next((index[k] for k in link.keys() if k in index), len(merged))
        if position == len(merged):
            merged.append(link)
        else:
            kept = merged[position]
            filled = {f.name: getattr(link, f.name) for f in fields(Link)
                      if getattr(kept, f.name) is None and getattr(link, f.name) is not None}
            merged[position] = replace(kept, **filled, sources=tuple(dict.fromkeys(kept.sources + link.sources)))
        for key in merged[position].keys():
            index.setdefault(key, position)
    return merged


def _short_id(value: Any) -> str | None:
    """``W2741809807`` from ``https://openalex.org/W2741809807``."""
    if not isinstance(value, str) or not value:
        return None
    return value.rstrip("/").rsplit("/", 1)[-1]


def _openalex_link(work: dict[str, Any]) -> Link:
    """A work's link; a wrong-shaped field is absent (:mod:`paperfetch.sources.schema`)."""
    doi = at(work, "doi", kind=TEXT) or ""
    doi = doi.split("doi.org/", 1)[1] if "doi.org/" in doi else doi
    pmid = (at(work, "ids", "pmid", kind=TEXT) or "").rstrip("/").rsplit("/", 1)[-1] or None
    return Link(doi=doi.lower() or None, pmid=pmid, openalex_id=_short_id(work.get("id")),
                title=at(work, "title", kind=TEXT) or at(work, "display_name", kind=TEXT),
                year=at(work, "publication_year", kind=YEAR), sources=("openalex",),
                journal=at(work, "primary_location", "source", "display_name", kind=TEXT)
                or at(work, "primary_location", "raw_source_name", kind=TEXT),
                authors=[n for n in map(from_openalex, at(work, "authorships", kind=OBJECTS)) if n] or None)
