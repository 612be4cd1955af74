"""One batch of :meth:`paperfetch.Retriever.download`: parse, resume, resolve, run, one row per input."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from paperfetch.cells import is_missing
from paperfetch.download import FileAction, existing_file_action
from paperfetch.errors import Interrupted, PaperfetchError, RateLimited, ServiceError, Stopped
from paperfetch.http import context as call_context
from paperfetch.http.hosts import host_key
from paperfetch.ids import Identifier, IdType, ParsedInput, parse_many
from paperfetch.integrity import ledger_fields
from paperfetch.items import ItemContext, ItemJob, WriteStop
from paperfetch.ledger import ResumeLedger, open_ledger
from paperfetch.outcomes import BLOCKED_STATUSES, FINISHED_WELL_STATUSES, Status, is_final, outcomes_frame
from paperfetch.parts import sweep_stale_parts
from paperfetch.plot import RunSummary
from paperfetch.reasons import failure_reason, invalid_reason
from paperfetch.redact import redact_frame, redact_text, redact_url
from paperfetch.rows import META_FIELDS, doi_identifier, initial_meta, resumed_row
from paperfetch.sources import Record, Source
from paperfetch.sources.base import batched
from paperfetch.works import batch_works, deferred, settle_deferred, share_rows, work_groups

if TYPE_CHECKING:  # pragma: no cover
    from paperfetch.job import RunHooks

__all__ = ["BatchRun", "IDENTIFIER_COLUMNS", "RunSettings", "identifier_columns", "keep_describing_status",
           "row_identifiers", "stopped_row", "why_frame"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunSettings:
    """The Retriever's settings a run reads, taken as the run starts (a caller may change them between runs)."""

    out_dir: Path
    order: tuple[str, ...]
    filename_template: str
    max_pdf_bytes: int | None
    workers: int | None
    resume: bool
    progress: bool
    show_dashboard: bool | None
    prefer: str = "version"  #: which copies of a paper compete on load (paperfetch.http.assign.Prefer)
    skip_retracted: bool = False  #: a retracted paper ends ``retracted``, not downloaded (paperfetch.integrity)


#: Where ``download_frame`` looks for each row's identifier, in order (Europe PMC's citations have PMIDs only).
IDENTIFIER_COLUMNS: tuple[str, ...] = ("doi", "pmid", "pmcid")


def identifier_columns(columns: Iterable[object], names: Sequence[str] = IDENTIFIER_COLUMNS) -> list[str]:
    """The columns holding *names*, in the order of *names*: the column of that exact name, else the one
    column whose name is that name in another case (``DOI``, ``PMID``: the headers of Zotero, Scopus and
    JabRef exports); raises ConfigurationError when several columns match a name only in another case."""
    from paperfetch.errors import ConfigurationError

    have = [str(c) for c in columns]
    found: list[str] = []
    for name in names:
        if name in have:
            found.append(name)
            continue
        matching = [c for c in have if c.lower() == name.lower()]
        if len(matching) > 1:
            raise ConfigurationError(f"several columns could hold the {name} ({', '.join(map(repr, matching))}); "
                                     f"name the one to read: column={matching[0]!r}")
        found.extend(matching)
    return found


def row_identifiers(df: pd.DataFrame, columns: Sequence[str]) -> list[object]:
    """Each row's first identifier among *columns* (a PMID as ``PMID:…``), or None for a row with none."""
    chosen: list[object] = []
    for values in df[list(columns)].itertuples(index=False, name=None):
        found: object = None
        for name, value in zip(columns, values):
            if is_missing(value) or not str(value).strip():
                continue
            text = str(value).strip()
            found = f"PMID:{text}" if name.lower() == "pmid" and text.isdigit() else value
            break
        chosen.append(found)
    return chosen


def why_frame(entry: Any) -> pd.DataFrame:
    """``source, answer`` rows from a ledger entry's trail (its status and error when it has none)."""
    if entry is None:
        return pd.DataFrame({"source": pd.Series([], dtype=object), "answer": pd.Series([], dtype=object)})
    trail = [tuple(step) for step in (entry.extra or {}).get("trail") or [] if len(step) == 2]
    if not trail:
        trail = [(entry.source or "", f"{entry.status}: {entry.error}" if entry.error else entry.status)]
    return redact_frame(pd.DataFrame(trail, columns=["source", "answer"], dtype=object))


def stopped_row(row: dict[str, Any]) -> dict[str, Any]:
    """An unfinished item's row: its identity and metadata, status ``stopped``, no file."""
    stopped = {k: v for k, v in row.items() if k not in ("path", "bytes", "sha256", "title_match")}
    stopped.update(status=Status.STOPPED.value, reason="stopped before it finished",
                   error="the batch was stopped before this item finished")
    return stopped


def keep_describing_status(row: dict[str, Any], prior: Any) -> dict[str, Any]:
    """A row a host's hold or suppression decided keeps the paper's earlier status and that status's
    reason (a row's reason is always its status's); this run's block and both runs are in ``error``."""
    if prior is None or row.get("status") not in BLOCKED_STATUSES or prior.status in BLOCKED_STATUSES:
        return row
    if prior.status in FINISHED_WELL_STATUSES:  # its file is gone: this run's answer is the news
        return row
    kept = dict(row)
    kept.update(status=prior.status, source=prior.source, url=prior.url, http_status=prior.http_status)
    earlier = (getattr(prior, "extra", None) or {}).get("reason") or (prior.error or "").split(" | ")[0]
    kept["reason"] = earlier or failure_reason(prior.status, http_status=prior.http_status, url=prior.url)
    said, error = row.get("reason") or row["status"], row.get("error") or ""
    block = error if error.startswith(said) else f"{said} | {error}" if error else said
    kept["error"] = f"{kept['reason']} | this run: {block} | earlier: {prior.error or prior.status}"[:2000]
    return kept


class BatchRun:
    """The runs of one Retriever: one :meth:`download` at a time, its scheduler, ledger and dashboard model."""

    def __init__(self, *, api: Any, web: Any, sources: Mapping[str, Source], metadata: Any, doi_base: str,
                 settings: Callable[[], RunSettings], notes: Sequence[tuple[str, str]] = ()) -> None:
        self.api = api
        self.web = web
        self.sources = sources
        self.metadata = metadata
        self.doi_base = doi_base
        self._settings = settings
        self.notes = notes  # (kind, message) lines every run's dashboard starts with (a missing e-mail, say)
        self.settings = settings()  # the settings of the run in progress, or of the last one
        self.prefetched: dict[tuple[str, str], Record] = {}
        self.works: dict[str, int] = {}  # the batch's works by DOI (paperfetch.works.batch_works)
        self.model: Any = None  # the run in progress, or the last one (paperfetch.dashboard.model.DashboardModel)
        self.jobs: list[Any] = []  # the batch's items, for the title check
        self.run_started = float("inf")  # set as download() starts (see reusable)
        self.requests: Callable[[], pd.DataFrame] | None = None  # Retriever.requests, for the run's summary plot
        self.ledger: ResumeLedger | None = None  # the ledger of the download() in progress
        self.scheduler: Any = None  # the HostScheduler of the download() in progress (stop() stops it)
        self.thread: int | None = None  # the thread running download()
        self.idle = threading.Event()  # set while no download() runs
        self.idle.set()
        self.write_stop = WriteStop()  # tripped by a PDF out_dir cannot take (full disk): no further downloads

    @property
    def api_hosts(self) -> frozenset[str]:
        """The hosts of the metadata services (paced by the API client)."""
        return frozenset(host_key(s.base_url) for s in self.sources.values())

    def download(self, ids: Iterable[object] | str | pd.Series, hooks: RunHooks | None = None) -> pd.DataFrame:
        """One outcome row per input, in input order; with *hooks*, the run of a :class:`~paperfetch.job.Job`."""
        settings = self.settings = self._settings()
        parsed = parse_many(ids)
        settings.out_dir.mkdir(parents=True, exist_ok=True)
        sweep_stale_parts(settings.out_dir)  # part files a killed run left behind (none a live process holds)
        self.run_started = time.time()  # a file newer than this was written by a concurrent run
        self.write_stop = WriteStop()
        rows: dict[int, dict[str, Any]] = {}
        jobs: list[tuple[ParsedInput, ItemJob]] = []
        interrupted = False
        model, view = self.dashboard_begin(len(parsed), show=hooks is None)
        if hooks is not None:
            hooks.on_begin(model)
        self.idle.clear()
        self.thread = threading.get_ident()
        try:
            with open_ledger(folder=settings.out_dir) as ledger:
                self.ledger = ledger
                if getattr(ledger, "recovered", False):  # its file was damaged or unusable: rows from the PDFs
                    from paperfetch.ledger.rebuild import rebuild_from_files

                    rebuild_from_files(ledger, [i.identifier for i in parsed if i.identifier is not None],
                                       settings.out_dir, settings.filename_template)
                jobs = self._triage(parsed, ledger, rows)
                for position, row in rows.items():  # decided without a request: invalid inputs, rows reused from the ledger
                    model.item_finished(row["status"], row=row)
                    if hooks is not None:
                        hooks.on_row(position, row)
                shared: dict[int, Any] = {}
                try:
                    self.resolve([job for _, job in jobs])
                    jobs, shared = work_groups(jobs, rows)  # one file per work: the same work given twice runs once
                    batch_works(jobs, self.works)  # a preprint given with its journal version leaves the file to it
                    self._run(jobs, ledger, rows, model=model, dashboard_shown=view is not None or hooks is not None,
                              hooks=hooks)
                    again = settle_deferred(jobs, rows, shared)  # their journal version had no file: their own
                    stopped = (any(job.stopped for _, job in jobs) or (hooks is not None and hooks.stop.is_set())
                               or getattr(self.web, "closed", False))
                    if again and not stopped:
                        self._run(again, ledger, rows, model=model, dashboard_shown=True, hooks=hooks)
                except Stopped:  # a Job's stop cut a batch lookup short: its unfinished items are ``stopped``
                    if hooks is None:
                        raise
                except KeyboardInterrupt:  # Ctrl-C, a signal, a subscriber's interrupt: keep what finished
                    if hooks is not None:
                        raise
                    interrupted = True
                if hooks is not None or interrupted:
                    for item, job in jobs:
                        if item.position not in rows:
                            rows[item.position] = stopped_row(job.outcome())
                            model.item_finished(Status.STOPPED.value)
                            if hooks is not None:
                                hooks.on_row(item.position, rows[item.position])

                def shared_row(position: int, row: dict[str, Any]) -> None:
                    model.item_finished(row["status"], row=row)
                    if hooks is not None:
                        hooks.on_row(position, row)

                share_rows(shared, rows, [item.input for item in parsed], ledger=ledger, on_row=shared_row)
            for item in parsed:  # duplicates share the first occurrence's outcome
                if item.duplicate_of is not None:
                    rows[item.position] = {**rows[item.duplicate_of], "same_work_as": parsed[item.duplicate_of].input}
                    model.item_finished(rows[item.position]["status"], row=rows[item.position])
                    if hooks is not None:
                        hooks.on_row(item.position, rows[item.position])
            for item in parsed:  # an interrupt before the row was decided (the ledger's checks, say): stopped too
                rows.setdefault(item.position, {"status": Status.STOPPED.value, "reason": "stopped before it finished"})
            frame = redact_frame(outcomes_frame({"input": item.input, **rows[item.position]} for item in parsed))
            model.summary = RunSummary(frame, self.requests, started=self.run_started, ended=time.time())
        finally:
            self.ledger = None
            self.thread = None
            self.idle.set()
            model.finish(ending="interrupted" if interrupted else None)  # the interrupt was caught: say so
            if view is not None:
                view.close()
                if model.summary is not None:  # the summary plot, an output of its own below the frozen dashboard
                    model.summary.show()
        if interrupted:
            done = sum(status != Status.STOPPED.value for status in frame["status"].astype(str))
            raise Interrupted(f"interrupted: {done} of {len(frame)} finished; run the same call again to resume",
                              partial=frame)
        return frame

    def _triage(self, parsed: list[ParsedInput], ledger: Any, rows: dict[int, dict[str, Any]]
                ) -> list[tuple[ParsedInput, ItemJob]]:
        """The items to run; the rows decided without a request (invalid inputs, rows the ledger already has)
        go into *rows*, and duplicates wait for their first occurrence."""
        jobs: list[tuple[ParsedInput, ItemJob]] = []
        for item in parsed:
            if item.identifier is None:
                rows[item.position] = {"id_type": None, "status": Status.INVALID_IDENTIFIER.value,
                                       "reason": invalid_reason(item.error), "error": item.error}
                continue
            if item.duplicate_of is not None:
                continue
            reused = resumed_row(ledger, item.identifier, self.settings.out_dir) if self.settings.resume else None
            if reused is not None and reused["status"] == Status.RETRACTED.value and not self.settings.skip_retracted:
                reused = None  # left undownloaded only because skip_retracted was on: fetched now
            if reused is not None:
                rows[item.position] = reused
                continue
            jobs.append((item, self.item_job(item.identifier)))
        return jobs

    def candidates(self, ids: Iterable[object] | str | pd.Series) -> pd.DataFrame:
        """:meth:`paperfetch.Retriever.candidates`: one row per candidate URL, nothing downloaded."""
        self.settings = self._settings()
        parsed = parse_many(ids)
        rows: list[dict[str, Any]] = []
        jobs: list[tuple[ParsedInput, ItemJob]] = []
        for item in parsed:
            if item.identifier is None:
                rows.append({"position": item.position, "input": item.input, "error": item.error})
            else:
                jobs.append((item, self.item_job(item.identifier)))
        self.resolve([job for _, job in jobs])
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

    def item_job(self, ident: Identifier) -> ItemJob:
        return ItemJob(self.item_context(), ident, initial_meta(ident), deque(self.settings.order))

    def item_context(self) -> ItemContext:
        s = self.settings
        return ItemContext(
            api=self.api, web=self.web, sources=self.sources, prefetched=self.prefetched, doi_base=self.doi_base,
            out_dir=s.out_dir, filename_template=s.filename_template, max_pdf_bytes=s.max_pdf_bytes,
            metadata=self.metadata, check_title=self.check_title, reuse=self.reusable, write_stop=self.write_stop,
            prefer=s.prefer, skip_retracted=s.skip_retracted, works=self.works,
        )

    def reusable(self, job: ItemJob, dest: Path, waited: bool, *, resume: bool | None = None) -> bool:
        """Keep the valid PDF under *dest* (another process's finished download) instead of fetching it again."""
        ledger = self.ledger
        out_dir = self.settings.out_dir

        def vouched() -> bool:
            return ledger is not None and ledger.is_done(job.identifier.key, out_dir) is not None

        action = existing_file_action(dest, waited=waited, run_started=self.run_started,
                                      resume=self.settings.resume if resume is None else resume, done=vouched)
        return action is FileAction.REUSE

    def check_title(self, job: ItemJob, path: Path, url: str) -> dict[str, Any]:
        from paperfetch.research import check_title

        others = [j.meta.get("title") for j in self.jobs if j is not job]
        notify = getattr(self.model, "note", None)  # the run's recent events, when a model watches it
        return check_title(job, path, url, other_titles=others, notify=notify)

    def resolve(self, jobs: list[ItemJob]) -> None:
        """Batched metadata: ID converter and E-utilities for PMIDs/PMCIDs, OpenAlex for DOIs."""
        self.jobs = jobs  # the batch's titles, for the title check
        if not jobs:
            return
        by_key = {job.identifier.key: job for job in jobs}
        ncbi_ids = [j.identifier for j in jobs if j.identifier.type in (IdType.PMID, IdType.PMCID)]
        if ncbi_ids and "ncbi_idconv" in self.sources:
            for key, record in self.lookup("ncbi_idconv", ncbi_ids).items():
                if key in by_key:
                    by_key[key].merge(record)
        unknown_pmids = [j.identifier for j in jobs if j.identifier.type is IdType.PMID and not j.meta.get("doi")]
        if unknown_pmids and "ncbi_eutils" in self.sources:
            for key, record in self.lookup("ncbi_eutils", unknown_pmids).items():
                if key in by_key:
                    by_key[key].merge(record)
        for name in ("openalex", "semanticscholar"):  # the batched sources, asked once for the whole batch
            if name not in self.settings.order or name not in self.sources:
                continue
            dois, owners = [], {}
            for job in jobs:
                ident = doi_identifier(job.meta.get("doi"))
                if ident is not None and ident.type is IdType.DOI:
                    dois.append(ident)
                    owners[ident.key] = job
            for key, record in self.lookup(name, dois, owners).items():
                self.prefetched[(name, key.split(":", 1)[1].lower())] = record

    def lookup(self, name: str, ids: list[Identifier], owners: Mapping[str, ItemJob] | None = None) -> dict[str, Record]:
        """A batched lookup, one batch at a time: a batch whose host is held (a spent budget) marks its
        items (*owners*: identifier key -> job) held for this source, the batches answered before it are kept;
        a lookup that fails otherwise marks every item it left unanswered failed for this source (retryable)."""
        if not ids or getattr(self.api, "closed", False):  # close() from another thread: the batch is stopping, ask nothing more
            return {}
        source = self.sources[name]
        records: dict[str, Record] = {}
        marked: set[str] = set()  # the items already told this source failed them
        with call_context.scope(source=name):
            try:
                for chunk in batched(ids, source.batch_size if owners is not None else len(ids)):
                    try:
                        records.update(source.lookup(self.metadata, chunk))
                    except RateLimited as exc:  # the transport warned once; the items say so
                        logger.info("%s lookup not sent for %d identifier(s): %s", name, len(chunk), redact_text(str(exc)))
                        for ident in chunk:
                            if owners and ident.key in owners:
                                owners[ident.key].source_failed(name, exc)
                                marked.add(ident.key)
                return records
            except Exception as exc:  # noqa: BLE001 - a batch lookup's failure (whatever it is) never ends the batch
                logger.warning("%s lookup failed for %d identifier(s): %s", name, len(ids), redact_text(str(exc)))
                # the items left unanswered failed (retryable), unless another source answers: never "absent"
                failure = exc if isinstance(exc, PaperfetchError) else ServiceError(f"{name} lookup failed: {exc}")
                for ident in ids:
                    if owners and ident.key in owners and ident.key not in records and ident.key not in marked:
                        owners[ident.key].source_failed(name, failure)
                return records

    def new_dashboard_model(self, *, events: bool) -> Any:
        """A dashboard model watching the API client for the services' hosts, the web client for the rest."""
        from paperfetch.dashboard.model import DashboardModel

        model = DashboardModel().watch(self.web, events=events)
        if self.api is not self.web:
            model.watch(self.api, hosts=set(self.api_hosts), events=events)
        return model

    def dashboard_begin(self, total: int, show: bool = True) -> tuple[Any, Any]:
        """The run's DashboardModel (always: ``dashboard()`` reads it), and its view when one is shown."""
        from paperfetch.widgets import Dashboard, in_notebook, widgets_available

        settings = self._settings()
        model = self.new_dashboard_model(events=True)
        model.start(total)
        self.model = model
        for kind, message in self.notes:
            model.note(kind, message)
        shown = settings.show_dashboard
        show = show and (shown if shown is not None else in_notebook() and widgets_available())
        if not (settings.progress and show):
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
        bar = tqdm(total=len(jobs), desc="paperfetch", unit="paper",
                   disable=not self.settings.progress or not jobs or dashboard_shown, leave=True)
        lock = threading.Lock()

        def finished(job: ItemJob) -> None:
            if deferred(job):  # left to its journal version's input: settled after the pass
                return
            job.finished = True
            row = keep_describing_status(job.outcome(), ledger.get(job.identifier.key))
            rows[position[id(job)]] = row
            extra = {k: row.get(k) for k in META_FIELDS if row.get(k) is not None}
            extra.update(ledger_fields(row))  # a resumed row shows the paper's standing again
            if row.get("title_match") is not None:  # an already_downloaded row carries it too
                extra["title_match"] = row["title_match"]
            extra.update(reason=row.get("reason"), trail=[list(step) for step in job.trail])  # Retriever.why reads it
            ledger.record(
                job.identifier.key, status=row["status"], path=row.get("path"), bytes=row.get("bytes"),
                sha256=row.get("sha256"), source=row.get("source"), url=row.get("url"),
                http_status=row.get("http_status"), error=row.get("error"), extra=extra,
                retryable=not is_final(row["status"], row.get("http_status")),  # a 404/410 is final too
            )
            if model is not None:
                model.item_finished(row["status"], url=row.get("url"), error=row.get("error"), key=job.identifier.key, row=row)
            if hooks is not None:
                hooks.on_row(position[id(job)], row)
            with lock:
                bar.update(1)

        try:
            from paperfetch.http.scheduler import HostScheduler

            scheduler = HostScheduler(self.web, workers=self.settings.workers, on_finished=finished)
            if model is not None:
                model.track(scheduler)
            self.scheduler = scheduler  # stop() stops it; a close() before this: the dispatcher sees the closed client
            if hooks is not None:
                hooks.on_scheduler(scheduler)
                if hooks.on_items is not None:
                    hooks.on_items([job for _, job in jobs])
            if hooks is None or not hooks.stop.is_set():
                scheduler.run([job for _, job in jobs])
        finally:
            self.scheduler = None
            bar.close()
        if hooks is not None and hooks.stop.is_set():
            return  # a Job's stop: download() gives its unfinished items ``stopped`` rows, the ledger keeps what it had
        for _, job in jobs:  # a job the scheduler never reported (stopped early) still gets a row: stopped
            if position[id(job)] not in rows and not deferred(job):
                job.stopped = True
                finished(job)

    def stop(self) -> None:
        """Stop the batch in progress (no new request starts); nothing when none runs."""
        scheduler = self.scheduler
        if scheduler is not None:
            scheduler.stop()

    def wait_idle(self, timeout: float) -> bool:
        """From another thread than the run's: wait until the run in progress has written its rows."""
        if self.thread is None or self.thread == threading.get_ident():
            return True
        return self.idle.wait(timeout)
