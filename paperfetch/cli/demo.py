"""``paperfetch demo``: a real batch against an offline loopback world (docs/cli.md, "paperfetch demo"). It keeps
nothing of the user's and exits 0 whenever it ran; ``--serve`` only keeps the world up.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd

from paperfetch.cells import clip
from paperfetch.cli.common import (
    EXIT_OK,
    UsageError,
    common_options,
    hanging_table,
    progress_wanted,
    say,
    summary,
    tell,
    terminal_width,
    wrapped,
)
from paperfetch.dashboard.tables import host_table_text

__all__ = ["add_subcommands", "run", "serve"]

#: The papers of the demo's full-text line: a downloaded PDF (its text layer) and a JATS with a table.
_TEXTS = ("10.5555/demo.fast", "10.5555/demo.jats.sensor")


def add_subcommands(sub: Any) -> None:
    demo = sub.add_parser("demo", parents=[common_options()],
                          help="run a real batch against an offline world of loopback servers")
    demo.add_argument("--out", type=Path, help="output folder (default: a temporary folder)")
    demo.add_argument("--no-progress", action="store_true", help="no progress bar")
    demo.add_argument("--serve", action="store_true",
                      help="only serve the world: print the PAPERFETCH_*_URL exports and the endpoints={…} of a "
                           "notebook, and keep it up until Ctrl-C")
    demo.set_defaults(handler=run)


def serve(*, ready: threading.Event | None = None, stop: threading.Event | None = None) -> int:
    """Serve the demo world until Ctrl-C (or *stop*, for tests); *ready* is set once the exports are printed."""
    from paperfetch.demo import DEMO_INPUTS, DemoWorld

    with DemoWorld() as world:
        endpoints = dict(sorted(world.endpoints.items()))
        say("# the paperfetch demo world is up; in another shell:")
        for name, url in endpoints.items():
            say(f"export PAPERFETCH_{name.upper()}_URL={shlex.quote(url)}")
        examples = " ".join(shlex.quote(str(i)) for i in DEMO_INPUTS[:3])
        say(f"# then, with PAPERFETCH_EMAIL set too: paperfetch download {examples} --state memory --no-cache")
        say("# or in a notebook or a script:")
        say(f"endpoints = {endpoints!r}")
        say('# r = paperfetch.Retriever(endpoints=endpoints, email="your.name@your-university.edu", state="memory", cache=False)',
            masked=False)  # the documented address, not one to mask
        say("# Ctrl-C stops the world")
        if ready is not None:
            ready.set()
        waiter = stop if stop is not None else threading.Event()
        try:
            while not waiter.wait(0.5):
                pass
        except KeyboardInterrupt:
            say("# demo world stopped")
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    from paperfetch.demo import DEMO_INPUTS, DemoWorld
    from paperfetch.retriever import Retriever

    if args.serve:
        return serve()
    if args.out is not None and Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is a file, not a folder")
    out = args.out or Path(tempfile.mkdtemp(prefix="paperfetch-demo-"))
    if not args.verbose:  # the holds, suppressions and refusals the demo provokes are in its host table
        logging.getLogger("paperfetch").setLevel(logging.ERROR)
    say("Starting an offline world of services and publishers on loopback addresses …")
    try:
        with DemoWorld() as world:
            with Retriever(email="demo@demo-university.example", out_dir=out, endpoints=world.endpoints,
                           progress=progress_wanted(args), verbosity=0,
                           # loopback answers and hosts have no place in the user's metadata cache or host state
                           cache=False, state="memory",
                           http_options={"network_retry_base_s": 0.1, "rate_limit_min_s": 0.1,
                                         "rate_limit_max_s": 0.3}) as retriever:
                started = time.monotonic()
                outcomes = retriever.download(DEMO_INPUTS)
                elapsed = time.monotonic() - started
                if not args.quiet:
                    _show(outcomes, retriever.domain_status(), world, elapsed, args)
                    text = retriever.fulltext(_TEXTS)
                    tables = len(text.tables)
                    say(f"\nfull text: {len(text.paragraphs)} paragraphs, {tables} table{'s' * (tables != 1)} from "
                        f"{text.paragraphs['input'].nunique()} papers (r.fulltext of {', '.join(_TEXTS)})")
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)
    tell(args, wrapped(f"PDFs in {out} (kept)" if args.out is not None else
                       f"the PDFs were in a temporary folder, now removed ({out}); --out DIR keeps them", terminal_width()))
    return EXIT_OK  # the demo shows failures on purpose; it succeeded when it ran


def _show(outcomes: pd.DataFrame, status: pd.DataFrame, world: Any, elapsed: float, args: argparse.Namespace) -> None:
    """The outcomes, the counts by status, the per-host table (the demo's hosts by name) and the run's figures."""
    from paperfetch.demo import DEMO_INPUTS

    shown = outcomes[["input", "id_type", "status", "source", "bytes", "title"]].astype(object)
    shown = shown.where(shown.notna(), "").map(lambda v: " ".join(str(v).split()))
    shown["input"] = [clip(v, 40) for v in shown["input"]]
    say(hanging_table(shown, "title", terminal_width(), ["input"]))  # the input cut first, the title wrapped
    say("\n" + wrapped(f"Outcomes: {summary(outcomes)}", terminal_width()))
    names = world.host_names()
    status = status.assign(host=[names.get(h, h) for h in status["host"]])
    say("\nPer-host table:\n" + host_table_text(status, width=terminal_width()))
    if not args.verbose:
        say("(the warnings of these holds, suppressions and refusals are left out; -v shows them as they happen)")
    # the progress bar counts distinct papers, so the inputs it leaves out are said: invalid ones and repeats
    invalid = int((outcomes["status"] == "invalid_identifier").sum())
    repeats = int(outcomes["same_work_as"].notna().sum())
    say(f"\n{len(DEMO_INPUTS)} inputs ({len(DEMO_INPUTS) - invalid - repeats} distinct papers, {invalid} invalid, "
        f"{repeats} the same paper again) in {elapsed:.1f} s, {world.requests_served()} HTTP requests served")
