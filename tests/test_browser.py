"""The live dashboard in a real browser: Voilà serves ``notebooks/dashboard_live.ipynb``, headless Chromium shows it.

The page is driven with Playwright (the Python package) and Debian's Chromium at ``/usr/bin/chromium``;
no browser is ever downloaded. The test presses the notebook's start button, waits for the per-host table
(``table.paperfetch-hosts``), and checks that it changes while the batch runs, and that the held and the
suppressed publishers of the demo world say so in words.

Skipped only when ``/usr/bin/chromium`` is missing *and* neither ``CI`` nor ``PAPERFETCH_REQUIRE_BROWSER``
is set; ``.ci/run`` installs Chromium and sets ``PAPERFETCH_REQUIRE_BROWSER``, so in CI a missing browser is a
failure.
"""

from __future__ import annotations

import os
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


@pytest.mark.timeout(180)
def test_dashboard_table_updates_live_in_chromium(tmp_path):
    _need_chromium()
    from playwright.sync_api import sync_playwright

    voila = Voila(NOTEBOOK, tmp_path)
    console: deque[str] = deque(maxlen=100)
    try:
        voila.wait_ready(60)
        with sync_playwright() as p:
            # A fresh, empty profile in this test's folder (Playwright passes it as --user-data-dir).
            browser = p.chromium.launch_persistent_context(
                str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True,
            )
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
            finally:
                browser.close()
    except BaseException:
        print("--- voila output ---\n" + voila.log())
        print("--- browser console ---\n" + "\n".join(console))
        raise
    finally:
        voila.stop()
