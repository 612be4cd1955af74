"""The PMC Cloud Service source (paperfetch/sources/pmc.py) on cassettes.

Every bucket body here is SYNTHETIC: no answer of the bucket was ever recorded, so cassettes/pmc/ is built by
cassettes/build_cassettes.py in the documented shapes (S3 ListObjectsV2 XML, the metadata JSON's fields; see
cassettes/README.md). The Europe PMC search answers, the ID converter's answers and the PDFs added in this file
are synthetic too (a PDF is never stored in a cassette).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests
import yaml

from paperfetch import Retriever
from paperfetch.cache import CachedFetcher, MetadataCache
from paperfetch.config import Identification
from paperfetch.demo import fake_pdf
from paperfetch.http.hosts import host_key
from paperfetch.sources import EuropePMCSource, NCBIIdConvSource, PMCSource
from paperfetch.testing import CASSETTE_FILTER_QUERY_PARAMETERS, cassette_vcr
from tests._fixtures import CASSETTES as BUILT_CASSETTES
from tests._fixtures import cassette as built_cassette
from tests._fixtures import replayer
from tests.test_sources import SessionFetcher, ident

REPO = Path(__file__).resolve().parents[1]
CASSETTES = BUILT_CASSETTES
BUCKET = "https://pmc-oa-opendata.s3.amazonaws.com"
replay = replayer()


def lookup(cassette: str, *keys: str):
    with replay.use_cassette(cassette) as tape:
        fetcher = SessionFetcher()
        records = PMCSource().lookup(fetcher, [ident(k) for k in keys])
    return records, fetcher.sent, tape


def test_two_versions_a_manuscript_and_the_published_one_give_the_published_one():
    """SYNTHETIC bodies (cassettes/pmc/): PMC2883744's recorded versions (.1 a manuscript, .2 published, the ID
    converter's ``current``) give .2 from two requests; an article whose newest version is a manuscript beside the
    published .1 gives .1, its JSON read after the manuscript's."""
    records, sent, tape = lookup("pmc/versions_manuscript_and_published.yaml", "pmcid:PMC2883744", "pmcid:PMC9900001")
    assert tape.all_played and len(sent) == 5
    assert sent[0] == f"{BUCKET}/?list-type=2&prefix=PMC2883744.&delimiter=%2F"  # the trailing dot: not PMC28837440
    current = records["pmcid:PMC2883744"]
    assert (current.pmc_version, current.is_manuscript, current.pmid, current.doi) == (2, False, "20495566", "10.1038/ng.590")
    [pdf] = current.candidates
    assert pdf.url == f"{BUCKET}/PMC2883744.2/PMC2883744.2.pdf"  # the s3:// key on the HTTPS base, the md5 dropped
    assert (pdf.source, pdf.kind, pdf.version, pdf.license, pdf.host_type) == (
        "pmc", "pdf", "publishedVersion", "cc-by", "repository")
    assert current.jats_url == f"{BUCKET}/PMC2883744.2/PMC2883744.2.xml"
    published = records["pmcid:PMC9900001"]
    assert (published.pmc_version, published.is_manuscript, published.license, published.doi) == (
        1, False, "cc-by-nc", "10.5555/pmc.published")
    assert published.candidates[0].url.endswith("/PMC9900001.1/PMC9900001.1.pdf")
    assert sent[2:] == [f"{BUCKET}/?list-type=2&prefix=PMC9900001.&delimiter=%2F",
                        f"{BUCKET}/PMC9900001.2/PMC9900001.2.json", f"{BUCKET}/PMC9900001.1/PMC9900001.1.json"]


def test_keycount_zero_is_not_found_and_the_parsers_are_tolerant():
    """SYNTHETIC bodies: ``KeyCount`` 0 (200, not 404) is no record; a TDM manuscript without ``pdf_url`` gives the
    JATS only (an unknown field is ignored); a null ``license_code`` is no licence; ``is_retracted`` is read."""
    records, sent, tape = lookup("pmc/keycount_zero_tdm_null_licence.yaml", "pmcid:PMC9900002", "pmcid:PMC9900003",
                                 "pmcid:PMC9900004")
    assert tape.all_played and len(sent) == 5
    assert "pmcid:PMC9900002" not in records
    tdm = records["pmcid:PMC9900003"]
    assert tdm.candidates == [] and tdm.jats_url == f"{BUCKET}/PMC9900003.1/PMC9900003.1.xml"
    assert (tdm.license, tdm.is_manuscript, tdm.is_oa, tdm.retracted) == ("tdm", True, False, False)
    plain = records["pmcid:PMC9900004"]
    assert (plain.license, plain.retracted, plain.pmid, plain.candidates[0].license) == (None, True, "9900004", None)
    assert plain.candidates[0].version == "publishedVersion"


def test_s3_urls_map_onto_the_https_base_and_nothing_else_does():
    source = PMCSource(base_url="http://127.0.0.1:9000")
    assert source.https_url("s3://pmc-oa-opendata/PMC1.1/PMC1.1.pdf?md5=ab") == "http://127.0.0.1:9000/PMC1.1/PMC1.1.pdf"
    assert source.https_url("s3://other-bucket/PMC1.1/PMC1.1.pdf") is None
    assert source.https_url("s3://pmc-oa-opendata/PMC1.1/../../x.pdf") is None
    assert source.https_url(None) is None and source.https_url(12) is None and source.https_url("s3://pmc-oa-opendata/") is None
    listing = b'<ListBucketResult><CommonPrefixes><Prefix>PMC12.3/</Prefix></CommonPrefixes><CommonPrefixes><Prefix>' \
              b'PMC123.1/</Prefix></CommonPrefixes><Contents><Key>PMC12.1/PMC12.1.json</Key></Contents></ListBucketResult>'
    assert source.versions(listing, ident("pmcid:PMC12")) == [3, 1]  # PMC123's folder is not PMC12's


def test_the_listing_and_the_json_are_cached_for_a_day():
    """SYNTHETIC bodies: a second lookup sends nothing; a day later (not the cache's default week) both are gone."""
    now = [1_000_000.0]
    cache = MetadataCache(":memory:", now=lambda: now[0])
    with replay.use_cassette("pmc/versions_manuscript_and_published.yaml", allow_playback_repeats=True):
        fetcher = SessionFetcher()
        cached = CachedFetcher(fetcher, cache)
        first = PMCSource().lookup(cached, [ident("pmcid:PMC2883744")])
        again = PMCSource().lookup(cached, [ident("pmcid:PMC2883744")])
    assert len(fetcher.sent) == 2 and len(cache) == 2 and again == first
    now[0] += 24 * 3600 + 1
    assert len(cache) == 0 and cache.answer_ttl_s > 24 * 3600


# ---------------------------------------------------------------------------- through the Retriever


def _uri(source, spec) -> str:
    url, params = source.url_for(spec)
    kept = {k: v for k, v in params.items() if k not in CASSETTE_FILTER_QUERY_PARAMETERS}
    return requests.Request("GET", url, params=kept).prepare().url


def _interaction(uri: str, status: int, body: str, content_type: str) -> dict:
    return {"request": {"body": None, "headers": {}, "method": "GET", "uri": uri},
            "response": {"status": {"code": status, "message": "OK" if status == 200 else "Not Found"},
                         "headers": {"Content-Type": [content_type]}, "body": {"string": body}}}


def _world(tmp_path: Path, bucket_cassette: str, pmcid: str, *, pmc_pdf: bool = False) -> Path:
    """The bucket's SYNTHETIC cassette, plus SYNTHETIC answers of the ID converter and Europe PMC for *pmcid*
    (open access, its PDF page) and fake PDFs."""
    interactions = list(yaml.safe_load(built_cassette(bucket_cassette).read_text())["interactions"])
    ids = NCBIIdConvSource()
    [spec] = ids.requests_for([ident(f"pmcid:{pmcid}")])
    converted = {"status": "ok", "records": [{"requested-id": pmcid, "pmcid": pmcid, "pmid": 1}]}
    interactions.append(_interaction(_uri(ids, spec), 200, json.dumps(converted), "application/json"))
    epmc = EuropePMCSource()
    [spec] = epmc.requests_for([ident(f"pmcid:{pmcid}")])
    found = {"hitCount": 1, "resultList": {"result": [{"id": pmcid, "source": "PMC", "pmcid": pmcid, "pmid": "1",
                                                        "isOpenAccess": "Y", "title": "A PMC article"}]}}
    interactions.append(_interaction(_uri(epmc, spec), 200, json.dumps(found), "application/json"))
    interactions.append(_interaction("https://europepmc.org/robots.txt", 404, "Not Found", "text/plain"))
    interactions.append(_interaction(f"https://europepmc.org/articles/{pmcid}?pdf=render", 200,
                                     fake_pdf("epmc").decode("latin-1"), "application/pdf"))
    if pmc_pdf:
        interactions.append(_interaction(f"{BUCKET}/robots.txt", 404, "<Error><Code>NoSuchKey</Code></Error>", "application/xml"))
        interactions.append(_interaction(f"{BUCKET}/{pmcid}.2/{pmcid}.2.pdf", 200, fake_pdf("pmc").decode("latin-1"),
                                         "application/pdf"))
    path = tmp_path / "world.yaml"
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}))
    return path


def _download(tmp_path: Path, cassette: Path, pmcid: str, monkeypatch):
    for name in ("pmc", "europepmc", "ncbi_idconv"):
        monkeypatch.delenv(f"PAPERFETCH_{name.upper()}_URL", raising=False)
    # one worker: vcrpy's patching is not thread-safe
    with cassette_vcr().use_cassette(str(cassette)), \
            Retriever(email="t@uni.example", out_dir=tmp_path / "pdfs", progress=False, verbosity=0, workers=1,
                      sources=("pmc", "europepmc"), state="memory", cache=False, max_retries=0, delay_min_s=0.0,
                      delay_max_s=0.0) as r:
        row = r.download([pmcid]).iloc[0]
        status = r.domain_status().set_index("host")
    return row, status


def test_the_published_version_is_downloaded_from_the_bucket(tmp_path, monkeypatch):
    """SYNTHETIC bodies: the bucket's PDF comes first; the row records the version and that it is no manuscript;
    the bucket is paced (its polite interval) and counted in ``domain_status()``."""
    cassette = _world(tmp_path, "pmc/versions_manuscript_and_published.yaml", "PMC2883744", pmc_pdf=True)
    row, status = _download(tmp_path, cassette, "PMC2883744", monkeypatch)
    assert (row["status"], row["source"], row["url"]) == ("downloaded", "pmc", f"{BUCKET}/PMC2883744.2/PMC2883744.2.pdf")
    assert (row["pmc_version"], row["is_manuscript"], row["license"]) == (2, False, "cc-by")
    bucket = status.loc[host_key(BUCKET)]
    assert bucket["requests"] >= 2 and bucket["delay_min_s"] == pytest.approx(PMCSource.min_interval_s)


def test_json_without_pdf_url_gives_the_pdf_from_the_next_source(tmp_path, monkeypatch):
    """SYNTHETIC bodies: the TDM manuscript's JSON has no ``pdf_url``; Europe PMC's PDF page (open access) serves it."""
    cassette = _world(tmp_path, "pmc/keycount_zero_tdm_null_licence.yaml", "PMC9900003")
    row, _ = _download(tmp_path, cassette, "PMC9900003", monkeypatch)
    assert (row["status"], row["source"]) == ("downloaded", "europepmc")
    assert (row["pmc_version"], row["is_manuscript"], row["license"]) == (1, True, "tdm")


@pytest.mark.parametrize(("pmcid", "code"), [("PMC9900005", 403), ("PMC9900006", 503)])
def test_a_403_or_503_from_the_bucket_goes_to_the_next_source_and_counts_for_the_host(tmp_path, monkeypatch, pmcid, code):
    """SYNTHETIC bodies: S3's AccessDenied (403) and SlowDown (503); the item goes on to Europe PMC, and the
    bucket's row in ``domain_status()`` shows the failure as any host's would (suppressed, or a breaker failure)."""
    cassette = _world(tmp_path, "pmc/listing_403_503.yaml", pmcid)
    row, status = _download(tmp_path, cassette, pmcid, monkeypatch)
    assert (row["status"], row["source"]) == ("downloaded", "europepmc")
    assert pd_missing(row["pmc_version"])
    bucket = status.loc[host_key(BUCKET)]
    assert bucket["last_status"] == code and bucket["errors"] >= 1
    if code == 403:
        assert bool(bucket["suppressed"])
    else:
        assert bucket["failures"] >= 1


def pd_missing(value) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


def test_the_bucket_is_in_the_default_order_ahead_of_europe_pmc_with_its_interval(tmp_path):
    from paperfetch.retriever import DEFAULT_ORDER

    assert DEFAULT_ORDER.index("pmc") < DEFAULT_ORDER.index("europepmc")
    with Retriever(out_dir=tmp_path, progress=False, verbosity=0, state="memory", cache=False,
                   email="t@uni.example") as r:
        assert r.api.config.host_intervals[host_key(BUCKET)] == PMCSource.min_interval_s
        assert PMCSource(identification=Identification()).interval_s == 0.2


def test_fulltext_takes_the_buckets_jats_when_europe_pmc_and_efetch_have_none(tmp_path):
    """The demo world's bucket (SYNTHETIC listing, JSON and a short JATS, paperfetch/demo/sources.py): PMC9000001
    has no ``fullTextXML`` and no efetch article there, so its text is the bucket's ``xml_url``."""
    from paperfetch.demo import DemoWorld

    with DemoWorld(base_ip=200) as world, Retriever(email="t@uni.example", out_dir=tmp_path, endpoints=world.endpoints,
                                                      progress=False, verbosity=0, state="memory", cache=False,
                                                      delay_min_s=0.0, delay_max_s=0.0) as r:
        text = r.fulltext(["PMC9000001"])
        paragraphs, outcomes = text.paragraphs, text.outcomes
        sent = list(r.requests()["url"])
    row = outcomes.iloc[0]
    assert (row["status"], row["source"], row["text_source"]) == ("downloaded", "pmc", "jats")
    assert row["url"].endswith("/PMC9000001.1/PMC9000001.1.xml") and list(paragraphs["text"]) == ["A paper in PubMed Central."]
    assert not any(url.endswith(".pdf") for url in sent)  # a paper with JATS is not downloaded as a PDF


def test_a_runs_listing_and_json_are_kept_a_day_in_the_metadata_cache(tmp_path):
    """The demo world's bucket (SYNTHETIC bodies): the item's two lookups are stored with the bucket's one-day time
    to live, beside other services' answers kept for the cache's week; a second run asks the bucket for the PDF only (robots.txt is
    already known)."""
    from paperfetch.cache import cache_key
    from paperfetch.demo import DemoWorld

    now = [2_000_000.0]
    cache = MetadataCache(":memory:", now=lambda: now[0])
    with DemoWorld(base_ip=210) as world:
        for run in (1, 2):
            with Retriever(email="t@uni.example", out_dir=tmp_path / str(run), endpoints=world.endpoints, progress=False,
                           verbosity=0, state="memory", cache=cache, sources=("pmc",), delay_min_s=0.0,
                           delay_max_s=0.0) as r:
                row = r.download(["PMC9000001"]).iloc[0]
                asked = [u for u in r.requests()["url"] if u.startswith(world.endpoints["pmc"])]
            assert (row["status"], row["source"]) == ("downloaded", "pmc")
            assert [u.rsplit("/", 1)[-1] for u in asked] == (["", "PMC9000001.1.json", "robots.txt", "PMC9000001.1.pdf"]
                                                             if run == 1 else ["PMC9000001.1.pdf"])
        bucket = world.endpoints["pmc"]
        listing = cache_key(f"{bucket}/", {"list-type": "2", "prefix": "PMC9000001.", "delimiter": "/"})
        metadata = cache_key(f"{bucket}/PMC9000001.1/PMC9000001.1.json")
        assert listing in cache and metadata in cache
        now[0] += 24 * 3600 + 1
        assert listing not in cache and metadata not in cache and len(cache) > 0  # the ID converter's answer stays


def test_the_buckets_is_retracted_reaches_the_outcome_row(tmp_path, monkeypatch):
    """SYNTHETIC bodies: PMC9900004's metadata JSON says ``is_retracted``; the paper is still downloaded from the
    bucket, its row says ``retracted`` and its reason names the retraction (the bucket names no notice)."""
    cassette = _world(tmp_path, "pmc/keycount_zero_tdm_null_licence.yaml", "PMC9900004")
    world = yaml.safe_load(cassette.read_text())
    world["interactions"] += [
        _interaction(f"{BUCKET}/robots.txt", 404, "<Error><Code>NoSuchKey</Code></Error>", "application/xml"),
        _interaction(f"{BUCKET}/PMC9900004.1/PMC9900004.1.pdf", 200, fake_pdf("pmc").decode("latin-1"), "application/pdf")]
    cassette.write_text(yaml.safe_dump(world))
    row, _ = _download(tmp_path, cassette, "PMC9900004", monkeypatch)
    assert (row["status"], row["source"], row["retracted"]) == ("downloaded", "pmc", True)
    assert row["reason"] == "retracted (no notice named)"
