"""Host-state ownership: ``release_holds()`` reaches the store a default Retriever uses, and
``Retriever(http=client)`` leaves the caller's client as it was."""

from __future__ import annotations

import time

import pandas as pd

import paperfetch
from paperfetch import HttpClient, Retriever
from paperfetch.http.hosts import host_key, host_limiter
from paperfetch.state import open_store
from paperfetch.testing import Reply


def _held_until(store_spec, host: str) -> float | None:
    store = open_store(store_spec)
    try:
        return store.get(host, time.time()).hold_until
    finally:
        store.close()


def test_release_holds_clears_a_hold_a_default_retriever_set_in_its_sqlite_store(tmp_path, monkeypatch, hosts):
    monkeypatch.delenv("PAPERFETCH_STATE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    server = hosts("127.0.0.171", {"*": Reply(429, b"busy", headers={"Retry-After": "3600"})})
    with Retriever(out_dir=tmp_path / "pdfs", progress=False, cache=False, max_retries=0) as r:
        assert r.store.name.startswith("sqlite:")  # the default: a file in the user cache directory
        path = r.store.name[len("sqlite:"):]
        assert r.web.get(server.url("/a")).status_code == 429
        host = host_key(server.base_url)
        assert (_held_until(path, host) or 0) > time.time() + 3000

        paperfetch.release_holds()

        assert _held_until(path, host) is None  # in the file: other processes see it released too
        assert pd.isna(r.domain_status().set_index("host").loc[host, "held_until"])
        r.web.get(server.url("/b"))  # asked again: the hold no longer answers for the server
    assert len(server.log) == 2


def test_release_holds_clears_a_hold_another_process_left_in_the_store(tmp_path, hosts):
    path = tmp_path / "state.sqlite3"
    server = hosts("127.0.0.172", {"*": Reply(503, b"maintenance", headers={"Retry-After": "7200"})})
    other = HttpClient(state=open_store(path), max_retries=0)  # stands for another process (its own connection)
    assert other.get(server.url("/a")).status_code == 503
    host = host_key(server.base_url)
    with Retriever(out_dir=tmp_path / "pdfs", progress=False, cache=False, state=path) as r:
        assert not pd.isna(r.domain_status().set_index("host").loc[host, "held_until"])
        r.release_holds()
        assert _held_until(path, host) is None


def test_host_limiter_names_the_store_it_reads(tmp_path):
    path = tmp_path / "state.sqlite3"
    limiter = host_limiter("https://h.test/x", state=path)
    assert limiter is host_limiter("https://h.test/y", state=path)  # one record per host and store
    assert limiter is not host_limiter("https://h.test/x")  # the in-memory default is another store


def test_a_callers_client_keeps_its_settings_and_subscribers_and_stays_open(tmp_path, hosts):
    server = hosts("127.0.0.173", {"*": Reply(404, b"no")})
    client = HttpClient(max_retries=1)
    seen: list[object] = []
    client.subscribe(seen.append)
    config_before = client.config
    intervals_before = dict(client.host_intervals)
    subscribers_before = len(client.events)
    session = client.session

    r = Retriever(http=client, out_dir=tmp_path / "pdfs", progress=False, cache=False,
                  endpoints={"europepmc": server.base_url})
    assert r.web is not client and r.web.session is session and r.web.registry is client.registry
    assert host_key(server.base_url) in r.web.host_intervals  # the Retriever paces its sources on its own client
    r.close()

    assert client.config == config_before and dict(client.host_intervals) == intervals_before
    assert host_key(server.base_url) not in client.host_intervals
    assert len(client.events) == subscribers_before
    assert not client.closed
    assert client.get(server.url("/still-open")).status_code == 404  # its session was not closed either
    assert seen  # and its own subscriber still hears it


def test_a_retriever_unsubscribes_from_the_clients_it_made_on_close(tmp_path):
    r = Retriever(out_dir=tmp_path / "pdfs", progress=False, cache=False, state="memory")
    counts = {id(c): len(c.events) for c in (r.web, r.api)}
    assert all(n >= 1 for n in counts.values())
    r.close()
    assert len(r.web.events) == counts[id(r.web)] - 1


def test_a_store_that_is_gone_does_not_keep_the_others_held(tmp_path, hosts, caplog):
    from paperfetch.errors import StoreUnavailable
    from paperfetch.http import hosts as hosts_module
    from paperfetch.http.hosts import HostRegistry
    from paperfetch.state import MemoryStore

    class GoneStore(MemoryStore):
        name = "redis://gone"

        def hosts(self):
            raise StoreUnavailable("the host-state store redis://gone does not answer")

    server = hosts("127.0.0.174", {"*": Reply(429, b"busy", headers={"Retry-After": "3600"})})
    path = tmp_path / "state.sqlite3"
    client = HttpClient(state=path, max_retries=0)
    assert client.get(server.url("/a")).status_code == 429
    gone = HostRegistry(store=GoneStore())
    hosts_module._REGISTRIES[("object", id(gone), 0)] = gone
    try:
        paperfetch.release_holds()
    finally:
        del hosts_module._REGISTRIES[("object", id(gone), 0)]
    assert _held_until(path, host_key(server.base_url)) is None
    assert "could not release the holds in redis://gone" in caplog.text
