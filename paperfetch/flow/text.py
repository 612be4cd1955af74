"""Full text is the same flow: with ``want="text"`` a paper is first given its JATS copies, tried before any PDF;
one that is no article with a body fails like any copy (docs/fulltext.md, "r.fulltext")."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Callable, Mapping, Sequence
from urllib.parse import urlencode

from paperfetch.errors import DownloadTooLarge, NotFoundError, PaperfetchError
from paperfetch.flow.act import Means, answer_cap, destination
from paperfetch.flow.decide import id_of, lookup_identifier, lookups
from paperfetch.fulltext.base import FullTextError
from paperfetch.fulltext.endpoints import TEXT_KEY_PREFIX, EuropePMCFullTextSource, JatsAnswer, PMCEfetchSource
from paperfetch.http import context as call_context
from paperfetch.http.files import file_digest
from paperfetch.ids import Identifier, IdType
from paperfetch.outcomes import Status, status_for
from paperfetch.paper import Copy, Failure, Lookup, Outcome, Paper
from paperfetch.parts import part_file
from paperfetch.redact import redact_text, redact_url
from paperfetch.sources import Record, Source
from paperfetch.sources.base import batched

__all__ = ["JATS_SOURCES", "TEXT_KEY_PREFIX", "jats_copies", "text_key", "with_text_copies"]

#: The metadata sources asked (batched) for what leads to a paper's JATS: its PMCID and open-access flag, its
#: JATS links; the ID converter last, for the papers still without a PMCID.
JATS_SOURCES = ("europepmc", "biorxiv", "ncbi_idconv")

logger = logging.getLogger(__name__)

Ask = Callable[[str, list[Identifier]], Mapping[str, Record]]


def text_key(key: str) -> str:
    """The ledger key of the text of the paper whose key is *key*: ``fulltext:doi:10.1000/x``."""
    return TEXT_KEY_PREFIX + key


def _url(source: Source, ident: Identifier) -> str:
    url, params = source.url_for(source.spec_for((ident,)))
    return f"{url}?{urlencode(dict(params))}" if params else url


def jats_copies(paper: Paper, sources: Mapping[str, Source], records: Sequence[Record], is_oa: bool) -> tuple[Copy, ...]:
    """The paper's JATS copies in the order they are tried: ``fullTextXML`` and ``efetch`` (open access in Europe
    PMC), then the JATS links the records give."""
    pmcid = id_of(paper.pmcid, IdType.PMCID)
    copies: list[Copy] = []
    for name, kind in (("europepmc", EuropePMCFullTextSource), ("ncbi_eutils", PMCEfetchSource)):
        # efetch here for open access only: the others were asked in batches
        if pmcid is not None and is_oa and (given := sources.get(name)) is not None:
            source = kind(base_url=given.base_url, identification=given.identification)
            copies.append(Copy(_url(source, pmcid), source.name, kind="jats"))
    for record in records:
        links = [(c.url, c.source) for c in record.candidates if c.kind == "jats"]
        if record.jats_url:
            links.insert(0, (record.jats_url, "biorxiv"))
        copies += [Copy(url, source, kind="jats") for url, source in links]
    return tuple(dict.fromkeys(copies))


def _identifier(paper: Paper, source: Source | None) -> Identifier | None:
    if source is None:
        return None
    return paper.identifier if paper.identifier.type in source.accepts else lookup_identifier(paper, source)


def with_text_copies(papers: Sequence[Paper], means: Means, ask: Ask) -> list[Paper]:
    """The papers with their JATS copies queued first (:data:`JATS_SOURCES` asked once for the batch), then the PMC
    Cloud Service's lookup; a PMCID without open-access text in Europe PMC is asked of ``efetch`` in batches first."""
    papers, sources = list(papers), means.sources
    found: list[list[Record]] = [[] for _ in papers]
    is_oa = [False for _ in papers]
    for name in JATS_SOURCES:
        wanted = [(i, ident) for i, paper in enumerate(papers) if not (name == "ncbi_idconv" and paper.pmcid)
                  and (ident := _identifier(paper, sources.get(name))) is not None]
        records = ask(name, [ident for _, ident in wanted]) if wanted else {}
        for i, ident in wanted:
            record = records.get(ident.key)
            if record is not None:
                papers[i] = papers[i].merged(record)
                found[i].append(record)
                is_oa[i] = is_oa[i] or (name == "europepmc" and bool(record.is_oa))
    papers = _efetched(papers, is_oa, means)
    out = []
    for paper, given, oa in zip(papers, found, is_oa):
        copies = jats_copies(paper, sources, given, oa)
        paper = replace(paper, copies=(*paper.copies, *copies))
        out.append(replace(paper, actions=(*copies, *_pmc_lookup(paper, sources), *paper.actions)))
    return out


def _efetched(papers: list[Paper], oa: Sequence[bool], means: Means) -> list[Paper]:
    """PMC ``efetch`` in batches for the papers Europe PMC has no open-access text of: an article with body text
    ends its paper ``downloaded``; an answer that cannot be read is a failure, and the paper goes on."""
    eutils = means.sources.get("ncbi_eutils")
    if eutils is None or means.metadata is None:
        return papers
    efetch = PMCEfetchSource(base_url=eutils.base_url, identification=eutils.identification)
    wanted: dict[str, list[int]] = {}
    for i, (paper, is_oa) in enumerate(zip(papers, oa)):
        if (pmcid := id_of(paper.pmcid, IdType.PMCID)) is not None and not is_oa:
            wanted.setdefault(pmcid.key, []).append(i)
    for batch in batched([Identifier.from_key(key) for key in wanted], efetch.batch_size):
        found, failed = _efetch(efetch, batch, means)
        for key, (answer, url) in found.items():
            for i in wanted[key]:
                papers[i] = _kept(papers[i], answer, url, means)
        for key, failure in failed.items():
            for i in wanted[key]:
                papers[i] = papers[i].failed(failure).noted(efetch.name, f"{failure.status.value}: {failure.message}")
    return papers


def _efetch(efetch: PMCEfetchSource, ids: tuple[Identifier, ...], means: Means
            ) -> tuple[dict[str, tuple[JatsAnswer, str]], dict[str, Failure]]:
    """The articles of one ``efetch`` request by PMCID key, and the failures by key; a batch that cannot be read
    is forgotten by the cache and asked again one id a request."""
    spec = efetch.spec_for(ids)
    url, params = efetch.url_for(spec)
    shown = redact_url(f"{url}?{urlencode(dict(spec.params))}")
    with call_context.scope(source=efetch.name):
        try:
            response = means.metadata.fetch(url, classify=efetch.classify, params=params)
            answers = efetch.articles(response.content, spec, max_bytes=answer_cap(means.api))
            return {key: (answer, shown) for key, answer in answers.items()}, {}
        except NotFoundError:
            return {}, {}
        except (FullTextError, DownloadTooLarge) as exc:
            forget = getattr(means.metadata, "forget", None)
            if forget is not None:
                forget(url, params)
            if len(ids) > 1:
                logger.info("%s: the batched answer cannot be read; asking per id", efetch.name)
                parts = [_efetch(efetch, (ident,), means) for ident in ids]
                return ({k: v for found, _ in parts for k, v in found.items()},
                        {k: v for _, failed in parts for k, v in failed.items()})
            failure = Failure(Status.INVALID_PDF, efetch.name, shown, redact_text(f"not a JATS article: {exc}"))
        except PaperfetchError as exc:
            failure = Failure(status_for(exc), efetch.name, shown, redact_text(str(exc)),
                              getattr(exc, "status_code", None))
    return {}, {ident.key: failure for ident in ids}


def _kept(paper: Paper, answer: JatsAnswer, url: str, means: Means) -> Paper:
    """*paper* ended ``downloaded`` with *answer*'s XML written to its JATS destination; unchanged when the
    article has no body text, or the file cannot be written (its other copies are tried)."""
    article, xml = answer
    if not article.has_body:
        return paper.noted("pmc_efetch", "the JATS has no body text (front matter and abstract only)")
    path = destination(paper, means, "jats")
    try:
        with part_file(path) as part:
            part.handle.write(xml)
            part.commit(path)
    except OSError as exc:
        return paper.noted("pmc_efetch", redact_text(f"cannot keep the JATS file: {exc}"))
    size, digest = file_digest(path)
    outcome = Outcome(Status.DOWNLOADED.value, source="pmc_efetch", url=url, path=str(path), bytes=size, sha256=digest,
                      http_status=200)
    return replace(paper, outcome=outcome).noted("pmc_efetch", f"downloaded {url}")


def _pmc_lookup(paper: Paper, sources: Mapping[str, Source]) -> tuple[Lookup, ...]:
    """The PMC Cloud Service's lookup of a paper with a PMCID (its record's JATS link is a copy of its own)."""
    pmc = sources.get("pmc")
    ident = id_of(paper.pmcid, IdType.PMCID)
    if pmc is None or ident is None or ident.type not in pmc.accepts or "pmc" in paper.sources_left:
        return ()
    return lookups("pmc", pmc, ident)
