"""The ``paperfetch`` command: ``download`` for scripts and cron jobs, ``demo`` for a first look.

Exit status: 0 when the run completed (whatever each paper's outcome), 2 on a
usage error, 1 when the run itself failed. PyPaperRetriever's flags
(``--doi``, ``--pmid``, ``--dwn-dir``) are accepted as well.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Sequence

import pandas as pd

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="paperfetch", description="Polite retrieval of legal open-access full texts.")
    sub = parser.add_subparsers(dest="command", required=True)

    dl = sub.add_parser("download", help="download the PDFs of DOIs, PMIDs, PMCIDs or arXiv IDs")
    dl.add_argument("ids", nargs="*", help="identifiers (DOI, PMID:…, PMC…, arXiv:…)")
    dl.add_argument("--input", type=Path, help="a CSV file with identifiers")
    dl.add_argument("--column", default="doi", help="the CSV column holding identifiers (default: doi)")
    dl.add_argument("--email", help="contact e-mail (Unpaywall requires one; never logged)")
    dl.add_argument("--out", "--dwn-dir", dest="out", default="PDFs", help="output folder (default: PDFs)")
    dl.add_argument("--report", type=Path, help="write the outcomes table to this CSV")
    dl.add_argument("--doi", action="append", default=[], help="a DOI (PyPaperRetriever's flag; repeatable)")
    dl.add_argument("--pmid", action="append", default=[], help="a PMID (PyPaperRetriever's flag; repeatable)")
    dl.add_argument("--no-polite-mode", action="store_true", help="bypass every polite feature (not recommended)")
    robots = dl.add_mutually_exclusive_group()
    robots.add_argument("--respect-robots-txt", dest="robots", action="store_true", default=True,
                        help="obey robots.txt of web hosts (the default)")
    robots.add_argument("--ignore-robots-txt", dest="robots", action="store_false", help="do not read robots.txt")
    dl.add_argument("--no-suppress-403", action="store_true", help="keep asking hosts that answered 403")
    dl.add_argument("--delay-min", type=float, help="minimum seconds between requests to one host")
    dl.add_argument("--delay-max", type=float, help="maximum seconds between requests to one host")
    dl.add_argument("--max-retries", type=int, default=3)
    dl.add_argument("--workers", type=int, help="worker threads (default: by the number of hosts)")
    dl.add_argument("--no-progress", action="store_true")

    demo = sub.add_parser("demo", help="run a real batch against an offline world of loopback servers")
    demo.add_argument("--out", type=Path, help="output folder (default: a temporary folder)")
    demo.add_argument("--no-progress", action="store_true")

    from paperfetch.cli_research import add_subcommands  # issue 12: search, references, citations, cache clear

    add_subcommands(sub)
    return parser


def _summary(outcomes: pd.DataFrame, status: pd.DataFrame, out=None) -> None:
    out = out or sys.stdout
    counts = outcomes["status"].value_counts()
    counts = counts[counts > 0]
    print("\nOutcomes by status:", file=out)
    for name, count in counts.items():
        print(f"  {name:<22} {count}", file=out)
    if len(status):
        shown = status[["host", "requests", "last_status", "delay_min_s", "delay_max_s", "backoff_s", "held_until",
                        "suppressed", "crawl_delay_s"]]
        print("\nPer-host table:", file=out)
        print(shown.to_string(index=False), file=out)


def _download(args: argparse.Namespace) -> int:
    from paperfetch.errors import ConfigurationError
    from paperfetch.retriever import Retriever

    ids: list[object] = list(args.ids) + list(args.doi) + [f"PMID:{p}" for p in args.pmid]
    frame = None
    if args.input is not None:
        try:
            frame = pd.read_csv(args.input, dtype=str, keep_default_na=False)
        except (OSError, ValueError) as exc:
            print(f"paperfetch: cannot read {args.input}: {exc}", file=sys.stderr)
            return 2
        if args.column not in frame.columns:
            print(f"paperfetch: {args.input} has no column {args.column!r} (columns: {', '.join(frame.columns)})", file=sys.stderr)
            return 2
    if not ids and frame is None:
        print("paperfetch: give identifiers, --doi/--pmid, or --input FILE.csv", file=sys.stderr)
        return 2
    try:
        retriever = Retriever(
            email=args.email, out_dir=args.out, polite_mode=not args.no_polite_mode, respect_robots_txt=args.robots,
            suppress_on_403=not args.no_suppress_403, delay_min_s=args.delay_min, delay_max_s=args.delay_max,
            max_retries=args.max_retries, workers=args.workers, progress=not args.no_progress,
            cache=not getattr(args, "no_cache", False),  # issue 12
        )
    except ConfigurationError as exc:
        print(f"paperfetch: {exc}", file=sys.stderr)
        return 2
    with retriever:
        outcomes = retriever.download_frame(frame, column=args.column) if frame is not None and not ids else retriever.download(
            ids + (list(frame[args.column]) if frame is not None else []))
        if args.report:
            outcomes.to_csv(args.report, index=False)
            print(f"outcomes written to {args.report}")
        _summary(outcomes, retriever.domain_status())
    return 0


def _demo(args: argparse.Namespace) -> int:
    import tempfile

    from paperfetch.demo import DEMO_INPUTS, DemoWorld
    from paperfetch.retriever import Retriever

    out = args.out or Path(tempfile.mkdtemp(prefix="paperfetch-demo-"))
    print("Starting an offline world of services and publishers on loopback addresses …")
    with DemoWorld() as world:
        with Retriever(email="demo@example.org", out_dir=out, endpoints=world.endpoints, progress=not args.no_progress,
                       cache=False,  # issue 12: loopback answers have no place in the user's metadata cache
                       verbosity=0, http_options={"network_retry_base_s": 0.1, "rate_limit_min_s": 0.1, "rate_limit_max_s": 0.3}) as retriever:
            started = time.monotonic()
            outcomes = retriever.download(DEMO_INPUTS)
            elapsed = time.monotonic() - started
            with pd.option_context("display.width", 160, "display.max_colwidth", 40):
                print(outcomes[["input", "id_type", "status", "source", "bytes", "title"]].to_string())
            _summary(outcomes, retriever.domain_status())
            print(f"\n{len(DEMO_INPUTS)} inputs in {elapsed:.1f} s, {world.requests_served()} HTTP requests served; PDFs in {out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if getattr(args, "run", None) is not None:  # issue 12: subcommands of paperfetch.cli_research
        return args.run(args)
    if args.command == "download":
        return _download(args)
    return _demo(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
