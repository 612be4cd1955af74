"""Decide first: :func:`next_step` reads a :class:`~paperfetch.paper.Paper` and the batch's :class:`Outlook`
and says what the paper does next, changing nothing. The rules: sources expand by :class:`Stage` (docs/sources.md,
"How the Retriever uses them"); a paper's copies compete by version tier; a step on a held host waits behind
an action elsewhere that starts sooner; with ``skip_retracted`` a retracted paper ends before any PDF request; with
``prefer="published"`` a preprint's version of record is sought first (docs/outcomes.md, "Versions"); a
preprint whose journal version is another input of the batch leaves its file to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Callable, Mapping

from paperfetch.errors import ConfigurationError
from paperfetch.http.assign import Prefer, copy_tier
from paperfetch.ids import Identifier, IdType, safe_parse
from paperfetch.outcomes import Status
from paperfetch.paper import Action, Copy, Lookup, Outcome, Paper, copy_version, retracted_reason
from paperfetch.sources import Record, Source
from paperfetch.sources.base import quote_path
from paperfetch.sources.biorxiv import is_biorxiv_doi
from paperfetch.sources.notices import RETRACTING_KINDS

__all__ = ["LINK_SOURCES", "Outlook", "SOURCE_STAGES", "Stage", "Step", "VOR_SOURCES", "answer", "arrange", "expand",
           "id_of", "lookup_identifier", "lookups", "next_step", "stage_of", "tier", "to_front"]


class Stage(str, Enum):
    """When a source gives a paper its candidates."""

    FROM_IDENTIFIER = "from_identifier"
    PREFETCHED = "prefetched"
    LOOKUP = "lookup"
    LANDING = "landing"


#: The built-in sources' stages (a source class's own ``stage`` attribute wins).
SOURCE_STAGES: Mapping[str, Stage] = {
    "arxiv": Stage.FROM_IDENTIFIER,
    "openalex": Stage.PREFETCHED,
    "unpaywall": Stage.LOOKUP,
    "europepmc": Stage.LOOKUP,
    "crossref": Stage.LOOKUP,
    "landing": Stage.LANDING,
}
#: The stages that give candidates without a request of the paper's own (gathered together as copies).
_FREE = (Stage.FROM_IDENTIFIER, Stage.PREFETCHED)
#: The sources whose answer links a preprint to its journal version, asked first for the preprint.
LINK_SOURCES: tuple[str, ...] = ("biorxiv", "crossref")
#: The sources asked for the journal version's open copies (one lookup each, by DOI).
VOR_SOURCES: tuple[str, ...] = ("unpaywall", "crossref", "europepmc")


def stage_of(name: str, source: Any = None) -> Stage | None:
    declared = getattr(source, "stage", None)
    return Stage(declared) if declared is not None else SOURCE_STAGES.get(name)


def _never(url: str) -> float:
    return 0.0


@dataclass(frozen=True)
class Outlook:
    """What a decision reads besides the paper: the batch's sources and answers, its settings, and read-only
    views of the transport (how long a host is held, how soon it can start) and of the metadata cache."""

    sources: Mapping[str, Source]
    prefetched: Mapping[tuple[str, str], Record] = field(default_factory=dict)
    doi_base: str = "https://doi.org"
    prefer: str = Prefer.VERSION.value
    skip_retracted: bool = False
    works: Mapping[str, int] = field(default_factory=dict)  #: the batch's works: DOI -> position of its input
    closed_for: Callable[[str], float] = _never  #: until a host is neither held nor behind an open breaker
    ready_in: Callable[[str], float] = _never
    cached: Callable[[str, Any], bool] | None = None  #: whether the metadata cache has a lookup's answer
    write_stop: Callable[[], str | None] = lambda: None  #: the batch's failed write, once one tripped it
    want: str = "pdf"  #: "pdf": a PDF per paper; "text": its first JATS copy that parses, else its PDF


@dataclass(frozen=True)
class Step:
    """What a paper does next. ``paper`` is the paper as decided (its sources expanded, its copies ordered),
    its first action being this step's; an ``end`` step's paper is the paper as it ends."""

    kind: str  #: "lookup" | "landing" | "download" | "end"
    paper: Paper
    copies: tuple[str, ...] = ()  #: the URLs the request may use: the best version tier's copies, preferred first
    free: bool = False  #: a lookup answered from the metadata cache: run at once, never queued on a host

    @property
    def action(self) -> Action | None:
        return self.paper.actions[0] if self.kind != "end" else None

    @property
    def url(self) -> str | None:
        return self.paper.actions[0].url if self.kind != "end" else None


def tier(action: Action, prefer: str) -> int:
    return copy_tier(action.version, prefer)


def next_step(paper: Paper, outlook: Outlook) -> Step:
    """The paper's next step under *outlook*; the same paper and outlook always give the same step."""
    ended = _ended(paper, outlook)
    if ended is not None:
        return ended
    paper = _by_want(paper, outlook.want)
    while not paper.actions and paper.sources_left:
        paper = expand(paper, outlook)
    paper = _by_want(paper, outlook.want)
    if not paper.actions:
        return Step("end", paper)
    if not paper.actions[0].listed and not (outlook.want == "text" and paper.actions[0].kind == "jats"):
        paper = _behind_held(paper, outlook)
    if paper.actions[0].listed:
        paper = arrange(paper, outlook)
        paper, changed = _seek_published(paper, outlook)
        if changed:  # the version of record's lookups go first, or the file is left to the journal version
            return next_step(paper, outlook)
        paper = _behind_held(paper, outlook)
    first = paper.actions[0]
    if isinstance(first, Lookup):
        return Step("lookup", paper, free=outlook.cached is not None and outlook.cached(first.url, first.params))
    if outlook.skip_retracted and paper.retracted:  # before any PDF or page request
        return _notice_lookup(paper, outlook) or Step("end", _retracted(paper))
    if first.kind == "landing":
        return Step("landing", paper)
    best = tier(first, outlook.prefer)
    copies = tuple(a.url for a in paper.actions if a.listed and tier(a, outlook.prefer) == best) if first.listed else ()
    return Step("download", paper, copies=copies)


def _by_want(paper: Paper, want: str) -> Paper:
    """Wanting text, a JATS copy goes before any PDF or page (lookups keep their place); wanting a PDF, the JATS
    copies are no copies to download."""
    actions = paper.actions
    if want != "text":
        kept = tuple(a for a in actions if a.kind != "jats")
        return paper if len(kept) == len(actions) else replace(paper, actions=kept)
    first = next((i for i, a in enumerate(actions) if a.kind == "jats"), None)
    if first is None or not any(a.kind in ("pdf", "landing") for a in actions[:first]):
        return paper
    before = next(i for i, a in enumerate(actions) if a.kind in ("pdf", "landing"))
    return replace(paper, actions=(*actions[:before], actions[first], *actions[before:first], *actions[first + 1:]))


def _ended(paper: Paper, outlook: Outlook) -> Step | None:
    """The end step of a paper that has ended, or that the batch's failed write stops; None otherwise."""
    if paper.ended or paper.stopped or paper.internal_error is not None:
        return Step("end", paper)
    stop = outlook.write_stop()
    if stop is None:
        return None
    if not any(f.status is Status.WRITE_ERROR for f in paper.failures):
        paper = replace(paper, cut_short=stop)
    return Step("end", paper)


def _notice_lookup(paper: Paper, outlook: Outlook) -> Step | None:
    """A retracted paper no source has named the notice of yet: the next source's lookup, put first (a normal run
    asks it before the PDF, and it may name the notice); None when a notice is named or no source is left."""
    while paper.sources_left and not any(u.notice for u in paper.updates if u.kind in RETRACTING_KINDS):
        paper = expand(paper, outlook)
        lookup = next(((i, a) for i, a in enumerate(paper.actions) if isinstance(a, Lookup)), None)
        if lookup is not None:
            index, first = lookup
            free = outlook.cached is not None and outlook.cached(first.url, first.params)
            return Step("lookup", to_front(paper, index), free=free)
    return None


def _retracted(paper: Paper) -> Paper:
    """With ``skip_retracted``: the paper ends ``retracted`` (final), the notice in its reason."""
    reason = retracted_reason(paper.updates)
    return replace(paper.noted("integrity", f"{reason}: not downloaded"),
                   outcome=Outcome(Status.RETRACTED.value, reason=reason,
                                   error=f"{reason}: not downloaded (skip_retracted is on)"))


def to_front(paper: Paper, index: int) -> Paper:
    actions = paper.actions
    return replace(paper, actions=(actions[index], *actions[:index], *actions[index + 1:])) if index else paper


def arrange(paper: Paper, outlook: Outlook) -> Paper:
    """Gather the copies known without a request, then put the best version tier's first copy in front."""
    while paper.sources_left and stage_of(paper.sources_left[0], outlook.sources.get(paper.sources_left[0])) in _FREE:
        paper = expand(paper, outlook)
    best = min(tier(a, outlook.prefer) for a in paper.actions if a.listed)
    if tier(paper.actions[0], outlook.prefer) > best:
        return to_front(paper, next(i for i, a in enumerate(paper.actions) if a.listed and tier(a, outlook.prefer) == best))
    return paper


def _behind_held(paper: Paper, outlook: Outlook) -> Paper:
    """A step on a held host (or one whose breaker is open) waits behind the first action of the paper on a host
    not held that can start before the hold (or the probe) comes (the hold stays on the host, the step in the
    paper's list). A listed copy gives way only to a page or a lookup, and not while another copy of its tier can
    start sooner (the assignment's choice): a worse tier never goes before it."""
    front = paper.actions[0]
    try:
        held = outlook.closed_for(front.url)
        if held <= 0:
            return paper
        sooner = [(i, a) for i, a in enumerate(paper.actions[1:], 1)
                  if outlook.closed_for(a.url) <= 0 and outlook.ready_in(a.url) < held]
    except Exception:  # noqa: BLE001 - a transport that cannot say: the order stays
        return paper
    if front.listed:
        if any(a.listed and tier(a, outlook.prefer) == tier(front, outlook.prefer) for _, a in sooner):
            return paper
        sooner = [(i, a) for i, a in sooner if a.kind in ("landing", "lookup")]
    return to_front(paper, sooner[0][0]) if sooner else paper


def answer(candidates: Any) -> str:
    return f"knows it: {len(candidates)} candidate(s)" if candidates else "knows it, no open copy"


def expand(paper: Paper, outlook: Outlook) -> Paper:
    """The paper with its next source's candidates or lookups queued (the source taken off ``sources_left``)."""
    name, paper = paper.sources_left[0], replace(paper, sources_left=paper.sources_left[1:])
    source = outlook.sources.get(name)
    stage = stage_of(name, source)
    doi = paper.doi
    if stage is None:
        raise ConfigurationError(f"unknown source {name!r}")
    if stage is Stage.LANDING:
        try:  # the DOI is one path segment; text that cannot be one has no resolver URL
            url = f"{outlook.doi_base}/{quote_path(str(doi))}" if doi else None
        except ValueError:
            url = None
        if url is not None and url not in paper.tried:
            return replace(paper, actions=(*paper.actions, Copy(url, name, kind="landing")))
        return paper
    if source is None:
        return paper
    if stage is Stage.FROM_IDENTIFIER:
        target = paper.identifier if paper.identifier.type is IdType.ARXIV else id_of(doi)
        offered = list(source.candidates_for(target)) if target is not None else []
        if offered:  # none: the identifier is not this source's (a plain DOI for arXiv), nothing was asked
            paper = paper.noted(name, f"{len(offered)} candidate(s)")
        return paper.with_candidates(offered)
    if stage is Stage.PREFETCHED:
        record = outlook.prefetched.get((name, (doi or "").lower()))
        if record is not None:
            return paper.merged(record).noted(name, answer(record.candidates)).with_candidates(record.candidates)
        return paper.noted(name, "does not know it") if doi else paper
    target = lookup_identifier(paper, source)
    return replace(paper, actions=(*paper.actions, *lookups(name, source, target))) if target is not None else paper


def lookups(name: str, source: Source, ident: Identifier) -> tuple[Lookup, ...]:
    """Source *name*'s lookups of *ident*, in order."""
    return tuple(Lookup(name, *source.url_for(spec), spec) for spec in source.requests_for([ident]))


def lookup_identifier(paper: Paper, source: Source) -> Identifier | None:
    """The first of the paper's DOI, PMCID and PMID that *source* accepts."""
    for value, hint in ((paper.doi, None), (paper.pmcid, IdType.PMCID), (paper.pmid, IdType.PMID)):
        ident = safe_parse(value, hint)
        if ident is not None and ident.type in source.accepts:
            return ident
    return None


def _seek_published(paper: Paper, outlook: Outlook) -> tuple[Paper, bool]:
    """Before a leading copy that is not a published one: with ``prefer="published"`` the lookups that find the
    version of record go first; a bioRxiv/medRxiv preprint whose journal DOI is another input of the batch asks
    for the link first and, found, leaves the file to that input. The paper as marked, and whether its next
    action changed."""
    if copy_version(paper.actions[0].version) == "published":
        return paper, False
    works = outlook.works
    pairing = is_biorxiv_doi(paper.doi) and len(works) > 1 and not paper.defer_done  # its journal version may be given too
    position = works.get(str(paper.preprint_of or "").lower()) if pairing else None
    if position is not None:
        return replace(paper, same_work=position, actions=(), sources_left=(),
                       put_aside=(paper.actions, paper.sources_left)), True
    published = Prefer(outlook.prefer) is Prefer.PUBLISHED
    if not (published or pairing):
        return paper, False
    paper, linking = _ask_link(paper, outlook, published)
    if linking:
        return paper, True
    target = id_of(paper.preprint_of)
    if published and target is not None and not paper.vor_asked:
        # only the run's own sources: those still to ask, asked, or with an action queued
        chosen = {*paper.sources_left, *(source for source, _ in paper.trail), *(a.source for a in paper.actions)}
        paper, asked = _ask_first(replace(paper, vor_asked=True), VOR_SOURCES, target, outlook, chosen)
        return paper, bool(asked)
    return paper, False


def _ask_link(paper: Paper, outlook: Outlook, published: bool) -> tuple[Paper, bool]:
    """Once, before its first copy: the preprint's journal-version link asked first (a batch's pairing asks only
    the preprint's own server); the sources asked now are not asked again later."""
    doi = id_of(paper.doi)
    if paper.preprint_of or paper.link_asked or doi is None:
        return paper, False
    paper, asked = _ask_first(replace(paper, link_asked=True), LINK_SOURCES if published else ("biorxiv",), doi,
                              outlook, paper.sources_left)
    return replace(paper, sources_left=tuple(n for n in paper.sources_left if n not in asked)), bool(asked)


def _ask_first(paper: Paper, names: tuple[str, ...], ident: Identifier, outlook: Outlook, among: Any
               ) -> tuple[Paper, list[str]]:
    """The lookups of *ident* at each of *names* that is *among* the paper's sources put before every action."""
    asked = [name for name in names if name in among and name in outlook.sources]
    first = tuple(a for name in asked for a in lookups(name, outlook.sources[name], ident))
    return replace(paper, actions=(*first, *paper.actions)), asked


def id_of(text: Any, kind: IdType = IdType.DOI) -> Identifier | None:
    """*text* as an identifier of *kind* (a DOI unless told); None when it is none or another kind."""
    ident = safe_parse(text, kind)
    return ident if ident is not None and ident.type is kind else None
