"""Every input gets its true row on the item path, whatever goes wrong.

A lone surrogate among plain string inputs (pandas 3 text columns cannot hold one), a batch closed from
another thread (an item never tried is never a final answer), and a candidate URL the client refuses (the
row says so).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from urllib.parse import unquote

import pandas as pd

from paperfetch.demo import fake_pdf
from paperfetch.http.hosts import host_key
from paperfetch.outcomes import outcomes_frame
from paperfetch.redact import redact_frame
from paperfetch.testing import Reply
from tests._quick import retriever

ENDPOINT_KEYS = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi_idconv", "ncbi_eutils", "arxiv", "doi")


def _closed_port() -> str:
    """A loopback address nothing listens on: every request is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


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
        for input_, status, error, url in zip(frame["input"], frame["status"], frame["error"], frame["url"]):
            assert status == "refused_url", (status, error)
            assert ("characters long" if input_ == "10.1000/long" else "cannot be requested") in error, error
            assert "no source offers" not in error
            assert len(url) < 300  # the row shows the URL cut, with its length
    errors = dict(zip(out["input"], out["error"]))
    assert "60,026 characters long" in errors["10.1000/long"]
    assert "cannot be requested" in errors["10.1000/port"] and "cannot be requested" in errors["10.1000/space"]
    assert "60,026 characters long" in via_landing["error"].item()
    assert plan["url"].isna().all() and "characters long" in plan["error"].item()


def _work(doi: str, url: str) -> dict:
    location = {"is_oa": True, "pdf_url": url, "landing_page_url": url, "version": "publishedVersion",
                "source": {"type": "journal"}}
    return {"doi": f"https://doi.org/{doi}", "title": "T", "ids": {"doi": f"https://doi.org/{doi}"},
            "open_access": {"is_oa": True, "oa_url": url}, "best_oa_location": location, "locations": [location]}


def test_a_100_kb_candidate_url_from_any_service_is_refused_url_not_no_open_copy(hosts, tmp_path):
    """A URL longer than any text field a service may carry is still a candidate: the row says it was refused."""
    long_url = "http://127.0.0.36/pdf/" + "b" * 100_000 + ".pdf"
    publisher = hosts("127.0.0.36", {"*": Reply(200, fake_pdf("never asked"), {"Content-Type": "application/pdf"})})

    def openalex(request):  # noqa: ANN001, ANN202
        return Reply(200, json.dumps({"results": [_work("10.1000/huge", long_url)]}).encode(),
                     {"Content-Type": "application/json"})

    def unpaywall(request):  # noqa: ANN001, ANN202
        location = {"url_for_pdf": long_url, "url": long_url, "url_for_landing_page": long_url, "host_type": "publisher"}
        body = {"doi": "10.1000/huge", "title": "T", "is_oa": True, "best_oa_location": location,
                "oa_locations": [location]}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    def crossref(request):  # noqa: ANN001, ANN202
        link = {"URL": long_url, "content-type": "application/pdf", "content-version": "vor"}
        body = {"status": "ok", "message": {"DOI": "10.1000/huge", "title": ["T"], "link": [link]}}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    for n, (name, answer) in enumerate((("openalex", openalex), ("unpaywall", unpaywall), ("crossref", crossref))):
        service = hosts(f"127.0.0.{37 + n}", {"*": answer})
        with retriever(tmp_path / name, {name: service.base_url}, sources=[name], respect_robots_txt=False,
                       cache=False) as r:
            out = r.download(["10.1000/huge"])
        status, error = out["status"].item(), out["error"].item()
        assert status == "refused_url", (name, status, error)
        assert "100,026 characters long" in error and "no source offers" not in error
        assert len(out["url"].item()) < 300
    assert publisher.hits() == 0


# ------------------------------------------------------------------ 3. ten thousand fuzzed inputs, one row each
def _fuzzed_inputs(count: int, seed: int = 20261201) -> list[str]:
    """Identifier-like text with damage a spreadsheet or a scraper produces: lone surrogates, control and
    zero-width characters, percent escapes, stray prefixes and cut or overlong values; a tenth stays valid."""
    import random

    rng = random.Random(seed)
    bases = ["10.1000/abc.def", "doi:10.1000/x", "https://doi.org/10.1000/x", "PMID:12345", "PMC123",
             "arXiv:2101.00001v2", "arXiv:hep-th/9901001", "https://arxiv.org/abs/2101.00001", "pmid 9", "10."]
    noise = ["\ud800", "\udfff", "\x00", "\x1b", "\u200b", "\ufeff", "%ED%A0%80", "%", " ", "\n", "\u2028", "é", "/",
             "\\", "<", "#", "?", "doi:", "https://", "10.", "0" * 40]
    inputs = []
    for n in range(count):
        if n % 10 == 0:
            inputs.append(f"10.1000/fuzz.{n}")
            continue
        text = rng.choice(bases)
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(noise) + text[at:]
        inputs.append(text[: rng.randint(1, len(text))] if rng.random() < 0.2 else text)
    return inputs


def test_ten_thousand_fuzzed_inputs_give_ten_thousand_rows(hosts, tmp_path):
    inputs = _fuzzed_inputs(10_100)
    absent = hosts("127.0.0.96", {"*": Reply(404, b"{}")})
    endpoints = {k: absent.base_url for k in ENDPOINT_KEYS}
    with retriever(tmp_path, endpoints, sources=["openalex"], respect_robots_txt=False, cache=False,
                   http_options={"host_intervals": {host_key(absent.base_url): 0.0}}) as r:
        out = r.download(inputs)
    assert len(out) == len(inputs) and list(out["input"]) == inputs
    statuses = out["status"].astype(str)
    assert statuses.isin(["not_found", "invalid_identifier"]).all(), statuses.value_counts().to_dict()
    assert (statuses[::10] == "not_found").all()  # the valid tenth was asked, and the service said absent
    assert absent.hits() >= len(inputs) // 10 // 50  # OpenAlex was asked for them, 50 DOIs a request
    assert out.loc[statuses == "invalid_identifier", "error"].notna().all()
