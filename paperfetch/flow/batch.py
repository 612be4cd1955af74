"""One batch of :meth:`paperfetch.Retriever.download`: parse, resume, resolve, run, one row per input."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from paperfetch.download import FileAction, existing_file_action
from paperfetch.errors import Interrupted, Stopped
from paperfetch.flow.act import Means, WriteStop
from paperfetch.flow.decide import Outlook
from paperfetch.flow.job import PaperJob
from paperfetch.flow.resolve import ask, plan, resolve
from paperfetch.flow.rows import keep_describing_status, resumed_row, stopped_row, with_text_columns
from paperfetch.flow.text import text_key, with_text_copies
from paperfetch.flow.works import batch_works, deferred, settle_deferred, share_rows, work_groups
from paperfetch.http.hosts import host_key
from paperfetch.ids import Identifier, ParsedInput, parse_many
from paperfetch.ledger import ResumeLedger, open_ledger
from paperfetch.outcomes import Status, outcomes_frame, typed_frame
from paperfetch.paper import Copy, Paper
from paperfetch.parts import sweep_stale_parts
from paperfetch.plot import RunSummary
from paperfetch.reasons import invalid_reason
from paperfetch.redact import redact_frame, redact_url
from paperfetch.sources import Record, Source

if TYPE_CHECKING:  # pragma: no cover
    from paperfetch.job import RunHooks

__all__ = ["BatchRun", "RunSettings"]

logger = logging.getLogger(__name__)

Rows = dict[int, dict[str, Any]]
Jobs = list[tuple[ParsedInput, PaperJob]]


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
    skip_retracted: bool = False  #: a retracted paper ends ``retracted``, not downloaded
    want: str = "pdf"  #: "text": each paper's first JATS copy that parses, else its PDF (paperfetch.flow.text)


@dataclass
class _Pass:
    """One download() call's state: its rows by input position, its jobs, and who hears of each row."""

    parsed: list[ParsedInput]
    model: Any
    hooks: RunHooks | None
    shown: bool = False  #: a dashboard (or a Job's view) shows the progress: no text bar
    rows: Rows = field(default_factory=dict)
    jobs: Jobs = field(default_factory=list)
    shared: dict[int, tuple[int, PaperJob]] = field(default_factory=dict)
    interrupted: bool = False

    def give(self, position: int, row: dict[str, Any], *, counted: bool = True, **seen: Any) -> None:
        """*row* is the input's at *position*: the dashboard (which counts its standing unless not *counted*)
        and a Job's hooks hear of it."""
        self.rows[position] = row
        self.model.item_finished(row["status"], row=row if counted else None, **seen)
        if self.hooks is not None:
            self.hooks.on_row(position, row)


class BatchRun:
    """A Retriever's batches (``download``/``fulltext`` calls): the settings, scheduler, ledger and dashboard model
    of the one in progress or the last."""

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
        self.model: Any = None  # the run in progress, or the last one (paperfetch.dashboard.model.DashboardModel)
        self.jobs: Jobs = []  # the batch's papers, for the title check
        self.run_started = float("inf")  # set as download() starts (see reusable)
        self.requests: Callable[[], pd.DataFrame] | None = None  # Retriever.requests, for the run's summary plot
        self.ledger: ResumeLedger | None = None  # the ledger of the download() in progress
        self.scheduler: Any = None  # the HostScheduler of the download() in progress (stop() stops it)
        self.thread: int | None = None  # the thread running download()
        self.idle = threading.Event()  # set while no download() runs
        self.idle.set()
        self.write_stop = WriteStop()  # tripped by a PDF out_dir cannot take (full disk): no further downloads
        self.kept_pdfs: dict[str, dict[str, Any]] = {}  # wanting text: the PDFs the ledger already has, by key

    @property
    def api_hosts(self) -> frozenset[str]:
        """The hosts of the metadata services (paced by the API client)."""
        return frozenset(host_key(s.base_url) for s in self.sources.values())

    def means(self) -> Means:
        s = self.settings
        return Means(api=self.api, web=self.web, sources=self.sources, out_dir=s.out_dir,
                     filename_template=s.filename_template, max_pdf_bytes=s.max_pdf_bytes, metadata=self.metadata,
                     check_title=self.check_title, reuse=self.reusable, write_stop=self.write_stop,
                     want=s.want)

    def outlook(self, prefetched: Mapping[tuple[str, str], Record], works: Mapping[str, int]) -> Outlook:
        s, web, stop = self.settings, self.web, self.write_stop
        cached = getattr(self.metadata, "cached", None)
        return Outlook(sources=self.sources, prefetched=prefetched, doi_base=self.doi_base, prefer=s.prefer,
                       skip_retracted=s.skip_retracted, works=works,
                       closed_for=getattr(web, "closed_for", lambda url: 0.0),
                       ready_in=getattr(web, "ready_in", lambda url: 0.0), cached=cached if callable(cached) else None,
                       write_stop=lambda: stop.reason, want=s.want)

    def lookup(self, name: str, ids: list[Identifier]) -> dict[str, Record]:
        """A batched lookup of *ids* at source *name* (one request for the list)."""
        return ask(name, ids, self.means())

    def paper_jobs(self, items: Sequence[ParsedInput]) -> Jobs:
        """The items' papers, resolved together, each as a job deciding its first step."""
        papers = [Paper.start(item.identifier, self.settings.order) for item in items if item.identifier is not None]
        means = self.means()
        papers, prefetched = resolve(papers, order=self.settings.order, means=means)
        if self.settings.want == "text":
            papers = [self._then_kept_pdf(p) for p in with_text_copies(papers, means, self.lookup)]
        works = batch_works([(item.position, paper) for item, paper in zip(items, papers)])
        outlook = self.outlook(prefetched, works)
        self.jobs = [(item, PaperJob(paper, outlook, means)) for item, paper in zip(items, papers)]
        return self.jobs

    def download(self, ids: Iterable[object] | str | pd.Series, hooks: RunHooks | None = None, *,
                 want: str = "pdf") -> pd.DataFrame:
        """One outcome row per input, in input order; with *hooks*, the run of a :class:`~paperfetch.job.Job`;
        with ``want="text"`` each paper's text (its first JATS copy that parses, else its PDF), ``text_source``
        and ``text_path`` in its row, kept in the ledger under :func:`~paperfetch.flow.text.text_key`."""
        settings = self.settings = replace(self._settings(), want=want)
        parsed = parse_many(ids)
        settings.out_dir.mkdir(parents=True, exist_ok=True)
        sweep_stale_parts(settings.out_dir)  # part files a killed run left behind (none a live process holds)
        self.run_started = time.time()  # a file newer than this was written by a concurrent run
        self.write_stop = WriteStop()
        model, view = self.dashboard_begin(len(parsed), show=hooks is None)
        one = _Pass(parsed, model, hooks, shown=view is not None or hooks is not None)
        if hooks is not None:
            hooks.on_begin(model)
        self.idle.clear()
        self.thread = threading.get_ident()
        try:
            with open_ledger(folder=settings.out_dir) as ledger:
                self.ledger = ledger
                self._pass(one, ledger)
            for item in parsed:  # duplicates share the first occurrence's outcome
                if item.duplicate_of is not None:
                    one.give(item.position, {**one.rows[item.duplicate_of], "same_work_as": parsed[item.duplicate_of].input})
            for item in parsed:  # a stop or an interrupt before the row was decided (the ledger's checks, say):
                if item.position not in one.rows:  # stopped too, and the dashboard and a Job hear of it
                    one.give(item.position, {"status": Status.STOPPED.value, "reason": "stopped before it finished"},
                             counted=False)
            frame = redact_frame(outcomes_frame({"input": item.input, **one.rows[item.position]} for item in parsed))
            model.summary = RunSummary(frame, self.requests, started=self.run_started, ended=time.time(), asked=want == "pdf")
        finally:
            self._end(model, view, one.interrupted)
        if one.interrupted:
            done = sum(status != Status.STOPPED.value for status in frame["status"].astype(str))
            raise Interrupted(f"interrupted: {done} of {len(frame)} finished; run the same call again to resume",
                              partial=frame)
        return frame

    def _pass(self, one: _Pass, ledger: ResumeLedger) -> None:
        """Within the open ledger: the rows decided without a request, the papers run, the shared rows."""
        settings = self.settings
        if getattr(ledger, "recovered", False):  # its file was damaged or unusable: rows from the PDFs
            from paperfetch.ledger.rebuild import rebuild_from_files

            rebuild_from_files(ledger, [i.identifier for i in one.parsed if i.identifier is not None],
                               settings.out_dir, settings.filename_template)
        to_run = self._triage(one, ledger)
        try:
            one.jobs = self.paper_jobs(to_run)
            jobs, one.shared = work_groups(one.jobs, one.rows)  # one file per work: the same work given twice runs once
            self._run(jobs, ledger, one, dashboard_shown=one.shown)
            again = settle_deferred(jobs, one.rows, one.shared)  # their journal version had no file: their own
            stopped = (any(job.final().stopped for _, job in jobs) or (one.hooks is not None and one.hooks.stop.is_set())
                       or getattr(self.web, "closed", False))
            if again and not stopped:
                self._run(again, ledger, one, dashboard_shown=True)
        except Stopped:  # a Job's stop cut a batch lookup short: its unfinished items are ``stopped``
            if one.hooks is None:
                raise
        except KeyboardInterrupt:  # Ctrl-C, a signal, a subscriber's interrupt: keep what finished
            if one.hooks is not None:
                raise
            one.interrupted = True
        if one.hooks is not None or one.interrupted:
            for item, job in one.jobs:
                if item.position not in one.rows:
                    one.give(item.position, stopped_row(job.outcome()), counted=False)
        share_rows(one.shared, one.rows, [item.input for item in one.parsed], ledger=ledger, on_row=one.give,
                   key=self.ledger_key)

    def _end(self, model: Any, view: Any, interrupted: bool) -> None:
        self.ledger = None
        self.thread = None
        self.idle.set()
        model.finish(ending="interrupted" if interrupted else None)  # the interrupt was caught: say so
        if view is not None:
            view.close()
            if model.summary is not None:  # the summary plot, an output of its own below the frozen dashboard
                model.summary.show()

    def _triage(self, one: _Pass, ledger: ResumeLedger) -> list[ParsedInput]:
        """The items to run; the rows decided without a request (invalid inputs, rows the ledger already has)
        are given at once, and duplicates wait for their first occurrence."""
        to_run = []
        for item in one.parsed:
            if item.identifier is None:
                one.give(item.position, {"id_type": None, "status": Status.INVALID_IDENTIFIER.value,
                                         "reason": invalid_reason(item.error), "error": item.error})
                continue
            if item.duplicate_of is not None:
                continue
            reused = self._resumed(ledger, item.identifier) if self.settings.resume else None
            # a row left undownloaded only because skip_retracted was on: fetched now
            if reused is None or (reused["status"] == Status.RETRACTED.value and not self.settings.skip_retracted):
                to_run.append(item)
            else:
                one.give(item.position, reused)
        return to_run

    def ledger_key(self, key: str) -> str:
        """The ledger key of the paper whose identifier's key is *key*, in this run (its text's, wanting text)."""
        return text_key(key) if self.settings.want == "text" else key

    def _resumed(self, ledger: ResumeLedger, ident: Identifier) -> dict[str, Any] | None:
        """The row the ledger gives without a request; wanting text, a PDF already kept is noted (:meth:`_then_kept_pdf`)."""
        out_dir = self.settings.out_dir
        row = resumed_row(ledger, ident, out_dir, key=self.ledger_key(ident.key))
        if row is None and self.settings.want == "text":
            pdf = resumed_row(ledger, ident, out_dir)
            if pdf is not None and pdf["status"] == Status.ALREADY_DOWNLOADED.value:
                self.kept_pdfs[ident.key] = pdf
        return with_text_columns(row) if row is not None and self.settings.want == "text" else row

    def _then_kept_pdf(self, paper: Paper) -> Paper:
        """Wanting text: after its JATS copies, a paper whose PDF is already kept reuses that file, asking no source."""
        kept = self.kept_pdfs.get(paper.identifier.key)
        if kept is None:
            return paper
        return replace(paper, sources_left=(), actions=(*paper.actions, Copy(kept["url"] or "", kept["source"] or "")))

    def _record(self, ledger: ResumeLedger, paper: Paper, row: dict[str, Any]) -> dict[str, Any]:
        """Keep *paper*'s *row* in the ledger; its text's row also under its text key (a PDF also under its own)."""
        entry = paper.ledger_entry(row)
        if self.settings.want != "text":
            ledger.record(**entry)
            return row
        row = with_text_columns(row)
        if row.get("text_source") == "pdf":
            ledger.record(**entry)  # the PDF is the paper's PDF too: a later download() keeps it
        entry["extra"].update(text_source=row.get("text_source"), text_path=row.get("text_path"))
        ledger.record(**{**entry, "key": text_key(paper.identifier.key)})
        return row

    def candidates(self, ids: Iterable[object] | str | pd.Series) -> pd.DataFrame:
        """:meth:`paperfetch.Retriever.candidates`: one row per candidate URL, nothing downloaded."""
        self.settings = self._settings()
        parsed = parse_many(ids)
        rows: list[dict[str, Any]] = [{"position": item.position, "input": item.input, "error": item.error}
                                      for item in parsed if item.identifier is None]
        for item, job in self.paper_jobs([item for item in parsed if item.identifier is not None]):
            found, errors, paper = plan(job.paper, job.outlook, job.means)
            base = {"position": item.position, "input": item.input, "key": paper.identifier.key}
            for rank, (kind, source, url) in enumerate(found, 1):
                rows.append({**base, "rank": rank, "kind": kind, "source": source, "url": redact_url(url)})
            if not found:
                reason = "; ".join(errors) or ("known, but no source offers an open-access copy" if paper.known
                                                else "no service knows this identifier")
                rows.append({**base, "error": reason})
        frame = typed_frame(rows, {"position": None, "input": object, "key": None, "rank": "Int64", "kind": None,
                                   "source": None, "url": None, "error": None})
        return redact_frame(frame.sort_values(["position", "rank"], kind="stable", ignore_index=True))

    def reusable(self, key: str, dest: Path, waited: bool, *, resume: bool | None = None) -> bool:
        """Keep the valid file under *dest* (another process's finished download) instead of fetching it again."""
        ledger = self.ledger
        out_dir = self.settings.out_dir

        def vouched() -> bool:
            return ledger is not None and ledger.is_done(key, out_dir) is not None

        action = existing_file_action(dest, waited=waited, run_started=self.run_started,
                                      resume=self.settings.resume if resume is None else resume, done=vouched)
        return action is FileAction.REUSE

    def check_title(self, paper: Paper, path: Path, url: str) -> dict[str, Any]:
        from paperfetch.research import check_title

        others = [job.step.paper.title for _, job in self.jobs if job.identifier != paper.identifier]  # as decided
        notify = getattr(self.model, "note", None)  # the run's recent events, when a model watches it
        return check_title(paper.title, path, url, key=paper.identifier.key, is_notice=bool(paper.is_notice),
                           journal=paper.journal, other_titles=others, notify=notify)

    def new_dashboard_model(self, *, events: bool) -> Any:
        """A dashboard model watching the API client for the services' hosts, the web client for the rest."""
        from paperfetch.dashboard.model import DashboardModel

        model = DashboardModel().watch(self.web, events=events)
        if self.api is not self.web:
            model.watch(self.api, hosts=set(self.api_hosts), events=events)
        return model

    def dashboard_begin(self, total: int, show: bool = True) -> tuple[Any, Any]:
        """The run's DashboardModel (always: ``dashboard()`` reads it), and its view when one is shown."""
        from paperfetch.dashboard import Dashboard, in_notebook, widgets_available

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

    def _run(self, jobs: Jobs, ledger: ResumeLedger, one: _Pass, dashboard_shown: bool = False) -> None:
        from tqdm.auto import tqdm

        from paperfetch.http.scheduler import HostScheduler

        position = {id(job): item.position for item, job in jobs}
        bar = tqdm(total=len(jobs), desc="paperfetch", unit="paper",
                   disable=not self.settings.progress or not jobs or dashboard_shown, leave=True)
        lock = threading.Lock()

        def finished(job: PaperJob) -> None:
            paper = job.final()
            if deferred(paper):  # left to its journal version's input: settled after the pass
                return
            job.finished = True
            row = keep_describing_status(paper.row(), ledger.get(self.ledger_key(paper.identifier.key)))
            row = self._record(ledger, paper, row)
            one.give(position[id(job)], row, url=row.get("url"), error=row.get("error"), key=paper.identifier.key)
            with lock:
                bar.update(1)

        for _, job in jobs:  # the lookups the metadata cache answers, before any host is paced for them
            job.answer_cached()
        try:
            scheduler = HostScheduler(self.web, workers=self.settings.workers, on_finished=finished)
            one.model.track(scheduler)
            self.scheduler = scheduler  # stop() stops it; a close() before this: the dispatcher sees the closed client
            if one.hooks is not None:
                one.hooks.on_scheduler(scheduler)
                if one.hooks.on_items is not None:
                    one.hooks.on_items([job for _, job in jobs])
            if one.hooks is None or not one.hooks.stop.is_set():
                scheduler.run([job for _, job in jobs])
        finally:
            self.scheduler = None
            bar.close()
        if one.hooks is not None and one.hooks.stop.is_set():
            return  # a Job's stop: download() gives its unfinished items ``stopped`` rows, the ledger keeps what it had
        for _, job in jobs:  # a job the scheduler never reported (stopped early) still gets a row: stopped
            if position[id(job)] not in one.rows and not deferred(job.final()):
                job.stop()
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
