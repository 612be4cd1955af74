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
from paperfetch.sources.biorxiv import is_biorxiv_doi

__all__ = ["DEFER_DONE", "LINK_SOURCES", "PUT_ASIDE", "SAME_WORK", "VOR_SOURCES", "defer", "published_reason",
           "seek_published"]

#: The sources whose answer links a preprint to its journal version, asked first for the preprint.
LINK_SOURCES: tuple[str, ...] = ("biorxiv", "crossref")
#: The sources asked for the journal version's open copies (one lookup each, by DOI).
VOR_SOURCES: tuple[str, ...] = ("unpaywall", "crossref", "europepmc")
_LINK_ASKED = "_published_link_asked"
#: meta keys of a preprint left to its journal version's input: that input's position; what it put aside; once
#: given its file back (the other input found none), it fetches its own and never defers again
SAME_WORK, PUT_ASIDE, DEFER_DONE = "_same_work_position", "_put_aside", "_defer_done"
_VOR_ASKED = "_published_copies_asked"


def seek_published(job: Any) -> bool:
    """Before *job*'s leading copy, when that copy is not a published one: with ``prefer="published"`` put the
    lookups that find the version of record first; for a bioRxiv/medRxiv preprint whose journal DOI is another
    input of the batch, ask for the link first and, found, leave the file to that input (:func:`defer`).
    True when the job's next action changed (lookups first, or nothing left: deferred)."""
    if not job.actions or not job.actions[0].copy or copy_version(job.actions[0].version) == "published":
        return False
    meta = job.meta
    doi = meta.get("doi")
    works = job.context.works or {}
    pairing = is_biorxiv_doi(doi) and len(works) > 1 and not meta.get(DEFER_DONE)  # its journal version may be given too
    if pairing and str(meta.get("preprint_of") or "").lower() in works:
        return defer(job, works[str(meta["preprint_of"]).lower()])
    published = Prefer(job.context.prefer) is Prefer.PUBLISHED
    if not (published or pairing):
        return False
    if not meta.get("preprint_of") and not meta.get(_LINK_ASKED) and _doi(doi) is not None:
        meta[_LINK_ASKED] = True
        linking = LINK_SOURCES if published else ("biorxiv",)  # a batch's pairing asks only the preprint's own server
        asked = [name for name in linking if name in job.sources_left and name in job.context.sources]
        for name in reversed(asked):  # asked now, not again later
            job.sources_left.remove(name)
            job.ask_first(name, _doi(doi))
        if asked:
            return True
    target = _doi(meta.get("preprint_of"))
    if published and target is not None and not meta.get(_VOR_ASKED):
        meta[_VOR_ASKED] = True
        # only the run's own sources: those still to ask, asked, or with an action queued
        chosen = {*job.sources_left, *(source for source, _ in job.trail), *(a.source for a in job.actions)}
        names = [name for name in VOR_SOURCES if name in chosen and name in job.context.sources]
        for name in reversed(names):
            job.ask_first(name, target)
        return bool(names)
    return False


def defer(job: Any, position: int) -> bool:
    """Leave *job*'s file to the input at *position* (the same work): its actions and sources are put aside
    (:data:`SAME_WORK`, :data:`PUT_ASIDE`), so the scheduler ends it with no request of its own."""
    job.meta[SAME_WORK] = position
    job.meta[PUT_ASIDE] = (list(job.actions), list(job.sources_left))
    job.actions.clear()
    job.sources_left.clear()
    return True


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
