"""The PubMed search through the metadata cache: what is asked again, what is kept, for how long."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pandas as pd

from paperfetch import Retriever, defaults
from paperfetch.cache import MetadataCache
from paperfetch.demo import DemoWorld
from paperfetch.demo.research import HISTORY_QUERY, SEARCH_QUERY
from paperfetch.http.hosts import host_key
from paperfetch.testing import Reply
from tests._quick import EMAIL, retriever


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
