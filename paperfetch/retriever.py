"""The Retriever: identifiers in, validated PDFs and one outcomes DataFrame out.

Data flows one way: identifier → candidates (sources) → polite transport →
validated file → outcome row.

1. **Parse** every input (:mod:`paperfetch.ids`); blanks, malformed inputs and
   duplicates each get a row (a duplicate shares its first occurrence's outcome).
2. **Resume**: an identifier the ledger has as downloaded, whose file still
   matches its size and hash, is ``already_downloaded``; one the services called
   absent is not asked again.
3. **Resolve in batches**: the NCBI ID converter (200 IDs a request) and
   E-utilities cross-walk PMIDs and PMCIDs to DOIs; OpenAlex answers 50 DOIs a
   request. These are the only lookups made for the whole batch at once.
4. **Per item**, sources in order (default :data:`DEFAULT_ORDER`): each source
   either has candidates already (arXiv, OpenAlex) or is asked now (Unpaywall,
   Europe PMC, Crossref, the landing page behind doi.org). Candidates are tried
   in order until one yields a valid PDF. Each step is one request, so the
   :class:`~paperfetch.batch.HostScheduler` can serve every host in parallel at
   its own pace, moving an item from host to host as its candidates fail.

Every request goes through one :class:`~paperfetch.HttpClient` configuration
for documented APIs and one for web pages (robots.txt applies to the latter);
both share the process-wide per-host state. Nothing here gets round a paywall
or a bot challenge: a challenge page is recorded, never solved.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import urlsplit

import pandas as pd
import requests

from paperfetch.config import Identification
from paperfetch.errors import (
    ConfigurationError,
    DisallowedByRobots,
    HostSuppressed,
    InvalidPDF,
    NetworkError,
    NotFoundError,
    PaperfetchError,
    RateLimited,
    TruncatedDownload,
)
from paperfetch.http.client import HttpClient
from paperfetch.http.events import Event, EventKind
from paperfetch.http.hosts import host_key
from paperfetch.ids import Identifier, IdType, ParsedInput, filename_for, parse_identifier, parse_many
from paperfetch.ledger import Ledger
from paperfetch.outcomes import Status, outcomes_frame
from paperfetch.redact import redact_text, redact_url
from paperfetch.sources import SOURCES, Candidate, Record, Source
from paperfetch.sources.base import quote_path
from paperfetch.sources.landing import find_pdf_links
from paperfetch.validate import check_pdf_file, sniff
from paperfetch.parts import sweep_stale_parts  # issue 11
from paperfetch.http.limits import read_limited  # issue 11

__all__ = ["DEFAULT_ORDER", "ENDPOINT_NAMES", "Retriever"]

logger = logging.getLogger("paperfetch.retriever")

#: Cheapest reliable first: arXiv needs no lookup, OpenAlex was asked in batches,
#: Unpaywall and Europe PMC are one request each, the landing page is a last resort.
DEFAULT_ORDER: tuple[str, ...] = ("arxiv", "openalex", "unpaywall", "europepmc", "crossref", "landing")
ENDPOINT_NAMES: tuple[str, ...] = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi_idconv", "ncbi_eutils", "arxiv", "doi")
DOI_RESOLVER = "https://doi.org"

#: How much of a body is kept to judge it: enough to find citation_pdf_url in an HTML page served as a PDF.
VALIDATE_BYTES = 256 * 1024
#: Landing pages larger than this are not read.
MAX_LANDING_BYTES = 5 * 1024 * 1024

_META_FIELDS = ("doi", "pmid", "pmcid", "arxiv_id", "title", "year", "journal", "oa_status", "license")
_context = threading.local()


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


@dataclass
class _Failure:
    status: Status
    source: str
    url: str
    message: str
    http_status: int | None = None


@dataclass
class _ItemJob:
    """One identifier's way through the sources; one request per ``advance``."""

    retriever: "Retriever"
    identifier: Identifier
    meta: dict[str, Any]
    sources_left: deque[str]
    actions: deque[_Action] = field(default_factory=deque)
    tried: set[str] = field(default_factory=set)
    failures: list[_Failure] = field(default_factory=list)
    known: bool = False            # some service has a record of the work
    result: dict[str, Any] | None = None
    attempts: int = 0
    requests: int = 0
    waited_s: float = 0.0
    waited_reported_s: float = 0.0   # waited_s as of the last request row, so each row shows its own wait
    elapsed_s: float = 0.0
    error: BaseException | None = None
    finished: bool = False

    # -- the Job protocol ----------------------------------------------------
    @property
    def url(self) -> str | None:
        if self.finished or self.result is not None:
            return None
        while not self.actions and self.sources_left:
            self._expand(self.sources_left.popleft())
        if not self.actions:
            return None
        return self.actions[0].url

    def advance(self) -> None:
        if self.url is None:
            return
        action = self.actions.popleft()
        _context.job, _context.source = self, action.source
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
        finally:
            self.elapsed_s += time.monotonic() - started
            _context.job = _context.source = None

    # -- planning ------------------------------------------------------------
    def _expand(self, name: str) -> None:
        r = self.retriever
        ident = self.identifier
        doi = self.meta.get("doi")
        if name == "arxiv":
            arxiv = r._sources["arxiv"]
            target = ident if ident.type is IdType.ARXIV else _doi_identifier(doi)
            if target is not None:
                self._add_candidates(arxiv.candidates_for(target))
        elif name == "openalex":
            record = r._prefetched.get(("openalex", (doi or "").lower()))
            if record is not None:
                self._merge(record)
                self._add_candidates(record.candidates)
        elif name in ("unpaywall", "crossref", "europepmc"):
            source = r._sources.get(name)
            if source is None:
                return
            target = self._lookup_identifier(source)
            if target is None:
                return
            for spec in source.requests_for([target]):
                url, params = source.url_for(spec)
                self.actions.append(_Action("lookup", name, url, params, spec))
        elif name == "landing" and doi:
            url = f"{r._doi_base}/{quote_path(doi)}"  # issue 11: the DOI is one path segment
            if url not in self.tried:
                self.actions.append(_Action("landing", "landing", url))
        elif name not in SOURCES and name != "landing":
            raise ConfigurationError(f"unknown source {name!r}")

    def _lookup_identifier(self, source: Source) -> Identifier | None:
        candidates = []
        if self.meta.get("doi"):
            candidates.append(_doi_identifier(self.meta["doi"]))
        if self.meta.get("pmcid"):
            candidates.append(_safe_parse(self.meta["pmcid"], IdType.PMCID))
        if self.meta.get("pmid"):
            candidates.append(_safe_parse(self.meta["pmid"], IdType.PMID))
        for ident in candidates:
            if ident is not None and ident.type in source.accepts:
                return ident
        return None

    def _add_candidates(self, candidates: Iterable[Candidate], *, front: bool = False, followed: bool = False) -> None:
        new = []
        for cand in candidates:
            if cand.url in self.tried or any(a.url == cand.url for a in self.actions):
                continue
            kind = "download" if cand.kind == "pdf" else "landing"
            new.append(_Action(kind, cand.source, cand.url, followed=followed))
        if front:
            self.actions.extendleft(reversed(new))
        else:
            self.actions.extend(new)

    def _merge(self, record: Record) -> None:
        self.known = True
        for name in _META_FIELDS:
            value = getattr(record, name, None)
            if value not in (None, "") and self.meta.get(name) in (None, ""):
                self.meta[name] = value

    # -- steps ---------------------------------------------------------------
    def _lookup(self, action: _Action) -> None:
        r = self.retriever
        source = r._sources[action.source]
        try:
            response = r.api.fetch(action.url, classify=source.classify, params=action.params)
        except NotFoundError:
            return
        records = source.read(response.content, action.spec)  # issue 11: a bad answer is a typed error
        for record in records.values():
            self._merge(record)
            self._add_candidates(record.candidates, front=True)

    def _landing(self, action: _Action) -> None:
        r = self.retriever
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
        links = find_pdf_links(head, final_url)
        self._add_candidates([Candidate(u, source=action.source) for u in links], front=True, followed=action.followed)

    def _download(self, action: _Action) -> None:
        r = self.retriever
        self.tried.add(action.url)
        dest = r.out_dir / filename_for(self.identifier, r.filename_template)
        self.attempts += 1
        try:
            result = r.web.download(action.url, dest, validate=_validator(action.url), max_bytes=r.max_pdf_bytes,
                                    validate_bytes=VALIDATE_BYTES, reuse=r._reusable)  # issue 11: reuse=
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
        self.result = {
            "status": Status.ALREADY_DOWNLOADED.value if result.reused else Status.DOWNLOADED.value,  # issue 11
            "source": action.source,
            "url": result.url,
            "path": str(result.path),
            "bytes": result.bytes,
            "sha256": result.sha256,
            "http_status": result.status_code,
        }

    def _fail(self, action: _Action, exc: PaperfetchError) -> None:
        if action.kind in ("lookup", "landing") and isinstance(exc, NotFoundError):
            return  # the service (or the DOI resolver) does not know the work: absent, not a failure
        status = _status_for(exc)
        if status is Status.HOST_SUPPRESSED and not self.retriever.web.suppress_on_403:
            status = Status.HTTP_ERROR
        message = redact_text(str(exc))
        self.failures.append(_Failure(status, action.source, redact_url(action.url), message, getattr(exc, "status_code", None)))
        logger.debug("%s: %s via %s failed: %s", self.identifier.key, action.kind, action.source, message)

    # -- outcome -------------------------------------------------------------
    def outcome(self) -> dict[str, Any]:
        row = _identity_row(self.identifier, self.meta)
        row.update(attempts=self.attempts, waited_s=round(self.waited_s, 6), elapsed_s=round(self.elapsed_s, 6))
        if self.error is not None:
            row.update(status=Status.HTTP_ERROR.value, error=f"internal error: {type(self.error).__name__}: {self.error}")
            return row
        if self.result is not None:
            row.update(self.result)
            return row
        download_failures = [f for f in self.failures if f.status is not Status.NOT_FOUND]
        if download_failures:
            first = download_failures[0]  # the best-ranked candidate's failure decides; all are listed
            row.update(status=first.status.value, source=first.source, url=first.url, http_status=first.http_status)
            row["error"] = "; ".join(f"{f.source} {f.url}: {f.message}" for f in download_failures)[:2000]
        elif self.known:
            row.update(status=Status.NO_OPEN_COPY.value, error="the work is known, but no source offers an open-access copy")
        else:
            row.update(status=Status.NOT_FOUND.value, error="no service knows this identifier")
        return row


class Retriever:
    """Find and download legal open-access PDFs for DOIs, PMIDs, PMCIDs and arXiv IDs.

    >>> r = Retriever(email="you@example.com", out_dir="PDFs")          # doctest: +SKIP
    >>> outcomes = r.download(["10.7759/cureus.76081", "PMID:31452104"])  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        email: str | None = None,
        out_dir: str | os.PathLike[str] = "PDFs",
        openalex_api_key: str | None = None,
        ncbi_api_key: str | None = None,
        sources: Sequence[str] = DEFAULT_ORDER,
        endpoints: Mapping[str, str] | None = None,
        http: HttpClient | None = None,
        polite_mode: bool = True,
        respect_robots_txt: bool = True,
        suppress_on_403: bool = True,
        delay_min_s: float | None = None,
        delay_max_s: float | None = None,
        max_retries: int = 3,
        max_retry_after_s: float = 60.0,
        timeout: float | tuple[float, float] = (10.0, 60.0),
        filename_template: str = "{type}_{value}",
        max_pdf_bytes: int | None = 200 * 1024 * 1024,
        workers: int | None = None,
        resume: bool = True,
        progress: bool = True,
        verbosity: int = 1,
        http_options: Mapping[str, Any] | None = None,
        dashboard: bool | None = None,
    ) -> None:
        unknown = [s for s in sources if s not in DEFAULT_ORDER]
        if unknown:
            raise ConfigurationError(f"unknown source(s) {unknown}; choose from {', '.join(DEFAULT_ORDER)}")
        endpoints = dict(endpoints or {})
        bad = sorted(set(endpoints) - set(ENDPOINT_NAMES))
        if bad:
            raise ConfigurationError(f"unknown endpoint name(s) {bad}; choose from {', '.join(ENDPOINT_NAMES)}")
        self.identification = Identification(email=email, openalex_api_key=openalex_api_key, ncbi_api_key=ncbi_api_key)
        self.out_dir = Path(out_dir).expanduser().resolve()  # outcome paths are absolute, run to run
        self.verbosity = verbosity
        self.order = tuple(sources)
        self.filename_template = filename_template
        filename_for(parse_identifier("10.1000/template-check"), filename_template)  # fail early on a bad template
        self.max_pdf_bytes = max_pdf_bytes
        self.workers = workers
        self.resume = resume
        self.progress = progress
        #: None: the live dashboard in a Jupyter kernel (with ipywidgets), tqdm elsewhere; True/False: always/never.
        self.show_dashboard = dashboard
        self._dashboard_model = None  # the run in progress, or the last one (paperfetch.widgets.DashboardModel)
        common = dict(
            polite_mode=polite_mode, suppress_on_403=suppress_on_403, delay_min_s=delay_min_s, delay_max_s=delay_max_s,
            max_retries=max_retries, max_retry_after_s=max_retry_after_s, verbosity=verbosity,
            **dict(http_options or {}),
        )
        if http is not None:
            self.web = self.api = http
        else:
            # Documented APIs are used under their terms of use (and their published rate limits);
            # robots.txt governs the crawling of web pages: publishers' landing pages and PDFs.
            self.web = HttpClient(respect_robots_txt=respect_robots_txt, timeout=timeout, **common)
            self.api = HttpClient(respect_robots_txt=False, timeout=timeout, session=self.web._session, **common)
        self._sources: dict[str, Source] = {}
        for name, cls in SOURCES.items():
            if cls.requires_email and not email:
                logger.info("%s needs an e-mail address; it is skipped", name)
                continue
            source = cls(base_url=endpoints.get(name), identification=self.identification)
            self._sources[name] = source
            self.api.host_intervals.setdefault(host_key(source.base_url), source.interval_s)
            self.web.host_intervals.setdefault(host_key(source.base_url), source.interval_s)  # the scheduler asks web
        arxiv = self._sources["arxiv"]
        self.web.host_intervals.setdefault(host_key(arxiv.service_url(arxiv.pdf_base_url)), arxiv.interval_s)
        doi_override = endpoints.get("doi") or os.environ.get("PAPERFETCH_DOI_URL")
        self._doi_base = _origin(doi_override) if doi_override else DOI_RESOLVER
        self._prefetched: dict[tuple[str, str], Record] = {}
        self._request_rows: list[dict[str, Any]] = []
        self._rows_lock = threading.Lock()
        self._last_outcomes: pd.DataFrame | None = None
        for client in {id(self.web): self.web, id(self.api): self.api}.values():
            client.subscribe(self._on_event)

    # ------------------------------------------------------------------ public API
    def download(self, ids: Iterable[object] | str | pd.Series) -> pd.DataFrame:
        """Download every identifier; one outcome row per input, in input order."""
        parsed = parse_many(ids)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        sweep_stale_parts(self.out_dir)  # issue 11: part files a killed run left behind (none a live process holds)
        self._run_started = time.time()  # issue 11: a file newer than this was written by a concurrent run
        rows: dict[int, dict[str, Any]] = {}
        jobs: list[tuple[ParsedInput, _ItemJob]] = []
        model, view = self._dashboard_begin(len(parsed))
        try:
            with Ledger.in_folder(self.out_dir) as ledger:
                for item in parsed:
                    if item.identifier is None:
                        rows[item.position] = {"id_type": None, "status": Status.INVALID_IDENTIFIER.value, "error": item.error}
                        continue
                    if item.duplicate_of is not None:
                        continue
                    reused = self._from_ledger(ledger, item.identifier) if self.resume else None
                    if reused is not None:
                        rows[item.position] = reused
                        continue
                    meta = {"doi": item.identifier.doi if item.identifier.type in (IdType.DOI,) else None}
                    if item.identifier.type is IdType.PMID:
                        meta["pmid"] = item.identifier.value
                    elif item.identifier.type is IdType.PMCID:
                        meta["pmcid"] = item.identifier.value
                    elif item.identifier.type is IdType.ARXIV:
                        meta["arxiv_id"] = item.identifier.value + (item.identifier.version or "")
                        meta["doi"] = item.identifier.doi
                    jobs.append((item, _ItemJob(self, item.identifier, meta, deque(self.order))))
                for row in rows.values():  # decided without a request: invalid inputs, rows reused from the ledger
                    model.item_finished(row["status"])
                self._resolve([job for _, job in jobs])
                self._run(jobs, ledger, rows, model=model, dashboard_shown=view is not None)
            for item in parsed:  # duplicates share the first occurrence's outcome
                if item.duplicate_of is not None:
                    rows[item.position] = dict(rows[item.duplicate_of])
                    model.item_finished(rows[item.position]["status"])
            frame = outcomes_frame({"input": item.input, **rows[item.position]} for item in parsed)
            self._last_outcomes = frame
        finally:
            model.finish()
            if view is not None:
                view.close()
        return frame

    def download_frame(self, df: pd.DataFrame, column: str = "doi") -> pd.DataFrame:
        """A new frame: *df*'s rows with the outcome columns joined (*df* is not modified).

        An outcome column whose name *df* already uses (``doi`` when the identifiers are in a
        ``doi`` column, say) is joined as ``<name>_paperfetch``; the caller's columns stay as they were.
        """
        if column not in df.columns:
            raise ConfigurationError(f"no column {column!r} in the frame; it has {list(df.columns)}")
        outcomes = self.download(df[column])
        outcomes.index = df.index
        joined = df.copy()
        for name in outcomes.columns:
            if name == "input":
                continue
            # the caller's columns (the identifier column included) are never overwritten
            target = f"{name}_paperfetch" if name in df.columns else name
            joined[target] = outcomes[name]
        return joined

    def domain_status(self) -> pd.DataFrame:
        """The transport's per-host table (pacing, backoff, holds, suppression).

        Rows for the metadata services show the API client's pacing, the others the web client's.
        """
        web = self.web.domain_status()
        if self.api is self.web:
            return web
        api_hosts = {host_key(s.base_url) for s in self._sources.values()}
        api = self.api.domain_status()
        merged = pd.concat([web[~web["host"].isin(api_hosts)], api[api["host"].isin(api_hosts)]], ignore_index=True)
        return merged.sort_values("host", ignore_index=True)

    def dashboard(self) -> Any:
        """A :class:`~paperfetch.widgets.Dashboard` of this retriever, at any time.

        During a run it follows the run; afterwards it shows the last run (counts by status, per-host
        counts, recent events) with every host's politeness state as it is now (as ``domain_status()``
        has it: a hold keeps counting down). Before any run, the hosts and their state only. In a
        notebook it displays as widgets (the value of a cell, or ``display(r.dashboard())``); its
        ``repr`` is text.
        """
        from paperfetch.widgets import Dashboard, DashboardModel

        model = self._dashboard_model
        if model is None:
            model = DashboardModel().watch_retriever(self, events=False)
        return Dashboard(model)

    def requests(self) -> pd.DataFrame:
        """One row per HTTP request made: time, host, URL (no secrets), status, waited, elapsed, source."""
        with self._rows_lock:
            rows = list(self._request_rows)
        frame = pd.DataFrame(rows, columns=["time", "host", "url", "status", "waited_s", "elapsed_s", "source", "identifier", "outcome"])
        frame["time"] = pd.to_datetime(frame["time"], unit="s", utc=True)
        frame["status"] = frame["status"].astype("Int64")
        return frame

    def close(self) -> None:
        self.web.close()
        if self.api is not self.web:
            self.api.close()

    def __enter__(self) -> "Retriever":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Retriever(out_dir={str(self.out_dir)!r}, sources={self.order}, identification={self.identification!r})"

    # ------------------------------------------------------------------ internals
    def _reusable(self, dest: Path, waited: bool) -> bool:
        """Issue 11: keep a PDF another process wrote under *dest* during this run (or while we waited)."""
        try:
            recent = dest.stat().st_mtime >= getattr(self, "_run_started", float("inf"))
        except OSError:
            return False
        return (waited or recent) and check_pdf_file(dest).ok

    def _from_ledger(self, ledger: Ledger, ident: Identifier) -> dict[str, Any] | None:
        done = ledger.is_done(ident.key, self.out_dir)
        entry = done or ledger.get(ident.key)
        if entry is None:
            return None
        if done is None and ledger.should_retry(ident.key):
            return None
        row = _identity_row(ident, dict(entry.extra or {}))
        row.update(source=entry.source, url=entry.url, http_status=entry.http_status, attempts=0, waited_s=0.0, elapsed_s=0.0)
        if done is not None:
            path = ledger.absolute_path(done)
            row.update(status=Status.ALREADY_DOWNLOADED.value, path=str(path) if path else None, bytes=done.bytes, sha256=done.sha256)
        else:
            row.update(status=entry.status, error=entry.error)
        return row

    def _resolve(self, jobs: list[_ItemJob]) -> None:
        """Batched metadata: ID converter and E-utilities for PMIDs/PMCIDs, OpenAlex for DOIs."""
        if not jobs:
            return
        by_key = {job.identifier.key: job for job in jobs}
        ncbi_ids = [j.identifier for j in jobs if j.identifier.type in (IdType.PMID, IdType.PMCID)]
        if ncbi_ids and "ncbi_idconv" in self._sources:
            for key, record in self._lookup("ncbi_idconv", ncbi_ids).items():
                if key in by_key:
                    by_key[key]._merge(record)
        unknown_pmids = [j.identifier for j in jobs if j.identifier.type is IdType.PMID and not j.meta.get("doi")]
        if unknown_pmids and "ncbi_eutils" in self._sources:
            for key, record in self._lookup("ncbi_eutils", unknown_pmids).items():
                if key in by_key:
                    by_key[key]._merge(record)
        if "openalex" in self.order and "openalex" in self._sources:
            dois = []
            for job in jobs:
                ident = _doi_identifier(job.meta.get("doi"))
                if ident is not None and ident.type is IdType.DOI:
                    dois.append(ident)
            for key, record in self._lookup("openalex", dois).items():
                self._prefetched[("openalex", key.split(":", 1)[1].lower())] = record

    def _lookup(self, name: str, ids: list[Identifier]) -> dict[str, Record]:
        if not ids:
            return {}
        _context.source = name
        try:
            return self._sources[name].lookup(self.api, ids)
        except Exception as exc:  # noqa: BLE001 - issue 11: a batch lookup's failure never ends the batch
            if self.verbosity >= 1 or not isinstance(exc, PaperfetchError):
                logger.warning("%s lookup failed for %d identifier(s): %s", name, len(ids), redact_text(str(exc)))
            return {}
        finally:
            _context.source = None

    def _dashboard_begin(self, total: int) -> tuple[Any, Any]:
        """The run's DashboardModel (always: ``dashboard()`` reads it), and its view when one is shown."""
        from paperfetch.widgets import Dashboard, DashboardModel, in_notebook, widgets_available

        model = DashboardModel().watch_retriever(self)
        model.start(total)
        self._dashboard_model = model
        show = self.show_dashboard if self.show_dashboard is not None else in_notebook() and widgets_available()
        if not (self.progress and show):
            return model, None
        view = None
        try:
            view = Dashboard(model, autostart=True)
            view.show()
        except Exception as exc:  # noqa: BLE001 - no ipywidgets, or no display: tqdm instead; a view never stops a run
            logger.info("no live dashboard (%s: %s); showing a text progress bar", type(exc).__name__, exc)
            if view is not None:
                view.close()
            return model, None
        return model, view

    def _run(self, jobs: list[tuple[ParsedInput, _ItemJob]], ledger: Ledger, rows: dict[int, dict[str, Any]],
             model: Any = None, dashboard_shown: bool = False) -> None:
        from tqdm.auto import tqdm

        position = {id(job): item.position for item, job in jobs}
        bar = tqdm(total=len(jobs), desc="paperfetch", unit="paper", disable=not self.progress or not jobs or dashboard_shown,
                   leave=True)
        lock = threading.Lock()

        def finished(job: _ItemJob) -> None:
            job.finished = True
            row = job.outcome()
            rows[position[id(job)]] = row
            extra = {k: row.get(k) for k in _META_FIELDS if row.get(k) is not None}
            ledger.record(
                job.identifier.key, status=row["status"], path=row.get("path"), bytes=row.get("bytes"),
                sha256=row.get("sha256"), source=row.get("source"), url=row.get("url"),
                http_status=row.get("http_status"), error=row.get("error"), extra=extra,
            )
            if model is not None:
                model.item_finished(row["status"], url=row.get("url"), error=row.get("error"), key=job.identifier.key)
            with lock:
                bar.update(1)

        try:
            from paperfetch.batch import HostScheduler

            scheduler = HostScheduler(self.web, workers=self.workers, on_finished=finished)
            if model is not None:
                model.track(scheduler)
            scheduler.run([job for _, job in jobs])
        finally:
            bar.close()
        for _, job in jobs:  # a job the scheduler never reported (stopped early) still gets a row
            if position[id(job)] not in rows:
                finished(job)

    def _on_event(self, event: Event) -> None:
        job = getattr(_context, "job", None)
        if event.kind is EventKind.WAIT and job is not None:
            job.waited_s += event.seconds or 0.0
            return
        if event.kind not in (EventKind.RESPONSE, EventKind.NETWORK_ERROR, EventKind.HELD, EventKind.SUPPRESSED, EventKind.DISALLOWED):
            return
        waited = None
        if job is not None:
            waited = job.waited_s - job.waited_reported_s
            job.waited_reported_s = job.waited_s
            if event.kind in (EventKind.RESPONSE, EventKind.NETWORK_ERROR):
                job.requests += 1
        row = {
            "time": event.at,
            "host": event.host,
            "url": event.url,
            "status": event.status,
            "waited_s": waited,
            "elapsed_s": event.seconds if event.kind is EventKind.RESPONSE else None,
            "source": getattr(_context, "source", None),
            "identifier": job.identifier.key if job is not None else None,
            "outcome": event.kind.value,
        }
        with self._rows_lock:
            self._request_rows.append(row)


# ---------------------------------------------------------------------- helpers
def _doi_identifier(doi: str | None) -> Identifier | None:
    if not doi:
        return None
    return _safe_parse(doi, None)


def _safe_parse(value: Any, hint: IdType | None) -> Identifier | None:
    try:
        return parse_identifier(value, hint=hint)
    except (ValueError, TypeError):
        return None


def _identity_row(ident: Identifier, meta: Mapping[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"id_type": ident.type.value}
    for name in _META_FIELDS:
        row[name] = meta.get(name)
    if ident.type is IdType.DOI:
        row["doi"] = ident.value
    elif ident.type is IdType.PMID:
        row["pmid"] = ident.value
    elif ident.type is IdType.PMCID:
        row["pmcid"] = ident.value
    elif ident.type is IdType.ARXIV:
        row["arxiv_id"] = ident.value + (ident.version or "")
    for name in ("pmid", "year"):
        if row.get(name) is not None:
            row[name] = str(row[name]) if name == "pmid" else int(row[name])
    return row


def _status_for(exc: PaperfetchError) -> Status:
    if isinstance(exc, DisallowedByRobots):
        return Status.DISALLOWED_BY_ROBOTS
    if isinstance(exc, HostSuppressed):
        return Status.HOST_SUPPRESSED
    if isinstance(exc, RateLimited):
        return Status.HOST_HELD
    if isinstance(exc, InvalidPDF):
        return Status.INVALID_PDF
    if isinstance(exc, (NetworkError, TruncatedDownload)):
        return Status.NETWORK_ERROR
    if getattr(exc, "status_code", None) == 403:
        return Status.HOST_SUPPRESSED  # the transport suppressed the host as it answered
    return Status.HTTP_ERROR


def _validator(url: str):
    def validate(head: bytes, response: requests.Response) -> None:
        verdict = sniff(head[:4096], response.headers.get("Content-Type"))
        if not verdict.ok:
            shown = redact_url(response.url or url)
            raise _NotPDF(f"{shown}: {verdict.reason}", kind=verdict.kind, head=head, base_url=response.url or url,
                          url=shown, status_code=response.status_code)

    return validate


def _read_capped(response: requests.Response, limit: int) -> bytes:
    # issue 11: the head of a landing page, within the request's deadline and a decoded-bytes cap
    return read_limited(response, max_bytes=limit, truncate=True, deadline=getattr(response, "paperfetch_deadline", None),
                        url=redact_url(response.url or ""))


def _origin(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(f"endpoint {url!r} must be http(s)://host[:port]")
    return f"{parts.scheme}://{parts.netloc}"
