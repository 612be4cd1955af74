"""One file per work: inputs of one batch that name the same work once their identifiers are resolved (a PMID
and the DOI it maps to, a DOI written twice) are fetched once; each input keeps its own row, the others
naming in ``same_work_as`` the input whose file they share (docs/outcomes.md).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from paperfetch.integrity import integrity_row, ledger_fields
from paperfetch.outcomes import FINISHED_WELL_STATUSES, Status, is_final
from paperfetch.rows import META_FIELDS, identity_row
from paperfetch.sources.biorxiv import is_biorxiv_doi
from paperfetch.versions import DEFER_DONE, PUT_ASIDE, SAME_WORK

__all__ = ["batch_works", "deferred", "settle_deferred", "share_rows", "work_groups", "work_key"]


#: Rows the ledger does not keep for a shared input: nothing was decided about the work
_NOT_KEPT = frozenset({Status.STOPPED.value, Status.INVALID_IDENTIFIER.value})


def batch_works(jobs: Sequence[tuple[Any, Any]], into: dict[str, int]) -> None:
    """Fill *into* with the DOI of every job's work -> its input's position (the first one, for a work given
    twice), when the batch could pair a preprint with its journal version: it holds a bioRxiv/medRxiv DOI and
    another DOI. Otherwise *into* stays empty, and no preprint asks for its link before its first copy."""
    into.clear()
    dois = [(str(job.meta["doi"]).strip().lower(), item.position) for item, job in jobs if job.meta.get("doi")]
    kinds = {is_biorxiv_doi(doi) for doi, _ in dois}
    if kinds == {True, False}:
        for doi, position in dois:
            into.setdefault(doi, position)


def work_key(job: Any) -> str:
    """What names the work: its DOI (lower case) once known, else the identifier's own key."""
    doi = job.meta.get("doi")
    return f"doi:{str(doi).strip().lower()}" if doi else job.identifier.key


def work_groups(jobs: Sequence[tuple[Any, Any]], decided: Mapping[int, Mapping[str, Any]] | None = None
                ) -> tuple[list[tuple[Any, Any]], dict[int, tuple[int, Any]]]:
    """``(the jobs to run, shared)``: the first job of each work runs; *shared* maps every later input's
    position to ``(the first input's position, its own job)``. A work whose PDF a row in *decided* (by
    position: rows reused from the ledger) already has is not fetched again."""
    first: dict[str, int] = {}
    for position, row in (decided or {}).items():
        if row.get("doi") and row.get("status") in FINISHED_WELL_STATUSES:
            first.setdefault(f"doi:{str(row['doi']).strip().lower()}", position)
    kept: list[tuple[Any, Any]] = []
    shared: dict[int, tuple[int, Any]] = {}
    for item, job in jobs:
        key = work_key(job)
        if key in first:
            shared[item.position] = (first[key], job)
        else:
            first[key] = item.position
            kept.append((item, job))
    return kept, shared


def share_rows(shared: dict[int, tuple[int, Any]], rows: dict[int, dict[str, Any]], inputs: Sequence[Any], *,
               ledger: Any = None, on_row: Callable[[int, dict[str, Any]], None] | None = None) -> None:
    """Give each shared input the row of the input it shares the work with: that row's outcome and file,
    this input's own identity, ``same_work_as`` naming the other input; the ledger keeps it under this key."""
    for position, (first, job) in shared.items():
        if first not in rows:
            continue
        # its own identity and what its own sources said, over the other input's row
        own = {k: v for k, v in {**identity_row(job.identifier, job.meta), **integrity_row(job.meta)}.items() if v is not None}
        row = {**rows[first], **own, "same_work_as": inputs[first]}
        rows[position] = row
        if ledger is not None and row["status"] not in _NOT_KEPT:
            ledger.record(job.identifier.key, status=row["status"], path=row.get("path"), bytes=row.get("bytes"),
                          sha256=row.get("sha256"), source=row.get("source"), url=row.get("url"),
                          http_status=row.get("http_status"), error=row.get("error"),
                          extra={**{k: row[k] for k in META_FIELDS if row.get(k) is not None}, "reason": row.get("reason"),
                                 **ledger_fields(row)},
                          retryable=not is_final(row["status"], row.get("http_status")))
        if on_row is not None:
            on_row(position, row)


def deferred(job: Any) -> bool:
    """Whether *job* left its file to another input of the batch and waits for :func:`settle_deferred`."""
    return job.meta.get(SAME_WORK) is not None and not job.meta.get(DEFER_DONE)


def settle_deferred(jobs: Sequence[tuple[Any, Any]], rows: Mapping[int, Mapping[str, Any]],
                    shared: dict[int, tuple[int, Any]]) -> list[tuple[Any, Any]]:
    """After a pass: each deferred preprint shares its journal version's row when that input has its PDF
    (into *shared*); the others get their actions back and are returned, to fetch their own copy."""
    again = []
    for item, job in jobs:
        if not deferred(job):
            continue
        position = job.meta[SAME_WORK]
        if rows.get(position, {}).get("status") in FINISHED_WELL_STATUSES:
            shared[item.position] = (position, job)
            continue
        actions, sources = job.meta.pop(PUT_ASIDE)
        job.meta[DEFER_DONE] = True
        job.actions.extend(actions)
        job.sources_left.extend(sources)
        again.append((item, job))
    return again
