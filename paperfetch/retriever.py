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

This module is the facade: the constructor (clients, sources, identification) and the public
methods. The batch machinery of steps 1-4 lives in :mod:`paperfetch.run` (:class:`BatchRun`).
"""

from __future__ import annotations

import logging
import os
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Literal, Mapping, Sequence, cast, overload
from urllib.parse import urlsplit

import pandas as pd

from paperfetch import defaults
from paperfetch.cache import MetadataCache, metadata_fetcher
from paperfetch.config import Identification, clean_setting, env_endpoint_url, load_settings, user_agent_for
from paperfetch.errors import ConfigurationError, Interrupted
from paperfetch.http.assign import Prefer
from paperfetch.http.client import HttpClient
from paperfetch.http.hosts import host_key
from paperfetch.ids import filename_for, parse_identifier
from paperfetch.ledger import open_ledger
from paperfetch.outcomes import is_final, retried_by_rerun
from paperfetch.redact import install_log_filter, redact_frame
from paperfetch.report import mark_unreachable
from paperfetch.requestlog import RequestLog
from paperfetch.run import IDENTIFIER_COLUMNS, BatchRun, RunSettings, row_identifiers, why_frame
from paperfetch.sources import SOURCES, Source
from paperfetch.sources.arxiv import ArxivSource
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
        out_dir: str | os.PathLike[str] | None = None,
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
        max_retries: int | None = None,
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
        config: str | os.PathLike[str] | None = None,
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
        # the CLI's settings, in its order - arguments > environment > config file > defaults
        #: the effective settings and where each came from (``r.settings.rows()``; secrets masked)
        self.settings = settings = load_settings(
            {"email": email, "openalex_api_key": openalex_api_key, "ncbi_api_key": ncbi_api_key, "s2_api_key": s2_api_key,
             "out_dir": None if out_dir is None else os.fspath(out_dir), "workers": workers, "delay_min_s": delay_min_s,
             "delay_max_s": delay_max_s, "max_retries": max_retries, "state": state if isinstance(state, str) else None},
            config_path=None if config is None else os.fspath(config))
        email, workers, delay_min_s, delay_max_s = settings.email, settings.workers, settings.delay_min_s, settings.delay_max_s
        if state is None:
            state = settings.state
        self.identification = settings.identification
        self.out_dir = Path(settings.out_dir or defaults.OUT_DIR).expanduser().resolve()  # absolute
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
        install_log_filter()  # loggers made since the import mask secrets too
        common: dict[str, Any] = dict(
            user_agent=user_agent_for(None), contact_email=self.identification.email,
            polite_mode=polite_mode, suppress_on_403=suppress_on_403, delay_min_s=delay_min_s, delay_max_s=delay_max_s,
            max_retries=settings.max_retries, max_retry_after_s=max_retry_after_s, verbosity=verbosity,
        )
        if http is None and "registry" not in (http_options or {}):
            # Host state: None reads PAPERFETCH_STATE, and without it the SQLite file in the user cache
            # directory, so a re-run (or another notebook) remembers holds, suppressions and learned pacing.
            common.update(state=state, state_fallback=state_fallback)
        self._sources: dict[str, Source] = {}
        #: Sources left out for want of an e-mail address (said once, in one warning).
        self.skipped_sources = tuple(name for name, cls in SOURCES.items()
                                     if cls.requires_email and not self.identification.email)
        self._notes: list[tuple[str, str]] = []  # lines every run's dashboard starts with
        if self.skipped_sources:
            logger.warning("no contact e-mail given: %s skipped "
                           "(give one with --email, PAPERFETCH_EMAIL or Retriever(email=...))", ", ".join(self.skipped_sources))
            missing = (f"no contact e-mail: {', '.join(self.skipped_sources)} skipped, so fewer open copies are found; "
                       "set PAPERFETCH_EMAIL, email in the config file, or Retriever(email=...)")
            warnings.warn(missing, UserWarning, stacklevel=2)  # shown once per place (a notebook cell) by default
            self._notes.append(("settings", missing))
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
        # The metadata cache (paperfetch.cache) in front of the API transport. True: the user cache dir,
        # False: none; or a path, or a MetadataCache the caller owns.
        self._metadata, self._own_cache = metadata_fetcher(self.api, cache)
        self._request_log = RequestLog()
        # the batch machinery (paperfetch.run): scheduler, ledger and dashboard model of the run in progress
        self._batch = BatchRun(api=self.api, web=self.web, sources=self._sources, metadata=self._metadata,
                               doi_base=self._doi_base, settings=self._run_settings, notes=self._notes)
        self._job: Job | None = None  # the last start() (paperfetch.job), running or not
        self._describe_openalex()
        self._unsubscribe = [client.subscribe(self._request_log.on_event)
                             for client in {id(self.web): self.web, id(self.api): self.api}.values()]

    def _source_concurrency(self, *, email: str | None) -> dict[str, int]:
        """Crossref's pool caps the requests in flight (its x-concurrency-limit applies under it)."""
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
        """Download every identifier; one outcome row per input, in input order.

        Interrupted (Ctrl-C, a signal), it prints one line (``verbosity=0``: none) and raises
        :class:`~paperfetch.errors.Interrupted` (a ``KeyboardInterrupt``) whose ``.partial`` is the frame:
        finished rows kept, the rest ``stopped``.
        """
        try:
            return self._download(ids)
        except Interrupted as exc:
            if self.verbosity > 0:  # the one line a notebook or a script shows (the CLI says its own)
                print(exc, file=sys.stderr, flush=True)
            raise Interrupted(str(exc), partial=exc.partial) from None  # no frames of the machinery

    def _download(self, ids: Iterable[object] | str | pd.Series, hooks: RunHooks | None = None) -> pd.DataFrame:
        """:meth:`download`; with *hooks*, the run of a :class:`~paperfetch.job.Job` (see :meth:`start`)."""
        if self._job is not None and hooks is None and not self._job.done():
            raise RuntimeError(f"{self._job!r} of this Retriever is running: stop it or wait for it first "
                               "(a second Retriever shares every host's pacing through the host state)")
        return self._batch.download(ids, hooks=hooks)

    def candidates(self, ids: Iterable[object] | str | pd.Series) -> pd.DataFrame:
        """What :meth:`download` would try, without downloading: one row per candidate URL.

        The metadata services are asked (politely, as in a run); PDFs and landing pages are not
        requested. Columns: ``position`` (of the input), ``input``, ``key``, ``rank`` (the order of
        trial), ``kind`` (``pdf`` or ``landing``), ``source``, ``url``, ``error``. An input without any
        candidate has one row with ``url`` empty and the reason in ``error``.
        """
        return self._batch.candidates(ids)

    def download_frame(self, df: pd.DataFrame, column: str | None = None, *,
                       columns: Sequence[str] | None = None) -> pd.DataFrame:
        """A new frame: *df*'s rows with the outcome columns joined (*df* is not modified).

        Each row's identifier is its ``doi``, else its ``pmid``, else its ``pmcid`` (those of the
        columns *df* has; *columns* gives another list, *column* one column only). A row with none is
        ``invalid_identifier`` with the reason "no identifier in this row". An outcome column whose name
        *df* already uses (``doi``, say) is joined as ``<name>_paperfetch``; the caller's columns stay as they were.
        """
        names = [column] if column is not None else list(columns or IDENTIFIER_COLUMNS)
        present = [name for name in names if name in df.columns]
        if not present or (column is not None and column not in df.columns):
            wanted = column if column is not None else names[0]
            raise ConfigurationError(f"no column {wanted!r} in the frame{did_you_mean(wanted, df.columns)}; "
                                     f"it has {list(df.columns)}")
        inputs = row_identifiers(df, present)
        outcomes = self.download(inputs if len(present) > 1 else df[present[0]])
        outcomes.index = df.index
        blank = pd.Series([value is None for value in inputs], index=df.index)
        if blank.any():  # say which columns were looked at, not "blank input"
            outcomes.loc[blank, "reason"] = "no identifier in this row"
            outcomes.loc[blank, "error"] = f"no identifier in this row (looked at: {', '.join(present)})"
        joined = df.copy()
        for name in outcomes.columns:
            if name == "input":
                continue
            # the caller's columns (the identifier column included) are never overwritten
            target = f"{name}_paperfetch" if name in df.columns else name
            joined[target] = outcomes[name]
        return joined

    def why(self, identifier: object) -> pd.DataFrame:
        """Each source asked about *identifier* in its last run, and its answer: ``source, answer``.

        Read from the ledger in ``out_dir`` (the trail a run keeps); empty before any run asked.
        The CLI's ``--explain ID`` prints it.
        """
        with open_ledger(folder=self.out_dir) as ledger:
            return why_frame(ledger.get(parse_identifier(identifier).key))

    def retry(self, outcomes: pd.DataFrame, *, statuses: Iterable[str] | None = None) -> pd.DataFrame:
        """Run again just the rows of *outcomes* that failed: those a re-run retries (not finished well,
        not a final answer), or those with one of *statuses*. Returns *outcomes* with those rows replaced."""
        codes = outcomes["http_status"] if "http_status" in outcomes.columns else [None] * len(outcomes)
        chosen = None if statuses is None else {str(s) for s in statuses}
        mask = pd.Series([retried_by_rerun(s, c) if chosen is None else s in chosen
                          for s, c in zip(outcomes["status"].astype(str), codes)], index=outcomes.index)
        if not mask.any():
            return outcomes.copy()
        resume = self.resume
        # asked for final statuses by name: ask the services again (the ledger would answer from memory)
        self.resume = resume and not any(is_final(s) for s in (chosen or ()))
        try:
            fresh = self.download(list(outcomes.loc[mask, "input"]))
        finally:
            self.resume = resume
        fresh.index = outcomes.index[mask.to_numpy()]
        return pd.concat([outcomes[~mask], fresh]).reindex(outcomes.index)

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

        model = self._batch.model
        if model is None:
            model = self._batch.new_dashboard_model(events=False)
        return Dashboard(model)

    def requests(self) -> pd.DataFrame:
        """One row per HTTP request made: time, host, URL (no secrets), status, waited, elapsed, source."""
        return self._request_log.frame()

    # ------------------------------------------------------------------ search and snowballing
    def search_pubmed(self, query: str, *, max_results: int = defaults.SEARCH_MAX_RESULTS, mindate: str | None = None,
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
        self._batch.stop()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        self.web.close()
        if self.api is not self.web:
            self.api.close()
        if not self._batch.wait_idle(defaults.CLOSE_WAIT_S):
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
    def _run_settings(self) -> RunSettings:
        """The settings a run reads, as they are now (a caller may change them between runs)."""
        return RunSettings(out_dir=self.out_dir, order=self.order, filename_template=self.filename_template,
                           max_pdf_bytes=self.max_pdf_bytes, workers=self.workers, resume=self.resume,
                           progress=self.progress, show_dashboard=self.show_dashboard, prefer=self.prefer)

    @property
    def api_hosts(self) -> frozenset[str]:
        """The hosts of the metadata services (paced by the API client)."""
        return self._batch.api_hosts

    def run_snapshot(self) -> Any:
        """The last run as its dashboard tells it (a :class:`~paperfetch.dashboard.snapshot.BatchSnapshot`:
        counts, this run's hosts, ``offline_line()``); empty before any run."""
        from paperfetch.dashboard.snapshot import BatchSnapshot

        model = self._batch.model
        return BatchSnapshot(at=time.time()) if model is None else model.snapshot()

    # ------------------------------------------------------------------ full text (paperfetch.fulltext.fetch)
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

        return TextContext(metadata=self._metadata, sources=self._sources, lookup=self._batch.lookup, download=self.download,
                           identification=self.identification, out_dir=self.out_dir,
                           filename_template=self.filename_template, resume=self.resume, pdf_engine=pdf_engine)

    # ------------------------------------------------------------------ in the background
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
