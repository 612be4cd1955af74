"""What README.md and docs/outcomes.md say about the outcomes frame is what the library does.

The README's column list is compared with the columns ``Retriever.download`` really returns in the demo
world, its status list and docs/outcomes.md's status table with :class:`paperfetch.outcomes.Status`, and
docs/outcomes.md's column table documents every column once.
"""

from __future__ import annotations

import html
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from paperfetch import Retriever
from paperfetch.demo import DemoWorld
from paperfetch.outcomes import COLUMNS, Status
from tests._quick import unpaced

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
OUTCOMES_MD = (REPO / "docs" / "outcomes.md").read_text(encoding="utf-8")


def _readme_list(after: str) -> list[str]:
    """The comma-separated backticked list that follows *after* in the README's outcomes section."""
    section = README.split("### The outcomes DataFrame", 1)[1]
    body = section.split(after, 1)[1]
    match = re.search(r"`([^`]+)`", body)
    assert match is not None
    return [name.strip() for name in match.group(1).split(",")]


def _unpaced(world: DemoWorld) -> dict:
    """No gap between requests, no service's own interval: the runs here are read for columns and counts."""
    return {"rate_limit_min_s": 0.0, "rate_limit_max_s": 0.0, "host_intervals": unpaced(world.endpoints)}


@pytest.fixture(scope="module")
def demo_columns(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    world = DemoWorld().start()
    try:
        out = tmp_path_factory.mktemp("pdfs")
        with Retriever(endpoints=world.endpoints, email="your.name@your-university.edu", state="memory",
                       cache=False, out_dir=out, http_options=_unpaced(world)) as r:
            frame = r.download(["10.5555/demo.fast", "10.5555/demo.gone", "not an id"])
    finally:
        world.stop()
    return list(frame.columns)


def test_readme_column_list_is_the_frame_columns(demo_columns: list[str]) -> None:
    assert _readme_list("the columns never depend on flags:") == demo_columns
    assert demo_columns == list(COLUMNS)
    assert f"({len(demo_columns)} columns)" in README


def test_readme_status_list_is_status() -> None:
    assert _readme_list("`status` is categorical:") == [s.value for s in Status]


def test_no_doc_names_a_status_the_library_lacks() -> None:
    """A batch left unfinished is ``stopped`` (not ``interrupted``) wherever the docs name a status."""
    docs = README + "".join(path.read_text(encoding="utf-8") for path in sorted((REPO / "docs").glob("*.md")))
    named = set(re.findall(r"status(?:es)? `([a-z_]+)`", docs))
    assert "stopped" in named and named <= {s.value for s in Status}
    assert "interrupted" not in {s.value for s in Status}


def _outcomes_table_rows(heading: str) -> list[str]:
    """The first backticked cell of every row of the first table after *heading* in docs/outcomes.md."""
    body = OUTCOMES_MD.split(heading, 1)[1]
    rows: list[str] = []
    started = False
    for line in body.splitlines():
        if line.startswith("|"):
            started = True
            rows.append(line.split("|")[1])
        elif started:
            break
    return rows


def test_outcomes_md_documents_every_column_once() -> None:
    names: list[str] = []
    for cell in _outcomes_table_rows("| column | dtype | meaning |")[1:]:
        names += re.findall(r"`([a-z0-9_]+)`", cell)
    duplicated = {n for n in names if names.count(n) > 1}
    assert not duplicated
    assert set(names) == set(COLUMNS)
    assert "all sixteen are categories" in OUTCOMES_MD and len(Status) == 16


def test_outcomes_md_status_table_is_status() -> None:
    cells = _outcomes_table_rows("## Statuses")
    names = [m.group(1) for cell in cells if (m := re.search(r"`([a-z_]+)`", cell))]
    assert sorted(names) == sorted(s.value for s in Status) and len(set(names)) == len(names)


def _test_command(text: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith("python3 -m venv") and "pytest" in line]
    assert len(lines) == 1, lines
    return lines[0]


def test_index_test_command_is_the_readme_one() -> None:
    index = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    assert _test_command(index) == _test_command(README)


def test_index_dependency_list_is_pyproject() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {re.split(r"[<>=;\[ ]", dep, maxsplit=1)[0].lower() for dep in project["dependencies"]}
    index = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    sentence = re.search(r"and installs (.*?)\.\n", index, re.S)
    assert sentence is not None
    named = set(re.findall(r"[a-z][a-z0-9_-]*", sentence.group(1).replace("and ", " ").replace("on Python", " ")))
    named -= {"and", "on", "python"}
    assert named == declared


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PAPERFETCH_CONFIG": str(tmp_path / "none.toml"), "HOME": str(tmp_path), "COLUMNS": "130"}


def _cli_md() -> str:
    return (REPO / "docs" / "cli.md").read_text(encoding="utf-8")


def _flags(text: str) -> list[str]:
    return [flag for flag in re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", text) if flag != "-h"]


@pytest.mark.parametrize("command", ["download", "demo", "config"])
def test_cli_md_synopsis_has_the_help_s_order(command: str, tmp_path: Path) -> None:
    """docs/cli.md's synopsis lists the options where ``paperfetch COMMAND --help`` does (``-v | -q`` first)."""
    done = subprocess.run([sys.executable, "-m", "paperfetch", command, "--help"], capture_output=True, text=True,
                          env=_env(tmp_path), timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    usage = done.stdout.split("\n\n", 1)[0]
    synopsis = re.search(rf"^paperfetch {command} (\[.*?)\n```", _cli_md(), re.M | re.S)
    assert synopsis is not None
    assert _flags(synopsis.group(1)) == _flags(usage.split(command, 1)[1])


def test_cli_md_download_table_has_the_help_s_order(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "paperfetch", "download", "--help"], capture_output=True,
                          text=True, env=_env(tmp_path), timeout=120, cwd=tmp_path)
    usage = _flags(done.stdout.split("\n\n", 1)[0].split("download", 1)[1])
    table = _cli_md().split("paperfetch download [IDS", 1)[1].split("\n\n| flag |", 1)[1].split("\n\n", 1)[0]
    first_flags = [_flags(row.split("|")[1])[0] for row in table.splitlines()[2:] if _flags(row.split("|")[1])]
    assert first_flags[0] == usage[0] == "-v"
    assert [f for f in first_flags if f in usage] == [f for f in usage if f in first_flags]


def test_demo_serve_prints_what_cli_md_shows(tmp_path: Path) -> None:
    """Every line docs/cli.md shows of ``paperfetch demo --serve`` is printed, in that order (ports aside)."""
    shown = _cli_md().split("`paperfetch demo --serve` prints", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    proc = subprocess.Popen([sys.executable, "-m", "paperfetch", "demo", "--serve"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=_env(tmp_path), cwd=tmp_path)
    printed: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            printed.append(line.rstrip("\n"))
            if line.startswith("# Ctrl-C stops the world"):
                break
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)

    def ports(line: str) -> str:
        return re.sub(r"127\.0\.0\.\d+:\d+", "HOST", line)

    real = [ports(line) for line in printed]
    at = 0
    for line in shown.splitlines():
        if line == "…":
            continue
        head = ports(line.split("…", 1)[0])
        found = next((i for i in range(at, len(real)) if real[i].startswith(head) and ("…" in line or real[i] == head)),
                     None)
        assert found is not None, (line, printed)
        at = found + 1


def test_the_demo_says_why_its_bar_counts_fewer_papers_than_inputs(tmp_path: Path) -> None:
    from paperfetch.demo import DEMO_INPUTS

    done = subprocess.run([sys.executable, "-m", "paperfetch", "demo", "--no-progress"], capture_output=True,
                          text=True, env=_env(tmp_path), timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    line = next((line for line in done.stdout.splitlines() if " inputs " in line and "HTTP requests" in line), "")
    found = re.match(r"(\d+) inputs \((\d+) distinct papers, (\d+) invalid, (\d+) the same paper again\) in ", line)
    assert found is not None, done.stdout
    inputs, papers, invalid, again = map(int, found.groups())
    assert inputs == len(DEMO_INPUTS) == papers + invalid + again
    assert (papers, invalid, again) == (23, 2, 1)  # the bar's 23/23: the DOI given twice once, two invalid inputs
    assert f"{len(DEMO_INPUTS)} inputs ({papers} distinct papers" in _cli_md()


def test_fulltext_md_s_zero_requests_and_markdown_title_hold(tmp_path: Path) -> None:
    """docs/fulltext.md: a second ``r.fulltext`` of the same ids sends 0 requests even from a new Retriever,
    ``r.fulltext_tables`` after ``r.fulltext`` sends 0, and the Markdown's front matter has the title."""
    from paperfetch.fulltext import to_markdown

    doc = (REPO / "docs" / "fulltext.md").read_text(encoding="utf-8")
    assert "**0 requests**, even from a new Retriever" in doc and "sends **0 requests**" in doc
    assert "YAML front matter** with every one of the keys `title," in doc
    ids = ["10.5555/demo.fast", "10.5555/demo.jats.sensor"]
    options = {"email": "your.name@your-university.edu", "state": "memory", "cache": False, "out_dir": tmp_path,
               "progress": False}
    with DemoWorld() as world:
        options["http_options"] = _unpaced(world)  # the requests are counted, not paced
        with Retriever(endpoints=world.endpoints, **options) as r:
            first = r.fulltext(ids)
            before = world.requests_served()
            assert len(r.fulltext_tables(ids)) == len(first.tables) >= 1
            assert world.requests_served() == before
        markdown = to_markdown(first)
        before = world.requests_served()
        with Retriever(endpoints=world.endpoints, **options) as again:
            second = again.fulltext(ids)
        assert world.requests_served() == before
    assert len(second.paragraphs) == len(first.paragraphs) > 0
    page = markdown["10.5555/demo.fast"] if "10.5555/demo.fast" in markdown else next(iter(markdown.values()))
    assert page.startswith("---\ntitle: \"A fast publisher's paper\"\n")


def test_background_md_says_what_a_saved_job_shows(tmp_path: Path) -> None:
    """A saved notebook has the job's static HTML: no Stop button, but the job's last line (docs/background.md)."""
    doc = (REPO / "docs" / "background.md").read_text(encoding="utf-8")
    assert "there is no button in it, but the job's last line" in doc
    with DemoWorld() as world, Retriever(endpoints=world.endpoints, email="your.name@your-university.edu",
                                         state="memory", cache=False, out_dir=tmp_path, progress=False) as r:
        job = r.start(["10.5555/demo.slow1", "10.5555/demo.slow2", "10.5555/demo.slow3"])
        job.stop()
        job.result()
        view = job.dashboard_view
        assert view is not None
        view.close()
        assert view.wait_drawn(30)
        saved = view.static_bundle()["text/html"]
    assert "<button" not in saved.lower() and "Stop" not in saved.replace("stopped", "")
    assert html.escape(job.progress_line()) in saved
    counts = re.fullmatch(r"(\d)/3 finished, (\d) stopped in [\d.]+ s", job.progress_line())  # no row: stopped
    assert counts is not None and int(counts[1]) + int(counts[2]) == 3
    assert re.search(r'paperfetch-counts"><b>\d / 3</b> · <b>stopped ', saved)  # the dashboard says stopped too
