"""The rows a batch gives without running a paper: which column holds each input's identifier, the row a
resumed run takes from the ledger, a stopped item's row, a blocked row that keeps its earlier status, and a
paper's trail as ``Retriever.why`` shows it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

from paperfetch.cells import is_missing
from paperfetch.download import FileAction, download_action
from paperfetch.errors import ConfigurationError
from paperfetch.ids import Identifier
from paperfetch.ledger.base import LedgerEntry, ResumeLedger, recheck_due
from paperfetch.outcomes import BLOCKED_STATUSES, FINISHED_WELL_STATUSES, Status
from paperfetch.paper import identity_row, resumed_standing
from paperfetch.reasons import failure_reason
from paperfetch.redact import redact_frame
from paperfetch.suggest import did_you_mean

__all__ = ["IDENTIFIER_COLUMNS", "frame_inputs", "identifier_columns", "join_outcomes", "keep_describing_status",
           "resumed_row", "row_identifiers", "stopped_row", "why_frame", "with_text_columns"]

logger = logging.getLogger(__name__)

#: Where ``download_frame`` looks for each row's identifier, in order (Europe PMC's citations have PMIDs only).
IDENTIFIER_COLUMNS: tuple[str, ...] = ("doi", "pmid", "pmcid")


def identifier_columns(columns: Iterable[object], names: Sequence[str] = IDENTIFIER_COLUMNS) -> list[str]:
    """The columns holding *names*, in the order of *names*: the column of that exact name, else the one
    column whose name is that name in another case (``DOI``, ``PMID``: the headers of Zotero, Scopus and
    JabRef exports); raises ConfigurationError when several columns match a name only in another case."""
    have = [str(c) for c in columns]
    found: list[str] = []
    for name in names:
        if name in have:
            found.append(name)
            continue
        matching = [c for c in have if c.lower() == name.lower()]
        if len(matching) > 1:
            raise ConfigurationError(f"several columns could hold the {name} ({', '.join(map(repr, matching))}); "
                                     f"name the one to read: column={matching[0]!r}")
        found.extend(matching)
    return found


def row_identifiers(df: pd.DataFrame, columns: Sequence[str]) -> list[object]:
    """Each row's first identifier among *columns* (a PMID as ``PMID:…``), or None for a row with none."""
    chosen: list[object] = []
    for values in df[list(columns)].itertuples(index=False, name=None):
        given = [(name, value) for name, value in zip(columns, values) if not is_missing(value) and str(value).strip()]
        name, value = given[0] if given else ("", None)
        text = str(value).strip()
        chosen.append(f"PMID:{text}" if name.lower() == "pmid" and text.isdigit() else value)
    return chosen


def why_frame(entry: LedgerEntry | None) -> pd.DataFrame:
    """``source, answer`` rows from a ledger entry's trail (its status and error when it has none)."""
    if entry is None:
        return pd.DataFrame({"source": pd.Series([], dtype=object), "answer": pd.Series([], dtype=object)})
    trail = [tuple(step) for step in (entry.extra or {}).get("trail") or [] if len(step) == 2]
    if not trail:
        trail = [(entry.source or "", f"{entry.status}: {entry.error}" if entry.error else entry.status)]
    return redact_frame(pd.DataFrame(trail, columns=["source", "answer"], dtype=object))


def stopped_row(row: dict[str, Any]) -> dict[str, Any]:
    """An unfinished item's row: its identity and metadata, status ``stopped``, no file."""
    stopped = {k: v for k, v in row.items() if k not in ("path", "bytes", "sha256", "title_match")}
    stopped.update(status=Status.STOPPED.value, reason="stopped before it finished",
                   error="the batch was stopped before this item finished")
    return stopped


def keep_describing_status(row: dict[str, Any], prior: LedgerEntry | None) -> dict[str, Any]:
    """A row a host's hold or suppression decided keeps the paper's earlier status and that status's
    reason (a row's reason is always its status's); this run's block and both runs are in ``error``."""
    # an earlier block, or an earlier file now gone: this run's answer is the news
    if prior is None or row.get("status") not in BLOCKED_STATUSES or prior.status in BLOCKED_STATUSES | FINISHED_WELL_STATUSES:
        return row
    kept = dict(row)
    kept.update(status=prior.status, source=prior.source, url=prior.url, http_status=prior.http_status)
    earlier = (getattr(prior, "extra", None) or {}).get("reason") or (prior.error or "").split(" | ")[0]
    kept["reason"] = earlier or failure_reason(prior.status, http_status=prior.http_status, url=prior.url)
    said, error = row.get("reason") or row["status"], row.get("error") or ""
    block = error if error.startswith(said) else f"{said} | {error}" if error else said
    kept["error"] = f"{kept['reason']} | this run: {block} | earlier: {prior.error or prior.status}"[:2000]
    return kept


def with_text_columns(row: dict[str, Any]) -> dict[str, Any]:
    """*row* with ``text_source`` (``jats`` for an XML file, ``pdf`` for a PDF) and ``text_path``: the file it
    finished with, None without one."""
    path = row.get("path") if row.get("status") in FINISHED_WELL_STATUSES else None
    source = None if not path else "jats" if str(path).endswith(".xml") else "pdf"
    return {**row, "text_source": source, "text_path": str(path) if source else None}


def resumed_row(ledger: ResumeLedger, ident: Identifier, out_dir: Path, *, key: str | None = None
                ) -> dict[str, Any] | None:
    """The row for *ident* (kept under *key*, else its own key) from *ledger* when
    :func:`~paperfetch.download.download_action` needs no request, else None."""
    key = key or ident.key
    done = ledger.is_done(key, out_dir)
    entry = done or ledger.get(key)
    if entry is None:
        return None
    # a recorded key's should_retry(): its retryable flag, or a final "absent" answer past the recheck age
    action = download_action(resume=True, done=done is not None, final=not (entry.retryable or recheck_due(entry)))
    if action is FileAction.FETCH:
        return None
    extra = dict(entry.extra or {})
    row = identity_row(ident, extra)
    row["title_match"] = extra.get("title_match")  # stored when it was downloaded
    row.update(source=entry.source, url=entry.url, http_status=entry.http_status, attempts=0, waited_s=0.0, elapsed_s=0.0)
    row.update(resumed_standing(extra))
    if action is FileAction.REUSE:
        path = ledger.absolute_path(entry)
        row.update(status=Status.ALREADY_DOWNLOADED.value, path=str(path) if path else None, bytes=entry.bytes,
                   sha256=entry.sha256)
    else:
        row.update(status=entry.status, error=entry.error, reason=extra.get("reason"))
    return row


def frame_inputs(df: pd.DataFrame, column: str | None, columns: Sequence[str] | None) -> tuple[list[str], Any]:
    """``(the columns read, the inputs)`` of a frame: *column* alone, else *columns*, else ``doi``, ``pmid``
    and ``pmcid`` (each also in another case, when only one column matches); each row's first identifier."""
    names = [column] if column is not None else list(columns or IDENTIFIER_COLUMNS)
    if column is None and columns is None:
        present = identifier_columns(df.columns)
        if present and present != [name for name in IDENTIFIER_COLUMNS if name in df.columns]:
            logger.info("reading the identifiers from column(s) %s", ", ".join(map(repr, present)))
    else:
        present = [name for name in names if name in df.columns]
    if not present:
        raise ConfigurationError(f"no column {names[0]!r} in the frame{did_you_mean(names[0], df.columns)}; "
                                 f"it has {list(df.columns)}")
    return present, (row_identifiers(df, present) if len(present) > 1 else df[present[0]])


def join_outcomes(df: pd.DataFrame, outcomes: pd.DataFrame, present: Sequence[str]) -> pd.DataFrame:
    """*df* with the outcome columns joined (:meth:`Retriever.download_frame`, a Job's frames): the caller's
    columns are never overwritten (a clashing outcome column is ``<name>_paperfetch``); a row without an
    identifier says which columns were looked at."""
    outcomes = outcomes.copy()
    outcomes.index = df.index
    blank = pd.Series([value is None for value in row_identifiers(df, present)], index=df.index)
    if blank.any():  # say which columns were looked at, not "blank input"
        outcomes.loc[blank, "reason"] = "no identifier in this row"
        outcomes.loc[blank, "error"] = f"no identifier in this row (looked at: {', '.join(present)})"
    joined = df.copy()
    for name in outcomes.columns:
        if name != "input":
            joined[f"{name}_paperfetch" if name in df.columns else name] = outcomes[name]
    return joined
