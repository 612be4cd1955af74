"""PubMed search, references and citations, the metadata cache, the title check.

1. Cassettes built from the real recorded bodies (``cassettes/build_cassettes.py``), replayed through the
   real transport on a fake clock: ESearch (with and without WebEnv, zero results), EFetch, NCBI's 414,
   OpenAlex id batches and ``cites:`` lists paged to the end, work lookups, Crossref reference lists,
   a work OpenAlex does not know.
2. The demo world on loopback: ``search_pubmed`` → ``download_frame`` end to end, the title check
   (right PDFs score high, the wrong one is ``wrong_article``), the cache measured from the servers' logs.
3. The cache and the title matcher as units (TTL on an injected clock, no secret in the file).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pandas as pd
import pytest
import yaml

from paperfetch import FakeClock, HttpClient
from paperfetch.cache import CachedFetcher, MetadataCache, cache_key
from paperfetch.config import Identification
from paperfetch.demo import DemoWorld, fake_pdf
from paperfetch.demo.research import (
    CITED_DOI,
    EPMC_CITED,
    SEARCH_QUERY,
    WRONG_PDF_DOI,
    WRONG_PDF_SHOWS,
    science_papers,
    text_pdf,
)
from paperfetch.errors import InvalidIdentifier, NotFoundError, RateLimited, ServiceError
from paperfetch.ids import Identifier
from paperfetch.outcomes import COLUMNS, Status
from paperfetch.sources import CrossrefSource, EuropePMCSource, NCBIEutilsSource, OpenAlexSource
from paperfetch.sources.pubmed import EFETCH_BATCH, PubMedSearch, SearchResult, efetch_params
from paperfetch.sources.references import Link, LinkFinder, merge_links
from paperfetch.testing import Reply
from paperfetch.titlematch import judge, normalise, read_first_pages, title_score
from tests._fixtures import cassette as built_cassette
from tests._fixtures import replayer
from tests._quick import retriever

REPO = Path(__file__).resolve().parents[1]
replay = replayer()
IDENTIFICATION = Identification(email="you@uni.example", openalex_api_key="oa-secret-key", ncbi_api_key="ncbi-secret-key")
#: The query the recorded PubMed search cassette answers (the demo world answers SEARCH_QUERY).
RECORDED_QUERY = "science[journal] AND breast cancer AND 2008[pdat]"
RECORDED_PMIDS = ["19008416", "18927361", "18787170", "18487186", "18239126", "18239125"]
#: The demo world's six PubMed hits (paperfetch/demo/data, synthetic).
DEMO_PMIDS = [f"9000010{n}" for n in range(1, 7)]
DEMO_EPMC_FIRST = "90000401"  # the first of the 23 citations the demo's Europe PMC gives
ident = Identifier.from_key


class Transport(HttpClient):
    """The real transport on a fake clock (pacing never waits in real time); ``sent`` lists every URL sent."""

    def __init__(self) -> None:
        super().__init__(clock=FakeClock(), max_retries=0, verbosity=0)
        self.sent: list[str] = []
        self._session.hooks["response"].append(lambda r, *args, **kwargs: self.sent.append(r.request.url or ""))


def pubmed() -> PubMedSearch:
    return PubMedSearch(NCBIEutilsSource(identification=IDENTIFICATION))


# ============================================================================ 1. cassettes


def test_pubmed_search_returns_the_recorded_pmids_in_order_with_their_records() -> None:
    http = Transport()
    with replay.use_cassette("ncbi_eutils/pubmed_search_science_breast_cancer_2008.yaml") as cassette:
        hits = pubmed().search(http, RECORDED_QUERY, max_results=20)
        assert cassette.all_played
    assert [h.pmid for h in hits] == RECORDED_PMIDS
    first = hits[0]
    assert first.doi == "10.1126/science.1165395" and first.pmcid == "PMC2684823" and first.year == 2008
    assert first.title.startswith("Genomic loss of microRNA-101") and first.journal == "Science (New York, N.Y.)"
    assert first.authors.startswith("Varambally S; Cao Q") and "EZH2" in first.abstract
    esearch = dict(parse_qsl(urlsplit(http.sent[0]).query))
    assert esearch["usehistory"] == "y" and esearch["tool"] and esearch["email"] == "you@uni.example"
    assert esearch["api_key"] == "ncbi-secret-key"  # sent, and filtered out of the cassette:
    assert "secret" not in built_cassette("ncbi_eutils/pubmed_search_science_breast_cancer_2008.yaml").read_text()


def test_esearch_on_the_history_server_gives_webenv_and_efetch_pages_through_it() -> None:
    http = Transport()
    with replay.use_cassette("ncbi_eutils/esearch_usehistory_webenv.yaml") as cassette:
        result = pubmed().esearch(http, "10.1016/j.nepr.2023.103548", max_results=20)
        assert cassette.all_played
    assert (result.count, result.pmids, result.webenv, result.query_key) == (1, ["36708638"], "MCID_64784b5ab65e3b2b2253cd3a", "1")
    params = efetch_params(result, 0)
    assert params["WebEnv"] == result.webenv and params["query_key"] == "1" and "id" not in params


def test_efetch_batches_are_at_most_200_ids_whether_by_history_or_by_id_list() -> None:
    pmids = [str(10_000_000 + i) for i in range(450)]
    by_history = SearchResult(count=450, pmids=pmids, webenv="W", query_key="1")
    pages = [efetch_params(by_history, start) for start in range(0, 450, EFETCH_BATCH)]
    assert [(p["retstart"], p["retmax"]) for p in pages] == [("0", "200"), ("200", "200"), ("400", "50")]
    by_ids = SearchResult(count=450, pmids=pmids)
    lists = [efetch_params(by_ids, start)["id"].split(",") for start in range(0, 450, EFETCH_BATCH)]
    assert [len(ids) for ids in lists] == [200, 200, 50] and sum(lists, []) == pmids


def test_esearch_with_zero_results_is_an_empty_search_after_one_request() -> None:
    http = Transport()
    with replay.use_cassette("ncbi_eutils/esearch_zero_results.yaml") as cassette:
        result = pubmed().esearch(http, "abcXYZ", max_results=20)
        assert cassette.all_played
    assert result.count == 0 and result.pmids == [] and "No items found." in result.messages
    with replay.use_cassette("ncbi_eutils/esearch_zero_results.yaml"):
        assert pubmed().search(Transport(), "abcXYZ", max_results=20) == []


def test_ncbi_414_is_a_typed_error_that_says_what_to_do(monkeypatch) -> None:
    from paperfetch.sources import pubmed as pubmed_module

    # _get posts a URL this long; a server that refuses a shorter one still gets a clear error
    monkeypatch.setattr(pubmed_module, "MAX_GET_URL", 100_000)
    doc = yaml.safe_load(built_cassette("ncbi_eutils/esummary_414_request_uri_too_long.yaml").read_text())
    parts = urlsplit(doc["interactions"][0]["request"]["uri"])
    with replay.use_cassette("ncbi_eutils/esummary_414_request_uri_too_long.yaml"):
        with pytest.raises(ServiceError, match="414.*at most 200") as caught:
            pubmed()._get(Transport(), parts.path, dict(parse_qsl(parts.query)))
    assert caught.value.status_code == 414


class Sent(Transport):
    """The transport, also keeping ``(method, url, body)`` of every request that went out."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str, str, str]] = []

        def keep(response, *args, **kwargs):  # noqa: ANN001,ANN002,ANN003,ANN202
            body = response.request.body or ""
            self.requests.append((response.request.method, response.request.url,
                                  body.decode() if isinstance(body, bytes) else body))

        self._session.hooks["response"].append(keep)


def test_efetch_by_a_long_id_list_is_a_post_replayed_from_the_real_recorded_post(monkeypatch) -> None:
    from paperfetch.sources import pubmed as pubmed_module

    monkeypatch.setattr(pubmed_module, "MAX_GET_URL", 100)  # the six recorded ids make a 'long' URL
    http = Sent()
    with replay.use_cassette("ncbi_eutils/efetch_post_six_pmids.yaml") as cassette:
        hits = pubmed().efetch(http, SearchResult(count=6, pmids=RECORDED_PMIDS))
        assert cassette.all_played
    assert [h.pmid for h in hits] == RECORDED_PMIDS and hits[0].doi == "10.1126/science.1165395"
    [(method, url, body)] = http.requests
    assert method == "POST" and urlsplit(url).query == ""  # everything, identity included, in the form body
    form = dict(parse_qsl(body))
    assert form["id"].split(",") == RECORDED_PMIDS and form["db"] == "pubmed" and form["email"] == "you@uni.example"
    recorded = yaml.safe_load(built_cassette("ncbi_eutils/efetch_post_six_pmids.yaml").read_text())["interactions"][0]
    assert recorded["request"]["method"] == "POST" and "secret" not in str(recorded) and "example.com" not in str(recorded)


def _efetch_xml(pmids: list[str]) -> bytes:
    articles = "".join(f"<PubmedArticle><MedlineCitation><PMID>{p}</PMID><Article><ArticleTitle>Paper {p}</ArticleTitle>"
                       "</Article></MedlineCitation></PubmedArticle>" for p in pmids)
    return f"<?xml version='1.0'?><PubmedArticleSet>{articles}</PubmedArticleSet>".encode()


@pytest.fixture()
def eutils_414():
    """A loopback E-utilities that answers long GETs as NCBI does (its real 414 body) and serves EFetch by GET or POST."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    doc = yaml.safe_load(built_cassette("ncbi_eutils/esummary_414_request_uri_too_long.yaml").read_text())
    too_long = doc["interactions"][0]["response"]["body"]["string"].encode()
    seen: list[tuple[str, int, list[str]]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            if len(self.path) > 2000:
                seen.append(("GET", len(self.path), []))
                return self._answer(414, too_long, "text/html; charset=utf-8")
            ids = dict(parse_qsl(urlsplit(self.path).query)).get("id", "").split(",")
            seen.append(("GET", len(self.path), ids))
            self._answer(200, _efetch_xml(ids), "text/xml; charset=UTF-8")

        def do_POST(self) -> None:  # noqa: N802
            form = dict(parse_qsl(self.rfile.read(int(self.headers["Content-Length"])).decode()))
            ids = form.get("id", "").split(",")
            seen.append(("POST", len(self.path), ids))
            self._answer(200, _efetch_xml(ids), "text/xml; charset=UTF-8")

        def log_message(self, *args) -> None:  # noqa: ANN002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()
    thread.join()


def test_a_300_id_lookup_posts_the_long_batch_and_never_sends_a_long_get(eutils_414) -> None:
    base, seen = eutils_414
    pmids = [str(30_000_000 + i) for i in range(300)]
    search = PubMedSearch(NCBIEutilsSource(base_url=base, identification=IDENTIFICATION))
    hits = search.efetch(Transport(), SearchResult(count=300, pmids=pmids))
    assert [h.pmid for h in hits] == pmids and hits[299].title == "Paper 30000299"
    assert [(method, len(ids)) for method, _, ids in seen] == [("POST", 200), ("GET", 100)]
    assert all(length <= 2000 for method, length, _ in seen if method == "GET")
    # the same 200 ids as a GET are what the server refuses, with NCBI's own answer
    with pytest.raises(ServiceError, match="414") as caught:
        Transport().fetch(base + "/entrez/eutils/efetch.fcgi", params={"id": ",".join(pmids[:200])})
    assert caught.value.status_code == 414 and b"Submitted URI too large" in caught.value.response.content


def test_post_is_paced_and_held_like_get_and_only_for_reads() -> None:
    from paperfetch.errors import ConfigurationError as ConfigError
    from paperfetch.testing import ScriptedAdapter

    clock = FakeClock()
    adapter = ScriptedAdapter({"/efetch": [Reply(200, b"ok"), Reply(200, b"ok"), Reply(429, b"", {"Retry-After": "3600"}),
                                           Reply(200, b"ok")]}, clock=clock)
    http = HttpClient(clock=clock, max_retries=1, verbosity=0, host_intervals={"127.0.0.9": 2.0})
    http.session.mount("http://", adapter)
    for _ in range(2):
        assert http.fetch("http://127.0.0.9/efetch", method="POST", data={"id": "1,2"}).content == b"ok"
    assert adapter.calls[1][0] - adapter.calls[0][0] >= 2.0  # paced at the host's interval, as a GET is
    with pytest.raises(RateLimited, match="asked for no requests"):
        http.fetch("http://127.0.0.9/efetch", method="POST", data={"id": "1,2"})
    assert len(adapter.calls) == 3  # the hour-long hold ends the call: no second POST
    with pytest.raises(RateLimited, match="no request sent"):  # the hold stands for the next POST (and GET) too
        http.fetch("http://127.0.0.9/efetch", method="POST", data={"id": "1,2"})
    assert len(adapter.calls) == 3
    with pytest.raises(ConfigError, match="POST for idempotent reads"):
        http.fetch("http://127.0.0.9/efetch", method="DELETE")
    with pytest.raises(ConfigError, match="method='POST'"):
        http.fetch("http://127.0.0.9/efetch", data={"id": "1"})


def test_openalex_id_batch_is_paged_to_the_end() -> None:
    http = Transport()
    finder = LinkFinder(openalex=OpenAlexSource(identification=IDENTIFICATION))
    with replay.use_cassette("openalex/works_filter_openalex_two_ids_paged.yaml") as cassette:
        links = finder._openalex_by_ids(http, ["W3045921891", "W3046863325"])
        assert cassette.all_played  # cursor=* then next_cursor, whose page is empty with next_cursor null
    assert {link.openalex_id: link.doi for link in links} == {
        "W3046863325": "10.1145/3383583.3398584", "W3045921891": "10.48550/arxiv.2007.14454"}
    assert len(http.sent) == 2


def test_citing_works_are_paged_until_an_empty_page() -> None:
    http = Transport()
    finder = LinkFinder(openalex=OpenAlexSource(identification=IDENTIFICATION))
    with replay.use_cassette("openalex/works_filter_cites_two_ids_paged.yaml") as cassette:
        links = finder._openalex_pages(http, {"filter": "cites:W3046863325|W3045921891"})
        assert cassette.all_played
    assert len(links) == 5 and links[0].doi == "10.36312/esaintika.v6i3.897" and links[0].year == 2022
    assert all(link.sources == ("openalex",) for link in links)


def test_crossref_reference_lists_become_links_by_doi() -> None:
    finder = LinkFinder(openalex=None, crossref=CrossrefSource(identification=IDENTIFICATION))
    with replay.use_cassette("openalex/links_two_works.yaml", allow_playback_repeats=True):
        pnas = finder.references(Transport(), ident("doi:10.1073/pnas.1414271111"))
        peroxidase = finder.references(Transport(), ident("doi:10.1023/a:1007154515475"))
    assert len(pnas) == 65 and pnas[0].doi == "10.1089/ten.2006.12.969"  # 69 references, 65 with a DOI
    assert len(peroxidase) == 37 and peroxidase[0].doi == "10.1016/s0010-8545(00)80316-1" and peroxidase[0].year == 1976
    assert all(link.sources == ("crossref",) for link in pnas + peroxidase)


def test_openalex_work_lookup_lists_its_referenced_works() -> None:
    finder = LinkFinder(openalex=OpenAlexSource(identification=IDENTIFICATION))
    with replay.use_cassette("openalex/links_two_works.yaml", allow_playback_repeats=True):
        work = finder._openalex_work(Transport(), ident("doi:10.1073/pnas.1414271111"))
    assert work["id"] == "https://openalex.org/W2109415576" and len(work["referenced_works"]) == 73


def test_a_work_no_service_knows_has_no_references_and_no_citations() -> None:
    finder = LinkFinder(openalex=OpenAlexSource(identification=IDENTIFICATION))
    unknown = ident("doi:10.1046/j.1365-2699.2003.00795")
    with replay.use_cassette("openalex/works_doi_not_in_openalex_404.yaml", allow_playback_repeats=True):
        assert finder.references(Transport(), unknown) == []
        assert finder.citations(Transport(), unknown) == []
    crossref_only = LinkFinder(openalex=None, crossref=CrossrefSource(identification=IDENTIFICATION))
    with replay.use_cassette("crossref/works_404_notarealdoi.yaml"):
        assert crossref_only.references(Transport(), ident("doi:10.1371/notarealdoi")) == []


EPMC_FIRST = ("19749171", "The transient receptor potential vanilloid-1 channel in thermoregulation: a thermosensor it is not.", 2009)


def test_europepmc_citations_of_a_pmid_from_the_real_recorded_answer() -> None:
    http = Transport()
    finder = LinkFinder(openalex=None, europepmc=EuropePMCSource(identification=IDENTIFICATION))
    with replay.use_cassette("europepmc/citations_MED_17183631.yaml") as cassette:
        links = finder.citations(http, ident("pmid:17183631"))
        assert cassette.all_played
    assert len(links) == 23 and len(http.sent) == 1  # hitCount 23 reached on page 1: no second request
    assert (links[0].pmid, links[0].title, links[0].year) == EPMC_FIRST
    assert all(link.sources == ("europepmc",) and link.pmid for link in links)
    query = dict(parse_qsl(urlsplit(http.sent[0]).query))
    assert urlsplit(http.sent[0]).path.endswith("/MED/17183631/citations") and query["format"] == "json"


def test_europepmc_citations_are_paged_until_hitcount(monkeypatch) -> None:
    from paperfetch.sources import references as references_module

    monkeypatch.setattr(references_module, "EUROPEPMC_PAGE_SIZE", 12)
    http = Transport()
    finder = LinkFinder(openalex=None, europepmc=EuropePMCSource(identification=IDENTIFICATION))
    with replay.use_cassette("europepmc/citations_MED_17183631_paged.yaml") as cassette:
        links = finder.citations(http, ident("pmid:17183631"))
        assert cassette.all_played
    assert len(links) == 23 and [dict(parse_qsl(urlsplit(u).query))["page"] for u in http.sent] == ["1", "2"]
    assert len({link.pmid for link in links}) == 23


def test_europepmc_with_no_citations_and_a_doi_without_pmid() -> None:
    http = Transport()
    finder = LinkFinder(openalex=None, europepmc=EuropePMCSource(identification=IDENTIFICATION))
    with replay.use_cassette("europepmc/citations_MED_20098740_none.yaml") as cassette:
        assert finder.citations(http, ident("pmid:20098740")) == []
        assert cassette.all_played
    assert finder.citations(http, ident("doi:10.1/unknown")) == [] and len(http.sent) == 1  # no PMID: not asked


def test_openalex_and_europepmc_rows_merge_by_pmid_naming_both() -> None:
    from paperfetch.sources.references import _europepmc_link

    openalex = Link(doi="10.1124/pr.109.001073", pmid="19749171", openalex_id="W1", title="TRPV1", year=2009, sources=("openalex",))
    epmc = _europepmc_link({"id": "19749171", "source": "MED", "title": EPMC_FIRST[1], "pubYear": 2009})
    preprint = _europepmc_link({"id": "PPR123", "source": "PPR", "title": "A preprint", "pubYear": "2020"})
    rows = [link.row() for link in merge_links([openalex, epmc, preprint, preprint])]
    assert rows == [
        {"doi": "10.1124/pr.109.001073", "pmid": "19749171", "openalex_id": "W1", "title": "TRPV1", "year": 2009,
         "source_of_link": "europepmc;openalex"},
        {"doi": None, "pmid": None, "openalex_id": None, "title": "A preprint", "year": 2020, "source_of_link": "europepmc"},
    ]


def test_links_are_deduplicated_by_doi_naming_every_agreeing_source() -> None:
    merged = merge_links([
        Link(doi="10.1/a", openalex_id="W1", title="A", sources=("openalex",)),
        Link(doi="10.1/b", sources=("crossref",)),
        Link(doi="10.1/a", year=2001, sources=("crossref",)),
        Link(openalex_id="W9", sources=("openalex",)),
    ])
    rows = [link.row() for link in merged]
    assert [r["doi"] for r in rows] == ["10.1/a", "10.1/b", None]
    assert rows[0] == {"doi": "10.1/a", "pmid": None, "openalex_id": "W1", "title": "A", "year": 2001,
                       "source_of_link": "crossref;openalex"}


# ============================================================================ 2. the demo world


@pytest.fixture(scope="module")
def world():
    """One demo world for the module (the tests compare its servers' logs before and after, never in total)."""
    with DemoWorld(base_ip=140) as w:
        yield w


METADATA_HOSTS = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi")


def metadata_hits(world: DemoWorld) -> int:
    """Requests the metadata services' servers logged (Europe PMC's host also serves PDFs under /articles/)."""
    return sum(1 for name in METADATA_HOSTS for _, path in world.hosts[name].log
               if not path.startswith(("/articles/", "/robots.txt")))


def _title(doi: str) -> str:
    return next(p["title"] for p in science_papers() if p["doi"] == doi).rstrip(".")



#: Publishers paced at 0.05-0.1 s instead of the polite 1-3 s, so a run takes seconds.
PACED = {"delay_min_s": 0.05, "delay_max_s": 0.1}


def test_search_pubmed_on_the_demo_world_feeds_download_frame_and_checks_titles(world: DemoWorld, tmp_path: Path) -> None:
    with retriever(tmp_path, world.endpoints, **PACED, cache=tmp_path / "cache.sqlite") as r:
        hits = r.search_pubmed(SEARCH_QUERY, max_results=20)
        assert list(hits.columns) == ["pmid", "doi", "pmcid", "title", "journal", "year", "authors", "abstract"]
        assert list(hits["pmid"]) == DEMO_PMIDS
        out = r.download_frame(hits)
    assert list(out.columns[:8]) == list(hits.columns) and "title_match" in out.columns
    by_doi = out.set_index("doi")
    right = by_doi.drop(index=WRONG_PDF_DOI)
    assert set(right["status"]) == {"downloaded"} and (right["title_match"] >= 0.9).all()
    wrong = by_doi.loc[WRONG_PDF_DOI]
    assert wrong["status"] == Status.WRONG_ARTICLE.value and pd.isna(wrong["path"]) and wrong["title_match"] == 0.0
    assert _title(WRONG_PDF_SHOWS) in wrong["error"]
    aside = list((tmp_path / "wrong_article").glob("*.pdf"))
    assert len(aside) == 1 and WRONG_PDF_DOI.split("/")[1] in aside[0].name
    assert not any(WRONG_PDF_DOI.split("/")[1] in p.name for p in tmp_path.glob("*.pdf"))  # not under the expected name
    with retriever(tmp_path, world.endpoints, **PACED, cache=tmp_path / "cache.sqlite") as r:  # a second run reuses the ledger
        again = r.download_frame(hits).set_index("doi")
    reused = again.drop(index=WRONG_PDF_DOI)
    assert set(reused["status"]) == {"already_downloaded"}
    pd.testing.assert_series_equal(reused["title_match"], right["title_match"])  # kept in the ledger's extra


def test_zero_hits_on_the_demo_world_are_an_empty_frame_with_the_columns(world: DemoWorld, tmp_path: Path) -> None:
    with retriever(tmp_path, world.endpoints, **PACED, cache=False) as r:
        hits = r.search_pubmed("nothing matches this")
    assert hits.empty and list(hits.columns)[:2] == ["pmid", "doi"]


def test_second_run_with_the_cache_sends_no_metadata_request(world: DemoWorld, tmp_path: Path) -> None:
    batch = [p["doi"] for p in science_papers()] + ["10.5555/demo.slow1", "10.5555/demo.unknown", "PMID:90000001"]
    cache = tmp_path / "cache.sqlite"
    with retriever(tmp_path / "one", world.endpoints, **PACED, cache=cache) as r:
        first = r.download(batch)
    asked = metadata_hits(world)
    assert asked > 0
    with retriever(tmp_path / "two", world.endpoints, **PACED, cache=cache) as r:
        second = r.download(batch)
    assert metadata_hits(world) == asked  # 0 metadata requests, by the servers' own logs
    pd.testing.assert_series_equal(first["status"], second["status"])
    with retriever(tmp_path / "three", world.endpoints, **PACED, cache=False) as r:
        r.download(batch)
    assert metadata_hits(world) > asked  # cache=False asks again


def test_references_and_citations_on_the_demo_world_feed_download_frame(world: DemoWorld, tmp_path: Path) -> None:
    with retriever(tmp_path, world.endpoints, **PACED, cache=tmp_path / "c.sqlite") as r:
        refs = r.references(science_papers()[0]["doi"])
        assert list(refs.columns) == ["doi", "pmid", "openalex_id", "title", "year", "source_of_link", "journal", "authors"]
        assert set(refs["doi"]) == {"10.5555/demo.ref.unindexed", "10.5555/demo.fast2"}
        before = world.hosts["openalex"].hits()
        assert r.references(science_papers()[0]["doi"]).equals(refs)
        assert world.hosts["openalex"].hits() == before  # answered from the cache
        outcomes = r.download_frame(refs)
        assert dict(zip(outcomes["doi"], outcomes["status"])) == {
            "10.5555/demo.ref.unindexed": "not_found", "10.5555/demo.fast2": "downloaded"}
        cites = r.citations(CITED_DOI)
        assert len(cites) == 5 and set(cites["source_of_link"]) == {"openalex"}
        both = r.references(CITED_DOI)
        assert len(both) == 65 and set(both["source_of_link"]) == {"crossref"}
        with pytest.raises(InvalidIdentifier):
            r.references("not an identifier")
        epmc = r.citations(f"pmid:{EPMC_CITED}")  # OpenAlex does not know it here; Europe PMC's 23
        assert len(epmc) == 23 and set(epmc["source_of_link"]) == {"europepmc"} and epmc["pmid"].iloc[0] == DEMO_EPMC_FIRST
        assert epmc["doi"].isna().all()


# ============================================================================ 3. units


def test_cache_keeps_answers_a_week_and_not_found_a_day_and_no_secret(tmp_path: Path) -> None:
    now = [1_000_000.0]
    cache = MetadataCache(tmp_path / "c.sqlite", now=lambda: now[0])

    class Upstream:
        calls = 0

        def fetch(self, url, *, classify=None, params=None, headers=None):  # noqa: ANN001
            Upstream.calls += 1
            if "missing" in url:
                raise NotFoundError("absent", status_code=404, url=url)
            if "broken" in url:
                raise ServiceError("500", status_code=500, url=url)
            return Transport_response(200, b'{"ok": true}')

    fetcher = CachedFetcher(Upstream(), cache)
    secret = {"mailto": "you@uni.example", "api_key": "oa-secret-key", "q": "1"}
    for _ in range(2):
        assert fetcher.fetch("http://127.0.0.1/works", params=secret).json() == {"ok": True}
    assert Upstream.calls == 1 and cache_key("http://127.0.0.1/works", secret) == "GET http://127.0.0.1/works?q=1"
    for _ in range(2):
        with pytest.raises(NotFoundError):
            fetcher.fetch("http://127.0.0.1/missing")
    assert Upstream.calls == 2
    for _ in range(2):
        with pytest.raises(ServiceError):
            fetcher.fetch("http://127.0.0.1/broken")
    assert Upstream.calls == 4  # errors are never stored
    now[0] += 24 * 3600 + 1  # a day later: "not found" expired, the answer not
    fetcher.fetch("http://127.0.0.1/works", params=secret)
    with pytest.raises(NotFoundError):
        fetcher.fetch("http://127.0.0.1/missing")
    assert Upstream.calls == 5
    now[0] += 6 * 24 * 3600  # a week after the first answer
    fetcher.fetch("http://127.0.0.1/works", params=secret)
    assert Upstream.calls == 6
    cache.close()
    raw = (tmp_path / "c.sqlite").read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("c.sqlite-*"))
    assert b"you@uni.example" not in raw and b"secret" not in raw
    assert MetadataCache(tmp_path / "c.sqlite", now=lambda: now[0]).clear() >= 1
    reopened = MetadataCache(tmp_path / "c.sqlite", now=lambda: now[0])
    reopened.put_not_found("GET http://127.0.0.1/gone")
    reopened.close()
    now[0] += 2 * 24 * 3600
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM answers").fetchone() == (1,)
    MetadataCache(tmp_path / "c.sqlite", now=lambda: now[0]).close()  # opening drops what has expired
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM answers").fetchone() == (0,)


def Transport_response(status: int, body: bytes):  # noqa: N802, ANN201
    import requests

    response = requests.Response()
    response.status_code, response._content = status, body
    return response


def test_a_cache_hit_costs_no_pacing_wait(tmp_path: Path) -> None:
    from paperfetch.testing import LoopbackHost

    with LoopbackHost("127.0.0.1", {"*": Reply(200, b"{}", {"Content-Type": "application/json"})}) as host:
        clock = FakeClock()
        client = HttpClient(clock=clock, verbosity=0, host_intervals={f"127.0.0.1:{host.port}": 30.0}, delay_min_s=30, delay_max_s=30)
        fetcher = CachedFetcher(client, MetadataCache(":memory:"))
        fetcher.fetch(host.url("/a"))
        fetcher.fetch(host.url("/b"))  # a miss waits its turn (30 s on the fake clock)
        slept = clock.slept
        assert slept >= 29
        for _ in range(5):
            fetcher.fetch(host.url("/a"))
            fetcher.fetch(host.url("/b"))
        assert clock.slept == slept and host.hits() == 2
        client.close()


def test_cache_path_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPERFETCH_CACHE_DIR", str(tmp_path / "here"))
    cache = MetadataCache()
    assert cache.path == tmp_path / "here" / "metadata-cache.sqlite" and cache.path.exists()
    with sqlite3.connect(cache.path) as db:
        assert ("answers",) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    cache.close()


@pytest.mark.parametrize("title, text, expected", [
    ("Genomic loss of microRNA-101 leads to EZH2", "GENOMIC LOSS OF MICRORNA 101 LEADS TO EZH2 ...", 1.0),
    ("Café au lait: a study", "cafe au lait study", 1.0),
    ("Profiling essential genes", "Cancer proliferation gene discovery", 0.0),
    ("Profiling essential genes", "profiling of essential", 0.667),
    (None, "text", None),
    ("A title", "", None),
])
def test_title_score_is_the_share_of_title_words_on_the_page(title, text, expected) -> None:  # noqa: ANN001
    assert title_score(title, text) == expected


def test_judge_calls_a_better_match_with_another_title_the_wrong_article() -> None:
    text = "Science 2008\nCancer proliferation gene discovery through functional genomics."
    wrong = judge("Profiling essential genes in human mammary cells by multiplex RNAi screening.", text,
                  ["Cancer proliferation gene discovery through functional genomics.", None])
    assert wrong.verdict == "wrong_article" and wrong.better_score == 1.0 and wrong.score < 0.6
    assert judge("Profiling essential genes in human mammary cells", text, []).verdict == "low"
    assert judge("Cancer proliferation gene discovery", text, ["Profiling essential genes"]).verdict == "ok"
    assert judge("Any title", None, ["x"]) is None


def test_first_pages_text_reads_a_text_layer_and_none_without_one(tmp_path: Path) -> None:
    with_text, scan = tmp_path / "a.pdf", tmp_path / "b.pdf"
    with_text.write_bytes(text_pdf(["Profiling essential genes (in) human cells"]))
    scan.write_bytes(fake_pdf("no text layer"))
    assert normalise(read_first_pages(with_text).text or "") == normalise("Profiling essential genes (in) human cells")
    assert read_first_pages(scan).text is None and read_first_pages(tmp_path / "missing.pdf").text is None


def test_outcome_schema_has_title_match_and_wrong_article() -> None:
    assert "title_match" in COLUMNS and Status.WRONG_ARTICLE.value == "wrong_article"
    assert WRONG_PDF_SHOWS != WRONG_PDF_DOI


# ============================================================================ 4. the command line


def _demo_env(world: DemoWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo world's endpoints, and no configured gap between requests (the demo's Crawl-delays still apply)."""
    _no_user_settings(monkeypatch)
    for name, url in world.endpoints.items():
        monkeypatch.setenv("PAPERFETCH_DOI_URL" if name == "doi" else f"PAPERFETCH_{name.upper()}_URL", url)
    monkeypatch.setenv("PAPERFETCH_DELAY_MIN", "0")
    monkeypatch.setenv("PAPERFETCH_DELAY_MAX", "0")


def _no_user_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """No user config file and no identity from the environment (as tests/test_cli.py isolates them)."""
    monkeypatch.setenv("PAPERFETCH_CONFIG", "/nonexistent/paperfetch-test/config.toml")
    for name in ("PAPERFETCH_EMAIL", "PAPERFETCH_OPENALEX_API_KEY", "PAPERFETCH_NCBI_API_KEY", "NCBI_API_KEY",
                 "PAPERFETCH_OUT", "PAPERFETCH_WORKERS"):
        monkeypatch.delenv(name, raising=False)


def test_cli_search_writes_the_hits_and_downloads_them(world: DemoWorld, tmp_path: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    from paperfetch.cli import main

    _demo_env(world, monkeypatch)
    report = tmp_path / "hits.csv"
    code = main(["search", SEARCH_QUERY, "--max", "20", "--report", str(report), "--email", "you@uni.example",
                 "--out", str(tmp_path / "pdfs"), "--download", "--no-progress"])
    assert code == 1  # --download and one row did not finish well (wrong_article)
    frame = pd.read_csv(report, dtype=str)
    assert list(frame["pmid"]) == DEMO_PMIDS and "status" in frame.columns
    assert (frame["status"] == "downloaded").sum() == 5 and (frame["status"] == "wrong_article").sum() == 1
    out = capsys.readouterr().out
    assert "6 PubMed hits" in out and "you@uni.example" not in out


def test_cli_references_citations_and_cache_clear(world: DemoWorld, tmp_path: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    from paperfetch.cli import main

    _demo_env(world, monkeypatch)
    assert main(["citations", CITED_DOI, "--report", str(tmp_path / "c.csv"), "--no-progress"]) == 0
    assert len(pd.read_csv(tmp_path / "c.csv")) == 5
    assert main(["references", f"doi:{CITED_DOI}", "--no-progress"]) == 0
    assert "65 references" in capsys.readouterr().out
    assert main(["references", "not an id"]) == 2
    assert main(["cache", "clear"]) == 0
    assert "answers removed" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0 and " 0 answers removed" in capsys.readouterr().out


def test_a_low_title_match_keeps_the_file_and_says_so_on_the_dashboard(tmp_path: Path, caplog) -> None:  # noqa: ANN001
    from paperfetch.dashboard import DashboardModel
    from paperfetch.research import check_title

    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(text_pdf(["Supplementary material", "Table S1"]))
    model = DashboardModel()
    title, key = "Profiling essential genes in human mammary cells", ident("doi:10.1/x").key
    assert check_title(title, pdf, "http://127.0.0.1/a.pdf?api_key=k", key=key, notify=model.note) == {"title_match": 0.0}
    assert pdf.exists() and "match its title only 0%" in caplog.text and "api_key=k" not in caplog.text
    assert any(e.kind == "title_mismatch" and "doi:10.1/x" in e.message for e in model.snapshot().events)
    assert check_title(None, pdf, "http://127.0.0.1/a.pdf", key=key, notify=model.note) == {"title_match": None}


def test_an_unreadable_cached_answer_is_asked_again(world: DemoWorld, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    with retriever(tmp_path / "one", world.endpoints, **PACED, cache=cache) as r:
        assert r.download(["10.5555/demo.slow1"])["status"].tolist() == ["downloaded"]
    with sqlite3.connect(cache) as db:
        assert db.execute("UPDATE answers SET body = ? WHERE key LIKE '%/v2/%'", (b"not json",)).rowcount == 1
    before = world.hosts["unpaywall"].hits()
    with retriever(tmp_path / "two", world.endpoints, **PACED, cache=cache) as r:
        assert r.download(["10.5555/demo.slow1"])["status"].tolist() == ["downloaded"]
    assert world.hosts["unpaywall"].hits() == before + 1


def test_a_posted_read_has_its_own_cache_key_without_identity() -> None:
    url = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi"
    posted = cache_key(url, None, {"db": "pubmed", "id": "1,2", "email": "you@uni.example", "api_key": "k"})
    assert posted.startswith("POST ") and "example" not in posted and "api_key" not in posted
    assert posted != cache_key(url, {"db": "pubmed", "id": "1,2"}) and posted != cache_key(url, None, {"db": "pubmed", "id": "1,3"})



# ============================================================================ 4. the research CLI follows cli.py's conventions


class _NoRequests:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import requests

        self.calls = 0

        def refuse(*args, **kwargs):  # noqa: ANN002,ANN003,ANN202
            self.calls += 1
            raise AssertionError("a request was sent")

        monkeypatch.setattr(requests.Session, "send", refuse)


@pytest.mark.parametrize("argv, message", [
    (["search", "  "], "give a PubMed query"),
    (["search", "cancer", "--max", "0"], "--max must be between 1 and 10000, not 0"),
    (["search", "cancer", "--report", "hits.xlsx"], "unknown extension '.xlsx'"),
    (["search", "cancer", "--report", "/nonexistent/dir/hits.csv"], "the folder /nonexistent/dir does not exist"),
    (["references", "not an id"], "not an id"),
    (["citations", "10.1234/x", "--download", "--out", "afile"], "is a file, not a folder"),
    (["citations", "10.1234/x", "--config", "bad.toml"], "bad.toml"),
    (["search", "cancer", "--bogus"], "unrecognized arguments"),
])
def test_research_usage_errors_exit_2_before_any_request(argv, message, tmp_path, monkeypatch, capsys) -> None:  # noqa: ANN001
    from paperfetch.cli import main

    _no_user_settings(monkeypatch)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "bad.toml").write_text('workers = "many"\n')
    guard = _NoRequests(monkeypatch)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err and guard.calls == 0
    assert not (tmp_path / "PDFs").exists()


def test_research_settings_come_from_env_and_the_toml_file(world: DemoWorld, tmp_path: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    from paperfetch import retriever as retriever_module
    from paperfetch.cli import main

    _demo_env(world, monkeypatch)
    seen: list[dict] = []
    original = retriever_module.Retriever.__init__

    def spy(self, *args, **kwargs):  # noqa: ANN001,ANN002,ANN003,ANN202
        seen.append(kwargs)
        original(self, *args, **kwargs)

    monkeypatch.setattr(retriever_module.Retriever, "__init__", spy)
    monkeypatch.setenv("PAPERFETCH_EMAIL", "env-person@uni.example")
    monkeypatch.setenv("NCBI_API_KEY", "ncbi-env-key-123")
    assert main(["search", SEARCH_QUERY, "--max", "20", "--no-progress"]) == 0
    assert (seen[-1]["settings"].email, seen[-1]["settings"].ncbi_api_key) == ("env-person@uni.example", "ncbi-env-key-123")
    config = tmp_path / "settings.toml"
    config.write_text('email = "file-person@uni.example"\nopenalex_api_key = "oa-file-key-456"\n')
    monkeypatch.delenv("PAPERFETCH_EMAIL")
    assert main(["citations", CITED_DOI, "--config", str(config), "--no-progress"]) == 0
    assert (seen[-1]["settings"].email, seen[-1]["settings"].openalex_api_key) == ("file-person@uni.example", "oa-file-key-456")
    assert main(["citations", CITED_DOI, "--config", str(config), "--email", "arg@uni.example",
                 "--no-progress"]) == 0
    assert seen[-1]["settings"].email == "arg@uni.example"  # argument > environment > file
    out, err = capsys.readouterr()
    assert not any(secret in out + err for secret in ("ncbi-env-key-123", "oa-file-key-456", "env-person@"))


def test_research_report_formats_quiet_and_verbose(world: DemoWorld, tmp_path: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    from paperfetch.cli import main

    _demo_env(world, monkeypatch)
    assert main(["search", SEARCH_QUERY, "--max", "20", "--email", "you@uni.example", "--report",
                 str(tmp_path / "hits.parquet"), "-q", "--no-progress"]) == 0
    assert capsys.readouterr().out == ""  # -q: the exit status tells the rest
    assert list(pd.read_parquet(tmp_path / "hits.parquet")["pmid"]) == DEMO_PMIDS
    assert main(["citations", f"pmid:{EPMC_CITED}", "--email", "you@uni.example", "--report", str(tmp_path / "c.jsonl"),
                 "-v", "--no-progress"]) == 0
    lines = (tmp_path / "c.jsonl").read_text().splitlines()
    assert len(lines) == 23 and '"source_of_link": "europepmc"' in lines[0]
    captured = capsys.readouterr()
    assert f"23 citations of pmid:{EPMC_CITED}" in captured.out and "INFO" in captured.err  # -v: what happens, on stderr


def test_search_pubmed_keeps_max_results_when_the_server_sends_more(world: DemoWorld, tmp_path: Path) -> None:
    with retriever(tmp_path, world.endpoints, **PACED, cache=False) as r:
        hits = r.search_pubmed(SEARCH_QUERY, max_results=2)  # the demo's ESearch, like a proxy, ignores retmax
    assert list(hits["pmid"]) == DEMO_PMIDS[:2]


def test_citations_download_tries_rows_by_pmid_and_reports_and_exits_like_download(world: DemoWorld, tmp_path: Path,
                                                                                 monkeypatch, capsys) -> None:  # noqa: ANN001
    from paperfetch.cli import main

    _demo_env(world, monkeypatch)
    code = main(["citations", f"pmid:{EPMC_CITED}", "--email", "you@uni.example", "--out", str(tmp_path / "pdfs"),
                 "--download", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1  # 23 rows not downloaded: download's exit status
    assert "without a DOI" not in out  # every row had a PMID and was tried by it
    table = out.split(f"23 citations of pmid:{EPMC_CITED}", 1)[1]
    assert f"PMID:{DEMO_EPMC_FIRST}" in table  # the input column names what was tried
    assert "23 papers: 23 not_found" in out


def test_research_download_exit_status_and_ctrl_c(world: DemoWorld, tmp_path: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    from paperfetch import retriever as retriever_module
    from paperfetch.cli import main

    _demo_env(world, monkeypatch)
    monkeypatch.setenv("PAPERFETCH_EMAIL", "you@uni.example")
    monkeypatch.setenv("PAPERFETCH_OUT", str(tmp_path / "pdfs"))  # --out from the environment
    refs = tmp_path / "refs.csv"
    assert main(["references", science_papers()[0]["doi"], "--download", "--report", str(refs), "--no-progress"]) == 1
    frame = pd.read_csv(refs)
    assert sorted(frame["status"]) == ["downloaded", "not_found"]  # one of the two referenced works has no PDF
    assert (tmp_path / "pdfs").is_dir()
    capsys.readouterr()

    def interrupted(self, frame, column="doi"):  # noqa: ANN001,ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(retriever_module.Retriever, "download_frame", interrupted)
    partial = tmp_path / "partial.jsonl"
    assert main(["search", SEARCH_QUERY, "--max", "20", "--download", "--report", str(partial), "--no-progress"]) == 130
    assert "interrupted" in capsys.readouterr().err
    rows = [json.loads(line) for line in partial.read_text().splitlines()]
    assert [r["pmid"] for r in rows] == DEMO_PMIDS and {r["status"] for r in rows} == {"stopped"}  # the library's word for a paper not finished

    def stopped(self, *args, **kwargs):  # noqa: ANN001,ANN002,ANN003,ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(retriever_module.Retriever, "search_pubmed", stopped)
    assert main(["search", SEARCH_QUERY, "--no-progress"]) == 130  # before any row: no report, status 130
