"""The ``paperfetch`` command: ``download`` for scripts and cron jobs, ``config`` to see the settings,
``demo`` for a first look. Also ``python -m paperfetch``.

Exit status (docs/cli.md):

* 0 — every paper finished well (``downloaded`` or ``already_downloaded``); also ``--help``, ``--version``, bare ``paperfetch``;
* 1 — the run completed but some papers did not (any other status);
* 2 — a usage error, always found before any request is sent;
* 130 — interrupted (Ctrl-C), after the partial report and failed list are written.

Every line printed and every file written passes through :func:`paperfetch.redact.redact_text`.
Other subcommands register through :func:`_register_extensions` (``add_subcommands(subparsers)``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from paperfetch._version import __version__
from paperfetch.outcomes import FINISHED_WELL_STATUSES
from paperfetch.redact import redact_text

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "REPORT_FORMATS", "UsageError", "main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
#: The statuses that count as "finished well"; any other makes the exit status 1.
OK_STATUSES = FINISHED_WELL_STATUSES
#: --report file extensions and their writers.
REPORT_FORMATS = {".csv": "CSV", ".parquet": "Parquet", ".jsonl": "JSON Lines"}
#: The columns of the per-paper table and of --format jsonl.
RESULT_COLUMNS = ["input", "id_type", "status", "source", "http_status", "bytes", "path", "error"]
INTERRUPTED = "interrupted"

logger = logging.getLogger(__name__)


class UsageError(Exception):
    """A usage error found before any request: printed as ``paperfetch: <message>``, exit status 2."""


# ---------------------------------------------------------------------------- parser
def common_options() -> argparse.ArgumentParser:
    """-v/-q, shared by every subcommand (pass as ``parents=[common_options()]``)."""
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", action="count", default=0,
                       help="log what happens on stderr (-v: info, -vv: debug)")
    group.add_argument("-q", "--quiet", action="store_true", help="print only errors (the exit status tells the rest)")
    return common


def _parser() -> tuple[argparse.ArgumentParser, Any]:
    parser = argparse.ArgumentParser(
        prog="paperfetch", description="Polite retrieval of legal open-access full texts.",
        epilog="exit status: 0 all papers finished well, 1 some did not, 2 usage error, 130 interrupted",
    )
    parser.add_argument("--version", action="version", version=f"paperfetch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = common_options()

    dl = sub.add_parser("download", parents=[common], help="download the PDFs of DOIs, PMIDs, PMCIDs or arXiv IDs",
                        description="Download the PDFs of DOIs, PMIDs, PMCIDs or arXiv IDs.")
    dl.add_argument("ids", nargs="*", help="identifiers (DOI, PMID:…, PMC…, arXiv:…)")
    dl.add_argument("--input", type=Path, help="a CSV file with identifiers, or a .txt file with one per line")
    dl.add_argument("--column", default="doi", help="the CSV column holding identifiers (default: doi)")
    _identity_options(dl)
    dl.add_argument("--out", "--dwn-dir", dest="out", help="output folder (default: PDFs; env PAPERFETCH_OUT)")
    dl.add_argument("--report", type=Path, help="write the outcomes table: FILE.csv, FILE.parquet or FILE.jsonl")
    dl.add_argument("--failed", type=Path, metavar="FILE",
                    help="write the identifiers that did not finish well, one per line (feed back with --input)")
    dl.add_argument("--format", choices=("table", "jsonl"), default="table",
                    help="per-paper results on stdout: a compact table (default) or JSON Lines")
    dl.add_argument("--dry-run", action="store_true",
                    help="resolve the identifiers and show the candidate URLs; download nothing")
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
    dl.add_argument("--max-retries", type=int, help="retries per request (default: 3)")
    dl.add_argument("--workers", type=int, help="worker threads (default: by the number of hosts)")
    dl.add_argument("--state", help="host-state store shared with other runs: 'sqlite' (default, user cache dir), "
                                    "a path, 'sqlite:///path', 'redis://host:port/db' or 'memory' (env PAPERFETCH_STATE)")
    dl.add_argument("--no-progress", action="store_true", help="no progress bar")
    dl.set_defaults(handler=_download)

    cfg = sub.add_parser("config", parents=[common], help="show the effective settings and where each came from",
                         description="Show the effective settings (secrets masked) and where each came from: "
                                     "argument > environment > config file > default.")
    _identity_options(cfg)
    cfg.set_defaults(handler=_config)

    demo = sub.add_parser("demo", parents=[common], help="run a real batch against an offline world of loopback servers")
    demo.add_argument("--out", type=Path, help="output folder (default: a temporary folder)")
    demo.add_argument("--no-progress", action="store_true", help="no progress bar")
    demo.set_defaults(handler=_demo)

    _register_extensions(sub)
    return parser, sub


def _identity_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--email", help="contact e-mail; Unpaywall requires one (env PAPERFETCH_EMAIL; never printed)")
    parser.add_argument("--openalex-api-key", help="OpenAlex API key (prefer env PAPERFETCH_OPENALEX_API_KEY)")
    parser.add_argument("--ncbi-api-key", help="NCBI API key (prefer env PAPERFETCH_NCBI_API_KEY or NCBI_API_KEY)")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="the TOML settings file (default: config.toml in the user config folder; env PAPERFETCH_CONFIG)")


def _register_extensions(subparsers: Any) -> None:
    """The registration point for subcommands defined elsewhere: each module's ``add_subcommands(subparsers)``.

    A subcommand sets ``handler=callable(args) -> int`` with ``set_defaults``.
    """
    from paperfetch.cli_research import add_subcommands  # search, references, citations, cache clear

    add_subcommands(subparsers)


# ---------------------------------------------------------------------------- output
def _say(message: str, *, err: bool = False) -> None:
    print(redact_text(message), file=sys.stderr if err else sys.stdout, flush=True)


def _setup_logging(args: argparse.Namespace) -> None:
    """The command is an application: it configures logging (the library never does)."""
    from paperfetch.log import enable_logging

    verbose = getattr(args, "verbose", 0) or 0
    if getattr(args, "quiet", False):
        level = logging.ERROR
    else:
        level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    enable_logging(level)


def _results_table(outcomes: pd.DataFrame, width: int = 160) -> str:
    frame = outcomes.reindex(columns=RESULT_COLUMNS).copy()
    frame["detail"] = [
        (str(p) if isinstance(p, str) and p else (str(e) if isinstance(e, str) else ""))
        for p, e in zip(frame["path"], frame["error"])
    ]
    columns = frame[["input", "status", "source", "detail"]].astype(object)
    shown = columns.where(columns.notna(), "")
    shown["input"] = [_clip(str(v), 40) for v in shown["input"]]
    shown["detail"] = [_clip(str(v), max(20, width - 80)) for v in shown["detail"]]
    return shown.to_string(index=False)


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _jsonl_records(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> list[str]:
    cols = list(columns) if columns is not None else list(frame.columns)
    frame = frame.reindex(columns=cols).astype(object)
    lines = []
    for record in frame.to_dict(orient="records"):
        clean = {k: (None if _is_missing(v) else _plain(v)) for k, v in record.items()}
        lines.append(json.dumps(clean, ensure_ascii=False, default=str))
    return lines


def _is_missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _plain(value: Any) -> Any:
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            return value.item()
        except (ValueError, AttributeError):
            return value
    return value


def _summary(outcomes: pd.DataFrame) -> str:
    counts = outcomes["status"].astype(str).value_counts()
    return ", ".join(f"{count} {name}" for name, count in counts.items())


# ---------------------------------------------------------------------------- checks before any request
def _check_out_dir(out: str) -> Path:
    path = Path(out).expanduser()
    if path.exists() and not path.is_dir():
        raise UsageError(f"--out {out} is a file, not a folder; name a folder (it is created if missing)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create the folder ({exc.strerror or exc})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: the folder is not writable")
    return path


def _check_writable_file(path: Path, flag: str) -> None:
    parent = path.expanduser().parent
    if path.expanduser().is_dir():
        raise UsageError(f"{flag} {path} is a folder; name a file")
    if not parent.is_dir():
        raise UsageError(f"{flag} {path}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: the folder {parent} is not writable")


def _check_report(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in REPORT_FORMATS:
        known = ", ".join(f"{ext} ({name})" for ext, name in REPORT_FORMATS.items())
        raise UsageError(f"--report {path}: unknown extension {suffix or '(none)'!r}; use {known}")
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UsageError(f"--report {path}: writing Parquet needs pyarrow; "
                             "pip install 'paperfetch[parquet]', or use a .csv or .jsonl report") from None
    _check_writable_file(path, "--report")
    return suffix


def _read_input(path: Path, column: str) -> tuple[pd.DataFrame | None, list[str]]:
    """(*frame*, []) for a CSV; (None, lines) for a .txt file."""
    if path.suffix.lower() == ".txt":
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {path}: {exc}") from None
        return None, [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    if column not in frame.columns:
        raise UsageError(f"{path} has no column {column!r} (columns: {', '.join(frame.columns)})")
    return frame, []


# ---------------------------------------------------------------------------- files
def _write_private_safe(path: Path, writer: Callable[[Path], object]) -> None:
    """Write through *writer* to a sibling temporary name, then rename: no half-written report."""
    tmp = path.with_name(f".{path.name}.part")
    try:
        writer(tmp)
        os.chmod(tmp, _file_mode())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _file_mode() -> int:
    from paperfetch.log import file_mode

    return file_mode()


def _redacted(frame: pd.DataFrame) -> pd.DataFrame:
    from paperfetch.redact import redact_frame

    return redact_frame(frame.copy())


def write_report(frame: pd.DataFrame, path: Path) -> None:
    """Write *frame* as CSV, Parquet or JSON Lines, chosen by *path*'s extension (secrets masked)."""
    frame = _redacted(frame)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        _write_private_safe(path, lambda p: frame.to_csv(p, index=False))
    elif suffix == ".parquet":
        parquet = frame.copy()
        for column in parquet.columns:
            if parquet[column].dtype == object:  # mixed inputs (None, numbers, text): store as text
                parquet[column] = parquet[column].map(lambda v: None if _is_missing(v) else str(v)).astype("string")
        _write_private_safe(path, lambda p: parquet.to_parquet(p, index=False))
    elif suffix == ".jsonl":
        lines = _jsonl_records(frame)
        _write_private_safe(path, lambda p: p.write_text("".join(line + "\n" for line in lines), encoding="utf-8"))
    else:  # pragma: no cover - checked before the run
        raise UsageError(f"unknown report format {suffix!r}")


def _failed_inputs(outcomes: pd.DataFrame) -> list[str]:
    """The identifiers worth retrying: every row not finished well, except invalid and blank inputs."""
    keep = []
    for value, status in zip(outcomes["input"], outcomes["status"].astype(str)):
        if status in OK_STATUSES or status == "invalid_identifier" or _is_missing(value) or not str(value).strip():
            continue
        text = str(value).strip()
        if text not in keep:
            keep.append(text)
    return keep


def _write_failed(path: Path, outcomes: pd.DataFrame) -> int:
    lines = _failed_inputs(outcomes)
    body = "".join(redact_text(line) + "\n" for line in lines)
    _write_private_safe(path, lambda p: p.write_text(body, encoding="utf-8"))
    return len(lines)


# ---------------------------------------------------------------------------- commands
def _settings(args: argparse.Namespace, **extra: Any) -> Any:
    from paperfetch.config import load_settings

    arguments = {"email": args.email, "openalex_api_key": args.openalex_api_key, "ncbi_api_key": args.ncbi_api_key}
    arguments.update(extra)
    return load_settings(arguments, config_path=args.config)


def _config(args: argparse.Namespace) -> int:
    from paperfetch.errors import ConfigurationError
    from paperfetch.sources import SOURCES

    try:
        settings = _settings(args)
    except ConfigurationError as exc:
        raise UsageError(str(exc)) from None
    path = settings.config_path
    state = "found" if path is not None and path.is_file() else "not found"
    _say(f"config file: {path} ({state})")
    rows = settings.rows()
    width = max(len(name) for name, _, _ in rows)
    value_width = max(len(value) for _, value, _ in rows)
    for name, value, origin in rows:
        _say(f"  {name:<{width}}  {value:<{value_width}}  {origin}")
    if not settings.email:
        skipped = [name for name, cls in SOURCES.items() if cls.requires_email]
        _say(f"no contact e-mail: {', '.join(skipped)} will be skipped (set --email, PAPERFETCH_EMAIL or email in the file)")
    return EXIT_OK


def _download(args: argparse.Namespace) -> int:
    from paperfetch.errors import ConfigurationError

    # 1. everything that can be wrong with the command line, before any request
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be 1 or more, not {args.workers}")
    if args.max_retries is not None and args.max_retries < 0:
        raise UsageError(f"--max-retries must be 0 or more, not {args.max_retries}")
    for flag, value in (("--delay-min", args.delay_min), ("--delay-max", args.delay_max)):
        if value is not None and value < 0:
            raise UsageError(f"{flag} must be 0 or more, not {value}")
    try:
        settings = _settings(args, out_dir=args.out, workers=args.workers, delay_min_s=args.delay_min,
                             delay_max_s=args.delay_max, max_retries=args.max_retries, state=args.state)
    except ConfigurationError as exc:
        raise UsageError(str(exc)) from None
    if settings.workers is not None and settings.workers < 1:
        raise UsageError(f"workers must be 1 or more, not {settings.workers} (from {settings.origin['workers']})")
    if args.report is not None:
        _check_report(args.report)
    if args.failed is not None:
        _check_writable_file(args.failed, "--failed")
    ids: list[object] = list(args.ids) + list(args.doi) + [f"PMID:{p}" for p in args.pmid]
    frame = None
    if args.input is not None:
        frame, lines = _read_input(args.input, args.column)
        ids += lines
    if not ids and frame is None:
        raise UsageError("give identifiers, --doi/--pmid, or --input FILE (.csv or .txt)")
    out = _check_out_dir(settings.out_dir)
    all_inputs = ids + (list(frame[args.column]) if frame is not None and ids else [])

    from paperfetch.retriever import Retriever

    try:
        retriever = Retriever(
            email=settings.email, openalex_api_key=settings.openalex_api_key, ncbi_api_key=settings.ncbi_api_key,
            out_dir=out, polite_mode=not args.no_polite_mode, respect_robots_txt=args.robots,
            suppress_on_403=not args.no_suppress_403, delay_min_s=settings.delay_min_s, delay_max_s=settings.delay_max_s,
            max_retries=settings.max_retries, workers=settings.workers,
            progress=not (args.no_progress or args.quiet or args.format == "jsonl"), verbosity=0,
            cache=not getattr(args, "no_cache", False), state=settings.state,
        )
    except ConfigurationError as exc:
        raise UsageError(str(exc)) from None

    # 2. the run
    with retriever:
        csv_only = frame is not None and not ids
        inputs = frame[args.column].tolist() if frame is not None and not ids else all_inputs
        if args.dry_run:
            return _dry_run(retriever, inputs, args)
        started = time.time()
        try:
            outcomes = retriever.download(inputs)
        except KeyboardInterrupt:
            partial = _partial_outcomes(inputs, out, started)
            _finish(partial, args, interrupted=True, report=_joined(frame, partial) if csv_only else None)
            _say(f"paperfetch: interrupted; {int((partial['status'] != INTERRUPTED).sum())} of {len(partial)} "
                 "papers had finished", err=True)
            return EXIT_INTERRUPTED
        if args.verbose and not args.quiet and args.format == "table":
            _say("\nPer-host table:\n" + _host_table(retriever.domain_status()))
    return _finish(outcomes, args, report=_joined(frame, outcomes) if csv_only else None)


def _host_table(status: pd.DataFrame) -> str:
    """The per-host table for a terminal: seconds to one decimal, times to the second (UTC), empty cells empty."""
    if not len(status):
        return "(no host was asked)"

    def seconds(value: Any) -> str:
        return "" if pd.isna(value) else f"{float(value):.1f}"

    def clock(value: Any) -> str:
        return "" if pd.isna(value) else pd.Timestamp(value).strftime("%H:%M:%S")

    def get(row: Any, name: str) -> Any:
        return row[name] if name in row.index else None

    rows = []
    for _, row in status.iterrows():
        lo, hi = get(row, "delay_min_s"), get(row, "delay_max_s")
        delay = "" if lo is None or pd.isna(lo) else (seconds(lo) if hi is None or pd.isna(hi) or hi == lo
                                                      else f"{seconds(lo)}-{seconds(hi)}")
        held = clock(get(row, "held_until"))
        if held and get(row, "hold_status") is not None and not pd.isna(get(row, "hold_status")):
            held += f" ({int(get(row, 'hold_status'))})"
        suppressed = ""
        if bool(get(row, "suppressed")) and not pd.isna(get(row, "suppressed")):
            suppressed = clock(get(row, "suppressed_until")) or "yes"
        breaker = get(row, "breaker")
        breaker = "" if breaker is None or pd.isna(breaker) or str(breaker) == "closed" else str(breaker)
        last = get(row, "last_status")
        rows.append({
            "host": row["host"], "sent": int(row["requests"]) if not pd.isna(row["requests"]) else "",
            "last": "" if last is None or pd.isna(last) else int(last), "delay s": delay,
            "learned s": seconds(get(row, "learned_interval_s")) if (get(row, "learned_interval_s") or 0) > 0 else "",
            "backoff s": seconds(get(row, "backoff_s")) if (get(row, "backoff_s") or 0) > 0 else "",
            "crawl-delay s": seconds(get(row, "crawl_delay_s")) if get(row, "crawl_delay_s") is not None else "",
            "held until": held, "suppressed until": suppressed, "breaker": breaker,
        })
    return pd.DataFrame(rows).to_string(index=False)


def _joined(frame: pd.DataFrame | None, outcomes: pd.DataFrame) -> pd.DataFrame:
    """The CSV's rows with the outcome columns joined, as ``Retriever.download_frame`` makes them."""
    assert frame is not None
    joined = frame.copy()
    for name in outcomes.columns:
        if name != "input":
            joined[f"{name}_paperfetch" if name in frame.columns else name] = outcomes[name].to_numpy()
    return joined


def _finish(outcomes: pd.DataFrame, args: argparse.Namespace, interrupted: bool = False,
            report: pd.DataFrame | None = None) -> int:
    outcomes = _redacted(outcomes)
    if not args.quiet and not interrupted:
        if args.format == "jsonl":
            for line in _jsonl_records(outcomes, [c for c in RESULT_COLUMNS if c in outcomes.columns] or None):
                _say(line)
        else:
            _say(_results_table(outcomes))
    if args.report is not None:
        write_report(outcomes if report is None else report, args.report)
        if not args.quiet:
            _say(f"report written to {args.report}", err=args.format == "jsonl")
    if args.failed is not None:
        count = _write_failed(args.failed, outcomes)
        if not args.quiet:
            _say(f"{count} identifier(s) to retry written to {args.failed}", err=args.format == "jsonl")
    bad = int((~outcomes["status"].astype(str).isin(OK_STATUSES)).sum())
    if not args.quiet and not interrupted:
        _say(f"{len(outcomes)} papers: {_summary(outcomes)}", err=args.format == "jsonl")
    return EXIT_FAILED if bad else EXIT_OK


def _partial_outcomes(inputs: Sequence[object], out: Path, started: float) -> pd.DataFrame:
    """The outcomes known at an interruption: invalid inputs, and what the ledger recorded in this run."""
    from paperfetch.ids import parse_many
    from paperfetch.ledger import Ledger

    rows = []
    with Ledger.in_folder(out) as ledger:
        for item in parse_many(list(inputs)):
            row: dict[str, Any] = {"input": item.input, "id_type": None, "status": INTERRUPTED, "source": None,
                                   "http_status": None, "bytes": None, "path": None, "error": None}
            if item.identifier is None:
                row.update(status="invalid_identifier", error=item.error)
            else:
                row["id_type"] = item.identifier.type.value
                entry = ledger.get(item.identifier.key)
                if entry is not None and entry.updated_at.timestamp() >= started - 1.0:
                    path = ledger.absolute_path(entry)
                    row.update(status=entry.status, source=entry.source, http_status=entry.http_status,
                               bytes=entry.bytes, path=str(path) if path else None, error=entry.error)
                else:
                    row["error"] = "not finished when the run was interrupted"
            rows.append(row)
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)


def _dry_run(retriever: Any, inputs: Sequence[object], args: argparse.Namespace) -> int:
    found = _redacted(retriever.candidates(inputs))
    if not args.quiet:
        if args.format == "jsonl":
            for line in _jsonl_records(found):
                _say(line)
        else:
            shown = found.astype(object).where(found.notna(), "")
            shown["input"] = [_clip(str(v), 40) for v in shown["input"]]
            _say(shown.to_string(index=False))
    if args.report is not None:
        write_report(found, args.report)
    inputs_without = found.groupby("position")["url"].apply(lambda s: s.notna().any())
    return EXIT_OK if bool(inputs_without.all()) else EXIT_FAILED


def _demo(args: argparse.Namespace) -> int:
    import tempfile

    from paperfetch.demo import DEMO_INPUTS, DemoWorld
    from paperfetch.retriever import Retriever

    out = args.out or Path(tempfile.mkdtemp(prefix="paperfetch-demo-"))
    if Path(out).exists() and not Path(out).is_dir():
        raise UsageError(f"--out {out} is a file, not a folder")
    _say("Starting an offline world of services and publishers on loopback addresses …")
    with DemoWorld() as world:
        with Retriever(email="demo@example.org", out_dir=out, endpoints=world.endpoints,
                       progress=not (args.no_progress or args.quiet), verbosity=0,
                       # loopback answers and hosts have no place in the user's metadata cache or host state
                       cache=False, state="memory",
                       http_options={"network_retry_base_s": 0.1, "rate_limit_min_s": 0.1, "rate_limit_max_s": 0.3}) as retriever:
            started = time.monotonic()
            outcomes = retriever.download(DEMO_INPUTS)
            elapsed = time.monotonic() - started
            if not args.quiet:
                with pd.option_context("display.width", 160, "display.max_colwidth", 40):
                    _say(outcomes[["input", "id_type", "status", "source", "bytes", "title"]].to_string())
                _say(f"\nOutcomes: {_summary(outcomes)}")
                _say("\nPer-host table:\n" + _host_table(retriever.domain_status()))
                _say(f"\n{len(DEMO_INPUTS)} inputs in {elapsed:.1f} s, {world.requests_served()} HTTP requests served; "
                     f"PDFs in {out}")
    return EXIT_OK  # the demo shows failures on purpose; it succeeded when it ran


# ---------------------------------------------------------------------------- entry point
def main(argv: Sequence[str] | None = None) -> int:
    parser, _ = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        parser.print_help()
        return EXIT_OK
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help / --version
        return int(exc.code or 0)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_OK
    package = logging.getLogger("paperfetch")
    saved = (package.level, list(package.handlers))
    _setup_logging(args)
    try:
        return int(handler(args))
    except UsageError as exc:
        _say(f"paperfetch: {exc}", err=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        _say("paperfetch: interrupted", err=True)
        return EXIT_INTERRUPTED
    finally:  # main() called in-process (tests, a wrapper script) leaves logging as it found it
        package.setLevel(saved[0])
        for extra in [h for h in package.handlers if h not in saved[1]]:
            package.removeHandler(extra)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
