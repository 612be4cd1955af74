"""``prefer="published"``: a preprint's version of record, fetched where it is open (docs/outcomes.md,
"Versions"). Before a paper's first copy is requested while only a submitted (or unlabelled) copy leads,
the sources that link a preprint to its journal version are asked first (bioRxiv's ``published``,
Crossref's ``is-preprint-of``), then the sources that find open copies are asked for the journal DOI; its
published copy then ranks first (the version tiers of :func:`paperfetch.http.assign.copy_tier`). The row
keeps the input; ``reason`` and ``preprint_of`` say which version was fetched.
"""

from __future__ import annotations

from typing import Any, Mapping

from paperfetch.http.assign import Prefer
from paperfetch.ids import Identifier, IdType, parse_identifier
from paperfetch.integrity import copy_version

__all__ = ["LINK_SOURCES", "VOR_SOURCES", "published_reason", "seek_published"]

#: The sources whose answer links a preprint to its journal version, asked first for the preprint.
LINK_SOURCES: tuple[str, ...] = ("biorxiv", "crossref")
#: The sources asked for the journal version's open copies (one lookup each, by DOI).
VOR_SOURCES: tuple[str, ...] = ("unpaywall", "crossref", "europepmc")
_LINK_ASKED = "_published_link_asked"
_VOR_ASKED = "_published_copies_asked"


def seek_published(job: Any) -> bool:
    """With ``prefer="published"``, put the lookups that find the version of record before *job*'s leading
    copy when that copy is not a published one; True when lookups were put first (the job's next action)."""
    if Prefer(job.context.prefer) is not Prefer.PUBLISHED or not job.actions or not job.actions[0].copy:
        return False
    if copy_version(job.actions[0].version) == "published":
        return False
    meta = job.meta
    doi = meta.get("doi")
    if not meta.get("preprint_of") and not meta.get(_LINK_ASKED) and _doi(doi) is not None:
        meta[_LINK_ASKED] = True
        asked = [name for name in LINK_SOURCES if name in job.sources_left and name in job.context.sources]
        for name in reversed(asked):  # asked now, not again later
            job.sources_left.remove(name)
            job.ask_first(name, _doi(doi))
        if asked:
            return True
    target = _doi(meta.get("preprint_of"))
    if target is not None and not meta.get(_VOR_ASKED):
        meta[_VOR_ASKED] = True
        # only the run's own sources: those still to ask, asked, or with an action queued
        chosen = {*job.sources_left, *(source for source, _ in job.trail), *(a.source for a in job.actions)}
        names = [name for name in VOR_SOURCES if name in chosen and name in job.context.sources]
        for name in reversed(names):
            job.ask_first(name, target)
        return bool(names)
    return False


def _doi(text: Any) -> Identifier | None:
    if not text:
        return None
    try:
        ident = parse_identifier(text, hint=IdType.DOI)
    except ValueError:  # a link no DOI could be read from: no version of record to ask for
        return None
    return ident if ident.type is IdType.DOI else None


def published_reason(meta: Mapping[str, Any], row: Mapping[str, Any]) -> str | None:
    """``the version of record 10.… (prefer="published")`` when a preprint's journal copy was downloaded."""
    if meta.get(_VOR_ASKED) and row.get("version") == "published" and meta.get("preprint_of"):
        return f"the version of record {meta['preprint_of']} (prefer=\"published\")"
    return None
