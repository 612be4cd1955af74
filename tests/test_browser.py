"""The dashboard in a real browser, live and saved.

* Live: Voilà serves ``notebooks/dashboard_live.ipynb`` and headless Chromium shows it. The test presses the
  notebook's start button, waits for the per-host table (``table.paperfetch-hosts``), checks that it changes
  while the batch runs, that the held and the suppressed publishers of the demo world say so in words, and,
  once the run has ended, that the table fits a 1024 px and a 1600 px window (no horizontal overflow), and a
  1024 px window with JupyterLab's file browser open (:func:`_check_sidebar_open`).
* Saved: ``notebooks/batch_from_dataframe.ipynb`` is executed (nbclient), saved without its widget state, and
  exported to HTML with nbconvert; Chromium opens that file with no kernel anywhere and finds every dashboard's
  final state ("paperfetch … interrupted/ended … UTC", the host table) instead of "model not found", again at
  both widths and with the file browser open.

With the file browser open (its default), JupyterLab at 1024 px leaves the notebook about 735 px (the
sidebar and its tab bar take the rest); the page's body is narrowed to that, so a dashboard gets about 650 px.
There the host table must not scroll sideways, no state text may be cut (the state column wraps, its reason
on a second line), the wide columns are left out, and the progress bar keeps its width.

* A paper's Markdown: ``Markdown(to_markdown(...))``, its plain variant and ``r.settings`` in a saved notebook:
  the front matter no heading, each citation once, no anchor in the plain variant, pools by their labels.

Screenshots (``live-1024.png``, ``live-1600.png``, ``live-1024-sidebar.png``, ``saved-1024.png``,
``saved-1600.png``, ``saved-1024-sidebar.png``, ``markdown-1024.png``, ``settings-1024.png`` …) are written to the
test's temporary folder and copied to ``$PAPERFETCH_SCREENSHOTS`` (default ``/tmp/screens``) to look at.

The pages are driven with Playwright (the Python package) and Debian's Chromium at ``/usr/bin/chromium``;
no browser is ever downloaded.

Skipped only when ``/usr/bin/chromium`` is missing *and* neither ``CI`` nor ``PAPERFETCH_REQUIRE_BROWSER``
is set; ``.ci/run`` installs Chromium and sets ``PAPERFETCH_REQUIRE_BROWSER``, so in CI a missing browser is a
failure.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path

import pytest

from tests._jupyter import write_python3_kernelspec

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "dashboard_live.ipynb"
CHROMIUM = "/usr/bin/chromium"
#: How this machine's Chromium must be started: headless, as root, and without reaching for Google's hosts.
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
START_BUTTON = "Download the demo batch"
SAVED_NOTEBOOK = REPO / "notebooks" / "batch_from_dataframe.ipynb"
WIDTHS = (1024, 1600)
#: The notebook's width in JupyterLab at 1024 px with the file browser open, and what a cell's output gets of it.
SIDEBAR_OPEN_PX = 735
SIDEBAR_OUTPUT_PX = 650
# Narrow the page as the file browser does: the body to the notebook's width and, since a page laid out
# in fixed boxes (Voilà's) ignores the body, each dashboard (its widget box, or its saved HTML) to the
# output's width.
NARROW = f"""() => {{
  document.body.style.width = '{SIDEBAR_OPEN_PX}px'; document.body.style.overflowX = 'hidden';
  for (const box of document.querySelectorAll("div.paperfetch-hosts-box")) {{
    const root = box.closest(".paperfetch-dashboard") || box.closest(".widget-vbox") || box.parentElement;
    root.style.width = '{SIDEBAR_OUTPUT_PX}px'; root.style.maxWidth = '{SIDEBAR_OUTPUT_PX}px';
  }}
}}"""
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

# Every host table's box and table: their widths, and whether the content is wider than the box.
OVERFLOW = """() => Array.from(document.querySelectorAll("div.paperfetch-hosts-box")).map(box => {
  const table = box.querySelector("table.paperfetch-hosts");
  return {box: [box.scrollWidth, box.clientWidth], table: table ? table.getBoundingClientRect().width : null,
          right: table ? table.getBoundingClientRect().right : null, window: window.innerWidth,
          rows: box.querySelectorAll("tr[data-host]").length,
          visible: Array.from(box.querySelectorAll("tr[data-host]")).filter(
            tr => tr.getBoundingClientRect().bottom <= box.getBoundingClientRect().bottom + 1).length,
          rowHeights: Array.from(box.querySelectorAll("tr[data-host]")).map(tr => tr.getBoundingClientRect().height)};
})"""

pytestmark = pytest.mark.slow

# One row per host as [host, cell texts...]; the header's cell texts first.
READ_TABLE = """() => {
  const table = document.querySelector("table.paperfetch-hosts");
  if (!table) return null;
  const header = Array.from(table.querySelectorAll("thead th")).map(th => th.innerText.trim());
  const rows = Array.from(table.querySelectorAll("tr[data-host]")).map(
    tr => [tr.dataset.host, ...Array.from(tr.cells).map(td => td.innerText.trim())]);
  return {header, rows};
}"""


def _need_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    required = [name for name in ("CI", "PAPERFETCH_REQUIRE_BROWSER") if os.environ.get(name)]
    if required:
        pytest.fail(f"{CHROMIUM} is missing and {' and '.join(required)} is set: install it "
                    "(apt-get install -y chromium; .ci/run does)")
    pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium); required when CI is set")




def _launch(p, tmp_path: Path):
    """Chromium with a fresh, empty profile in this test's folder (Playwright passes it as --user-data-dir)."""
    return p.chromium.launch_persistent_context(
        str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True,
    )


def _screens_dir() -> Path:
    return Path(os.environ.get("PAPERFETCH_SCREENSHOTS", "/tmp/screens"))


def _check_fits(page, name: str, tmp_path: Path, focus: str | None = None) -> None:
    """At each width: a screenshot (of the window, scrolled to *focus* when given), and every host table
    fits its box (no horizontal scroll) and the window, each row on one line, at least three rows visible
    in the box (or all of them)."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(300)  # let the layout settle
        if focus is not None:
            page.locator(focus).scroll_into_view_if_needed()
        shot = tmp_path / f"{name}-{width}.png"
        page.screenshot(path=str(shot))
        try:
            _screens_dir().mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, _screens_dir() / shot.name)
        except OSError:
            pass  # a copy to look at; the test's own folder has the original
        boxes = page.evaluate(OVERFLOW)
        assert boxes, f"{name}: no host table at {width} px"
        for box in boxes:
            scroll, client = box["box"]
            assert scroll <= client, f"{name} at {width} px: the host table overflows its box: {box}"
            assert box["right"] <= box["window"], f"{name} at {width} px: the host table is wider than the window: {box}"
            assert box["visible"] >= min(3, box["rows"]), f"{name} at {width} px: too few rows visible: {box}"
            heights = box["rowHeights"]
            # a held or suppressed host's reason takes a second (and at most a third) line; nothing more
            assert heights and max(heights) < 3.6 * min(heights), f"{name} at {width} px: a row wraps too far: {box}"


# Per host table: the state cells whose text is cut (wider than the cell), the visible header cells, the box.
STATE_CUT = """() => Array.from(document.querySelectorAll("div.paperfetch-hosts-box")).map(box => {
  const table = box.querySelector("table.paperfetch-hosts");
  const cells = Array.from(table.querySelectorAll("td.s"));
  const cut = cells.filter(td => td.scrollWidth > td.clientWidth + 1
      || Array.from(td.querySelectorAll("b")).some(b => b.scrollWidth > b.clientWidth + 1 || b.getClientRects().length > 2))
    .map(td => td.innerText);
  const shown = Array.from(table.querySelectorAll("thead th")).filter(th => getComputedStyle(th).display !== "none")
    .map(th => th.innerText.trim());
  return {cut, shown, box: [box.scrollWidth, box.clientWidth], states: cells.map(td => td.innerText.split("\\n")[0])};
})"""


def _check_sidebar_open(page, name: str, tmp_path: Path, focus: str | None = None) -> list[dict]:
    """At 1024 px with the file browser open (:data:`NARROW`; the dashboards stay narrowed after): a
    screenshot, no horizontal scroll in any host table, no state text cut, the wide columns left out.
    Returns what was read."""
    page.set_viewport_size({"width": 1024, "height": 900})
    page.evaluate(NARROW)
    page.wait_for_timeout(300)
    if focus is not None:
        page.locator(focus).scroll_into_view_if_needed()
    shot = tmp_path / f"{name}-1024-sidebar.png"
    page.screenshot(path=str(shot))
    try:
        _screens_dir().mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, _screens_dir() / shot.name)
    except OSError:
        pass
    tables = page.evaluate(STATE_CUT)
    assert tables, f"{name}: no host table with the file browser open"
    for table in tables:
        scroll, client = table["box"]
        assert scroll <= client, f"{name}, file browser open: the host table scrolls sideways: {table}"
        assert not table["cut"], f"{name}, file browser open: state text cut: {table['cut']}"
        assert "in flight" not in table["shown"] and "state" in table["shown"], table["shown"]
        assert client <= SIDEBAR_OUTPUT_PX, table
    page.evaluate("() => { document.body.style.width = ''; document.body.style.overflowX = ''; }")
    return tables


# Per dashboard: the bar's fill as a share of its track, the fill's colour, the counter's text.
FINAL_BARS = """() => Array.from(document.querySelectorAll("div.paperfetch-dashboard")).map(d => {
  const fill = d.querySelector(".paperfetch-fill"), track = d.querySelector(".paperfetch-track");
  return {share: fill.getBoundingClientRect().width / track.getBoundingClientRect().width,
          colour: getComputedStyle(fill).backgroundColor, counts: d.querySelector(".paperfetch-counts").innerText};
})"""
GREEN = "rgb(76, 175, 80)"

# Per host table: each row's host and state cells' alignment, the state words broken inside a word (an inline
# <b> on more lines than it has words) or wider than their cell, the visible header cells, the box.
NARROW_TABLE = """() => Array.from(document.querySelectorAll("div.paperfetch-hosts-box")).map(box => {
  const table = box.querySelector("table.paperfetch-hosts");
  const rows = Array.from(table.querySelectorAll("tr[data-host]"));
  const align = rows.map(tr => [getComputedStyle(tr.cells[0]).textAlign, getComputedStyle(tr.cells[1]).textAlign]);
  const broken = Array.from(table.querySelectorAll("td.s")).filter(td => td.scrollWidth > td.clientWidth + 1
      || Array.from(td.querySelectorAll("b")).some(b => b.getClientRects().length > b.innerText.trim().split(/\\s+/).length))
    .map(td => td.innerText);
  const shown = Array.from(table.querySelectorAll("thead th")).filter(th => getComputedStyle(th).display !== "none")
    .map(th => th.innerText.trim());
  const clipped = rows.filter(tr => tr.getBoundingClientRect().bottom > box.getBoundingClientRect().bottom + 1).length;
  return {align, broken, shown, box: [box.scrollWidth, box.clientWidth], width: table.getBoundingClientRect().width,
          rows: rows.length, clipped};
})"""
NARROW_PX = 540


def _screenshot(page, tmp_path: Path, name: str) -> None:
    """A screenshot of the window in the test's folder, copied to :func:`_screens_dir` to look at."""
    shot = tmp_path / name
    page.screenshot(path=str(shot))
    try:
        _screens_dir().mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, _screens_dir() / shot.name)
    except OSError:
        pass


def _check_narrow(page, name: str, tmp_path: Path, focus: str | None = None) -> list[dict]:
    """A saved notebook in a :data:`NARROW_PX` window: a screenshot; in every host table the host and state
    columns read left-aligned (the notebook's table CSS does not win), no state word is broken or cut, and
    nothing scrolls sideways. Returns what was read."""
    page.set_viewport_size({"width": NARROW_PX, "height": 900})
    page.wait_for_timeout(300)
    if focus is not None:
        page.locator(focus).scroll_into_view_if_needed()
    _screenshot(page, tmp_path, f"{name}-{NARROW_PX}.png")
    tables = page.evaluate(NARROW_TABLE)
    assert tables, f"{name}: no host table at {NARROW_PX} px"
    for table in tables:
        assert all(a == ["left", "left"] for a in table["align"]), f"{name} at {NARROW_PX} px: {table['align']}"
        assert not table["broken"], f"{name} at {NARROW_PX} px: state words broken or cut: {table}"
        scroll, client = table["box"]
        assert scroll <= client, f"{name} at {NARROW_PX} px: the host table scrolls sideways: {table}"
        assert "state" in table["shown"] and "credits" not in table["shown"], table["shown"]
        assert table["rows"] and not table["clipped"], f"{name} at {NARROW_PX} px: the frozen table hides rows: {table}"
    return tables


# Each summary plot's image and the output it is in (its content box): their widths, and the image's own width.
PLOTS = """() => Array.from(document.querySelectorAll("div.paperfetch-summary-plot img")).map(img => {
  const output = img.closest("div.paperfetch-summary-plot").parentElement, style = getComputedStyle(output);
  return {width: img.getBoundingClientRect().width, natural: img.naturalWidth,
          output: output.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)};
})"""


def _check_plots(page, tmp_path: Path) -> None:
    """At 1024 px each summary plot fills its output's width, drawn at about that width (its text as drawn)."""
    page.set_viewport_size({"width": 1024, "height": 900})
    page.wait_for_timeout(300)
    plots = page.evaluate(PLOTS)
    assert plots, "no summary plot in the saved notebook"
    page.locator("div.paperfetch-summary-plot >> nth=-1").scroll_into_view_if_needed()
    _screenshot(page, tmp_path, "saved-plot-1024.png")
    for plot in plots:
        assert abs(plot["width"] - plot["output"]) <= 2, f"the plot is not as wide as its output: {plot}"
        assert 0.75 <= plot["width"] / plot["natural"] <= 1.25, f"the plot is scaled far from its size: {plot}"


def _use_this_kernel(monkeypatch, tmp_path: Path) -> None:
    """Notebooks run in this interpreter: a ``python3`` kernelspec pointing at it, first on JUPYTER_PATH."""
    monkeypatch.setenv("JUPYTER_PATH", str(write_python3_kernelspec(tmp_path / "jupyter")))
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")


def _notebook(cells: list[str]):
    """A notebook of these code cells, for the ``python3`` kernel."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in cells])
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    return nb


def _open_at_1024(browser, exported: Path):
    """A new page 1024 px wide showing the exported notebook *exported*."""
    page = browser.new_page()
    page.set_viewport_size({"width": 1024, "height": 900})
    page.goto(exported.as_uri(), wait_until="domcontentloaded", timeout=60_000)
    return page


def _run_saved_and_exported(nb, tmp_path: Path, name: str) -> tuple[Path, "object"]:
    """Execute *nb* in a kernel (this interpreter, in *tmp_path*), save it without its widget state, and
    export it to HTML as nbconvert does: the file a colleague opens. Returns (the HTML file, the saved notebook)."""
    import nbclient
    import nbconvert
    import nbformat

    nbclient.NotebookClient(nb, kernel_name="python3", timeout=120, startup_timeout=60,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    nb.metadata.pop("widgets", None)  # saved without the widget state: what "model not found" came from
    saved = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, saved)
    reopened = nbformat.read(saved, as_version=4)
    exported = tmp_path / f"{name}.html"
    body, _ = nbconvert.HTMLExporter().from_notebook_node(reopened)
    exported.write_text(body, encoding="utf-8")
    return exported, reopened


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Voila:
    """``voila NOTEBOOK`` on 127.0.0.1 as a subprocess, its output kept for the failure message."""

    def __init__(self, notebook: Path, workdir: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        jupyter = workdir / "jupyter"
        env = dict(os.environ)
        env.update(
            JUPYTER_PATH=str(write_python3_kernelspec(jupyter / "path")),  # the kernel is this interpreter
            JUPYTER_DATA_DIR=str(jupyter / "data"),        # nothing is written to the user's ~/.local
            JUPYTER_CONFIG_DIR=str(jupyter / "config"),    # nor read from the user's Jupyter config
            JUPYTER_RUNTIME_DIR=str(jupyter / "runtime"),
            PYDEVD_DISABLE_FILE_VALIDATION="1",
        )
        self.output: deque[str] = deque(maxlen=400)
        self._ready = threading.Event()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "voila", str(notebook), "--no-browser", f"--port={self.port}",
             "--Voila.ip=127.0.0.1", "--Voila.port_retries=0", "--show_tracebacks=True"],
            cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, start_new_session=True,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line.rstrip())
            if f":{self.port}/" in line:  # "Voilà is running at: http://127.0.0.1:PORT/"
                self._ready.set()

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.1):
            if self.proc.poll() is not None:
                raise AssertionError(f"voila exited with {self.proc.returncode}:\n{self.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"voila did not start within {timeout:.0f} s:\n{self.log()}")

    def log(self) -> str:
        return "\n".join(self.output)

    def stop(self) -> None:
        """SIGTERM (Voilà shuts its kernels down), then SIGKILL to its process group if it lingers."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


def _done_total(table: dict) -> int | None:
    header = table["header"]
    if "done" not in header:
        return None
    column = header.index("done") + 1  # rows start with the data-host value
    return sum(int(row[column]) for row in table["rows"] if row[column].isdigit())


@pytest.mark.timeout(240)
def test_dashboard_table_updates_live_in_chromium(tmp_path):
    _need_chromium()
    from playwright.sync_api import sync_playwright

    voila = Voila(NOTEBOOK, tmp_path)
    console: deque[str] = deque(maxlen=100)
    try:
        voila.wait_ready(60)
        with sync_playwright() as p:
            browser = _launch(p, tmp_path)
            try:
                page = browser.new_page()
                page.on("console", lambda m: console.append(f"{m.type}: {m.text[:300]}"))
                page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
                page.goto(voila.url, timeout=90_000)

                # The notebook has run in Voilà's kernel; its button is a live widget once the page has connected.
                button = page.get_by_role("button", name=START_BUTTON)
                button.wait_for(state="visible", timeout=90_000)
                button.click()
                page.wait_for_selector("table.paperfetch-hosts tr[data-host]", timeout=30_000)

                first = page.evaluate(READ_TABLE)
                assert first and first["rows"], first
                reads = [first]
                deadline = time.monotonic() + 30
                changed = False
                while time.monotonic() < deadline:
                    time.sleep(1.0)
                    current = page.evaluate(READ_TABLE)
                    reads.append(current)
                    grew = len(current["rows"]) != len(first["rows"])
                    done_first, done_now = _done_total(first), _done_total(current)
                    progressed = (done_now != done_first) if done_first is not None else current != first
                    if grew or progressed:
                        changed = True
                        break
                assert changed, f"the per-host table did not change while the batch ran: {reads[0]} ... {reads[-1]}"

                # The demo's held (503 + Retry-After: 3600) and forbidden (403) publishers show in words.
                page.wait_for_function(
                    """() => { const t = document.querySelector("table.paperfetch-hosts");
                               return t && t.innerText.includes("HELD") && t.innerText.includes("SUPPRESSED"); }""",
                    timeout=30_000,
                )
                held = page.locator("table.paperfetch-hosts tr[data-host]", has_text="HELD")
                suppressed = page.locator("table.paperfetch-hosts tr[data-host]", has_text="SUPPRESSED")
                assert held.count() >= 1 and suppressed.count() >= 1

                # The run ends: the countdowns stop, the dashboard says so, and its table fits both widths.
                page.wait_for_function(
                    """() => { const c = document.querySelector(".paperfetch-counts");
                               return c && c.innerText.includes("ended"); }""",
                    timeout=90_000,
                )
                final = page.evaluate(READ_TABLE)
                assert not any(" left" in cell for row in final["rows"] for cell in row), final
                assert any("HELD until" in cell for row in final["rows"] for cell in row), final
                _check_fits(page, "live", tmp_path)
                _check_sidebar_open(page, "live", tmp_path)
                bar = page.evaluate("""() => { const b = document.querySelector(".widget-progress .progress");
                                               return b ? b.getBoundingClientRect().width : null; }""")
                assert bar is None or bar >= 100, f"the progress bar shrank to {bar} px"
            finally:
                browser.close()
    except BaseException:
        print("--- voila output ---\n" + voila.log())
        print("--- browser console ---\n" + "\n".join(console))
        raise
    finally:
        voila.stop()


@pytest.mark.timeout(240)
def test_a_saved_notebook_shows_the_final_dashboards_without_a_kernel(tmp_path, monkeypatch):
    _need_chromium()
    import nbformat
    from playwright.sync_api import sync_playwright

    _use_this_kernel(monkeypatch, tmp_path)
    exported, reopened = _run_saved_and_exported(nbformat.read(SAVED_NOTEBOOK, as_version=4), tmp_path, "saved")

    # In the file: every dashboard output is its final state, as HTML and as text, and no widget view.
    dashboards = [
        output.data for cell in reopened.cells if cell.cell_type == "code" for output in cell.outputs
        if "paperfetch-dashboard" in output.get("data", {}).get("text/html", "")
    ]
    assert len(dashboards) == 3, dashboards  # the interrupted run, r.dashboard() after it, the resumed run
    for data, how in zip(dashboards, ("interrupted", "interrupted", "ended")):
        assert WIDGET_VIEW not in data
        assert data["text/plain"].startswith(f"paperfetch {how} ") and "VBox(" not in data["text/plain"]
        assert len(data["text/html"].encode()) < 15_000, len(data["text/html"].encode())
    # one answer per notebook: r.dashboard() after the interrupted run says what that run's dashboard says
    assert dashboards[0]["text/plain"] == dashboards[1]["text/plain"]

    console: deque[str] = deque(maxlen=100)
    with sync_playwright() as p:
        browser = _launch(p, tmp_path)
        try:
            page = browser.new_page()
            page.on("console", lambda m: console.append(f"{m.type}: {m.text[:300]}"))
            page.goto(exported.as_uri(), wait_until="domcontentloaded", timeout=60_000)
            page.wait_for_selector("div.paperfetch-dashboard table.paperfetch-hosts tr[data-host]", timeout=30_000)
            text = page.inner_text("body")
            assert "model not found" not in text
            shown = page.locator("div.paperfetch-dashboard")
            assert shown.count() == 3, "\n".join(console)
            for i, how in zip(range(shown.count()), ("interrupted", "interrupted", "ended")):
                assert how in shown.nth(i).locator(".paperfetch-counts").inner_text()
            assert "not started" in shown.nth(0).inner_text()  # the interrupted run's queued hosts, after its end
            held = page.locator("div.paperfetch-dashboard tr[data-host]", has_text="HELD")
            assert held.count() >= 1 and "HELD until" in held.first.inner_text()
            # the interrupted run's bar: filled to the rows that finished, not green; the resumed run's green
            page.set_viewport_size({"width": 1024, "height": 900})
            shown.nth(0).scroll_into_view_if_needed()
            _screenshot(page, tmp_path, "saved-interrupted-1024.png")
            bars = page.evaluate(FINAL_BARS)
            interrupted, resumed = bars[0], bars[2]
            finished, total = map(int, interrupted["counts"].split(" · ")[0].split(" / "))
            assert finished < total and "stopped" in interrupted["counts"], interrupted
            assert abs(interrupted["share"] - finished / total) < 0.02 and interrupted["colour"] != GREEN, interrupted
            assert resumed["share"] > 0.98 and "interrupted" not in resumed["counts"], resumed
            _check_plots(page, tmp_path)
            _check_narrow(page, "saved", tmp_path, focus="div.paperfetch-dashboard >> nth=0")
            _check_fits(page, "saved", tmp_path, focus="div.paperfetch-dashboard >> nth=2")
            _check_sidebar_open(page, "saved", tmp_path, focus="div.paperfetch-dashboard >> nth=0")
            # style_domain_status(r.domain_status()): formatted for people, and about a window wide, not 2,100 px
            page.set_viewport_size({"width": 1024, "height": 900})
            status = page.locator("table.paperfetch-domain-status")
            assert status.count() == 1
            cells = status.locator("td").all_inner_texts()
            assert cells and not {"nan", "None", "NaT", "<NA>", "False"} & {c.strip() for c in cells}
            width = status.evaluate("t => t.getBoundingClientRect().width")
            assert width <= 1150, f"style_domain_status is {width:.0f} px wide"
            status.scroll_into_view_if_needed()
            shot = tmp_path / "domain-status-1024.png"
            page.screenshot(path=str(shot))
            try:
                shutil.copy(shot, _screens_dir() / shot.name)
            except OSError:
                pass
        finally:
            browser.close()


# ---------------------------------------------------------------------- a job's Stop button
JOB_NOTEBOOK_CELLS = [
    # the kernel runs in the test's folder: the checkout goes on its path for tests._job_world
    f"import sys\nsys.path.insert(0, {str(REPO)!r})\n"
    "from paperfetch import Retriever\nfrom tests._job_world import JobWorld\n"
    "world = JobWorld(n=30, crawl_delay=1.0, base_ip=222).start()\n"
    "r = Retriever(email='you@uni.example', out_dir='pdfs', endpoints=world.endpoints, sources=('openalex',),\n"
    "              state='memory', verbosity=0, delay_min_s=0.0, delay_max_s=0.0, cache=False)",
    "job = r.start(world.dois)\njob",
]


@pytest.mark.timeout(240)
def test_the_stop_button_of_a_background_job_stops_it_in_chromium(tmp_path):
    """Voilà shows a running ``r.start()`` job: its progress line has an ETA, the page fits 1024 px, and
    pressing the real Stop button stops the batch (the line says so: finished rows kept, the rest stopped)."""
    _need_chromium()
    import nbformat
    from playwright.sync_api import sync_playwright

    notebook = tmp_path / "job_live.ipynb"
    nb = _notebook(JOB_NOTEBOOK_CELLS)
    nbformat.write(nb, notebook)
    voila = Voila(notebook, tmp_path)
    console: deque[str] = deque(maxlen=100)
    try:
        voila.wait_ready(60)
        with sync_playwright() as p:
            browser = _launch(p, tmp_path)
            try:
                page = browser.new_page()
                page.set_viewport_size({"width": 1024, "height": 900})
                page.on("console", lambda m: console.append(f"{m.type}: {m.text[:300]}"))
                page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
                page.goto(voila.url, timeout=90_000)
                button = page.get_by_role("button", name="Stop")
                button.wait_for(state="visible", timeout=90_000)
                page.wait_for_function(
                    """() => { const l = document.querySelector(".paperfetch-job-line");
                               return l && /ETA \\d/.test(l.innerText); }""", timeout=30_000)
                page.wait_for_selector("table.paperfetch-hosts tr[data-host]", timeout=30_000)
                line = page.locator(".paperfetch-job-line").first.inner_text()
                assert "finished" in line and "busy" in line and "ETA" in line, line
                fits = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
                assert fits[0] <= fits[1], f"the job dashboard is wider than 1024 px: {fits}"
                _screens_dir().mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(_screens_dir() / "job-running-1024.png"))

                button.click()
                page.wait_for_function(
                    """() => Array.from(document.querySelectorAll(".paperfetch-job-line"))
                                  .some(l => l.innerText.includes("stopped"))""",
                    timeout=20_000)
                page.wait_for_function(  # the dashboard's final redraw, after the job's line
                    """() => { const c = document.querySelector(".paperfetch-counts");
                               return c && c.innerText.includes("stopped"); }""", timeout=20_000)
                page.wait_for_timeout(500)
                _screenshot(page, tmp_path, "job-stopped-1024.png")
                text = page.locator(".paperfetch-job-line").first.inner_text()
                assert "stopped" in text and "ETA" not in text, text
                # the dashboard says "stopped", not "ended"; its bar is filled to the rows that finished, not green
                counts = page.locator(".paperfetch-counts").first.inner_text()
                finished, total = map(int, counts.split(" · ")[0].split(" / "))
                assert " ended " not in counts and finished < total, counts
                bar = page.evaluate("""() => { const b = document.querySelector(".widget-hprogress .progress-bar");
                                               return [b.className, b.getBoundingClientRect().width,
                                                       b.parentElement.getBoundingClientRect().width]; }""")
                # orange when some rows have their PDF, red when none has (a Stop pressed before the first)
                expected = "progress-bar-warning" if "downloaded" in counts else "progress-bar-danger"
                assert "progress-bar-success" not in bar[0] and expected in bar[0], (bar, counts)
                assert abs(bar[1] / bar[2] - finished / total) < 0.05, (bar, counts)
            finally:
                browser.close()
    except BaseException:
        print("--- voila output ---\n" + voila.log())
        print("--- browser console ---\n" + "\n".join(console))
        raise
    finally:
        voila.stop()


# ---------------------------------------------------------------------- an offline run, saved
OFFLINE_CELLS = [
    # every service on a loopback port nothing listens on: each host refuses the connection
    "import socket\nfrom paperfetch import Retriever\n\n"
    "def closed_port():\n    with socket.socket() as s:\n        s.bind(('127.0.0.1', 0))\n        return s.getsockname()[1]\n\n"
    "names = ('unpaywall', 'openalex', 'crossref', 'europepmc', 'ncbi_idconv', 'ncbi_eutils', 'arxiv', 'doi',\n"
    "         'semanticscholar', 'biorxiv')\n"
    "r = Retriever(email='you@uni.example', out_dir='pdfs', endpoints={n: f'http://127.0.0.1:{closed_port()}' for n in names},\n"
    "              state='memory', cache=False, verbosity=0, delay_min_s=0.0, delay_max_s=0.0,\n"
    "              http_options={'network_retry_base_s': 0.05})",
    "out = r.download(['10.5555/a.b', '10.5555/c.d', '10.5555/e.f'])",
]


@pytest.mark.timeout(240)
def test_a_saved_offline_run_reads_red_in_chromium(tmp_path, monkeypatch):
    """An offline run, saved and exported: the dashboard says no service was reached, its bar is full (every
    row has its outcome) and red (none has a PDF), at 1024 px and in a 540 px window."""
    _need_chromium()
    from playwright.sync_api import sync_playwright

    _use_this_kernel(monkeypatch, tmp_path)
    nb = _notebook(OFFLINE_CELLS)
    exported, reopened = _run_saved_and_exported(nb, tmp_path, "offline")
    plain = [o.data["text/plain"] for o in reopened.cells[1].outputs if "text/plain" in o.get("data", {})]
    assert plain and plain[0].startswith("paperfetch ended ") and "network_error 3" in plain[0], plain
    with sync_playwright() as p:
        browser = _launch(p, tmp_path)
        try:
            page = _open_at_1024(browser, exported)
            page.wait_for_selector("div.paperfetch-dashboard table.paperfetch-hosts tr[data-host]", timeout=30_000)
            page.locator("div.paperfetch-dashboard").first.scroll_into_view_if_needed()
            _screenshot(page, tmp_path, "offline-1024.png")
            (bar,) = page.evaluate(FINAL_BARS)
            assert bar["counts"].startswith("3 / 3 · ended ") and "network error 3" in bar["counts"], bar
            assert "UNREACHABLE" in bar["counts"] and bar["share"] > 0.98, bar
            assert bar["colour"] == "rgb(244, 67, 54)", bar  # red: no row has its PDF
            assert "could not reach any service" in page.locator("div.paperfetch-dashboard").inner_text()
            tables = _check_narrow(page, "offline", tmp_path, focus="div.paperfetch-dashboard")
            assert all(len(t["align"]) >= 3 for t in tables), tables
        finally:
            browser.close()


# ---------------------------------------------------------------------- a paper's Markdown, the settings
MARKDOWN_CELLS = [
    "from IPython.display import Markdown\nfrom paperfetch import Retriever\nfrom paperfetch.demo import DemoWorld\n"
    "from paperfetch.demo.fulltext import JATS_DOIS\nfrom paperfetch.fulltext import to_markdown\n"
    "world = DemoWorld(base_ip=226).start()\n"
    "r = Retriever(email='your.name@your-university.edu', out_dir='pdfs', endpoints=world.endpoints, state='memory',\n"
    "              cache=False, verbosity=0, progress=False, dashboard=False)\n"
    "text = r.fulltext(JATS_DOIS[:1])",
    "Markdown(to_markdown(text)[JATS_DOIS[0]])",
    "Markdown(to_markdown(text, flavor='plain')[JATS_DOIS[0]])",
    "r.settings",
    "r.download(['10.5555/demo.fast', '10.5555/demo.closed'])\nr.domain_status()[['host', 'pool', 'requests']]",
    "r.close()\nworld.stop()",
]
# Each shown Markdown document: its headings, its text, its anchors and its links within the page (not the
# headings' own permalinks, which nbconvert adds).
MARKDOWN_OUTPUTS = """() => Array.from(document.querySelectorAll('[data-mime-type="text/markdown"]')).map(out => ({
  headings: Array.from(out.querySelectorAll("h1, h2, h3, h4, h5, h6")).map(h => [h.tagName, h.innerText.trim()]),
  text: out.innerText, anchors: out.querySelectorAll("a[id]").length,
  links: Array.from(out.querySelectorAll('a[href^="#"]:not(.anchor-link)')).map(a => [a.getAttribute("href"), a.innerText]),
}))"""


@pytest.mark.timeout(240)
def test_a_paper_s_markdown_and_the_settings_read_as_written_for_people_in_chromium(tmp_path, monkeypatch):
    """A notebook showing ``Markdown(to_markdown(...))``, its plain variant and ``r.settings``, saved and exported:
    the front matter is fields under a rule, not a heading; the title is the one top heading; each citation
    reads once, its printed label linked; the plain variant has no anchor and no link; Crossref's pools are
    shown by their labels and no pool key (``#polite-``) is anywhere on the page."""
    _need_chromium()
    from playwright.sync_api import sync_playwright

    _use_this_kernel(monkeypatch, tmp_path)
    nb = _notebook(MARKDOWN_CELLS)
    exported, _ = _run_saved_and_exported(nb, tmp_path, "markdown")
    with sync_playwright() as p:
        browser = _launch(p, tmp_path)
        try:
            page = _open_at_1024(browser, exported)
            page.wait_for_selector('[data-mime-type="text/markdown"] h1', timeout=30_000)
            full, plain = page.evaluate(MARKDOWN_OUTPUTS)
            page.locator('[data-mime-type="text/markdown"] >> nth=0').scroll_into_view_if_needed()
            _screenshot(page, tmp_path, "markdown-1024.png")
            assert full["headings"][0] == ["H1", "A clip-on sensor for the water content of plant stems"], full["headings"]
            fields = [h for h in full["headings"] + plain["headings"] if ":" in h[1] or "doi" in h[1].lower()]
            assert not fields, fields  # the front matter is no heading
            assert 'doi: "10.5555/demo.jats.sensor"' in full["text"] and "sha256: " in full["text"]
            assert "the plant is 1." in full["text"] and ["#CR1", "1"] in full["links"]  # printed once, linked
            assert "[^" not in full["text"] and "1[" not in full["text"] and full["anchors"] >= 8
            assert "the plant is 1." in plain["text"] and plain["anchors"] == 0 and plain["links"] == []
            page.locator('[data-mime-type="text/markdown"] >> nth=1').scroll_into_view_if_needed()
            _screenshot(page, tmp_path, "markdown-plain-1024.png")
            body = page.inner_text("body")
            assert "#polite-" not in body and "#public-" not in body
            pools = page.locator("td", has_text="(list queries)")
            assert pools.count() == 1 and page.locator("td", has_text="(single lookups)").count() == 1
            pools.first.scroll_into_view_if_needed()
            _screenshot(page, tmp_path, "settings-1024.png")
        finally:
            browser.close()
