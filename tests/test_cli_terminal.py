"""The ``paperfetch`` command as people and cron run it: pipes closed early, the terminal's width, stderr that is
not a terminal, an offline machine, the demo's output (docs/cli.md)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pandas as pd
import pytest

from paperfetch.cli import main
from paperfetch.demo import DemoWorld
from paperfetch.log import disable_logging
from tests._quick import slow_services, unpaced, unpaced_config

REPO = Path(__file__).resolve().parents[1]
_SERVICES = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi_eutils", "ncbi_idconv", "arxiv", "doi",
             "semanticscholar", "biorxiv", "pmc")
OFFLINE = {name: f"http://{name.replace('_', '-')}.paperfetch-test.invalid" for name in _SERVICES}


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """No user config file, no identity or width from the environment; logging as it was after each test."""
    monkeypatch.setenv("PAPERFETCH_CONFIG", str(tmp_path / "no-config.toml"))
    for name in ("PAPERFETCH_EMAIL", "PAPERFETCH_OPENALEX_API_KEY", "PAPERFETCH_NCBI_API_KEY", "NCBI_API_KEY",
                 "PAPERFETCH_OUT", "PAPERFETCH_WORKERS", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    yield
    disable_logging()


@pytest.fixture(scope="module")
def world():
    with DemoWorld(base_ip=160) as w:
        yield w


@pytest.fixture
def demo_env(world, monkeypatch, tmp_path):
    """The demo world's endpoints, no configured gap and not bioRxiv's or arXiv's own interval: the output is read."""
    for name, url in world.endpoints.items():
        monkeypatch.setenv(f"PAPERFETCH_{name.upper()}_URL", url)
    monkeypatch.setenv("PAPERFETCH_DELAY_MIN", "0")
    monkeypatch.setenv("PAPERFETCH_DELAY_MAX", "0")
    config = unpaced_config(tmp_path / "unpaced.toml", slow_services(world.endpoints))
    monkeypatch.setenv("PAPERFETCH_CONFIG", str(config))
    return world


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def _closed_stdout(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``paperfetch *argv*`` with stdout a pipe whose reading end is closed before it writes (``| head -0``)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "paperfetch", *argv], stdout=write, stderr=subprocess.PIPE,
                              text=True, env=env, timeout=120)
    finally:
        os.close(write)


def test_config_into_a_closed_pipe_exits_quietly(tmp_path):
    done = _closed_stdout(["config"], _env())
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.stderr == ""


def test_download_into_a_closed_pipe_exits_quietly_and_still_writes_the_report(tmp_path, demo_env):
    report = tmp_path / "out.csv"
    done = _closed_stdout(["download", "10.5555/demo.fast", "10.5555/demo.gone", "--email", "t@uni.example",
                           "--out", str(tmp_path / "pdfs"), "--state", "memory", "--no-cache", "--no-progress",
                           "--report", str(report)], _env())
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == 1 and report.is_file()


def test_rows_fit_the_terminal_width(capsys, tmp_path, demo_env, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    code = main(["download", "10.5555/demo.fast", "10.5555/demo.gone", "10.5555/demo.closed", "10.5555/demo.unknown",
                 "https://doi.org/10.5555/demo.forbidden?with=a-long-query-string-that-goes-on", "--email",
                 "t@uni.example", "--out", str(tmp_path / "pdfs-in-a-folder-with-a-rather-long-name" / "and-deeper"),
                 "--state", "memory", "--no-cache", "--no-progress", "-v"])
    out, err = capsys.readouterr()
    assert code == 1
    wide = [line for line in out.splitlines() if len(line) > 100]
    assert not wide, "\n".join(wide)
    assert "yield:" in out and "Per-host table:" in out
    legend = out.split("yield:")[1]
    assert "of those it offered" in legend and "only here" in legend  # the yield line says how to read it


def test_no_progress_frames_when_stderr_is_not_a_terminal(tmp_path, demo_env):
    done = subprocess.run([sys.executable, "-m", "paperfetch", "download", "10.5555/demo.fast", "10.5555/demo.fast2",
                           "--email", "t@uni.example", "--out", str(tmp_path), "--state", "memory", "--no-cache"],
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr and "it/s" not in done.stderr and "%|" not in done.stderr


def _offline(monkeypatch, tmp_path: Path) -> None:
    """Every service at a name that does not resolve; no gap and no service's own interval between the retries."""
    for name, url in OFFLINE.items():
        monkeypatch.setenv(f"PAPERFETCH_{name.upper()}_URL", url)
    monkeypatch.setenv("PAPERFETCH_DELAY_MIN", "0")
    monkeypatch.setenv("PAPERFETCH_DELAY_MAX", "0")
    monkeypatch.setenv("PAPERFETCH_CONFIG", str(unpaced_config(tmp_path / "unpaced.toml", OFFLINE)))


def test_offline_the_one_line_instead_of_a_screenful(capsys, tmp_path, monkeypatch):
    _offline(monkeypatch, tmp_path)
    code = main(["download", "10.5555/a.b", "PMID:123", "--email", "t@uni.example", "--out", str(tmp_path),
                 "--state", "memory", "--no-cache", "--no-progress"])
    _, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == 1
    assert any("could not reach any service (DNS failed for " in line for line in lines), err
    assert "WARNING" not in err and len(lines) <= 2, err
    assert all(len(line) <= 160 for line in lines), err


def test_verbose_offline_warnings_are_short_and_never_a_urllib3_repr(capsys, tmp_path, monkeypatch):
    _offline(monkeypatch, tmp_path)
    main(["download", "10.5555/a.b", "PMID:123", "--email", "t@uni.example", "--out", str(tmp_path),
          "--state", "memory", "--no-cache", "--no-progress", "-v"])
    _, err = capsys.readouterr()
    for marker in ("_HTTPPool", "HTTPConnectionPool", "Max retries exceeded", "Caused by", "object at 0x"):
        assert marker not in err, err
    warnings = [line for line in err.splitlines() if "WARNING" in line]
    assert warnings and max(len(line) for line in warnings) <= 320, max(warnings, key=len)  # was 549


@pytest.mark.parametrize("where", ["http://name.paperfetch-test.invalid/x", "http://127.0.0.1:9/x"])
def test_network_error_messages_of_the_library_are_short(where):
    import requests

    from paperfetch.errors import NetworkError
    from paperfetch.http.exceptions import map_network_errors

    with pytest.raises(NetworkError) as caught:
        with map_network_errors(where):
            requests.get(where, timeout=5)
    message = str(caught.value)
    assert "_HTTPPool" not in message and "Max retries" not in message and "Caused by" not in message, message
    assert "0x" not in message and len(message) <= 160, message
    assert ("did not resolve" in message) if "invalid" in where else ("refused" in message), message


def test_workers_not_a_number_is_one_line(capsys):
    code = main(["download", "10.1/x", "--workers", "abc"])
    _, err = capsys.readouterr()
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert "--workers" in err and "'abc'" in err and "usage:" not in err


def test_demo_serve_prints_the_endpoints_dict(capsys):
    from paperfetch.cli.demo import serve

    ready, stop = threading.Event(), threading.Event()
    server = threading.Thread(target=serve, kwargs={"ready": ready, "stop": stop})
    server.start()
    try:
        assert ready.wait(30)
        out = capsys.readouterr().out
    finally:
        stop.set()
        server.join(30)
    line = next(line for line in out.splitlines() if line.startswith("endpoints = "))
    endpoints = ast.literal_eval(line[len("endpoints = "):])
    exports = dict(line[len("export "):].split("=", 1) for line in out.splitlines() if line.startswith("export "))
    assert {f"PAPERFETCH_{name.upper()}_URL": url for name, url in endpoints.items()} == exports
    assert "Retriever(endpoints=endpoints" in out


def test_text_report_says_where_it_was_written(capsys, tmp_path, demo_env):
    report = tmp_path / "paragraphs.csv"
    main(["text", "PMID:90000001", "--email", "t@uni.example", "--out", str(tmp_path / "pdfs"), "--state", "memory",
          "--no-cache", "--no-progress", "--report", str(report)])
    out, err = capsys.readouterr()
    assert report.is_file() and f"report written to {report}" in out + err


def test_demo_output_has_no_warning_line_names_its_hosts_and_keeps_no_folder(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code = main(["demo", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "WARNING" not in out + err, err
    assert "; met 1 retracted paper, 1 notice" in out  # demo.gone is retracted, and its notice is an input
    table = out.split("Per-host table:")[1]
    assert "UTC" in table
    for name in ("fast", "slow", "held", "unpaywall"):
        assert any(name in line.split()[:2] for line in table.splitlines()), table
    assert not list(tmp_path.glob("paperfetch-demo-*")), "the demo left its temporary folder"
    assert "removed" in out


def test_text_and_search_tables_fit_the_terminal_width(capsys, tmp_path, demo_env, monkeypatch):
    from paperfetch.demo.research import SEARCH_QUERY

    monkeypatch.setenv("COLUMNS", "80")
    main(["text", "PMID:90000001", "10.5555/demo.gone", "--email", "t@uni.example", "--out", str(tmp_path / "pdfs"),
          "--state", "memory", "--no-cache", "--no-progress"])
    main(["search", SEARCH_QUERY, "--email", "t@uni.example", "--state", "memory", "--no-cache", "--no-progress"])
    out, _ = capsys.readouterr()
    wide = [line for line in out.splitlines() if len(line) > 80]
    assert not wide, "\n".join(wide)
    assert "90000001" in out and "10.5555/demo.gone" in out


def test_library_warnings_offline_are_short_and_never_a_urllib3_repr(tmp_path, caplog):
    import logging

    from paperfetch import Retriever

    endpoints = OFFLINE
    caplog.set_level(logging.WARNING, logger="paperfetch")
    with Retriever(email="t@uni.example", out_dir=tmp_path, endpoints=endpoints, state="memory", cache=False,
                   progress=False, http_options={"network_retry_base_s": 0.01, "rate_limit_min_s": 0.0,
                                                 "rate_limit_max_s": 0.0, "host_intervals": unpaced(endpoints)}) as r:
        outcomes = r.download(["10.5555/a.b", "PMID:123"])
    assert set(outcomes["status"].astype(str)) <= {"network_error", "not_found"}
    messages = [record.getMessage() for record in caplog.records]
    assert messages
    for marker in ("_HTTPPool", "HTTPConnectionPool", "Max retries exceeded", "Caused by", "object at 0x"):
        assert not [m for m in messages if marker in m], messages


def _in_a_terminal(argv: list[str], env: dict[str, str], columns: int = 80) -> str:
    """Run ``paperfetch *argv*`` with stdout a pseudo-terminal *columns* wide (no $COLUMNS): what a user sees."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    chunks: list[bytes] = []

    def read() -> None:  # the pty's buffer is small: read while the command writes
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the command closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        done = subprocess.run([sys.executable, "-m", "paperfetch", *argv], stdout=follower, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, env=env, timeout=300)
    finally:
        os.close(follower)
    reader.join(timeout=30)
    os.close(leader)
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_download_table_in_80_columns_keeps_file_names_and_reasons_whole_and_cuts_the_input(tmp_path, demo_env):
    from paperfetch.demo import DEMO_INPUTS

    report = tmp_path / "report.csv"
    out = tmp_path / "a-folder-with-a-rather-long-name" / "and" / "deeper" / "pdfs"
    env = {**_env(), **{f"PAPERFETCH_{name.upper()}_URL": url for name, url in demo_env.endpoints.items()},
           "PAPERFETCH_DELAY_MIN": "0", "PAPERFETCH_DELAY_MAX": "0"}
    shown = _in_a_terminal(["download", *map(str, DEMO_INPUTS), "--email", "t@uni.example", "--out", str(out),
                            "--state", "memory", "--no-cache", "--no-progress", "--report", str(report)], env)
    table = shown.split("\nreport written to")[0]
    wide = [line for line in table.splitlines() if len(line) > 80]
    assert not wide, "\n".join(wide)
    rows = pd.read_csv(report)
    names = [Path(p).name for p in rows["path"].dropna()]
    reasons = [_flat(r) for r in rows["reason"].dropna()]
    assert len(names) >= 10 and len(reasons) >= 8
    for name in names:  # each file name whole on one line
        assert any(name in line for line in table.splitlines()), (name, table)
    for reason in reasons:  # each reason whole, wrapped under itself
        assert reason in _flat(table), (reason, table)
    assert "network: Connection refused since" in _flat(table) and "UTC" in _flat(table)
    cut = [line.split()[0] for line in table.splitlines()[1:] if line[:1] != " " and line.split()[0].endswith("…")]
    assert cut, table  # what is cut is the input
    assert all(any(str(i).startswith(c[:-1]) for i in DEMO_INPUTS) for c in cut), cut


def test_demo_in_80_columns_keeps_every_title_whole(tmp_path):
    from paperfetch.demo import DEMO_INPUTS

    shown = _in_a_terminal(["demo", "--no-progress", "--out", str(tmp_path / "demo")], _env())
    table = shown.split("\nOutcomes:")[0]
    wide = [line for line in table.splitlines() if len(line) > 80]
    assert not wide, "\n".join(wide)
    for title in ("A fast publisher's paper", "Retraction Note: Retracted and removed", "Only the landing page knows",
                  "Known to Semantic Scholar alone", "A preprint and its journal version"):
        assert title in _flat(table), (title, table)
    for value in map(str, DEMO_INPUTS[:8]):  # whole, or cut at the right to fit (the input is what is cut)
        assert value in table or any(w.endswith("…") and value.startswith(w[:-1]) for w in table.split()), value


def test_download_table_in_56_columns_names_every_source_asked_and_keeps_the_file_name(tmp_path, demo_env):
    report = tmp_path / "report.csv"
    out = tmp_path / "a-folder-with-a-rather-long-name" / "pdfs"
    env = {**_env(), **{f"PAPERFETCH_{name.upper()}_URL": url for name, url in demo_env.endpoints.items()},
           "PAPERFETCH_DELAY_MIN": "0", "PAPERFETCH_DELAY_MAX": "0"}
    shown = _in_a_terminal(["download", "10.5555/demo.closed", "https://doi.org/10.5555/demo.fast", "--email",
                            "t@uni.example", "--out", str(out), "--state", "memory", "--no-cache", "--no-progress",
                            "--report", str(report)], env, columns=56)
    table = shown.split("\nreport written to")[0]
    assert not [line for line in table.splitlines() if len(line) > 56], table
    rows = pd.read_csv(report).set_index("input")
    reason = rows.loc["10.5555/demo.closed", "reason"]
    asked = reason.removeprefix("no source has an open copy (asked: ").removesuffix(")").split(", ")
    assert len(asked) >= 5 and "…" not in reason, reason  # the library's reason is whole: every source asked
    assert _flat(reason) in _flat(table), (reason, table)  # and so is the terminal's, wrapped
    name = Path(rows.loc["https://doi.org/10.5555/demo.fast", "path"]).name
    assert any(name in line for line in table.splitlines()), (name, table)  # the file name whole on one line
    assert str(out) not in table  # the path cut from the left
