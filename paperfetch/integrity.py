"""Is this the paper to use? One answer per paper from what every source said of its standing (retracted, the
notices about it, whether it is a notice itself, its preprint and journal versions), and the outcome columns
and reasons that answer gives (docs/outcomes.md, docs/research.md). Nothing here sends a request: the
signals ride on the answers the sources were asked for anyway.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, MutableMapping

from paperfetch.reasons import REASON_WIDTH
from paperfetch.sources.base import Record, Update
from paperfetch.sources.notices import RETRACTING_KINDS

__all__ = ["INTEGRITY_COLUMNS", "STATUS_RETRACTED", "copy_version", "format_updates", "integrity_row", "ledger_fields",
           "looks_like_notice", "merge_signals", "met_by", "met_line", "parse_updates", "resumed_fields",
           "retracted_reason", "skip_retracted", "work_reason"]

#: The outcome columns this module fills (the row of a paper: :func:`integrity_row`).
INTEGRITY_COLUMNS: tuple[str, ...] = ("retracted", "updates", "is_notice", "preprint_of", "preprint")
#: The final status of a retracted paper not downloaded (``Retriever(skip_retracted=True)``).
STATUS_RETRACTED = "retracted"
#: Candidate.version → the outcome's ``version``.
_VERSIONS = {"publishedVersion": "published", "acceptedVersion": "accepted", "submittedVersion": "submitted"}


def merge_signals(meta: MutableMapping[str, Any], record: Record) -> None:
    """Fold *record*'s standing into a paper's *meta*: a retraction any source names wins over another's
    silence or ``False``; the notices of every source are kept once each (by kind and notice), dated where
    one source gave the date; the first preprint/journal link found is kept."""
    updates = _merged_updates(meta.get("updates") or (), getattr(record, "updates", ()) or ())
    if updates:
        meta["updates"] = updates
    said = getattr(record, "retracted", None)
    if said is True or any(u.kind in RETRACTING_KINDS for u in updates):
        meta["retracted"] = True
    elif said is False and meta.get("retracted") is None:
        meta["retracted"] = False
    if getattr(record, "is_notice", None):
        meta["is_notice"] = True
    targets = tuple(getattr(record, "notice_of", ()) or ())
    if targets:
        meta["notice_of"] = tuple(dict.fromkeys((*meta.get("notice_of", ()), *targets)))
    for name, field in (("preprint_of", "published_doi"), ("preprint", "preprint")):
        value = getattr(record, field, None)
        if value and not meta.get(name) and value != str(meta.get("doi") or "").lower():  # not the paper itself
            meta[name] = value


def _merged_updates(have: Iterable[Update], new: Iterable[Update]) -> tuple[Update, ...]:
    kept: dict[tuple[str, str | None], Update] = {}
    for update in (*have, *new):
        key = (update.kind, update.notice)
        known = kept.get(key)
        if known is None or (known.date is None and update.date is not None):
            kept[key] = update
    return tuple(kept.values())


def format_updates(updates: Iterable[Update]) -> str | None:
    """``retraction 10.1234/notice 2024-05-01 (retraction-watch); correction …`` — None when there are none."""
    shown = []
    for u in updates:
        words = " ".join(part for part in (u.kind, u.notice, u.date) if part)
        shown.append(f"{words} ({u.source})" if u.source else words)
    return "; ".join(shown) or None


def parse_updates(text: str | None) -> tuple[Update, ...]:
    """The inverse of :func:`format_updates` (a row read back from the ledger)."""
    found = []
    for part in (text or "").split("; "):
        part = part.strip()
        if not part:
            continue
        source = None
        if part.endswith(")") and " (" in part:
            part, source = part[:-1].rsplit(" (", 1)
        words = part.split()
        notice = next((w for w in words[1:] if "/" in w or w.startswith("PMID:")), None)
        date = next((w for w in words[1:] if w[:4].isdigit() and w is not notice), None)
        found.append(Update(kind=words[0], notice=notice, date=date, source=source))
    return tuple(found)


def copy_version(version: str | None) -> str | None:
    """A copy's ``publishedVersion`` → ``published`` (accepted, submitted); None when no source said."""
    return _VERSIONS.get(version or "", None)


def retracted_reason(meta: Mapping[str, Any]) -> str:
    """``retracted (notice 10.…, 2024-05-01)``; a retraction no source dated or named says so."""
    notices = [u for u in meta.get("updates") or () if u.kind in RETRACTING_KINDS]
    first = next((u for u in notices if u.notice), notices[0] if notices else None)
    if first is None:
        return "retracted (no notice named)"
    details = ", ".join(part for part in (f"notice {first.notice}" if first.notice else None, first.date) if part)
    return f"retracted ({details})"[:REASON_WIDTH] if details else "retracted (no notice named)"


def work_reason(meta: Mapping[str, Any]) -> str | None:
    """The reason of a paper downloaded: what its standing says (retracted, a notice), or None."""
    if meta.get("retracted"):
        return retracted_reason(meta)
    if meta.get("is_notice"):
        targets = meta.get("notice_of") or ()
        return f"a notice about {targets[0]}, not a paper"[:REASON_WIDTH] if targets else "a notice, not a paper"
    return None


def integrity_row(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The outcome columns of :data:`INTEGRITY_COLUMNS` from a paper's merged *meta*."""
    return {"retracted": meta.get("retracted"), "updates": format_updates(meta.get("updates") or ()),
            "is_notice": meta.get("is_notice"), "preprint_of": meta.get("preprint_of"), "preprint": meta.get("preprint")}


def ledger_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """What the ledger keeps of a row's standing (its ``extra``), so a resumed row shows it again."""
    return {name: row.get(name) for name in (*INTEGRITY_COLUMNS, "version", "same_work_as") if row.get(name) is not None}


def met_by(row: Mapping[str, Any] | None) -> tuple[str, ...]:
    """What a row counts toward in the batch's tally of standing: ``retracted``, ``notices`` (or neither)."""
    if not row:
        return ()
    flags = (("retracted", row.get("retracted")), ("notices", row.get("is_notice")))
    return tuple(name for name, value in flags if value is True or (value is not None and str(value) == "True"))


def met_line(met: Mapping[str, int]) -> str:
    """``2 retracted papers, 1 notice`` (the parts that count some); ``""`` when none."""
    papers, notices = met.get("retracted", 0), met.get("notices", 0)
    parts = [f"{papers} retracted paper{'s' if papers != 1 else ''}"] if papers else []
    if notices:
        parts.append(f"{notices} notice{'s' if notices != 1 else ''}")
    return ", ".join(parts)


def resumed_fields(extra: Mapping[str, Any]) -> dict[str, Any]:
    """The standing columns of a row rebuilt from the ledger's ``extra`` (:func:`ledger_fields`)."""
    return {name: extra.get(name) for name in (*INTEGRITY_COLUMNS, "version", "same_work_as")}


#: How a notice's first page opens: "Retraction Note", "Notice of Retraction", "RETRACTION: …", "Retraction notice
#: to …", "Expression of Concern: …". A retracted paper's own label ("RETRACTED: <title>", Elsevier's, or a
#: "This article has been retracted" watermark) does not open so: that PDF is the paper.
_NOTICE_HEAD = re.compile(r"^\W*(retraction\s+(note|notice)|notice\s+of\s+retraction|retraction\s*(of\b|:|to\b)|"
                          r"expression\s+of\s+concern\b|withdrawal\s*:)", re.IGNORECASE)


def looks_like_notice(title_asked: str | None, first_page: str | None, own_titles: Iterable[str] = ()) -> bool:
    """A PDF whose first page (or its own title) opens as a retraction notice, for a paper whose title does
    not: the file is the notice, not the paper asked for."""
    if title_asked and _NOTICE_HEAD.search(title_asked.strip()):
        return False
    heads = [t for t in own_titles if t] + [(first_page or "").strip()[:300]]
    return any(_NOTICE_HEAD.search(" ".join(head.split())) for head in heads)


def skip_retracted(job: Any) -> bool:
    """With ``skip_retracted`` on, end a paper a source called retracted before any PDF request: status
    ``retracted`` (final), the notice in the reason. True when the job was ended."""
    if not getattr(job.context, "skip_retracted", False) or not job.meta.get("retracted") or job.result is not None:
        return False
    reason = retracted_reason(job.meta)
    job.result = {"status": STATUS_RETRACTED, "reason": reason,
                  "error": f"{reason}: not downloaded (skip_retracted is on)"}
    job.trail.append(("integrity", f"{reason}: not downloaded"))
    return True
