"""Full text is the same flow: with ``want="text"`` a paper is first given its JATS copies — Europe PMC's
``fullTextXML`` for an open-access PMCID, PMC ``efetch`` for a PMCID, the PMC Cloud Service's and bioRxiv's JATS
links — which :func:`~paperfetch.flow.decide.next_step` tries before any PDF; a JATS copy that is no article with
a body fails like any copy, and the flow moves on to the next (docs/fulltext.md, "r.fulltext").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping, Sequence
from urllib.parse import urlencode

from paperfetch.flow.decide import lookups
from paperfetch.fulltext.endpoints import TEXT_KEY_PREFIX, EuropePMCFullTextSource, PMCEfetchSource
from paperfetch.ids import Identifier, IdType, safe_parse
from paperfetch.paper import Copy, Lookup, Paper
from paperfetch.sources import Record, Source

__all__ = ["JATS_SOURCES", "TEXT_KEY_PREFIX", "jats_copies", "text_key", "with_text_copies"]

#: The metadata sources asked (batched) for what leads to a paper's JATS: its PMCID and open-access flag, its
#: JATS links; the ID converter last, for the papers still without a PMCID.
JATS_SOURCES = ("europepmc", "biorxiv", "ncbi_idconv")

Ask = Callable[[str, list[Identifier]], Mapping[str, Record]]


def text_key(key: str) -> str:
    """The ledger key of the text of the paper whose key is *key*: ``fulltext:doi:10.1000/x``."""
    return TEXT_KEY_PREFIX + key


def _url(source: Source, ident: Identifier) -> str:
    url, params = source.url_for(source.spec_for((ident,)))
    return f"{url}?{urlencode(dict(params))}" if params else url


def jats_copies(paper: Paper, sources: Mapping[str, Source], records: Sequence[Record], is_oa: bool) -> tuple[Copy, ...]:
    """The paper's JATS copies in the order they are tried: ``fullTextXML`` (open access in Europe PMC), ``efetch``,
    then the JATS links the records give."""
    pmcid = safe_parse(paper.pmcid, IdType.PMCID) if paper.pmcid else None
    copies: list[Copy] = []
    if pmcid is not None and pmcid.type is IdType.PMCID:
        if is_oa and (epmc := sources.get("europepmc")) is not None:
            source = EuropePMCFullTextSource(base_url=epmc.base_url, identification=epmc.identification)
            copies.append(Copy(_url(source, pmcid), source.name, kind="jats"))
        if (eutils := sources.get("ncbi_eutils")) is not None:
            efetch = PMCEfetchSource(base_url=eutils.base_url, identification=eutils.identification)
            copies.append(Copy(_url(efetch, pmcid), efetch.name, kind="jats"))
    for record in records:
        links = [(c.url, c.source) for c in record.candidates if c.kind == "jats"]
        if record.jats_url:
            links.insert(0, (record.jats_url, "biorxiv"))
        copies += [Copy(url, source, kind="jats") for url, source in links]
    return tuple(dict.fromkeys(copies))


def _identifier(paper: Paper, source: Source | None) -> Identifier | None:
    if source is None:
        return None
    for value, hint in ((paper.identifier.value, paper.identifier.type), (paper.doi, IdType.DOI),
                        (paper.pmcid, IdType.PMCID), (paper.pmid, IdType.PMID)):
        ident = safe_parse(value, hint) if value else None
        if ident is not None and ident.type in source.accepts:
            return ident
    return None


def with_text_copies(papers: Sequence[Paper], sources: Mapping[str, Source], ask: Ask) -> list[Paper]:
    """The papers with their JATS copies queued first (the sources of :data:`JATS_SOURCES` asked once for the
    batch, each for the papers it can know), and the PMC Cloud Service's lookup after them when it is a source."""
    papers = list(papers)
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
    out = []
    for paper, given, oa in zip(papers, found, is_oa):
        copies = jats_copies(paper, sources, given, oa)
        paper = replace(paper, copies=(*paper.copies, *copies))
        out.append(replace(paper, actions=(*copies, *_pmc_lookup(paper, sources), *paper.actions)))
    return out


def _pmc_lookup(paper: Paper, sources: Mapping[str, Source]) -> tuple[Lookup, ...]:
    """The PMC Cloud Service's lookup of a paper with a PMCID (its record's JATS link is a copy of its own)."""
    pmc = sources.get("pmc")
    ident = safe_parse(paper.pmcid, IdType.PMCID) if paper.pmcid else None
    if pmc is None or ident is None or ident.type not in pmc.accepts or "pmc" in paper.sources_left:
        return ()
    return lookups("pmc", pmc, ident)
