"""Each source's quirks, on the 2025-26 recordings (PROVENANCE-3) and the synthetic cassettes.

Unpaywall's placeholder e-mails, HTML 404 and 422; OpenAlex's free singleton and budget headers; the ID
converter's two URLs; arXiv's feed links; Semantic Scholar's batch; bioRxiv's details; Crossref's pool 429 and
validation errors; base URL overrides. Cassettes marked SYNTHETIC in ``cassettes/README.md`` stand in
for answers nobody recorded (an NCBI 429, an OpenAlex budget 429, a Crossref 429, bioRxiv ``details``).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import requests

from paperfetch import Retriever
from paperfetch.config import Identification
from paperfetch.errors import ConfigurationError, MalformedResponse, NetworkError, NotFoundError, RateLimited, ServiceError
from paperfetch.http.headers import RateLimitBudget, parse_rate_limit_budget
from paperfetch.http.outcome import Outcome
from paperfetch.redact import redact_text
from paperfetch.sources import (
    ArxivSource,
    BiorxivSource,
    CrossrefSource,
    NCBIEutilsSource,
    NCBIIdConvSource,
    OpenAlexSource,
    SemanticScholarSource,
    UnpaywallSource,
)
from paperfetch.sources.base import Candidate, Record, RequestSpec, license_key
from paperfetch.sources.biorxiv import biorxiv_license
from paperfetch.sources.pubmed import PubMedSearch
from paperfetch.sources.semanticscholar import s2_id, s2_license
from paperfetch.sources.unpaywall import placeholder_email
from tests.test_sources import IDENTIFICATION, SessionFetcher, cassette_doc, ident, replay, response

# ============================================================================ Unpaywall


@pytest.mark.parametrize(("email", "refused"), [
    ("you@example.com", True), ("someone@EXAMPLE.COM", True), ("a@sub.example.com", True), ("YOUR_EMAIL", True),
    ("your_email@uni.edu", True), (" you@example.com ", True),
    ("you@example.org", True), ("a@sub.example.net", True), ("REDACTED", True), ("redacted@uni.edu", True),
    ("nobody", True), ("me@localhost", True), ("me@uni.", True), ("two words@uni.edu", True), ("a@b@uni.edu", True),
    ("you@uni.example", False), ("jane@uni-example.co.uk", False), ("your.name@your-university.edu", False),
    ("x@examples.co", False), (None, False), ("", False),
])
def test_placeholder_rule_is_unpaywalls_own_and_an_address_shape(email, refused):
    assert placeholder_email(email) is refused


def test_retriever_with_the_old_readme_address_fails_at_construction_saying_what_unpaywall_wants(tmp_path):
    with pytest.raises(ConfigurationError, match="Unpaywall requires a real contact e-mail") as caught:
        Retriever(email="you@example.com", out_dir=tmp_path, cache=False, state="memory", progress=False, verbosity=0)
    assert "example.com" in str(caught.value) and "--email" in str(caught.value)
    with pytest.raises(ConfigurationError, match="placeholder"):
        UnpaywallSource(identification=Identification(email="YOUR_EMAIL@uni.edu"))
    UnpaywallSource(identification=Identification(email="you@uni.example"))  # an address shape off example.* is not refused


def test_unpaywall_plain_html_404_is_not_found_and_the_email_422_is_a_configuration_error():
    source = UnpaywallSource(identification=IDENTIFICATION)
    with replay.use_cassette("unpaywall/v2_errors_404_html_422_email.yaml") as cassette:
        assert source.lookup(SessionFetcher(), [ident("doi:10.5555/unknown-to-unpaywall")]) == {}
        with pytest.raises(ConfigurationError, match="Unpaywall refused the contact e-mail address \\(HTTP 422\\)"):
            source.lookup(SessionFetcher(), [ident("doi:10.1038/nature12373")])
        assert cassette.all_played
    # a 422 about something else is no record for that DOI, as before
    other = response(422, json.dumps({"HTTP_status_code": 422, "error": True, "message": "'x' is an invalid doi"}).encode())
    assert source.classify(other) is Outcome.ABSENT
    assert source.classify(response(422, b"<html>unprocessable</html>", "text/html")) is Outcome.ABSENT


def test_unpaywall_2025_locations_with_deprecated_fields_still_give_candidates_and_oa_date():
    source = UnpaywallSource(identification=IDENTIFICATION)
    with replay.use_cassette("unpaywall/v2_2025_two_dois.yaml"):
        records = source.lookup(SessionFetcher(), [ident("doi:10.1016/j.xgen.2025.100814"), ident("doi:10.1016/j.addr.2015.01.008")])
    body = cassette_doc("unpaywall/v2_2025_two_dois.yaml")["interactions"][0]["response"]["body"]["string"]
    assert '"evidence":"deprecated"' in body.replace(" ", "") and '"url_for_pdf":null' in body.replace(" ", "")
    gold = records["doi:10.1016/j.xgen.2025.100814"]
    assert gold.oa_date == "2025-03-22" and gold.candidates  # url_for_pdf null: the landing page remains
    assert all(c.kind == "landing" for c in gold.candidates)
    assert records["doi:10.1016/j.addr.2015.01.008"].oa_date is not None


# ============================================================================ OpenAlex


def test_openalex_single_work_is_the_free_doi_singleton():
    [spec] = OpenAlexSource().requests_for([ident("doi:10.1093/nar/gkw1164")])
    assert spec.path == "/works/doi:10.1093%2Fnar%2Fgkw1164"
    with replay.use_cassette("openalex/works_doi_10.1093_nar_gkw1164.yaml"):
        records = OpenAlexSource(identification=IDENTIFICATION).lookup(SessionFetcher(), [ident("doi:10.1093/nar/gkw1164")])
    assert records["doi:10.1093/nar/gkw1164"].is_oa is True


@pytest.mark.parametrize(("headers", "spent"), [
    ({"X-RateLimit-Remaining": "0", "X-RateLimit-Credits-Required": "1"}, True),
    ({"x-ratelimit-remaining": "0.5", "x-ratelimit-credits-required": "1"}, True),
    ({"X-RateLimit-Remaining": "1", "X-RateLimit-Credits-Required": "1"}, False),
    ({"X-RateLimit-Remaining": "999", "X-RateLimit-Credits-Required": "10"}, False),
    ({"X-RateLimit-Remaining": "0"}, True),  # none left, the cost not said: the transport holds the host
    ({"X-RateLimit-Credits-Required": "1"}, False),
    ({"X-RateLimit-Remaining": "garbage", "X-RateLimit-Credits-Required": "1"}, False),
    ({"X-RateLimit-Remaining": "nan", "X-RateLimit-Credits-Required": "1"}, False),
    ({"RateLimit-Remaining": "0", "RateLimit-Limit": "100"}, False),  # 2025 Heroku router headers: not the budget
    ({}, False),
])
def test_budget_spent_is_remaining_below_credits_required(headers, spent):
    budget = parse_rate_limit_budget(headers, 0.0)  # the transport's one reader of these headers
    assert (budget is not None and budget.spent) is spent


def test_rate_limit_headers_parse_into_a_budget_and_the_synthetic_budget_429_is_spent():
    [item] = cassette_doc("openalex/works_doi_budget_spent_429.yaml")["interactions"]
    headers = {k: v[0] for k, v in item["response"]["headers"].items()}
    now = 1_780_000_000.0
    assert parse_rate_limit_budget(headers, now) == RateLimitBudget(limit=1000, remaining=0, credits_used=0,
                                                                    credits_required=1, reset_at=now + 43200)
    assert parse_rate_limit_budget(headers, now).spent
    [recorded] = cassette_doc("openalex/works_doi_10.1093_nar_gkw1164.yaml")["interactions"]
    recorded_budget = parse_rate_limit_budget({k: v[0] for k, v in recorded["response"]["headers"].items()}, now)
    assert recorded_budget is None or not recorded_budget.spent
    with replay.use_cassette("openalex/works_doi_budget_spent_429.yaml"), pytest.raises(RateLimited):
        OpenAlexSource(identification=IDENTIFICATION).lookup(SessionFetcher(), [ident("doi:10.1093/nar/gkw1164")])


# ============================================================================ NCBI


def test_idconv_asks_the_new_url_and_reads_the_2025_shape():
    source = NCBIIdConvSource(identification=IDENTIFICATION)
    [spec] = source.requests_for([ident("doi:10.1038/ng.590")])
    assert source.url_for(spec)[0] == "https://pmc.ncbi.nlm.nih.gov/tools/idconv/api/v1/articles/"
    with replay.use_cassette("ncbi_idconv/idconv_2025_shape_two_dois.yaml") as cassette:
        records = source.lookup(SessionFetcher(), [ident("doi:10.1038/ng.590"), ident("doi:10.5555/not-in-pmc")])
        assert cassette.all_played
    assert set(records) == {"doi:10.1038/ng.590"}  # "Identifier not found in PMC": absent
    record = records["doi:10.1038/ng.590"]
    assert (record.pmid, record.pmcid, record.doi) == ("20495566", "PMC2883744", "10.1038/ng.590")  # integer pmid as text


class _FailingNewURL:
    def __init__(self, error: ServiceError, body: bytes) -> None:
        self.error, self.body, self.asked = error, body, []

    def fetch(self, url, *, classify, params=None, headers=None, **kwargs):
        self.asked.append(url)
        if "/tools/idconv/" in url:
            raise self.error
        return response(200, self.body, "application/json")


@pytest.mark.parametrize(("error", "falls_back"), [
    (NetworkError("refused"), True),
    (ServiceError("HTTP 502", status_code=502), True),
    (NotFoundError("no record", status_code=404), False),
    (RateLimited("held", status_code=429), False),
    (ServiceError("HTTP 404 error body", status_code=404), False),
])
def test_idconv_falls_back_to_the_old_url_only_when_the_new_one_is_broken(error, falls_back):
    body = json.dumps({"status": "ok", "records": [{"requested-id": "10.1038/ng.590", "pmid": 20495566, "pmcid": "PMC2883744",
                                                    "doi": "10.1038/ng.590"}]}).encode()
    fetcher = _FailingNewURL(error, body)
    source = NCBIIdConvSource(identification=IDENTIFICATION)
    if falls_back:
        assert source.lookup(fetcher, [ident("doi:10.1038/ng.590")])["doi:10.1038/ng.590"].pmid == "20495566"
        assert fetcher.asked[1] == "https://www.ncbi.nlm.nih.gov/pmc/utils/idconv/v1.0/"
    elif isinstance(error, NotFoundError):
        assert source.lookup(fetcher, [ident("doi:10.1038/ng.590")]) == {}
    else:
        with pytest.raises(type(error)):
            source.lookup(fetcher, [ident("doi:10.1038/ng.590")])
    assert len(fetcher.asked) == (2 if falls_back else 1)


def test_the_ip_in_an_eutils_429_body_reaches_no_exception_log_or_text(caplog):
    ip = "203.0.113.7"  # the synthetic cassette's caller IP (a documentation address)
    caplog.set_level(logging.DEBUG, logger="paperfetch")
    with replay.use_cassette("ncbi_eutils/efetch_429_rate_limit.yaml"), pytest.raises(ServiceError) as caught:
        NCBIEutilsSource(identification=IDENTIFICATION).lookup(SessionFetcher(), [ident("pmid:29915538")])
    shown = " ".join([str(caught.value), repr(caught.value), caught.value.url or "", caplog.text])
    assert ip not in shown
    assert ip not in redact_text(f"the body said {ip} and {caught.value.response.content.decode()}")


# ============================================================================ arXiv


def test_arxiv_2026_feed_gives_https_versioned_links_without_pdf_once():
    with replay.use_cassette("arxiv/query_id_list_1605.08386.yaml"):
        records = ArxivSource().lookup(SessionFetcher(), [ident("arxiv:1605.08386")])
    urls = [c.url for c in records["arxiv:1605.08386"].candidates]
    assert urls == ["https://arxiv.org/pdf/1605.08386", "https://arxiv.org/pdf/1605.08386v1"]
    source = ArxivSource()
    assert source.feed_pdf("http://arxiv.org/pdf/1111.2011v2") == "https://arxiv.org/pdf/1111.2011v2"
    assert source.feed_pdf("https://arxiv.org/pdf/1111.2011v2.pdf") == "https://arxiv.org/pdf/1111.2011v2"
    assert ArxivSource(base_url="http://127.0.0.1:9").feed_pdf("https://arxiv.org/pdf/1605.08386v1") == \
        "http://127.0.0.1:9/pdf/1605.08386v1"
    assert source.feed_pdf("https://mirror.example/pdf/1605.08386v1") == "https://mirror.example/pdf/1605.08386v1"


# ============================================================================ Semantic Scholar


def test_semantic_scholar_batch_maps_every_id_by_position_including_the_null():
    ids = [ident(k) for k in ("doi:10.1038/s42256-024-00832-8", "doi:10.1063/1.4938384", "doi:10.1101/2024.04.01.587366",
                              "doi:10.48550/arxiv.2312.07559", "doi:10.1073/pnas.1414271111", "doi:10.1016/j.xgen.2025.100814")]
    source = SemanticScholarSource(identification=IDENTIFICATION)
    with replay.use_cassette("semanticscholar/paper_batch_six_dois_assembled.yaml") as cassette:
        records = source.lookup(SessionFetcher(), ids)
        assert cassette.all_played
    assert "doi:10.1101/2024.04.01.587366" not in records  # null: exactly that id is not found
    hybrid = records["doi:10.1038/s42256-024-00832-8"]
    [cand] = hybrid.candidates
    assert (cand.url, cand.kind, cand.license, cand.version, cand.host_type) == (
        "https://www.nature.com/articles/s42256-024-00832-8.pdf", "pdf", "cc-by", "publishedVersion", "publisher")
    assert hybrid.pmcid == "PMC11116106" and hybrid.pmid == "38799228" and hybrid.arxiv_id == "2304.05376"
    assert records["doi:10.1063/1.4938384"].candidates == []  # CLOSED, url ""
    assert records["doi:10.48550/arxiv.2312.07559"].candidates == []  # url "", status null
    assert records["doi:10.1073/pnas.1414271111"].candidates[0].license is None  # BRONZE
    gold = records["doi:10.1016/j.xgen.2025.100814"].candidates[0]
    assert gold.kind == "landing" and gold.url == "https://doi.org/10.1016/j.xgen.2025.100814"


def test_semantic_scholar_posts_json_with_the_key_as_a_header():
    source = SemanticScholarSource(identification=IDENTIFICATION)
    [spec] = source.requests_for([ident("doi:10.1/a"), ident("pmid:123"), ident("pmcid:PMC2323736"), ident("arxiv:2106.15928")])
    assert json.loads(spec.body or "") == {"ids": ["DOI:10.1/a", "PMID:123", "PMCID:2323736", "ARXIV:2106.15928"]}
    assert spec.params == {"fields": "openAccessPdf,externalIds,title,year"}
    options = source.send_options(spec)
    assert options["method"] == "POST" and options["headers"]["x-api-key"] == "s2-secret-key"
    assert options["headers"]["Content-Type"] == "application/json"
    assert "x-api-key" not in SemanticScholarSource().send_options(spec)["headers"]
    assert source.url_for(spec)[1] == spec.params  # the key never goes into the query
    assert s2_id(ident("pmcid:PMC1")) == "PMCID:1"


def test_semantic_scholar_answer_of_the_wrong_length_is_malformed():
    source = SemanticScholarSource()
    [spec] = source.requests_for([ident("doi:10.1/a"), ident("doi:10.1/b")])
    with pytest.raises(MalformedResponse, match="2 entries"):
        source.read(b"[null]", spec)
    with pytest.raises(MalformedResponse):
        source.read(b'{"error": "x"}', spec)


@pytest.mark.parametrize(("raw", "licence"), [
    ("CCBY", "cc-by"), ("CCBYNCND", "cc-by-nc-nd"), ("CCBYSA", "cc-by-sa"), ("CC0", "cc0"), ("CC-BY-NC", "cc-by-nc"),
    ("publisher-specific-oa", "publisher-specific-oa"), ("CCBYXX", "ccbyxx"), (None, None), ("", None),
])
def test_semantic_scholar_licences_read_like_the_other_sources(raw, licence):
    assert s2_license(raw) == licence


# ============================================================================ bioRxiv / medRxiv


def test_biorxiv_details_latest_version_licence_jats_and_published_doi():
    doi = "10.64898/2025.12.01.000003"
    body = json.dumps({"messages": [{"status": "ok"}], "collection": [
        {"doi": doi, "version": "1", "license": "cc_no", "date": "2025-12-01", "jatsxml": "https://x/v1.xml", "published": "NA",
         "server": "medrxiv", "title": "v1"},
        {"doi": doi, "version": "3", "license": "cc_by", "date": "2026-02-01", "jatsxml": "https://x/v3.xml", "published": "NA",
         "server": "medrxiv", "title": "v3"},
        {"doi": doi, "version": "2", "license": "cc_by", "date": "2026-01-01", "jatsxml": "https://x/v2.xml",
         "published": "10.1000/journal", "server": "medrxiv", "title": "v2"},
        {"doi": "10.1101/other", "version": "9", "server": "medrxiv"}]}).encode()
    source = BiorxivSource()
    spec = source.server_spec("medrxiv", ident(f"doi:{doi}"))
    assert spec.path == "/details/medrxiv/10.64898/2025.12.01.000003"
    record = source.read(body, spec)[f"doi:{doi}"]
    assert (record.title, record.year, record.license, record.jats_url, record.published_doi, record.journal) == (
        "v3", 2026, "cc-by", "https://x/v3.xml", None, "medRxiv")
    [cand] = record.candidates
    assert (cand.url, cand.version, cand.license, cand.host_type) == (
        f"https://www.medrxiv.org/content/{doi}v3.full.pdf", "submittedVersion", "cc-by", "repository")
    assert source.read(b'{"messages":[{"status":"no posts found"}],"collection":[]}', spec) == {}
    assert biorxiv_license("cc_by_nc_nd") == "cc-by-nc-nd" and biorxiv_license("cc_no") is None


def test_biorxiv_names_its_www_hosts_for_pacing_and_refuses_dois_that_are_not_preprints():
    assert BiorxivSource().related_hosts() == ("https://www.biorxiv.org", "https://www.medrxiv.org")
    assert BiorxivSource(base_url="http://127.0.0.1:9").related_hosts() == ("http://127.0.0.1:9", "http://127.0.0.1:9")
    assert BiorxivSource().requests_for([ident("doi:10.1038/ng.590")]) == []
    with pytest.raises(ValueError):
        BiorxivSource().server_spec("biorxiv", ident("doi:10.1101/.."))


# ============================================================================ Crossref (synthetic 429, real 2026 400s)


def test_crossref_public_pool_429_is_a_rate_limit_with_its_pool_headers():
    with replay.use_cassette("crossref/works_429_public_pool.yaml"), pytest.raises(RateLimited) as caught:
        CrossrefSource(identification=IDENTIFICATION).lookup(SessionFetcher(), [ident("doi:10.1371/journal.pone.0033693")])
    headers = caught.value.response.headers if caught.value.response is not None else {}
    assert headers.get("x-concurrency-limit") == "1" and headers.get("x-rate-limit-limit") == "5"


def test_crossref_2026_validation_failures_are_fatal_not_absent():
    doc = cassette_doc("crossref/errors_400_2026.yaml")
    for item in doc["interactions"]:
        assert item["response"]["status"]["code"] == 400
        assert json.loads(item["response"]["body"]["string"])["message-type"] == "validation-failure"
        assert item["response"]["headers"]["x-concurrency-limit"] == ["1"]
        fake = requests.Response()
        fake.status_code = 400
        assert CrossrefSource().classify(fake) is Outcome.FATAL


def test_base_url_overrides_of_the_new_sources_keep_their_paths(tmp_path):
    from paperfetch.settings import load_settings

    endpoints = load_settings(environ={"PAPERFETCH_SEMANTICSCHOLAR_URL": "http://127.0.0.1:8001",
                                       "PAPERFETCH_BIORXIV_URL": "http://127.0.0.1:8002/"},
                              config_path=tmp_path / "none.toml").endpoints
    s2, bio = SemanticScholarSource(base_url=endpoints["semanticscholar"]), BiorxivSource(base_url=endpoints["biorxiv"])
    assert s2.url_for(s2.requests_for([ident("doi:10.1/a")])[0])[0] == "http://127.0.0.1:8001/graph/v1/paper/batch"
    assert bio.url_for(bio.requests_for([ident("doi:10.1101/x")])[0])[0] == "http://127.0.0.1:8002/details/biorxiv/10.1101/x"
    with pytest.raises(ConfigurationError, match="scheme, host and port"):
        BiorxivSource(base_url="http://127.0.0.1:8002/details")


def test_request_spec_without_a_body_is_a_get():
    spec = RequestSpec(path="/x", params={}, ids=())
    assert spec.body is None and OpenAlexSource().send_options(spec) == {}


def test_semantic_scholar_batch_goes_out_as_a_json_post_with_the_key_header_through_the_real_transport():
    from paperfetch import FakeClock, HttpClient
    from paperfetch.testing import LoopbackHost, Reply

    seen = []

    def answer(request):
        seen.append(request)
        return Reply(200, b'[null, {"externalIds": {"DOI": "10.1/b"}, "openAccessPdf": {"url": "https://x.org/b.pdf", '
                          b'"status": "GREEN", "license": "CCBY"}}]', {"Content-Type": "application/json"})

    with LoopbackHost("127.0.0.1", {"*": answer}) as host:
        source = SemanticScholarSource(base_url=host.base_url, identification=IDENTIFICATION)
        client = HttpClient(clock=FakeClock(), max_retries=0, verbosity=0, respect_robots_txt=False)
        records = source.lookup(client, [ident("doi:10.1/a"), ident("doi:10.1/b")])
    [request] = seen
    assert request.method == "POST" and request.path == "/graph/v1/paper/batch"
    assert json.loads(request.body) == {"ids": ["DOI:10.1/a", "DOI:10.1/b"]}
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert headers["x-api-key"] == "s2-secret-key" and headers["content-type"] == "application/json"
    assert "s2-secret-key" not in request.query
    assert set(records) == {"doi:10.1/b"} and records["doi:10.1/b"].candidates[0].license == "cc-by"


def test_an_email_refusal_is_a_configuration_error_warned_once_and_unpaywall_is_not_asked_again(tmp_path, caplog):
    from paperfetch.testing import LoopbackHost, Reply

    refusal = Reply(422, json.dumps({"HTTP_status_code": 422, "error": True,
                                     "message": "Email address required in API call, see http://unpaywall.org/products/api"}),
                    {"Content-Type": "application/json"})
    caplog.set_level(logging.WARNING, logger="paperfetch")
    with LoopbackHost("127.0.0.1", {"*": refusal}) as unpaywall, \
            LoopbackHost("127.0.0.1", {"*": Reply(404, b"{}", {"Content-Type": "application/json"})}) as nothing:
        endpoints = {name: nothing.base_url for name in ("openalex", "crossref", "europepmc", "doi", "semanticscholar")}
        with Retriever(email="someone@uni.edu", out_dir=tmp_path, endpoints={**endpoints, "unpaywall": unpaywall.base_url},
                       sources=["unpaywall"], cache=False, state="memory", progress=False, verbosity=0, workers=1,
                       respect_robots_txt=False, resume=False) as r:
            out = r.download(["10.1000/a", "10.1000/b", "10.1000/c"])
            asked = unpaywall.hits()
            again = r.download(["10.1000/d", "10.1000/e"])
            assert unpaywall.hits() == asked  # the refusal is remembered: nothing more is asked
    # Phase 1: lookups already planned in the same batch still go out (one each); stopping them is the transport's.
    assert 1 <= asked <= 3
    warnings = [rec for rec in caplog.records if "Unpaywall refused the contact e-mail" in rec.getMessage()]
    assert len(warnings) == 1
    errors = out["error"].dropna().tolist()
    assert len(errors) == asked and all("Unpaywall requires a real contact e-mail" in e for e in errors)
    assert "not_found" not in set(out["status"].iloc[:asked])  # never "no such record" for the e-mail's refusal
    assert set(again["status"]) == {"not_found"}


@pytest.mark.parametrize(("raw", "key"), [
    ("cc by", "cc-by"), ("cc by-nc-nd", "cc-by-nc-nd"), ("CC BY-NC", "cc-by-nc"), ("cc_by_sa", "cc-by-sa"), ("cc-by", "cc-by"),
    ("CCBYNCND", "cc-by-nc-nd"), ("cc0", "cc0"), ("CC 0", "cc0"), ("https://creativecommons.org/licenses/by/4.0/", "cc-by"),
    ("http://creativecommons.org/licenses/by-nc-nd/3.0", "cc-by-nc-nd"), ("https://creativecommons.org/publicdomain/zero/1.0/", "cc0"),
    ("other-oa", "other-oa"), ("http://www.springer.com/tdm", "http://www.springer.com/tdm"), ("", None), (None, None),
])
def test_licences_have_one_form_whichever_source_names_them(raw, key):
    """Europe PMC's ``cc by``, bioRxiv's ``cc_by``, Crossref's URL and OpenAlex's ``cc-by`` meet in one column as one id."""
    assert license_key(raw) == key
    assert Candidate("https://x/p.pdf", "any", license=raw).license == key
    assert Record(license=raw).license == key



class _RateLimitedNCBI:
    """A fetcher whose every answer is E-utilities' 429 body: it hands that answer to the caller's classifier, as
    the transport does, then refuses."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def fetch(self, url: str, *, classify: Any, **options: Any) -> requests.Response:
        assert classify(response(429, self.body, "application/json")) == Outcome.RETRY
        raise ServiceError("429 from eutils", status_code=429, url=url)


def _echoing_ncbi_body(echoed: str) -> bytes:
    return json.dumps({"error": "API rate limit exceeded", "api-key": echoed, "count": "11", "limit": "10"}).encode()


@pytest.mark.parametrize("path", ["lookup", "search"])
def test_an_ncbi_rate_limit_body_echoing_the_callers_address_is_masked_wherever_it_is_written_later(path):
    echoed = f"198.51.100.{77 if path == 'lookup' else 78}"  # E-utilities echoes the caller's IP when no key was sent
    assert echoed in redact_text(f"answer from {echoed}")  # nothing masks it before NCBI has echoed it
    fetcher = _RateLimitedNCBI(_echoing_ncbi_body(echoed))
    source = NCBIEutilsSource(identification=IDENTIFICATION)
    with pytest.raises(ServiceError):
        if path == "lookup":
            fetcher.fetch("https://eutils.example/esummary", classify=source.classify)
        else:
            PubMedSearch(source).esearch(fetcher, "stem water")
    assert echoed not in redact_text(f"429 from eutils: {fetcher.body.decode()}")
