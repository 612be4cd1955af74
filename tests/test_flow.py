"""The item flow: a paper is a frozen record, its next step is decided by a pure function, and acting on a step
returns a new paper. Reading a paper (or its job) changes nothing; a JATS copy goes through the same download,
atomic writer and ledger as a PDF."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from paperfetch import Retriever
from paperfetch.demo import DEMO_INPUTS, DemoWorld
from paperfetch.flow import Means, Outlook, PaperJob, next_step
from paperfetch.http.client import HttpClient
from paperfetch.http.hosts import HostRegistry
from paperfetch.ids import IdType, parse_identifier
from paperfetch.ledger import open_ledger
from paperfetch.paper import Copy, Lookup, Paper, Update
from paperfetch.sources import Candidate, Record
from paperfetch.testing import LoopbackHost, Reply
from tests._quick import slow_services, unpaced

DOI = "10.5555/x.1"
PREPRINT = "10.1101/2026.01.05.000001"


class _Prefetched:
    stage = "prefetched"


class _Lookup:
    """A per-item lookup source (Crossref-like): one request per identifier."""

    stage = "lookup"
    accepts = frozenset({IdType.DOI})

    def requests_for(self, ids):  # noqa: ANN001, ANN201
        return [("works", ident.key) for ident in ids]

    def url_for(self, spec):  # noqa: ANN001, ANN201
        return f"https://lookup.example/{spec[1]}", {"mailto": "x"}


def _papers_and_outlooks():
    cands = [Candidate("https://a.example/pre.pdf", "openalex", version="submittedVersion"),
             Candidate("https://b.example/pub.pdf", "openalex", version="publishedVersion"),
             Candidate("https://c.example/pub.pdf", "openalex", version="publishedVersion"),
             Candidate("https://c.example/page", "openalex", kind="landing")]
    sources = {"openalex": _Prefetched(), "crossref": _Lookup(), "biorxiv": _Lookup()}
    records = {("openalex", DOI): Record(doi=DOI, candidates=cands),
               ("openalex", PREPRINT): Record(doi=PREPRINT, candidates=cands[:1], published_doi=DOI)}
    held = {"a.example": 30.0}

    def hold(url: str) -> float:
        return next((s for host, s in held.items() if host in url), 0.0)

    plain = Outlook(sources=sources, prefetched=records, closed_for=hold, ready_in=hold)
    outlooks = [plain, dataclasses.replace(plain, prefer="published"), dataclasses.replace(plain, skip_retracted=True),
                dataclasses.replace(plain, works={DOI: 0, PREPRINT: 1})]
    start = Paper.start(parse_identifier(DOI), ["openalex", "crossref", "landing"])
    papers = [start, dataclasses.replace(start, retracted=True, updates=(Update("retraction", "10.5555/n", "2024-05-01"),)),
              Paper.start(parse_identifier(PREPRINT), ["openalex", "biorxiv", "crossref"])]
    return papers, outlooks


def test_next_step_is_pure_the_same_paper_gives_the_same_step_and_nothing_changes():
    papers, outlooks = _papers_and_outlooks()
    kinds = set()
    for paper in papers:
        for outlook in outlooks:
            paper_before, outlook_before = copy.deepcopy(paper), copy.deepcopy(outlook.prefetched)
            first, second = next_step(paper, outlook), next_step(paper, outlook)
            assert first == second and first is not second
            assert paper == paper_before and dict(outlook.prefetched) == outlook_before
            # the step's paper is decided again to the same step: deciding is idempotent
            assert next_step(first.paper, outlook) == first
            kinds.add(first.kind)
    assert {"download", "lookup", "end"} <= kinds  # the rules met: copies by tier, the VOR's lookups, retracted, deferred


def test_the_decided_step_follows_the_rules_over_the_paper():
    (paper, retracted, preprint), (plain, published, skipping, paired) = _papers_and_outlooks()
    step = next_step(paper, plain)
    assert step.kind == "download" and step.copies == ("https://b.example/pub.pdf", "https://c.example/pub.pdf")
    assert next_step(paper, dataclasses.replace(plain, prefer="speed")).url == "https://a.example/pre.pdf"
    ended = next_step(retracted, skipping)
    assert ended.kind == "end" and ended.paper.row()["status"] == "retracted"
    assert ended.paper.row()["reason"] == "retracted (notice 10.5555/n, 2024-05-01)"
    assert next_step(retracted, plain).kind == "download"  # skip_retracted off: the paper is fetched
    sought = next_step(preprint, published)  # its journal version's lookups go first
    assert sought.kind == "lookup" and sought.url == f"https://lookup.example/doi:{DOI}" and sought.paper.vor_asked
    left = next_step(preprint, paired)  # its journal version is another input: the file is left to it
    assert left.kind == "end" and left.paper.same_work == 0 and left.paper.put_aside is not None


_HELD_PAGE = Copy("https://a.example/article", "openalex", kind="landing")
_HELD_PDF = Copy("https://a.example/p.pdf", "openalex", "publishedVersion")
_FOUND_PDF = Copy("https://a.example/found.pdf", "openalex", followed=True)
_OPEN_PDF = Copy("https://b.example/p.pdf", "openalex", "publishedVersion")
_OTHER_PAGE = Copy("https://b.example/article", "openalex", "publishedVersion", kind="landing")
_LOOKUP = Lookup("crossref", "https://lookup.example/works")
_PLAIN_PDF = Copy("https://b.example/plain.pdf", "openalex")  # no version: a lower tier
_LATER_PDF = Copy("https://c.example/p.pdf", "openalex", "publishedVersion")  # its host starts in 40 s
_LATER_PAGE = Copy("https://c.example/article", "openalex", kind="landing")


@pytest.mark.parametrize(("actions", "first"), [
    ((_HELD_PAGE, _OPEN_PDF), _OPEN_PDF),  # the 503's page waits, the open copy elsewhere goes
    ((_HELD_PAGE, _OTHER_PAGE), _OTHER_PAGE),  # a page elsewhere that can start now goes too
    ((_FOUND_PDF, _LOOKUP, _OPEN_PDF), _LOOKUP),  # the first action elsewhere that can start sooner
    ((_HELD_PAGE, _LATER_PAGE, _OTHER_PAGE), _OTHER_PAGE),  # one that starts later than the hold ends waits
    ((_HELD_PAGE, _LATER_PAGE), _HELD_PAGE),  # nothing starts sooner: the order stays
    ((_OTHER_PAGE, _HELD_PAGE, _OPEN_PDF), _OTHER_PAGE),  # a step on a free host keeps its place
    ((_HELD_PDF, _HELD_PAGE, _OTHER_PAGE), _OTHER_PAGE),  # a held copy waits behind a page elsewhere
    ((_HELD_PDF, _LOOKUP), _LOOKUP),  # and behind a lookup
    ((_HELD_PDF, _PLAIN_PDF), _HELD_PDF),  # a worse tier never goes before it: its hold is waited for
    ((_HELD_PDF, _OTHER_PAGE, _OPEN_PDF), _HELD_PDF),  # a copy of its tier elsewhere: the assignment's choice
    ((_HELD_PAGE, _PLAIN_PDF, _HELD_PDF), _HELD_PDF),  # a page's worse copy elsewhere does not outrank the held one
])
def test_a_step_on_a_held_host_gives_way_to_an_action_elsewhere_that_can_start_sooner(actions, first):
    waits = {"a.example": 30.0, "c.example": 40.0}

    def hold(url: str) -> float:
        return waits["a.example"] if "a.example" in url else 0.0

    def ready(url: str) -> float:
        return next((s for host, s in waits.items() if host in url), 0.0)

    outlook = Outlook(sources={}, ready_in=ready, closed_for=hold)  # held, or its breaker open
    paper = dataclasses.replace(Paper.start(parse_identifier(DOI), []), actions=actions)
    step = next_step(paper, outlook)
    assert step.action == first and next_step(step.paper, outlook) == step  # decided again: the same step
    assert sorted(map(str, step.paper.actions)) == sorted(map(str, actions))  # every action stays in the list


def _read_everything(job: PaperJob) -> int:
    """Read every attribute of a job, its decided step and its paper (as a dashboard or a debugger would)."""
    seen = [getattr(job, name) for name in ("url", "copies", "leads_on", "identifier", "finished", "doing", "error")]
    seen += [job.step.kind, job.step.url, job.step.action, job.step.copies, job.step.free, job.final(), job.outcome()]
    for paper in (job.paper, job.step.paper):
        seen += [getattr(paper, f.name) for f in dataclasses.fields(paper)]
        seen += [paper.meta, paper.ended, paper.row(), paper.ledger_entry(), paper.asked()]
    return len(seen)


_COMPARED = ["input", "id_type", "status", "source", "doi", "pmid", "pmcid", "title", "year", "copies", "offered_by",
             "retracted", "updates", "is_notice", "preprint_of", "version", "title_match"]


def _run(tmp_path: Path, base_ip: int, watch: bool) -> tuple[pd.DataFrame, int]:
    reads = [0]
    with DemoWorld(base_ip=base_ip) as world, Retriever(
            email="tester@uni.example", out_dir=tmp_path, endpoints=world.endpoints, progress=False, verbosity=0,
            http_options={"network_retry_base_s": 0.05, "rate_limit_min_s": 0.05, "rate_limit_max_s": 0.1,
                          # bioRxiv's 1 s and arXiv's 3 s left out; the other services keep theirs: which source
                          # offers a copy first (offered_by, compared below) races with them
                          "host_intervals": unpaced(slow_services(world.endpoints))}) as r:
        if watch:
            def read(event: object) -> None:
                for _, job in list(r._batch.jobs):
                    reads[0] += _read_everything(job)

            r.web.subscribe(read)
            r.api.subscribe(read)
        frame = r.download(DEMO_INPUTS)
    return frame[_COMPARED].astype(object).where(frame[_COMPARED].notna(), None), reads[0]


def test_reading_every_attribute_of_every_paper_mid_run_leaves_the_outcome_rows_unchanged(tmp_path):
    quiet, none = _run(tmp_path / "quiet", 71, watch=False)
    watched, reads = _run(tmp_path / "watched", 72, watch=True)
    assert none == 0 and reads > 1000  # the watcher read, many times, mid-run
    pd.testing.assert_frame_equal(quiet, watched)


JATS = b'<?xml version="1.0"?>\n<article><front><article-meta><title-group><article-title>T</article-title>' \
       b'</title-group></article-meta></front><body><p>Text.</p></body></article>\n'


@pytest.mark.parametrize("body, status, said", [
    (JATS, "downloaded", None), (b"<html><body>sign in</body></html>", "invalid_pdf", "not JATS XML"),
    (JATS.replace(b"<body><p>Text.</p></body>", b""), "invalid_pdf", "no body text")])
def test_a_jats_copy_is_fetched_and_written_by_the_same_flow_writer_and_ledger(tmp_path, body, status, said):
    """Wanting text, a JATS copy is downloaded; one that is no article with a body (a page, front matter only)
    is a failed copy, its file gone."""
    with LoopbackHost("127.0.0.81", {"/a.xml": Reply(200, body, {"Content-Type": "application/xml"})}) as host:
        web = HttpClient(registry=HostRegistry(), verbosity=0, delay_min_s=0.0, delay_max_s=0.0)
        paper = Paper.start(parse_identifier(DOI)).with_candidates([Candidate(host.url("/a.xml"), "biorxiv", kind="jats")])
        assert paper.copies[0].kind == "jats"
        job = PaperJob(paper, Outlook(sources={}, want="text"), Means(api=web, web=web, sources={}, out_dir=tmp_path,
                                                          filename_template="{type}_{value}"))
        assert job.step.kind == "download" and job.url == host.url("/a.xml")
        job.advance()
        assert job.url is None
    ended = job.final()
    row = ended.row()
    assert row["status"] == status
    with open_ledger(folder=tmp_path) as ledger:
        ledger.record(**ended.ledger_entry())
        entry = ledger.get(ended.identifier.key)
    assert entry is not None and entry.status == status
    if status == "downloaded":
        written = Path(row["path"])
        assert written.suffix == ".xml" and written.read_bytes() == JATS and row["bytes"] == len(JATS)
        assert entry.path is not None and not list(tmp_path.glob("*.part"))
    else:
        assert not list(tmp_path.glob("*.xml")) and said in row["error"]


def test_wanting_text_a_jats_copy_goes_before_the_pdfs_and_wanting_a_pdf_it_is_never_downloaded():
    pdf, jats = Candidate("https://example.org/a.pdf", "unpaywall"), Candidate("https://example.org/a.xml", "biorxiv", kind="jats")
    paper = Paper.start(parse_identifier(DOI)).with_candidates([pdf, jats])
    assert next_step(paper, Outlook(sources={}, want="text")).url == jats.url
    assert next_step(paper, Outlook(sources={})).url == pdf.url
    only_jats = Paper.start(parse_identifier(DOI)).with_candidates([jats])
    assert next_step(only_jats, Outlook(sources={})).kind == "end"


def test_the_ledger_keeps_a_papers_notices_as_values_and_still_reads_them_as_text(tmp_path):
    from paperfetch.flow.rows import resumed_row
    from paperfetch.paper import Outcome

    notices = (Update("retraction", "10.5555/n", "2024-05-01", "retraction-watch"), Update("correction", None, None, "pubmed"))
    paper = dataclasses.replace(Paper.start(parse_identifier(DOI)), retracted=True, updates=notices,
                                outcome=Outcome("http_error", http_status=404, error="gone"))
    older = Paper.start(parse_identifier("10.5555/older"))
    with open_ledger(folder=tmp_path) as ledger:
        ledger.record(**paper.ledger_entry())
        entry = ledger.get(paper.identifier.key)
        assert entry is not None and entry.extra["updates"][0] == {"kind": "retraction", "notice": "10.5555/n",
                                                                   "date": "2024-05-01", "source": "retraction-watch"}
        resumed = resumed_row(ledger, paper.identifier, tmp_path)
        assert resumed is not None and resumed["updates"] == paper.row()["updates"] == \
            "retraction 10.5555/n 2024-05-01 (retraction-watch); correction (pubmed)"
        # a ledger written before the notices were kept as values: its text is shown as it was
        ledger.record(older.identifier.key, status="http_error", http_status=404, error="gone", retryable=False,
                      extra={"updates": "retraction 10.5555/m 2023-01-02 (publisher)", "retracted": True})
        again = resumed_row(ledger, older.identifier, tmp_path)
        assert again is not None and again["updates"] == "retraction 10.5555/m 2023-01-02 (publisher)"
