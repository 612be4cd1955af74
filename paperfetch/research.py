"""What the Retriever's ``search_pubmed``, ``references``, ``citations`` and title check do (docs/research.md)."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NoReturn, Protocol

import pandas as pd

from paperfetch import defaults
from paperfetch.cache import CachedFetcher, cache_key
from paperfetch.errors import ConfigurationError, WrongArticle
from paperfetch.ids import parse_identifier
from paperfetch.integrity import looks_like_notice
from paperfetch.outcomes import typed_frame
from paperfetch.redact import redact_url
from paperfetch.sources import Source
from paperfetch.sources.base import Fetcher
from paperfetch.sources.ncbi import NCBIEutilsSource
from paperfetch.sources.pubmed import PubMedSearch
from paperfetch.sources.references import Link, LinkFinder
from paperfetch.titlematch import judge, read_first_pages

__all__ = [
    "HIT_DTYPES", "LINK_DTYPES", "Notify", "SearchAnswers", "WRONG_ARTICLE_DIR", "check_title", "citations",
    "references", "search_pubmed"
]

logger = logging.getLogger("paperfetch.research")

#: The columns of ``search_pubmed``'s and of ``references``/``citations``' frames, and their types.
HIT_DTYPES = {"pmid": "string", "doi": "string", "pmcid": "string", "title": "string", "journal": "string",
              "year": "Int64", "authors": "object", "abstract": "string"}
LINK_DTYPES = {"doi": "string", "pmid": "string", "openalex_id": "string", "title": "string", "year": "Int64",
               "source_of_link": "string", "journal": "string", "authors": "object"}
#: Where a PDF that turned out to be another article goes, inside ``out_dir``.
WRONG_ARTICLE_DIR = "wrong_article"


class Notify(Protocol):
    """A line for the recent events of a view (``DashboardModel.note`` has this shape)."""

    def __call__(self, kind: str, message: str, *, url: str | None = None) -> None: ...


# ---------------------------------------------------------------------- search and snowballing
def search_pubmed(query: str, *, sources: Mapping[str, Source], api: Fetcher, max_results: int = defaults.SEARCH_MAX_RESULTS,
                  mindate: str | None = None, maxdate: str | None = None, metadata: Any = None) -> pd.DataFrame:
    """PubMed hits for *query* through *api*; with *metadata* a CachedFetcher, answers are kept (:class:`SearchAnswers`)."""
    source = sources.get("ncbi_eutils")
    if not isinstance(source, NCBIEutilsSource):
        raise ConfigurationError("search_pubmed needs the ncbi_eutils service, which is not configured")
    search = PubMedSearch(source)
    kwargs: dict[str, Any] = dict(max_results=max_results, mindate=mindate, maxdate=maxdate)
    if isinstance(metadata, CachedFetcher):
        answers = SearchAnswers(metadata)
        try:
            try:
                hits = search.search(answers, query, **kwargs)
            except _StaleHistory:  # the stored ESearch's WebEnv may be gone on NCBI's side: search afresh
                answers = SearchAnswers(metadata, fresh_search=True)
                hits = search.search(answers, query, **kwargs)
        except Exception:
            answers.forget()  # an answer that ended in an error (ESearch's <ERROR> in a 200) is not kept
            raise
    else:
        hits = search.search(api, query, **kwargs)
    return typed_frame([{**hit.__dict__, "authors": hit.names} for hit in hits], HIT_DTYPES)


class _StaleHistory(Exception):
    """A history-server page is not stored, but the ESearch that named its WebEnv came from the cache."""


class SearchAnswers:
    """One PubMed search's transport through the metadata cache, answers kept for *ttl_s*. History pages are
    keyed by their ESearch's key and page, never the WebEnv; one missing after a *stored* ESearch raises
    :class:`_StaleHistory`, and the caller searches again (docs/research.md, "search_pubmed")."""

    def __init__(self, cached: CachedFetcher, *, ttl_s: float = defaults.SEARCH_CACHE_TTL_S,
                 fresh_search: bool = False) -> None:
        self.cached = cached
        self.ttl_s = ttl_s
        self.fresh_search = fresh_search
        self.search_key: str | None = None
        self.search_was_stored = False
        self.keys: list[str] = []  #: the cache keys this search read or stored

    def fetch(self, url: str, *, classify: Any, params: dict[str, str] | None = None, **options: Any) -> Any:
        """The transport's ``fetch`` (a POST's ``method`` and ``data`` among *options*), through the cache."""
        data = options.get("data")
        query = {**(params or {}), **(data or {})}
        call: dict[str, Any] = {"classify": classify, "params": params, "ttl_s": self.ttl_s, **options}
        if "WebEnv" in query and self.search_key is not None:
            page = {k: v for k, v in query.items() if k not in ("WebEnv", "query_key")}
            key = cache_key(url, {**page, "search": self.search_key})
            if self.search_was_stored and key not in self.cached.cache:
                raise _StaleHistory(key)
            self.keys.append(key)
            return self.cached.fetch(url, key=key, **call)
        key = cache_key(url, params, data)
        self.keys.append(key)
        if "term" in query:
            self.search_key = key
            if self.fresh_search:
                self.cached.cache.delete(key)
        response = self.cached.fetch(url, key=key, **call)
        if "term" in query:
            self.search_was_stored = response.headers.get("X-Paperfetch-Cache") == "hit"
        return response

    def forget(self) -> None:
        """Drop every answer this search read or stored (it ended in an error)."""
        for key in self.keys:
            self.cached.cache.delete(key)


def _finder(sources: Mapping[str, Source]) -> LinkFinder:
    finder = LinkFinder(openalex=sources.get("openalex"), crossref=sources.get("crossref"), europepmc=sources.get("europepmc"))
    if finder.openalex is None and finder.crossref is None:
        raise ConfigurationError("references/citations need OpenAlex or Crossref, and neither is configured")
    return finder


def references(identifier: object, *, sources: Mapping[str, Source], metadata: Fetcher) -> pd.DataFrame:
    """Works *identifier* cites: one row per linked work, deduplicated by DOI (asked through *metadata*)."""
    return _links_frame(_finder(sources).references(metadata, parse_identifier(identifier)))


def citations(identifier: object, *, sources: Mapping[str, Source], metadata: Fetcher) -> pd.DataFrame:
    """Works that cite *identifier* (OpenAlex; Europe PMC for a PMID, or a DOI/PMCID OpenAlex maps to one)."""
    return _links_frame(_finder(sources).citations(metadata, parse_identifier(identifier)))


def _links_frame(links: list[Link]) -> pd.DataFrame:
    """One row per link, with its journal and typed authors (what an export of the frame reads)."""
    return typed_frame([{**link.row(), "journal": link.journal, "authors": link.authors} for link in links], LINK_DTYPES)


def check_title(title: str | None, path: Path, url: str, *, key: str, is_notice: bool = False,
                journal: str | None = None, other_titles: Iterable[str | None] = (),
                notify: Notify | None = None) -> dict[str, Any]:
    """``{"title_match": score}`` for a PDF just saved for the paper *key* titled *title* (itself a notice or
    not, in *journal*); raises WrongArticle, carrying the score, after moving the file aside."""
    if not title:
        return {"title_match": None}
    first = read_first_pages(path)
    if not is_notice and looks_like_notice(title, first.text, [t for t, _ in first.own_titles]):
        _set_aside(path, url, key, "a retraction notice, not the paper asked for")
    verdict = judge(title, first.text, other_titles, own_titles=first.own_titles, journal=journal)
    if verdict is None:
        return {"title_match": None}
    if verdict.verdict == "ok":
        return {"title_match": verdict.score}
    if verdict.verdict == "low":
        message = f"{key}: the PDF's first pages match its title only {verdict.score:.0%} ({redact_url(url)})"
        logger.warning("%s", message)
        try:
            if notify is not None:
                notify("title_mismatch", message, url=url)
        except Exception:  # noqa: BLE001 - a view never stops a run
            logger.debug("dashboard note failed", exc_info=True)
        return {"title_match": verdict.score}
    if verdict.own_title is not None:  # the PDF's own title names another paper
        why = (f"{verdict.own_title_from} calls it {verdict.own_title[:200]!r}, which shares "
               f"{verdict.own_similarity or 0.0:.0%} of its words with the title asked for; its first pages match "
               f"that title {verdict.score:.0%}")
    else:
        why = f"{verdict.better_title!r} matches {verdict.better_score:.0%}, the title asked for {verdict.score:.0%}"
    _set_aside(path, url, key, f"another article ({why})", verdict.score)


def _set_aside(path: Path, url: str, key: str, what: str, score: float | None = None) -> NoReturn:
    """Move the PDF that is *what* (another article, a notice) into :data:`WRONG_ARTICLE_DIR`; WrongArticle."""
    aside = path.parent / WRONG_ARTICLE_DIR / path.name
    aside.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(path), aside)
    message = f"the PDF at {redact_url(url)} is {what}; moved to {aside}"
    logger.warning("%s: %s", key, message)
    raise WrongArticle(message, moved_to=str(aside), title_match=score, url=redact_url(url))
