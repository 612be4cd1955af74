"""Metadata sources against real recorded responses (cassettes built from fixtures/real), through the real transport.

1. ``SourceContract``: one contract every source passes, subclassed per source with its cassette
   (the shape of requests-cache's ``tests/integration/base_storage_test.py``).
2. Parser tests pinning values read from each real body.
3. Real error responses: Crossref 404/500/504, the ID converter's 404 error, arXiv's 400, NCBI's 414.

Nothing here reaches the network: cassettes replay with ``record_mode="none"``, and an unmatched
request fails the test instead of going out.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlsplit

import pytest
import requests
import yaml

from paperfetch import FakeClock, HttpClient
from paperfetch.config import Identification
from paperfetch.errors import ConfigurationError, NotFoundError, ServiceError
from paperfetch.http.outcome import Outcome
from paperfetch.ids import Identifier, IdType, parse_identifier
from paperfetch.sources import (
    SOURCES,
    ArxivSource,
    BiorxivSource,
    CrossrefSource,
    EuropePMCSource,
    NCBIEutilsSource,
    NCBIIdConvSource,
    OpenAlexSource,
    SemanticScholarSource,
    Source,
    UnpaywallSource,
    get_source,
)
from paperfetch.sources.base import Candidate, RequestSpec
from paperfetch.testing import CASSETTE_FILTER_QUERY_PARAMETERS
from tests._fixtures import CASSETTES as BUILT_CASSETTES
from tests._fixtures import REAL_FIXTURES, replayer
from tests._fixtures import builder as cassette_builder
from tests._fixtures import cassette as built_cassette

REPO = Path(__file__).resolve().parents[1]
CASSETTES = Path(os.environ.get("PAPERFETCH_CASSETTE_DIR") or BUILT_CASSETTES)
FILTER_QUERY_PARAMETERS = CASSETTE_FILTER_QUERY_PARAMETERS

replay = replayer(CASSETTES)

EMAIL = "your.name@your-university.edu"  # you@example.com is refused before any request (Unpaywall's rule)
#: Every secret a source could send; none may reach a cassette.
IDENTIFICATION = Identification(email=EMAIL, openalex_api_key="oa-secret-key", ncbi_api_key="ncbi-secret-key",
                                s2_api_key="s2-secret-key")


class SessionFetcher(HttpClient):
    """The real transport (``paperfetch.HttpClient.fetch``) on a fake clock, so pacing never waits in real
    time; ``sent`` lists every URL put on the wire, query included. One attempt per request: each cassette
    holds one recorded answer per request."""

    def __init__(self) -> None:
        super().__init__(clock=FakeClock(), max_retries=0, verbosity=0)
        self.sent: list[str] = []
        self._session.hooks["response"].append(lambda r, *args, **kwargs: self.sent.append(r.request.url or ""))


ident = Identifier.from_key  # an Identifier from its canonical key, unvalidated


def response(status: int, body: bytes = b"", content_type: str = "text/plain") -> requests.Response:
    resp = requests.Response()
    resp.status_code = status
    resp._content = body
    resp.headers["Content-Type"] = content_type
    return resp


def cassette_doc(name: str) -> dict[str, Any]:
    return yaml.safe_load(built_cassette(name, CASSETTES).read_text(encoding="utf-8"))


def bodies(name: str) -> list[bytes]:
    return [i["response"]["body"]["string"].encode("utf-8") for i in cassette_doc(name)["interactions"]]


def parse_all(source: Source, name: str, keys: list[str]) -> dict[str, Any]:
    """Parse each recorded body with the spec the source builds for *keys* (specs and interactions align)."""
    specs, recorded = source.requests_for([ident(k) for k in keys]), bodies(name)
    assert len(specs) <= len(recorded)
    found: dict[str, Any] = {}
    for spec, body in zip(specs, recorded):
        found.update(source.parse(body, spec))
    return found


# ============================================================================ 1. the contract


class SourceContract:
    """What every source must do; subclasses name the source, a cassette, the ids and pinned values."""

    source_cls: ClassVar[type[Source]]
    cassette: ClassVar[str]
    ids: ClassVar[list[str]]
    #: id key -> pinned Record fields; "first_candidate" pins candidates[0].url. Ids not listed must be absent.
    expected: ClassVar[dict[str, dict[str, Any]]]
    #: identity parameters the service must receive (and the cassette must not keep)
    identity_keys: ClassVar[set[str]] = set()

    def make(self, **kwargs: Any) -> Source:
        return self.source_cls(identification=IDENTIFICATION, **kwargs)

    def lookup(self) -> tuple[dict[str, Any], SessionFetcher]:
        fetcher = SessionFetcher()
        with replay.use_cassette(self.cassette) as cassette:
            records = self.make().lookup(fetcher, [ident(k) for k in self.ids])
            assert cassette.all_played, f"{self.cassette}: not every interaction was requested"
        return records, fetcher

    def test_lookup_keys_records_by_requested_id_and_pins_values(self) -> None:
        records, _ = self.lookup()
        assert set(records) == set(self.expected)
        assert set(records) <= set(self.ids)
        for key, fields in self.expected.items():
            record = records[key]
            for name, value in fields.items():
                actual = record.candidates[0].url if name == "first_candidate" else getattr(record, name)
                assert actual == value, (key, name)

    def test_candidates_are_http_urls_naming_their_source(self) -> None:
        records, _ = self.lookup()
        for record in records.values():
            for candidate in record.candidates:
                assert isinstance(candidate, Candidate)
                assert urlsplit(candidate.url).scheme in ("http", "https")
                assert candidate.source == self.source_cls.name
                assert candidate.kind in ("pdf", "landing")

    def test_identity_is_sent_but_never_stored(self) -> None:
        source = self.make()
        assert set(source.identity_params()) == self.identity_keys
        for spec in source.requests_for([ident(k) for k in self.ids]):
            _, params = source.url_for(spec)
            assert source.identity_params().items() <= params.items()
            assert not set(spec.params) & set(FILTER_QUERY_PARAMETERS)  # identity only enters in url_for
        _, fetcher = self.lookup()
        for url in fetcher.sent:
            assert self.identity_keys <= {k for k, _ in parse_qsl(urlsplit(url).query)}
        stored = built_cassette(self.cassette, CASSETTES).read_text(encoding="utf-8")
        for secret in IDENTIFICATION.secrets():
            assert secret not in stored and secret.replace("@", "%40") not in stored
        for item in cassette_doc(self.cassette)["interactions"]:
            query = {k for k, _ in parse_qsl(urlsplit(item["request"]["uri"]).query)}
            assert not query & set(FILTER_QUERY_PARAMETERS)
            assert not {h.lower() for h in item["request"]["headers"]} & {"authorization", "user-agent"}

    @pytest.mark.parametrize(
        ("status", "outcome"),
        [(200, Outcome.OK), (404, Outcome.ABSENT), (503, Outcome.RETRY), (429, Outcome.RETRY)],
    )
    def test_classify_reads_status_codes(self, status: int, outcome: Outcome) -> None:
        assert self.make().classify(response(status)) is outcome

    def _assert_origin_replaced(self, source: Source, origin: str, default: Source) -> None:
        for spec, default_spec in zip(source.requests_for([ident(k) for k in self.ids]),
                                      default.requests_for([ident(k) for k in self.ids]), strict=True):
            url, _ = source.url_for(spec)
            default_url, _ = default.url_for(default_spec)
            assert default_url.startswith(self.source_cls.default_base_url + "/")
            assert url == origin + default_url[len(self.source_cls.default_base_url):]
            assert urlsplit(url).path == urlsplit(default_url).path

    def test_base_url_argument_replaces_scheme_host_and_port_keeping_the_path(self) -> None:
        self._assert_origin_replaced(self.make(base_url="http://127.0.0.1:8765"), "http://127.0.0.1:8765", self.make())

    def test_base_url_from_the_settings_replaces_origin_and_the_argument_wins(self, tmp_path: Path) -> None:
        from paperfetch.settings import load_settings

        default = self.make()
        assert default.env_var == f"PAPERFETCH_{self.source_cls.name.upper()}_URL"
        environ = {default.env_var: "http://localhost:9/"}
        settings = load_settings(environ=environ, config_path=tmp_path / "none.toml")
        self._assert_origin_replaced(self.make(base_url=settings.endpoints[self.source_cls.name]), "http://localhost:9", default)
        given = load_settings(environ=environ, config_path=tmp_path / "none.toml",
                              endpoints={self.source_cls.name: "https://mirror.example:8443"})
        self._assert_origin_replaced(self.make(base_url=given.endpoints[self.source_cls.name]), "https://mirror.example:8443",
                                     default)

    def test_requests_are_batched_and_skip_ids_it_cannot_take(self) -> None:
        source = self.make()
        refused = next(t for t in IdType if t not in source.accepts)
        stranger = {IdType.DOI: "doi:10.1000/xyz", IdType.PMID: "pmid:123", IdType.PMCID: "pmcid:PMC1",
                    IdType.ARXIV: "arxiv:1706.03762"}[refused]
        assert source.requests_for([ident(stranger)]) == []
        specs = source.requests_for([ident(k) for k in [*self.ids, stranger]])
        assert all(1 <= len(spec.ids) <= source.batch_size for spec in specs)
        assert sorted(i.key for spec in specs for i in spec.ids) == sorted(self.ids)
        assert all(isinstance(spec, RequestSpec) for spec in specs)

    def test_pacing_default_is_a_positive_published_interval(self) -> None:
        assert self.source_cls.min_interval_s > 0
        assert 0 < self.make().interval_s <= self.source_cls.min_interval_s


class TestUnpaywallContract(SourceContract):
    source_cls = UnpaywallSource
    cassette = "unpaywall/v2_five_dois.yaml"
    identity_keys = {"email"}
    ids = ["doi:10.1038/nature12373", "doi:10.1103/physreve.88.012814", "doi:10.1016/j.tmaid.2020.101663",
           "doi:10.1016/j.envint.2020.105730", "doi:10.1016/j.jns.2020.116832"]
    expected = {
        "doi:10.1038/nature12373": {"title": "Nanometre-scale thermometry in a living cell", "year": 2013,
                                    "journal": "Nature", "oa_status": "green", "is_oa": True,
                                    "first_candidate": "https://dash.harvard.edu/bitstream/1/12285462/1/Nanometer-Scale%20Thermometry.pdf"},
        "doi:10.1103/physreve.88.012814": {"oa_status": "hybrid",
                                           "first_candidate": "https://link.aps.org/accepted/10.1103/PhysRevE.88.012814"},
        "doi:10.1016/j.tmaid.2020.101663": {"oa_status": "bronze", "first_candidate": "https://doi.org/10.1016/j.tmaid.2020.101663"},
        "doi:10.1016/j.envint.2020.105730": {"oa_status": "gold", "license": "cc-by-nc-nd"},
        "doi:10.1016/j.jns.2020.116832": {"journal": "Journal of the Neurological Sciences", "year": 2020},
    }


class TestOpenAlexSingleWorkContract(SourceContract):
    source_cls = OpenAlexSource
    cassette = "openalex/works_doi_10.1101_097196.yaml"
    identity_keys = {"mailto", "api_key"}
    ids = ["doi:10.1101/097196"]
    expected = {"doi:10.1101/097196": {
        "title": "A Data Citation Roadmap for Scholarly Data Repositories", "year": 2016, "oa_status": "green",
        "first_candidate": "https://www.biorxiv.org/content/biorxiv/early/2017/10/09/097196.full.pdf"}}


class TestOpenAlexBatchContract(SourceContract):
    source_cls = OpenAlexSource
    cassette = "openalex/works_filter_four_dois.yaml"
    identity_keys = {"mailto", "api_key"}
    ids = ["doi:10.7717/peerj.4375", "doi:10.1038/hdy.2013.26", "doi:10.1007/s00120-007-1345-2", "doi:10.1371/notarealdoi"]
    expected = {
        "doi:10.7717/peerj.4375": {"pmid": "29456894", "pmcid": "PMC5815332", "journal": "PeerJ", "year": 2018,
                                   "first_candidate": "https://peerj.com/articles/4375.pdf"},
        "doi:10.1038/hdy.2013.26": {"oa_status": "bronze", "first_candidate": "https://www.nature.com/articles/hdy201326.pdf"},
        "doi:10.1007/s00120-007-1345-2": {"oa_status": "closed", "is_oa": False, "candidates": [], "pmid": "17435989"},
    }


class TestCrossrefContract(SourceContract):
    source_cls = CrossrefSource
    cassette = "crossref/works_five_dois.yaml"
    identity_keys = {"mailto"}
    ids = ["doi:10.1016/j.neurobiolaging.2010.03.024", "doi:10.1002/jor.1100150407", "doi:10.1038/srep16696",
           "doi:10.1109/icdcsw.2003.1203662", "doi:10.3892/ijo_00000353"]
    expected = {
        "doi:10.1016/j.neurobiolaging.2010.03.024": {"journal": "Neurobiology of Aging", "year": 2012, "candidates": []},
        "doi:10.1002/jor.1100150407": {"year": 1997, "candidates": []},
        "doi:10.1038/srep16696": {"journal": "Scientific Reports", "year": 2015,
                                  "license": "cc-by",
                                  "first_candidate": "https://www.nature.com/articles/srep16696.pdf"},
        "doi:10.1109/icdcsw.2003.1203662": {"year": None,  # issued is {"date-parts": [[null]]} in the record
                                            "title": "Accurate and explicit differentiation of wireless and congestion losses"},
        "doi:10.3892/ijo_00000353": {"journal": "International Journal of Oncology", "year": 2009},
    }


class TestEuropePMCContract(SourceContract):
    source_cls = EuropePMCSource
    cassette = "europepmc/search_core_four_ids.yaml"
    ids = ["doi:10.1002/hpja.70059", "pmid:39709208", "pmcid:PMC12174270", "doi:10.1371/notarealdoi"]
    expected = {
        "doi:10.1002/hpja.70059": {"pmid": "40437959", "pmcid": "PMC12120539", "year": 2025, "is_oa": True,
                                   "license": "cc-by-nc-nd",
                                   "first_candidate": "https://europepmc.org/articles/PMC12120539?pdf=render"},
        "pmid:39709208": {"pmcid": "PMC12124214", "doi": "10.1016/s0140-6736(24)02716-8", "is_oa": False,
                          "journal": "Lancet (London, England)",
                          "first_candidate": "https://europepmc.org/articles/PMC12124214?pdf=render"},
        "pmcid:PMC12174270": {"pmid": "40377773", "doi": "10.1007/s10120-025-01625-7"},
    }


class TestNCBIIdConvContract(SourceContract):
    source_cls = NCBIIdConvSource
    cassette = "ncbi_idconv/idconv_doi_10.1038_ng.590.yaml"
    identity_keys = {"tool", "email", "api_key"}
    ids = ["doi:10.1038/ng.590"]
    expected = {"doi:10.1038/ng.590": {"pmid": "20495566", "pmcid": "PMC2883744", "doi": "10.1038/ng.590", "candidates": []}}


class TestNCBIEutilsContract(SourceContract):
    source_cls = NCBIEutilsSource
    cassette = "ncbi_eutils/efetch_pubmed_three_pmids.yaml"
    identity_keys = {"tool", "email", "api_key"}
    ids = ["pmid:34709863", "pmid:34529508", "pmid:35108047"]
    expected = {
        "pmid:34709863": {"title": "COVID-19, Racism, and Public Health Infrastructure.", "year": 2021,
                          "journal": "American journal of public health", "pmcid": "PMC8561068",
                          "doi": "10.2105/ajph.2021.306505"},
        "pmid:34529508": {"pmcid": "PMC8561171", "doi": "10.2105/ajph.2021.306453"},
        "pmid:35108047": {"pmcid": "PMC8809544", "doi": "10.1126/sciadv.abl6449", "journal": "Science advances", "year": 2022},
    }


class TestUnpaywall2025Contract(SourceContract):
    """The 2025 schema: answered from OpenAlex's data, evidence/updated "deprecated", oa_date, url_for_pdf null."""

    source_cls = UnpaywallSource
    cassette = "unpaywall/v2_2025_two_dois.yaml"
    identity_keys = {"email"}
    ids = ["doi:10.1016/j.xgen.2025.100814", "doi:10.1016/j.addr.2015.01.008"]
    expected = {
        "doi:10.1016/j.xgen.2025.100814": {"oa_status": "gold", "is_oa": True, "oa_date": "2025-03-22"},
        "doi:10.1016/j.addr.2015.01.008": {"oa_status": "hybrid", "is_oa": True},
    }


class TestOpenAlexFreeSingletonContract(SourceContract):
    """A 2025 work body, asked as /works/doi:{doi} (free) instead of /works/https://doi.org/{doi} (1 credit)."""

    source_cls = OpenAlexSource
    cassette = "openalex/works_doi_10.1016_j.xgen.2025.100814.yaml"
    identity_keys = {"mailto", "api_key"}
    ids = ["doi:10.1016/j.xgen.2025.100814"]
    expected = {"doi:10.1016/j.xgen.2025.100814": {"oa_status": "gold", "is_oa": True, "year": 2025}}


class TestSemanticScholarContract(SourceContract):
    """A real POST /paper/batch answer: in request order, null for the unknown first id."""

    source_cls = SemanticScholarSource
    cassette = "semanticscholar/paper_batch_four_ids_first_null.yaml"
    ids = ["doi:10.5555/not-in-semantic-scholar", "doi:10.2139/ssrn.288970", "doi:10.2139/ssrn.2250500", "doi:10.1257/rct.1355"]
    expected = {
        "doi:10.2139/ssrn.288970": {"year": 2001, "first_candidate": "http://papers.nber.org/papers/w8841.pdf",
                                    "oa_status": "green"},
        "doi:10.2139/ssrn.2250500": {"year": 2013, "doi": "10.2139/ssrn.2250500",
                                     "title": "The Miracle of Microfinance? Evidence from a Randomized Evaluation"},
        "doi:10.1257/rct.1355": {"candidates": [], "year": 2023, "is_oa": None},
    }

    def test_requests_are_batched_and_skip_ids_it_cannot_take(self) -> None:  # it takes every id type
        source = self.make()
        assert source.accepts == frozenset(IdType)
        specs = source.requests_for([ident(k) for k in self.ids * 200])  # 800, deduplicated to 4
        assert [len(spec.ids) for spec in specs] == [4]
        many = source.requests_for([ident(f"doi:10.5555/{n}") for n in range(1001)])
        assert [len(spec.ids) for spec in many] == [500, 500, 1]


class TestBiorxivContract(SourceContract):
    """SYNTHETIC details answers (none recorded), on the Crossref record of the same preprint."""

    source_cls = BiorxivSource
    cassette = "biorxiv/details_two_dois.yaml"
    ids = ["doi:10.1101/2024.04.01.587366", "doi:10.64898/2025.12.01.000001"]
    expected = {"doi:10.1101/2024.04.01.587366": {
        "published_doi": "10.1016/j.xgen.2025.100814", "license": "cc-by-nc-nd", "year": 2024, "journal": "bioRxiv",
        "jats_url": "https://www.biorxiv.org/content/early/2024/04/01/2024.04.01.587366.source.xml",
        "first_candidate": "https://www.biorxiv.org/content/10.1101/2024.04.01.587366v1.full.pdf"}}

    def test_requests_are_batched_and_skip_ids_it_cannot_take(self) -> None:
        source = self.make()
        assert source.requests_for([ident("pmid:123"), ident("doi:10.1000/not-a-preprint")]) == []
        specs = source.requests_for([ident(k) for k in self.ids])
        # one request per DOI and server: bioRxiv first, medRxiv asked only when bioRxiv does not know it
        assert [(spec.path.split("/")[2], spec.ids[0].key) for spec in specs] == [
            (server, key) for key in self.ids for server in ("biorxiv", "medrxiv")]


class TestArxivContract(SourceContract):
    source_cls = ArxivSource
    cassette = "arxiv/query_id_list_three.yaml"
    ids = ["arxiv:1605.08386", "arxiv:1707.08567", "arxiv:astro-ph/0601001"]
    expected = {
        "arxiv:1605.08386": {"title": "Heat-bath random walks with Markov bases", "year": 2016,
                             "first_candidate": "https://arxiv.org/pdf/1605.08386"},
        "arxiv:1707.08567": {"year": 2017, "arxiv_id": "1707.08567"},
        "arxiv:astro-ph/0601001": {"year": 2006, "arxiv_id": "astro-ph/0601001",
                                   "first_candidate": "https://arxiv.org/pdf/astro-ph/0601001"},
    }


# ============================================================================ 2. parsers on each real body


def test_unpaywall_ranks_best_location_first_then_the_others_without_repeats() -> None:
    records = parse_all(UnpaywallSource(identification=IDENTIFICATION), "unpaywall/v2_five_dois.yaml",
                        TestUnpaywallContract.ids)
    assert [(c.url, c.kind, c.version) for c in records["doi:10.1038/nature12373"].candidates] == [
        ("https://dash.harvard.edu/bitstream/1/12285462/1/Nanometer-Scale%20Thermometry.pdf", "pdf", "publishedVersion"),
        ("http://nrs.harvard.edu/urn-3:HUL.InstRepos:12285462", "landing", "publishedVersion"),
        ("http://europepmc.org/articles/pmc4221854?pdf=render", "pdf", "acceptedVersion"),
        ("http://europepmc.org/articles/pmc4221854", "landing", "acceptedVersion"),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC4221854", "landing", "acceptedVersion"),
        ("http://arxiv.org/pdf/1304.1068", "pdf", "submittedVersion"),
        ("http://arxiv.org/abs/1304.1068", "landing", "submittedVersion"),
    ]
    aps = records["doi:10.1103/physreve.88.012814"].candidates[0]
    assert (aps.host_type, aps.version) == ("publisher", "acceptedVersion")
    assert aps.license.startswith("publisher-specific, author manuscript")
    # bronze with url_for_pdf null: only landing pages to scan
    assert {c.kind for c in records["doi:10.1016/j.tmaid.2020.101663"].candidates} == {"landing"}
    envint = records["doi:10.1016/j.envint.2020.105730"]
    assert [c.url for c in envint.candidates] == ["https://doi.org/10.1016/j.envint.2020.105730",
                                                  "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC7151430"]
    jns = records["doi:10.1016/j.jns.2020.116832"].candidates[0]
    assert (jns.url, jns.kind) == ("https://doi.org/10.1016/j.jns.2020.116832", "pdf")


def test_unpaywall_requires_an_email_and_reads_422_as_absent() -> None:
    with pytest.raises(ConfigurationError, match="e-mail"):
        UnpaywallSource()
    source = UnpaywallSource(identification=IDENTIFICATION)
    assert source.classify(response(422, b'{"error": true}', "application/json")) is Outcome.ABSENT
    assert UnpaywallSource.min_interval_s == 0.1


@pytest.mark.parametrize(
    ("doi", "title", "journal", "first_pdf"),
    [
        ("10.1371/journal.pone.0000030", "Triose Phosphate Isomerase Deficiency Is Caused by Altered "
         "Dimerization\u2013Not Catalytic Inactivity\u2013of the Mutant Enzymes", "PLoS ONE",
         "https://journals.plos.org/plosone/article/file?id=10.1371/journal.pone.0000030&type=printable"),
        ("10.1155/2012/291294", None, "Pulmonary Medicine", "https://downloads.hindawi.com/journals/pm/2012/291294.pdf"),
        ("10.1038/hdy.2013.26", None, "Heredity", "https://www.nature.com/articles/hdy201326.pdf"),
        ("10.4018/978-1-4666-1891-6.ch004", "Unsupervised and Supervised Image Segmentation Using Graph Partitioning",
         "IGI Global eBooks", None),
        ("10.1007/s00120-007-1345-2", "Penisverletzung durch eine Moulinette", "Der Urologe", None),
    ],
)
def test_openalex_single_work_bodies(doi: str, title: str | None, journal: str, first_pdf: str | None) -> None:
    name = f"openalex/works_doi_{doi.replace('/', '_')}.yaml"
    record = parse_all(OpenAlexSource(), name, [f"doi:{doi}"])[f"doi:{doi}"]
    assert record.doi == doi and record.journal == journal
    if title:
        assert record.title == title
    if first_pdf is None:  # closed: OpenAlex lists only is_oa=false locations, which are not candidates
        assert record.oa_status == "closed" and record.candidates == []
    else:
        assert (record.candidates[0].url, record.candidates[0].kind) == (first_pdf, "pdf")


def test_openalex_normalises_pubmed_and_pmc_ids_and_keeps_only_oa_locations() -> None:
    records = parse_all(OpenAlexSource(), "openalex/works_filter_four_dois.yaml", TestOpenAlexBatchContract.ids)
    peerj = records["doi:10.7717/peerj.4375"]
    assert (peerj.pmid, peerj.pmcid) == ("29456894", "PMC5815332")  # OpenAlex writes .../pmc/articles/5815332
    urls = [c.url for c in peerj.candidates]
    assert "https://europepmc.org/articles/pmc5815332?pdf=render" in urls
    assert "https://pubmed.ncbi.nlm.nih.gov/29456894" not in urls  # an is_oa=false location
    assert "https://doaj.org/article/13b0006802e745a6973c19b2ecb9b97a" not in urls
    assert len(urls) == len(set(urls))


def test_openalex_maps_results_back_case_insensitively() -> None:
    [body] = bodies("openalex/works_doi_10.1038_hdy.2013.26.yaml")
    work = json.loads(body)
    work["doi"] = "https://doi.org/10.1038/HDY.2013.26"
    listing = json.dumps({"meta": {"count": 1}, "results": [work]}).encode()
    spec = RequestSpec(path="/works", params={}, ids=(parse_identifier("10.1038/hdy.2013.26"),))
    assert list(OpenAlexSource().parse(listing, spec)) == ["doi:10.1038/hdy.2013.26"]


def test_openalex_batches_fifty_dois_and_sends_filter_syntax_dois_alone() -> None:
    dois = [parse_identifier(f"10.1000/{n}") for n in range(120)] + [parse_identifier("10.1000/a,b")]
    specs = OpenAlexSource().requests_for(dois)
    assert [len(s.ids) for s in specs] == [50, 50, 20, 1]
    assert specs[0].params["filter"].startswith("doi:10.1000/0|10.1000/1|")
    assert specs[-1].path == "/works/doi:10.1000%2Fa,b" and specs[-1].params == {}


def test_openalex_sends_api_key_only_when_given() -> None:
    assert OpenAlexSource(identification=Identification(email=EMAIL)).identity_params() == {"mailto": EMAIL}
    assert OpenAlexSource().identity_params() == {}


@pytest.mark.parametrize(
    ("name", "doi", "candidates"),
    [
        ("crossref/works_10.7554_elife.01567.yaml", "10.7554/elife.01567",
         ["https://cdn.elifesciences.org/articles/01567/elife-01567-v1.pdf"]),  # application/xml link ignored
        ("crossref/works_10.1038_nnano.2014.279.yaml", "10.1038/nnano.2014.279",
         ["http://www.nature.com/articles/nnano.2014.279.pdf"]),  # two identical application/pdf links, one candidate
        ("crossref/works_10.1371_journal.pone.0033693.yaml", "10.1371/journal.pone.0033693", []),  # only `unspecified`
    ],
)
def test_crossref_takes_application_pdf_links_only(name: str, doi: str, candidates: list[str]) -> None:
    record = parse_all(CrossrefSource(), name, [f"doi:{doi}"])[f"doi:{doi}"]
    assert [c.url for c in record.candidates] == candidates
    assert all(c.kind == "pdf" and c.version == "publishedVersion" for c in record.candidates)


def test_crossref_record_fields_from_a_real_work() -> None:
    record = parse_all(CrossrefSource(), "crossref/works_10.1038_nnano.2014.279.yaml", ["doi:10.1038/nnano.2014.279"])
    nnano = record["doi:10.1038/nnano.2014.279"]
    assert (nnano.title, nnano.year, nnano.journal) == ("Charges ride the spin wave", 2014, "Nature Nanotechnology")
    assert nnano.license == "http://www.springer.com/tdm" and nnano.is_oa is None


def test_crossref_unspecified_links_count_only_when_the_path_ends_in_pdf() -> None:
    body = json.dumps({"status": "ok", "message": {"DOI": "10.1000/x", "link": [
        {"URL": "https://onlinelibrary.wiley.com/doi/pdf/10.1002/jor.1100150407", "content-type": "unspecified"},
        {"URL": "https://example.org/files/x.PDF?download=1", "content-type": "unspecified"},
    ]}}).encode()
    spec = RequestSpec(path="/works/10.1000/x", params={}, ids=(parse_identifier("10.1000/x"),))
    assert [c.url for c in CrossrefSource().parse(body, spec)["doi:10.1000/x"].candidates] == [
        "https://example.org/files/x.PDF?download=1"]


def test_crossref_pacing_depends_on_the_polite_pool() -> None:
    assert CrossrefSource.interval_for(Identification()) == 0.2  # public pool: 5/s (2026 recording)
    assert CrossrefSource.interval_for(Identification(email=EMAIL)) == 0.1  # polite pool: 10/s


def test_europepmc_render_url_follows_the_base_url_override() -> None:
    source = EuropePMCSource(base_url="http://127.0.0.1:9")
    record = parse_all(source, "europepmc/search_core_four_ids.yaml", ["doi:10.1002/hpja.70059"])["doi:10.1002/hpja.70059"]
    assert [c.url for c in record.candidates] == ["http://127.0.0.1:9/articles/PMC12120539?pdf=render",
                                                  "https://europepmc.org/articles/PMC12120539?pdf=render"]


def test_europepmc_free_pdf_of_a_non_oa_author_manuscript() -> None:
    records = parse_all(EuropePMCSource(), "europepmc/search_core_four_ids.yaml", TestEuropePMCContract.ids)
    lancet = records["pmid:39709208"]
    assert lancet.is_oa is False  # isOpenAccess "N", but fullTextUrl pdf availability "Free"
    assert [(c.url, c.version, c.host_type) for c in lancet.candidates] == [
        ("https://europepmc.org/articles/PMC12124214?pdf=render", "acceptedVersion", "repository")]
    assert "doi:10.1371/notarealdoi" not in records  # hitCount 0
    assert EuropePMCSource().requests_for([parse_identifier("PMID:39709208")])[0].params == {
        "query": "EXT_ID:39709208 AND SRC:MED", "resultType": "core", "format": "json"}


def test_ncbi_eutils_reads_the_articles_own_ids_not_its_references() -> None:
    record = parse_all(NCBIEutilsSource(), "ncbi_eutils/efetch_pubmed_29915538.yaml", ["pmid:29915538"])["pmid:29915538"]
    assert record.title.startswith("Efficacy and Safety of Once-Weekly Semaglutide for the Treatment of Type 2 Diabetes")
    assert (record.year, record.journal, record.doi) == (2018, "Frontiers in pharmacology", "10.3389/fphar.2018.00576")
    assert record.pmcid == "PMC5994433"  # the reference list also holds ArticleIdLists (e.g. PMC4705511)
    other = parse_all(NCBIEutilsSource(), "ncbi_eutils/efetch_pubmed_22528466.yaml", ["pmid:22528466"])["pmid:22528466"]
    assert (other.title, other.year, other.pmcid) == ("Expression of biologically active human interferon alpha 2 in Aloe vera.", 2012, None)
    assert other.doi == "10.1007/s11248-012-9616-0"


def test_ncbi_pacing_and_identity_depend_on_the_api_key() -> None:
    for cls in (NCBIIdConvSource, NCBIEutilsSource):
        assert cls.interval_for(Identification()) == 0.34  # 3 requests/s
        assert cls.interval_for(Identification(ncbi_api_key="k")) == 0.1  # 10 requests/s
        assert cls(identification=Identification()).identity_params() == {"tool": "paperfetch"}


def test_ncbi_idconv_groups_ids_by_type_with_idtype() -> None:
    ids = [parse_identifier(x) for x in ["PMID:1", "10.1000/a", "PMC5", "PMID:2", "arXiv:1706.03762"]]
    specs = NCBIIdConvSource().requests_for(ids)
    assert [(s.params["idtype"], s.params["ids"]) for s in specs] == [("pmid", "1,2"), ("pmcid", "PMC5"), ("doi", "10.1000/a")]
    assert [len(s.ids) for s in NCBIIdConvSource().requests_for([parse_identifier(f"PMID:{n}") for n in range(1, 402)])] == [200, 200, 1]


def test_ncbi_idconv_skips_per_record_errors() -> None:
    # Not recorded: the per-record error shape as NCBI documents it, beside a real record.
    body = json.dumps({"status": "ok", "records": [
        {"pmcid": "PMC2883744", "pmid": "20495566", "doi": "10.1038/ng.590"},
        {"pmid": "99999999", "status": "error", "errmsg": "invalid article id"},
    ]}).encode()
    spec = NCBIIdConvSource().requests_for([parse_identifier("PMID:20495566"), parse_identifier("PMID:99999999")])[0]
    assert list(NCBIIdConvSource().parse(body, spec)) == ["pmid:20495566"]


def test_arxiv_maps_ids_and_arxiv_dois_to_pdfs_without_a_request() -> None:
    source = ArxivSource()
    assert ArxivSource.min_interval_s == 3.0
    assert [c.url for c in source.candidates_for(parse_identifier("arXiv:1706.03762v5"))] == ["https://arxiv.org/pdf/1706.03762v5"]
    assert [c.url for c in source.candidates_for(parse_identifier("10.48550/arXiv.1706.03762"))] == ["https://arxiv.org/pdf/1706.03762"]
    assert source.candidates_for(Identifier(IdType.DOI, "10.48550/arxiv.2101.00001")) == [
        Candidate(url="https://arxiv.org/pdf/2101.00001", source="arxiv", kind="pdf", version="submittedVersion",
                  host_type="repository")]
    assert source.candidates_for(parse_identifier("PMID:1")) == []
    assert [c.url for c in ArxivSource(base_url="http://127.0.0.1:1").candidates_for(parse_identifier("arXiv:1706.03762"))] == [
        "http://127.0.0.1:1/pdf/1706.03762"]


def test_arxiv_2016_feed_gives_the_journal_doi_and_keeps_the_requested_version() -> None:
    records = parse_all(ArxivSource(), "arxiv/query_id_list_1111.2011v2_2016format.yaml", ["arxiv:1111.2011v2"])
    record = records["arxiv:1111.2011"]
    assert record.doi == "10.1103/physrevb.85.115117" and record.year == 2011
    assert record.title == "Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large Connectivity Limit"
    assert record.candidates[0].url == "https://arxiv.org/pdf/1111.2011v2"


@pytest.mark.parametrize("stem", ["1605.08386", "1707.08567", "astro-ph_0601001"])
def test_arxiv_single_id_recordings_replay_through_lookup(stem: str) -> None:
    key = "arxiv:" + stem.replace("_", "/")
    with replay.use_cassette(f"arxiv/query_id_list_{stem}.yaml") as cassette:
        records = ArxivSource().lookup(SessionFetcher(), [ident(key)])
        assert cassette.all_played
    assert records[key].arxiv_id == key.split(":", 1)[1]


def test_arxiv_unknown_id_gives_an_empty_feed_and_no_record() -> None:
    with replay.use_cassette("arxiv/query_id_list_0000.0000_empty.yaml") as cassette:
        assert ArxivSource().lookup(SessionFetcher(), [ident("arxiv:0000.0000")]) == {}
        assert cassette.all_played


# ============================================================================ 3. real error responses


def _replay_raw(name: str) -> requests.Response:
    [item] = cassette_doc(name)["interactions"]
    with replay.use_cassette(name) as cassette:
        resp = requests.get(item["request"]["uri"], timeout=5)
        assert cassette.all_played
    return resp


def test_crossref_404_means_no_record() -> None:
    with replay.use_cassette("crossref/works_404_notarealdoi.yaml") as cassette:
        assert CrossrefSource(identification=IDENTIFICATION).lookup(SessionFetcher(), [ident("doi:10.1371/notarealdoi")]) == {}
        assert cassette.all_played


@pytest.mark.parametrize("name", ["crossref/funders_500_server_error.yaml", "crossref/journals_504_gateway_timeout.yaml"])
def test_crossref_5xx_is_retried(name: str) -> None:
    resp = _replay_raw(name)
    assert resp.status_code in (500, 504)
    assert CrossrefSource().classify(resp) is Outcome.RETRY


def test_ncbi_idconv_idtype_mismatch_404_is_fatal_not_absent() -> None:
    source = NCBIIdConvSource(identification=IDENTIFICATION)
    spec = RequestSpec(path=NCBIIdConvSource.path, params={"ids": "28371833", "idtype": "doi", "format": "json"},
                       ids=(ident("pmid:28371833"),))
    url, params = source.url_for(spec)
    with replay.use_cassette("ncbi_idconv/idconv_error_idtype_mismatch_28371833.yaml") as cassette:
        with pytest.raises(ServiceError) as caught:
            SessionFetcher().fetch(url, classify=source.classify, params=params)
        assert cassette.all_played
    assert not isinstance(caught.value, NotFoundError)
    assert caught.value.status_code == 404 and EMAIL not in (caught.value.url or "")
    assert source.parse(caught.value.response.content, spec) == {}


def test_arxiv_malformed_id_400_is_fatal() -> None:
    with replay.use_cassette("arxiv/query_id_list_abc_error_400.yaml") as cassette:
        with pytest.raises(ServiceError) as caught:
            ArxivSource().lookup(SessionFetcher(), [ident("arxiv:abc")])
        assert cassette.all_played
    assert caught.value.status_code == 400 and not isinstance(caught.value, NotFoundError)
    spec = ArxivSource().requests_for([ident("arxiv:abc")])[0]
    assert ArxivSource().parse(caught.value.response.content, spec) == {}  # the error entry is not a record


def test_ncbi_414_uri_too_long_is_fatal() -> None:
    resp = _replay_raw("ncbi_eutils/esummary_414_request_uri_too_long.yaml")
    assert resp.status_code == 414 and b"Submitted URI too large!" in resp.content
    assert NCBIEutilsSource().classify(resp) is Outcome.FATAL


# ============================================================================ registry, configuration, cassettes


def test_registry_names_every_source_once() -> None:
    assert list(SOURCES) == ["unpaywall", "openalex", "crossref", "europepmc", "ncbi_idconv", "ncbi_eutils", "arxiv",
                             "semanticscholar", "biorxiv", "pmc"]
    assert all(get_source(name).name == name for name in SOURCES)
    with pytest.raises(ConfigurationError, match="arxiv, biorxiv, crossref"):
        get_source("scihub")


@pytest.mark.parametrize("bad", ["ftp://host", "localhost:8000", "http://host:1/prefix", "http://host?x=1"])
def test_base_url_override_must_be_an_origin(bad: str) -> None:
    with pytest.raises(ConfigurationError):
        CrossrefSource(base_url=bad)


def test_repr_never_shows_secrets() -> None:
    text = repr(OpenAlexSource(identification=IDENTIFICATION))
    assert "oa-secret-key" not in text and EMAIL not in text


def test_cassette_build_is_deterministic_and_the_committed_ones_are_ours(tmp_path: Path) -> None:
    """Two builds are byte for byte the same; the committed cassettes are exactly the ones the builder writes
    alone (``--ours``), with the README it renders. The recorded ones are built when the tests start, never
    committed (tests/test_provenance.py)."""
    builder = cassette_builder()
    fixtures = REAL_FIXTURES  # None: only ours are built
    first, second, ours = tmp_path / "first", tmp_path / "second", tmp_path / "ours"
    builder.build_offline(fixtures, first)
    builder.build_offline(fixtures, second)
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert all((first / rel).read_bytes() == (second / rel).read_bytes() for rel in files)
    assert len(files) == len(builder.CASES if fixtures else [c for c in builder.CASES if c.ours])
    builder.build_offline(None, ours, ours_only=True)
    committed = REPO / "cassettes"
    kept = sorted(p.relative_to(committed) for p in committed.rglob("*")
                  if p.is_file() and p.suffix in (".yaml", ".md") and p.relative_to(committed).parts[0] not in ("built", "live"))
    assert kept == sorted(p.relative_to(ours) for p in ours.rglob("*") if p.is_file())
    for rel in kept:
        assert (ours / rel).read_bytes() == (committed / rel).read_bytes(), rel
        assert rel.suffix == ".md" or (committed / rel).read_text().startswith("# SYNTHETIC")
