""":class:`ItemJob`, one identifier's way through the sources, one request per step (docs/sources.md, "How
the Retriever uses them"); sources expand by :class:`Stage`, and a failed write trips :class:`WriteStop`.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import requests

from paperfetch import defaults, integrity, versions
from paperfetch.download import write_error
from paperfetch.errors import (
    ConfigurationError,
    InvalidPDF,
    NetworkError,
    NotFoundError,
    PaperfetchError,
)
from paperfetch.http import context as call_context
from paperfetch.http.assign import Prefer, copy_tier
from paperfetch.http.context import Tally, answer_now
from paperfetch.http.limits import read_limited
from paperfetch.ids import Identifier, IdType, filename_for
from paperfetch.outcomes import STATUS_FOR_ERROR, Status, status_for
from paperfetch.reasons import absent_reason, failure_reason
from paperfetch.redact import redact_text, redact_url
from paperfetch.rows import META_FIELDS, doi_identifier, identity_row, safe_parse
from paperfetch.sources import Candidate, Record, Source
from paperfetch.sources.base import quote_path
from paperfetch.sources.landing import find_pdf_links
from paperfetch.urlcheck import shown_url, url_refusal
from paperfetch.validate import check_pdf_file, refusal_bot_check, sniff

__all__ = [
    "ItemContext", "ItemJob", "SOURCE_STAGES", "STATUS_FOR_ERROR", "Stage", "WriteStop", "current_job", "current_source",
    "stage_of", "status_for"
]

logger = logging.getLogger(__name__)

#: How much of a body is kept to judge it (:data:`paperfetch.defaults.PDF_SNIFF_BYTES`).
VALIDATE_BYTES = defaults.PDF_SNIFF_BYTES
#: Landing pages larger than this are not read (:data:`paperfetch.defaults.MAX_LANDING_BYTES`).
MAX_LANDING_BYTES = defaults.MAX_LANDING_BYTES
#: A copy whose host can start this much later than another copy's of its tier (once its robots.txt is read) gives
#: way to it once: the paper goes back to the scheduler, which places it by every copy's outlook.
SOONER_BY_S = 1.0



class Stage(str, Enum):
    """When a source gives an item its candidates."""

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


#: The stages that give candidates without a request of the item's own (gathered together as copies).
_FREE = (Stage.FROM_IDENTIFIER, Stage.PREFETCHED)


def stage_of(name: str, source: Any = None) -> Stage | None:
    declared = getattr(source, "stage", None) if source is not None else None
    if declared is not None:
        return Stage(declared)
    return SOURCE_STAGES.get(name)


class WriteStop:
    """The batch's switch for a failed write to the output folder: tripped once, read by every item."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reason: str | None = None

    def trip(self, reason: str) -> None:
        with self._lock:
            if self.reason is not None:
                return
            self.reason = reason
        logger.warning("%s; the batch starts no further downloads (the items left are write_error, retried by a "
                       "re-run once the folder can be written)", reason)

    @property
    def tripped(self) -> bool:
        return self.reason is not None


@dataclass(frozen=True)
class ItemContext:
    """What an item job needs from the Retriever: its clients, sources, lookups and output settings."""

    api: Any                                  #: the HttpClient for documented APIs
    web: Any                                  #: the HttpClient for web pages and PDFs
    sources: Mapping[str, Source]
    prefetched: Mapping[tuple[str, str], Record]
    doi_base: str
    out_dir: Path
    filename_template: str
    max_pdf_bytes: int | None
    #: answers of the metadata services (the API client behind the metadata cache, paperfetch.cache)
    metadata: Any = None
    #: after a PDF validates: ``{"title_match": score}``, or WrongArticle after moving the file aside
    check_title: Callable[["ItemJob", Path, str], dict[str, Any]] | None = None
    #: ``reuse(job, dest, waited)``: keep the PDF another process wrote under *dest* (``HttpClient.download``'s callback)
    reuse: Callable[["ItemJob", Path, bool], bool] | None = None
    #: the batch's switch for a failed write to out_dir (shared by every item of a run)
    write_stop: WriteStop | None = None
    #: which copies compete on load (:class:`paperfetch.http.assign.Prefer`): the best version tier, or all
    prefer: str = Prefer.VERSION.value
    #: a paper a source calls retracted ends ``retracted`` before any PDF request (paperfetch.integrity)
    skip_retracted: bool = False
    #: the batch's works: DOI (lower case) -> position of the input that fetches it (paperfetch.works)
    works: Mapping[str, int] | None = None


def current_job() -> "ItemJob | None":
    """The job whose request this thread is making (for per-request rows; :mod:`paperfetch.http.context`)."""
    return call_context.current().item


def current_source() -> str | None:
    """The source whose request this thread is making (``call_context.scope(source=...)`` names it)."""
    return call_context.current().source


class _NotPDF(InvalidPDF):
    """InvalidPDF that keeps what was seen of the body, to look for a PDF link in it."""

    def __init__(self, message: str, *, kind: str, head: bytes, base_url: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.kind = kind
        self.head = head
        self.base_url = base_url


@dataclass
class _Action:
    kind: str                      # "lookup" | "download" | "landing"
    source: str
    url: str
    params: dict[str, str] | None = None
    spec: Any = None
    followed: bool = False         # a PDF link found in an HTML page served as a PDF
    version: str | None = None     # a copy's version (publishedVersion / acceptedVersion / submittedVersion)

    @property
    def copy(self) -> bool:
        """A PDF candidate a source listed: one of the paper's copies (not a link found on a page)."""
        return self.kind == "download" and not self.followed


@dataclass
class _Failure:
    status: Status
    source: str
    url: str
    message: str
    http_status: int | None = None
    held_lookup: bool = False  # a batched lookup not sent (its host held): ranks after every tried candidate
    until: datetime | None = None  # a hold's or a suppression's end, for the reason


@dataclass
class ItemJob:
    """One identifier's way through the sources, one request per ``advance`` (the scheduler's Job protocol)."""

    context: ItemContext
    identifier: Identifier
    meta: dict[str, Any]
    sources_left: deque[str]
    actions: deque[_Action] = field(default_factory=deque)
    tried: set[str] = field(default_factory=set)
    failures: list[_Failure] = field(default_factory=list)
    #: each source asked and its answer, in order: ``(source, answer)`` (``Retriever.why``; the ledger keeps it)
    trail: list[tuple[str, str]] = field(default_factory=list)
    known: bool = False            # some service has a record of the work
    result: dict[str, Any] | None = None
    attempts: int = 0
    #: what the transport spent for this job (its waits, its requests), kept by the transport
    tally: Tally = field(default_factory=Tally)
    elapsed_s: float = 0.0
    error: BaseException | None = None
    finished: bool = False
    cut_short: str | None = None   # the write failure that stopped the batch before this item ended
    #: the batch stopped (``Retriever.close()``, Ctrl-C) before this job was finished: never a final answer
    stopped: bool = False
    copy_urls: set[str] = field(default_factory=set)  # every PDF copy any source named (the row's ``copies``)
    #: the sources that offered a copy, in the order they did (the row's ``offered_by``)
    offered: dict[str, None] = field(default_factory=dict)
    doing: str = ""                # the kind of the action on the wire now ("" between two requests)
    gave_way: set[str] = field(default_factory=set)  # copies that gave way once to a sooner copy elsewhere

    @property
    def leads_on(self) -> bool:
        """Whether what this unfinished job does next may lead to a host no queue holds yet: a lookup or a
        landing page (a doi.org redirect) names the PDF's host only once answered (the ETA's lower bound).
        Read from another thread, without expanding anything."""
        if self.finished or self.result is not None or self.cut_short is not None:
            return False
        if self.doing:
            return self.doing != "download"
        try:
            return self.actions[0].kind != "download"
        except IndexError:
            return bool(self.sources_left)

    @property
    def url(self) -> str | None:
        if self.finished or self.result is not None:
            return None
        stop = self.context.write_stop
        if stop is not None and stop.reason is not None and self.cut_short is None:
            if not any(f.status is Status.WRITE_ERROR for f in self.failures):
                self.cut_short = stop.reason
            return None
        if self.cut_short is not None:
            return None
        while not self.actions and self.sources_left:
            self._expand(self.sources_left.popleft())
        if not self.actions:
            return None
        if not self.actions[0].copy:
            self._behind_held()
        if self.actions[0].copy:
            self._arrange()
            if versions.seek_published(self):  # prefer="published": the version of record's lookups go first
                return self.url
        if self.actions[0].kind != "lookup" and integrity.skip_retracted(self):  # before any PDF or page request
            return None
        return self.actions[0].url

    @property
    def copies(self) -> tuple[str, ...]:
        """The URLs the next request may use: the best version tier's known copies, preferred first; ``()`` otherwise."""
        url = self.url
        if url is None or not self.actions[0].copy:
            return ()
        tier = self._tier(self.actions[0])
        return tuple(a.url for a in self.actions if a.copy and self._tier(a) == tier)

    def choose(self, url: str) -> None:
        """Make the copy at *url* the next request (the scheduler's pick among :attr:`copies`)."""
        for index, action in enumerate(self.actions):
            if action.url == url:
                if index:
                    del self.actions[index]
                    self.actions.appendleft(action)
                return

    def _tier(self, action: _Action) -> int:
        return copy_tier(action.version, self.context.prefer)

    def _arrange(self) -> None:
        """Gather the copies known without a request, then put the best version tier's first copy in front."""
        sources = self.context.sources
        while self.sources_left and stage_of(self.sources_left[0], sources.get(self.sources_left[0])) in _FREE:
            self._expand(self.sources_left.popleft())
        first = self.actions[0]
        best = min(self._tier(a) for a in self.actions if a.copy)
        if self._tier(first) > best:
            for index, action in enumerate(self.actions):
                if action.copy and self._tier(action) == best:
                    del self.actions[index]
                    self.actions.appendleft(action)
                    return

    def _behind_held(self) -> None:
        """A candidate on a held host waits behind the first copy elsewhere that can start sooner (the hold stays on
        the host, and the candidate stays in the paper's list)."""
        web = self.context.web
        try:
            held = web.hold_remaining(self.actions[0].url)
            if held <= 0:
                return
            for index, action in enumerate(self.actions):
                if action.copy and web.ready_in(action.url) < held:
                    del self.actions[index]
                    self.actions.appendleft(action)
                    return
        except Exception:  # noqa: BLE001 - a transport that cannot say: the order stays
            return

    def _gives_way(self, action: _Action) -> bool:
        """Whether the copy *action* goes back behind another of its tier whose host starts sooner by more than
        :data:`SOONER_BY_S`, its host's robots.txt (and so its Crawl-delay) read first; at most once per copy."""
        web = self.context.web
        if action.url in self.gave_way or not callable(getattr(web, "read_robots", None)):
            return False
        try:
            web.read_robots(action.url)
            here = web.ready_in(action.url)
            if here <= SOONER_BY_S:
                return False
            tier = self._tier(action)
            there = min((web.ready_in(a.url) for a in self.actions if a.copy and self._tier(a) == tier), default=math.inf)
        except Exception:  # noqa: BLE001 - the request itself will say what is wrong
            return False
        if there + SOONER_BY_S >= here:
            return False
        self.gave_way.add(action.url)
        self.actions.append(action)
        return True

    def advance(self) -> None:
        if self.url is None:
            return
        action = self.actions.popleft()
        self.doing = action.kind
        try:
            with call_context.scope(item=self, tally=self.tally, source=action.source):
                self._act(action)
        finally:
            self.doing = ""

    def _act(self, action: _Action) -> None:
        """Carry out *action*; a failure becomes the job's, and the time it took is counted."""
        started = time.monotonic()
        try:
            if action.kind == "lookup":
                self._lookup(action)
            elif action.kind == "landing":
                self._landing(action)
            else:
                self._download(action)
        except PaperfetchError as exc:
            self._fail(action, exc)
        except requests.RequestException as exc:  # defensive: the transport should have typed it
            self._fail(action, NetworkError(str(exc), url=redact_url(action.url)))
        except OSError as exc:  # a local write (the part file, out_dir) that failed: a row, never a crash
            dest = self.context.out_dir / filename_for(self.identifier, self.context.filename_template)
            mapped = write_error(exc, dest, url=redact_url(action.url))
            self._fail(action, mapped if mapped is not None else NetworkError(str(exc), url=redact_url(action.url)))
        finally:
            self.elapsed_s += time.monotonic() - started

    def source_failed(self, name: str, exc: PaperfetchError) -> None:
        """A batched lookup of *name* failed for this item (its host held): the row says so unless another answers."""
        self._fail(_Action("lookup", name, getattr(exc, "url", None) or ""), exc)
        if self.failures and self.failures[-1].source == name:
            self.failures[-1].held_lookup = True

    def plan(self) -> tuple[list[tuple[str, str, str]], list[str]]:
        """A dry run: every candidate ``(kind, source, url)`` in trial order, and the lookup errors (lookups only)."""
        found: list[tuple[str, str, str]] = []
        errors: list[str] = []
        while True:
            while not self.actions and self.sources_left:
                self._expand(self.sources_left.popleft())
            if not self.actions:  # candidates refused before any request, and failed batched lookups, are listed too
                refused = [f"{f.source} {f.url}: {f.message}" for f in self.failures if f.status is Status.REFUSED_URL]
                batch = [f"{f.source}: {f.message}" for f in self.failures if f.held_lookup]
                return found, errors + refused + batch
            if self.actions[0].copy:
                self._arrange()  # the order a run would try them in: the best version tier first
            action = self.actions.popleft()
            if action.kind == "lookup":
                with call_context.scope(source=action.source):
                    try:
                        self._lookup(action)
                    except PaperfetchError as exc:
                        errors.append(f"{action.source}: {redact_text(str(exc))}")
                continue
            self.tried.add(action.url)
            found.append(("pdf" if action.kind == "download" else "landing", action.source, action.url))

    def _expand(self, name: str) -> None:
        r = self.context
        source = r.sources.get(name)
        stage = stage_of(name, source)
        doi = self.meta.get("doi")
        if stage is None:
            raise ConfigurationError(f"unknown source {name!r}")
        if stage is Stage.LANDING:
            segment = _doi_segment(doi) if doi else None  # the DOI is one path segment
            url = f"{r.doi_base}/{segment}" if segment else None
            if url is not None and url not in self.tried:
                self.actions.append(_Action("landing", name, url))
            return
        if source is None:
            return
        if stage is Stage.FROM_IDENTIFIER:
            ident = self.identifier
            target = ident if ident.type is IdType.ARXIV else doi_identifier(doi)
            if target is not None:
                offered = list(source.candidates_for(target))
                if offered:  # none: the identifier is not this source's (a plain DOI for arXiv), nothing was asked
                    self.trail.append((name, f"{len(offered)} candidate(s)"))
                self._add_candidates(offered)
        elif stage is Stage.PREFETCHED:
            record = r.prefetched.get((name, (doi or "").lower()))
            if record is not None:
                self.merge(record)
                self.trail.append((name, _answer(record.candidates)))
                self._add_candidates(record.candidates)
            elif doi:
                self.trail.append((name, "does not know it"))
        elif stage is Stage.LOOKUP:
            target = self._lookup_identifier(source)
            if target is None:
                return
            for spec in source.requests_for([target]):
                self._queue_lookup(name, source, spec)

    def _queue_lookup(self, name: str, source: Source, spec: Any, *, front: bool = False) -> None:
        """Queue the lookup request *spec* of *source* (first, for the next step of a lookup in several requests)."""
        r = self.context
        cached = getattr(r.metadata, "cached", None)
        url, params = source.url_for(spec)
        # a cached answer is read now, before the scheduler paces the host (paperfetch.cache)
        if cached is not None and cached(url, params):
            try:
                self._lookup(_Action("lookup", name, url, params, spec))
                return
            except Exception:  # an unreadable stored answer: forget it, ask again through the scheduler
                logger.debug("cached %s answer unusable; asking again", name, exc_info=True)
                r.metadata.forget(url, params)
        action = _Action("lookup", name, url, params, spec)
        if front:
            self.actions.appendleft(action)
        else:
            self.actions.append(action)

    def _lookup_identifier(self, source: Source) -> Identifier | None:
        candidates = []
        if self.meta.get("doi"):
            candidates.append(doi_identifier(self.meta["doi"]))
        if self.meta.get("pmcid"):
            candidates.append(safe_parse(self.meta["pmcid"], IdType.PMCID))
        if self.meta.get("pmid"):
            candidates.append(safe_parse(self.meta["pmid"], IdType.PMID))
        for ident in candidates:
            if ident is not None and ident.type in source.accepts:
                return ident
        return None

    def _add_candidates(self, candidates: Iterable[Candidate], *, front: bool = False, followed: bool = False) -> None:
        new = []
        for cand in candidates:
            self.offered.setdefault(cand.source)
            if cand.url in self.tried or any(a.url == cand.url for a in self.actions):
                continue
            refusal = url_refusal(cand.url)
            if refusal is not None:  # never sent: the row says the copy was refused, and why
                self.tried.add(cand.url)
                self.failures.append(_Failure(Status.REFUSED_URL, cand.source, shown_url(redact_url(cand.url)), refusal))
                continue
            kind = "download" if cand.kind == "pdf" else "landing"
            if kind == "download":
                self.copy_urls.add(cand.url)
            new.append(_Action(kind, cand.source, cand.url, followed=followed, version=cand.version))
        if front:
            self.actions.extendleft(reversed(new))
        else:
            self.actions.extend(new)

    def merge(self, record: Record) -> None:
        self.known = True
        for name in META_FIELDS:
            value = getattr(record, name, None)
            if value not in (None, "") and self.meta.get(name) in (None, ""):
                self.meta[name] = value
        integrity.merge_signals(self.meta, record)  # retracted, notices, preprint links: one answer per paper

    def ask_first(self, name: str, ident: Identifier) -> None:
        """Put source *name*'s lookups of *ident* (the work's other DOI: its version of record) before every action."""
        source = self.context.sources[name]
        for spec in reversed(source.requests_for([ident])):
            url, params = source.url_for(spec)
            self.actions.appendleft(_Action("lookup", name, url, params, spec))

    def _lookup(self, action: _Action) -> None:
        r = self.context
        source = r.sources[action.source]
        fetcher = r.metadata or r.api
        try:
            response = fetcher.fetch(action.url, classify=source.classify, params=action.params,
                                     **source.fetch_options(fetcher))
        except NotFoundError:
            self.trail.append((action.source, "does not know it"))
            return
        follow = source.next_request(response.content, action.spec)
        if follow is not None:  # the lookup goes on (PMC: the version listing, then the version's JSON)
            self._queue_lookup(action.source, source, follow, front=True)
            return
        records = source.read(response.content, action.spec)  # an unreadable answer: MalformedResponse
        self.trail.append((action.source, _answer([c for r in records.values() for c in r.candidates])
                           if records else "does not know it"))
        for record in records.values():
            self.merge(record)
            self._add_candidates(record.candidates, front=True)

    def _landing(self, action: _Action) -> None:
        r = self.context
        self.tried.add(action.url)
        response = r.web.fetch(action.url, stream=True)
        try:
            head = _read_capped(response, MAX_LANDING_BYTES)
            final_url = response.url or action.url
            verdict = sniff(head[:4096], response.headers.get("Content-Type"))
        finally:
            response.close()
        if verdict.ok:  # the resolver led straight to a PDF: download it as a candidate
            self._add_candidates([Candidate(final_url, source=action.source)], front=True)
            return
        if verdict.kind == "bot_challenge":
            raise InvalidPDF(f"landing page {redact_url(final_url)}: {verdict.reason}", url=redact_url(final_url),
                             status_code=response.status_code)
        links = find_pdf_links(head, final_url, response.headers.get("Content-Type"))
        self._add_candidates([Candidate(u, source=action.source) for u in links], front=True, followed=action.followed)

    def _download(self, action: _Action) -> None:
        r = self.context
        # a copy with another of its tier left waits for no hold and no Retry-After: the next copy goes instead
        alternative = action.copy and any(a.copy and self._tier(a) == self._tier(action) for a in self.actions)
        if alternative and self._gives_way(action):
            return
        self.tried.add(action.url)
        dest = r.out_dir / filename_for(self.identifier, r.filename_template)
        self.attempts += 1
        try:
            with answer_now() if alternative else nullcontext():
                result = r.web.download(action.url, dest, validate=_validator(action.url), max_bytes=r.max_pdf_bytes,
                                        validate_bytes=VALIDATE_BYTES,
                                        reuse=None if r.reuse is None else partial(r.reuse, self))
        except _NotPDF as exc:
            if exc.kind == "html" and not action.followed:
                links = [u for u in find_pdf_links(exc.head, exc.base_url) if u not in self.tried]
                if links:
                    self._add_candidates([Candidate(u, source=action.source) for u in links], front=True, followed=True)
            raise
        verdict = check_pdf_file(result.path, expected_length=result.bytes)
        if not verdict.ok:
            result.path.unlink(missing_ok=True)
            raise InvalidPDF(verdict.reason, url=result.url, status_code=result.status_code)
        # is it the paper asked for? (paperfetch.research; may raise WrongArticle after moving the file aside)
        title_row = r.check_title(self, result.path, result.url) if r.check_title is not None else {}
        self.result = {
            **title_row,
            # reused: another process wrote this file while we waited for it (nothing was requested)
            "status": Status.ALREADY_DOWNLOADED.value if getattr(result, "reused", False) else Status.DOWNLOADED.value,
            "source": action.source,
            "url": result.url,
            "path": str(result.path),
            "bytes": result.bytes,
            "sha256": result.sha256,
            "http_status": result.status_code,
            "version": integrity.copy_version(action.version),
        }
        self.trail.append((action.source, f"downloaded {redact_url(result.url)}"))

    def _fail(self, action: _Action, exc: PaperfetchError) -> None:
        if action.kind in ("lookup", "landing") and isinstance(exc, NotFoundError):
            # the service (or the DOI resolver) does not know the work: absent, not a failure; a page a source
            # named that is gone says so (the source knew the work)
            named_page = action.kind == "landing" and stage_of(action.source, self.context.sources.get(action.source)) \
                is not Stage.LANDING
            self.trail.append((action.source, f"its page {redact_url(action.url)} was not found" if named_page
                               else "does not know it"))
            return
        status = status_for(exc)
        if status is Status.HOST_SUPPRESSED and not self.context.web.suppress_on_403:
            status = Status.HTTP_ERROR
        message = redact_text(str(exc))
        named = refusal_bot_check(action.url, getattr(exc, "status_code", None))  # PMC's 403 to scripts
        if named and status in (Status.HOST_SUPPRESSED, Status.HTTP_ERROR):
            message = f"{message}: {named}"
        if status is Status.WRITE_ERROR and self.context.write_stop is not None:
            self.context.write_stop.trip(message)
        until = getattr(exc, "held_until", None) or getattr(exc, "suppressed_until", None)
        self.failures.append(_Failure(status, action.source, redact_url(action.url), message, getattr(exc, "status_code", None),
                                      until=until if isinstance(until, datetime) else None))
        self.trail.append((action.source, f"{status.value}: {message}"))
        logger.debug("%s: %s via %s failed: %s", self.identifier.key, action.kind, action.source, message)

    def _offered_by(self) -> list[str]:
        """The sources that offered a copy: those asked, and the batched ones (asked for every item) whose
        record has candidates although an earlier copy made asking them unnecessary."""
        doi = (self.meta.get("doi") or "").lower()
        r = self.context
        batched = [name for name, source in r.sources.items() if stage_of(name, source) is Stage.PREFETCHED
                   and (record := r.prefetched.get((name, doi))) is not None and record.candidates]
        return list(dict.fromkeys([*self.offered, *batched]))

    def outcome(self) -> dict[str, Any]:
        row = {**identity_row(self.identifier, self.meta), **integrity.integrity_row(self.meta)}
        row["title_match"] = self.meta.get("title_match")  # a wrong article's score; a download's overrides it
        row.update(attempts=self.attempts, waited_s=round(self.tally.waited_s, 6), elapsed_s=round(self.elapsed_s, 6),
                   copies=len(self.copy_urls))
        row.update(attempts=self.attempts, waited_s=round(self.tally.waited_s, 6), elapsed_s=round(self.elapsed_s, 6))
        row["offered_by"] = ",".join(self._offered_by()) or None
        if self.error is not None:
            row.update(status=Status.HTTP_ERROR.value, reason=f"internal error: {type(self.error).__name__}",
                       error=f"internal error: {type(self.error).__name__}: {self.error}")
            return row
        if self.result is not None:
            row.update(self.result)
            row["reason"] = row.get("reason") or integrity.work_reason(self.meta) or versions.published_reason(self.meta, row)
            return row
        if self.cut_short is not None:
            row.update(status=Status.WRITE_ERROR.value, reason="not written: the output folder failed",
                       error=f"not finished: the batch stopped downloading after a write failed ({self.cut_short})"[:2000])
            return row
        if self.stopped:
            # candidates or sources were left untried: whatever failed so far does not decide (retryable)
            tried = "; ".join(f"{f.source} {f.url}: {f.message}" for f in self.failures)
            row.update(status=Status.STOPPED.value, reason="stopped before it finished",
                       error=("the batch was stopped before this item was finished; a re-run tries it again"
                              + (f" (failed so far: {tried})" if tried else ""))[:2000])
            return row
        download_failures = sorted((f for f in self.failures if f.status is not Status.NOT_FOUND),
                                   key=lambda f: f.held_lookup)
        if download_failures:
            first = download_failures[0]  # the best-ranked candidate's failure decides; all are listed
            row.update(status=first.status.value, source=first.source, url=first.url, http_status=first.http_status)
            row["reason"] = failure_reason(first.status.value, http_status=first.http_status, url=first.url,
                                           message=first.message, until=first.until)
            # reason first, URLs last: the trail of every candidate after it
            trail = "; ".join(f"{f.source}: {f.message} ({f.url})" if f.url and f.url not in f.message
                              else f"{f.source}: {f.message}" for f in download_failures)
            row["error"] = f"{row['reason']} | {trail}"[:2000]
        elif self.known:
            row.update(status=Status.NO_OPEN_COPY.value, reason=absent_reason(known=True, asked=self.asked()),
                       error="the work is known, but no source offers an open-access copy")
        else:
            row.update(status=Status.NOT_FOUND.value, reason=absent_reason(known=False, asked=self.asked()),
                       error="no service knows this identifier")
        return row

    def asked(self) -> list[str]:
        """The sources asked about this item, in order, each once."""
        return list(dict.fromkeys(source for source, _ in self.trail))


def _answer(candidates: Sequence[Any]) -> str:
    return f"knows it: {len(candidates)} candidate(s)" if candidates else "knows it, no open copy"


def _validator(url: str) -> Callable[[bytes, requests.Response], None]:
    def validate(head: bytes, response: requests.Response) -> None:
        verdict = sniff(head[:4096], response.headers.get("Content-Type"))
        if not verdict.ok:
            shown = redact_url(response.url or url)
            raise _NotPDF(f"{shown}: {verdict.reason}", kind=verdict.kind, head=head, base_url=response.url or url,
                          url=shown, status_code=response.status_code)

    return validate


def _read_capped(response: requests.Response, limit: int) -> bytes:
    """The head of a landing page: at most *limit* decoded bytes, within the request's deadline."""
    return read_limited(response, max_bytes=limit, truncate=True, deadline=getattr(response, "paperfetch_deadline", None),
                        url=redact_url(response.url or ""))


def _doi_segment(doi: Any) -> str | None:
    """*doi* as one percent-encoded path segment of the resolver's URL; None for text that cannot be one."""
    try:
        return quote_path(str(doi))
    except ValueError:
        return None


