"""The identity part of an outcome row: what the identifier and the metadata say about a paper, and the row a
resumed run gives without a request."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paperfetch import integrity
from paperfetch.download import FileAction, download_action
from paperfetch.ids import Identifier, IdType, parse_identifier
from paperfetch.ledger.base import recheck_due
from paperfetch.outcomes import Status

if TYPE_CHECKING:
    from paperfetch.ledger.base import ResumeLedger

__all__ = ["META_FIELDS", "doi_identifier", "identity_row", "initial_meta", "resumed_row", "safe_parse"]

#: The metadata an item gathers from the services, copied onto its outcome row.
META_FIELDS = ("doi", "pmid", "pmcid", "arxiv_id", "title", "year", "journal", "oa_status", "license", "pmc_version",
               "is_manuscript", "authors")


def doi_identifier(doi: str | None) -> Identifier | None:
    """*doi* as an identifier, or None where it is empty or not a DOI."""
    if not doi:
        return None
    return safe_parse(doi, None)


def safe_parse(value: Any, hint: IdType | None) -> Identifier | None:
    """*value* as an identifier of type *hint*, or None where it is not one."""
    try:
        return parse_identifier(value, hint=hint)
    except (ValueError, TypeError):
        return None


def initial_meta(ident: Identifier) -> dict[str, Any]:
    """What the identifier itself says about the paper, before any service is asked."""
    name, value = ident.column()
    return {"doi": ident.doi, name: value}


def identity_row(ident: Identifier, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The row's identity columns: the identifier's type and value and the metadata gathered."""
    row: dict[str, Any] = {"id_type": ident.type.value}
    for name in META_FIELDS:
        row[name] = meta.get(name)
    name, value = ident.column()
    row[name] = value
    for name in ("pmid", "year"):
        if row.get(name) is not None:
            row[name] = str(row[name]) if name == "pmid" else int(row[name])
    return row


def resumed_row(ledger: ResumeLedger, ident: Identifier, out_dir: Path) -> dict[str, Any] | None:
    """The row for *ident* from *ledger* when :func:`~paperfetch.download.download_action` needs no request, else None."""
    done = ledger.is_done(ident.key, out_dir)
    entry = done or ledger.get(ident.key)
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
    row.update(integrity.resumed_fields(extra))
    if action is FileAction.REUSE:
        path = ledger.absolute_path(entry)
        row.update(status=Status.ALREADY_DOWNLOADED.value, path=str(path) if path else None, bytes=entry.bytes,
                   sha256=entry.sha256)
    else:
        row.update(status=entry.status, error=entry.error, reason=extra.get("reason"))
    return row
