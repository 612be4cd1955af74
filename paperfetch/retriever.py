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
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Literal, Mapping, Sequence, cast, overload
from urllib.parse import urlsplit

import pandas as pd

from paperfetch import defaults
from paperfetch.cache import MetadataCache, metadata_fetcher
from paperfetch.config import Identification, clean_setting, env_endpoint_url, env_state, user_agent_for
from paperfetch.download import FileAction, existing_file_action
from paperfetch.errors import ConfigurationError, RateLimited, Stopped
from paperfetch.http.assign import Prefer
from paperfetch.http.client import HttpClient
from paperfetch.http.hosts import host_key
from paperfetch.ids import Identifier, IdType, ParsedInput, filename_for, parse_identifier, parse_many
from paperfetch.items import (
    META_FIELDS,
    ItemContext,
    ItemJob,
    WriteStop,
    doi_identifier,
    resumed_row,
    set_current_source,
)
from paperfetch.ledger import ResumeLedger, open_ledger
from paperfetch.outcomes import Status, outcomes_frame
from paperfetch.parts import sweep_stale_parts
from paperfetch.redact import install_log_filter, redact_frame, redact_text, redact_url
from paperfetch.report import mark_unreachable
from paperfetch.requestlog import RequestLog
from paperfetch.sources import SOURCES, Record, Source
from paperfetch.sources.arxiv import ArxivSource
from paperfetch.sources.base import batched
from paperfetch.suggest import did_you_mean

if TYPE_CHECKING:  # pragma: no cover
    from paperfetch.job import Job, RunHooks

__all__ = ["DEFAULT_ORDER", "ENDPOINT_NAMES", "Retriever"]

logger = logging.getLogger(__name__)

#: Cheapest reliable first: arXiv needs no lookup, OpenAlex was asked in batches,
#: Unpaywall and Europe PMC are one request each, the landing page is a last resort.
DEFAULT_ORDER: tuple[str, ...] = ("arxiv", "openalex", "semanticscholar", "unpaywall", "europepmc", "biorxiv", "crossref",
                                  "landing")
ENDPOINT_NAMES: tuple[str, ...] = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi_idconv", "ncbi_eutils", "arxiv", "doi",
                                   "semanticscholar", "biorxiv")
DOI_RESOLVER = "https://doi.org"


def _state_spec(state: Any) -> Any:
    """``state=None``: ``PAPERFETCH_STATE``, else ``"sqlite"`` (the file in the user cache directory)."""
    return env_state() if state is None else state


class Retriever:
    """Find and download legal open-access PDFs for DOIs, PMIDs, PMCIDs and arXiv IDs.

    >>> r = Retriever(email="your.name@your-university.edu", out_dir="PDFs")  # doctest: +SKIP
    >>> outcomes = r.download(["10.7759/cureus.76081", "PMID:31452104"])  # doctest: +SKIP

    *state* names the host-state store (:func:`paperfetch.state.open_store`): by default
    ``PAPERFETCH_STATE``, else a SQLite file in the user cache directory shared by every process of
    the machine; ``"memory"`` for this process only; ``"redis://host:6379/0"`` across machines.
    *state_fallback* ``"local"``: where Redis does not answer, go on with this machine's SQLite state.
    *prefer* ``"version"`` (default): a paper's copies compete on load only within its best version tier
    (published, accepted, unlabelled, preprint); ``"speed"``: every copy competes (docs/politeness.md).
    """

    def __init__(
        self,
        *,
        email: str | None = None,
        out_dir: str | os.PathLike[str] = defaults.OUT_DIR,
        openalex_api_key: str | None = None,
        ncbi_api_key: str | None = None,
        s2_api_key: str | None = None,
        sources: Sequence[str] = DEFAULT_ORDER,
        endpoints: Mapping[str, str] | None = None,
        http: HttpClient | None = None,
        polite_mode: bool = True,
        respect_robots_txt: bool = True,
        suppress_on_403: bool = True,
        delay_min_s: float | None = None,
        delay_max_s: float | None = None,
        max_retries: int = defaults.MAX_RETRIES,
        max_retry_after_s: float = defaults.MAX_RETRY_AFTER_S,
        timeout: float | tuple[float, float] = defaults.TIMEOUT,
        filename_template: str = defaults.FILENAME_TEMPLATE,
        max_pdf_bytes: int | None = defaults.MAX_PDF_BYTES,
        workers: int | None = None,
        resume: bool = True,
        progress: bool = True,
        verbosity: int = 1,
        http_options: Mapping[str, Any] | None = None,
        dashboard: bool | None = None,
        cache: bool | str | os.PathLike[str] | MetadataCache = True,
        state: Any = None,
        state_fallback: str | None = None,
        prefer: str = "version",
    ) -> None:
        try:
            self.prefer = Prefer.parse(prefer).value  # which copies of a paper compete on load (docs/politeness.md)
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from None
        unknown = [s for s in sources if s not in DEFAULT_ORDER]
        if unknown:
            raise ConfigurationError(f"unknown source(s) {unknown}; choose from {', '.join(DEFAULT_ORDER)}")
        # every text setting is stripped, and refused with a control character in it (config.clean_setting)
        endpoints = {name: clean_setting(f"endpoints[{name!r}]", url) or "" for name, url in (endpoints or {}).items()}
        bad = sorted(set(endpoints) - set(ENDPOINT_NAMES))
        if bad:
            raise ConfigurationError(f"unknown endpoint name(s) {bad}; choose from {', '.join(ENDPOINT_NAMES)}")
        self.identification = Identification(email=email, openalex_api_key=openalex_api_key, ncbi_api_key=ncbi_api_key,
                                             s2_api_key=s2_api_key)
        self.out_dir = Path(clean_setting("out_dir", os.fspath(out_dir)) or defaults.OUT_DIR).expanduser().resolve()  # absolute
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
        self._dashboard_model: Any = None  # the run in progress, or the last one (paperfetch.widgets.DashboardModel)
        install_log_filter()  # loggers made since the import mask secrets too
        common: dict[str, Any] = dict(
            user_agent=user_agent_for(None), contact_email=self.identification.email,
            polite_mode=polite_mode, suppress_on_403=suppress_on_403, delay_min_s=delay_min_s, delay_max_s=delay_max_s,
            max_retries=max_retries, max_retry_after_s=max_retry_after_s, verbosity=verbosity,
        )
        if http is None and "registry" not in (http_options or {}):
            # Host state: None reads PAPERFETCH_STATE, and without it the SQLite file in the user cache
            # directory, so a re-run (or another notebook) remembers holds, suppressions and learned pacing.
            common.update(state=_state_spec(state), state_fallback=state_fallback)
        self._sources: dict[str, Source] = {}
        #: Sources left out for want of an e-mail address (said once, in one warning).
        self.skipped_sources = tuple(name for name, cls in SOURCES.items()
                                     if cls.requires_email and not self.identification.email)
        if self.skipped_sources:
            logger.warning("no contact e-mail given: %s skipped "
                           "(give one with --email, PAPERFETCH_EMAIL or Retriever(email=...))", ", ".join(self.skipped_sources))
        for name, cls in SOURCES.items():
            if name not in self.skipped_sources:
                self._sources[name] = cls(base_url=endpoints.get(name), identification=self.identification)
        # Each service's published interval, for both clients (the scheduler asks web), given when they are made;
        # a source's related hosts (bioRxiv's www hosts for its PDFs, NCBI's old idconv host) share it.
        intervals: dict[str, float] = {}
        for source in self._sources.values():
            for host in (source.base_url, *source.related_hosts()):
                intervals.setdefault(host_key(host), source.interval_s)
        # The e-mail goes, in the User-Agent, only to the services that ask for it (and their related hosts).
        asking = {host_key(host) for s in self._sources.values() if s.wants_contact
                  for host in (s.base_url, *s.related_hosts())}
        concurrency = self._source_concurrency(email=self.identification.email)
        arxiv = cast(ArxivSource, self._sources["arxiv"])
        intervals.setdefault(host_key(arxiv.service_url(arxiv.pdf_base_url)), arxiv.interval_s)
        if http is not None:
            # A caller's client is left as it was: the Retriever paces through a client of its own over the
            # caller's session, host state, clock and settings (plus its sources' intervals), subscribes to
            # that one, and closes only that one (the caller's session stays open).
            self.web = self.api = HttpClient.from_config(
                replace(http.config, host_intervals={**intervals, **http.host_intervals},
                        host_concurrency={**concurrency, **(http.config.host_concurrency or {})}),
                session=http.session, clock=http.clock, registry=http.registry)
        else:
            configured = dict((http_options or {}).get("host_intervals") or {})
            common.update(http_options or {})
            common["host_intervals"] = {**intervals, **configured}
            common.setdefault("contact_hosts", asking)
            common["host_concurrency"] = {**concurrency, **dict(common.get("host_concurrency") or {})}
            # Documented APIs are used under their terms of use (and their published rate limits);
            # robots.txt governs the crawling of web pages: publishers' landing pages and PDFs.
            self.web = HttpClient(respect_robots_txt=respect_robots_txt, timeout=timeout, **common)
            self.api = HttpClient(respect_robots_txt=False, timeout=timeout, session=self.web.session, **common)
        doi_override = endpoints.get("doi") or env_endpoint_url("doi")
        self._doi_base = _origin(doi_override) if doi_override else DOI_RESOLVER
        self._prefetched: dict[tuple[str, str], Record] = {}
        # The metadata cache (paperfetch.cache) in front of the API transport. True: the user cache dir,
        # False: none; or a path, or a MetadataCache the caller owns.
        self._metadata, self._own_cache = metadata_fetcher(self.api, cache)
        self._run_jobs: list[Any] = []  # the batch's items, for the title check
        self._request_log = RequestLog()
        self._run_started = float("inf")  # set as download() starts (see _reusable)
        self._run_ledger: ResumeLedger | None = None  # the ledger of the download() in progress
        self._run_scheduler: Any = None  # the HostScheduler of the download() in progress (close() stops it)
        self._run_thread: int | None = None  # the thread running download()
        self._run_idle = threading.Event()  # set while no download() runs
        self._run_idle.set()
        self._job: Job | None = None  # the last start() (paperfetch.job), running or not
        self._write_stop = WriteStop()  # tripped by a PDF out_dir cannot take (full disk): no further downloads
        self._describe_openalex()
        self._unsubscribe = [client.subscribe(self._request_log.on_event)
                             for client in {id(self.web): self.web, id(self.api): self.api}.values()]

    def _source_concurrency(self, *, email: str | None) -> dict[str, int]:
        """Issue 19: Crossref's pool caps the requests in flight (its x-concurrency-limit applies under it)."""
        from paperfetch.sources.crossref import CrossrefSource

        crossref = self._sources.get("crossref")
        if not isinstance(crossref, CrossrefSource):
            return {}
        return {host_key(crossref.base_url): crossref.concurrency_for(Identification(email=email))}

    def _describe_openalex(self) -> None:
        """OpenAlex's host is named, with the remedy for a spent budget, in the transport's one warning."""
        from paperfetch.sources.openalex import OpenAlexSource

        openalex = self._sources.get("openalex")
        if isinstance(openalex, OpenAlexSource):
            remedy = openalex.budget_remedy(self.identification)
            self.api.host_limiter(openalex.base_url).describe(service="OpenAlex", budget_remedy=remedy)

    # ------------------------------------------------------------------ public API
    def download(self, ids: Iterable[object] | str | pd.Series) -> pd.DataFrame:
        """Download every identifier; one outcome row per input, in input order."""
        return self._download(ids)

    def _download(self, ids: Iterable[object] | str | pd.Series, hooks: RunHooks | None = None) -> pd.DataFrame:
        """:meth:`download`; with *hooks*, the run of a :class:`~paperfetch.job.Job` (see :meth:`start`)."""
        if self._job is not None and hooks is None and not self._job.done():
            raise RuntimeError(f"{self._job!r} of this Retriever is running: stop it or wait for it first "
                               "(a second Retriever shares every host's pacing through the host state)")
        parsed = parse_many(ids)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        sweep_stale_parts(self.out_dir)  # part files a killed run left behind (none a live process holds)
        self._run_started = time.time()  # a file newer than this was written by a concurrent run
        self._write_stop = WriteStop()
        rows: dict[int, dict[str, Any]] = {}
        jobs: list[tuple[ParsedInput, ItemJob]] = []
        model, view = self._dashboard_begin(len(parsed), show=hooks is None)
        if hooks is not None:
            hooks.on_begin(model)
        self._run_idle.clear()
        self._run_thread = threading.get_ident()
        try:
            with open_ledger(folder=self.out_dir) as ledger:
                self._run_ledger = ledger
                if getattr(ledger, "recovered", False):  # its file was damaged or unusable (issue 21): rows from the PDFs
                    from paperfetch.ledger.rebuild import rebuild_from_files

                    rebuild_from_files(ledger, [i.identifier for i in parsed if i.identifier is not None], self.out_dir,
                                       self.filename_template)
                for item in parsed:
                    if item.identifier is None:
                        rows[item.position] = {"id_type": None, "status": Status.INVALID_IDENTIFIER.value, "error": item.error}
                        continue
                    if item.duplicate_of is not None:
                        continue
                    reused = resumed_row(ledger, item.identifier, self.out_dir) if self.resume else None
                    if reused is not None:
                        rows[item.position] = reused
                        continue
                    meta = self._initial_meta(item.identifier)
                    jobs.append((item, ItemJob(self._item_context(), item.identifier, meta, deque(self.order))))
                for position, row in rows.items():  # decided without a request: invalid inputs, rows reused from the ledger
                    model.item_finished(row["status"])
                    if hooks is not None:
                        hooks.on_row(position, row)
                try:
                    self._resolve([job for _, job in jobs])
                    self._run(jobs, ledger, rows, model=model, dashboard_shown=view is not None or hooks is not None,
                              hooks=hooks)
                except Stopped:  # a Job's stop cut a batch lookup short: its unfinished items are ``stopped``
                    if hooks is None:
                        raise
                if hooks is not None:
                    for item, job in jobs:
                        if item.position not in rows:
                            rows[item.position] = hooks.stopped_row(job.outcome())
                            model.item_finished(Status.STOPPED.value)
                            hooks.on_row(item.position, rows[item.position])
            for item in parsed:  # duplicates share the first occurrence's outcome
                if item.duplicate_of is not None:
                    rows[item.position] = dict(rows[item.duplicate_of])
                    model.item_finished(rows[item.position]["status"])
                    if hooks is not None:
                        hooks.on_row(item.position, rows[item.position])
            frame = redact_frame(outcomes_frame({"input": item.input, **rows[item.position]} for item in parsed))
        finally:
            self._run_ledger = None
            self._run_thread = None
            self._run_idle.set()
            model.finish()
            if view is not None:
                view.close()
        return frame

    def candidates(self, ids: Iterable[object] | str | pd.Series) -> pd.DataFrame:
        """What :meth:`download` would try, without downloading: one row per candidate URL.

        The metadata services are asked (politely, as in a run); PDFs and landing pages are not
        requested. Columns: ``position`` (of the input), ``input``, ``key``, ``rank`` (the order of
        trial), ``kind`` (``pdf`` or ``landing``), ``source``, ``url``, ``error``. An input without any
        candidate has one row with ``url`` empty and the reason in ``error``.
        """
        parsed = parse_many(ids)
        rows: list[dict[str, Any]] = []
        jobs: list[tuple[ParsedInput, ItemJob]] = []
        for item in parsed:
            if item.identifier is None:
                rows.append({"position": item.position, "input": item.input, "error": item.error})
            else:
                jobs.append((item, ItemJob(self._item_context(), item.identifier, self._initial_meta(item.identifier),
                                           deque(self.order))))
        self._resolve([job for _, job in jobs])
        for item, job in jobs:
            found, errors = job.plan()
            base = {"position": item.position, "input": item.input, "key": job.identifier.key}
            for rank, (kind, source, url) in enumerate(found, 1):
                rows.append({**base, "rank": rank, "kind": kind, "source": source, "url": redact_url(url)})
            if not found:
                reason = "; ".join(errors) or ("known, but no source offers an open-access copy" if job.known
                                                else "no service knows this identifier")
                rows.append({**base, "error": reason})
        names = ["position", "input", "key", "rank", "kind", "source", "url", "error"]
        # object columns first: pandas 3 would infer Arrow text, which cannot hold an input's lone surrogate
        frame = pd.DataFrame({name: pd.Series([row.get(name) for row in rows], dtype=object) for name in names})
        for name in names[2:] + ["position"]:  # the other columns as pandas infers them (the input as given)
            frame[name] = frame[name].infer_objects()
        frame["rank"] = frame["rank"].astype("Int64")
        return redact_frame(frame.sort_values(["position", "rank"], kind="stable", ignore_index=True))

    @staticmethod
    def _initial_meta(ident: Identifier) -> dict[str, Any]:
        meta: dict[str, Any] = {"doi": ident.doi if ident.type in (IdType.DOI,) else None}
        if ident.type is IdType.PMID:
            meta["pmid"] = ident.value
        elif ident.type is IdType.PMCID:
            meta["pmcid"] = ident.value
        elif ident.type is IdType.ARXIV:
            meta["arxiv_id"] = ident.value + (ident.version or "")
            meta["doi"] = ident.doi
        return meta

    def download_frame(self, df: pd.DataFrame, column: str = "doi") -> pd.DataFrame:
        """A new frame: *df*'s rows with the outcome columns joined (*df* is not modified).

        An outcome column whose name *df* already uses (``doi`` when the identifiers are in a
        ``doi`` column, say) is joined as ``<name>_paperfetch``; the caller's columns stay as they were.
        """
        if column not in df.columns:
            raise ConfigurationError(f"no column {column!r} in the frame{did_you_mean(column, df.columns)}; "
                                     f"it has {list(df.columns)}")
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
        web = redact_frame(self.web.domain_status())
        if self.api is self.web:
            return mark_unreachable(web, [h.host for h in self.run_snapshot().unreachable])
        api_hosts = self.api_hosts
        api = redact_frame(self.api.domain_status())
        merged = pd.concat([web[~web["host"].isin(api_hosts)], api[api["host"].isin(api_hosts)]], ignore_index=True)
        merged = merged.sort_values("host", ignore_index=True)
        merged.attrs["store"] = self.store.name
        return mark_unreachable(merged, [h.host for h in self.run_snapshot().unreachable])

    @property
    def store(self) -> Any:
        """The host-state store both transports read and write (:mod:`paperfetch.state`)."""
        return self.web.store

    def dashboard(self) -> Any:
        """A :class:`~paperfetch.widgets.Dashboard` of this retriever, at any time.

        During a run it follows the run (holds count down); afterwards it shows the last run as it
        ended (counts by status, per-host counts and politeness state, recent events; holds as clock
        times, no countdown), the same answer as the dashboard the run showed. The state now is
        ``domain_status()``. Before any run, the hosts and their state only. In a notebook it
        displays as widgets while something can change and as static HTML once the run ended; its
        ``repr`` is text.
        """
        from paperfetch.widgets import Dashboard

        model = self._dashboard_model
        if model is None:
            model = self._new_dashboard_model(events=False)
        return Dashboard(model)

    def dashboard_note(self, kind: str, message: str, *, url: str | None = None) -> None:
        """A line in the recent events of the run's dashboard that no transport event carries (a title
        mismatch, say); nothing before the first run. Never raises: a view never stops a run."""
        model = self._dashboard_model
        if model is None:
            return
        try:
            model.note(kind, message, url=url)
        except Exception:  # noqa: BLE001 - a view never stops a run
            logger.debug("dashboard note failed", exc_info=True)

    def requests(self) -> pd.DataFrame:
        """One row per HTTP request made: time, host, URL (no secrets), status, waited, elapsed, source."""
        return self._request_log.frame()

    # ------------------------------------------------------------------ search and snowballing
    def search_pubmed(self, query: str, *, max_results: int = 200, mindate: str | None = None,
                      maxdate: str | None = None) -> pd.DataFrame:
        """PubMed hits for *query*, in PubMed's order: ``pmid, doi, pmcid, title, journal, year, authors, abstract``.

        ``mindate``/``maxdate`` (``"2020"``, ``"2020/06"``, ``"2020/06/30"``) restrict the publication date.
        The frame feeds :meth:`download_frame` (``column="pmid"`` or ``"doi"``).
        """
        from paperfetch.research import search_pubmed

        return search_pubmed(query, sources=self._sources, api=self.api, max_results=max_results, mindate=mindate,
                             maxdate=maxdate, metadata=self._metadata)  # answers cached for defaults.SEARCH_CACHE_TTL_S

    def references(self, identifier: object) -> pd.DataFrame:
        """Works *identifier* (DOI, PMID or PMCID) cites: ``doi, pmid, openalex_id, title, year, source_of_link``."""
        from paperfetch.research import references

        return references(identifier, sources=self._sources, metadata=self._metadata)

    def citations(self, identifier: object) -> pd.DataFrame:
        """Works that cite *identifier* (DOI, PMID or PMCID), same columns as :meth:`references`."""
        from paperfetch.research import citations

        return citations(identifier, sources=self._sources, metadata=self._metadata)

    def release_holds(self) -> None:
        """Clear the holds, open breakers and learned intervals of every host in this Retriever's host-state
        store (after a maintenance window; whichever process set them)."""
        self.web.release_holds()
        if self.api is not self.web:
            self.api.release_holds()

    def close(self) -> None:
        """Close the clients this Retriever made (never a caller's ``http=`` client) and the metadata cache it opened.

        Called from another thread while :meth:`download` runs, it stops the batch first: no new request
        starts, and every item not finished gets a ``stopped`` row (retryable: a re-run tries it again).
        The cache is closed once the batch has written its rows (waiting at most
        :data:`~paperfetch.defaults.CLOSE_WAIT_S`).
        """
        scheduler = self._run_scheduler
        if scheduler is not None:
            scheduler.stop()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        self.web.close()
        if self.api is not self.web:
            self.api.close()
        if self._run_thread is not None and self._run_thread != threading.get_ident():
            if not self._run_idle.wait(defaults.CLOSE_WAIT_S):
                logger.warning("the stopped batch did not end within %.0f s; closing the cache anyway", defaults.CLOSE_WAIT_S)
        if self._own_cache is not None:
            self._own_cache.close()

    def __enter__(self) -> "Retriever":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Retriever(out_dir={str(self.out_dir)!r}, sources={self.order}, identification={self.identification!r})"

    # ------------------------------------------------------------------ internals
    def _reusable(self, job: ItemJob, dest: Path, waited: bool) -> bool:
        """Keep the valid PDF found under *dest* once its part file is ours, instead of fetching it again.

        Only a complete, validated body is ever renamed onto *dest*, so a valid PDF there was written by
        another process: while we waited for it, during this run, or just before this run began (then
        that process has recorded it in the ledger by now, with this very file's size and SHA-256).
        A file the ledger does not vouch for and that predates the run (modified, or ``resume=False``)
        is fetched again. The rule is :func:`paperfetch.download.download_action`'s.
        """
        ledger = self._run_ledger

        def vouched() -> bool:
            return ledger is not None and ledger.is_done(job.identifier.key, self.out_dir) is not None

        action = existing_file_action(dest, waited=waited, run_started=self._run_started, resume=self.resume,
                                      done=vouched)
        return action is FileAction.REUSE

    def _item_context(self) -> ItemContext:
        return ItemContext(
            api=self.api, web=self.web, sources=self._sources, prefetched=self._prefetched, doi_base=self._doi_base,
            out_dir=self.out_dir, filename_template=self.filename_template, max_pdf_bytes=self.max_pdf_bytes,
            metadata=self._metadata, check_title=self._check_title, reuse=self._reusable, write_stop=self._write_stop,
            prefer=self.prefer,
        )

    def _check_title(self, job: ItemJob, path: Path, url: str) -> dict[str, Any]:
        from paperfetch.research import check_title

        others = [j.meta.get("title") for j in self._run_jobs if j is not job]
        notify = getattr(self._dashboard_model, "note", None)  # the run's recent events, when a model watches it
        return check_title(job, path, url, other_titles=others, notify=notify)

    @property
    def api_hosts(self) -> frozenset[str]:
        """The hosts of the metadata services (paced by the API client)."""
        return frozenset(host_key(s.base_url) for s in self._sources.values())

    def _resolve(self, jobs: list[ItemJob]) -> None:
        """Batched metadata: ID converter and E-utilities for PMIDs/PMCIDs, OpenAlex for DOIs."""
        self._run_jobs = jobs  # the batch's titles, for the title check
        if not jobs:
            return
        by_key = {job.identifier.key: job for job in jobs}
        ncbi_ids = [j.identifier for j in jobs if j.identifier.type in (IdType.PMID, IdType.PMCID)]
        if ncbi_ids and "ncbi_idconv" in self._sources:
            for key, record in self._lookup("ncbi_idconv", ncbi_ids).items():
                if key in by_key:
                    by_key[key].merge(record)
        unknown_pmids = [j.identifier for j in jobs if j.identifier.type is IdType.PMID and not j.meta.get("doi")]
        if unknown_pmids and "ncbi_eutils" in self._sources:
            for key, record in self._lookup("ncbi_eutils", unknown_pmids).items():
                if key in by_key:
                    by_key[key].merge(record)
        for name in ("openalex", "semanticscholar"):  # the batched sources, asked once for the whole batch
            if name not in self.order or name not in self._sources:
                continue
            dois, owners = [], {}
            for job in jobs:
                ident = doi_identifier(job.meta.get("doi"))
                if ident is not None and ident.type is IdType.DOI:
                    dois.append(ident)
                    owners[ident.key] = job
            for key, record in self._lookup(name, dois, owners).items():
                self._prefetched[(name, key.split(":", 1)[1].lower())] = record

    def _lookup(self, name: str, ids: list[Identifier], owners: Mapping[str, ItemJob] | None = None) -> dict[str, Record]:
        """A batched lookup, one batch at a time: a batch whose host is held (a spent budget) marks its
        items (*owners*: identifier key -> job) held for this source, the batches answered before it are kept."""
        if not ids or getattr(self.api, "closed", False):  # close() from another thread: the batch is stopping, ask nothing more
            return {}
        source = self._sources[name]
        records: dict[str, Record] = {}
        set_current_source(name)
        try:
            for chunk in batched(ids, source.batch_size if owners is not None else len(ids)):
                try:
                    records.update(source.lookup(self._metadata, chunk))
                except RateLimited as exc:  # the transport warned once; the items say so
                    logger.info("%s lookup not sent for %d identifier(s): %s", name, len(chunk), redact_text(str(exc)))
                    for ident in chunk:
                        if owners and ident.key in owners:
                            owners[ident.key].source_failed(name, exc)
            return records
        except Exception as exc:  # noqa: BLE001 - a batch lookup's failure (whatever it is) never ends the batch
            logger.warning("%s lookup failed for %d identifier(s): %s", name, len(ids), redact_text(str(exc)))
            return records
        finally:
            set_current_source(None)

    def _new_dashboard_model(self, *, events: bool) -> Any:
        """A dashboard model watching this retriever's clients: the metadata services' hosts read
        through the API client, the others through the web client (as ``domain_status()`` does)."""
        from paperfetch.dashboard.model import DashboardModel

        model = DashboardModel().watch(self.web, events=events)
        if self.api is not self.web:
            model.watch(self.api, hosts=set(self.api_hosts), events=events)
        return model

    def _dashboard_begin(self, total: int, show: bool = True) -> tuple[Any, Any]:
        """The run's DashboardModel (always: ``dashboard()`` reads it), and its view when one is shown."""
        from paperfetch.widgets import Dashboard, in_notebook, widgets_available

        model = self._new_dashboard_model(events=True)
        model.start(total)
        self._dashboard_model = model
        show = show and (self.show_dashboard if self.show_dashboard is not None else in_notebook() and widgets_available())
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

    def _run(self, jobs: list[tuple[ParsedInput, ItemJob]], ledger: ResumeLedger, rows: dict[int, dict[str, Any]],
             model: Any = None, dashboard_shown: bool = False, hooks: RunHooks | None = None) -> None:
        from tqdm.auto import tqdm

        position = {id(job): item.position for item, job in jobs}
        bar = tqdm(total=len(jobs), desc="paperfetch", unit="paper", disable=not self.progress or not jobs or dashboard_shown,
                   leave=True)
        lock = threading.Lock()

        def finished(job: ItemJob) -> None:
            job.finished = True
            row = job.outcome()
            rows[position[id(job)]] = row
            extra = {k: row.get(k) for k in META_FIELDS if row.get(k) is not None}
            if row.get("title_match") is not None:  # issue 12: an already_downloaded row carries it too
                extra["title_match"] = row["title_match"]
            ledger.record(
                job.identifier.key, status=row["status"], path=row.get("path"), bytes=row.get("bytes"),
                sha256=row.get("sha256"), source=row.get("source"), url=row.get("url"),
                http_status=row.get("http_status"), error=row.get("error"), extra=extra,
            )
            if model is not None:
                model.item_finished(row["status"], url=row.get("url"), error=row.get("error"), key=job.identifier.key)
            if hooks is not None:
                hooks.on_row(position[id(job)], row)
            with lock:
                bar.update(1)

        try:
            from paperfetch.http.scheduler import HostScheduler

            scheduler = HostScheduler(self.web, workers=self.workers, on_finished=finished)
            if model is not None:
                model.track(scheduler)
            self._run_scheduler = scheduler  # close() stops it; a close() before this: the dispatcher sees the closed client
            if hooks is not None:
                hooks.on_scheduler(scheduler)
            if hooks is None or not hooks.stop.is_set():
                scheduler.run([job for _, job in jobs])
        finally:
            self._run_scheduler = None
            bar.close()
        if hooks is not None and hooks.stop.is_set():
            return  # a Job's stop: _download gives its unfinished items ``stopped`` rows, the ledger keeps what it had
        for _, job in jobs:  # a job the scheduler never reported (stopped early) still gets a row: stopped
            if position[id(job)] not in rows:
                job.stopped = True
                finished(job)

    def run_snapshot(self) -> Any:
        """The last run as its dashboard tells it (a :class:`~paperfetch.dashboard.snapshot.BatchSnapshot`:
        counts, this run's hosts, ``offline_line()``); empty before any run."""
        from paperfetch.dashboard.snapshot import BatchSnapshot

        model = self._dashboard_model
        return BatchSnapshot(at=time.time()) if model is None else model.snapshot()

    # ------------------------------------------------------------------ full text (issue 17; paperfetch.fulltext.fetch)
    @overload
    def fulltext(self, ids: Iterable[object] | str | pd.Series, *, with_outcomes: Literal[False] = False,
                 pdf_engine: str = "pypdf") -> pd.DataFrame: ...

    @overload
    def fulltext(self, ids: Iterable[object] | str | pd.Series, *, with_outcomes: Literal[True],
                 pdf_engine: str = "pypdf") -> tuple[pd.DataFrame, pd.DataFrame]: ...

    def fulltext(self, ids: Iterable[object] | str | pd.Series, *, with_outcomes: bool = False,
                 pdf_engine: str = "pypdf") -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
        """One row per paragraph of every paper with text: JATS where it exists, else the open-access PDF's text.

        Columns ``input, doi, pmid, pmcid, text_source, license, section, paragraph, text`` (docs/fulltext.md).
        ``with_outcomes=True`` returns ``(paragraphs, outcomes)``: the outcomes frame (one row per input) with
        ``text_source`` and ``text_path`` filled. Never raises for a bad input or a failing service.
        """
        from paperfetch.fulltext.fetch import collect_text

        result = collect_text(ids, context=self._text_context(pdf_engine))
        return (result.paragraphs, result.outcomes) if with_outcomes else result.paragraphs

    def fulltext_references(self, ids: Iterable[object] | str | pd.Series) -> pd.DataFrame:
        """One row per cited work of the JATS ``<ref-list>`` of every paper with JATS (``doi``/``pmid``/``pmcid``
        are the cited work's, so the frame feeds :meth:`download_frame`); a re-run reads the kept XML."""
        from paperfetch.fulltext.fetch import collect_text

        return collect_text(ids, context=self._text_context("pypdf")).references

    def _text_context(self, pdf_engine: str) -> Any:
        from paperfetch.fulltext.fetch import TextContext

        return TextContext(metadata=self._metadata, sources=self._sources, lookup=self._lookup, download=self.download,
                           identification=self.identification, out_dir=self.out_dir,
                           filename_template=self.filename_template, resume=self.resume, pdf_engine=pdf_engine)

    # ------------------------------------------------------------------ in the background (issue 16)
    def start(self, ids: Iterable[object] | str | pd.Series | pd.DataFrame, column: str | None = None) -> Job:
        """:meth:`download` (or, given a frame and *column*, :meth:`download_frame`) on background
        threads: returns a :class:`~paperfetch.job.Job` at once, a :class:`concurrent.futures.Future`
        of the outcomes frame with a live dashboard, a Stop button and an ETA (see :mod:`paperfetch.job`).

        One job at a time per Retriever: a second ``start`` (or a ``download``) while one runs raises
        :class:`RuntimeError`; a second Retriever runs beside it, sharing every host's pacing.
        """
        from paperfetch.job import Job

        if self._job is not None and not self._job.done():
            raise RuntimeError(f"{self._job!r} of this Retriever is still running: stop it (job.stop()) or wait "
                               "for it (job.result()) first; a second Retriever runs beside it, sharing every "
                               "host's pacing through the host state")
        if isinstance(ids, pd.DataFrame):
            frame = ids
            name = column if column is not None else "doi"
            if name not in frame.columns:
                raise ConfigurationError(f"no column {name!r} in the frame; it has {list(frame.columns)}")
            job = Job(run=self._download, ids=frame[name], join=lambda subset, outcomes: _join_outcomes(
                frame.iloc[subset], outcomes))
        else:
            if column is not None:
                raise ConfigurationError("column= goes with a DataFrame: r.start(frame, column='doi')")
            job = Job(run=self._download, ids=ids)
        self._job = job
        job.begin()
        return job


def _join_outcomes(df: pd.DataFrame, outcomes: pd.DataFrame) -> pd.DataFrame:
    """*df* with the outcome columns joined, as :meth:`Retriever.download_frame` does (a Job's frames)."""
    outcomes = outcomes.copy()
    outcomes.index = df.index
    joined = df.copy()
    for name in outcomes.columns:
        if name != "input":
            joined[f"{name}_paperfetch" if name in df.columns else name] = outcomes[name]
    return joined


def _origin(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(f"endpoint {url!r} must be http(s)://host[:port]")
    return f"{parts.scheme}://{parts.netloc}"
