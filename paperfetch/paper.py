"""One frozen record per input paper (:class:`Paper`), evolved with :func:`dataclasses.replace`, never mutated; its
outcome row (:meth:`Paper.row`) and what the ledger keeps of it (:meth:`Paper.ledger_entry`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime
from typing import Any, ClassVar, Iterable, Mapping, Union

from paperfetch.ids import Identifier
from paperfetch.outcomes import Status, is_final
from paperfetch.reasons import absent_reason, failure_reason
from paperfetch.redact import redact_url
from paperfetch.sources.base import Candidate, Metadata, Record, Standing, Update
from paperfetch.sources.notices import RETRACTING_KINDS
from paperfetch.urlcheck import shown_url, url_refusal

__all__ = ["Action", "Copy", "Failure", "INTEGRITY_COLUMNS", "KEPT_STANDING", "Lookup", "META_FIELDS", "Outcome",
           "Paper", "Update", "copy_version", "identity_row", "ledger_entry", "resumed_standing",
           "retracted_reason", "updates_from", "updates_text"]

#: The metadata a paper gathers from the services, copied onto its outcome row.
META_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Metadata))
#: The outcome columns of a paper's standing.
INTEGRITY_COLUMNS: tuple[str, ...] = ("retracted", "updates", "is_notice", "preprint_of", "preprint")
#: The columns of a row's standing the ledger keeps, so a resumed row shows them again.
KEPT_STANDING: tuple[str, ...] = (*INTEGRITY_COLUMNS, "version", "same_work_as")
#: Candidate.version → the outcome's ``version``.
_VERSIONS = {"publishedVersion": "published", "acceptedVersion": "accepted", "submittedVersion": "submitted"}


@dataclass(frozen=True)
class Copy:
    """A copy of the paper a source named (or a link found on a page): a PDF, a JATS XML or a landing page."""

    url: str
    source: str
    version: str | None = None  #: publishedVersion / acceptedVersion / submittedVersion
    kind: str = "pdf"  #: "pdf" | "jats" | "landing"
    followed: bool = False  #: a link found on a page (an HTML page served as a PDF), not one a source listed

    @property
    def listed(self) -> bool:
        """A PDF a source listed: one of the copies that compete on load (not a link found on a page)."""
        return self.kind == "pdf" and not self.followed


@dataclass(frozen=True)
class Lookup:
    """A request to a metadata service about the paper."""

    kind: ClassVar[str] = "lookup"
    source: str
    url: str
    params: Mapping[str, str] | None = None
    spec: Any = None  #: the source's RequestSpec (or its own step of a lookup in several requests)
    listed: ClassVar[bool] = False
    version: ClassVar[None] = None


Action = Union[Lookup, Copy]


@dataclass(frozen=True)
class Failure:
    status: Status
    source: str
    url: str
    message: str
    http_status: int | None = None
    held_lookup: bool = False  #: a batched lookup not sent (its host held): ranks after every tried candidate
    until: datetime | None = None  #: a hold's or a suppression's end, for the reason


@dataclass(frozen=True)
class Outcome:
    """How the paper ended when a file was written, or when its standing ended it (None: not said)."""

    status: str
    source: str | None = None
    url: str | None = None
    path: str | None = None
    bytes: int | None = None
    sha256: str | None = None
    http_status: int | None = None
    version: str | None = None
    title_match: float | None = None
    reason: str | None = None
    error: str | None = None


def copy_version(version: str | None) -> str | None:
    """A copy's ``publishedVersion`` → ``published`` (accepted, submitted); None when no source said."""
    return _VERSIONS.get(version or "", None)


def updates_text(updates: Iterable[Update]) -> str | None:
    """``retraction 10.1234/notice 2024-05-01 (retraction-watch); correction …`` — the row's ``updates``."""
    shown = []
    for u in updates:
        words = " ".join(part for part in (u.kind, u.notice, u.date) if part)
        shown.append(f"{words} ({u.source})" if u.source else words)
    return "; ".join(shown) or None


def updates_from(stored: Any) -> tuple[Update, ...]:
    """The updates a ledger entry keeps (a list of ``{kind, notice, date, source}``)."""
    if not isinstance(stored, list):
        return ()
    return tuple(Update(**{k: v for k, v in u.items() if k in ("kind", "notice", "date", "source")})
                 for u in stored if isinstance(u, dict) and u.get("kind"))


def retracted_reason(updates: Iterable[Update]) -> str:
    """``retracted (notice 10.…, 2024-05-01)``; a retraction no source dated or named says so."""
    notices = [u for u in updates if u.kind in RETRACTING_KINDS]
    first = next((u for u in notices if u.notice), notices[0] if notices else Update(""))
    details = ", ".join(part for part in (f"notice {first.notice}" if first.notice else None, first.date) if part)
    return f"retracted ({details})" if details else "retracted (no notice named)"


def identity_row(ident: Identifier, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The row's identity columns: the identifier's type and value and the metadata gathered."""
    name, value = ident.column()
    row: dict[str, Any] = {"id_type": ident.type.value, **{k: meta.get(k) for k in META_FIELDS}, name: value}
    if row["pmid"] is not None:
        row["pmid"] = str(row["pmid"])
    if row["year"] is not None:
        row["year"] = int(row["year"])
    return row


def _merged_updates(have: Iterable[Update], new: Iterable[Update]) -> tuple[Update, ...]:
    kept: dict[tuple[str, str | None], Update] = {}
    for update in (*have, *new):
        key = (update.kind, update.notice)
        known = kept.get(key)
        if known is None or (known.date is None and update.date is not None):
            kept[key] = update
    return tuple(kept.values())


@dataclass(frozen=True)
class Paper(Metadata, Standing):
    """One input paper: identity, metadata (its :class:`Metadata` fields), standing, copies, the flow's progress
    and its outcome."""

    identifier: Identifier
    preprint_of: str | None = None  #: its standing beside :class:`Standing`'s: the first journal-version link found
    title_match: float | None = None  #: a wrong article's score (a download's outcome has its own)
    known: bool = False  #: some service has a record of the work
    # the flow's progress
    sources_left: tuple[str, ...] = ()
    actions: tuple[Action, ...] = ()
    copies: tuple[Copy, ...] = ()  #: every copy any source named (PDF, JATS), the row's ``copies`` counts the PDFs
    tried: frozenset[str] = frozenset()
    failures: tuple[Failure, ...] = ()
    #: each source asked and its answer, in order (``Retriever.why``; the ledger keeps it)
    trail: tuple[tuple[str, str], ...] = ()
    offered: tuple[str, ...] = ()  #: the sources that offered a copy, in the order they did
    batched_offers: tuple[str, ...] = ()  #: the batched sources whose record of the work has copies
    gave_way: frozenset[str] = frozenset()  #: copies that gave way once to a sooner copy elsewhere
    link_asked: bool = False  #: the sources linking a preprint to its journal version were asked first
    vor_asked: bool = False  #: the version of record's copies were asked for (prefer="published")
    same_work: int | None = None  #: the input whose file this preprint waits for (its journal version)
    put_aside: tuple[tuple[Action, ...], tuple[str, ...]] | None = None  #: what it set aside meanwhile
    defer_done: bool = False  #: given its own way back: it fetches its own file and never waits again
    # the outcome
    attempts: int = 0
    elapsed_s: float = 0.0
    waited_s: float = 0.0
    outcome: Outcome | None = None
    cut_short: str | None = None  #: the write failure that stopped the batch before this paper ended
    stopped: bool = False  #: the batch stopped before this paper was finished: never a final answer
    internal_error: tuple[str, str] | None = None  #: (type, message) of a failure of the flow itself

    @classmethod
    def start(cls, ident: Identifier, order: Iterable[str] = ()) -> "Paper":
        """A paper as its identifier gives it (its DOI, its own column), its sources to ask in *order*."""
        name, value = ident.column()
        own: dict[str, Any] = {"doi": ident.doi, name: value}
        return cls(ident, **own, sources_left=tuple(order))

    @property
    def meta(self) -> dict[str, Any]:
        """The metadata gathered, by :data:`META_FIELDS` name."""
        return {name: getattr(self, name) for name in META_FIELDS}

    @property
    def ended(self) -> bool:
        return self.outcome is not None or self.cut_short is not None

    def merged(self, record: Record) -> "Paper":
        """The paper with what *record* adds: metadata it lacks, and the record's say on its standing."""
        changes: dict[str, Any] = {name: getattr(record, name) for name in META_FIELDS
                                   if getattr(record, name) not in (None, "") and getattr(self, name) in (None, "")}
        updates = _merged_updates(self.updates, record.updates)
        said = record.retracted
        if said is True or any(u.kind in RETRACTING_KINDS for u in updates):
            changes["retracted"] = True
        elif said is False and self.retracted is None:
            changes["retracted"] = False
        changes["is_notice"] = record.is_notice or self.is_notice  # a notice once any source says so
        changes["notice_of"] = tuple(dict.fromkeys((*self.notice_of, *record.notice_of)))
        for name, value in (("preprint_of", record.published_doi), ("preprint", record.preprint)):
            if value and not getattr(self, name) and value != str(self.doi or "").lower():  # not the paper itself
                changes[name] = value
        return replace(self, known=True, updates=updates, **changes)

    def noted(self, source: str, answer: str) -> "Paper":
        return replace(self, trail=(*self.trail, (source, answer)))

    def failed(self, failure: Failure) -> "Paper":
        return replace(self, failures=(*self.failures, failure))

    def with_candidates(self, candidates: Iterable[Candidate], *, front: bool = False, followed: bool = False) -> "Paper":
        """The paper with *candidates* queued as copies (a refused URL is a failure, never sent)."""
        paper, new = self, []
        queued = {a.url for a in self.actions}
        for cand in candidates:
            if cand.source not in paper.offered:
                paper = replace(paper, offered=(*paper.offered, cand.source))
            if cand.url in paper.tried or cand.url in queued:
                continue
            refusal = url_refusal(cand.url)
            if refusal is not None:  # the row says the copy was refused, and why
                paper = replace(paper, tried=paper.tried | {cand.url}).failed(
                    Failure(Status.REFUSED_URL, cand.source, shown_url(redact_url(cand.url)), refusal))
                continue
            kind = cand.kind if cand.kind in ("pdf", "jats") else "landing"
            copy = Copy(cand.url, cand.source, cand.version, kind, followed)
            if kind != "landing" and all(c.url != copy.url for c in paper.copies):
                paper = replace(paper, copies=(*paper.copies, copy))
            queued.add(cand.url)
            new.append(copy)
        actions = (*new, *paper.actions) if front else (*paper.actions, *new)
        return replace(paper, actions=actions)

    def asked(self) -> list[str]:
        """The sources asked about this paper, in order, each once."""
        return list(dict.fromkeys(source for source, _ in self.trail))

    def standing_row(self) -> dict[str, Any]:
        """The outcome columns of :data:`INTEGRITY_COLUMNS`."""
        return {**{name: getattr(self, name) for name in INTEGRITY_COLUMNS}, "updates": updates_text(self.updates)}

    def work_reason(self) -> str | None:
        """The reason of a paper downloaded: what its standing says (retracted, a notice), or None."""
        if self.retracted:
            return retracted_reason(self.updates)
        if self.is_notice:
            targets = self.notice_of
            return f"a notice about {targets[0]}, not a paper" if targets else "a notice, not a paper"
        if self.vor_asked and self.preprint_of and self.outcome is not None and self.outcome.version == "published":
            return f"the version of record {self.preprint_of} (prefer=\"published\")"
        return None

    def row(self) -> dict[str, Any]:
        """The paper's outcome row."""
        row = {**identity_row(self.identifier, self.meta), **self.standing_row(), "title_match": self.title_match}
        row.update(attempts=self.attempts, waited_s=round(self.waited_s, 6), elapsed_s=round(self.elapsed_s, 6),
                   copies=sum(c.kind == "pdf" for c in self.copies))
        row["offered_by"] = ",".join(dict.fromkeys([*self.offered, *self.batched_offers])) or None
        if self.internal_error is not None:
            kind, message = self.internal_error
            row.update(status=Status.HTTP_ERROR.value, reason=f"internal error: {kind}",
                       error=f"internal error: {kind}: {message}")
        elif self.outcome is not None:
            row.update({k: v for k, v in asdict(self.outcome).items() if v is not None or k == "title_match"})
            row["reason"] = row.get("reason") or self.work_reason()
        elif self.cut_short is not None:
            row.update(status=Status.WRITE_ERROR.value, reason="not written: the output folder failed",
                       error=f"not finished: the batch stopped downloading after a write failed ({self.cut_short})"[:2000])
        elif self.stopped:
            tried = "; ".join(f"{f.source} {f.url}: {f.message}" for f in self.failures)
            row.update(status=Status.STOPPED.value, reason="stopped before it finished",
                       error=("the batch was stopped before this item was finished; a re-run tries it again"
                              + (f" (failed so far: {tried})" if tried else ""))[:2000])
        else:
            row.update(self._unfetched())
        return row

    def _unfetched(self) -> dict[str, Any]:
        """A paper with no file: the best-ranked copy's failure decides (all are listed), else absent."""
        failures = sorted((f for f in self.failures if f.status is not Status.NOT_FOUND), key=lambda f: f.held_lookup)
        if not failures:
            if self.known:
                return dict(status=Status.NO_OPEN_COPY.value, reason=absent_reason(known=True, asked=self.asked()),
                            error="the work is known, but no source offers an open-access copy")
            return dict(status=Status.NOT_FOUND.value, reason=absent_reason(known=False, asked=self.asked()),
                        error="no service knows this identifier")
        first = failures[0]
        reason = failure_reason(first.status.value, http_status=first.http_status, url=first.url, message=first.message,
                                until=first.until)
        # reason first, URLs last: the trail of every candidate after it
        trail = "; ".join(f"{f.source}: {f.message} ({f.url})" if f.url and f.url not in f.message
                          else f"{f.source}: {f.message}" for f in failures)
        return dict(status=first.status.value, source=first.source, url=first.url, http_status=first.http_status,
                    reason=reason, error=f"{reason} | {trail}"[:2000])

    def ledger_entry(self, row: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """What the ledger keeps of the paper (``ledger.record(**entry)``): its row's outcome, and in ``extra``
        its metadata, its standing (the notices as structured values), its reason and its trail."""
        row = self.row() if row is None else row
        entry = ledger_entry(self.identifier.key, row, updates=self.updates)
        entry["extra"]["trail"] = [list(step) for step in self.trail]  # Retriever.why reads it
        return entry


def ledger_entry(key: str, row: Mapping[str, Any], *, updates: Iterable[Update] = ()) -> dict[str, Any]:
    """The ledger's record of the outcome *row* under *key* (``ledger.record(**entry)``)."""
    # an already_downloaded row carries its title_match too
    extra = {k: row.get(k) for k in (*META_FIELDS, *KEPT_STANDING, "title_match") if row.get(k) is not None}
    updates = tuple(updates)
    if row.get("updates") is not None:  # the notices as values (a row copied from another input's: as it says)
        extra["updates"] = [asdict(u) for u in updates] if updates else row["updates"]
    extra["reason"] = row.get("reason")
    # the ledger's own fields are the Outcome's; its version, title_match and reason go in extra
    outcome = {f.name: row.get(f.name) for f in fields(Outcome) if f.name not in ("version", "title_match", "reason")}
    return dict(key=key, **outcome, extra=extra, retryable=not is_final(row["status"], row.get("http_status")))


def resumed_standing(extra: Mapping[str, Any]) -> dict[str, Any]:
    """The standing columns of a row rebuilt from a ledger entry's ``extra`` (older ledgers kept the
    notices as text: that text is shown as it was)."""
    row = {name: extra.get(name) for name in KEPT_STANDING}
    if isinstance(row["updates"], list):
        row["updates"] = updates_text(updates_from(row["updates"]))
    return row

