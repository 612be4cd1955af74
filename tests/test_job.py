"""``Retriever.start``: a batch in the background.

Fast tests of the Future API on a fake run; loopback tests of stop, resume and the ETA (one
publisher with ``Crawl-delay``, :mod:`tests._job_world`); and one with a real kernel (nbclient)
that runs cells while the job goes on, stops it, clicks the Stop button and resumes.
"""

from __future__ import annotations

import re
import threading
import time
from concurrent import futures

import nbformat
import pandas as pd
import pytest

from paperfetch import Retriever, defaults
from paperfetch.dashboard.model import BatchSnapshot, HostRow
from paperfetch.flow.rows import stopped_row
from paperfetch.http.hosts import HostSnapshot
from paperfetch.job import Job, RunHooks, estimate_eta, format_eta
from paperfetch.outcomes import COLUMNS, FINISHED_WELL_STATUSES, Status
from tests._job_world import JobWorld
from tests._jupyter import write_python3_kernelspec
from tests._quick import retriever

#: The dashboard's thread, which draws the final frame after stop() returned; it makes no request.
VIEW_THREAD = "paperfetch-job-view"


def paperfetch_threads() -> list[str]:
    """The job's threads that make requests (its runner and its batch workers)."""
    return [t.name for t in threading.enumerate() if t.name.startswith("paperfetch") and t.name != VIEW_THREAD]


#: The job world's one source, unpaced publishers, nothing kept between runs but the ledger.
JOB = {"sources": ("openalex",), "state": "memory", "delay_min_s": 0.0, "delay_max_s": 0.0, "cache": False,
       "dashboard": False}


# ---------------------------------------------------------------------- the Future API, on a fake run
def fake_run(rows: dict[int, dict], gate: threading.Event | None = None, fail: BaseException | None = None):
    def run(inputs, hooks: RunHooks) -> pd.DataFrame:
        hooks.on_begin(None)
        out = []
        for position, value in enumerate(inputs):
            if gate is not None:
                gate.wait(5)
            if fail is not None:
                raise fail
            row = rows.get(position) or {"status": "downloaded"}
            if hooks.stop.is_set():
                row = stopped_row(row)
            hooks.on_row(position, row)
            out.append({"input": value, **row})
        from paperfetch.outcomes import outcomes_frame

        return outcomes_frame(out)
    return run


def test_a_job_is_a_future_of_the_outcomes_frame():
    job = Job(run=fake_run({}), ids=["10.1/a", "10.1/b"])
    seen = []
    job.add_done_callback(lambda f: seen.append(f.result()))
    job.begin()
    frame = job.result(timeout=5)
    assert isinstance(job, futures.Future)
    assert job.done() and not job.running() and job.exception() is None
    assert list(frame.columns) == list(COLUMNS) and list(frame["input"]) == ["10.1/a", "10.1/b"]
    assert seen and seen[0] is frame
    assert job.frame is frame  # once ended, the result
    assert repr(job).startswith("<paperfetch Job finished: 2/2 finished in ")
    assert paperfetch_threads() == []


def test_job_frame_is_a_snapshot_of_the_rows_so_far_and_running_is_true_meanwhile():
    gate = threading.Event()
    job = Job(run=fake_run({}, gate=gate), ids=["10.1/a", "10.1/b", "10.1/c"])
    job.begin()
    assert job.running() and not job.done()
    assert len(job.frame) == 0 and list(job.frame.columns) == list(COLUMNS)
    assert repr(job).startswith("<paperfetch Job running: 0/3 finished, 0 hosts busy, ETA unknown")
    gate.set()
    job.result(timeout=5)
    assert len(job.frame) == 3


def test_an_exception_of_the_run_is_the_jobs_exception():
    job = Job(run=fake_run({}, fail=ValueError("boom")), ids=["10.1/a"])
    job.begin()
    assert isinstance(job.exception(timeout=5), ValueError)
    with pytest.raises(ValueError, match="boom"):
        job.result()
    assert job.state == "failed" and "ValueError: boom" in repr(job)


def test_cancel_means_stop_and_the_job_keeps_a_result():
    gate = threading.Event()
    job = Job(run=fake_run({}, gate=gate), ids=["10.1/a", "10.1/b"])
    job.begin()
    threading.Timer(0.1, gate.set).start()
    assert job.cancel() is True
    assert job.done() and not job.cancelled() and job.state == "stopped"
    assert set(job.result()["status"]) == {Status.STOPPED.value}
    assert job.cancel() is False


def test_the_stopped_row_keeps_identity_and_drops_the_file():
    row = stopped_row({"id_type": "doi", "doi": "10.1/a", "path": "/x.pdf", "bytes": 3, "status": "downloaded"})
    assert row["status"] == "stopped" and row["doi"] == "10.1/a" and "path" not in row and "bytes" not in row
    assert not Status.STOPPED.final and Status.STOPPED.value not in FINISHED_WELL_STATUSES


def _host(key: str, *, queued: int, low: float | None, high: float | None, ready: float, in_flight: int = 0) -> HostRow:
    record = HostSnapshot(
        host=key, requests=0, in_flight=in_flight, ok=0, errors=0, last_status=None, delay_min_s=low, delay_max_s=high,
        backoff_s=0.0, learned_interval_s=0.0, crawl_delay_s=None, robots=None, held_until=None, hold_status=None,
        hold_reason="", suppressed=False, suppressed_reason=None, suppressed_until=None, breaker="closed", failures=0,
        breaker_open_until=None, next_allowed_at=None, ready_in_s=ready)
    return HostRow(host=key, queued=queued, in_flight=in_flight, politeness=record)


@pytest.mark.parametrize(("hosts", "expected"), [
    ([], None),
    ([_host("a", queued=0, low=1.0, high=1.0, ready=0.0, in_flight=1)], None),    # nothing queued: unknown
    ([_host("a", queued=10, low=1.0, high=1.0, ready=0.5)], 9.5),                # next start, then 9 intervals
    ([_host("a", queued=10, low=1.0, high=3.0, ready=0.0)], 18.0),               # the middle of the range
    ([_host("a", queued=3, low=5.0, high=5.0, ready=0.0), _host("b", queued=100, low=0.1, high=0.1, ready=0.0)], 10.0),
    ([_host("a", queued=4, low=1.0, high=1.0, ready=600.0)], 603.0),             # a hold
    ([_host("a", queued=4, low=1.0, high=1.0, ready=float("inf"))], 3.0),        # suppressed: drains at once
    ([_host("a", queued=4, low=None, high=None, ready=0.0)], 0.0),               # no delay at all
])
def test_the_eta_is_the_busiest_hosts_queue_times_its_interval(hosts, expected):
    snap = BatchSnapshot(at=0.0, total=10, hosts=tuple(hosts), running=True)
    assert estimate_eta(snap) == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize(("seconds", "text"), [
    (None, "ETA unknown"), (0.2, "ETA 1 s"), (44.1, "ETA 45 s"), (60, "ETA 1 min"), (61, "ETA 2 min"),
    (14 * 60, "ETA 14 min"), (3900, "ETA 1 h 05 min"),
])
def test_format_eta(seconds, text):
    assert format_eta(seconds) == text


# ---------------------------------------------------------------------- loopback: stop, resume, second start
@pytest.fixture
def world():
    with JobWorld(n=8, crawl_delay=0.25, base_ip=210) as w:
        yield w


def test_start_returns_at_once_stop_stops_and_a_new_start_resumes(world, tmp_path):
    r = retriever(tmp_path, world.endpoints, **JOB)
    job = r.start(world.dois)
    assert not job.done() and job.finished < len(world.dois)  # start returned while the job goes on
    deadline = time.monotonic() + 10
    while len(job.frame) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 3 <= len(job.frame) < len(world.dois)
    with pytest.raises(RuntimeError, match="still running"):
        r.start(world.dois)
    with pytest.raises(RuntimeError, match="is running"):
        r.download(world.dois)
    job.stop()
    stopped_at = time.monotonic()
    assert job.done() and paperfetch_threads() == []  # stop returns once the job's threads are gone
    time.sleep(2 * world.crawl_delay)
    assert world.requests_after(stopped_at) == 0
    frame = job.result(timeout=0)
    assert list(frame["input"]) == world.dois
    finished = frame[frame["status"] == "downloaded"]
    assert len(finished) >= 3 and set(frame["status"]) == {"downloaded", "stopped"}
    assert frame.loc[frame["status"] == "stopped", "path"].isna().all()
    assert re.match(rf"<paperfetch Job stopped: {len(finished)}/8 finished, {8 - len(finished)} stopped in [\d.]+ s>$", repr(job))

    resumed_at = time.monotonic()
    again = r.start(world.dois).result(timeout=30)
    asked = world.pdf_paths_after(resumed_at)
    assert not set(asked) & {world.pdf_path(d) for d in finished["input"]}
    assert (again["status"].isin(["already_downloaded", "downloaded"])).all()
    assert (again.loc[finished.index, "status"] == "already_downloaded").all()
    r.close()


def test_start_of_a_frame_gives_the_joined_frame(world, tmp_path):
    r = retriever(tmp_path, world.endpoints, **JOB)
    df = pd.DataFrame({"doi": world.dois[:3], "note": ["x", "y", "z"]}, index=["p", "q", "s"])
    job = r.start(df, column="doi")
    out = job.result(timeout=30)
    assert list(out.index) == ["p", "q", "s"] and list(out["note"]) == ["x", "y", "z"]
    assert "doi_paperfetch" in out.columns and (out["status"] == "downloaded").all()
    assert list(job.frame.index) == ["p", "q", "s"]
    r.close()


def test_start_of_a_frame_reads_it_as_download_frame_does(world, tmp_path):
    # a reference manager's export: a DOI column in capitals, and a row with only a blank
    r = retriever(tmp_path, world.endpoints, **JOB)
    df = pd.DataFrame({"DOI": [world.dois[0], None, world.dois[1]], "Title": ["a", "b", "c"]})
    out = r.start(df).result(timeout=30)
    assert list(out["Title"]) == ["a", "b", "c"] and list(out["DOI"]) == list(df["DOI"])
    assert list(out["status"].astype(str)) == ["downloaded", "invalid_identifier", "downloaded"]
    assert out.loc[1, "reason"] == "no identifier in this row" and "looked at: DOI" in out.loc[1, "error"]
    again = r.download_frame(df)  # the same frame, the same columns (a re-run: the ledger answers)
    assert list(again.columns) == list(out.columns)
    assert list(again["status"].astype(str)) == ["already_downloaded", "invalid_identifier", "already_downloaded"]
    r.close()


def test_the_dashboard_stop_button_stops_the_job(world, tmp_path):
    r = retriever(tmp_path, world.endpoints, **JOB)
    job = r.start(world.dois)
    box = job.dashboard
    button = job.dashboard_view.stop_button
    assert "Stop" in button.description and button in box.children[0].children
    while len(job.frame) < 2:
        time.sleep(0.05)
    button.click()
    assert job.done() and paperfetch_threads() == []
    assert "stopped" in set(job.result()["status"])
    assert job.dashboard_view.closed and button.disabled
    assert job.dashboard_view.wait_drawn(30)
    assert job.dashboard_view.static_bundle()["text/plain"].startswith("<paperfetch Job stopped")
    r.close()


def test_stop_returns_before_the_final_frame_and_summary_plot_are_drawn(world, tmp_path, monkeypatch):
    import paperfetch.dashboard.job as dashboard_job

    order: list[str] = []
    drawing = threading.Event()
    released = threading.Event()

    def summary_html(model, *, ended):  # the slow part of the final frame, held until stop() has returned
        if ended:
            drawing.set()
            released.wait(10)
            order.append("final frame drawn")
        return ""

    monkeypatch.setattr(dashboard_job, "_summary_html", summary_html)
    r = retriever(tmp_path, world.endpoints, **JOB)
    job = r.start(world.dois)
    view = job.dashboard_view
    while len(job.frame) < 2:
        time.sleep(0.05)
    job.stop()
    order.append("stop returned")
    assert job.done() and job.state == "stopped" and paperfetch_threads() == []
    released.set()
    assert view.wait_drawn(30) and drawing.is_set()
    assert order == ["stop returned", "final frame drawn"]
    assert view.stop_button.disabled and view.static_bundle()["text/plain"].startswith("<paperfetch Job stopped")
    r.close()


def test_a_stop_right_after_start_sends_nothing_more_and_every_row_is_stopped(world, tmp_path):
    r = retriever(tmp_path, world.endpoints, **JOB)
    job = r.start(world.dois)
    job.stop()
    stopped_at = time.monotonic()
    assert paperfetch_threads() == []
    time.sleep(2 * world.crawl_delay)
    assert world.requests_after(stopped_at) == 0
    frame = job.result(timeout=0)
    assert len(frame) == len(world.dois) and job.state == "stopped"
    assert frame["status"].isin(["stopped", "downloaded"]).all()
    r.close()


def test_ctrl_c_in_wait_stops_the_job(world, tmp_path):
    import _thread

    r = retriever(tmp_path, world.endpoints, **JOB)
    job = r.start(world.dois)
    threading.Timer(0.8, _thread.interrupt_main).start()
    assert job.wait() is True
    assert job.state == "stopped" and "stopped" in set(job.result()["status"]) and paperfetch_threads() == []
    r.close()


EXIT_SCRIPT = """
import sys, time
from paperfetch import Retriever
r = Retriever(email="you@uni.example", out_dir={out!r}, endpoints={endpoints!r}, sources=("openalex",), state="memory",
              verbosity=0, delay_min_s=0.0, delay_max_s=0.0, cache=False, dashboard=False)
job = r.start({ids!r})
while job.finished < 2:
    time.sleep(0.02)
print("exiting", flush=True)
sys.exit(0)  # the atexit hook stops the job
"""


def test_at_interpreter_exit_a_running_job_is_stopped_and_the_ledger_is_consistent(world, tmp_path):
    import subprocess
    import sys

    script = EXIT_SCRIPT.format(out=str(tmp_path), endpoints=world.endpoints, ids=world.dois)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "exiting" in done.stdout
    exited_at = time.monotonic()
    time.sleep(2 * world.crawl_delay)
    assert world.requests_after(exited_at) == 0
    pdfs = sorted(p.name for p in tmp_path.glob("*.pdf"))
    assert 2 <= len(pdfs) < len(world.dois) and not list(tmp_path.glob("*.part*"))
    r = retriever(tmp_path, world.endpoints, **JOB)
    resumed_at = time.monotonic()
    again = r.download(world.dois)
    assert (again["status"] == "already_downloaded").sum() == len(pdfs)
    assert (again["status"] == "downloaded").sum() == len(world.dois) - len(pdfs)
    assert len(world.pdf_paths_after(resumed_at)) == len(world.dois) - len(pdfs)
    r.close()


# ---------------------------------------------------------------------- the ETA against the clock
@pytest.mark.slow
def test_the_eta_at_halfway_is_the_time_the_host_still_needs_for_its_queue(tmp_path):
    """The ETA of a running job is the schedule the host's Crawl-delay sets for the papers still queued: the
    time left at its pace, whatever the machine's load does to the wall clock."""
    with JobWorld(n=10, crawl_delay=0.5, base_ip=214) as world:
        r = retriever(tmp_path, world.endpoints, **JOB)
        job = r.start(world.dois)
        while job.finished < 5:
            time.sleep(0.02)
        snapshot = job.snapshot()
        eta = estimate_eta(snapshot)
        queued = max(row.queued for row in snapshot.hosts)
        job.result(timeout=60)
        print(f"ETA at halfway {eta} s for {queued} papers queued at one host (Crawl-delay 0.5 s)")
        margin = queued * defaults.PACING_MARGIN_S  # each gap a hair over the Crawl-delay
        assert eta is not None and (queued - 1) * 0.5 <= eta <= queued * 0.5 + margin
        r.close()


# ---------------------------------------------------------------------- a real kernel
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_in_a_kernel_the_next_cell_runs_while_the_job_goes_on(tmp_path, monkeypatch):
    import nbclient

    monkeypatch.setenv("JUPYTER_PATH", str(write_python3_kernelspec(tmp_path / "jupyter")))
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    nb = nbformat.v4.new_notebook()
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=60, startup_timeout=60,
                                     resources={"metadata": {"path": str(tmp_path)}})

    def cell(source: str) -> str:
        nb.cells.append(nbformat.v4.new_code_cell(source))
        client.execute_cell(nb.cells[-1], len(nb.cells) - 1)
        return "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")

    with JobWorld(n=12, crawl_delay=0.5, base_ip=218) as world, client.setup_kernel():
        cell(f"import logging, threading, time\nfrom paperfetch import Retriever, enable_logging\n"
             f"r = {world.retriever_code(str(tmp_path / 'pdfs'))}\nids = {world.dois!r}\n"
             "enable_logging(logging.DEBUG)  # every record of the transport, to stderr: none may land in a cell")
        out = cell("job = r.start(ids); print(job.done(), job.finished)\njob")
        running, finished = out.split()
        assert running == "False" and int(finished) < 12  # the cell ended while the job goes on
        display = nb.cells[-1].outputs[-1]
        assert display.output_type == "display_data" and "application/vnd.jupyter.widget-view+json" in display.data
        assert cell("print(job.done())").strip() == "False"
        assert cell("n1 = len(job.frame); time.sleep(1.5); print(n1, len(job.frame))")
        n1, n2 = map(int, cell("print(n1, len(job.frame))").split())
        assert n2 > n1
        cell("time.sleep(0.5)")  # a cell that prints nothing: the job's threads' records go to its log
        assert [o for c in nb.cells[1:] for o in c.outputs if o.get("name") == "stderr"] == []
        assert int(cell("print(len(job.log))")) > 0
        out = cell("job.stop(); print(time.monotonic(), job.done()); job.dashboard_view.wait_drawn(60)\n"
                   "print([t.name for t in threading.enumerate() if t.name.startswith('paperfetch-batch') "
                   "or t.name == 'paperfetch-job'])")
        stopped_at, done_flag = out.splitlines()[0].split()
        assert done_flag == "True" and out.splitlines()[1] == "[]"
        time.sleep(2 * world.crawl_delay)
        assert world.requests_after(float(stopped_at)) == 0
        out = cell("res = job.result(); print(len(res), (res.status == 'stopped').sum(), (res.status == 'downloaded').sum())")
        total, stopped, done = map(int, out.split())
        assert total == 12 and stopped > 0 and done > 0 and stopped + done == 12
        assert nb.cells[1].outputs[-1].data["text/plain"].startswith("<paperfetch Job stopped")  # frozen, static

        # the button, on a second start that resumes
        resumed_at = time.monotonic()
        cell("job2 = r.start(ids)\nbutton = job2.dashboard_view.stop_button\nassert 'Stop' in button.description\n"
             "while job2.finished < res.status.eq('downloaded').sum() + 2: time.sleep(0.05)")
        out = cell("button.click(); print(time.monotonic(), job2.done())\n"
                   "print([t.name for t in threading.enumerate() if t.name.startswith('paperfetch-batch') "
                   "or t.name == 'paperfetch-job'])")
        clicked_at, done_flag = out.splitlines()[0].split()
        assert done_flag == "True" and out.splitlines()[1] == "[]"
        time.sleep(2 * world.crawl_delay)
        assert world.requests_after(float(clicked_at)) == 0
        finished_first = [world.pdf_path(d) for d, s in zip(world.dois, _statuses(cell, "res")) if s == "downloaded"]
        assert not set(world.pdf_paths_after(resumed_at)) & set(finished_first)
        out = cell("res2 = job2.result(); print((res2.status == 'stopped').sum())")
        assert int(out) > 0

        resumed_at = time.monotonic()
        out = cell("res3 = r.start(ids).result(timeout=60); print(res3.status.isin(['downloaded', 'already_downloaded']).all())")
        assert out.strip() == "True"
        finished_before = [world.pdf_path(d) for d, s in zip(world.dois, _statuses(cell, "res2"))
                           if s in ("downloaded", "already_downloaded")]
        assert not set(world.pdf_paths_after(resumed_at)) & set(finished_before)


def _statuses(cell, name: str) -> list[str]:
    return cell(f"print(' '.join({name}.status.astype(str)))").split()


# ---------------------------------------------------------------------- the ETA on a cold run, the counter
def test_an_eta_with_hosts_ahead_says_at_least():
    assert format_eta(4.2, at_least=True) == "ETA at least 5 s"
    assert format_eta(None, at_least=True) == "ETA unknown"


def test_the_job_line_counts_what_the_dashboard_counts():
    # the model has a row the job's own rows do not have yet (the moment between the two): one count, the model's
    from paperfetch.dashboard.job import JobDashboard
    from paperfetch.dashboard.model import DashboardModel

    gate, model = threading.Event(), DashboardModel()

    def run(inputs, hooks):
        model.start(len(inputs))
        hooks.on_begin(model)
        model.item_finished("downloaded")
        gate.wait(5)
        return fake_run({})(inputs, hooks)

    job = Job(run=run, ids=["10.1/a", "10.1/b", "10.1/c"])
    job.begin()
    while model.snapshot().done < 1:
        time.sleep(0.005)
    view = JobDashboard(job, model)
    try:
        assert job.progress_line().startswith("1/3 finished")
        html = view.static_bundle()["text/html"]
        assert "1/3 finished" in html and "<b>1 / 3</b>" in html
        view.refresh()
        assert "1/3 finished" in view.line.value and "<b>1 / 3</b>" in view.counts.value
    finally:
        gate.set()
        view.close()
        job.result(timeout=5)


class ColdWorld:
    """OpenAlex names a landing page for every DOI; the landing host (held at a gate) links to a PDF on a
    files host that no request has reached yet."""

    def __init__(self, n: int, base_ip: int) -> None:
        from paperfetch.demo import fake_pdf
        from paperfetch.testing import LoopbackHost, Reply

        self.gate = threading.Event()
        self.dois = [f"10.5555/cold.{i}" for i in range(n)]
        self.files = LoopbackHost(f"127.0.0.{base_ip}", {
            "*": lambda req: Reply(200, fake_pdf(req.path), {"Content-Type": "application/pdf"})})

        def landing(req):
            if req.path == "/robots.txt":
                return Reply(404, b"", {"Content-Type": "text/plain"})
            self.gate.wait(10)
            pdf = self.files.url(f"/pdf{req.path}.pdf")
            page = f'<html><head><meta name="citation_pdf_url" content="{pdf}"></head><body>paper</body></html>'
            return Reply(200, page.encode(), {"Content-Type": "text/html"})

        self.landing = LoopbackHost(f"127.0.0.{base_ip + 1}", {"*": landing})
        self.openalex = LoopbackHost(f"127.0.0.{base_ip + 2}", {"*": self._openalex})
        self.endpoints = {"openalex": self.openalex.base_url}

    def _openalex(self, request):
        import json
        from urllib.parse import parse_qs

        from paperfetch.testing import Reply

        wanted = parse_qs(request.query).get("filter", [""])[0].removeprefix("doi:").split("|")
        results = []
        for doi in (d.lower() for d in wanted if d.lower() in self.dois):
            page = self.landing.url(f"/{doi.split('/', 1)[1]}")
            location = {"is_oa": True, "pdf_url": None, "landing_page_url": page, "license": "cc-by",
                        "version": "publishedVersion", "source": {"type": "journal", "display_name": "J"}}
            results.append({"id": "https://openalex.org/W0", "doi": f"https://doi.org/{doi}", "title": f"Paper {doi}",
                            "display_name": f"Paper {doi}", "publication_year": 2020,
                            "ids": {"doi": f"https://doi.org/{doi}"}, "primary_location": location,
                            "open_access": {"is_oa": True, "oa_status": "gold", "oa_url": page},
                            "best_oa_location": location, "locations": []})
        body = {"meta": {"count": len(results), "page": 1, "per_page": 50}, "results": results, "group_by": []}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    def __enter__(self) -> ColdWorld:
        for host in (self.files, self.landing, self.openalex):
            host.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.gate.set()
        for host in (self.files, self.landing, self.openalex):
            host.stop()


def test_on_a_cold_run_the_eta_is_a_lower_bound_while_items_have_hosts_ahead(tmp_path):
    with ColdWorld(n=4, base_ip=216) as world:
        r = Retriever(email="you@uni.example", out_dir=tmp_path, endpoints=world.endpoints, sources=("openalex",),
                      state="memory", verbosity=0, delay_min_s=0.2, delay_max_s=0.2, cache=False, dashboard=False)
        job = r.start(world.dois)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # the landing pages queued, the files host not reached
            snap = job.snapshot()
            if snap is not None and any(h.queued for h in snap.hosts):
                break
            time.sleep(0.01)
        line = job.progress_line()
        world.gate.set()
        out = job.result(timeout=30)
        r.close()
    print(line)
    assert "ETA at least" in line
    assert list(out["status"]) == ["downloaded"] * 4
    assert job.progress_line().startswith("4/4 finished")


# ---------------------------------------------------------------------- the job's log
def test_the_jobs_log_keeps_what_the_dashboard_does_not_show_one_message_a_line(monkeypatch, caplog):
    """In a kernel the job's threads' records go to ``job.log``: the transport's holds, suppressions and
    robots.txt refusals (the dashboard's recent events say those) are left out; a line is the time and the
    message (``ERROR`` before an error), no level word for a warning nor the logger's name; the widget's
    line height is not a paragraph's."""
    import logging
    import random

    import requests

    from paperfetch import FakeClock, HttpClient
    from paperfetch.dashboard import env
    from paperfetch.dashboard.job import _log_html
    from paperfetch.testing import Reply, scripted_session

    monkeypatch.setattr(env, "in_notebook", lambda: True)
    caplog.set_level(logging.WARNING, logger="paperfetch")  # restored after the test
    clock = FakeClock()
    robots = {f"https://{h}.example/robots.txt": Reply(404) for h in ("held", "shut", "gone")}
    session, _ = scripted_session({
        **robots, "https://walled.example/robots.txt": Reply(200, "User-agent: *\nDisallow: /\n"),
        "https://held.example/p": Reply(503, headers={"Retry-After": "3600"}),
        "https://shut.example/p": Reply(403),
        "https://walled.example/p": Reply(200),
        "https://gone.example/p": [Reply(raise_exc=requests.ConnectionError("connection reset")), Reply(200)],
    }, clock)
    client = HttpClient(session=session, clock=clock, rng=random.Random(7), respect_robots_txt=True, max_retries=1)

    def run(inputs, hooks: RunHooks) -> pd.DataFrame:
        hooks.on_begin(None)
        for host in ("held", "shut", "walled", "gone"):
            try:
                client.get(f"https://{host}.example/p")
            except Exception:  # noqa: BLE001 - the answer does not matter here, the log does
                pass
        logging.getLogger("paperfetch.flow.batch").error("the ledger could not be written")
        hooks.on_row(0, {"status": "downloaded"})
        from paperfetch.outcomes import outcomes_frame

        return outcomes_frame([{"input": inputs[0], "status": "downloaded"}])

    job = Job(run=run, ids=["10.1/a"])
    job.begin()
    job.result(timeout=10)
    lines = [line.split(" ", 1)[1] for line in job.log]  # without the time
    assert lines and all(line[:2].isdigit() and line[2] == ":" for line in job.log), list(job.log)
    assert not [line for line in lines if "held" in line or "shut" in line or "robots" in line], lines
    assert any(line.startswith("ConnectionError for https://gone.example/p; retrying in ") for line in lines), lines
    assert "ERROR the ledger could not be written" in lines
    assert not [line for line in lines if line.startswith("WARNING") or "paperfetch." in line], lines
    assert "line-height:1.4" in _log_html(list(job.log))
