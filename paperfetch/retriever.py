"""The Retriever: identifiers in, validated PDFs and one outcomes DataFrame out.

Data flows one way: identifier → candidates (sources) → polite transport → validated file → outcome row
(docs/sources.md: batched lookups and the default order; docs/outcomes.md: resuming). This module is the
facade — the constructor (settings, sources, the web and API clients) and the public methods; the batch
itself is :class:`paperfetch.flow.BatchRun`.
"""

from __future__ import annotations

import logging
import os
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, cast
from urllib.parse import urlsplit

import pandas as pd

from paperfetch import defaults
from paperfetch.cache import MetadataCache, metadata_fetcher
from paperfetch.config import Identification
from paperfetch.errors import ConfigurationError, Interrupted
from paperfetch.flow import BatchRun, RunSettings, why_frame
from paperfetch.flow.rows import frame_inputs, join_outcomes
from paperfetch.http.client import HttpClient
from paperfetch.http.hosts import host_key
from paperfetch.ids import parse_identifier
from paperfetch.ledger import open_ledger
from paperfetch.outcomes import is_final, retried_by_rerun
from paperfetch.redact import install_log_filter, redact_frame
from paperfetch.report import for_people, mark_unreachable
from paperfetch.requestlog import RequestLog
from paperfetch.settings import (
    ENDPOINT_NAMES,
    HOST_RULE_KNOBS,
    SETTING_NAMES,
    Settings,
    load_settings,
    options_doc,
    refuse_differing,
    setting_arguments,
)
from paperfetch.sources import SOURCES, Source
from paperfetch.sources.arxiv import ArxivSource
from paperfetch.sources.unpaywall import check_email

if TYPE_CHECKING:  # pragma: no cover
    from paperfetch.fulltext.bundle import FullText
    from paperfetch.job import Job, RunHooks
    from paperfetch.state.base import HostStateStore

__all__ = ["DEFAULT_ORDER", "ENDPOINT_NAMES", "RUN_OPTIONS", "Retriever"]

logger = logging.getLogger(__name__)

#: Cheapest reliable first: arXiv needs no lookup, OpenAlex was asked in batches,
#: Unpaywall and Europe PMC are one request each, the landing page is a last resort; PMC's own bucket (the
#: sanctioned route for PMC articles) comes before Europe PMC's PDF page.
DEFAULT_ORDER: tuple[str, ...] = ("arxiv", "openalex", "semanticscholar", "unpaywall", "pmc", "europepmc", "biorxiv",
                                  "crossref", "landing")
DOI_RESOLVER = "https://doi.org"
#: The settings a Retriever's runs read that :meth:`Retriever.configure` may change between runs.
RUN_OPTIONS: tuple[str, ...] = ("out_dir", "workers", "resume", "prefer", "skip_retracted", "pdf_engine",
                                "filename_template", "max_pdf_bytes", "progress", "dashboard")


def _fulltext_view(part: str, rows: str) -> Callable[[Retriever, Iterable[object] | str | pd.Series], pd.DataFrame]:
    """A Retriever method giving one frame of :meth:`Retriever.fulltext`'s bundle (a view: no request more)."""
    def view(self: Retriever, ids: Iterable[object] | str | pd.Series) -> pd.DataFrame:
        return cast(pd.DataFrame, getattr(self.fulltext(ids), part))

    view.__name__ = view.__qualname__ = f"fulltext_{part}"
    view.__doc__ = f"""``fulltext(ids).{part}``: {rows}.

        Parameters
        ----------
        ids : iterable, str or Series, as for :meth:`fulltext`
        """
    return view


class Retriever:
    __doc__ = f"""Find and download legal open-access PDFs for DOIs, PMIDs, PMCIDs and arXiv IDs.

    >>> r = Retriever(email="your.name@your-university.edu", out_dir="PDFs")  # doctest: +SKIP
    >>> outcomes = r.download(["10.7759/cureus.76081", "PMID:31452104"])  # doctest: +SKIP

    Settings (the e-mail, keys, ``out_dir``, the run options and every transport knob) are read by
    :func:`paperfetch.load_settings`: arguments > environment > config file > defaults; ``r.settings``
    shows where each came from (docs/cli.md). ``None`` below means "not given": the next source decides.

    Parameters
    ----------
    out_dir : str or path, optional
        The folder the PDFs and the ledger go to (default ``PDFs``).
    sources : sequence of str
        The sources to ask, in order (default :data:`DEFAULT_ORDER`).
    endpoints : mapping, optional
        Base URLs by service name (:data:`ENDPOINT_NAMES`), e.g. a local mirror or the demo world.
    http : HttpClient, optional
        A client of your own: the run uses its session, host state, clock and transport settings.
    polite_mode, respect_robots_txt, suppress_on_403 : bool, optional
        Pace and back off; read robots.txt for web pages; stop asking a host that answered 403.
    delay_min_s, delay_max_s : float, optional
        The range of the random gap between two requests to one host, in seconds.
    max_retries, max_retry_after_s : optional
        Retries of a failed request; the longest ``Retry-After`` a call waits for (longer: the host is held).
    timeout : float or (connect, read), optional
        Seconds to wait for a connection and for each read.
    max_pdf_bytes : int or None
        Larger files are refused (default 200 MB; ``None`` or 0: no limit).
    verbosity : int, optional
        0 silent, 1 one-line warnings (default), 2 and 3 log at INFO and DEBUG.
    http_options : mapping, optional
        Any other transport setting by name (:class:`~paperfetch.http.config.TransportConfig`).
    cache : bool, path or MetadataCache
        The metadata cache: ``True`` the user cache folder, ``False`` none, or a path or cache of your own.
    state : str or store, optional
        The host-state store (:func:`paperfetch.state.open_store`): ``"memory"``, a SQLite path, ``"redis://…"``.
    state_fallback : str, optional
        ``"local"``: go on with this machine's SQLite state where Redis does not answer.
    config : str or path, optional
        The config file to read (default: the user config file).
    settings : Settings, optional
        Settings already read (:func:`paperfetch.load_settings`), instead of the setting arguments above (the run
        options of :data:`RUN_OPTIONS` may still be given: they go on top).
{options_doc("email", "openalex_api_key", "ncbi_api_key", "s2_api_key",
             *(name for name in RUN_OPTIONS if name not in ("out_dir", "max_pdf_bytes")))}

    Every setting has one home, ``r.settings`` (a frozen :class:`~paperfetch.settings.Settings`); ``r.out_dir``
    is its folder, resolved. :meth:`configure` changes run options between runs.
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
        polite_mode: bool | None = None,
        respect_robots_txt: bool | None = None,
        suppress_on_403: bool | None = None,
        delay_min_s: float | None = None,
        delay_max_s: float | None = None,
        max_retries: int | None = None,
        max_retry_after_s: float | None = None,
        timeout: float | tuple[float, float] | None = None,
        filename_template: str | None = None,
        max_pdf_bytes: int | None = defaults.MAX_PDF_BYTES,
        workers: int | None = None,
        resume: bool | None = None,
        progress: bool | None = None,
        verbosity: int | None = None,
        http_options: Mapping[str, Any] | None = None,
        dashboard: bool | None = None,
        cache: bool | str | os.PathLike[str] | MetadataCache = True,
        state: Any = None,
        state_fallback: str | None = None,
        config: str | os.PathLike[str] | None = None,
        prefer: str | None = None,
        skip_retracted: bool | None = None,
        pdf_engine: str | None = None,
        settings: Settings | None = None,
    ) -> None:
        # the parameters named as settings are the settings given (None: not given)
        named = {name: value for name, value in locals().items() if name in SETTING_NAMES}
        named.update(out_dir=None if out_dir is None else os.fspath(out_dir), state=state if isinstance(state, str) else None,
                     # the signature's default is "not given"; None asks for no limit (0)
                     max_pdf_bytes=None if max_pdf_bytes == defaults.MAX_PDF_BYTES else (max_pdf_bytes or 0))
        options = {name: named.pop(name) for name in RUN_OPTIONS}
        arguments = setting_arguments(named, http_options)
        self._order = _chosen_sources(sources)
        read_here = settings is None  # an "argument" origin is then this call's
        settings = _resolve_settings(settings, arguments, options, endpoints=endpoints, config=config, http=http)
        check_email(settings.email, origin=settings.origin.get("email"),
                    argument="Retriever(email=...)" if read_here else "the email argument (--email)")
        install_log_filter()  # loggers made since the import mask secrets too
        self._notes: list[tuple[str, str]] = []  # lines every run's dashboard starts with
        self._sources = self._make_sources(settings.endpoints, settings.identification)
        #: the effective settings, where each came from, and the transport the clients run on (``r.settings.rows()``)
        self.settings = self._make_clients(settings, http=http, state=state, state_fallback=state_fallback)
        self._start(cache)

    def _start(self, cache: bool | str | os.PathLike[str] | MetadataCache) -> None:
        """The metadata cache (:mod:`paperfetch.cache`) in front of the API transport (True: the user cache
        folder, False: none; or a path, or a cache the caller owns), the request log and the batch machinery."""
        doi_override = self.settings.endpoints.get("doi")
        self._doi_base = _origin(doi_override) if doi_override else DOI_RESOLVER
        self._metadata, self._own_cache = metadata_fetcher(self.api, cache, folder=self.settings.cache_dir)
        self._request_log = RequestLog(self.settings.transport.pools)
        # the run in progress, or the last one (paperfetch.flow): its dashboard model outlives the call
        self._batch = self._new_batch()
        self._job: Job | None = None  # the last start() (paperfetch.job), running or not
        #: the last :meth:`download`'s outcomes, an interrupted one's partial frame too (no ``try`` needed); None before
        self.last_outcomes: pd.DataFrame | None = None
        self._texts: dict[tuple[tuple[str, ...], str], FullText] = {}  # fulltext() bundles by ids and PDF engine
        self._describe_openalex()
        self._unsubscribe = [client.subscribe(self._request_log.on_event)
                             for client in {id(self.web): self.web, id(self.api): self.api}.values()]

    @property
    def identification(self) -> Identification:
        """Who is asking, as the services are told (:attr:`settings`' e-mail and keys; never shown)."""
        return self.settings.identification

    @property
    def out_dir(self) -> Path:
        """The folder the PDFs and the ledger go to: :attr:`settings`' ``out_dir``, absolute."""
        return Path(self.settings.out_dir or defaults.OUT_DIR).expanduser().resolve()

    def configure(self, **changes: Any) -> Settings:
        """Change run options between runs: :attr:`settings` becomes new frozen settings with *changes*
        (``out_dir``, ``workers``, ``resume``, ``prefer``, ``skip_retracted``, ``pdf_engine``, ``filename_template``,
        ``max_pdf_bytes``, ``progress``, ``dashboard``), checked as arguments are; returns them. The e-mail, the
        keys, the endpoints and the transport are a new Retriever's.

        Parameters
        ----------
        changes : keyword arguments
            Run options by name (``r.configure(resume=False)``).
        """
        fixed = sorted(set(changes) - set(RUN_OPTIONS))
        if fixed:
            raise ConfigurationError(f"{fixed} are set when the Retriever is made; configure() changes "
                                     f"{', '.join(RUN_OPTIONS)}")
        self.settings = self.settings.replace(origin="configure()", **changes)
        return self.settings

    def _make_sources(self, endpoints: Mapping[str, str], identification: Identification) -> dict[str, Source]:
        """One instance of each source, at its base URL; without an e-mail those that need one are left out,
        said once in a warning and in the dashboard's notes."""
        #: Sources left out for want of an e-mail address.
        self.skipped_sources = tuple(name for name, cls in SOURCES.items()
                                     if cls.requires_email and not identification.email)
        if self.skipped_sources:
            logger.warning("no contact e-mail given: %s skipped "
                           "(give one with --email, PAPERFETCH_EMAIL or Retriever(email=...))", ", ".join(self.skipped_sources))
            missing = (f"no contact e-mail: {', '.join(self.skipped_sources)} skipped, so fewer open copies are found; "
                       "set PAPERFETCH_EMAIL, email in the config file, or Retriever(email=...)")
            warnings.warn(missing, UserWarning, stacklevel=3)  # shown once per place (a notebook cell) by default
            self._notes.append(("settings", missing))
        return {name: cls(base_url=endpoints.get(name), identification=identification)
                for name, cls in SOURCES.items() if name not in self.skipped_sources}

    def _make_clients(self, settings: Settings, *, http: HttpClient | None, state: Any,
                      state_fallback: str | None) -> Settings:
        """``self.web`` (web pages: robots.txt read) and ``self.api`` (documented APIs, used under their terms
        and published limits) from the one transport config; returns the settings with that config."""
        given = settings.given if http is None else {"host_intervals": http.config.host_intervals,
                                                     "host_concurrency": http.config.host_concurrency}
        derived = self._derived_transport(settings.email, given=given)
        if http is not None:
            # A caller's client is left as it was: the Retriever paces through a client of its own over the
            # caller's session, host state, clock and settings (plus its sources' intervals and pools), and
            # closes only that one (the caller's session stays open).
            mine = http.config.replace(**{knob: {**derived[knob], **(getattr(http.config, knob) or {})}
                                          for knob in HOST_RULE_KNOBS})
            settings = settings.with_client(mine)
            self.web = self.api = HttpClient.from_config(settings.transport, session=http.session, clock=http.clock,
                                                         registry=http.registry)
            return settings
        settings = settings.with_transport(derived, origin="the sources")
        if state is None or isinstance(state, str):
            state = settings.state
        self.web = HttpClient.from_config(settings.transport, state=state, state_fallback=state_fallback)
        self.api = HttpClient.from_config(settings.transport.replace(respect_robots_txt=False), session=self.web.session,
                                          state=state, state_fallback=state_fallback)
        return settings

    def _derived_transport(self, email: str | None, *, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """What the sources tell the transport: each service's published interval (a source's related hosts,
        bioRxiv's www hosts or NCBI's old converter, share it), Crossref's pool, and the hosts that get the
        contact e-mail in the User-Agent (the services that ask for it)."""
        intervals: dict[str, float] = {}
        for source in self._sources.values():
            for host in (source.base_url, *source.related_hosts()):
                intervals.setdefault(host_key(host), source.interval_s)
        arxiv = cast(ArxivSource, self._sources["arxiv"])
        intervals.setdefault(host_key(arxiv.service_url(arxiv.pdf_base_url)), arxiv.interval_s)
        asking = {host_key(host) for s in self._sources.values() if s.wants_contact for host in (s.base_url, *s.related_hosts())}
        windows = {host_key(s.base_url): list(s.rate_windows) for s in self._sources.values() if s.rate_windows}
        concurrency: dict[str, int] = {}
        pools = self._crossref_pools(intervals, concurrency, given or {}, Identification(email=email))
        return {"host_intervals": intervals, "host_concurrency": concurrency, "host_windows": windows,
                "host_pools": pools, "contact_hosts": asking, "contact_email": email}

    def _crossref_pools(self, intervals: dict[str, float], concurrency: dict[str, int],
                        given: Mapping[str, Any], identification: Identification) -> dict[str, dict[str, tuple[str, str]]]:
        """Crossref's pool caps the requests in flight (its x-concurrency-limit applies under it), and its pools
        per request kind: each pool's interval and cap go in beside the host's, unless the caller gave the host's
        own (*given*: the transport knobs given), which then paces each pool."""
        from paperfetch.sources.crossref import CrossrefSource

        crossref = self._sources.get("crossref")
        if not isinstance(crossref, CrossrefSource):
            return {}
        host = host_key(crossref.base_url)
        concurrency[host] = crossref.concurrency_for(identification)
        pools = crossref.pools_for(identification)
        own_interval = host in {k.lower() for k in (given.get("host_intervals") or {})}
        own_cap = host in {k.lower() for k in (given.get("host_concurrency") or {})}
        for name, (_, interval, cap, _) in pools.items():
            if not own_interval:
                intervals.setdefault(f"{host}#{name}", interval)
            if not own_cap:
                concurrency.setdefault(f"{host}#{name}", cap)
        return {host: {name: (pattern, label) for name, (pattern, _, _, label) in pools.items()}}  # its labels

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

        Interrupted (Ctrl-C, a signal), it raises :class:`~paperfetch.errors.Interrupted` (a ``KeyboardInterrupt``,
        its one line the traceback's last) whose ``.partial`` is the frame, finished rows kept, the rest ``stopped``;
        :attr:`last_outcomes` is that frame too (after a finished call, its result).

        Parameters
        ----------
        ids : iterable, str or Series
            DOIs, PMIDs (``PMID:…``), PMCIDs and arXiv IDs, in any mix; a lone string is one identifier.
        """
        try:
            self.last_outcomes = self._download(ids)
        except Interrupted as exc:
            self.last_outcomes = exc.partial
            raise Interrupted(str(exc), partial=exc.partial) from None  # no frames of the machinery
        return self.last_outcomes

    def _download(self, ids: Iterable[object] | str | pd.Series, hooks: RunHooks | None = None, *,
                  want: str = "pdf") -> pd.DataFrame:
        """:meth:`download` as one new batch; with *hooks*, the run of a :class:`~paperfetch.job.Job` (see
        :meth:`start`); ``want="text"``: :meth:`fulltext`'s."""
        if hooks is None:
            self._refuse_while_running()
        self._batch = self._new_batch()
        return self._batch.download(ids, hooks=hooks, want=want)

    def _new_batch(self) -> BatchRun:
        """A batch of this Retriever's clients and sources (one per call), its summary plot timed by the request log."""
        batch = BatchRun(api=self.api, web=self.web, sources=self._sources, metadata=self._metadata,
                         doi_base=self._doi_base, settings=self._run_settings, notes=self._notes)
        batch.requests = self._request_log.frame
        return batch

    def candidates(self, ids: Iterable[object] | str | pd.Series) -> pd.DataFrame:
        """What :meth:`download` would try, without downloading: one row per candidate URL.

        The metadata services are asked (politely, as in a run); PDFs and landing pages are not
        requested. Columns: ``position`` (of the input), ``input``, ``key``, ``rank`` (the order of
        trial), ``kind`` (``pdf`` or ``landing``), ``source``, ``url``, ``error``. An input without any
        candidate has one row with ``url`` empty and the reason in ``error``.

        Parameters
        ----------
        ids : iterable, str or Series
            DOIs, PMIDs (``PMID:…``), PMCIDs and arXiv IDs, in any mix; a lone string is one identifier.
        """
        return self._new_batch().candidates(ids)

    def download_frame(self, df: pd.DataFrame, column: str | None = None, *,
                       columns: Sequence[str] | None = None) -> pd.DataFrame:
        """A new frame: *df*'s rows with the outcome columns joined (*df* is not modified).

        Each row's identifier is its ``doi``, else its ``pmid``, else its ``pmcid`` (those of the
        columns *df* has; *columns* gives another list, *column* one column only). Without *column* and
        *columns*, a frame with no ``doi`` column but one ``DOI`` (or ``Doi``) column reads that one, and
        likewise for ``pmid`` and ``pmcid``; a log line (INFO) names the columns read. A row with none is
        ``invalid_identifier`` with the reason "no identifier in this row". An outcome column whose name
        *df* already uses (``doi``, say) is joined as ``<name>_paperfetch``; the caller's columns stay as they
        were, and the outcome columns keep their dtypes (docs/outcomes.md, "Joined to your frame").

        Parameters
        ----------
        df : DataFrame
            The rows to download, e.g. a reference manager's export or :meth:`search_pubmed`'s hits.
        column : str, optional
            The one column that holds the identifiers.
        columns : sequence of str, optional
            The columns to look in, in order (default ``doi``, ``pmid``, ``pmcid``).
        """
        present, inputs = frame_inputs(df, column, columns)
        outcomes = self.download(inputs)
        return join_outcomes(df, outcomes, present)

    def why(self, identifier: object) -> pd.DataFrame:
        """Each source asked about *identifier* in its last run, and its answer: ``source, answer``.

        Read from the ledger in ``out_dir`` (the trail a run keeps); empty before any run asked.
        The CLI's ``download … --explain`` prints it for every row that did not finish well.

        Parameters
        ----------
        identifier : str
            A DOI, PMID, PMCID or arXiv ID of an earlier run.
        """
        with open_ledger(folder=self.out_dir) as ledger:
            return why_frame(ledger.get(parse_identifier(identifier).key))

    def retry(self, outcomes: pd.DataFrame, *, statuses: Iterable[str] | None = None) -> pd.DataFrame:
        """Run again just the rows of *outcomes* that failed: those a re-run retries (not finished well,
        not a final answer), or those with one of *statuses*. Returns *outcomes* with those rows replaced.
        A final ``not_found`` / ``no_open_copy`` is asked again by any run once its ledger row is older than
        :data:`paperfetch.defaults.RECHECK_AFTER_S` (30 days; :func:`paperfetch.ledger.recheck_at` says when).

        Parameters
        ----------
        outcomes : DataFrame
            A frame :meth:`download` returned.
        statuses : iterable of str, optional
            Run the rows with these statuses instead (a final one, ``not_found`` say, asks the services again).
        """
        codes = outcomes["http_status"] if "http_status" in outcomes.columns else [None] * len(outcomes)
        chosen = None if statuses is None else {str(s) for s in statuses}
        mask = pd.Series([retried_by_rerun(s, c) if chosen is None else s in chosen
                          for s, c in zip(outcomes["status"].astype(str), codes)], index=outcomes.index)
        if not mask.any():
            return outcomes.copy()
        settings = self.settings
        # asked for final statuses by name: ask the services again (the ledger would answer from memory)
        if any(is_final(s) for s in (chosen or ())):
            self.settings = settings.replace(origin="retry()", resume=False)
        try:
            fresh = self.download(list(outcomes.loc[mask, "input"]))
        finally:
            self.settings = settings
        fresh.index = outcomes.index[mask.to_numpy()]
        return pd.concat([outcomes[~mask], fresh]).reindex(outcomes.index)

    def domain_status(self) -> pd.DataFrame:
        """The transport's per-host table (pacing, backoff, holds, suppression).

        Rows for the metadata services show the API client's pacing, the others the web client's.
        """
        frame = redact_frame(self.web.domain_status())
        if self.api is not self.web:
            api_hosts = self._batch.api_hosts  # paced by the API client
            api = redact_frame(self.api.domain_status())
            frame = pd.concat([frame[~frame["host"].isin(api_hosts)], api[api["host"].isin(api_hosts)]], ignore_index=True)
            frame = frame.sort_values("host", ignore_index=True)
            frame.attrs["store"] = self.web.store.name
        return for_people(mark_unreachable(frame, [h.host for h in self.run_snapshot().unreachable]),
                          self.settings.transport.pools)

    @property
    def store(self) -> HostStateStore:
        """The host-state store both transports read and write (:mod:`paperfetch.state`)."""
        return self.web.store

    def dashboard(self) -> Any:
        """A :class:`~paperfetch.dashboard.Dashboard` of this retriever, at any time.

        During a run it follows the run (holds count down); afterwards it shows the last run as it
        ended (counts by status, per-host counts and politeness state, recent events; holds as clock
        times, no countdown), the same answer as the dashboard the run showed. The state now is
        ``domain_status()``. Before any run, the hosts and their state only. In a notebook it
        displays as widgets while something can change and as static HTML once the run ended; its
        ``repr`` is text.
        """
        from paperfetch.dashboard import Dashboard

        model = self._batch.model
        if model is None:
            model = self._batch.new_dashboard_model(events=False)
        return Dashboard(model)

    def requests(self) -> pd.DataFrame:
        """One row per HTTP request made: time, host, URL (no secrets), status, waited, elapsed, source."""
        return self._request_log.frame()

    def plot(self, outcomes: pd.DataFrame | None = None) -> Any:
        """A summary figure of a batch: outcomes by status, outcomes by source, and the time per host.

        Parameters
        ----------
        outcomes : pandas.DataFrame, optional
            An outcomes frame (``download``'s); the time per host is then that of every request this
            Retriever made. Default: the last batch, with its own requests.

        Returns
        -------
        matplotlib.figure.Figure
            Up to three panels (:func:`paperfetch.report.plot`). Needs matplotlib: ``pip install 'paperfetch-oa[plot]'``
            (an ImportError saying so without it).
        """
        from paperfetch.report import plot

        if outcomes is not None:
            return plot(outcomes, self.requests())
        summary = getattr(self._batch.model, "summary", None)
        if summary is None:
            raise ValueError("no batch has ended in this Retriever yet: pass an outcomes frame, r.plot(outcomes)")
        return summary.figure()

    # ------------------------------------------------------------------ search and snowballing
    def search_pubmed(self, query: str, *, max_results: int = defaults.SEARCH_MAX_RESULTS, mindate: str | None = None,
                      maxdate: str | None = None) -> pd.DataFrame:
        """PubMed hits for *query*, in PubMed's order: ``pmid, doi, pmcid, title, journal, year, authors, abstract``.

        ``mindate``/``maxdate`` (``"2020"``, ``"2020/06"``, ``"2020/06/30"``) restrict the publication date.
        The frame feeds :meth:`download_frame` (``column="pmid"`` or ``"doi"``).

        Parameters
        ----------
        query : str
            A PubMed query, as on pubmed.ncbi.nlm.nih.gov.
        max_results : int
            The most hits returned.
        mindate, maxdate : str, optional
            The publication dates the hits lie between.
        """
        from paperfetch.research import search_pubmed

        return search_pubmed(query, sources=self._sources, api=self.api, max_results=max_results, mindate=mindate,
                             maxdate=maxdate, metadata=self._metadata)  # answers cached for defaults.SEARCH_CACHE_TTL_S

    def references(self, identifier: object) -> pd.DataFrame:
        """Works *identifier* (DOI, PMID or PMCID) cites: ``doi, pmid, openalex_id, title, year, source_of_link``.

        Parameters
        ----------
        identifier : str
            The citing work's DOI, PMID or PMCID.
        """
        from paperfetch.research import references

        return references(identifier, sources=self._sources, metadata=self._metadata)

    def citations(self, identifier: object) -> pd.DataFrame:
        """Works that cite *identifier* (DOI, PMID or PMCID), same columns as :meth:`references`.

        Parameters
        ----------
        identifier : str
            The cited work's DOI, PMID or PMCID.
        """
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
        return f"Retriever(out_dir={str(self.out_dir)!r}, sources={self._order}, identification={self.identification!r})"

    # ------------------------------------------------------------------ internals
    def _run_settings(self) -> RunSettings:
        """The settings a run reads, as they are now (a caller may change them between runs)."""
        s = self.settings
        return RunSettings(out_dir=self.out_dir, order=self._order, filename_template=s.filename_template,
                           max_pdf_bytes=s.max_pdf_bytes or None, workers=s.workers, resume=s.resume,
                           progress=s.progress, show_dashboard=s.dashboard, prefer=s.prefer,
                           skip_retracted=s.skip_retracted)

    def run_snapshot(self) -> Any:
        """The last run as its dashboard tells it (a :class:`~paperfetch.dashboard.snapshot.BatchSnapshot`:
        counts, this run's hosts, ``offline_line()``); empty before any run."""
        from paperfetch.dashboard.snapshot import BatchSnapshot

        model = self._batch.model
        return BatchSnapshot(at=time.time()) if model is None else model.snapshot()

    def fulltext(self, ids: Iterable[object] | str | pd.Series | pd.DataFrame, *, pdf_engine: str | None = None,
                 column: str | None = None) -> FullText:
        """The full text of papers from one batch (JATS, else the open-access PDF's text; docs/fulltext.md) as a
        :class:`~paperfetch.fulltext.FullText`: paragraphs, references, tables, figures (each row with its paper's
        ids and bibliographic record) and outcomes. Kept: the same ids again (or a view below) send no request and
        give a copy; text already in ``out_dir`` is read from disk with its record. Never raises for a bad input.

        Parameters
        ----------
        ids : iterable, str, Series or DataFrame
            DOIs, PMIDs (``PMID:…``), PMCIDs and arXiv IDs, in any mix; a lone string is one identifier; a frame's
            are read as :meth:`download_frame` reads them (``doi``, else ``pmid``, else ``pmcid``, also ``DOI``).
        pdf_engine : str, optional
            ``"pypdfium2"`` or ``"pypdf"`` (docs/fulltext.md compares them); None: the ``pdf_engine`` setting.
        column : str, optional
            A frame's identifier column.
        """
        from paperfetch.fulltext.bundle import texts_of

        if isinstance(ids, pd.DataFrame):
            ids = frame_inputs(ids, column, None)[1]
        elif column is not None:
            raise ConfigurationError("column= goes with a DataFrame: r.fulltext(frame, column='doi')")
        items = [ids] if isinstance(ids, str) else list(ids)
        engine = pdf_engine or self.settings.pdf_engine
        key = (tuple(map(str, items)), engine)
        if key not in self._texts:  # one batch: JATS copies first, else the PDF (paperfetch.flow.text)
            outcomes = self._download(items, want="text")
            self._texts[key] = texts_of(outcomes, engine=engine, max_pdf_bytes=self.settings.max_pdf_bytes or None)
        return self._texts[key].copy()

    fulltext_references = _fulltext_view("references", "one row per cited work (``doi``/``pmid``/``pmcid`` the cited work's)")
    fulltext_tables = _fulltext_view("tables", "one row per JATS ``<table-wrap>``, its cells as a DataFrame and a pipe table")
    fulltext_figures = _fulltext_view("figures", "one row per JATS ``<fig>``, its caption and its image's href")

    # ------------------------------------------------------------------ in the background
    def start(self, ids: Iterable[object] | str | pd.Series | pd.DataFrame, column: str | None = None) -> Job:
        """:meth:`download` (or, given a frame and *column*, :meth:`download_frame`) on background
        threads: returns a :class:`~paperfetch.job.Job` at once, a :class:`concurrent.futures.Future`
        of the outcomes frame with a live dashboard, a Stop button and an ETA (see :mod:`paperfetch.job`).

        One job at a time per Retriever: a second ``start`` (or a ``download``) while one runs raises
        :class:`RuntimeError`; a second Retriever runs beside it, sharing every host's pacing.

        Parameters
        ----------
        ids : iterable, str, Series or DataFrame
            The identifiers, as for :meth:`download`, or a frame.
        column : str, optional
            A frame's identifier column; without it a frame is read as :meth:`download_frame` reads it
            (``doi``, else ``pmid``, else ``pmcid``, each also in another case such as ``DOI``).
        """
        from paperfetch.job import Job

        self._refuse_while_running()
        if isinstance(ids, pd.DataFrame):
            frame = ids
            present, inputs = frame_inputs(frame, column, None)
            job = Job(run=self._download, ids=inputs, join=lambda subset, outcomes: join_outcomes(
                frame.iloc[subset], outcomes, present))
        else:
            if column is not None:
                raise ConfigurationError("column= goes with a DataFrame: r.start(frame, column='doi')")
            job = Job(run=self._download, ids=ids)
        self._job = job
        job.begin()
        return job

    def _refuse_while_running(self) -> None:
        if self._job is not None and not self._job.done():
            raise RuntimeError(f"{self._job!r} of this Retriever is running: stop it (job.stop()) or wait for it "
                               "(job.result()) first, a job still running owns the batch; a second Retriever runs "
                               "beside it, sharing every host's pacing through the host state")


def _chosen_sources(sources: Sequence[str]) -> tuple[str, ...]:
    """*sources* in order, after refusing an unknown one (a :class:`ConfigurationError`)."""
    unknown = [s for s in sources if s not in DEFAULT_ORDER]
    if unknown:
        raise ConfigurationError(f"unknown source(s) {unknown}; choose from {', '.join(DEFAULT_ORDER)}")
    return tuple(sources)


def _resolve_settings(settings: Settings | None, arguments: dict[str, Any], options: dict[str, Any], *,
                      endpoints: Mapping[str, str] | None, config: str | os.PathLike[str] | None,
                      http: HttpClient | None) -> Settings:
    """The run's settings: *settings* as given (the CLI read them) with the run *options* given on top, else
    read from *arguments*, *options* and the rest."""
    if settings is None:
        settings = load_settings({**arguments, **options}, config_path=None if config is None else os.fspath(config),
                                 endpoints=endpoints)
    elif arguments or endpoints or config is not None:
        raise ConfigurationError(f"give settings= or the settings themselves, not both (also given: "
                                 f"{', '.join(sorted(arguments) + (['endpoints'] if endpoints else []))})")
    else:
        settings = settings.replace(**options)
    if http is not None:  # the Retriever's verbosity (what it prints) is its own; the client's logs stay the client's
        refuse_differing({k: v for k, v in arguments.items() if k != "verbosity"}, http.config)
    return settings


def _origin(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(f"endpoint {url!r} must be http(s)://host[:port]")
    return f"{parts.scheme}://{parts.netloc}"
