"""Then act: :func:`act` carries out a decided :class:`~paperfetch.flow.decide.Step` through the transport. A
copy's kind decides how its body is judged (a PDF sniffed and checked whole, a JATS copy read as XML); both go
through the same atomic download and the same ledger."""

from __future__ import annotations

import logging
import math
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping, Union

import requests

from paperfetch import defaults
from paperfetch.download import write_error
from paperfetch.errors import InvalidPDF, NetworkError, NotFoundError, PaperfetchError, RateLimited
from paperfetch.flow.decide import Stage, Step, answer, id_of, stage_of
from paperfetch.http.context import answer_now
from paperfetch.http.limits import read_limited
from paperfetch.ids import IdType, filename_for
from paperfetch.outcomes import Status, status_for
from paperfetch.paper import Action, Copy, Failure, Lookup, Outcome, Paper, copy_version
from paperfetch.redact import redact_text, redact_url
from paperfetch.sources import Candidate, Source
from paperfetch.sources.landing import find_pdf_links
from paperfetch.validate import check_pdf_file, refusal_bot_check, sniff

__all__ = ["Means", "SOONER_BY_S", "WriteStop", "act", "answer_cap", "destination", "fail",
           "lookup", "source_failed"]

logger = logging.getLogger(__name__)

#: A copy whose host can start this much later than another copy's of its tier (once its robots.txt is read) gives
#: way to it once: the paper goes back to the scheduler, which places it by every copy's outlook.
SOONER_BY_S = 1.0
#: The file extension of each kind of copy.
_EXTENSIONS = {"pdf": ".pdf", "jats": ".xml"}


class WriteStop:
    """The batch's switch for a failed write to the output folder: tripped once, read by every paper."""

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


@dataclass(frozen=True)
class Means:
    """What a step is carried out with: the clients, the sources, the output settings and the batch's callbacks."""

    api: Any  #: the HttpClient for documented APIs
    web: Any  #: the HttpClient for web pages and PDFs
    sources: Mapping[str, Source]
    out_dir: Path
    filename_template: str
    max_pdf_bytes: int | None = None
    #: answers of the metadata services (the API client behind the metadata cache, paperfetch.cache)
    metadata: Any = None
    #: after a PDF validates: ``{"title_match": score}``, or WrongArticle after moving the file aside
    check_title: Callable[[Paper, Path, str], dict[str, Any]] | None = None
    #: ``reuse(key, dest, waited)``: keep the file another process wrote under *dest* (``HttpClient.download``'s callback)
    reuse: Callable[[str, Path, bool], bool] | None = None
    write_stop: WriteStop | None = None  #: the batch's switch for a failed write to out_dir
    want: str = "pdf"  #: "text": a record's JATS link is a copy too (paperfetch.flow.text)


class _NotPDF(InvalidPDF):
    """InvalidPDF that keeps what was seen of the body, to look for a PDF link in it."""

    def __init__(self, message: str, *, kind: str, head: bytes, base_url: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.kind = kind
        self.head = head
        self.base_url = base_url


#: What a step may fail with: the transport's typed errors, and a local write's (or an untyped request's) OSError.
_StepError = Union[PaperfetchError, requests.RequestException, OSError]


class _Failed(Exception):
    """A step's failure, with the paper as it stood when the step failed (what it had tried, what it found)."""

    def __init__(self, paper: Paper, error: _StepError) -> None:
        super().__init__(str(error))
        self.paper = paper
        self.error = error


def destination(paper: Paper, means: Means, kind: str = "pdf") -> Path:
    """Where the paper's copy of *kind* is written (a JATS copy under the paper's PMCID when it has one)."""
    ident = (id_of(paper.pmcid, IdType.PMCID) if kind == "jats" else None) or paper.identifier
    return means.out_dir / filename_for(ident, means.filename_template, extension=_EXTENSIONS.get(kind, ".pdf"))


def act(step: Step, means: Means) -> Paper:
    """Carry out *step* (its paper's first action); the paper after it, a failure recorded as the paper's."""
    action = step.action
    assert action is not None, "an end step is not acted"
    paper = replace(step.paper, actions=step.paper.actions[1:])
    started = time.monotonic()
    try:
        if isinstance(action, Lookup):
            paper = lookup(paper, action, means)
        elif action.kind == "landing":
            paper = _landing(replace(paper, tried=paper.tried | {action.url}), action, means)
        else:
            paper = _download(paper, action, means, step.copies[1:])
    except _Failed as failed:
        paper = _failure(failed.paper, action, failed.error, means)
    except (PaperfetchError, requests.RequestException, OSError) as exc:
        paper = _failure(paper, action, exc, means)
    return replace(paper, elapsed_s=paper.elapsed_s + time.monotonic() - started)


def _failure(paper: Paper, action: Action, exc: _StepError, means: Means) -> Paper:
    if not isinstance(exc, PaperfetchError):  # a local write that failed (a row, never a crash), or an untyped request error
        mapped = write_error(exc, destination(paper, means, getattr(action, "kind", "pdf")), url=redact_url(action.url))
        exc = mapped if mapped is not None else NetworkError(str(exc), url=redact_url(action.url))
    return fail(paper, action, exc, means)


def lookup(paper: Paper, action: Lookup, means: Means) -> Paper:
    """Ask a metadata service; its records are merged and their candidates go first."""
    source = means.sources[action.source]
    fetcher = means.metadata or means.api
    try:
        response = source.send(fetcher, action.spec)
    except NotFoundError:
        return paper.noted(action.source, "does not know it")
    follow = source.next_request(response.content, action.spec)
    if follow is not None:  # the lookup goes on (PMC: the version listing, then the version's JSON)
        return replace(paper, actions=(Lookup(action.source, *source.url_for(follow), follow), *paper.actions))
    records = source.read(response.content, action.spec)  # an unreadable answer: MalformedResponse
    paper = paper.noted(action.source, answer([c for r in records.values() for c in r.candidates])
                        if records else "does not know it")
    for record in records.values():
        paper = paper.merged(record).with_candidates(record.candidates, front=True)
        if record.jats_url and means.want == "text":  # a JATS copy, tried before the PDFs
            paper = paper.with_candidates([Candidate(record.jats_url, action.source, kind="jats")], front=True)
    return paper


def _landing(paper: Paper, action: Copy, means: Means) -> Paper:
    response = means.web.fetch(action.url, stream=True)
    try:
        head = read_limited(response, max_bytes=defaults.MAX_LANDING_BYTES, truncate=True,
                            deadline=getattr(response, "paperfetch_deadline", None), url=redact_url(response.url or ""))
        final_url = response.url or action.url
        verdict = sniff(head[:4096], response.headers.get("Content-Type"))
    finally:
        response.close()
    # the page's PDF is the copy its source listed the page as (its version)
    if verdict.ok:  # the resolver led straight to a PDF: download it as a candidate
        return paper.with_candidates([Candidate(final_url, action.source, version=action.version)], front=True)
    if verdict.kind == "bot_challenge":
        raise _Failed(paper, InvalidPDF(f"landing page {redact_url(final_url)}: {verdict.reason}",
                                        url=redact_url(final_url), status_code=response.status_code))
    links = find_pdf_links(head, final_url, response.headers.get("Content-Type"))
    return paper.with_candidates([Candidate(u, action.source, version=action.version) for u in links], front=True,
                                 followed=action.followed)


def _gives_way(paper: Paper, action: Copy, means: Means, others: tuple[str, ...]) -> bool:
    """Whether the copy *action* goes back behind another of its tier whose host starts sooner by more than
    :data:`SOONER_BY_S`, its host's robots.txt (and so its Crawl-delay) read first; at most once per copy."""
    web = means.web
    if action.url in paper.gave_way or not callable(getattr(web, "read_robots", None)):
        return False
    try:
        web.read_robots(action.url)
        here = web.ready_in(action.url)
        if here <= SOONER_BY_S:
            return False
        there = min((web.ready_in(url) for url in others), default=math.inf)
    except Exception:  # noqa: BLE001 - the request itself will say what is wrong
        return False
    return there + SOONER_BY_S < here


def _alone(paper: Paper, action: Copy, others: tuple[str, ...]) -> bool:
    """Whether the paper's only copy of its tier waits for no hold either: a page or lookup is left to try while
    its host is held (once per copy)."""
    return not others and action.url not in paper.gave_way and any(a.kind in ("landing", "lookup") for a in paper.actions)


def _held_back(paper: Paper, action: Copy, exc: BaseException) -> Paper:
    """An answer the transport would have waited for and retried (a hold, a 429, a 5xx or a failed connection) came
    at once: the copy goes back in front, not tried, and the paper decides again (a held copy waits behind a page or
    lookup that can start sooner; asked again, it waits and retries as any request does)."""
    status = getattr(exc, "status_code", None) or 0
    if not isinstance(exc, (RateLimited, NetworkError)) and status != 429 and status < 500:
        return paper
    return replace(paper, tried=paper.tried - {action.url}, gave_way=paper.gave_way | {action.url},
                   actions=(action, *paper.actions))


def _download(paper: Paper, action: Copy, means: Means, others: tuple[str, ...]) -> Paper:
    # a copy with another of its tier left waits for no hold and no Retry-After: the next copy goes instead
    if others and _gives_way(paper, action, means, others):
        return replace(paper, gave_way=paper.gave_way | {action.url}, actions=(*paper.actions, action))
    alone = _alone(paper, action, others)
    paper = replace(paper, tried=paper.tried | {action.url}, attempts=paper.attempts + 1)
    dest = destination(paper, means, action.kind)
    # a JATS copy comes from a documented API (Europe PMC, E-utilities, the PMC bucket, bioRxiv), capped as answers are
    client, cap = (means.web, means.max_pdf_bytes) if action.kind == "pdf" else (means.api, answer_cap(means.api))
    try:
        with answer_now() if others or alone else nullcontext():
            result = client.download(action.url, dest, validate=_validator(action.url, action.kind),
                                     max_bytes=cap, validate_bytes=defaults.PDF_SNIFF_BYTES,
                                     reuse=None if means.reuse is None else partial(means.reuse, paper.identifier.key))
        title_row = _checked(paper, action, result, means)
    except _NotPDF as exc:
        if exc.kind == "html" and not action.followed:
            links = [u for u in find_pdf_links(exc.head, exc.base_url) if u not in paper.tried]
            paper = paper.with_candidates([Candidate(u, source=action.source) for u in links], front=True, followed=True)
        raise _Failed(paper, exc) from exc
    except (PaperfetchError, requests.RequestException, OSError) as exc:
        raise _Failed(_held_back(paper, action, exc) if alone else paper, exc) from exc
    # reused: another process wrote this file while we waited for it (nothing was requested)
    status = Status.ALREADY_DOWNLOADED if getattr(result, "reused", False) else Status.DOWNLOADED
    outcome = Outcome(status.value, source=action.source, url=result.url, path=str(result.path), bytes=result.bytes,
                      sha256=result.sha256, http_status=result.status_code, version=copy_version(action.version),
                      title_match=title_row.get("title_match"))
    return replace(paper, outcome=outcome).noted(action.source, f"downloaded {redact_url(result.url)}")


def _checked(paper: Paper, action: Copy, result: Any, means: Means) -> dict[str, Any]:
    """A PDF is whole and is the paper asked for (paperfetch.research; WrongArticle after moving it aside); a JATS
    copy is an article with body text (a page, a cut or hostile body, front matter alone: a failed copy)."""
    if action.kind != "pdf":
        _check_jats(result, means)
        return {}
    verdict = check_pdf_file(result.path, expected_length=result.bytes)
    if not verdict.ok:
        result.path.unlink(missing_ok=True)
        raise InvalidPDF(verdict.reason, url=result.url, status_code=result.status_code)
    return means.check_title(paper, result.path, result.url) if means.check_title is not None else {}


def answer_cap(api: Any) -> int:
    """The most a JATS answer may be: the API client's answer cap, at most :data:`~paperfetch.defaults.MAX_XML_BYTES`."""
    config = getattr(api, "config", None)
    return min(defaults.MAX_XML_BYTES, getattr(config, "max_answer_bytes", None) or defaults.MAX_XML_BYTES)


def _check_jats(result: Any, means: Means) -> None:
    from paperfetch.fulltext.base import FullTextError
    from paperfetch.fulltext.jats import parse_jats_set

    try:
        articles = parse_jats_set(Path(result.path).read_bytes(), max_bytes=answer_cap(means.api))
        if not articles:  # E-utilities' answer for an id it has no article of: absent, not a failure
            raise NotFoundError(f"{result.url}: no JATS article", url=result.url, status_code=result.status_code)
        if len(articles) != 1:
            raise FullTextError(f"expected one JATS <article>, found {len(articles)}")
        if not articles[0].has_body:
            raise FullTextError("the JATS has no body text (front matter and abstract only)")
    except (FullTextError, NotFoundError) as exc:
        Path(result.path).unlink(missing_ok=True)
        if isinstance(exc, NotFoundError):
            raise
        raise InvalidPDF(f"not a JATS article: {exc}", url=result.url, status_code=result.status_code) from exc


def fail(paper: Paper, action: Action, exc: PaperfetchError, means: Means) -> Paper:
    """The paper with *action*'s failure *exc*: absent for a service (or a resolver) that does not know the work."""
    if not isinstance(action, Copy) or action.kind == "landing":
        if isinstance(exc, NotFoundError):
            # absent, not a failure; a page a source named that is gone says so (the source knew the work)
            named_page = isinstance(action, Copy) and stage_of(action.source, means.sources.get(action.source)) \
                is not Stage.LANDING
            return paper.noted(action.source, f"its page {redact_url(action.url)} was not found" if named_page
                               else "does not know it")
    status = status_for(exc)
    if status is Status.HOST_SUPPRESSED and not means.web.suppress_on_403:
        status = Status.HTTP_ERROR
    message = redact_text(str(exc))
    named = refusal_bot_check(action.url, getattr(exc, "status_code", None))  # PMC's 403 to scripts
    if named and status in (Status.HOST_SUPPRESSED, Status.HTTP_ERROR):
        message = f"{message}: {named}"
    if status is Status.WRITE_ERROR and means.write_stop is not None:
        means.write_stop.trip(message)
    until = getattr(exc, "held_until", None) or getattr(exc, "suppressed_until", None)
    failure = Failure(status, action.source, redact_url(action.url), message, getattr(exc, "status_code", None),
                      until=until if isinstance(until, datetime) else None)
    logger.debug("%s: %s via %s failed: %s", paper.identifier.key, action.kind, action.source, message)
    paper = paper.failed(failure).noted(action.source, f"{status.value}: {message}")
    title_match = getattr(exc, "title_match", None)  # another article's score: the row's, should this failure decide
    return replace(paper, title_match=title_match) if title_match is not None else paper


def source_failed(paper: Paper, name: str, exc: PaperfetchError, means: Means) -> Paper:
    """A batched lookup of *name* failed for this paper (its host held): the row says so unless another answers."""
    failed = fail(paper, Lookup(name, getattr(exc, "url", None) or ""), exc, means)
    if failed.failures and failed.failures[-1].source == name and len(failed.failures) > len(paper.failures):
        failed = replace(failed, failures=(*failed.failures[:-1], replace(failed.failures[-1], held_lookup=True)))
    return failed


def _validator(url: str, kind: str) -> Callable[[bytes, requests.Response], None]:
    """A PDF's body must sniff as a PDF (an HTML page's links are looked at); a JATS copy's must open as XML."""
    def validate(head: bytes, response: requests.Response) -> None:
        shown = redact_url(response.url or url)
        if kind != "pdf":
            if not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<") or b"<html" in head[:1024].lower():
                raise InvalidPDF(f"{shown}: not JATS XML", url=shown, status_code=response.status_code)
            return
        verdict = sniff(head[:4096], response.headers.get("Content-Type"))
        if not verdict.ok:
            raise _NotPDF(f"{shown}: {verdict.reason}", kind=verdict.kind, head=head, base_url=response.url or url,
                          url=shown, status_code=response.status_code)

    return validate
