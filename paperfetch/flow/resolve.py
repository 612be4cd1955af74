"""Before the papers run: batched metadata (the ID converter and E-utilities for PMIDs and PMCIDs, OpenAlex and
Semantic Scholar for DOIs), asked once for the whole batch; and the dry run of ``Retriever.candidates``."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Callable, Mapping, Sequence

from paperfetch.errors import PaperfetchError, RateLimited, ServiceError
from paperfetch.flow.act import Means, lookup, source_failed
from paperfetch.flow.decide import Outlook, Stage, arrange, expand, id_of, stage_of
from paperfetch.http import context as call_context
from paperfetch.ids import Identifier, IdType
from paperfetch.outcomes import Status
from paperfetch.paper import Lookup, Paper
from paperfetch.redact import redact_text
from paperfetch.sources import Record, Source
from paperfetch.sources.base import batched

__all__ = ["ask", "plan", "resolve"]

logger = logging.getLogger(__name__)

#: ``failed(key, error)``: a batched lookup did not answer for the identifier *key*
Failed = Callable[[str, PaperfetchError], None]


def ask(name: str, ids: list[Identifier], means: Means, failed: Failed | None = None) -> dict[str, Record]:
    """A batched lookup, one batch at a time: a batch whose host is held (a spent budget) tells *failed* of its
    identifiers, the batches answered before it are kept; a lookup that fails otherwise tells *failed* of every
    identifier it left unanswered (retryable). Without *failed*, the whole list is one batch."""
    if not ids or getattr(means.api, "closed", False) or name not in means.sources:  # close() from another thread
        return {}
    source = means.sources[name]
    records: dict[str, Record] = {}
    marked: set[str] = set()  # the identifiers already told this source failed them
    with call_context.scope(source=name):
        try:
            for chunk in batched(ids, source.batch_size if failed is not None else len(ids)):
                try:
                    records.update(source.lookup(means.metadata, chunk))
                except RateLimited as exc:  # the transport warned once; the items say so
                    logger.info("%s lookup not sent for %d identifier(s): %s", name, len(chunk), redact_text(str(exc)))
                    for ident in chunk:
                        if failed is not None:
                            failed(ident.key, exc)
                            marked.add(ident.key)
        except Exception as exc:  # noqa: BLE001 - a batch lookup's failure (whatever it is) never ends the batch
            logger.warning("%s lookup failed for %d identifier(s): %s", name, len(ids), redact_text(str(exc)))
            # the items left unanswered failed (retryable), unless another source answers: never "absent"
            failure = exc if isinstance(exc, PaperfetchError) else ServiceError(f"{name} lookup failed: {exc}")
            for ident in ids:
                if failed is not None and ident.key not in records and ident.key not in marked:
                    failed(ident.key, failure)
    return records


def resolve(papers: Sequence[Paper], *, order: Sequence[str], means: Means) -> tuple[list[Paper], dict[tuple[str, str], Record]]:
    """The papers with what the batched services know of them, and the batched sources' records by
    ``(source, DOI)`` (asked once for the whole batch)."""
    found = {paper.identifier.key: paper for paper in papers}
    sources = means.sources

    def merge(records: Mapping[str, Record]) -> None:
        for key, record in records.items():
            if key in found:
                found[key] = found[key].merged(record)

    ncbi = [p.identifier for p in papers if p.identifier.type in (IdType.PMID, IdType.PMCID)]
    merge(ask("ncbi_idconv", ncbi, means))
    unknown = [p.identifier for p in found.values() if p.identifier.type is IdType.PMID and not p.doi]  # after idconv
    merge(ask("ncbi_eutils", unknown, means))
    prefetched: dict[tuple[str, str], Record] = {}
    for name in ("openalex", "semanticscholar"):  # the batched sources, asked once for the whole batch
        if name not in order:
            continue
        owners = {ident.key: paper.identifier.key for paper in found.values() if (ident := id_of(paper.doi)) is not None}
        dois = [Identifier.from_key(key) for key in owners]

        def failed(key: str, exc: PaperfetchError, name: str = name, owners: dict[str, str] = owners) -> None:
            if key in owners:
                found[owners[key]] = source_failed(found[owners[key]], name, exc, means)

        for key, record in ask(name, dois, means, failed).items():
            prefetched[(name, key.split(":", 1)[1].lower())] = record
    return [_with_batched_offers(found[p.identifier.key], prefetched, sources) for p in papers], prefetched


def _with_batched_offers(paper: Paper, prefetched: Mapping[tuple[str, str], Record], sources: Mapping[str, Source]
                         ) -> Paper:
    """The batched sources whose record has candidates (the row's ``offered_by`` names them, asked or not)."""
    doi = (paper.doi or "").lower()
    offers = tuple(name for name, source in sources.items() if stage_of(name, source) is Stage.PREFETCHED
                   and (record := prefetched.get((name, doi))) is not None and record.candidates)
    return replace(paper, batched_offers=offers)


def plan(paper: Paper, outlook: Outlook, means: Means) -> tuple[list[tuple[str, str, str]], list[str], Paper]:
    """A dry run: every candidate ``(kind, source, url)`` in trial order, the lookup errors (lookups only), and
    the paper as it ends."""
    found: list[tuple[str, str, str]] = []
    errors: list[str] = []
    while True:
        while not paper.actions and paper.sources_left:
            paper = expand(paper, outlook)
        if not paper.actions:  # candidates refused before any request, and failed batched lookups, are listed too
            refused = [f"{f.source} {f.url}: {f.message}" for f in paper.failures if f.status is Status.REFUSED_URL]
            held = [f"{f.source}: {f.message}" for f in paper.failures if f.held_lookup]
            return found, errors + refused + held, paper
        if paper.actions[0].listed:
            paper = arrange(paper, outlook)  # the order a run would try them in: the best version tier first
        action, paper = paper.actions[0], replace(paper, actions=paper.actions[1:])
        if isinstance(action, Lookup):
            with call_context.scope(source=action.source):
                try:
                    paper = lookup(paper, action, means)
                except PaperfetchError as exc:
                    errors.append(f"{action.source}: {redact_text(str(exc))}")
            continue
        paper = replace(paper, tried=paper.tried | {action.url})
        found.append(("pdf" if action.kind != "landing" else "landing", action.source, action.url))
