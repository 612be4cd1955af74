"""``paperfetch search``, ``references``, ``citations`` and ``cache clear`` (docs/research.md, "Command line")."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from paperfetch import defaults
from paperfetch.cells import is_missing
from paperfetch.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    check_out_dir,
    common_options,
    configuration_is_usage,
    counted,
    exit_status,
    export_option,
    frame_text,
    identity_options,
    interrupted_exit,
    interrupted_word,
    partial_outcomes,
    redacted,
    results_table,
    retriever_for,
    say,
    setting_option,
    settings_from,
    summary,
    tell,
    write_export,
    write_report,
)

__all__ = ["add_subcommands"]


def add_subcommands(sub: Any) -> None:
    common = common_options()
    search = sub.add_parser(
        "search", parents=[common], help="search PubMed; one row per hit (pmid, doi, title, …)",
        description="Search PubMed; one row per hit: pmid, doi, pmcid, title, journal, year, authors, abstract.")
    search.add_argument("query", help='a PubMed query, e.g. "breast cancer AND 2008[pdat]"')
    search.add_argument("--max", dest="max_results", type=int, default=defaults.SEARCH_MAX_RESULTS,
                        help="at most this many hits (1-10000, default %(default)s)")
    search.add_argument("--mindate", help="earliest publication date (YYYY, YYYY/MM or YYYY/MM/DD)")
    search.add_argument("--maxdate", help="latest publication date")
    _common(search)
    search.set_defaults(handler=_run_search)

    for name, what, where in (("references", "works the given paper cites", "OpenAlex, Crossref"),
                              ("citations", "works that cite the given paper", "OpenAlex, Europe PMC")):
        links = sub.add_parser(name, parents=[common], help=f"{what} ({where}); one row per work",
                               description=f"The {what} ({where}): doi, pmid, openalex_id, title, year, "
                                           "source_of_link, journal, authors.")
        links.add_argument("id", help="a DOI, PMID:… or PMC…")
        _common(links)
        links.set_defaults(handler=_run_links, links=name)

    cache = sub.add_parser("cache", parents=[common], help="the metadata cache")
    cache.add_argument("action", choices=["clear"], help="clear: forget every stored answer")
    cache.add_argument("--path", type=Path, help="the cache file (default: the user cache directory)")
    cache.set_defaults(handler=_run_cache)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--report", type=Path, help="write the table: FILE.csv, FILE.parquet or FILE.jsonl")
    parser.add_argument("--download", action="store_true", help="download the PDFs of the rows (by DOI) in the same run")
    export_option(parser)
    identity_options(parser)
    setting_option(parser, "out_dir", "--out", help="output folder for --download (default: PDFs; env PAPERFETCH_OUT)")
    parser.add_argument("--no-cache", action="store_true", help="do not use or fill the metadata cache")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _finish(retriever: Any, frame: pd.DataFrame, args: argparse.Namespace, out: Path | None, shown: list[str]) -> int:
    if not args.quiet:
        say(frame_text(redacted(frame[shown])) if len(frame) else "(no rows)")
    code = EXIT_OK
    if args.download and len(frame):
        from paperfetch.flow.rows import identifier_columns, row_identifiers

        assert out is not None
        started = time.time()
        # what download_frame tries for each row: its doi, else its pmid (as PMID:…), else its pmcid
        inputs = ["" if is_missing(v) else str(v) for v in row_identifiers(frame, identifier_columns(frame.columns))]
        try:
            frame = retriever.download_frame(frame)
        except KeyboardInterrupt:
            partial = partial_outcomes(inputs, out, started)
            partial.index = frame.index
            frame = frame.assign(**{("status" if "status" not in frame.columns else "status_paperfetch"): partial["status"]})
            if args.report is not None:
                write_report(frame, args.report)
            say(f"paperfetch: {interrupted_word()}; the report holds what had finished", err=True)
            return interrupted_exit()
        code = exit_status(frame)  # every row, as download
        if not args.quiet:  # download's own per-paper table and summary line
            say("\n" + results_table(frame.assign(input=inputs)))
            say(f"{counted(len(frame), 'paper')}: {summary(frame)}")
            without = inputs.count("")
            if without:
                say(f"({counted(without, 'row')} without a DOI, PMID or PMCID could not be tried: invalid_identifier)")
        offline = retriever.run_snapshot().offline_line()
        if offline:
            say(f"paperfetch: {offline}", err=True)
    if args.report is not None:
        write_report(frame, args.report)
        tell(args, f"{len(frame)} rows written to {args.report}")
    if args.export is not None:
        entries = write_export(frame, args.export)
        tell(args, f"{counted(entries, 'citation')} written to {args.export}")
    return code


def _ask(args: argparse.Namespace, call: Callable[[Any], pd.DataFrame], what: tuple[str, str], shown: list[str]) -> int:
    """The table ``call(retriever)`` answers, ``"<rows> <noun, plural unless 1><rest>"`` (*what*) said first: a
    service the command needs and is not configured for is a usage error, a service's failure the command's exit code."""
    from paperfetch.errors import ServiceError

    settings = settings_from(args)  # everything that can be wrong with the command line, before any request
    out = check_out_dir(settings.out_dir) if args.download else None  # no PDFs folder for a table alone
    with retriever_for(settings, args) as retriever:
        try:
            with configuration_is_usage():
                frame = call(retriever)
        except ServiceError as exc:
            say(f"paperfetch: {exc}", err=True)
            return EXIT_FAILED
        tell(args, f"{counted(len(frame), what[0])}{what[1]}")
        return _finish(retriever, frame, args, out, shown)


def _run_search(args: argparse.Namespace) -> int:
    from paperfetch.sources.pubmed import MAX_RESULTS

    if not args.query.strip():
        raise UsageError("give a PubMed query, e.g. paperfetch search \"breast cancer AND 2008[pdat]\"")
    if not 0 < args.max_results <= MAX_RESULTS:
        raise UsageError(f"--max must be between 1 and {MAX_RESULTS}, not {args.max_results}")
    return _ask(args, lambda r: r.search_pubmed(args.query, max_results=args.max_results, mindate=args.mindate,
                                                maxdate=args.maxdate),
                ("PubMed hit", f" for {args.query!r}"), ["pmid", "doi", "year", "title"])


def _run_links(args: argparse.Namespace) -> int:
    from paperfetch.errors import InvalidIdentifier
    from paperfetch.ids import parse_identifier

    try:
        parse_identifier(args.id)
    except InvalidIdentifier as exc:
        raise UsageError(str(exc)) from None
    return _ask(args, lambda r: getattr(r, args.links)(args.id), (args.links.removesuffix("s"), f" of {args.id}"),
                ["doi", "pmid", "year", "title", "source_of_link"])


def _run_cache(args: argparse.Namespace) -> int:
    from paperfetch.cache import MetadataCache

    if args.path is not None and args.path.is_dir():
        raise UsageError(f"--path {args.path} is a folder; name the cache file")
    cache = MetadataCache(args.path)
    try:
        removed = cache.clear()
    finally:
        cache.close()
    tell(args, f"metadata cache cleared: {counted(removed, 'answer')} removed from {cache.path}")
    return EXIT_OK
