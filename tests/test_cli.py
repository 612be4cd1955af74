"""The ``paperfetch`` command: each case with its exit status and message (docs/cli.md)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from paperfetch import __version__
from paperfetch.cli import main
from paperfetch.demo import DemoWorld
from paperfetch.ledger import DEFAULT_LEDGER_NAME, SqliteLedger
from paperfetch.log import disable_logging
from paperfetch.testing import LoopbackHost, Reply
from tests._quick import slow_services, unpaced_config

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """No user config file, no identity from the environment; logging as it was after each test."""
    monkeypatch.setenv("PAPERFETCH_CONFIG", str(tmp_path / "no-config.toml"))
    for name in ("PAPERFETCH_EMAIL", "PAPERFETCH_OPENALEX_API_KEY", "PAPERFETCH_NCBI_API_KEY", "NCBI_API_KEY",
                 "PAPERFETCH_OUT", "PAPERFETCH_WORKERS"):
        monkeypatch.delenv(name, raising=False)
    yield
    disable_logging()


@pytest.fixture(scope="module")
def world():
    with DemoWorld(base_ip=140) as w:
        yield w


@pytest.fixture
def demo_env(world, monkeypatch, tmp_path):
    """The demo world's endpoints, and no configured gap between requests nor bioRxiv's or arXiv's own interval (a
    settings file): the tests read the command's output, not its pace (the demo's robots.txt Crawl-delays,
    holds, Retry-Afters and the other services' intervals still apply)."""
    for name, url in world.endpoints.items():
        monkeypatch.setenv(f"PAPERFETCH_{name.upper()}_URL", url)
    monkeypatch.setenv("PAPERFETCH_DELAY_MIN", "0")
    monkeypatch.setenv("PAPERFETCH_DELAY_MAX", "0")
    config = unpaced_config(tmp_path / "unpaced.toml", slow_services(world.endpoints))
    monkeypatch.setenv("PAPERFETCH_CONFIG", str(config))
    return world


class NoRequests:
    """Fails the test if any HTTP request is attempted (usage errors come before any request)."""

    def __init__(self, monkeypatch):
        import requests

        self.calls = 0

        def refuse(*args, **kwargs):
            self.calls += 1
            raise AssertionError("a request was sent")

        monkeypatch.setattr(requests.Session, "send", refuse)


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------- help, version, bare
def test_bare_command_shows_help_and_exits_0(capsys):
    code, out, err = run([], capsys)
    assert code == 0 and "usage: paperfetch" in out and "download" in out and "config" in out


def test_version(capsys):
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.strip() == f"paperfetch {__version__}"


def test_unknown_flag_is_a_usage_error(capsys):
    code, _, err = run(["download", "--no-such-flag"], capsys)
    assert code == 2 and "unrecognized arguments" in err


def test_python_dash_m_and_bare_in_a_subprocess(tmp_path):
    env = {**os.environ, "PAPERFETCH_CONFIG": str(tmp_path / "none.toml")}
    done = subprocess.run([sys.executable, "-m", "paperfetch"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and "usage: paperfetch" in done.stdout
    done = subprocess.run([sys.executable, "-m", "paperfetch", "--version"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and __version__ in done.stdout


# ---------------------------------------------------------------------------- usage errors before any request
@pytest.mark.parametrize(
    "argv, message",
    [
        (["download"], "give identifiers"),
        (["download", "10.1/x", "--workers", "0"], "--workers must be 1 or more, not 0"),
        (["download", "10.1/x", "--max-retries", "-1"], "--max-retries must be 0 or more"),
        (["download", "10.1/x", "--delay-min", "-1"], "--delay-min must be 0 or more"),
        (["download", "10.1/x", "--report", "/nonexistent/dir/out.csv"], "the folder /nonexistent/dir does not exist"),
        (["download", "10.1/x", "--report", "REPORT.xlsx"], "unknown extension '.xlsx'"),
        (["download", "10.1/x", "--report", "REPORT"], "unknown extension '(none)'"),
        (["download", "10.1/x", "--failed", "/nonexistent/dir/failed.txt"], "--failed"),
        (["download", "--input", "/nonexistent/papers.csv"], "cannot read /nonexistent/papers.csv"),
        (["download", "10.1/x", "--format", "xml"], "invalid choice"),
        # the README's old placeholder is refused before any request, saying what Unpaywall wants
        (["download", "10.1/x", "--email", "you@example.com"], "Unpaywall requires a real contact e-mail address"),
    ],
)
def test_usage_errors_exit_2_before_any_request(argv, message, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    guard = NoRequests(monkeypatch)
    code, out, err = run(argv, capsys)
    assert code == 2, err
    assert message in err
    assert guard.calls == 0
    assert "Traceback" not in err


def test_out_naming_a_file_exits_2(capsys, monkeypatch, tmp_path):
    guard = NoRequests(monkeypatch)
    (tmp_path / "afile").write_text("x")
    code, _, err = run(["download", "10.1/x", "--out", str(tmp_path / "afile")], capsys)
    assert code == 2 and "is a file, not a folder" in err and guard.calls == 0


def test_report_is_a_folder_exits_2(capsys, monkeypatch, tmp_path):
    NoRequests(monkeypatch)
    (tmp_path / "r.csv").mkdir()
    code, _, err = run(["download", "10.1/x", "--report", str(tmp_path / "r.csv")], capsys)
    assert code == 2 and "is a folder" in err


def test_csv_without_the_column_exits_2(capsys, monkeypatch, tmp_path):
    NoRequests(monkeypatch)
    (tmp_path / "p.csv").write_text("title\nx\n")
    code, _, err = run(["download", "--input", str(tmp_path / "p.csv")], capsys)
    assert code == 2 and "has no column 'doi'" in err


def test_parquet_without_pyarrow_exits_2_with_the_install_hint(capsys, monkeypatch, tmp_path):
    NoRequests(monkeypatch)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    code, _, err = run(["download", "10.1/x", "--report", str(tmp_path / "r.parquet")], capsys)
    assert code == 2 and "paperfetch-oa[parquet]" in err


def test_bad_config_file_exits_2(capsys, monkeypatch, tmp_path):
    NoRequests(monkeypatch)
    bad = tmp_path / "bad.toml"
    bad.write_text('workers = "many"\n')
    code, _, err = run(["download", "10.1/x", "--config", str(bad)], capsys)
    assert code == 2 and "workers" in err and str(bad) in err


# ---------------------------------------------------------------------------- runs against the demo world
def test_invalid_identifier_alone_exits_1_with_its_row(capsys, tmp_path, demo_env):
    code, out, err = run(["download", "not a doi", "--out", str(tmp_path), "--email", "t@uni.example", "--no-progress"], capsys)
    assert code == 1
    assert "invalid_identifier" in out and "not a doi" in out
    assert "1 paper: 1 invalid_identifier" in out


def test_run_with_failures_writes_results_report_and_failed_list(capsys, tmp_path, demo_env):
    report, failed = tmp_path / "report.csv", tmp_path / "failed.txt"
    code, out, err = run(["download", "10.5555/demo.fast", "10.5555/demo.gone", "not a doi", "--out", str(tmp_path / "pdfs"),
                          "--email", "t@uni.example", "--report", str(report), "--failed", str(failed), "--no-progress"], capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].split() == ["input", "status", "source", "detail"]
    assert any("10.5555/demo.fast" in line and "downloaded" in line for line in lines)
    assert any("10.5555/demo.gone" in line and "http_error" in line for line in lines)
    frame = pd.read_csv(report)
    assert list(frame["status"]) == ["downloaded", "http_error", "invalid_identifier"]
    assert list(frame["http_status"].fillna(0).astype(int))[1] == 410
    # --failed lists the 410 Gone under the final answers; an invalid input is left out (no retry helps it)
    assert failed.read_text() == "# final answers (asked again with --force; not_found and no_open_copy also after 30 days)\n10.5555/demo.gone\n"
    pdf = next((tmp_path / "pdfs").glob("*.pdf"))
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(pdf.stat().st_mode) == 0o666 & ~umask  # readable by the group, not 0600
    assert stat.S_IMODE(report.stat().st_mode) == 0o666 & ~umask


def test_skip_retracted_flag_ends_a_retracted_paper_without_a_pdf_request(capsys, tmp_path, demo_env):
    report = tmp_path / "report.csv"
    before = [p for _, p in demo_env.hosts["gone"].log]
    code, out, _ = run(["download", "10.5555/demo.gone", "--skip-retracted", "--out", str(tmp_path / "pdfs"), "--email",
                        "t@uni.example", "--report", str(report), "--no-progress", "--no-cache"], capsys)
    assert code == 1 and "1 paper: 1 retracted; met 1 retracted paper" in out
    row = pd.read_csv(report).iloc[0]
    # OpenAlex's batched flag decided before any copy was asked for; the next source's lookup (no PDF request)
    # names the notice, as a normal run's reason does
    assert row["status"] == "retracted" and row["reason"] == "retracted (notice 10.5555/demo.gone.retraction, 2024-05-01)"
    assert [p for _, p in demo_env.hosts["gone"].log] == before  # the retracted paper's PDF was never asked for


def test_failed_lists_every_input_that_did_not_finish_well_and_says_which_are_final(capsys, tmp_path, demo_env):
    failed = tmp_path / "failed.txt"
    inputs = ["10.5555/demo.fast", "10.5555/demo.gone", "10.5555/demo.closed", "10.5555/demo.unknown",
              "10.5555/demo.held", "not a doi"]
    code, out, err = run(["download", *inputs, "--out", str(tmp_path / "pdfs"), "--email", "t@uni.example",
                          "--failed", str(failed), "--format", "jsonl", "--no-progress"], capsys)
    assert code == 1
    statuses = {r["input"]: r["status"] for r in map(json.loads, out.splitlines())}
    assert statuses == {"10.5555/demo.fast": "downloaded", "10.5555/demo.gone": "http_error",
                        "10.5555/demo.closed": "no_open_copy", "10.5555/demo.unknown": "not_found",
                        "10.5555/demo.held": "host_held", "not a doi": "invalid_identifier"}
    # every input that did not finish well but the invalid one; a comment line says which a re-run asks again
    assert failed.read_text() == ("# retried by a re-run\n10.5555/demo.held\n"
                                  "# final answers (asked again with --force; not_found and no_open_copy also after 30 days)\n"
                                  "10.5555/demo.gone\n10.5555/demo.closed\n10.5555/demo.unknown\n")
    assert f"4 identifiers written to {failed} (1 retried by a re-run, 3 final)" in err
    # the file is an --input of its own: the comment lines are skipped, the final answers stay final
    code, out, err = run(["download", "--input", str(failed), "--out", str(tmp_path / "pdfs"), "--email", "t@uni.example",
                          "--format", "jsonl", "--no-progress"], capsys)
    again = [r["input"] for r in map(json.loads, out.splitlines())]
    assert again == ["10.5555/demo.held", "10.5555/demo.gone", "10.5555/demo.closed", "10.5555/demo.unknown"]


def test_all_well_exits_0_and_jsonl_and_report_formats(capsys, tmp_path, demo_env):
    jsonl_report = tmp_path / "r.jsonl"
    code, out, err = run(["download", "10.5555/demo.fast", "--out", str(tmp_path / "pdfs"), "--email", "t@uni.example",
                          "--format", "jsonl", "--report", str(jsonl_report)], capsys)
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["status"] for r in records] == ["downloaded"] and records[0]["input"] == "10.5555/demo.fast"
    assert json.loads(jsonl_report.read_text().splitlines()[0])["status"] == "downloaded"
    parquet = tmp_path / "r.parquet"
    code, out, _ = run(["download", "10.5555/demo.fast", "--out", str(tmp_path / "pdfs"), "--email", "t@uni.example",
                        "--report", str(parquet), "--no-progress"], capsys)
    assert code == 0  # already_downloaded finishes well
    assert list(pd.read_parquet(parquet)["status"]) == ["already_downloaded"]


def test_csv_input_report_keeps_the_csv_columns_and_txt_input(capsys, tmp_path, demo_env):
    papers = tmp_path / "papers.csv"
    papers.write_text("doi,note\n10.5555/demo.fast,mine\n")
    report = tmp_path / "out.csv"
    code, _, _ = run(["download", "--input", str(papers), "--out", str(tmp_path / "pdfs"), "--email", "t@uni.example",
                      "--report", str(report), "--no-progress"], capsys)
    assert code == 0
    frame = pd.read_csv(report)
    assert list(frame.columns[:2]) == ["input_doi", "note"] and frame.loc[0, "status"] == "downloaded"
    retry = tmp_path / "retry.txt"
    retry.write_text("# from --failed\n10.5555/demo.fast\n\n")
    code, out, _ = run(["download", "--input", str(retry), "--out", str(tmp_path / "pdfs"), "--email", "t@uni.example",
                        "--no-progress"], capsys)
    assert code == 0 and "already_downloaded" in out


def test_a_csv_with_a_DOI_header_is_read_and_said_so(capsys, tmp_path, demo_env):
    papers = tmp_path / "zotero.csv"
    papers.write_text("Key,DOI,Title\nK1,10.5555/demo.fast,Fast\n")
    code, out, err = run(["download", "--input", str(papers), "--out", str(tmp_path / "pdfs"), "--email", "t@uni.example",
                          "--no-progress"], capsys)
    assert code == 0, err
    assert f"reading the identifiers from column 'DOI' of {papers}" in err and "downloaded" in out
    both = tmp_path / "both.csv"
    both.write_text("DOI,Doi\n10.5555/demo.fast,10.5555/demo.fast\n")
    code, _, err = run(["download", "--input", str(both), "--out", str(tmp_path / "pdfs")], capsys)
    assert code == 2 and "'DOI', 'Doi'" in err and "--column" in err
    code, _, err = run(["download", "--input", str(papers), "--column", "doi", "--out", str(tmp_path / "pdfs")], capsys)
    assert code == 2 and "did you mean 'DOI'" in err  # a column named on the command line is read as named


def test_a_csv_input_gives_the_report_the_dtypes_and_names_of_positional_ids(capsys, tmp_path, demo_env):
    papers = tmp_path / "papers.csv"
    papers.write_text("doi,year,note\nhttps://doi.org/10.5555/demo.fast,2020,mine\nnot a doi,,x\n")
    reports = {}
    for name, argv in (("csv", ["--input", str(papers)]), ("ids", ["https://doi.org/10.5555/demo.fast", "not a doi"])):
        reports[name] = tmp_path / f"{name}.parquet"
        code, _, err = run(["download", *argv, "--out", str(tmp_path / "pdfs"), "--email", "t@uni.example",
                            "--report", str(reports[name]), "--no-progress"], capsys)
        assert code == 1, err  # "not a doi"
    by_csv, by_ids = pd.read_parquet(reports["csv"]), pd.read_parquet(reports["ids"])
    for column in by_ids.columns:
        if column != "input":
            assert by_csv[column].dtype == by_ids[column].dtype, column
    assert isinstance(by_csv["status"].dtype, pd.CategoricalDtype) and str(by_csv["bytes"].dtype) == "Int64"
    assert list(by_csv["input_doi"]) == ["https://doi.org/10.5555/demo.fast", "not a doi"]  # the CSV's own cells
    assert by_csv["doi"].iloc[0] == "10.5555/demo.fast" and list(by_csv["input_year"]) == ["2020", ""]
    assert not any(c.endswith("_paperfetch") for c in by_csv.columns)


def test_dry_run_shows_candidates_and_downloads_nothing(capsys, tmp_path, demo_env):
    out_dir = tmp_path / "pdfs"
    code, out, err = run(["download", "10.5555/demo.fast", "--dry-run", "--out", str(out_dir), "--email", "t@uni.example",
                          "--format", "jsonl"], capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[0]["rank"] == 1 and rows[0]["kind"] == "pdf" and rows[0]["url"].endswith("/pdf/demo.fast.pdf")
    assert not list(out_dir.glob("*.pdf"))


def test_missing_email_is_said_once_and_quiet_prints_nothing(capsys, tmp_path, demo_env):
    code, out, err = run(["download", "10.5555/demo.fast", "--out", str(tmp_path), "--no-progress"], capsys)
    assert code == 0
    assert err.count("no contact e-mail given: unpaywall skipped") == 1
    code, out, err = run(["download", "10.5555/demo.fast", "--out", str(tmp_path), "-q"], capsys)
    assert code == 0 and out == "" and err == ""


def test_verbose_logs_on_stderr(capsys, tmp_path, demo_env):
    code, _, err = run(["download", "10.5555/demo.fast", "--out", str(tmp_path), "--email", "t@uni.example", "-vv",
                        "--no-progress"], capsys)
    assert code == 0 and "[paperfetch] DEBUG" in err


def test_config_shows_values_masked_and_their_origin(capsys, monkeypatch, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('email = "file@uni.example"\nworkers = 4\nopenalex_api_key = "OAKEYFROMFILE"\n')
    monkeypatch.setenv("NCBI_API_KEY", "NCBIKEYFROMENV")
    code, out, _ = run(["config", "--config", str(config), "--email", "arg@uni.example"], capsys)
    assert code == 0
    rows = {line.split()[0]: line.split(maxsplit=2)[1:] for line in out.splitlines()[1:]}
    assert rows["email"] == ["'***'", "argument"]
    assert rows["ncbi_api_key"] == ["'***'", "env NCBI_API_KEY"]
    assert rows["openalex_api_key"] == ["'***'", f"file {config}"]
    assert rows["workers"] == ["4", f"file {config}"]
    assert rows["max_retries"] == ["3", "default"]
    for secret in ("file@uni.example", "arg@uni.example", "OAKEYFROMFILE", "NCBIKEYFROMENV"):
        assert secret not in out
    code, out, _ = run(["config"], capsys)
    assert "no contact e-mail: unpaywall will be skipped" in out


# ---------------------------------------------------------------------------- Ctrl-C
def _stopped_run(tmp_path, world, sent, command, *options):
    """``paperfetch COMMAND`` of a paper that finishes, one whose landing page never answers and one that is no
    identifier, in a subprocess sent *sent* once the first is in the ledger: (exit status, stdout, stderr)."""
    arrived, release, release_robots = threading.Event(), threading.Event(), threading.Event()

    def stall(request):
        arrived.set()
        (release_robots if request.path == "/robots.txt" else release).wait(60)
        return Reply(404, b"late")

    blocker = LoopbackHost("127.0.0.1", {"*": stall}).start()
    env = {**{k: v for k, v in os.environ.items() if k != "COLUMNS"}, "PAPERFETCH_CONFIG": str(tmp_path / "none.toml"),
           "PYTHONUNBUFFERED": "1"}  # no COLUMNS: whole lines
    env.update({f"PAPERFETCH_{name.upper()}_URL": url for name, url in world.endpoints.items()})
    env["PAPERFETCH_DOI_URL"] = blocker.base_url  # the landing page of demo.unknown never answers
    env.update(PAPERFETCH_DELAY_MIN="0", PAPERFETCH_DELAY_MAX="0")
    out_dir = tmp_path / "pdfs"
    process = subprocess.Popen(
        [sys.executable, "-m", "paperfetch", command, "10.5555/demo.fast", "10.5555/demo.unknown", "not a doi",
         "--email", "t@uni.example", "--out", str(out_dir), "--no-progress", *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        deadline = time.monotonic() + 90
        done = False
        while time.monotonic() < deadline and not done:
            arrived.wait(0.1)
            if arrived.is_set() and (out_dir / DEFAULT_LEDGER_NAME).exists():
                with SqliteLedger.in_folder(out_dir) as ledger:
                    done = ledger.get("doi:10.5555/demo.fast") is not None
        assert done, "the run never reached the stalled request"
        process.send_signal(sent)
        # the stalled robots.txt is on the wire: the run ends once it does. Answered a second after the
        # signal (the run has stopped by then, so nothing follows it), not at its 15 s deadline.
        threading.Timer(1.0, release_robots.set).start()
        stdout, stderr = process.communicate(timeout=60)
    finally:
        release.set()
        release_robots.set()
        if process.poll() is None:
            process.kill()
        blocker.stop()
    return process.returncode, stdout, stderr


@pytest.mark.parametrize("sent, exit_status, word", [(signal.SIGINT, 130, "interrupted"),
                                                     (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_ctrl_c_and_sigterm_write_the_partial_report_with_every_column(tmp_path, world, sent, exit_status, word):
    report, failed = tmp_path / "partial.csv", tmp_path / "failed.txt"
    code, stdout, stderr = _stopped_run(tmp_path, world, sent, "download", "--report", str(report), "--failed", str(failed))
    assert code == exit_status, stderr
    assert word in stderr and "Traceback" not in stderr
    frame = pd.read_csv(report)
    from paperfetch.outcomes import COLUMNS

    assert list(frame.columns) == list(COLUMNS)  # the columns never depend on how the run ended
    # the unfinished paper is ``stopped``, the library's word, with its reason; the counts line and what finished
    assert dict(zip(frame["input"], frame["status"])) == {
        "10.5555/demo.fast": "downloaded", "10.5555/demo.unknown": "stopped", "not a doi": "invalid_identifier"}
    assert frame.set_index("input").loc["10.5555/demo.unknown", "reason"] == "stopped before it finished"
    counts = next(line for line in stdout.splitlines() if line.startswith("3 papers: "))
    assert all(part in counts for part in ("1 downloaded", "1 stopped", "1 invalid_identifier"))
    assert f"paperfetch: {word}; 2 of 3 papers had finished; the others are stopped" in stderr
    assert failed.read_text() == "# retried by a re-run\n10.5555/demo.unknown\n"


def test_text_on_sigterm_writes_the_paragraphs_so_far_and_the_failed_list_as_download(tmp_path, world):
    report, outcomes, failed = tmp_path / "paragraphs.csv", tmp_path / "papers.csv", tmp_path / "failed.txt"
    code, stdout, stderr = _stopped_run(tmp_path, world, signal.SIGTERM, "text", "--report", str(report),
                                        "--outcomes", str(outcomes), "--failed", str(failed))
    assert code == 143, stderr
    assert "Traceback" not in stderr
    assert "paperfetch: terminated (SIGTERM); 2 of 3 papers had finished; the others are stopped" in stderr
    papers = pd.read_csv(outcomes)
    assert dict(zip(papers["input"], papers["status"])) == {
        "10.5555/demo.fast": "downloaded", "10.5555/demo.unknown": "stopped", "not a doi": "invalid_identifier"}
    paragraphs = pd.read_csv(report)
    assert len(paragraphs) and set(paragraphs["input"]) == {"10.5555/demo.fast"}  # the text of the finished paper
    assert failed.read_text() == "10.5555/demo.unknown\n"
    counts = next(line for line in stdout.splitlines() if line.startswith("3 papers: "))
    assert all(part in counts for part in ("1 downloaded", "1 stopped", "1 invalid_identifier"))
    assert "; text of 1 (1 from a PDF), none of 2: " in counts


def test_main_leaves_logging_as_it_found_it(capsys, tmp_path):
    import logging

    package = logging.getLogger("paperfetch")
    before = (package.level, list(package.handlers))
    assert main(["config", "-vv"]) == 0
    assert (package.level, list(package.handlers)) == before


# ---------------------------------------------------------------------------- settings, --failed, --explain, --force
def test_a_named_column_in_other_case_says_did_you_mean(capsys, monkeypatch, tmp_path):
    NoRequests(monkeypatch)
    (tmp_path / "p.csv").write_text("DOI,title\n10.1/x,x\n")
    code, _, err = run(["download", "--input", str(tmp_path / "p.csv"), "--column", "doi"], capsys)
    assert code == 2 and "has no column 'doi' (did you mean 'DOI'?)" in err


def test_explain_prints_where_its_help_says(capsys, tmp_path, demo_env):
    _, usage, _ = run(["download", "--help"], capsys)
    usage = " ".join(usage.split())
    assert "--explain before the table, each source asked" in usage
    code, out, _ = run(["download", "10.5555/demo.closed", "--out", str(tmp_path / "pdfs"), "--email", "t@uni.example",
                        "--no-progress", "--explain"], capsys)
    assert code == 1 and out.index("why 10.5555/demo.closed (no_open_copy):") < out.index("no_open_copy  ")


def test_download_frame_says_did_you_mean(tmp_path):
    from paperfetch import Retriever
    from paperfetch.errors import ConfigurationError

    with Retriever(out_dir=tmp_path, progress=False, cache=False, state="memory") as r:
        with pytest.raises(ConfigurationError, match=r"did you mean 'doi'\?"):
            r.download_frame(pd.DataFrame({"doi": ["10.1/x"]}), column="DOI")


def test_invalid_and_duplicate_inputs_are_named_and_export_writes_citations(capsys, tmp_path, demo_env):
    bib, ris, csl = tmp_path / "p.bib", tmp_path / "p.ris", tmp_path / "p.json"
    code, out, err = run(["download", "10.5555/demo.fast", "https://doi.org/10.5555/DEMO.FAST", "not a doi",
                          "--out", str(tmp_path / "pdfs"), "--email", "t@uni.example", "--export", str(bib),
                          "--no-progress"], capsys)
    assert "3 inputs: 1 to fetch, 1 duplicate (same outcome as the first), 1 invalid" in err
    text = bib.read_text()
    assert text.count("@") == 1 and "doi = {10.5555/demo.fast}" in text  # one entry per work; not the invalid input
    for path in (ris, csl):
        assert main(["download", "10.5555/demo.fast", "--out", str(tmp_path / "pdfs"), "--email", "t@uni.example",
                     "--export", str(path), "--no-progress", "-q"]) == 0
    assert ris.read_text().startswith("TY  - ") and "DO  - 10.5555/demo.fast" in ris.read_text()
    assert json.loads(csl.read_text())[0]["DOI"] == "10.5555/demo.fast"
    code, _, err = run(["download", "10.1/x", "--export", str(tmp_path / "p.xlsx")], capsys)
    assert code == 2 and "unknown extension '.xlsx'" in err


def test_offline_is_one_line_and_retry_warnings_one_per_host(capsys, tmp_path, monkeypatch):
    names = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi_eutils", "ncbi_idconv", "arxiv", "doi",
             "semanticscholar", "biorxiv", "pmc")
    for name in names:
        monkeypatch.setenv(f"PAPERFETCH_{name.upper()}_URL", f"http://{name.replace('_', '-')}.paperfetch-test.invalid")
    monkeypatch.setenv("PAPERFETCH_DELAY_MIN", "0")  # the retries' waits remain; no politeness gap on top
    monkeypatch.setenv("PAPERFETCH_DELAY_MAX", "0")
    code, out, err = run(["download", "10.5555/a.b", "PMID:123", "--email", "t@uni.example", "--out", str(tmp_path),
                          "--state", "memory", "--no-cache", "--no-progress", "-v"], capsys)
    assert code == 1
    assert "could not reach any service (DNS failed for " in err and "offline, or behind a proxy?" in err
    retries = [line for line in err.splitlines() if "retrying in" in line]
    hosts = {line.split("http://")[1].split("/")[0] for line in retries}
    assert len(retries) == len(hosts)  # one line per host
    table = out.split("Per-host table:")[1]
    assert "UNREACHABLE" in table and " idle" not in table


def test_demo_serve_prints_the_exports_and_serves_until_stopped(capsys):
    import requests

    from paperfetch.cli.demo import serve

    ready, stop = threading.Event(), threading.Event()
    server = threading.Thread(target=serve, kwargs={"ready": ready, "stop": stop})
    server.start()
    try:
        assert ready.wait(30)
        out = capsys.readouterr().out
        exports = dict(line[len("export "):].split("=", 1) for line in out.splitlines() if line.startswith("export "))
        assert {"PAPERFETCH_UNPAYWALL_URL", "PAPERFETCH_DOI_URL", "PAPERFETCH_OPENALEX_URL"} <= set(exports)
        answer = requests.get(exports["PAPERFETCH_UNPAYWALL_URL"] + "/v2/10.5555/demo.fast?email=t@uni.example", timeout=10)
        assert answer.status_code < 500
    finally:
        stop.set()
        server.join(30)
    assert not server.is_alive()


def test_demo_serve_in_a_subprocess_hints_the_documented_address_not_a_mask(tmp_path):
    """The notebook line ``demo --serve`` prints is one to copy: the docs' address, not ``email="REDACTED"``."""
    env = {**os.environ, "PAPERFETCH_CONFIG": str(tmp_path / "none.toml"), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen([str(Path(sys.executable).with_name("paperfetch")), "demo", "--serve"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        lines = []
        while not lines or not lines[-1].startswith("# Ctrl-C"):  # the last line of the hint
            line = process.stdout.readline()
            assert line, process.stderr.read() if process.stderr else "the world ended early"
            lines.append(line)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    hint = next(line for line in lines if "Retriever(" in line)
    assert 'email="your.name@your-university.edu"' in hint
    assert "REDACTED" not in "".join(lines)


@pytest.mark.parametrize("email", ["REDACTED", "you@example.org", "nobody"])
def test_a_placeholder_or_non_address_email_is_a_usage_error_saying_what_to_give(email, capsys, monkeypatch, tmp_path):
    NoRequests(monkeypatch)
    code, out, err = run(["download", "10.5555/demo.fast", "--email", email, "--out", str(tmp_path / "pdfs")], capsys)
    assert code == 2 and "the contact e-mail from the email argument (--email) is a placeholder or not an address" in err
    assert "a name, '@' and a domain with a dot" in err and "PAPERFETCH_EMAIL" in err
    assert f" {email} " not in err + out and "Traceback" not in err


def test_search_download_prints_the_download_table(capsys, tmp_path, demo_env):
    from paperfetch.demo.research import SEARCH_QUERY

    code, out, _ = run(["search", SEARCH_QUERY, "--max", "20", "--email", "t@uni.example", "--out", str(tmp_path / "pdfs"),
                        "--download", "--no-progress", "--export", str(tmp_path / "hits.bib")], capsys)
    assert code == 1  # one wrong_article
    table = out.split("PubMed hits")[1]
    assert any(line.split() == ["input", "status", "source", "detail"] for line in table.splitlines())
    assert "papers: 5 downloaded, 1 wrong_article" in out and "Outcomes by status" not in out
    assert (tmp_path / "hits.bib").read_text().count("@article{") == 6


@pytest.mark.parametrize("suffix", ["csv", "parquet", "jsonl"])
def test_a_search_with_no_hits_writes_an_empty_report_with_its_header_and_exits_0(suffix, tmp_path, world):
    """A cron search that finds nothing is a finished run, not a crash: the real command in a subprocess."""
    env = {**os.environ, "PAPERFETCH_CONFIG": str(tmp_path / "none.toml")}
    env.update({f"PAPERFETCH_{name.upper()}_URL": url for name, url in world.endpoints.items()})
    report = tmp_path / f"hits.{suffix}"
    done = subprocess.run([str(Path(sys.executable).with_name("paperfetch")), "search", "nothing matches this", "--report",
                           str(report), "--email", "t@uni.example", "--no-cache", "--no-progress"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "0 PubMed hits for 'nothing matches this'" in done.stdout
    assert f"0 rows written to {report}" in done.stdout
    if suffix == "jsonl":  # one object a row: no row, no line
        assert report.read_text() == ""
        return
    frame = pd.read_csv(report) if suffix == "csv" else pd.read_parquet(report)
    assert frame.empty and list(frame.columns)[:4] == ["pmid", "doi", "pmcid", "title"]



# ---------------------------------------------------------------------------- text as download
def _paperfetch(tmp_path, argv, world=None, **env_extra):
    """The real ``paperfetch`` command in a subprocess, on the demo world's endpoints when given one (without
    bioRxiv's and arXiv's own intervals: a settings file)."""
    env = {**{k: v for k, v in os.environ.items() if k != "COLUMNS"}, "PAPERFETCH_CONFIG": str(tmp_path / "none.toml"),
           "PAPERFETCH_DELAY_MIN": "0", "PAPERFETCH_DELAY_MAX": "0", **env_extra}  # no COLUMNS: whole rows
    if world is not None:
        env.update({f"PAPERFETCH_{name.upper()}_URL": url for name, url in world.endpoints.items()})
        env["PAPERFETCH_CONFIG"] = str(unpaced_config(tmp_path / "unpaced.toml", slow_services(world.endpoints)))
    return subprocess.run([str(Path(sys.executable).with_name("paperfetch")), *argv], capture_output=True, text=True,
                          env=env, timeout=300)


def test_text_reads_a_csv_as_download_does_and_says_its_rows_in_words(tmp_path, world):
    papers = tmp_path / "zotero.csv"
    papers.write_text("Key,DOI,Title\nA,10.5555/demo.fast,x\nB,10.5555/demo.unknown,y\n", encoding="utf-8")
    done = _paperfetch(tmp_path, ["text", "--input", str(papers), "--email", "t@uni.example", "--out", str(tmp_path / "o"),
                                  "--no-progress", "--state", "memory"], world)
    assert done.returncode == 1, done.stderr
    assert f"reading the identifiers from column 'DOI' of {papers}" in done.stderr  # the header is no identifier
    assert "Key,DOI" not in done.stdout and "invalid_identifier" not in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith("10.5555/demo.unknown"))
    assert "no service knows this identifier" in row  # the detail is a reason in words, as download's
    counts = next(line for line in done.stdout.splitlines() if line.startswith("2 papers: "))
    assert "1 downloaded" in counts and "1 not_found" in counts and "; text of 1 (1 from a PDF), none of 1: 8 paragraphs" in counts
    assert " none)" not in done.stdout and "(1 none" not in done.stdout
    # --column names another column, as download's does
    single = tmp_path / "one.csv"
    single.write_text("ref,doi_of_paper\nx,10.5555/demo.fast\n", encoding="utf-8")
    done = _paperfetch(tmp_path, ["text", "--input", str(single), "--column", "doi_of_paper", "--email", "t@uni.example",
                                  "--out", str(tmp_path / "o"), "--no-progress", "--state", "memory"], world)
    assert done.returncode == 0, done.stderr
    assert "1 paper: 1 already_downloaded; text of 1 (1 from a PDF): 8 paragraphs" in done.stdout


def test_a_semicolon_separated_csv_is_named_as_such(tmp_path):
    papers = tmp_path / "excel.csv"
    papers.write_text("Key;DOI;Title\nA;10.5555/demo.fast;x\n", encoding="utf-8")
    for command in ("download", "text"):
        done = _paperfetch(tmp_path, [command, "--input", str(papers), "--out", str(tmp_path / "o")])
        assert done.returncode == 2, done.stderr
        assert "this file looks ';'-separated" in done.stderr and "Traceback" not in done.stderr


def test_text_offline_prints_download_s_offline_line(tmp_path):
    names = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi_eutils", "ncbi_idconv", "arxiv", "doi",
             "semanticscholar", "biorxiv", "pmc")
    offline = {f"PAPERFETCH_{name.upper()}_URL": f"http://{name.replace('_', '-')}.paperfetch-test.invalid" for name in names}
    done = _paperfetch(tmp_path, ["text", "10.5555/a.b", "--email", "t@uni.example", "--out", str(tmp_path),
                                  "--state", "memory", "--no-cache", "--no-progress"], **offline)
    assert done.returncode == 1
    assert "paperfetch: could not reach any service (DNS failed for " in done.stderr
    assert "offline, or behind a proxy?" in done.stderr


@pytest.mark.parametrize("argv, suggested", [(["donwload", "10.1/x"], "(did you mean 'download'?)"),
                                             (["download", "10.1/x", "--emial", "a@uni.example"], "(did you mean '--email'?)"),
                                             (["text", "10.1/x", "--repport", "p.csv"], "(did you mean '--report'?)"),
                                             (["download", "10.1/x", "--format", "tabel"], "(did you mean 'table'?)")])
def test_a_mistyped_subcommand_flag_or_choice_says_did_you_mean(argv, suggested, tmp_path):
    done = _paperfetch(tmp_path, argv)
    assert done.returncode == 2 and suggested in done.stderr and "Traceback" not in done.stderr


def test_config_says_where_each_value_comes_from_with_the_sources_windows(tmp_path):
    done = _paperfetch(tmp_path, ["config", "--email", "t@uni.example"])
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split(maxsplit=1)[1] for line in done.stdout.splitlines() if line.startswith("  ")}
    assert rows["verbosity"].split(maxsplit=1) == ["0", "the command (-v, -q)"]  # no argument was given
    assert rows["email"].endswith("argument") and rows["max_retries"].split() == ["3", "default"]
    # Europe PMC's published windows, set by its source, where a run takes them from
    ebi = rows["hosts.www.ebi.ac.uk"]
    assert "10 per 1 s; 500 per 60 s" in ebi and ebi.endswith("the sources")
    assert "hosts.api.crossref.org" in rows and not list(tmp_path.glob("PDFs"))
    assert "#polite-" not in done.stdout and "hosts.api.crossref.org (list queries)" in done.stdout  # its label


def test_a_held_host_says_held_try_later_not_failed_and_one_paper_is_one(tmp_path, world):
    done = _paperfetch(tmp_path, ["download", "10.5555/demo.held", "--email", "t@uni.example", "--out", str(tmp_path / "o"),
                                  "--no-progress", "--state", "memory", "--no-cache", "-v"], world)
    assert done.returncode == 1, done.stderr
    held = [line for line in done.stdout.splitlines() if line.lstrip().startswith("HELD ")]
    assert held and all("(held: try later)" in line and "failed)" not in line for line in held)
    assert "1 paper: 1 host_held" in done.stdout and "1 papers" not in done.stdout


def test_skip_retracted_names_the_notice_as_a_normal_run_does(tmp_path, world):
    report = tmp_path / "r.csv"
    done = _paperfetch(tmp_path, ["download", "10.5555/demo.gone", "--skip-retracted", "--email", "t@uni.example",
                                  "--out", str(tmp_path / "o"), "--report", str(report), "--no-progress", "--state", "memory",
                                  "--no-cache"], world)
    assert done.returncode == 1, done.stderr
    assert "retracted (notice 10.5555/demo.gone.retraction, 2024-05-01)" in done.stdout and "no notice named" not in done.stdout
    assert pd.read_csv(report).iloc[0]["status"] == "retracted"
