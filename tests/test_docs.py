"""The docs' code examples run: every fenced ``python`` block of README.md and docs/*.md is executed.

The blocks of one file run in order in one namespace (a later block uses the names an earlier one
made), inside a temporary folder, against the offline demo world (:class:`paperfetch.demo.DemoWorld`):
every service's ``PAPERFETCH_<NAME>_URL`` points at its loopback server, so a block written as a user
writes it (``Retriever(email="your.name@your-university.edu", out_dir="PDFs")``) runs unchanged and no
request leaves loopback. Host names other than loopback do not resolve (no DNS query leaves either), and
conftest's guard fails any connection to a non-loopback address. An identifier the demo world does not
know ends as a ``not_found`` row, which is fine: a block fails when it raises.

A block that cannot run says why on the line just before its fence: ``<!-- not run: needs a Redis
server on another machine -->``. The names the docs leave to the reader's own data (``ids``, ``df``,
``url``, ``xml_bytes``, ``pdf_bytes``) are given small values of the demo world (:func:`_given`).
Shell blocks are not run; ``pycon`` blocks run their ``>>>`` lines.
"""

from __future__ import annotations

import doctest
import ipaddress
import linecache
import re
import signal
import socket
import tempfile
import textwrap
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from paperfetch.demo import DemoWorld
from tests._quick import slow_services, unpaced_config

REPO = Path(__file__).resolve().parents[1]
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
PYTHON = {"python", "py", "python3"}
PYCON = {"pycon", "python-repl"}
BLOCK_TIMEOUT_S = 30.0
#: Fewer runnable blocks than this means the extraction broke (or the docs lost their examples).
MIN_BLOCKS_RUN = 15

FENCE = re.compile(r"^(?P<indent>\s*)(?P<ticks>```+)(?P<lang>[\w+-]*)\s*$")
NOT_RUN = re.compile(r"^\s*<!--\s*not run:(?P<reason>.*?)-->\s*$")


@dataclass(frozen=True)
class Block:
    file: str       # relative to the repository
    index: int      # among the file's python blocks, from 0
    line: int       # the fence's line, from 1
    lang: str
    code: str
    not_run: str | None  # the reason given in the marker, or None when the block runs

    @property
    def id(self) -> str:
        return f"{self.file}#{self.index}-L{self.line}"


def extract(path: Path, name: str | None = None) -> list[Block]:
    """The python (and pycon) blocks of one Markdown file, in order (*name*: the file's name in the ids)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    name = name or path.relative_to(REPO).as_posix()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not (lines[end].strip() == opening["ticks"]):
            end += 1
        lang = opening["lang"].lower()
        if lang in PYTHON | PYCON:
            marker = NOT_RUN.match(lines[i - 1]) if i > 0 else None
            code = textwrap.dedent("\n".join(lines[i + 1:end])) + "\n"
            blocks.append(Block(name, len(blocks), i + 1, lang, code,
                                None if marker is None else marker["reason"].strip()))
        i = end + 1
    return blocks


def stray_markers(path: Path) -> list[int]:
    """Lines of *path* with a ``not run`` marker that is not just before a python block's fence."""
    lines = path.read_text(encoding="utf-8").splitlines()
    stray = []
    for number, line in enumerate(lines, 1):
        if NOT_RUN.match(line):
            after = FENCE.match(lines[number]) if number < len(lines) else None
            if after is None or after["lang"].lower() not in PYTHON | PYCON:
                stray.append(number)
    return stray


BLOCKS = [block for path in DOC_FILES for block in extract(path)]


def source_of(block: Block) -> str:
    """The code to execute: the block itself, or a pycon block's ``>>>`` examples."""
    if block.lang in PYCON:
        return "".join(example.source for example in doctest.DocTestParser().get_examples(block.code))
    return block.code


# ----------------------------------------------------------------------------- the world the blocks run in
class BlockTimeout(BaseException):
    """A block ran longer than BLOCK_TIMEOUT_S (a BaseException, so no ``except Exception`` swallows it)."""


_real_getaddrinfo = socket.getaddrinfo


def _loopback_only_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    """Names resolve only to loopback: a block's ``example.org`` or ``redis-host`` fails at once, offline."""
    if host not in (None, "localhost"):
        text = host.decode() if isinstance(host, bytes) else str(host)
        try:
            loopback = ipaddress.ip_address(text.strip("[]")).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise socket.gaierror(socket.EAI_NONAME, f"the docs' examples resolve no names ({text!r})")
    return _real_getaddrinfo(host, *args, **kwargs)


def _given(world: DemoWorld) -> dict[str, Any]:
    """The reader's own data the docs name without making: small values the demo world answers for."""
    from tests._pdfwriter import layout_article, write_pdf

    ids = ["10.5555/demo.fast", "doi:10.5555/demo.fast2", "PMID:90000001", "10.5555/demo.closed",
           "10.5555/demo.unknown"]
    article = [("title", "Offline examples"), ("heading", "Introduction"),
               ("para", "Every example of the documentation runs against loopback servers."),
               ("heading", "Methods"), ("para", "Each block runs in order, in one namespace per file.")]
    xml = (b'<?xml version="1.0" encoding="UTF-8"?>\n<article><front><article-meta>'
           b'<article-id pub-id-type="doi">10.5555/demo.jats</article-id>'
           b"<title-group><article-title>Offline examples</article-title></title-group>"
           b"</article-meta></front><body><sec><title>Methods</title>"
           b"<p>Each block runs in order.</p></sec></body><back><ref-list><ref id='r1'>"
           b"<mixed-citation>A. Author. A cited paper. 2020. doi:10.5555/demo.fast</mixed-citation>"
           b"</ref></ref-list></back></article>")
    return {
        "ids": ids,
        "df": pd.DataFrame({"doi": ["10.5555/demo.fast", "10.5555/demo.slow1", None],
                            "pmid": [None, None, "90000001"], "note": ["a", "b", "c"]}),
        "url": world.hosts["fast"].url("/pdf/demo.fast.pdf"),
        "xml_bytes": xml,
        "pdf_bytes": write_pdf(layout_article(article)),
    }


@dataclass
class Result:
    error: str | None = None      # the traceback when the block raised
    skipped: str | None = None    # why the block was not reached


_RESULTS: dict[str, dict[int, Result]] = {}


def _run(block: Block, namespace: dict[str, Any]) -> None:
    filename = f"<{block.id}>"
    code = source_of(block)
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)

    def expire(signum: int, frame: Any) -> None:
        raise BlockTimeout(f"{block.id} ran longer than {BLOCK_TIMEOUT_S:g} s")

    # pytest-timeout's own alarm (the test's timeout) is put back afterwards, less the time this block took
    outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, BLOCK_TIMEOUT_S if not outer_left else min(BLOCK_TIMEOUT_S, outer_left))
    try:
        exec(compile(code, filename, "exec"), namespace)  # noqa: S102 - the docs' own examples
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_left:
            signal.setitimer(signal.ITIMER_REAL, max(0.001, outer_left - (time.monotonic() - started)))


def run_file(name: str) -> dict[int, Result]:
    """Run every runnable block of doc file *name* once, in order, in one namespace; the outcome of each."""
    if name in _RESULTS:
        return _RESULTS[name]
    results: dict[int, Result] = {}
    with DemoWorld() as world, pytest.MonkeyPatch.context() as patch, \
            tempfile.TemporaryDirectory(prefix="paperfetch-docs-") as folder, \
            tempfile.TemporaryDirectory(prefix="paperfetch-docs-config-") as config:
        for service, base_url in world.endpoints.items():
            patch.setenv(f"PAPERFETCH_{service.upper()}_URL", base_url)
        # the examples are checked for what they do, not for their pace: no configured gap between requests, and
        # (a settings file) not bioRxiv's 1 s or arXiv's 3 s; the demo world's Crawl-delays, Retry-Afters and the
        # other services' published intervals still apply (a paper's sources race with them)
        patch.setenv("PAPERFETCH_DELAY_MIN_S", "0")
        patch.setenv("PAPERFETCH_DELAY_MAX_S", "0")
        patch.setenv("PAPERFETCH_CONFIG", str(unpaced_config(Path(config) / "config.toml", slow_services(world.endpoints))))
        patch.setattr(socket, "getaddrinfo", _loopback_only_getaddrinfo)
        patch.chdir(folder)
        namespace: dict[str, Any] = {"__name__": f"docs.{name}", **_given(world)}
        failed: str | None = None
        for block in (b for b in BLOCKS if b.file == name and b.not_run is None):
            if failed is not None:
                results[block.index] = Result(skipped=f"an earlier block of {name} failed: {failed}")
                continue
            try:
                _run(block, namespace)
            except BaseException:  # noqa: BLE001 - every failure of a doc block is reported as its test's failure
                results[block.index] = Result(error=traceback.format_exc())
                failed = block.id
            else:
                results[block.index] = Result()
    _RESULTS[name] = results
    return results


# ----------------------------------------------------------------------------- the tests
@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_doc_block(block: Block) -> None:
    if block.not_run is not None:
        assert block.not_run, f"{block.id}: a block marked 'not run' must say why"
        pytest.skip(f"not run: {block.not_run}")
    result = run_file(block.file)[block.index]
    if result.skipped:
        pytest.skip(result.skipped)
    if result.error is not None:
        pytest.fail(f"{block.id} (line {block.line}) raised:\n{result.error}", pytrace=False)


def test_blocks_were_found_and_most_run() -> None:
    run = [b for b in BLOCKS if b.not_run is None]
    not_run = [b for b in BLOCKS if b.not_run is not None]
    print(f"{len(BLOCKS)} python blocks in {len(DOC_FILES)} files: {len(run)} run, {len(not_run)} not run")
    assert any(b.file == "README.md" for b in run), "README.md's examples were not found"
    assert len(run) >= MIN_BLOCKS_RUN, f"only {len(run)} blocks run: {[b.id for b in run]}"
    assert all(b.not_run for b in not_run), [b.id for b in not_run if not b.not_run]
    assert len(not_run) < len(run)


def test_not_run_markers_stand_just_before_a_python_block() -> None:
    stray = {path.relative_to(REPO).as_posix(): lines for path in DOC_FILES if (lines := stray_markers(path))}
    assert not stray, f"'not run' markers not followed by a python fence: {stray}"


def test_extraction_reads_indented_fences_markers_and_pycon(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(textwrap.dedent("""\
        Text.

        ```bash
        echo not python
        ```

        1. A step:

           ```python
           x = 1
           ```

        <!-- not run: needs something this machine lacks -->
        ```python
        raise SystemExit
        ```

        ```pycon
        >>> y = x + 1
        >>> y
        2
        ```
        """), encoding="utf-8")
    first, marked, console = extract(page, "page.md")
    assert (first.code, first.not_run, first.line) == ("x = 1\n", None, 9)
    assert marked.not_run == "needs something this machine lacks"
    assert console.lang == "pycon" and source_of(console) == "y = x + 1\ny\n"
    assert stray_markers(page) == []
