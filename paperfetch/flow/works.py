"""One file per work: inputs of one batch that name the same work once resolved (a PMID and its DOI, a DOI
written twice) are fetched once, each keeping its own row (``same_work_as``, docs/outcomes.md); a preprint given
with its journal version leaves the file to it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

from paperfetch.flow.job import PaperJob
from paperfetch.ids import ParsedInput
from paperfetch.outcomes import FINISHED_WELL_STATUSES, Status
from paperfetch.paper import Paper, identity_row, ledger_entry
from paperfetch.sources.biorxiv import is_biorxiv_doi

__all__ = ["batch_works", "deferred", "settle_deferred", "share_rows", "work_groups", "work_key"]

#: Rows the ledger does not keep for a shared input: nothing was decided about the work
_NOT_KEPT = frozenset({Status.STOPPED.value, Status.INVALID_IDENTIFIER.value})


def batch_works(papers: Sequence[tuple[int, Paper]]) -> dict[str, int]:
    """The DOI of every paper's work -> its input's position (the first one, for a work given twice), when the
    batch could pair a preprint with its journal version: it holds a bioRxiv/medRxiv DOI and another DOI.
    Otherwise empty, and no preprint asks for its link before its first copy."""
    dois = [(str(paper.doi).strip().lower(), position) for position, paper in papers if paper.doi]
    if {is_biorxiv_doi(doi) for doi, _ in dois} != {True, False}:
        return {}
    return dict(reversed(dois))  # a work given twice: its first input's position is written last


def work_key(paper: Paper) -> str:
    """What names the work: its DOI (lower case) once known, else the identifier's own key."""
    return f"doi:{str(paper.doi).strip().lower()}" if paper.doi else paper.identifier.key


def work_groups(jobs: Sequence[tuple[ParsedInput, PaperJob]], decided: Mapping[int, Mapping[str, Any]] | None = None
                ) -> tuple[list[tuple[ParsedInput, PaperJob]], dict[int, tuple[int, PaperJob]]]:
    """``(the jobs to run, shared)``: the first job of each work runs; *shared* maps every later input's position to
    ``(the first input's position, its own job)``. A work a *decided* row (from the ledger) has the PDF of is not run."""
    first: dict[str, int] = {}
    for position, row in (decided or {}).items():
        if row.get("doi") and row.get("status") in FINISHED_WELL_STATUSES:
            first.setdefault(f"doi:{str(row['doi']).strip().lower()}", position)
    kept: list[tuple[ParsedInput, PaperJob]] = []
    shared: dict[int, tuple[int, PaperJob]] = {}
    for item, job in jobs:
        key = work_key(job.paper)
        if key in first:
            shared[item.position] = (first[key], job)
        else:
            first[key] = item.position
            kept.append((item, job))
    return kept, shared


def share_rows(shared: Mapping[int, tuple[int, PaperJob]], rows: dict[int, dict[str, Any]], inputs: Sequence[Any], *,
               ledger: Any = None, on_row: Callable[[int, dict[str, Any]], None] | None = None,
               key: Callable[[str], str] = str) -> None:
    """Give each shared input the row of the input it shares the work with: that row's outcome and file,
    this input's own identity, ``same_work_as`` naming the other input; the ledger keeps it under this input's
    ``key(identifier key)``."""
    for position, (first, job) in shared.items():
        if first not in rows:
            continue
        paper = job.paper
        # its own identity and what its own sources said, over the other input's row
        own = {k: v for k, v in {**identity_row(paper.identifier, paper.meta), **paper.standing_row()}.items()
               if v is not None}
        row = {**rows[first], **own, "same_work_as": inputs[first]}
        rows[position] = row
        if ledger is not None and row["status"] not in _NOT_KEPT:
            ledger.record(**ledger_entry(key(paper.identifier.key), {**row, "title_match": None}, updates=paper.updates))
        if on_row is not None:
            on_row(position, row)


def deferred(paper: Paper) -> bool:
    """Whether *paper* left its file to another input of the batch and waits for :func:`settle_deferred`."""
    return paper.same_work is not None and not paper.defer_done


def settle_deferred(jobs: Sequence[tuple[ParsedInput, PaperJob]], rows: Mapping[int, Mapping[str, Any]],
                    shared: dict[int, tuple[int, PaperJob]]) -> list[tuple[ParsedInput, PaperJob]]:
    """After a pass: each deferred preprint shares its journal version's row when that input has its PDF
    (into *shared*); the others get their actions back and are returned, to fetch their own copy."""
    again = []
    for item, job in jobs:
        paper = job.final()
        if not deferred(paper) or paper.same_work is None or paper.put_aside is None:
            continue
        if rows.get(paper.same_work, {}).get("status") in FINISHED_WELL_STATUSES:
            shared[item.position] = (paper.same_work, job)
            continue
        actions, sources = paper.put_aside
        job.restart(replace(paper, actions=(*paper.actions, *actions), sources_left=(*paper.sources_left, *sources),
                            put_aside=None, defer_done=True))
        again.append((item, job))
    return again
