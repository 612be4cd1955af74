"""``Retriever.fulltext``: JATS first (Europe PMC, PMC efetch), the PDF's text layer second, against loopback servers.

The Europe PMC and NCBI hosts serve the real recorded ``fullTextXML`` bodies (``tests/data/europepmc``); a
publisher host serves a PDF generated here with known paragraphs. Every request is counted in the servers' logs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs

import pandas as pd
import pytest

from paperfetch.cli import main
from paperfetch.fulltext import PARAGRAPH_COLUMNS, REFERENCE_COLUMNS, parse_jats
from paperfetch.ledger import open_ledger
from paperfetch.log import disable_logging
from paperfetch.outcomes import COLUMNS
from paperfetch.testing import LoopbackHost, Reply, Request
from tests._fixtures import fixtures_or_placeholder
from tests._pdfwriter import layout_article, write_pdf
from tests._quick import retriever
from tests.test_fulltext_parse import _expected_rows

DATA = fixtures_or_placeholder() / "europepmc"  # the recorded Europe PMC bodies, never committed
#: The two recorded bodies, empty without the fixtures (the tests that read them are marked ``recorded``).
BODIES = {pmcid: (DATA / f"rest__{pmcid}__fullTextXML.xml").read_bytes() for pmcid in ("PMC8164761", "PMC8118396")
          if (DATA / f"rest__{pmcid}__fullTextXML.xml").is_file()}

EPMC_OA = "10.1186/s13007-021-00757-y"       # PMC8164761, Europe PMC open access: fullTextXML
EFETCH = "10.1080/23802359.2021.1911705"     # PMC8118396, not open access in Europe PMC: efetch db=pmc
HOSTILE = "10.9999/hostile"                  # PMC1000001: a billion-laughs body, then a cut one
HUGE = "10.9999/huge"                        # PMC1000002: a body over the answer cap
PDF_ONLY = "10.9999/pdf-only"                # no JATS anywhere; Unpaywall offers a PDF
NOTHING = "10.9999/nothing"                  # nobody knows it

PDF_PARAGRAPHS = [
    "Plants lose water through their leaves, and the loss is measured here with a sensor that is small and cheap.",
    "Twenty seedlings were grown in pots of equal size and watered every second day for four weeks in a glasshouse.",
    "The sensor followed the water content of every stem closely, and the readings agreed with the weighed values.",
]
BILLION_LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
                  b"<article><body><p>&lol2;</p></body></article>")


def _pdf() -> bytes:
    blocks = [("title", "Watching water in stems"), ("heading", "1. Introduction"), ("para", PDF_PARAGRAPHS[0]),
              ("heading", "2. Methods"), ("para", PDF_PARAGRAPHS[1]), ("heading", "3. Results"), ("para", PDF_PARAGRAPHS[2])]
    return write_pdf(layout_article(blocks))


@dataclass
class World:
    """Europe PMC, NCBI, the metadata services and a publisher, on loopback; each serves what its dicts say."""

    base_ip: int
    #: DOI → (PMCID, isOpenAccess) in Europe PMC's search answers
    epmc: dict[str, tuple[str, str]] = field(default_factory=lambda: {
        EPMC_OA: ("PMC8164761", "Y"), EFETCH: ("PMC8118396", "N"), HOSTILE: ("PMC1000001", "Y"), HUGE: ("PMC1000002", "Y")})
    cut_batches: bool = False
    _efetch_log: list[str] = field(default_factory=list)
    hosts: dict[str, LoopbackHost] = field(default_factory=dict)

    def __enter__(self) -> "World":
        for offset, (name, handler) in enumerate((("epmc", self._epmc), ("ncbi", self._ncbi), ("meta", self._meta),
                                                  ("pub", self._pub))):
            self.hosts[name] = LoopbackHost(f"127.0.0.{self.base_ip + offset}", {"*": handler}).start()
        return self

    def __exit__(self, *exc: object) -> None:
        for host in self.hosts.values():
            host.stop()

    @property
    def endpoints(self) -> dict[str, str]:
        h = self.hosts
        return {"europepmc": h["epmc"].base_url, "ncbi_idconv": h["ncbi"].base_url, "ncbi_eutils": h["ncbi"].base_url,
                **{name: h["meta"].base_url for name in ("unpaywall", "openalex", "crossref", "arxiv", "doi", "pmc")}}

    def served(self) -> int:
        return sum(host.hits() for host in self.hosts.values())

    def efetch_ids(self) -> list[str]:
        """The ``id=`` of every efetch request, in order."""
        return list(self._efetch_log)

    def _epmc(self, request: Request) -> Reply:
        if request.path.endswith("/fullTextXML"):
            pmcid = request.path.split("/")[-2]
            if pmcid == "PMC1000001":
                return Reply(200, BILLION_LAUGHS, {"Content-Type": "application/xml"})
            if pmcid == "PMC1000002":
                return Reply(200, b"<article><body><p>" + b"x" * (3 << 20) + b"</p></body></article>")
            if pmcid in BODIES:
                return Reply(200, BODIES[pmcid], {"Content-Type": "application/xml"})
            return Reply(404, b"<error/>")
        query = parse_qs(request.query).get("query", [""])[0].lower()
        results = [{"id": pmcid, "source": "PMC", "pmcid": pmcid, "doi": doi, "isOpenAccess": oa, "license": "cc by"}
                   for doi, (pmcid, oa) in self.epmc.items() if doi in query]
        return Reply(200, json.dumps({"hitCount": len(results), "resultList": {"result": results}}),
                     {"Content-Type": "application/json"})

    def _ncbi(self, request: Request) -> Reply:
        query = parse_qs(request.query)
        if request.path.startswith("/pmc/utils/idconv"):
            return Reply(200, json.dumps({"status": "ok", "records": []}), {"Content-Type": "application/json"})
        ids = query.get("id", [""])[0].split(",")
        self._efetch_log.append(",".join(ids))
        articles = []
        for number in ids:
            pmcid = "PMC" + number
            if number.startswith("PMC"):  # E-utilities wants bare numbers
                return Reply(400, b"bad id")
            if pmcid in BODIES:
                articles.append(BODIES[pmcid][BODIES[pmcid].index(b"<article"):])
            elif pmcid == "PMC1000001":
                articles.append(BODIES["PMC8118396"][:900])  # a cut article
        body = b"<pmc-articleset>" + b"".join(articles) + b"</pmc-articleset>"
        if self.cut_batches and len(ids) > 1:
            body = body[: len(body) // 2]
        return Reply(200, body, {"Content-Type": "text/xml"})

    def _meta(self, request: Request) -> Reply:
        if request.path == f"/v2/{PDF_ONLY.replace('/', '%2F')}" or request.path == f"/v2/{PDF_ONLY}":
            pdf = self.hosts["pub"].url("/files/pdf-only.pdf")
            return Reply(200, json.dumps({"doi": PDF_ONLY, "is_oa": True, "best_oa_location": {
                "url_for_pdf": pdf, "url": pdf, "license": "cc-by-nc", "version": "publishedVersion"}}),
                {"Content-Type": "application/json"})
        return Reply(404, b"{}", {"Content-Type": "application/json"})

    def _pub(self, request: Request) -> Reply:
        if request.path == "/files/pdf-only.pdf":
            return Reply(200, _pdf(), {"Content-Type": "application/pdf"})
        return Reply(404, b"no")


@pytest.fixture
def world():
    with World(base_ip=90) as w:
        yield w


#: Text through JATS and PDF alone: Unpaywall the one metadata source, nothing kept between runs but the ledger.
TEXT_ONLY = {"sources": ("unpaywall",), "state": "memory", "cache": False}


def _texts(frame: pd.DataFrame, input_: str) -> list[tuple[str, str]]:
    rows = frame[frame["input"] == input_]
    return list(zip(rows["section"], rows["text"]))


@pytest.mark.recorded
def test_every_p_of_the_real_bodies_is_one_row_through_europepmc_and_efetch(world, tmp_path):
    with retriever(tmp_path, world.endpoints, **TEXT_ONLY) as r:
        text = r.fulltext([EPMC_OA, EFETCH])
        paragraphs, outcomes = text.paragraphs, text.outcomes
    assert list(paragraphs.columns) == list(PARAGRAPH_COLUMNS)
    assert _texts(paragraphs, EPMC_OA) == _expected_rows(BODIES["PMC8164761"])
    assert _texts(paragraphs, EFETCH) == _expected_rows(BODIES["PMC8118396"])
    for input_, pmcid in ((EPMC_OA, "PMC8164761"), (EFETCH, "PMC8118396")):
        rows = paragraphs[paragraphs["input"] == input_]
        assert list(rows["paragraph"]) == list(range(len(rows)))
        assert set(rows["pmcid"]) == {pmcid} and set(rows["doi"]) == {input_} and set(rows["text_source"]) == {"jats"}
        assert set(rows["license"]) == {"https://creativecommons.org/licenses/by/4.0/"}
        assert not rows["text"].str.contains(r"<[A-Za-z/]|&#|\n|\t|  ", regex=True).any()
    assert list(outcomes.columns) == list(COLUMNS)
    assert list(outcomes["source"]) == ["europepmc_fulltext", "pmc_efetch"]
    assert list(outcomes["text_source"]) == ["jats", "jats"]
    for path in outcomes["text_path"]:  # kept beside the PDFs, as the service sent it
        assert Path(path).parent == tmp_path and Path(path).suffix == ".xml"
        assert parse_jats(Path(path).read_bytes()).paragraphs
    assert (tmp_path / "pmcid_PMC8164761.xml").read_bytes() == BODIES["PMC8164761"]
    assert world.efetch_ids() == ["8118396"]  # ids without the PMC prefix; the OA paper is not asked there
    assert not list(tmp_path.glob("*.part")) and not list(tmp_path.glob(".*.part"))
    assert not list(tmp_path.glob("*.pdf"))  # a paper with JATS is never downloaded as a PDF for its text
    with open_ledger(folder=tmp_path) as ledger:
        entry = ledger.get("fulltext:doi:" + EPMC_OA)
        assert entry is not None and entry.extra["text_source"] == "jats"
        assert entry.extra["text_path"] == str(tmp_path / "pmcid_PMC8164761.xml")


@pytest.mark.recorded
def test_hostile_truncated_and_oversized_bodies_are_each_papers_own_failure(world, tmp_path):
    http = {"max_answer_bytes": 2 << 20}
    with retriever(tmp_path, world.endpoints, **TEXT_ONLY, http_options=http) as r:
        text = r.fulltext([HOSTILE, EPMC_OA, HUGE, EFETCH])
        paragraphs, outcomes = text.paragraphs, text.outcomes
    assert set(paragraphs["input"]) == {EPMC_OA, EFETCH}
    assert _texts(paragraphs, EPMC_OA) == _expected_rows(BODIES["PMC8164761"])
    by_input = outcomes.set_index("input")
    assert pd.isna(by_input.loc[HOSTILE, "text_source"]) and pd.isna(by_input.loc[HUGE, "text_source"])
    assert "entit" in by_input.loc[HOSTILE, "error"]  # the billion laughs: refused, never expanded
    assert "over the limit of 2,097,152" in by_input.loc[HUGE, "error"]  # announced by Content-Length: never read
    assert "over the limit" in by_input.loc[HUGE, "reason"]  # the reason names the size, not the 200 it came with
    # the hostile paper's batch-mate still got its text from the same efetch batch (cut there: asked per id)
    assert list(by_input.loc[[EPMC_OA, EFETCH], "text_source"]) == ["jats", "jats"]


@pytest.mark.recorded
def test_a_cut_batched_efetch_falls_back_to_one_request_per_id(world, tmp_path):
    world.epmc[EPMC_OA] = ("PMC8164761", "N")  # both papers now come from efetch, in one batch
    world.cut_batches = True
    with retriever(tmp_path, world.endpoints, **TEXT_ONLY) as r:
        paragraphs = r.fulltext([EPMC_OA, EFETCH]).paragraphs
    assert world.efetch_ids() == ["8164761,8118396", "8164761", "8118396"]
    assert _texts(paragraphs, EPMC_OA) == _expected_rows(BODIES["PMC8164761"])
    assert _texts(paragraphs, EFETCH) == _expected_rows(BODIES["PMC8118396"])


@pytest.mark.recorded
def test_a_pdf_gives_pdf_rows_and_a_paper_with_nothing_gives_none(world, tmp_path):
    with retriever(tmp_path, world.endpoints, **TEXT_ONLY) as r:
        text = r.fulltext([PDF_ONLY, NOTHING, "not an id", EPMC_OA])
        paragraphs, outcomes = text.paragraphs, text.outcomes
    pdf_rows = paragraphs[paragraphs["input"] == PDF_ONLY]
    assert set(pdf_rows["text_source"]) == {"pdf"} and set(pdf_rows["license"]) == {"cc-by-nc"}
    assert list(pdf_rows["text"])[-3:] == PDF_PARAGRAPHS
    assert list(pdf_rows["section"])[-3:] == ["Introduction", "Methods", "Results"]
    assert NOTHING not in set(paragraphs["input"])
    by_input = outcomes.set_index("input")
    assert by_input.loc[PDF_ONLY, "text_source"] == "pdf" and by_input.loc[PDF_ONLY, "text_path"].endswith(".pdf")
    assert by_input.loc[NOTHING, "status"] == "not_found" and pd.isna(by_input.loc[NOTHING, "text_source"])
    assert by_input.loc["not an id", "status"] == "invalid_identifier"
    assert by_input.loc[EPMC_OA, "text_source"] == "jats"


def test_no_input_gives_the_empty_frames_with_every_column(world, tmp_path):
    with retriever(tmp_path, world.endpoints, **TEXT_ONLY) as r:
        assert list(r.fulltext([]).paragraphs.columns) == list(PARAGRAPH_COLUMNS)
        assert len(r.fulltext(["junk"]).paragraphs) == 0
        assert list(r.fulltext_references([]).columns) == list(REFERENCE_COLUMNS)
    assert world.served() == 0


class RecordWorld(World):
    """Europe PMC's search answers also give each paper's title, year, authors, and a retraction of EFETCH."""

    def _epmc(self, request: Request) -> Reply:
        reply = super()._epmc(request)
        if request.path.endswith("/fullTextXML"):
            return reply
        answer = json.loads(reply.body)
        for result in answer["resultList"]["result"]:
            result.update(title=f"The paper {result['pmcid']}", pubYear="2021",
                          authorList={"author": [{"lastName": "Lovelace", "firstName": "Ada"}]})
            if result["doi"] == EFETCH:
                result["commentCorrectionList"] = {"commentCorrection": [{"type": "Retraction in", "id": "1"}]}
        return Reply(200, json.dumps(answer), {"Content-Type": "application/json"})


@pytest.mark.recorded
def test_one_batch_gives_the_bundle_and_its_views_and_a_rerun_keeps_the_record(tmp_path, monkeypatch):
    from paperfetch.flow import BatchRun

    ids = [EPMC_OA, EFETCH, PDF_ONLY, NOTHING]
    batches = []
    download = BatchRun.download
    monkeypatch.setattr(BatchRun, "download", lambda self, items, *a, **k: batches.append(list(items))
                        or download(self, items, *a, **k))
    with RecordWorld(base_ip=230) as world:
        with retriever(tmp_path, world.endpoints, **TEXT_ONLY) as r:
            first = r.fulltext(ids)
            sent = world.served()
            views = [r.fulltext_references(ids), r.fulltext_tables(ids), r.fulltext_figures(ids), r.fulltext(ids)]
            assert world.served() == sent and len(batches) == 1  # one batch, one dashboard; the views ask nothing
        pd.testing.assert_frame_equal(views[0], first.references)
        pd.testing.assert_frame_equal(views[1].drop(columns=["table"]), first.tables.drop(columns=["table"]))
        pd.testing.assert_frame_equal(views[-1].paragraphs, first.paragraphs)
        views[-1].paragraphs["mine"] = 1  # a copy: what a caller changes stays out of the kept bundle
        assert "mine" not in r.fulltext(ids).paragraphs.columns
        with retriever(tmp_path, world.endpoints, **TEXT_ONLY) as r:  # a new process, as it were: the ledger and the files
            again = r.fulltext(ids)
        assert world.served() == sent
    for name in ("paragraphs", "references", "tables", "figures"):
        pd.testing.assert_frame_equal(getattr(first, name), getattr(again, name))
    prefix = {"paragraphs": "", "references": "citing_", "tables": "", "figures": ""}
    for name, frame in [(name, getattr(again, name)) for name in prefix]:
        rows = frame[frame["input"].isin([EPMC_OA, EFETCH])]
        assert (len(rows) or name in ("tables", "figures")) and rows[prefix[name] + "year"].eq(2021).all(), name
        titles = dict(zip(rows["input"], rows[prefix[name] + "title"]))
        assert set(titles.values()) <= {"The paper PMC8164761", "The paper PMC8118396"}, name
        assert all(a[0]["family"] == "Lovelace" for a in rows[prefix[name] + "authors"]), name
        assert rows.loc[rows["input"] == EFETCH, prefix[name] + "retracted"].eq(True).all(), name
    assert again.paragraphs.loc[again.paragraphs["input"] == PDF_ONLY, "doi"].eq(PDF_ONLY).all()
    assert list(again.outcomes["input"]) == ids and again.outcomes.set_index("input").loc[EFETCH, "retracted"]


@pytest.mark.recorded
def test_read_of_an_out_dir_gives_one_paper_per_work_with_the_ledgers_record(tmp_path):
    """The out_dir of r.fulltext, plus a PDF of a paper that has JATS (``doi_….pdf`` beside ``pmcid_….xml``, one
    work by the ledger's key): read() gives one paper per work, the JATS one from its JATS, each with its record."""
    from paperfetch.fulltext import read

    with RecordWorld(base_ip=234) as world, retriever(tmp_path, world.endpoints, **TEXT_ONLY) as r:
        r.fulltext([EPMC_OA, EFETCH, PDF_ONLY, NOTHING])
    twin = tmp_path / "doi_10.1186_s13007-021-00757-y.pdf"
    twin.write_bytes(_pdf())
    with open_ledger(folder=tmp_path) as ledger:
        ledger.record("doi:" + EPMC_OA, status="downloaded", path=twin, bytes=twin.stat().st_size)
    local = read(tmp_path)
    papers = local.paragraphs.groupby("input").first()
    assert len(papers) == 3 and local.errors.empty
    assert set(papers["text_source"]) == {"jats", "pdf"} and twin.name not in papers.index
    assert papers.set_index("doi").loc[EPMC_OA, "title"] == "The paper PMC8164761"
    assert papers.set_index("doi").loc[EFETCH, "retracted"] and papers["year"].eq(2021).sum() == 2
    assert papers.set_index("doi").loc[PDF_ONLY, "license"] == "cc-by-nc"


@pytest.mark.recorded
def test_requests_per_paper_jats_against_pdf(world, tmp_path):
    with retriever(tmp_path / "a", world.endpoints, **TEXT_ONLY) as r:
        r.fulltext([EPMC_OA])
        jats = len(r.requests())
    with retriever(tmp_path / "b", world.endpoints, **TEXT_ONLY) as r:
        r.fulltext([PDF_ONLY])
        pdf = r.requests()
    assert jats == 2  # Europe PMC search, fullTextXML
    assert len(pdf) <= 6, pdf[["url", "source"]]  # search, ID converter, Unpaywall, robots.txt, the PDF (and no more)


@pytest.fixture
def cli_env(world, monkeypatch, tmp_path):
    monkeypatch.setenv("PAPERFETCH_CONFIG", str(tmp_path / "no-config.toml"))
    for name, url in world.endpoints.items():
        monkeypatch.setenv(f"PAPERFETCH_{name.upper()}_URL", url)
    yield world
    disable_logging()


@pytest.mark.recorded
def test_the_text_command_writes_the_paragraphs_and_exits_by_outcome(cli_env, tmp_path, capsys):
    out, report, outcomes, failed = tmp_path / "out", tmp_path / "p.csv", tmp_path / "o.jsonl", tmp_path / "failed.txt"
    common = ["--out", str(out), "--email", "t@uni.example", "--state", "memory", "--no-cache", "-q"]
    assert main(["text", EPMC_OA, "--report", str(report), *common]) == 0
    written = pd.read_csv(report)
    assert list(written.columns) == list(PARAGRAPH_COLUMNS) and set(written["text_source"]) == {"jats"}
    assert main(["text", EPMC_OA, NOTHING, "--outcomes", str(outcomes), "--failed", str(failed), *common]) == 1
    assert failed.read_text() == NOTHING + "\n"
    lines = [json.loads(line) for line in outcomes.read_text().splitlines()]
    assert [line["text_source"] for line in lines] == ["jats", None]
    assert main(["text", "--report", str(tmp_path / "p.txt"), EPMC_OA, *common]) == 2
    assert main(["text", *common]) == 2
    capsys.readouterr()
    assert main(["text", EPMC_OA, "--out", str(out), "--email", "t@uni.example", "--state", "memory"]) == 0
    shown = capsys.readouterr().out
    assert "jats" in shown and "1 paper: 1 already_downloaded; text of 1 (1 from JATS): " in shown


@pytest.mark.recorded
def test_a_jats_candidate_url_is_fetched_and_kept_when_no_pmcid_exists(world, tmp_path, monkeypatch):
    """bioRxiv's ``jatsxml`` link (a record's ``kind="jats"`` candidate, or its ``jats_url``) is a JATS copy of the
    paper, tried before its PDFs and kept under the text's ledger key."""
    from paperfetch.flow import BatchRun
    from paperfetch.sources import Candidate, Record

    preprint = "10.1101/2026.01.01.000001"
    url = world.hosts["pub"].url("/biorxiv/preprint.source.xml")
    world.hosts["pub"].routes["/biorxiv/preprint.source.xml"] = Reply(200, BODIES["PMC8118396"], {"Content-Type": "text/xml"})

    def lookup(self, name, ids):  # bioRxiv's answer, as its source reads it (sources/biorxiv.py)
        if name != "biorxiv":
            return {}
        return {ids[0].key: Record(doi=preprint, license="cc_by", candidates=[Candidate(url, "biorxiv", kind="jats")])}

    monkeypatch.setattr(BatchRun, "lookup", lookup)
    with retriever(tmp_path, world.endpoints, **TEXT_ONLY) as r:
        result = r.fulltext([preprint])
    assert _texts(result.paragraphs, preprint) == _expected_rows(BODIES["PMC8118396"])
    assert list(result.outcomes["source"]) == ["biorxiv"] and list(result.outcomes["text_source"]) == ["jats"]
    assert world.hosts["pub"].hits("/biorxiv/preprint.source.xml") == 1 and not list(tmp_path.glob("*.pdf"))


class PageWorld(World):
    """PDF_ONLY also has an open-access PMCID, whose ``fullTextXML`` is a sign-in page and efetch has no article."""

    def _epmc(self, request: Request) -> Reply:
        if request.path.endswith("/PMC1000003/fullTextXML"):
            return Reply(200, b"<html><body>sign in</body></html>", {"Content-Type": "text/html"})
        return super()._epmc(request)


def test_a_jats_copy_that_is_no_article_is_a_failed_copy_and_the_pdf_gives_the_text(tmp_path):
    with PageWorld(base_ip=238) as world:
        world.epmc[PDF_ONLY] = ("PMC1000003", "Y")
        with retriever(tmp_path, world.endpoints, **TEXT_ONLY) as r:
            text = r.fulltext([PDF_ONLY])
        assert world.hosts["epmc"].hits("/europepmc/webservices/rest/PMC1000003/fullTextXML") == 1
    row = text.outcomes.iloc[0]
    assert (row["status"], row["text_source"]) == ("downloaded", "pdf") and Path(row["text_path"]).suffix == ".pdf"
    assert list(text.paragraphs["text"])[-3:] == PDF_PARAGRAPHS and not list(tmp_path.glob("*.xml"))


def test_a_pdf_already_in_out_dir_is_read_not_downloaded_again(world, tmp_path):
    with retriever(tmp_path, world.endpoints, **TEXT_ONLY) as r:
        downloaded = r.download([PDF_ONLY])
        assert list(downloaded["status"]) == ["downloaded"]
        text = r.fulltext([PDF_ONLY])
        paragraphs, outcomes = text.paragraphs, text.outcomes
    assert world.hosts["pub"].hits("/files/pdf-only.pdf") == 1
    assert list(paragraphs["text"])[-3:] == PDF_PARAGRAPHS
    assert list(outcomes["status"]) == ["already_downloaded"] and outcomes["text_path"].item() == downloaded["path"].item()


@pytest.mark.recorded
def test_a_pdf_already_in_out_dir_gives_way_to_the_papers_jats(world, tmp_path):
    world.epmc[PDF_ONLY] = ("PMC8164761", "Y")
    with retriever(tmp_path, world.endpoints, **TEXT_ONLY) as r:
        assert list(r.download([PDF_ONLY])["status"]) == ["downloaded"]
        outcomes = r.fulltext([PDF_ONLY]).outcomes
    assert list(outcomes["text_source"]) == ["jats"] and list(outcomes["source"]) == ["europepmc_fulltext"]
    assert world.hosts["pub"].hits("/files/pdf-only.pdf") == 1


# ---------------------------------------------------------------------------- the recorded answers, replayed
@pytest.mark.parametrize("pmcid", ["PMC8164761", "PMC8118396"])
def test_the_recorded_fulltextxml_answer_replays_through_the_source_and_gives_every_p(pmcid):
    """The cassette holds Europe PMC's real fullTextXML answer; the real transport (fake clock) replays it
    through the source, and every <p> of abstract and body comes out as one row, in document order."""
    from paperfetch.fulltext.endpoints import EuropePMCFullTextSource
    from paperfetch.ids import Identifier
    from tests.test_sources import IDENTIFICATION, SessionFetcher, replay

    source = EuropePMCFullTextSource(identification=IDENTIFICATION)
    ident = Identifier.from_key(f"pmcid:{pmcid}")
    fetcher = SessionFetcher()
    with replay.use_cassette(f"europepmc/fulltextxml_{pmcid}.yaml") as cassette:
        (spec,) = source.requests_for([ident])
        url, params = source.url_for(spec)
        body = fetcher.fetch(url, params=params or None).content
        assert cassette.all_played
    (article, xml), = source.articles(body, spec).values()
    assert xml == body and article.pmcid == pmcid
    rows = [(p.section, p.text) for p in article.paragraphs]
    assert rows == _expected_rows(body) and rows
    markup = re.compile(r"<[A-Za-z/!?]|&(#\d+|#x[0-9a-fA-F]+|[A-Za-z]+);")  # a tag or a character reference
    assert not [text for _, text in rows if markup.search(text)]  # "frequencies < 1.0 GHz" is text, not a tag
    assert article.license  # read from <permissions>
    assert fetcher.sent == [url]
