"""Is this the paper to use? Retraction signals, notices and preprint links read from the answers the sources
are asked anyway (paperfetch.integrity, paperfetch.sources.notices), their outcome columns and ``skip_retracted``.

No recorded answer carries a Retraction Watch entry: ``crossref/works_retraction_watch_notices.yaml`` and
``openalex/works_filter_four_dois_one_retracted.yaml`` are SYNTHETIC (cassettes/README.md), built on real
recorded records; the Europe PMC and PubMed notices below are SYNTHETIC edits of real recorded records too.
The correction of 10.1371/journal.pone.0033693 and the preprint links are real recordings.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pandas as pd
import pytest
import yaml

from paperfetch.cli.common import summary
from paperfetch.clock import FakeClock
from paperfetch.dashboard.render import render_counts_html
from paperfetch.http.client import HttpClient
from paperfetch.ids import Identifier
from paperfetch.integrity import looks_like_notice
from paperfetch.paper import updates_text as format_updates
from paperfetch.settings import load_settings
from paperfetch.sources import SOURCES
from paperfetch.sources.base import Update
from paperfetch.testing import Reply, cassette_vcr
from tests._fixtures import cassette as built_cassette
from tests._pdfwriter import Line, write_pdf
from tests._quick import retriever

REPO = Path(__file__).resolve().parents[1]
RETRACTED = "10.1038/srep16696"
NOTICE = "10.5555/retraction.srep16696"
CONCERN = "10.1073/pnas.1414271111"
OPENALEX_FOUR = ["10.7717/peerj.4375", "10.1038/hdy.2013.26", "10.1007/s00120-007-1345-2", "10.1371/notarealdoi"]
PAPER_TITLE = "Single-molecule FRET studies on alpha-synuclein oligomerization of Parkinson's disease genetically related mutants"


class Fetcher(HttpClient):
    """The real transport on a fake clock; ``sent`` lists every URL put on the wire."""

    def __init__(self) -> None:
        super().__init__(clock=FakeClock(), max_retries=0, verbosity=0)
        self.sent: list[str] = []
        self._session.hooks["response"].append(lambda r, *args, **kwargs: self.sent.append(r.request.url or ""))


def replayed(source_name: str, cassette: str, keys: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The records *source_name* reads for *keys* from *cassette*, and the URLs it sent."""
    fetcher = Fetcher()
    with cassette_vcr().use_cassette(str(built_cassette(cassette))) as tape:
        records = SOURCES[source_name]().lookup(fetcher, [Identifier.from_key(k) for k in keys])
        assert tape.all_played
    return records, fetcher.sent


def cassette_bodies(name: str) -> dict[str, dict[str, Any]]:
    """The JSON bodies of *name* by the request's decoded path."""
    doc = yaml.safe_load(built_cassette(name).read_text(encoding="utf-8"))
    return {unquote(i["request"]["uri"].split("?")[0].split("/", 3)[3]): json.loads(i["response"]["body"]["string"])
            for i in doc["interactions"]}


# ============================================================================ the signals, per source


def test_an_openalex_batch_page_with_one_retracted_work_marks_that_record_only():
    records, sent = replayed("openalex", "openalex/works_filter_four_dois_one_retracted.yaml",
                             [f"doi:{d}" for d in OPENALEX_FOUR])
    assert len(sent) == 1  # the batch page paperfetch asks anyway: no request of its own for the signal
    assert records["doi:10.1038/hdy.2013.26"].retracted is True
    assert records["doi:10.7717/peerj.4375"].retracted is False and records["doi:10.1007/s00120-007-1345-2"].retracted is False


def test_crossref_retraction_watch_entry_names_the_notice_its_date_and_source():
    records, _ = replayed("crossref", "crossref/works_retraction_watch_notices.yaml",
                          [f"doi:{RETRACTED}", f"doi:{NOTICE}", f"doi:{CONCERN}"])
    paper, notice, concern = records[f"doi:{RETRACTED}"], records[f"doi:{NOTICE}"], records[f"doi:{CONCERN}"]
    assert paper.retracted is True and paper.is_notice is None
    assert paper.updates == (Update("retraction", NOTICE, "2024-05-01", "retraction-watch"),)
    assert format_updates(paper.updates) == f"retraction {NOTICE} 2024-05-01 (retraction-watch)"
    # the notice itself: update-to names the paper it retracts; it is not retracted
    assert notice.is_notice is True and notice.notice_of == (RETRACTED,) and notice.retracted is False
    # an expression of concern (beside the real correction) is an update, not a retraction
    assert concern.retracted is False
    assert [u.kind for u in concern.updates] == ["correction", "expression_of_concern"]
    assert concern.updates[0] == Update("correction", "10.1073/pnas.1507001112", "2015-05-04", "publisher")


def test_a_recorded_crossref_correction_is_an_update_and_not_a_retraction():
    records, _ = replayed("crossref", "crossref/works_10.1371_journal.pone.0033693.yaml", ["doi:10.1371/journal.pone.0033693"])
    record = records["doi:10.1371/journal.pone.0033693"]
    assert record.retracted is False
    assert format_updates(record.updates) == "correction 10.1371/annotation/c76da2c1-ccb8-4797-94c1-359d3ceceeda 2012-05-08 (publisher)"


def test_preprint_links_from_biorxiv_published_and_crossref_is_preprint_of():
    preprint = "10.1101/2024.04.01.587366"
    biorxiv, _ = replayed("biorxiv", "biorxiv/details_two_dois.yaml", [f"doi:{preprint}", "doi:10.64898/2025.12.01.000001"])
    crossref, _ = replayed("crossref", "crossref/works_10.1101_2024.04.01.587366_biorxiv_preprint.yaml", [f"doi:{preprint}"])
    assert biorxiv[f"doi:{preprint}"].published_doi == crossref[f"doi:{preprint}"].published_doi == "10.1016/j.xgen.2025.100814"


def test_europepmc_and_pubmed_publication_types_and_comment_links():
    # SYNTHETIC: a real Europe PMC core record with a retraction's publication type and link added
    [body] = [json.loads(i["response"]["body"]["string"]) for i in
              yaml.safe_load(built_cassette("europepmc/search_core_four_ids.yaml").read_text())["interactions"][:1]]
    result = body["resultList"]["result"][0]
    result["pubTypeList"] = {"pubType": ["Journal Article", "Retracted Publication"]}
    result["commentCorrectionList"] = {"commentCorrection": [{"id": "38000001", "source": "MED", "type": "Retraction in"}]}
    europepmc = SOURCES["europepmc"]()
    [spec] = europepmc.requests_for([Identifier.from_key("doi:" + result["doi"].lower())])
    [record] = europepmc.parse(json.dumps(body).encode(), spec).values()
    assert record.retracted is True and record.updates == (Update("retraction", "PMID:38000001", None, "europepmc"),)
    # SYNTHETIC: a real PubmedArticle made a retraction notice of another PMID
    doc = yaml.safe_load(built_cassette("ncbi_eutils/efetch_pubmed_29915538.yaml").read_text())
    root = ET.fromstring(doc["interactions"][0]["response"]["body"]["string"].encode())
    article = root.find("PubmedArticle/MedlineCitation/Article")
    types = article.find("PublicationTypeList")
    ET.SubElement(types, "PublicationType").text = "Retraction of Publication"
    eutils = SOURCES["ncbi_eutils"]()
    [spec] = eutils.requests_for([Identifier.from_key("pmid:29915538")])
    [notice] = eutils.parse(ET.tostring(root), spec).values()
    assert notice.is_notice is True and notice.retracted is None


def test_the_first_page_of_a_notice_is_told_from_a_paper_about_retractions():
    assert looks_like_notice("A study of X", "Retraction Note: A study of X\nThe authors have retracted")
    assert looks_like_notice("A study of X", "body", ["Notice of Retraction"])
    assert not looks_like_notice("A study of X", "A study of X\nThis article has been retracted. Abstract")
    assert not looks_like_notice("A study of X", "RETRACTED: A study of X\nAbstract")  # Elsevier's label on the paper
    assert not looks_like_notice("Retraction: why journals retract", "Retraction: why journals retract\nAbstract")


def test_skip_retracted_is_a_setting_read_by_the_one_reader():
    assert load_settings({}, environ={}).skip_retracted is False
    assert load_settings({}, environ={"PAPERFETCH_SKIP_RETRACTED": "yes"}).skip_retracted is True
    assert load_settings({"skip_retracted": True}, environ={}).skip_retracted is True


# ============================================================================ a batch on loopback servers


def flag(value: Any) -> bool | None:
    """A boolean cell as Python sees it: True, False, or None for <NA>."""
    return None if pd.isna(value) else bool(value)


def _pdf(title: str) -> bytes:
    return write_pdf([[Line(72, 720, title, 16.0), Line(72, 690, "Abstract. The study is described in the text below."),
                       Line(72, 676, "Methods and results follow; the data are available on request.")]])


@pytest.fixture
def crossref_world(hosts):
    """Crossref on loopback answering the SYNTHETIC cassette's bodies, their PDF links on a loopback publisher
    (the notice's link is added here); the PDFs are written for the test."""
    bodies = cassette_bodies("crossref/works_retraction_watch_notices.yaml")
    pdfs = {"/srep16696.pdf": _pdf(PAPER_TITLE), "/notice.pdf": _pdf(f"Retraction Note: {PAPER_TITLE}")}
    publisher = hosts("127.0.0.61", {path: Reply(200, body, {"Content-Type": "application/pdf"}) for path, body in pdfs.items()})
    paper = bodies[f"works/{RETRACTED}"]["message"]
    paper["link"] = [{**link, "URL": publisher.url("/srep16696.pdf")} for link in paper["link"]]
    bodies[f"works/{NOTICE}"]["message"]["link"] = [{"URL": publisher.url("/notice.pdf"), "content-type": "application/pdf",
                                                     "content-version": "vor", "intended-application": "text-mining"}]

    def answer(request):  # noqa: ANN001, ANN202
        body = bodies.get(unquote(request.path).lstrip("/"))
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"}) if body else Reply(404, b"Resource not found.")

    crossref = hosts("127.0.0.62", {"*": answer})
    return crossref, publisher


def test_a_retracted_paper_is_downloaded_with_the_notice_in_its_reason_and_the_notice_as_what_it_is(crossref_world, tmp_path):
    crossref, publisher = crossref_world
    with retriever(tmp_path, {"crossref": crossref.base_url}, sources=["crossref"], respect_robots_txt=False, cache=False) as r:
        frame = r.download([RETRACTED, NOTICE, CONCERN])
        snapshot = r.run_snapshot()
    rows = frame.set_index("input")
    paper, notice, concern = rows.loc[RETRACTED], rows.loc[NOTICE], rows.loc[CONCERN]
    assert paper["status"] == "downloaded" and flag(paper["retracted"]) is True and paper["version"] == "published"
    assert paper["reason"] == f"retracted (notice {NOTICE}, 2024-05-01)"
    assert paper["updates"] == f"retraction {NOTICE} 2024-05-01 (retraction-watch)" and pd.isna(paper["is_notice"])
    assert notice["status"] == "downloaded" and flag(notice["is_notice"]) is True and flag(notice["retracted"]) is False
    assert notice["reason"] == f"a notice about {RETRACTED}, not a paper"
    assert Path(notice["path"]) != Path(paper["path"]) and "retraction.srep16696" in Path(notice["path"]).name
    assert flag(concern["retracted"]) is False and "expression_of_concern" in concern["updates"]
    # one Crossref request per DOI, the one paperfetch sends anyway; each PDF fetched once
    assert sorted(unquote(p) for _, p in crossref.log) == sorted(f"/works/{d}" for d in (RETRACTED, NOTICE, CONCERN))
    assert sorted(p for _, p in publisher.log) == ["/notice.pdf", "/srep16696.pdf"]
    # counted and shown: the dashboard's counts and the CLI's summary line
    assert snapshot.met == {"retracted": 1, "notices": 1} and snapshot.summary().endswith("; met 1 retracted paper, 1 notice")
    assert "met 1 retracted paper, 1 notice" in render_counts_html(snapshot)
    assert summary(frame).endswith("; met 1 retracted paper, 1 notice")


def test_skip_retracted_ends_the_paper_retracted_without_a_pdf_request_and_a_rerun_keeps_it(crossref_world, tmp_path):
    crossref, publisher = crossref_world
    with retriever(tmp_path, {"crossref": crossref.base_url}, sources=["crossref"], respect_robots_txt=False, cache=False,
                   skip_retracted=True) as r:
        first = r.download([RETRACTED, NOTICE]).set_index("input")
        asked = len(crossref.log)
        again = r.download([RETRACTED]).set_index("input")
    assert first.loc[RETRACTED, "status"] == "retracted" and pd.isna(first.loc[RETRACTED, "path"])
    assert first.loc[RETRACTED, "reason"] == f"retracted (notice {NOTICE}, 2024-05-01)"
    assert first.loc[NOTICE, "status"] == "downloaded"  # a notice is not retracted: it is fetched
    assert [p for _, p in publisher.log] == ["/notice.pdf"]  # no request for the retracted paper's PDF
    # final: the re-run answers from the ledger, asking nobody, and still says why
    assert again.loc[RETRACTED, "status"] == "retracted" and flag(again.loc[RETRACTED, "retracted"]) is True
    assert len(crossref.log) == asked and again.loc[RETRACTED, "attempts"] == 0
    # final only while the setting is on: without it, a re-run fetches the paper
    with retriever(tmp_path, {"crossref": crossref.base_url}, sources=["crossref"], respect_robots_txt=False, cache=False) as r:
        assert r.download([RETRACTED]).loc[0, "status"] == "downloaded"


def test_a_notice_served_for_the_paper_is_a_wrong_article(crossref_world, tmp_path):
    crossref, publisher = crossref_world
    publisher.routes["/srep16696.pdf"] = Reply(200, _pdf(f"Retraction Note: {PAPER_TITLE}"), {"Content-Type": "application/pdf"})
    with retriever(tmp_path, {"crossref": crossref.base_url}, sources=["crossref"], respect_robots_txt=False, cache=False) as r:
        row = r.download([RETRACTED]).iloc[0]
    assert row["status"] == "wrong_article" and "retraction notice" in row["error"] and pd.isna(row["path"])


def test_openalex_is_retracted_reaches_the_row_and_skip_retracted_sends_no_pdf_request(hosts, tmp_path):
    publisher = hosts("127.0.0.63", {"*": Reply(200, _pdf("An open paper"), {"Content-Type": "application/pdf"})})
    [body] = cassette_bodies("openalex/works_filter_four_dois_one_retracted.yaml").values()
    for work in body["results"]:  # every copy on the loopback publisher, one path per work
        slug = work["doi"].rsplit("/", 1)[-1]
        for location in [work.get("best_oa_location") or {}, work.get("primary_location") or {}, *work.get("locations", [])]:
            for key in ("pdf_url", "landing_page_url"):
                if location.get(key):
                    location[key] = publisher.url(f"/{slug}.pdf")
        if work.get("open_access", {}).get("oa_url"):
            work["open_access"]["oa_url"] = publisher.url(f"/{slug}.pdf")
    openalex = hosts("127.0.0.64", {"/works": Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})})
    rows = {}
    for skip in (False, True):
        with retriever(tmp_path / str(skip), {"openalex": openalex.base_url}, sources=["openalex"], respect_robots_txt=False,
                       cache=False, skip_retracted=skip) as r:
            rows[skip] = r.download(OPENALEX_FOUR).set_index("input")
    kept, skipped = rows[False], rows[True]
    assert flag(kept.loc["10.1038/hdy.2013.26", "retracted"]) is True and kept.loc["10.1038/hdy.2013.26", "status"] == "downloaded"
    assert kept.loc["10.1038/hdy.2013.26", "reason"] == "retracted (no notice named)"
    assert flag(kept.loc["10.7717/peerj.4375", "retracted"]) is False and pd.isna(kept.loc["10.1371/notarealdoi", "retracted"])
    assert skipped.loc["10.1038/hdy.2013.26", "status"] == "retracted"
    assert [p for _, p in openalex.log] == ["/works", "/works"]  # one batch page per run, nothing more
    assert [p for _, p in publisher.log].count("/hdy.2013.26.pdf") == 1  # the first run's download only


def test_each_work_is_fetched_once_and_every_input_keeps_its_row(crossref_world, hosts, tmp_path):
    """The same DOI in another case and as a doi.org URL, and a PMID the ID converter maps to it (the
    converter's answer is SYNTHETIC, in its 2025 shape): one download, one row per input, ``same_work_as`` set."""
    crossref, publisher = crossref_world
    converted = {"status": "ok", "records": [{"requested-id": "26568415", "pmid": 26568415, "doi": RETRACTED.upper()}]}
    ncbi = hosts("127.0.0.65", {"/tools/idconv/api/v1/articles/": Reply(200, json.dumps(converted).encode(),
                                                                        {"Content-Type": "application/json"})})
    inputs = [RETRACTED, f"https://doi.org/{RETRACTED.upper()}", "PMID:26568415", NOTICE]
    endpoints = {"crossref": crossref.base_url, "ncbi_idconv": ncbi.base_url}
    with retriever(tmp_path, endpoints, sources=["crossref"], respect_robots_txt=False, cache=False) as r:
        rows = r.download(inputs)
        again = r.download(inputs)
    assert list(rows["input"]) == inputs and list(rows["status"]) == ["downloaded"] * 4
    assert pd.isna(rows.loc[0, "same_work_as"]) and list(rows["same_work_as"][1:3]) == [RETRACTED, RETRACTED]
    assert pd.isna(rows.loc[3, "same_work_as"])  # the notice is a work of its own
    assert rows.loc[0, "path"] == rows.loc[1, "path"] == rows.loc[2, "path"] != rows.loc[3, "path"]
    assert rows.loc[2, "id_type"] == "pmid" and rows.loc[2, "pmid"] == "26568415" and flag(rows.loc[2, "retracted"]) is True
    assert rows.loc[2, "title"] == rows.loc[0, "title"] == PAPER_TITLE.replace("'", "’")
    assert sorted(p for _, p in publisher.log) == ["/notice.pdf", "/srep16696.pdf"]  # each work downloaded once
    assert sorted(unquote(p) for _, p in crossref.log) == sorted(f"/works/{d}" for d in (RETRACTED, NOTICE))
    # a re-run reuses every file, the shared one included, and asks nobody
    assert list(again["status"]) == ["already_downloaded"] * 4 and again.loc[2, "same_work_as"] == RETRACTED
    assert again.loc[2, "title"] == rows.loc[0, "title"] and flag(again.loc[2, "retracted"]) is True
    assert len(publisher.log) == 2 and len(crossref.log) == 2


# ============================================================================ prefer="published"
PREPRINT = "10.1101/2024.04.01.587366"
JOURNAL = "10.1016/j.xgen.2025.100814"


@pytest.fixture
def preprint_world(hosts):
    """bioRxiv answering its SYNTHETIC details cassette (published = the journal DOI) and serving the preprint's
    PDF; Unpaywall answering its recorded 2025 record of the journal version, whose published location is given
    a PDF on a loopback publisher here (recorded: a landing page only), and 404 for the preprint."""
    details = cassette_bodies("biorxiv/details_two_dois.yaml")
    [vor] = [b for path, b in cassette_bodies("unpaywall/v2_2025_two_dois.yaml").items() if JOURNAL in path]
    publisher = hosts("127.0.0.66", {"/vor.pdf": Reply(200, _pdf(details[f"details/biorxiv/{PREPRINT}"]["collection"][0]["title"]),
                                                       {"Content-Type": "application/pdf"})})
    for location in [vor["best_oa_location"], *vor["oa_locations"]]:
        if location["version"] == "publishedVersion":
            location["url_for_pdf"] = publisher.url("/vor.pdf")

    def biorxiv_answer(request):  # noqa: ANN001, ANN202
        path = unquote(request.path).lstrip("/")
        if path.startswith("content/"):
            return Reply(200, _pdf("the preprint"), {"Content-Type": "application/pdf"})
        body = details.get(path, {"messages": [{"status": "no posts found"}], "collection": []})
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    def unpaywall_answer(request):  # noqa: ANN001, ANN202
        if unquote(request.path) == f"/v2/{JOURNAL}":
            return Reply(200, json.dumps(vor).encode(), {"Content-Type": "application/json"})
        return Reply(404, b"<!doctype html><title>404 Not Found</title>", {"Content-Type": "text/html"})

    biorxiv, unpaywall = hosts("127.0.0.67", {"*": biorxiv_answer}), hosts("127.0.0.68", {"*": unpaywall_answer})
    return {"biorxiv": biorxiv.base_url, "unpaywall": unpaywall.base_url}, biorxiv, unpaywall, publisher


@pytest.mark.parametrize("prefer", ["version", "published"])
def test_prefer_published_fetches_a_preprints_open_version_of_record(preprint_world, tmp_path, prefer):
    endpoints, biorxiv, unpaywall, publisher = preprint_world
    with retriever(tmp_path, endpoints, sources=["unpaywall", "biorxiv"], respect_robots_txt=False, cache=False,
                   prefer=prefer) as r:
        row = r.download([PREPRINT]).iloc[0]
    assert row["input"] == PREPRINT and row["status"] == "downloaded" and row["preprint_of"] == JOURNAL
    pdfs = [p for _, p in biorxiv.log if p.startswith("/content/")]
    if prefer == "version":  # the default: the preprint's own copy, and nobody asked about the journal version
        assert row["version"] == "submitted" and len(pdfs) == 1 and not publisher.log and pd.isna(row["reason"])
        assert [unquote(p) for _, p in unpaywall.log] == [f"/v2/{PREPRINT}"]
    else:
        assert row["version"] == "published" and row["url"].endswith("/vor.pdf") and pdfs == []
        assert row["reason"] == f'the version of record {JOURNAL} (prefer="published")'
        assert [unquote(p) for _, p in unpaywall.log] == [f"/v2/{PREPRINT}", f"/v2/{JOURNAL}"]
        assert "2024.04.01.587366" in Path(row["path"]).name  # saved under the input's name


def test_a_preprint_given_with_its_journal_version_is_fetched_once(preprint_world, tmp_path):
    """The preprint's link (bioRxiv's ``published``, SYNTHETIC) names the other input: one file, two rows."""
    endpoints, biorxiv, unpaywall, publisher = preprint_world
    with retriever(tmp_path, endpoints, sources=["unpaywall", "biorxiv"], respect_robots_txt=False, cache=False) as r:
        rows = r.download([PREPRINT, JOURNAL]).set_index("input")
    assert list(rows["status"]) == ["downloaded", "downloaded"]
    assert rows.loc[PREPRINT, "same_work_as"] == JOURNAL and pd.isna(rows.loc[JOURNAL, "same_work_as"])
    assert rows.loc[PREPRINT, "path"] == rows.loc[JOURNAL, "path"] and rows.loc[PREPRINT, "preprint_of"] == JOURNAL
    assert [p for _, p in publisher.log] == ["/vor.pdf"] and not [p for _, p in biorxiv.log if p.startswith("/content/")]


def test_a_preprint_whose_journal_version_has_no_open_copy_fetches_its_own(preprint_world, tmp_path):
    endpoints, biorxiv, unpaywall, publisher = preprint_world
    publisher.routes["/vor.pdf"] = Reply(404, b"not found")
    with retriever(tmp_path, endpoints, sources=["unpaywall", "biorxiv"], respect_robots_txt=False, cache=False) as r:
        rows = r.download([PREPRINT, JOURNAL]).set_index("input")
    assert rows.loc[JOURNAL, "status"] == "http_error" and rows.loc[PREPRINT, "status"] == "downloaded"
    assert pd.isna(rows.loc[PREPRINT, "same_work_as"]) and rows.loc[PREPRINT, "version"] == "submitted"
    assert len([p for _, p in biorxiv.log if p.startswith("/content/")]) == 1
