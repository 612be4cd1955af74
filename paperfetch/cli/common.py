"""What every ``paperfetch`` subcommand shares: exit statuses, UsageError, options, masked output, checks
before any request, report and export files, SIGTERM, retry warnings. It imports no command module.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shutil
import signal
import sys
import textwrap
import threading
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import pandas as pd

from paperfetch.cells import clip, is_missing
from paperfetch.config import environment
from paperfetch.errors import ConfigurationError
from paperfetch.ids import parse_many
from paperfetch.integrity import met_by, met_line
from paperfetch.log import file_mode
from paperfetch.outcomes import COLUMNS, FINISHED_WELL_STATUSES, Status, outcomes_frame
from paperfetch.redact import redact_frame, redact_text
from paperfetch.reports import LIST_TYPES, report_schema
from paperfetch.settings import SETTING_NAMES, Settings, load_settings, setting_flag
from paperfetch.suggest import did_you_mean

if TYPE_CHECKING:  # pragma: no cover
    from paperfetch.retriever import Retriever

__all__ = [
    "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TERMINATED", "EXIT_USAGE", "EXPORT_EXTENSIONS",
    "HostWarnings", "INTERRUPTED", "REPORT_FORMATS", "RESULT_COLUMNS", "Terminated",
    "UsageError", "check_column", "check_out_dir", "check_outputs",
    "check_writable_file", "common_options", "configuration_is_usage", "counted", "exit_status", "export_option", "fitted_table",
    "frame_text", "hanging_table", "identity_options", "inputs_note", "interrupted_exit", "interrupted_word", "jsonl_records",
    "partial_outcomes", "progress_wanted", "read_lines", "redacted", "results_table", "retriever_for", "say",
    "setting_option", "settings_from", "sigterm_as_interrupt", "stdout_gone", "summary", "tell", "terminal_width", "wrapped",
    "write_export", "write_lines", "write_private_safe", "write_report"
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
#: Stopped by SIGTERM (``timeout``, systemd, SLURM, ``kill``): 128 + 15, after the partial report.
EXIT_TERMINATED = 143
#: --export file extensions (:data:`paperfetch.export.EXPORT_FORMATS`).
EXPORT_EXTENSIONS = {".bib": "BibTeX", ".ris": "RIS", ".json": "CSL-JSON"}
#: --report file extensions and their writers.
REPORT_FORMATS = {".csv": "CSV", ".parquet": "Parquet", ".jsonl": "JSON Lines"}
#: The columns of the per-paper table and of --format jsonl.
RESULT_COLUMNS = ["input", "id_type", "status", "source", "http_status", "bytes", "path", "reason", "error"]
#: The status of a paper the run did not finish when it was stopped: the library's word.
INTERRUPTED = Status.STOPPED.value


class UsageError(Exception):
    """A usage error found before any request: printed as ``paperfetch: <message>``, exit status 2."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be, so every ``except KeyboardInterrupt`` handles it; exit status 143."""


_terminated = threading.Event()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While the command runs, SIGTERM raises :class:`Terminated` in the main thread, as SIGINT does."""
    _terminated.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(_signum: int, _frame: Any) -> None:
        _terminated.set()
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def interrupted_exit() -> int:
    """The exit status of an interrupted run: 143 after SIGTERM, 130 after Ctrl-C."""
    return EXIT_TERMINATED if _terminated.is_set() else EXIT_INTERRUPTED


def interrupted_word() -> str:
    return "terminated (SIGTERM)" if _terminated.is_set() else "interrupted"


class HostWarnings(logging.Filter):
    """Keeps the warnings about hosts to a line or two. A host's first retry warning passes, marked "(further
    retries … not shown)", and the others are counted. With *hold_unreachable* (no ``-v``), the warnings about
    hosts that could not be reached (retries of a refused connection, the breaker that opens, the lookups that
    failed) are held back and counted: the command ends with one line about them (the offline line, or
    :meth:`summary`) instead of a screenful."""

    def __init__(self, *, hold_unreachable: bool = True) -> None:
        super().__init__()
        self.hold_unreachable = hold_unreachable
        self.retries: dict[str, int] = {}
        self.unreachable: dict[str, int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.levelno != logging.WARNING:
            return True
        if self.hold_unreachable and _UNREACHABLE.search(message):
            where = _host_in(message) or message.split(":", 1)[0].split()[-1]
            self.unreachable[where] = self.unreachable.get(where, 0) + 1
            return False
        host = _host_in(message) if "retry" in message else None
        if host is None:
            return True
        if host in self.retries:
            self.retries[host] += 1
            return False
        self.retries[host] = 0
        record.msg, record.args = f"{message} (further retries of {host} not shown)", ()
        return True

    def summary(self) -> list[str]:
        """``"4 warnings about hosts that could not be reached not shown; -v shows them"`` (the hosts named when
        one or two) and ``"retries not shown: 5 for a.example, 3 for b.example"``, each when some were held back."""
        lines = []
        if self.unreachable:
            hosts = sorted(self.unreachable)
            named = f" ({', '.join(hosts)})" if len(hosts) <= 2 else ""
            lines.append(f"{counted(sum(self.unreachable.values()), 'warning')} about hosts that could not be reached "
                         f"not shown{named}; -v shows them")
        shown = [f"{n} for {host}" for host, n in self.retries.items() if n]
        return lines + ([f"retries not shown: {', '.join(shown)}"] if shown else [])


#: The warnings :class:`HostWarnings` holds back without -v: a connection that failed, a host unreachable.
_UNREACHABLE = re.compile(r"ConnectionError for |\bunreachable\b|could not be reached")

_RETRY_HOST = re.compile(r"https?://([^/\s;:]+(?::\d+)?)|HTTP \d+ from (\S+);")


def _host_in(message: str) -> str | None:
    """The host a retry warning names: its URL's authority, or the host of "HTTP 503 from host;"."""
    found = _RETRY_HOST.search(message)
    return None if found is None else (found.group(1) or found.group(2))


@contextmanager
def configuration_is_usage() -> Iterator[None]:
    """The one mapping of a ConfigurationError to a UsageError (exit 2), around a command's work before any request."""
    try:
        yield
    except ConfigurationError as exc:
        raise UsageError(str(exc)) from None


def common_options() -> argparse.ArgumentParser:
    """-v/-q, shared by every subcommand (pass as ``parents=[common_options()]``)."""
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", action="count", default=0,
                       help="log what happens on stderr (-v: info, -vv: debug)")
    group.add_argument("-q", "--quiet", action="store_true", help="print only errors (the exit status tells the rest)")
    return common


def identity_options(parser: argparse.ArgumentParser) -> None:
    """--email, the API keys and --config: what :func:`settings_from` reads."""
    for name in ("email", "openalex_api_key", "ncbi_api_key"):  # secrets: never printed; a variable keeps them out of ps
        setting_option(parser, name)
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="the TOML settings file (default: config.toml in the user config folder; env PAPERFETCH_CONFIG)")


def setting_option(parser: argparse.ArgumentParser, name: str, *flags: str, **changes: Any) -> None:
    """The flag (``--<name>``, or *flags*) of run option *name*, made from its ``Settings`` field and stored under
    the setting's name, where :func:`settings_from` finds it; *changes* are a command's own (its help line)."""
    flags = flags or (f"--{name.replace('_', '-')}",)
    spec = {**setting_flag(name), **changes}
    if "type" in spec and not spec["choices"]:
        spec["metavar"] = flags[0].lstrip("-").replace("-", "_").upper()
    parser.add_argument(*flags, dest=name, **spec)


def export_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--export", type=Path, metavar="FILE",
                        help="write the rows as citations: FILE.bib (BibTeX), FILE.ris (RIS) or FILE.json (CSL-JSON)")


def settings_from(args: argparse.Namespace) -> Settings:
    """The effective settings: the arguments stored under a setting's name > environment > config file > defaults.
    The CLI's ``verbosity`` is its own (it prints what it wants). A bad value, or an output file asked for that
    cannot be written (:func:`check_outputs`), is a usage error."""
    given = {name: getattr(args, name) for name in SETTING_NAMES if getattr(args, name, None) is not None}
    with configuration_is_usage():
        settings = load_settings({**given, "verbosity": 0}, config_path=args.config)
    check_outputs(args)
    return settings


def retriever_for(settings: Settings, args: argparse.Namespace, *, jsonl: bool = False, **options: Any) -> Retriever:
    """The command's Retriever on *settings*: a progress bar as :func:`progress_wanted` says, the metadata cache
    unless --no-cache; a setting it refuses is a usage error."""
    from paperfetch.retriever import Retriever

    with configuration_is_usage(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="no contact e-mail")  # the CLI logs it once already
        return Retriever(settings=settings, progress=progress_wanted(args, jsonl=jsonl), cache=not args.no_cache,
                         **options)


def say(message: str, *, err: bool = False, masked: bool = True) -> None:
    """Print one message (secrets masked; *masked* False: a constant of the code's own, e.g. the documented
    address of a hint) on stdout, or stderr with *err*. Once the reader of stdout has gone
    (``paperfetch config | head -3``), what follows is dropped and the command carries on (reports, exit status)."""
    stream = sys.stderr if err else sys.stdout
    try:
        print(redact_text(message) if masked else message, file=stream, flush=True)
    except BrokenPipeError:
        stdout_gone(stream)


def tell(args: argparse.Namespace, message: str, *, err: bool = False) -> None:
    """:func:`say` *message* unless -q asked for errors only."""
    if not args.quiet:
        say(message, err=err)


def stdout_gone(stream: Any = None) -> None:
    """Point the file descriptor of *stream* (stdout) at ``/dev/null``: its reader has closed the pipe, and
    writing on (or flushing at exit) would raise ``BrokenPipeError`` again."""
    stream = sys.stdout if stream is None else stream
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's capture): nothing to redirect
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def terminal_width() -> int | None:
    """The columns the output may use: ``$COLUMNS``, else the width of the terminal stdout is; None when stdout
    is no terminal (a pipe or a file keeps whole rows)."""
    if environment().get("COLUMNS", "").strip().isdigit() or sys.stdout.isatty():
        return max(40, shutil.get_terminal_size().columns)
    return None


def wrapped(line: str, width: int | None, indent: str = "  ") -> str:
    """*line* wrapped at words to *width* (later lines indented); unchanged without a width."""
    if width is None or len(line) <= width:
        return line
    return "\n".join(textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False,
                                    break_long_words=False))


def progress_wanted(args: argparse.Namespace, *, jsonl: bool = False) -> bool:
    """Whether a command draws its progress bar: not with --no-progress, -q or JSON Lines on stdout, and only
    when stderr is a terminal (a cron log or a pipe would collect every frame on one ``\\r`` line)."""
    if getattr(args, "no_progress", False) or getattr(args, "quiet", False) or jsonl:
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def redacted(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of *frame* with secrets masked."""
    return redact_frame(frame.copy())


def jsonl_records(frame: pd.DataFrame) -> list[str]:
    """One JSON object a row (missing values as null; a NumPy number as the Python one)."""
    return [json.dumps({k: (None if is_missing(v) else v) for k, v in record.items()}, ensure_ascii=False, default=_plain)
            for record in frame.astype(object).to_dict(orient="records")]


def _plain(value: Any) -> Any:
    try:
        return value.item()
    except (AttributeError, ValueError):
        return str(value)


def exit_status(outcomes: pd.DataFrame) -> int:
    """0 when every row finished well, else 1."""
    return EXIT_OK if outcomes["status"].astype(str).isin(FINISHED_WELL_STATUSES).all() else EXIT_FAILED


def counted(count: int, word: str) -> str:
    """``"1 paper"``, ``"3 papers"``: *count* and *word*, plural when it is not 1."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(outcomes: pd.DataFrame) -> str:
    """``"3 downloaded, 1 not_found"``: the count of each status."""
    counts = outcomes["status"].astype(str).value_counts()
    said = ", ".join(f"{count} {name}" for name, count in counts.items())
    met = met_line(Counter(name for row in outcomes.to_dict("records") for name in met_by(row)))
    return f"{said}; met {met}" if met else said


def check_out_dir(out: str) -> Path:
    """The output folder, created if missing; a UsageError when it is a file or not writable."""
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


def check_writable_file(path: Path, flag: str) -> None:
    """A UsageError unless *path* (given with *flag*) can be written: a file in a writable folder."""
    parent = path.expanduser().parent
    if path.expanduser().is_dir():
        raise UsageError(f"{flag} {path} is a folder; name a file")
    if not parent.is_dir():
        raise UsageError(f"{flag} {path}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: the folder {parent} is not writable")


def _known_suffix(path: Path, flag: str, formats: dict[str, str]) -> str:
    """*path*'s extension, lower case; a UsageError naming the known ones when it is none of *formats*."""
    suffix = path.suffix.lower()
    if suffix not in formats:
        known = ", ".join(f"{ext} ({name})" for ext, name in formats.items())
        raise UsageError(f"{flag} {path}: unknown extension {suffix or '(none)'!r}; use {known}")
    return suffix


def write_export(frame: pd.DataFrame, path: Path) -> int:
    """Write the citations of *frame* to *path* (secrets masked; format by extension); the entries written."""
    from paperfetch.export import EXPORT_FORMATS, records

    clean = redacted(frame)
    text = EXPORT_FORMATS[path.suffix.lower()](clean)
    write_private_safe(path, lambda p: p.write_text(text, encoding="utf-8"))
    return len(records(clean))


def check_column(frame: pd.DataFrame, column: str, where: str) -> None:
    """A UsageError when *frame* has no *column*, with the nearest name suggested."""
    if column not in frame.columns:
        header = ", ".join(map(str, frame.columns))
        hint = ""
        if len(frame.columns) == 1 and ";" in header:  # a European spreadsheet's CSV: one column of a;b;c
            hint = ("; this file looks ';'-separated: save it with commas (or as .txt, one identifier a line)")
        raise UsageError(f"{where} has no column {column!r}{did_you_mean(column, frame.columns)} "
                         f"(columns: {header}){hint}")


def check_outputs(args: argparse.Namespace) -> None:
    """A UsageError unless each output file asked for (--report, --outcomes, --failed, --export) can be written
    in a known format (pyarrow for Parquet)."""
    for flag, formats in (("report", REPORT_FORMATS), ("outcomes", REPORT_FORMATS), ("failed", None),
                          ("export", EXPORT_EXTENSIONS)):
        path = getattr(args, flag, None)
        if path is None:
            continue
        if formats is not None and _known_suffix(path, f"--{flag}", formats) == ".parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise UsageError(f"--{flag} {path}: writing Parquet needs pyarrow; "
                                 "pip install 'paperfetch-oa[parquet]', or use a .csv or .jsonl report") from None
        check_writable_file(path, f"--{flag}")


def read_lines(path: Path) -> list[str]:
    """The lines of a .txt ``--input``, stripped: blank lines and ``#`` comment lines skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def write_lines(path: Path, lines: Iterable[str]) -> None:
    """*lines* as a text file, one a line, secrets masked (a ``--failed`` list, read back with ``--input``)."""
    body = "".join(redact_text(line) + "\n" for line in lines)
    write_private_safe(path, lambda p: p.write_text(body, encoding="utf-8"))


def write_private_safe(path: Path, writer: Callable[[Path], object]) -> None:
    """Write through *writer* to a sibling temporary name, then rename: no half-written report."""
    tmp = path.with_name(f".{path.name}.part")
    try:
        writer(tmp)
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _list_columns(frame: pd.DataFrame) -> list[str]:
    """The columns whose cells are lists, tuples or dicts, and the known ones that are all missing (0 rows too)."""
    return [c for c in frame.columns if any(isinstance(v, (list, tuple, dict)) for v in frame[c])
            or (c in LIST_TYPES and all(is_missing(v) for v in frame[c]))]


def _as_lists(frame: pd.DataFrame) -> pd.DataFrame:
    """*frame* with each list column's cells as lists (an empty one ``[]``) or None (missing, never NaN)."""
    listed = _list_columns(frame)
    return frame.assign(**{c: [None if is_missing(v) else list(v) if isinstance(v, tuple) else v for v in frame[c]]
                           for c in listed})


def _parquet(frame: pd.DataFrame, path: Path) -> None:
    """*frame* as Parquet: list columns as Arrow lists (of structs for the authors), other mixed columns as text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    listed = _list_columns(frame)
    frame = _as_lists(frame)
    plain = frame.drop(columns=listed)
    for column in plain.columns:  # a copy already: mixed inputs (None, numbers, text) stored as text
        if plain[column].dtype == object:
            plain[column] = plain[column].map(lambda v: None if is_missing(v) else _json_cell(v)).astype("string")
    table = pa.Table.from_pandas(plain, preserve_index=False)
    typed = report_schema([column for column in listed if column in LIST_TYPES])
    for position, column in enumerate(frame.columns):
        if column in listed:
            kind = typed.field(column).type if column in typed.names else None
            table = table.add_column(position, column, pa.array(list(frame[column]), type=kind))
    write_private_safe(path, lambda p: pq.write_table(table, p))


def write_report(frame: pd.DataFrame, path: Path) -> None:
    """Write *frame* as CSV, Parquet or JSON Lines, chosen by *path*'s extension (secrets masked). Parquet keeps
    list columns as Arrow lists of a fixed type; JSON Lines gives every row every column, lists as arrays (empty:
    ``[]``) and a missing value as null."""
    frame = redacted(frame)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        listed = _list_columns(frame)
        frame = frame.assign(**{c: frame[c].map(_json_cell) for c in listed})  # the authors as JSON, not a repr
        write_private_safe(path, lambda p: frame.to_csv(p, index=False))
    elif suffix == ".parquet":
        _parquet(frame, path)
    elif suffix == ".jsonl":
        write_lines(path, jsonl_records(_as_lists(frame)))
    else:  # pragma: no cover - checked before the run
        raise UsageError(f"unknown report format {suffix!r}")


def _json_cell(value: Any) -> Any:
    """A list or dict cell (the typed ``authors``) as JSON text; any other value as it is (text for parquet)."""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False)
    return value if is_missing(value) or isinstance(value, str) else str(value)


def partial_outcomes(inputs: Sequence[object], out: Path, started: float) -> pd.DataFrame:
    """The outcomes known at an interruption the library could not report, full schema: the ledger's rows of this
    run, ``stopped`` for the rest (as the library's partial frame has them)."""
    from paperfetch.ledger import SqliteLedger
    from paperfetch.paper import identity_row

    rows = []
    with SqliteLedger.in_folder(out) as ledger:
        for item in parse_many(list(inputs)):
            if item.identifier is None:
                rows.append({"input": item.input, "status": "invalid_identifier", "error": item.error})
                continue
            entry = ledger.get(item.identifier.key)
            if entry is not None and entry.updated_at.timestamp() < started - 1.0:
                entry = None  # an answer of an earlier run
            row = {"input": item.input, **identity_row(item.identifier, dict(entry.extra or {}) if entry is not None else {})}
            if entry is None:
                row.update(status=None)
            else:
                path = ledger.absolute_path(entry)
                row.update(status=entry.status, source=entry.source, url=entry.url, http_status=entry.http_status,
                           bytes=entry.bytes, sha256=entry.sha256, path=str(path) if path else None, error=entry.error)
            rows.append({k: v for k, v in row.items() if k in COLUMNS})
    frame = outcomes_frame(rows)
    unfinished = frame["status"].isna()
    frame.loc[unfinished, "status"] = INTERRUPTED
    frame.loc[unfinished, "reason"] = "stopped before it finished"
    return frame


def results_table(outcomes: pd.DataFrame, width: int | None = None, columns: Sequence[str] = ("input", "status", "source"),
                  details: Sequence[str] = ("path", "reason", "error")) -> str:
    """The per-paper table of ``download`` (and ``text``): *columns*, then the first of *details* a row has (the
    file, else why not), fitted to *width* (default: :func:`terminal_width`) by :func:`hanging_table`: the input
    cut first, a path cut from the left (its file name whole), a reason wrapped, never cut."""
    frame = outcomes.reindex(columns=[*columns, *details])
    found = [next(((name, text) for name, text in zip(details, cells) if isinstance(text, str) and text), ("", ""))
             for cells in zip(*(frame[name] for name in details))]
    shown = frame[list(columns)].astype(object)
    shown = shown.where(shown.notna(), "")
    shown["input"] = [clip(str(v), 40, one_line=True) for v in shown["input"]]
    shown["detail"] = [" ".join(text.split()) for _, text in found]
    paths = [name.endswith("path") for name, _ in found]
    return hanging_table(shown, "detail", terminal_width() if width is None else width, ["input"], paths=paths)


#: The least room :func:`hanging_table` gives its last column beside the others; with less, it goes below.
_LAST_ROOM = 24


def hanging_table(frame: pd.DataFrame, last: str, width: int | None, shrink: Sequence[str], *,
                  paths: Sequence[bool] = ()) -> str:
    """*frame* as text, its column *last* never cut at the right: the columns *shrink* are cut first (to leave it
    room), then a long cell of *last* is wrapped under itself, or cut from the left when *paths* marks it a path
    (its file name stays whole); with too little room beside the row, it is wrapped on the lines below. As
    ``to_string`` without a width."""
    if width is None or frame.empty:
        return frame.to_string(index=False)
    cells = [str(v) for v in frame[last]]
    head = frame.drop(columns=[last])
    wanted = min(_LAST_ROOM, max(len(c) for c in [*cells, last]))
    lines = fitted_table(head, width - 1 - wanted, shrink).splitlines()
    if width - 1 - max(map(len, lines)) < wanted:  # the input at its shortest leaves too little: the cells below
        lines = fitted_table(head, width, shrink).splitlines()
        at, room = 4, width - 4
    else:
        at = max(map(len, lines)) + 1
        room = width - at
    rows = [f"{lines[0]:<{at - 1}} {last}" if at > 4 else f"{lines[0]}\n{'':<{at}}{last}"]
    for line, cell, path in zip(lines[1:], cells, [*paths, *[False] * len(cells)]):
        below = at > 4 and path and len(_left_cut(cell, room)) > room  # its file name is wider than the room
        parts = [_left_cut(cell, width - 4 if below else room)] if path else \
            textwrap.wrap(cell, room, break_on_hyphens=False) or [""]
        if at > 4 and not below:
            rows.append(f"{line:<{at - 1}} {parts[0]}".rstrip())
            rows.extend(f"{'':<{at}}{part}" for part in parts[1:])
        else:
            rows.append(line.rstrip())
            rows.extend(f"    {part}" for part in parts if part)
    return "\n".join(rows)


def _left_cut(path: str, room: int) -> str:
    """*path* cut from the left at a ``/`` to *room* characters (``…/`` first), its file name always whole."""
    if len(path) <= room:
        return path
    parts = path.split("/")
    kept = parts[-1]
    for part in reversed(parts[:-1]):
        if len(part) + len(kept) + 3 > room:
            break
        kept = f"{part}/{kept}"
    return f"…/{kept}"


def fitted_table(frame: pd.DataFrame, width: int | None, shrink: Sequence[str], *, index: bool = False) -> str:
    """``frame.to_string()`` with the text columns *shrink* cut (``…``, the first named first, none below 12
    characters) until its rows fit *width*; as it is without a width."""
    shown = frame.copy()
    text = shown.to_string(index=index)
    if width is None:
        return text
    for name in shrink:
        excess = max((len(line) for line in text.splitlines()), default=0) - width
        if excess <= 0:
            break
        cells = [str(v) for v in shown[name]]
        widest = max([len(c) for c in cells] + [len(str(name))])
        limit = max(12, widest - excess)
        shown[name] = [clip(c, limit) for c in cells]
        text = shown.to_string(index=index)
    return text


def frame_text(frame: pd.DataFrame, *, colwidth: int = 60, shrink: Sequence[str] = ("title", "journal", "authors")) -> str:
    """A table of rows for the terminal: cells cut at *colwidth*, and, when :func:`terminal_width` is known, the
    text columns *shrink* cut further until the rows fit (the index shown, as ``to_string`` shows it)."""
    width = terminal_width()
    if width is None:
        with pd.option_context("display.width", 160, "display.max_colwidth", colwidth):
            return frame.to_string()
    shown = frame.astype(object)
    shown = shown.where(shown.notna(), "<NA>").map(lambda v: clip(str(v), colwidth, one_line=True))
    return fitted_table(shown, width, [c for c in shrink if c in shown.columns] + list(shown.columns), index=True)


def inputs_note(inputs: Sequence[object]) -> str:
    """``"22 inputs: 19 to fetch, 2 duplicates, 1 invalid"`` when some inputs are not fetched, else ``""``."""
    parsed = parse_many(list(inputs))
    invalid = sum(1 for p in parsed if p.identifier is None)
    duplicates = sum(1 for p in parsed if p.identifier is not None and p.duplicate_of is not None)
    if not (invalid or duplicates):
        return ""
    parts = [f"{len(parsed) - invalid - duplicates} to fetch"]
    if duplicates:
        parts.append(f"{counted(duplicates, 'duplicate')} (same outcome as the first)")
    if invalid:
        parts.append(f"{invalid} invalid")
    return f"{len(parsed)} inputs: {', '.join(parts)}"
