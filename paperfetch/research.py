"""From a question to the right PDFs: what the Retriever's search, snowballing, cache and title check do.

The :class:`~paperfetch.Retriever` methods ``search_pubmed``, ``references`` and
``citations`` are thin wrappers over the functions here, so the Retriever's
identification, transport, pacing and request log are shared; each returns a
fixed-schema DataFrame whose ``doi`` column feeds ``download_frame``.
:func:`metadata_fetcher` puts the :mod:`paperfetch.cache` in front of the API
transport; :func:`check_title` is the after-download check of
:mod:`paperfetch.titlematch`.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from paperfetch.cache import CachedFetcher, MetadataCache
from paperfetch.errors import ConfigurationError, WrongArticle
from paperfetch.ids import parse_identifier
from paperfetch.redact import redact_url
from paperfetch.sources import Source
from paperfetch.sources.ncbi import NCBIEutilsSource
from paperfetch.sources.pubmed import HIT_COLUMNS, PubMedSearch
from paperfetch.sources.references import LINK_COLUMNS, LinkFinder
from paperfetch.titlematch import first_pages_text, judge

if TYPE_CHECKING:
    from paperfetch.retriever import Retriever

__all__ = ["HIT_DTYPES", "LINK_DTYPES", "WRONG_ARTICLE_DIR", "check_title", "citations", "metadata_fetcher",
           "references", "search_pubmed"]

logger = logging.getLogger("paperfetch.research")

HIT_DTYPES = {"pmid": "string", "doi": "string", "pmcid": "string", "title": "string", "journal": "string",
              "year": "Int64", "authors": "string", "abstract": "string"}
LINK_DTYPES = {"doi": "string", "pmid": "string", "openalex_id": "string", "title": "string", "year": "Int64",
               "source_of_link": "string"}
#: Where a PDF that turned out to be another article goes, inside ``out_dir``.
WRONG_ARTICLE_DIR = "wrong_article"


def _frame(rows: list[dict[str, Any]], dtypes: dict[str, str]) -> pd.DataFrame:
    frame = pd.DataFrame({c: [r.get(c) for r in rows] for c in dtypes}, columns=list(dtypes))
    return frame.astype(dtypes)


# ---------------------------------------------------------------------- the cache in front of the API transport
def metadata_fetcher(api: Any, cache: bool | str | os.PathLike[str] | MetadataCache | None) -> tuple[Any, MetadataCache | None]:
    """``(fetcher for metadata requests, the cache this call opened or None)``."""
    if cache is None or cache is False:
        return api, None
    if isinstance(cache, MetadataCache):
        return CachedFetcher(api, cache), None  # the caller's: closed by the caller
    if cache is True:
        opened = MetadataCache()
    elif isinstance(cache, (str, os.PathLike)):
        opened = MetadataCache(cache)
    else:
        raise ConfigurationError(f"cache must be True, False, a file path or a MetadataCache, not {cache!r}")
    return CachedFetcher(api, opened), opened


# ---------------------------------------------------------------------- the Retriever's state
# These functions are the Retriever's own methods kept in a module of their own (Retriever imports
# and delegates to them), so they read its configured sources and metadata fetcher directly.
def _sources_of(r: "Retriever") -> dict[str, Source]:
    return r._sources  # noqa: SLF001 - Retriever's helper module (Retriever delegates to these functions)


def _metadata_of(r: "Retriever") -> Any:
    return r._metadata  # noqa: SLF001 - Retriever's helper module (Retriever delegates to these functions)


# ---------------------------------------------------------------------- search and snowballing
def search_pubmed(r: "Retriever", query: str, *, max_results: int = 200, mindate: str | None = None,
                  maxdate: str | None = None) -> pd.DataFrame:
    source = _sources_of(r).get("ncbi_eutils")
    if not isinstance(source, NCBIEutilsSource):
        raise ConfigurationError("search_pubmed needs the ncbi_eutils service, which is not configured")
    # Not through the cache: a WebEnv expires on NCBI's side and a search's answer changes as PubMed grows.
    hits = PubMedSearch(source).search(r.api, query, max_results=max_results, mindate=mindate, maxdate=maxdate)
    frame = _frame([hit.__dict__ for hit in hits], HIT_DTYPES)
    assert tuple(frame.columns) == HIT_COLUMNS
    return frame


def _finder(r: "Retriever") -> LinkFinder:
    sources = _sources_of(r)
    finder = LinkFinder(openalex=sources.get("openalex"), crossref=sources.get("crossref"), europepmc=sources.get("europepmc"))
    if finder.openalex is None and finder.crossref is None:
        raise ConfigurationError("references/citations need OpenAlex or Crossref, and neither is configured")
    return finder


def references(r: "Retriever", identifier: object) -> pd.DataFrame:
    """Works *identifier* cites: one row per linked work, deduplicated by DOI."""
    ident = parse_identifier(identifier)
    links = _finder(r).references(_metadata_of(r), ident)
    frame = _frame([link.row() for link in links], LINK_DTYPES)
    assert tuple(frame.columns) == LINK_COLUMNS
    return frame


def citations(r: "Retriever", identifier: object) -> pd.DataFrame:
    """Works that cite *identifier* (OpenAlex; Europe PMC for a PMID, or a DOI/PMCID OpenAlex maps to one)."""
    ident = parse_identifier(identifier)
    return _frame([link.row() for link in _finder(r).citations(_metadata_of(r), ident)], LINK_DTYPES)


# ---------------------------------------------------------------------- is it the right paper?
def check_title(r: "Retriever", job: Any, path: Path, url: str) -> dict[str, Any]:
    """``{"title_match": score}`` for a PDF just saved for *job*; raises WrongArticle after moving it aside."""
    title = job.meta.get("title")
    if not title:
        return {"title_match": None}
    text = first_pages_text(path)
    others = [j.meta.get("title") for j in getattr(r, "_run_jobs", ()) if j is not job]
    verdict = judge(title, text, others)
    if verdict is None:
        return {"title_match": None}
    if verdict.verdict == "ok":
        return {"title_match": verdict.score}
    key = job.identifier.key
    if verdict.verdict == "low":
        message = f"{key}: the PDF's first pages match its title only {verdict.score:.0%} ({redact_url(url)})"
        logger.warning("%s", message)
        _note(r, "title_mismatch", message, url)
        return {"title_match": verdict.score}
    job.meta["title_match"] = verdict.score  # the row's title_match should this stay the deciding failure
    aside = path.parent / WRONG_ARTICLE_DIR / path.name
    aside.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(path), aside)
    message = (f"the PDF at {redact_url(url)} is another article ({verdict.better_title!r} matches "
               f"{verdict.better_score:.0%}, the title asked for {verdict.score:.0%}); moved to {aside}")
    logger.warning("%s: %s", key, message)
    raise WrongArticle(message, moved_to=str(aside), title_match=verdict.score, url=redact_url(url))


def _note(r: "Retriever", kind: str, message: str, url: str) -> None:
    """A line in the dashboard's recent events (when the dashboard model offers ``note``)."""
    model = getattr(r, "_dashboard_model", None)
    note = getattr(model, "note", None)
    if note is not None:
        try:
            note(kind, message, url=url)
        except Exception:  # noqa: BLE001 - a view never stops a run
            logger.debug("dashboard note failed", exc_info=True)
