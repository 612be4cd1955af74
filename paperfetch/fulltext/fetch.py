""":func:`collect_text`, what ``Retriever.fulltext`` runs: the ledger first (text already on disk, with its paper's
record), then :func:`fetch_texts` (JATS, then the PDF) for the rest (docs/fulltext.md, "r.fulltext")."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pandas as pd

from paperfetch import defaults
from paperfetch.cells import is_missing
from paperfetch.config import Identification
from paperfetch.errors import DownloadTooLarge, NotFoundError, PaperfetchError
from paperfetch.fulltext.article import parse_pdf
from paperfetch.fulltext.base import Article, FullTextError, NoTextLayer
from paperfetch.fulltext.bundle import FullText
from paperfetch.fulltext.endpoints import EuropePMCFullTextSource, JatsAnswer, PMCEfetchSource, jats_candidates
from paperfetch.fulltext.frame import RECORD_FIELDS
from paperfetch.fulltext.jats import parse_jats, split_articles
from paperfetch.fulltext.pdflines import DEFAULT_ENGINE, PdfEngine
from paperfetch.http import context as call_context
from paperfetch.http.files import file_digest
from paperfetch.ids import Identifier, IdType, ParsedInput, filename_for, parse_many, safe_parse
from paperfetch.ledger import open_ledger, record_outcome
from paperfetch.outcomes import FINISHED_WELL_STATUSES, Status, outcomes_frame
from paperfetch.paper import identity_row, initial_meta
from paperfetch.parts import part_file
from paperfetch.redact import redact_frame, redact_text, redact_url
from paperfetch.sources.base import Candidate, Record, RequestSpec, Source, batched

__all__ = ["TEXT_KEY_PREFIX", "TextContext", "collect_text", "fetch_texts", "text_key"]

logger = logging.getLogger(__name__)

#: The ledger key of a paper's text is this prefix and the identifier's key (its PDF keeps the plain key).
TEXT_KEY_PREFIX = "fulltext:"
#: Sources asked for ``kind="jats"`` candidates, when the Retriever has them.
JATS_CANDIDATE_SOURCES = ("biorxiv",)
#: What a paper's record holds (and its text's ledger entry keeps, so a re-run from disk loses nothing).
_META = tuple(dict.fromkeys((*RECORD_FIELDS, "oa_status")))


def text_key(identifier: Identifier) -> str:
    """The ledger key of *identifier*'s text: ``fulltext:doi:10.1000/x``."""
    return TEXT_KEY_PREFIX + identifier.key


@dataclass(frozen=True, kw_only=True)
class TextContext:
    """What :func:`collect_text` needs from the Retriever, given explicitly."""

    metadata: Any                                              #: the API client behind the metadata cache
    sources: Mapping[str, Source]                              #: the Retriever's metadata sources by name
    lookup: Callable[[str, list[Identifier]], dict[str, Record]]  #: a batch lookup that never raises
    download: Callable[[list[object]], pd.DataFrame]           #: ``Retriever.download``
    identification: Identification
    out_dir: Path
    filename_template: str
    resume: bool = True
    pdf_engine: PdfEngine | str | None = None  #: None: the PDF layer's default
    max_xml_bytes: int = defaults.MAX_XML_BYTES
    max_pdf_bytes: int = defaults.MAX_PDF_BYTES


@dataclass
class _Paper:
    item: ParsedInput
    ident: Identifier
    meta: dict[str, Any]
    is_oa: bool | None = None
    jats_urls: list[Candidate] = field(default_factory=list)
    article: Article | None = None                             # the text, parsed: JATS or the PDF's
    front_only: tuple[Article, bytes, str, str] | None = None  # a JATS answer without a body
    text_source: str | None = None
    text_path: str | None = None
    outcome: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    transient: bool = False  # a JATS endpoint failed in a way asking again may mend (network, a held host)
    done: bool = False

    @property
    def pmcid(self) -> Identifier | None:
        value = self.meta.get("pmcid")
        return _parsed(value, IdType.PMCID) if value else None

    def merge(self, record: Any) -> None:
        for name in _META:
            value = getattr(record, name, None) if not isinstance(record, Mapping) else record.get(name)
            if value not in (None, "", []) and self.meta.get(name) in (None, "", []):
                self.meta[name] = value


def collect_text(ids: Iterable[object] | str | pd.Series, *, context: TextContext) -> FullText:
    """The full text of *ids* as one bundle, outcomes included; a paper's failure is its row's ``error``. Text
    the ledger holds is read from disk with its paper's record, sending no request."""
    parsed = parse_many(ids)
    papers: dict[int, _Paper] = {}
    for item in parsed:
        if item.identifier is not None and item.duplicate_of is None:
            papers[item.position] = _Paper(item, item.identifier, initial_meta(item.identifier))
    context.out_dir.mkdir(parents=True, exist_ok=True)
    with open_ledger(folder=context.out_dir) as ledger:
        if context.resume:
            for paper in papers.values():
                _from_ledger(paper, ledger, context)
    pending = [p for p in papers.values() if not p.done]
    if pending:
        fetch_texts(pending, context)
        with open_ledger(folder=context.out_dir) as ledger:
            for paper in pending:
                _record(paper, ledger)
    return _bundle(parsed, papers)


def fetch_texts(papers: list[_Paper], context: TextContext) -> None:
    """The network part: each paper's JATS (Europe PMC, PMC, the sources' JATS links), else its PDF's text, kept
    in ``out_dir``; what the services say fills the paper's record."""
    _resolve(papers, context)
    _jats(papers, context)
    _pdf([p for p in papers if p.article is None], context)
    for paper in papers:
        _finish(paper, context)


# ---------------------------------------------------------------------- 2. from disk
def _from_ledger(paper: _Paper, ledger: Any, context: TextContext) -> None:
    key = text_key(paper.ident)
    entry = ledger.is_done(key, context.out_dir)
    if entry is None:
        entry = ledger.get(key)
        if entry is not None and not entry.retryable:  # a final "no text": not asked again
            paper.merge(entry.extra or {})
            paper.outcome = {"status": entry.status, "source": entry.source, "url": entry.url,
                             "http_status": entry.http_status, "error": entry.error}
            paper.done = True
        return
    extra = dict(entry.extra or {})
    path = ledger.absolute_path(entry)
    try:
        body = Path(path).read_bytes()
        if extra.get("text_source") == "jats":
            paper.article = parse_jats(body, max_bytes=context.max_xml_bytes)
        else:
            paper.article = parse_pdf(body, engine=context.pdf_engine or DEFAULT_ENGINE, max_bytes=context.max_pdf_bytes)
    except (OSError, FullTextError) as exc:  # changed or unreadable since: fetch it again
        logger.info("%s: the stored text %s cannot be read (%s); asking again", paper.ident.key, path, exc)
        paper.article = None
        return
    paper.merge(extra)
    paper.text_source, paper.text_path = extra.get("text_source"), str(path)
    paper.outcome = {"status": Status.ALREADY_DOWNLOADED.value, "source": entry.source, "url": entry.url,
                     "path": str(path), "bytes": entry.bytes, "sha256": entry.sha256, "http_status": entry.http_status}
    paper.done = True


# ---------------------------------------------------------------------- 3. resolve
def _resolve(papers: list[_Paper], context: TextContext) -> None:
    def ask(name: str, wanted: list[tuple[_Paper, Identifier]]) -> dict[str, Record]:
        if name not in context.sources or not wanted:
            return {}
        records = context.lookup(name, [ident for _, ident in wanted])
        for paper, ident in wanted:
            record = records.get(ident.key)
            if record is not None:
                paper.merge(record)
                if name == "europepmc" and record.is_oa is not None:
                    paper.is_oa = record.is_oa
                paper.jats_urls += jats_candidates(record.candidates)
        return records

    ask("europepmc", [(p, i) for p in papers if (i := _lookup_id(p, context.sources.get("europepmc"))) is not None])
    for name in JATS_CANDIDATE_SOURCES:
        ask(name, [(p, i) for p in papers if (i := _lookup_id(p, context.sources.get(name))) is not None])
    ask("ncbi_idconv", [(p, i) for p in papers if not p.meta.get("pmcid")
                        and (i := _lookup_id(p, context.sources.get("ncbi_idconv"))) is not None])


def _lookup_id(paper: _Paper, source: Source | None) -> Identifier | None:
    if source is None:
        return None
    for ident in (paper.ident, _parsed(paper.meta.get("doi"), IdType.DOI), paper.pmcid,
                  _parsed(paper.meta.get("pmid"), IdType.PMID)):
        if ident is not None and ident.type in source.accepts:
            return ident
    return None


# ---------------------------------------------------------------------- 4. JATS
def _jats(papers: list[_Paper], context: TextContext) -> None:
    """Each paper's JATS: Europe PMC's ``fullTextXML`` (open access there), PMC ``efetch`` in batches, the PMC
    Cloud Service, then the JATS links the sources gave; the first with body text is kept."""
    if (europepmc := context.sources.get("europepmc")) is not None:
        epmc = EuropePMCFullTextSource(base_url=europepmc.base_url, identification=context.identification)
        for paper in papers:
            if (ident := paper.pmcid) is not None and paper.is_oa:
                _take(paper, _ask(epmc, epmc.spec_for((ident,)), context, [paper]).get(ident.key), epmc, context)
    if (eutils := context.sources.get("ncbi_eutils")) is not None:
        _efetch(papers, PMCEfetchSource(base_url=eutils.base_url, identification=context.identification), context)
    _pmc_jats([p for p in papers if p.article is None and p.pmcid is not None], context)
    for paper in papers:
        for candidate in paper.jats_urls:
            if paper.article is not None:
                break
            _take(paper, _ask_url(candidate, context, paper), None, context, source_name=candidate.source,
                  url=candidate.url)


def _efetch(papers: list[_Paper], efetch: PMCEfetchSource, context: TextContext) -> None:
    """PMC ``efetch`` for the papers still without text, one request a batch of distinct PMCIDs."""
    by_key: dict[str, list[_Paper]] = {}
    for paper in papers:
        if paper.article is None and paper.pmcid is not None:
            by_key.setdefault(paper.pmcid.key, []).append(paper)
    unique = [group[0].pmcid for group in by_key.values() if group[0].pmcid is not None]
    for batch in batched(unique, efetch.batch_size):
        batch_papers = [p for i in batch for p in by_key[i.key]]
        found = _ask(efetch, efetch.spec_for(batch), context, batch_papers, per_id=len(batch) > 1)
        for ident in batch:
            for paper in by_key[ident.key]:
                _take(paper, found.get(ident.key), efetch, context)


def _pmc_jats(papers: list[_Paper], context: TextContext) -> None:
    """The PMC Cloud Service's JATS (``Record.jats_url``) as the first JATS candidate of papers still without text."""
    if "pmc" not in context.sources or not papers:
        return
    records = context.lookup("pmc", list({p.pmcid.key: p.pmcid for p in papers if p.pmcid is not None}.values()))
    for paper in papers:
        record = records.get(paper.pmcid.key) if paper.pmcid is not None else None
        if record is not None and record.jats_url:
            paper.jats_urls.insert(0, Candidate(record.jats_url, "pmc", kind="jats", license=record.license))


def _ask(source: EuropePMCFullTextSource | PMCEfetchSource, spec: RequestSpec, context: TextContext,
         papers: list[_Paper], *, per_id: bool = False) -> dict[str, tuple[JatsAnswer, str]]:
    """The articles of one request (``{key: ((article, xml), url)}``); a batch that cannot be read is asked per id."""
    url, params = source.url_for(spec)
    shown = _shown_url(url, spec.params)

    def request() -> dict[str, tuple[JatsAnswer, str]]:
        response = context.metadata.fetch(url, classify=source.classify, params=params)
        return {key: (answer, shown) for key, answer in source.articles(response.content, spec,
                                                                          max_bytes=context.max_xml_bytes).items()}

    def each() -> dict[str, tuple[JatsAnswer, str]]:
        logger.info("%s: the batched answer cannot be read; asking per id", source.name)
        return {key: found for ident in spec.ids for key, found in _ask(
            source, source.spec_for((ident,)), context,
            [p for p in papers if p.pmcid is not None and p.pmcid.key == ident.key]).items()}

    return _asked(source.name, shown, papers, request, lambda: _forget(context, url, params), each if per_id else None)


def _ask_url(candidate: Candidate, context: TextContext, paper: _Paper) -> tuple[JatsAnswer, str] | None:
    shown = redact_url(candidate.url)

    def request() -> dict[str, tuple[JatsAnswer, str]]:
        answers = split_articles(context.metadata.fetch(candidate.url).content, max_bytes=context.max_xml_bytes)
        if len(answers) != 1:
            raise FullTextError(f"expected one JATS <article>, found {len(answers)}")
        return {"": (answers[0], shown)}

    return _asked(candidate.source, shown, [paper], request, lambda: _forget(context, candidate.url, None)).get("")


def _asked(name: str, shown: str, papers: list[_Paper], request: Callable[[], dict[str, tuple[JatsAnswer, str]]],
           forget: Callable[[], None], each: Callable[[], dict[str, tuple[JatsAnswer, str]]] | None = None,
           ) -> dict[str, tuple[JatsAnswer, str]]:
    """What *request* gives; a failure is the papers' note, never raised: a 404 gives nothing, an answer that
    cannot be read is forgotten by the cache (and asked again per id by *each*), a failure that may pass is
    transient (asked again next run)."""
    with call_context.scope(source=name):
        try:
            return request()
        except NotFoundError:
            return {}
        except (FullTextError, DownloadTooLarge) as exc:
            forget()  # an unreadable stored answer is asked again next time
            if each is not None:
                return each()
            _note(papers, f"{name} {shown}: {exc}")
        except PaperfetchError as exc:
            _note(papers, f"{name} {shown}: {exc}", transient=True)
        except Exception as exc:  # noqa: BLE001 - an answer of a shape nobody foresaw fails these papers only
            _note(papers, f"{name} {shown}: internal error: {type(exc).__name__}: {exc}")
    return {}


def _take(paper: _Paper, found: tuple[JatsAnswer, str] | None, source: Source | None, context: TextContext, *,
          source_name: str | None = None, url: str | None = None) -> None:
    """Keep *found* for *paper*: written to ``out_dir``, or kept aside when it has no body text."""
    if found is None or paper.article is not None:
        return
    (article, xml), shown = found
    name = source_name or (source.name if source is not None else "jats")
    if not any(not p.section.startswith("Abstract") for p in article.paragraphs):
        if paper.front_only is None:
            paper.front_only = (article, xml, name, shown)
        return
    _keep_jats(paper, article, xml, name, shown, context)


def _keep_jats(paper: _Paper, article: Article, xml: bytes, source: str, url: str, context: TextContext) -> None:
    path = context.out_dir / _xml_name(paper, article, context)
    try:
        with part_file(path) as part:
            part.handle.write(xml)
            part.commit(path)
    except OSError as exc:
        _note([paper], f"cannot keep the JATS file in {context.out_dir}: {exc}")
        return
    size, digest = file_digest(path)
    paper.article = article
    paper.notes = []  # what other endpoints said no longer matters: the paper has its text
    paper.merge({"doi": article.doi, "pmid": article.pmid, "pmcid": article.pmcid, "license": article.license})
    paper.text_source, paper.text_path = "jats", str(path)
    paper.outcome = {"status": Status.DOWNLOADED.value, "source": source, "url": url, "path": str(path),
                     "bytes": size, "sha256": digest, "http_status": 200}


def _xml_name(paper: _Paper, article: Article, context: TextContext) -> str:
    pmcid = _parsed(article.pmcid, IdType.PMCID) or paper.pmcid
    return filename_for(pmcid or paper.ident, context.filename_template, extension=".xml")


# ---------------------------------------------------------------------- 5. PDF
def _pdf(papers: list[_Paper], context: TextContext) -> None:
    if not papers:
        return
    try:
        outcomes = context.download([p.item.input for p in papers])
    except Exception as exc:  # noqa: BLE001 - the PDF step failing ends no paper's JATS, nor the call
        _note(papers, f"PDF download failed: {type(exc).__name__}: {exc}")
        return
    for paper, (_, row) in zip(papers, outcomes.iterrows()):
        values = {k: (None if is_missing(v) else v) for k, v in row.items() if k != "input"}
        paper.merge(values)
        status = str(values.get("status"))
        paper.outcome = {k: values.get(k) for k in ("status", "source", "url", "path", "bytes", "sha256", "http_status")}
        if status not in FINISHED_WELL_STATUSES or not values.get("path"):
            if values.get("error"):
                paper.notes.append(str(values["error"]))
            continue
        try:
            body = Path(str(values["path"])).read_bytes()
            paper.article = parse_pdf(body, engine=context.pdf_engine or DEFAULT_ENGINE, max_bytes=context.max_pdf_bytes)
        except NoTextLayer as exc:
            paper.notes.append(str(exc))
            continue
        except (OSError, FullTextError) as exc:
            paper.outcome["status"] = Status.INVALID_PDF.value
            paper.notes.append(f"PDF text: {exc}")
            continue
        paper.notes = []
        paper.text_source, paper.text_path = "pdf", str(values["path"])


# ---------------------------------------------------------------------- 6. record and shape
def _finish(paper: _Paper, context: TextContext) -> None:
    """A paper without JATS body text or PDF text falls back to a front-matter-only JATS answer, if it had one."""
    if paper.article is None and paper.front_only is not None:
        article, xml, source, url = paper.front_only
        _keep_jats(paper, article, xml, source, url, context)
        if paper.article is not None:
            paper.notes = ["the JATS has no body text (front matter and abstract only)"]


def _record(paper: _Paper, ledger: Any) -> None:
    out = paper.outcome
    has_text = paper.text_source is not None
    if not has_text and not out.get("status"):
        known = paper.meta.get("pmcid") or paper.is_oa is not None
        out["status"] = Status.NO_OPEN_COPY.value if known else Status.NOT_FOUND.value
    if paper.notes:
        out["error"] = redact_text("; ".join(dict.fromkeys(paper.notes)))[:2000]
    elif not has_text:
        out.setdefault("error", "no JATS and no open-access PDF")
    extra = {k: paper.meta.get(k) for k in _META if paper.meta.get(k) not in (None, "", [])}
    extra.update(text_source=paper.text_source, text_path=paper.text_path)
    status = Status.DOWNLOADED.value if has_text else str(out["status"])
    # an unreadable PDF does not change by asking again; a JATS endpoint that failed for now (network, a hold) may
    retryable = True if paper.transient and not has_text else (False if status == Status.INVALID_PDF.value else None)
    try:
        file = {"path": paper.text_path} if has_text else {"path": None, "bytes": None, "sha256": None}
        row = {**out, **file, "status": status, "http_status": _int(out.get("http_status"))}
        record_outcome(ledger, text_key(paper.ident), row, retryable=retryable, extra=extra)
    except Exception as exc:  # noqa: BLE001 - a ledger that cannot record costs a re-run, not this call's answer
        logger.warning("%s: the text outcome could not be recorded: %s", paper.ident.key, exc)


def _bundle(parsed: list[ParsedInput], papers: Mapping[int, _Paper]) -> FullText:
    texts: list[tuple[Any, Article, Mapping[str, Any]]] = []
    outcome_rows: list[dict[str, Any]] = []
    for item in parsed:
        if item.identifier is None:
            outcome_rows.append({"input": item.input, "status": Status.INVALID_IDENTIFIER.value, "error": item.error})
            continue
        paper = papers[item.position if item.duplicate_of is None else item.duplicate_of]
        outcome_rows.append(_outcome_row(item, paper))
        if item.duplicate_of is None and paper.article is not None:
            texts.append((item.input, paper.article, paper.meta))
    outcomes = outcomes_frame(outcome_rows)
    if len(outcomes):  # redact_frame trips over an empty string column (pandas' arrow strings)
        redact_frame(outcomes)
    return FullText.of(texts, outcomes=outcomes)


def _outcome_row(item: ParsedInput, paper: _Paper) -> dict[str, Any]:
    row = identity_row(paper.ident, paper.meta)
    row.update({k: v for k, v in paper.outcome.items() if k in ("status", "source", "url", "path", "bytes", "sha256",
                                                               "http_status", "error")})
    row.update(input=item.input, text_source=paper.text_source, text_path=paper.text_path,
               retracted=paper.meta.get("retracted"))
    row["http_status"] = _int(row.get("http_status"))
    return row


# ---------------------------------------------------------------------- helpers
def _parsed(value: Any, hint: IdType) -> Identifier | None:
    ident = safe_parse(str(value), hint) if value not in (None, "") else None
    return ident if ident is not None and ident.type is hint else None


def _note(papers: Iterable[_Paper], message: str, *, transient: bool = False) -> None:
    for paper in papers:
        paper.notes.append(redact_text(message))
        paper.transient = paper.transient or transient
    logger.debug("full text: %s", redact_text(message))


def _forget(context: TextContext, url: str, params: Mapping[str, str] | None) -> None:
    forget = getattr(context.metadata, "forget", None)
    if forget is not None:
        forget(url, params)


def _shown_url(url: str, params: Mapping[str, str]) -> str:
    """The request's URL as outcome rows show it: without the identity parameters."""
    return redact_url(f"{url}?{urlencode(dict(params))}" if params else url)


def _int(value: Any) -> int | None:
    try:
        return None if is_missing(value) else int(value)
    except (TypeError, ValueError):
        return None
