"""Wrong answers and crashes on the item path: every input gets its true row.

A lone surrogate among plain string inputs (pandas 3 text columns cannot hold one), a batch
closed from another thread (an item never tried is never a final answer), a candidate URL the
client refuses (the row says so), the PubMed search answered from the metadata cache, and a
PDF whose own title names another paper (``wrong_article``).
"""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
import time
from contextlib import closing
from urllib.parse import unquote

import pandas as pd

from paperfetch import Retriever, defaults
from paperfetch.cache import MetadataCache
from paperfetch.demo import DemoWorld, fake_pdf
from paperfetch.demo_research import HISTORY_QUERY, SEARCH_QUERY
from paperfetch.http.hosts import host_key
from paperfetch.outcomes import outcomes_frame
from paperfetch.redact import redact_frame
from paperfetch.testing import Reply

EMAIL = "tester@example.org"
FAST = {"network_retry_base_s": 0.01, "rate_limit_min_s": 0.0, "rate_limit_max_s": 0.0}
ENDPOINT_KEYS = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi_idconv", "ncbi_eutils", "arxiv", "doi")


def _closed_port() -> str:
    """A loopback address nothing listens on: every request is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def retriever(out_dir, endpoints, **kwargs) -> Retriever:  # noqa: ANN001
    options = {**FAST, **kwargs.pop("http_options", {})}
    kwargs.setdefault("max_retries", 0)
    return Retriever(email=EMAIL, out_dir=out_dir, endpoints=endpoints, progress=False, verbosity=0,
                     http_options=options, **kwargs)


# ------------------------------------------------------------------ 1. lone surrogates in a batch of strings
SURROGATE_INPUTS = ["\ud800", "PMC\ud800", "10.1000/\ud800x", "\udfff", "PMID:\ud800"]


def test_a_column_of_strings_with_a_lone_surrogate_makes_an_outcomes_frame():
    frame = redact_frame(outcomes_frame([{"input": "\ud800", "status": "invalid_identifier", "error": "x"},
                                         {"input": "10.1000/ok", "status": "not_found"}]))
    assert list(frame["input"]) == ["\ud800", "10.1000/ok"] and frame["input"].dtype == object


def test_a_batch_mixing_valid_ids_and_lone_surrogates_gives_every_input_its_row(tmp_path):
    closed = _closed_port()
    valid = [f"10.1000/v{n}" for n in range(20)] + ["PMID:31452104", "PMC3531190", "arXiv:1706.03762"]
    inputs: list[object] = []
    for n in range(300):  # strings only: pandas would infer a text column for them
        inputs.append(SURROGATE_INPUTS[n % len(SURROGATE_INPUTS)] if n % 3 else valid[n % len(valid)])
    inputs += SURROGATE_INPUTS  # duplicates of the damaged ones
    with retriever(tmp_path, {k: closed for k in ENDPOINT_KEYS}, respect_robots_txt=False, cache=False) as r:
        out = r.download(inputs)
        plan = r.candidates(SURROGATE_INPUTS + ["10.1000/v1"])  # the dry run too: a row per input
    assert list(plan["input"]) == SURROGATE_INPUTS + ["10.1000/v1"]
    assert plan["error"].iloc[: len(SURROGATE_INPUTS)].str.contains("surrogate").all()
    assert len(out) == len(inputs)
    assert list(out["input"]) == inputs
    for given, status, error in zip(inputs, out["status"], out["error"]):
        assert isinstance(given, str)
        if any(0xD800 <= ord(ch) <= 0xDFFF for ch in given):
            assert status == "invalid_identifier" and "surrogate" in error
        else:
            assert status == "network_error", (given, status, error)  # the services are closed: retryable
    assert isinstance(out, pd.DataFrame)


# ------------------------------------------------------------------ 2. close() from another thread
def _unpaywall_world(hosts, publisher_address: str, crawl_delay: float):  # noqa: ANN001, ANN202
    """An Unpaywall that offers every DOI's PDF on one publisher, whose robots.txt asks for *crawl_delay*."""
    publisher = hosts(publisher_address, {
        "/robots.txt": Reply(200, f"User-agent: *\nCrawl-delay: {crawl_delay}\n".encode()),
        "*": lambda request: Reply(200, fake_pdf(request.path), {"Content-Type": "application/pdf"}),
    })

    def unpaywall(request):  # noqa: ANN001, ANN202
        doi = unquote(request.path[len("/v2/"):]).lower()
        pdf = publisher.url(f"/pdf/{doi.split('/', 1)[1]}.pdf")
        location = {"url": pdf, "url_for_pdf": pdf, "host_type": "publisher", "license": "cc-by"}
        body = {"doi": doi, "title": f"Paper {doi}", "is_oa": True, "oa_status": "gold", "best_oa_location": location,
                "oa_locations": [location]}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    service = hosts(f"{publisher_address}1", {"*": unpaywall})
    return service, publisher


def test_closing_the_retriever_mid_batch_leaves_untried_items_retryable(hosts, tmp_path):
    service, publisher = _unpaywall_world(hosts, "127.0.0.21", crawl_delay=0.25)
    dois = [f"10.1000/stop{n}" for n in range(6)]
    options = {"host_intervals": {host_key(service.base_url): 0.0}}

    def pdf_hits() -> set[str]:
        return {path for _, path in publisher.log if path.startswith("/pdf/")}

    r = retriever(tmp_path, {"unpaywall": service.base_url}, sources=["unpaywall"], http_options=options)

    def close_after_the_first_pdf() -> None:
        deadline = time.monotonic() + 10
        while not pdf_hits() and time.monotonic() < deadline:
            time.sleep(0.01)
        r.close()

    closer = threading.Thread(target=close_after_the_first_pdf)
    closer.start()
    try:
        first = r.download(dois)
    finally:
        closer.join()
    statuses = dict(zip(first["input"], first["status"]))
    tried = {f"/pdf/{d.split('/', 1)[1]}.pdf" for d in dois} & pdf_hits()
    untried = [d for d in dois if f"/pdf/{d.split('/', 1)[1]}.pdf" not in tried]
    assert untried, "the close came too late to leave anything queued"
    for doi in untried:
        assert statuses[doi] == "stopped", (doi, statuses[doi])
        assert "stopped" in first.loc[first["input"] == doi, "error"].item()
    assert "no_open_copy" not in statuses.values()

    # the re-run asks again for every item the stopped batch never tried
    with retriever(tmp_path, {"unpaywall": service.base_url}, sources=["unpaywall"], http_options=options) as again:
        second = again.download(dois)
    assert set(second["status"]) <= {"downloaded", "already_downloaded"}
    for doi in untried:
        assert f"/pdf/{doi.split('/', 1)[1]}.pdf" in pdf_hits()
        assert second.loc[second["input"] == doi, "status"].item() == "downloaded"


# ------------------------------------------------------------------ 3. a candidate URL the client refuses
def test_a_refused_candidate_url_gives_a_row_saying_it_was_refused_and_why(hosts, tmp_path):
    long_url = "http://127.0.0.33/pdf/" + "a" * 60_000 + ".pdf"
    offered = {"10.1000/long": long_url, "10.1000/port": "http://127.0.0.33:99999/x.pdf",
               "10.1000/space": "http://exa mple.org/x.pdf"}
    publisher = hosts("127.0.0.33", {"*": Reply(200, fake_pdf("never asked"), {"Content-Type": "application/pdf"})})

    def unpaywall(request):  # noqa: ANN001, ANN202
        doi = unquote(request.path[len("/v2/"):]).lower()
        location = {"url_for_pdf": offered[doi], "url": offered[doi], "host_type": "publisher"}
        body = {"doi": doi, "title": "T", "is_oa": True, "best_oa_location": location, "oa_locations": [location]}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    service = hosts("127.0.0.34", {"*": unpaywall})
    landing = hosts("127.0.0.35", {"*": Reply(200, f'<html><head><meta name="citation_pdf_url" content="{long_url}">'
                                                   '</head></html>'.encode(), {"Content-Type": "text/html"})})
    endpoints = {"unpaywall": service.base_url, "doi": landing.base_url}
    with retriever(tmp_path, endpoints, sources=["unpaywall"], respect_robots_txt=False, cache=False) as r:
        out = r.download(list(offered))
        plan = r.candidates(["10.1000/long"])
    with retriever(tmp_path / "landing", endpoints, sources=["landing"], respect_robots_txt=False, cache=False) as r:
        via_landing = r.download(["10.1000/long"])
    assert publisher.hits() == 0  # nothing was sent to the refused URLs
    for frame in (out, via_landing):
        for status, error, url in zip(frame["status"], frame["error"], frame["url"]):
            assert status == "refused_url", (status, error)
            assert "cannot be requested" in error or "characters long" in error
            assert "no source offers" not in error
            assert len(url) < 300  # the row shows the URL cut, with its length
    errors = dict(zip(out["input"], out["error"]))
    assert "60,026 characters long" in errors["10.1000/long"]
    assert "Port out of range" in errors["10.1000/port"]
    assert "cannot be requested" in errors["10.1000/space"]
    assert "60,026 characters long" in via_landing["error"].item()
    assert plan["url"].isna().all() and "characters long" in plan["error"].item()


# ------------------------------------------------------------------ 4. the PubMed search through the metadata cache
def _eutils_hits(world) -> int:  # noqa: ANN001
    return sum(1 for _, path in world.hosts["ncbi"].log if path.startswith("/entrez/"))


def _demo_retriever(world, out_dir, **kwargs) -> Retriever:  # noqa: ANN001
    return Retriever(email=EMAIL, out_dir=out_dir, endpoints=world.endpoints, progress=False, verbosity=0,
                     delay_min_s=0.05, delay_max_s=0.1, **kwargs)


def test_an_identical_second_search_and_download_send_no_eutils_request(tmp_path):
    cache = tmp_path / "cache.sqlite"
    with DemoWorld(base_ip=180) as world:
        with _demo_retriever(world, tmp_path / "one", cache=cache) as r:
            first = r.search_pubmed(SEARCH_QUERY, max_results=20)
            r.download_frame(first)
        asked = _eutils_hits(world)
        assert asked >= 2  # ESearch and an EFetch page
        with _demo_retriever(world, tmp_path / "two", cache=cache) as r:
            second = r.search_pubmed(SEARCH_QUERY, max_results=20)
            assert _eutils_hits(world) == asked  # the second identical search: 0 requests
            r.download_frame(second)
        assert _eutils_hits(world) == asked  # and its download neither
        pd.testing.assert_frame_equal(first, second)
        with _demo_retriever(world, tmp_path / "three", cache=False) as r:
            r.search_pubmed(SEARCH_QUERY, max_results=20)
        assert _eutils_hits(world) > asked  # without the cache PubMed is asked again


def test_search_answers_live_shorter_than_a_works_and_pages_are_keyed_by_the_query_not_the_webenv(tmp_path):
    now = [1000.0]
    with DemoWorld(base_ip=200) as world:
        store = MetadataCache(tmp_path / "c.sqlite", now=lambda: now[0])
        with _demo_retriever(world, tmp_path / "out", cache=store) as r:
            r.search_pubmed(HISTORY_QUERY, max_results=20)
            asked = _eutils_hits(world)
            with closing(sqlite3.connect(tmp_path / "c.sqlite")) as db:  # the file, as another process would read it
                expiries = dict(db.execute("SELECT key, expires_at FROM answers").fetchall())
            keys = list(expiries)
            assert any("efetch" in k for k in keys) and not any("WebEnv" in k for k in keys)
            search = [e for k, e in expiries.items() if "esearch" in k or "efetch" in k]
            assert search and all(e == now[0] + defaults.SEARCH_CACHE_TTL_S for e in search)
            assert defaults.SEARCH_CACHE_TTL_S < store.answer_ttl_s
            # a stored ESearch whose page is gone: its WebEnv may be too, so ESearch is asked again, then the page
            for key in [k for k in keys if "efetch" in k]:
                store.delete(key)
            r.search_pubmed(HISTORY_QUERY, max_results=20)
            assert _eutils_hits(world) == asked + 2
            now[0] += defaults.SEARCH_CACHE_TTL_S + 1  # past the search's TTL: asked again
            r.search_pubmed(HISTORY_QUERY, max_results=20)
            assert _eutils_hits(world) == asked + 4
        store.close()


# ------------------------------------------------------------------ 5. a PDF whose own title is another paper's
ASKED = "Profiling essential genes in human mammary cells by multiplex RNAi screening"
OTHER = "Cancer proliferation gene discovery through functional genomics"
BODY = ["Abstract. We describe a screen in cell lines and report the results of the analysis.",
        "Methods and materials are given in the supplement; the data are available on request."]


def titled_pdf(*, info_title: str | None = None, lines: list[tuple[str, float]] = ()) -> bytes:  # type: ignore[assignment]
    """A one-page PDF: *lines* as ``(text, font size)`` from the top, and a document info /Title when given."""
    def esc(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    ops, y = [], 740.0
    for text, size in lines:
        ops.append(f"BT /F1 {size:g} Tf 72 {y:g} Td ({esc(text)}) Tj ET")
        y -= size * 1.5
    stream = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    if info_title is not None:
        objects.append(f"<< /Title ({esc(info_title)}) /Producer (test) >>".encode("latin-1"))
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    info = b" /Info 6 0 R" if info_title is not None else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, info, xref)
    return bytes(out)


def _page(title: str, size: float = 18.0) -> list[tuple[str, float]]:
    return [("Journal of Cell Screens", 9.0), (title, size)] + [(line, 10.0) for line in BODY]


PDF_CASES = {
    # the document info names another paper, the first page's headline too: refused
    "10.1000/info-other": (titled_pdf(info_title=OTHER, lines=_page(OTHER)), "wrong_article"),
    # no document info; the first page's largest type is another paper's title: refused
    "10.1000/headline-other": (titled_pdf(lines=_page(OTHER)), "wrong_article"),
    # a placeholder in the info and the journal's name as the largest type: not confident, a warning only
    "10.1000/placeholder": (titled_pdf(info_title="Microsoft Word - draft3.docx",
                                       lines=[("Journal of Cell Screens", 20.0)] + [(line, 10.0) for line in BODY]),
                            "downloaded"),
    # a drop cap set larger than the headline: the headline is still found
    "10.1000/drop-cap": (titled_pdf(lines=[("T", 40.0)] + _page(OTHER)), "wrong_article"),
    # a short generic headline: not confident
    "10.1000/untitled": (titled_pdf(info_title="Untitled", lines=_page("Research Article")), "downloaded"),
    # its own title is the paper asked for (a subtitle less), though the text layer matches it poorly
    "10.1000/own-right": (titled_pdf(info_title="Profiling essential genes in human mammary cells",
                                     lines=[(line, 10.0) for line in BODY]), "downloaded"),
    # the right paper: its first page carries the title asked for
    "10.1000/right": (titled_pdf(info_title=OTHER, lines=_page(ASKED)), "downloaded"),
}


def test_judge_refuses_a_confident_own_title_of_another_paper_and_only_warns_otherwise():
    from paperfetch.titlematch import confident_title, judge, title_similarity

    text = "\n".join(BODY)
    assert judge(ASKED, text, own_titles=[(OTHER, "its document info")]).verdict == "wrong_article"
    assert judge(ASKED, text, own_titles=[("Untitled", "its document info")]).verdict == "low"
    assert judge(ASKED, text, own_titles=[("Journal of Cell Screens and Assays", "x")],
                 journal="Journal of Cell Screens and Assays").verdict == "low"
    assert judge(ASKED, text, own_titles=[("Microsoft Word - x.docx", "a"), (ASKED, "b")]).verdict == "low"
    assert judge(ASKED, ASKED, own_titles=[(OTHER, "its document info")]).verdict == "ok"
    # a stale document info beside a headline naming the paper asked for: only the warning
    assert judge(ASKED, text, own_titles=[(OTHER, "its document info"), (ASKED, "its first page")]).verdict == "low"
    assert not confident_title("Nature 2008 455:123-127") and not confident_title("PII: S0092-8674(08)01234-5")
    assert title_similarity(ASKED, "Profiling essential genes in human mammary cells") == 1.0
    for placeholder in ("Untitled", "Microsoft Word - paper.docx", "manuscript.pdf", "10.1000/xyz.123", "Layout 1",
                        "Editorial", "12345"):
        assert not confident_title(placeholder), placeholder
    assert confident_title(OTHER)


def test_a_pdf_whose_own_title_is_another_papers_is_a_wrong_article(hosts, tmp_path):
    publisher = hosts("127.0.0.37", {
        "*": lambda request: Reply(200, PDF_CASES[unquote(request.path[len("/pdf/"):-len(".pdf")])][0],
                                   {"Content-Type": "application/pdf"})})

    def unpaywall(request):  # noqa: ANN001, ANN202
        doi = unquote(request.path[len("/v2/"):]).lower()
        pdf = publisher.url(f"/pdf/{doi}.pdf")
        location = {"url_for_pdf": pdf, "url": pdf, "host_type": "publisher"}
        body = {"doi": doi, "title": ASKED, "journal_name": "Journal of Cell Screens", "is_oa": True,
                "best_oa_location": location, "oa_locations": [location]}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    service = hosts("127.0.0.38", {"*": unpaywall})
    rows = {}
    for doi in PDF_CASES:  # one item per batch: no other title of the batch to compare with
        with retriever(tmp_path, {"unpaywall": service.base_url}, sources=["unpaywall"], respect_robots_txt=False,
                       cache=False) as r:
            rows[doi] = r.download([doi]).iloc[0]
    for doi, (_, expected) in PDF_CASES.items():
        row = rows[doi]
        assert row["status"] == expected, (doi, row["status"], row["error"])
        if expected == "wrong_article":
            assert OTHER in row["error"] and "shares" in row["error"] and pd.isna(row["path"])
            assert row["title_match"] < 0.6
        elif doi != "10.1000/right":
            assert row["title_match"] < 0.6  # kept, with the low score as the warning
    assert "document info" in rows["10.1000/info-other"]["error"]
    assert "largest type" in rows["10.1000/headline-other"]["error"]
    assert len(list((tmp_path / "wrong_article").glob("*.pdf"))) == 3


def test_a_search_that_ended_in_an_error_is_not_kept(hosts, tmp_path):
    from paperfetch.errors import ServiceError

    answers = [b"<eSearchResult><ERROR>Invalid query</ERROR></eSearchResult>",
               b"<eSearchResult><Count>0</Count><RetMax>0</RetMax><IdList></IdList></eSearchResult>"]
    calls = []

    def eutils(request):  # noqa: ANN001, ANN202
        calls.append(request.path)
        return Reply(200, answers[min(len(calls), len(answers)) - 1], {"Content-Type": "text/xml"})

    ncbi = hosts("127.0.0.39", {"*": eutils})
    store = MetadataCache(tmp_path / "c.sqlite")
    with retriever(tmp_path, {"ncbi_eutils": ncbi.base_url}, cache=store,
                   http_options={"host_intervals": {host_key(ncbi.base_url): 0.0}}) as r:
        try:
            r.search_pubmed("a query")
        except ServiceError as exc:
            assert "Invalid query" in str(exc)
        else:
            raise AssertionError("ESearch's <ERROR> should raise")
        assert r.search_pubmed("a query").empty and len(calls) == 2  # asked again, not answered from the cache
        assert r.search_pubmed("a query").empty and len(calls) == 2  # the good answer is kept
    store.close()
