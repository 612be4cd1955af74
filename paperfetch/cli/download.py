"""``paperfetch download`` (docs/cli.md): every check of the command line comes before any request."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import pandas as pd

from paperfetch import defaults
from paperfetch.cells import clip, is_missing
from paperfetch.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    INTERRUPTED,
    RESULT_COLUMNS,
    UsageError,
    check_column,
    check_out_dir,
    common_options,
    counted,
    exit_status,
    export_option,
    identity_options,
    inputs_note,
    interrupted_exit,
    interrupted_word,
    jsonl_records,
    partial_outcomes,
    read_lines,
    redacted,
    results_table,
    retriever_for,
    say,
    setting_option,
    settings_from,
    summary,
    tell,
    terminal_width,
    wrapped,
    write_export,
    write_lines,
    write_report,
)
from paperfetch.dashboard.tables import host_table_text
from paperfetch.errors import ConfigurationError
from paperfetch.outcomes import FINISHED_WELL_STATUSES
from paperfetch.report import YIELD_LEGEND, yield_by_source, yield_line

if TYPE_CHECKING:  # pragma: no cover
    from paperfetch.settings import Settings

#: The statuses no retry or explanation helps: finished well, or not an identifier at all.
_SETTLED = FINISHED_WELL_STATUSES | {"invalid_identifier"}

__all__ = ["add_subcommands", "gathered_inputs", "input_option", "inputs_of", "run", "stopped", "unfinished"]


def add_subcommands(sub: Any) -> None:
    dl = sub.add_parser("download", parents=[common_options()],
                        help="download the PDFs of DOIs, PMIDs, PMCIDs or arXiv IDs",
                        description="Download the PDFs of DOIs, PMIDs, PMCIDs or arXiv IDs.")
    input_option(dl)
    identity_options(dl)
    setting_option(dl, "out_dir", "--out", "--dwn-dir")
    dl.add_argument("--report", type=Path, help="write the outcomes table: FILE.csv, FILE.parquet or FILE.jsonl")
    dl.add_argument("--failed", type=Path, metavar="FILE",
                    help="write the identifiers that did not finish well, one per line (feed back with --input)")
    export_option(dl)
    dl.add_argument("--format", choices=("table", "jsonl"), default="table",
                    help="per-paper results on stdout: a compact table (default) or JSON Lines")
    dl.add_argument("--dry-run", action="store_true",
                    help="resolve the identifiers and show the candidate URLs; download nothing")
    dl.add_argument("--doi", action="append", default=[], help="a DOI (PyPaperRetriever's flag; repeatable)")
    dl.add_argument("--pmid", action="append", default=[], help="a PMID (PyPaperRetriever's flag; repeatable)")
    dl.add_argument("--no-polite-mode", dest="polite_mode", action="store_false", default=None,
                    help="bypass every polite feature (not recommended)")
    robots = dl.add_mutually_exclusive_group()
    robots.add_argument("--respect-robots-txt", dest="respect_robots_txt", action="store_true", default=None,
                        help="obey robots.txt of web hosts (the default)")
    robots.add_argument("--ignore-robots-txt", dest="respect_robots_txt", action="store_false",
                        help="do not read robots.txt")
    dl.add_argument("--no-suppress-403", dest="suppress_on_403", action="store_false", default=None,
                    help="keep asking hosts that answered 403")
    setting_option(dl, "skip_retracted")
    for bound, word in (("min", "minimum"), ("max", "maximum")):
        dl.add_argument(f"--delay-{bound}", dest=f"delay_{bound}_s", metavar=f"DELAY_{bound.upper()}", type=float,
                        help=f"{word} seconds between requests to one host")
    dl.add_argument("--max-retries", type=int, help="retries per request (default: 3)")
    setting_option(dl, "workers")
    setting_option(dl, "state")
    dl.add_argument("--no-progress", action="store_true", help="no progress bar")
    dl.add_argument("--no-cache", action="store_true", help="do not use or fill the metadata cache")
    dl.add_argument("--explain", action="store_true",
                    help="before the table, each source asked about every row that did not finish well, and its answer")
    dl.add_argument("--force", action="store_true",
                    help="ignore the ledger: ask again for everything, final answers (no_open_copy, 404, 410) included")
    dl.set_defaults(handler=run)


def input_option(parser: argparse.ArgumentParser) -> None:
    """The identifiers as arguments, or ``--input`` (a CSV and its ``--column``, or a .txt): download's and text's."""
    parser.add_argument("ids", nargs="*", help="identifiers (DOI, PMID:…, PMC…, arXiv:…)")
    parser.add_argument("--input", type=Path, help="a CSV file with identifiers, or a .txt file with one per line")
    parser.add_argument("--column", help="the CSV column holding identifiers (default: doi, or the one column "
                                         "named so in another case, such as DOI)")


def run(args: argparse.Namespace) -> int:
    # 1. everything that can be wrong with the command line, before any request
    settings = _checked_settings(args)
    ids, frame, column = gathered_inputs(args)
    out = check_out_dir(settings.out_dir)
    csv_frame = frame if frame is not None and not ids else None  # the report is this CSV with the outcomes joined

    # 2. the run
    with retriever_for(settings, args, jsonl=args.format == "jsonl", resume=not args.force) as retriever:
        inputs = inputs_of(ids, frame, column)
        if args.dry_run:
            return _dry_run(retriever, inputs, args)
        note = inputs_note(inputs)
        if note and not args.quiet:
            say(f"paperfetch: {note}", err=True)
        started = time.time()
        try:
            outcomes = retriever.download(inputs)
        except KeyboardInterrupt as exc:
            partial = unfinished(exc, inputs, out, started)  # Ctrl-C or SIGTERM: the rows finished are written
            _finish(partial, args, csv_frame, interrupted=True)
            return stopped(partial)
        offline = retriever.run_snapshot().offline_line()
        if args.explain and not args.quiet:
            _explain(retriever, outcomes)
        if args.verbose and not args.quiet and args.format == "table":
            say("\nPer-host table:\n" + host_table_text(retriever.domain_status(), width=terminal_width()))
    code = _finish(outcomes, args, csv_frame)
    if offline:
        say(f"paperfetch: {offline}", err=True)
    return code


def _checked_settings(args: argparse.Namespace) -> "Settings":
    """The run's settings from the flags, the environment and the config file; a bad value or an unwritable
    output file is a usage error."""
    for flag, value, least in (("--workers", args.workers, 1), ("--max-retries", args.max_retries, 0),
                               ("--delay-min", args.delay_min_s, 0), ("--delay-max", args.delay_max_s, 0)):
        if value is not None and value < least:
            raise UsageError(f"{flag} must be {least} or more, not {value}")
    settings = settings_from(args)
    if settings.workers is not None and settings.workers < 1:
        raise UsageError(f"workers must be 1 or more, not {settings.workers} (from {settings.origin['workers']})")
    return settings


def gathered_inputs(args: argparse.Namespace) -> tuple[list[object], pd.DataFrame | None, str]:
    """(the identifiers given as arguments and in a .txt file, the CSV read from ``--input``, its column)."""
    ids: list[object] = list(args.ids) + list(getattr(args, "doi", [])) + [f"PMID:{p}" for p in getattr(args, "pmid", [])]
    frame = None
    column = args.column or "doi"
    if args.input is not None:
        frame, lines, column = _read_input(args.input, args.column)
        ids += lines
        if frame is not None and column != (args.column or "doi") and not args.quiet:
            say(f"paperfetch: reading the identifiers from column {column!r} of {args.input}", err=True)
    if not ids and frame is None:
        raise UsageError(f"give identifiers, {'--doi/--pmid, ' if hasattr(args, 'doi') else ''}or --input FILE (.csv or .txt)")
    return ids, frame, column


def inputs_of(ids: list[object], frame: pd.DataFrame | None, column: str) -> list[object]:
    """What the run downloads: the identifiers, then the CSV's column."""
    return ids if frame is None else ids + frame[column].tolist()


def unfinished(exc: KeyboardInterrupt, inputs: list[object], out: Path, started: float) -> pd.DataFrame:
    """The outcomes of a stopped run: the library's partial frame (finished rows as they ended, the rest
    ``stopped`` with their reason), else, stopped before the library could tell, the ledger's rows of this run."""
    partial = getattr(exc, "partial", None)
    return partial if isinstance(partial, pd.DataFrame) else partial_outcomes(inputs, out, started)


def stopped(partial: pd.DataFrame) -> int:
    """Says ``"terminated (SIGTERM); 1 of 3 papers had finished; the others are stopped"``; 130 or 143."""
    done = int((partial["status"].astype(str) != INTERRUPTED).sum())
    say(f"paperfetch: {interrupted_word()}; {done} of {counted(len(partial), 'paper')} had finished; "
        f"the others are {INTERRUPTED} (run the same command again to resume)", err=True)
    return interrupted_exit()


def _explain(retriever: Any, outcomes: pd.DataFrame) -> None:
    """``--explain``: ``Retriever.why`` of each row that did not finish well."""
    for value, status in zip(outcomes["input"], outcomes["status"].astype(str)):
        if status in _SETTLED or is_missing(value):
            continue
        why = retriever.why(value)
        lines = [f"  {source}: {clip(str(answer), 140, one_line=True)}" for source, answer in zip(why["source"], why["answer"])]
        say(f"why {value} ({status}):\n" + ("\n".join(lines) if lines else "  (no source was asked)"))


def _read_input(path: Path, column: str | None) -> tuple[pd.DataFrame | None, list[str], str]:
    """(*frame*, [], the column read) for a CSV; (None, lines, *column*) for a .txt file. Without *column*:
    ``doi``, else the one column named so in another case (``DOI``, as reference managers export it)."""
    if path.suffix.lower() == ".txt":
        return None, read_lines(path), column or "doi"
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    if column is None:
        from paperfetch.flow.rows import identifier_columns

        try:
            found = identifier_columns(frame.columns, ["doi"])
        except ConfigurationError:  # DOI and Doi, say: the user names one
            matching = ", ".join(repr(str(c)) for c in frame.columns if str(c).lower() == "doi")
            raise UsageError(f"{path} has several columns that could hold the DOIs ({matching}); "
                             "choose one with --column") from None
        if not found:
            check_column(frame, "doi", str(path))
        column = found[0]
    check_column(frame, column, str(path))
    return frame, [], column


_RETRIED_HEADER = "# retried by a re-run"
_FINAL_HEADER = (f"# final answers (asked again with --force; not_found and no_open_copy also after "
                 f"{defaults.RECHECK_AFTER_S / 86400:g} days)")


def _write_failed(path: Path, outcomes: pd.DataFrame) -> tuple[int, int]:
    """Every input that did not finish well, once, as a ``.txt`` ``--input`` (the invalid and blank ones left
    out: no retry helps them), under a ``#`` line that says whether a re-run asks again
    (:func:`paperfetch.outcomes.retried_by_rerun`); the counts of the two lists."""
    from paperfetch.outcomes import retried_by_rerun

    lists: dict[bool, dict[str, None]] = {True: {}, False: {}}
    codes = outcomes["http_status"] if "http_status" in outcomes.columns else [None] * len(outcomes)
    for value, status, code in zip(outcomes["input"], outcomes["status"].astype(str), codes):
        text = "" if is_missing(value) else str(value).strip()
        if text and status not in _SETTLED and text not in lists[True] | lists[False]:
            lists[retried_by_rerun(status, code)][text] = None
    retried, final = list(lists[True]), list(lists[False])
    lines = ([_RETRIED_HEADER, *retried] if retried else []) + ([_FINAL_HEADER, *final] if final else [])
    write_lines(path, lines)
    return len(retried), len(final)


def _joined(frame: pd.DataFrame, outcomes: pd.DataFrame) -> pd.DataFrame:
    """The CSV's rows with the outcome columns joined under their own names and dtypes, as a report of
    positional identifiers has them; a CSV column named like an outcome column in any case (``doi``,
    ``DOI``, ``year``) is kept as ``input_<name>``, so ``doi`` is always the normalised DOI (docs/cli.md)."""
    joined_names = {str(name).lower() for name in outcomes.columns if name != "input"}
    taken = {str(c) for c in frame.columns}
    renamed: dict[object, str] = {}
    for column in frame.columns:
        if str(column).lower() in joined_names:
            new = f"input_{column}"
            while new in taken or new.lower() in joined_names:
                new = f"input_{new}"
            taken.add(new)
            renamed[column] = new
    joined = frame.rename(columns=renamed)
    for name in outcomes.columns:
        if name != "input":
            joined[name] = outcomes[name].set_axis(joined.index)  # the outcome's dtype (category, Int64 …) kept
    return joined


def _finish(outcomes: pd.DataFrame, args: argparse.Namespace, csv_frame: pd.DataFrame | None,
            interrupted: bool = False) -> int:
    """The results on stdout, the files asked for (the report: *csv_frame* with the outcomes joined, when the
    input was a CSV) and the summary; the exit status."""
    report = outcomes if csv_frame is None else _joined(csv_frame, outcomes)
    outcomes = redacted(outcomes)
    if not args.quiet and not interrupted:
        if args.format == "jsonl":
            for line in jsonl_records(outcomes[[c for c in RESULT_COLUMNS if c in outcomes.columns]]):
                say(line)
        else:
            say(results_table(outcomes))
    if args.report is not None:
        write_report(report, args.report)
        tell(args, f"report written to {args.report}", err=args.format == "jsonl")
    if args.failed is not None:
        retried, final = _write_failed(args.failed, outcomes)
        tell(args, f"{counted(retried + final, 'identifier')} written to {args.failed} ({retried} retried by a re-run, "
                   f"{final} final)", err=args.format == "jsonl")
    if args.export is not None:
        entries = write_export(outcomes, args.export)
        tell(args, f"{counted(entries, 'citation')} written to {args.export}", err=args.format == "jsonl")
    if not args.quiet:
        width = terminal_width()
        say(wrapped(f"{counted(len(outcomes), 'paper')}: {summary(outcomes)}", width), err=args.format == "jsonl")
        sources_line = yield_line(yield_by_source(outcomes))  # which source supplied what
        if sources_line:
            say(wrapped(sources_line, width), err=args.format == "jsonl")
            say(wrapped(f"  {YIELD_LEGEND}", width, indent="   "), err=args.format == "jsonl")
    return exit_status(outcomes)


def _dry_run(retriever: Any, inputs: Sequence[object], args: argparse.Namespace) -> int:
    found = redacted(retriever.candidates(inputs))
    if not args.quiet:
        if args.format == "jsonl":
            for line in jsonl_records(found):
                say(line)
        else:
            shown = found.astype(object).where(found.notna(), "")
            shown["input"] = [clip(str(v), 40, one_line=True) for v in shown["input"]]
            say(shown.to_string(index=False))
    if args.report is not None:
        write_report(found, args.report)
    return EXIT_OK if bool(found.groupby("position")["url"].count().all()) else EXIT_FAILED  # each input has a URL
