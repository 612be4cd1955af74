"""The host-state store contract, run on every backend (memory, SQLite, Redis), as requests-cache tests its storages.

Times are explicit wall-clock numbers passed as *now*: nothing here waits for a hold or a lease to run
out in real time. The cross-process tests start real processes against the same SQLite file / Redis.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time

import pytest

from paperfetch.errors import ConfigurationError, StateStoreError, StoreUnavailable
from paperfetch.state import HostFacts, HostStateStore, MemoryStore, SqliteStore, merge_facts, open_store
from tests._services import fresh_processes

T0 = 1_800_000_000.0  # a wall-clock epoch for "now"
HOST = "pub.example:443"


def _reserve_many(spec: str, host: str, interval: float, count: int, queue) -> None:  # runs in a child process
    store = open_store(spec)
    starts = [store.reserve(host, interval, time.time()).start_at for _ in range(count)]
    store.close()
    queue.put(starts)


class StoreContract:
    """Every backend must pass these. Subclasses provide ``store`` (and ``spec`` when processes can share it)."""

    shared_across_processes = True

    @pytest.fixture
    def spec(self, tmp_path) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    @pytest.fixture
    def store(self, spec):
        store = open_store(spec)
        yield store
        store.close()

    # -- the interface --------------------------------------------------------------------
    def test_is_a_host_state_store_with_a_printable_name(self, store):
        assert isinstance(store, HostStateStore)
        assert store.name == "memory" if isinstance(store, MemoryStore) else ":" in store.name
        assert store.name in repr(store)

    # -- reservations ---------------------------------------------------------------------
    def test_reservations_at_one_instant_are_spaced_by_the_interval(self, store):
        starts = [store.reserve(HOST, 2.0, T0) for _ in range(4)]
        assert all(slot.granted for slot in starts)
        assert [slot.start_at for slot in starts] == pytest.approx([T0, T0 + 2, T0 + 4, T0 + 6], abs=1e-5)

    def test_a_later_reservation_starts_now_and_hosts_are_independent(self, store):
        assert store.reserve(HOST, 2.0, T0).start_at == pytest.approx(T0)
        assert store.reserve(HOST, 2.0, T0 + 10).start_at == pytest.approx(T0 + 10)
        assert store.reserve("other.example:443", 2.0, T0 + 10).start_at == pytest.approx(T0 + 10)

    def test_a_holder_excludes_others_until_it_finishes_then_the_gap_counts_from_its_end(self, store):
        first = store.reserve(HOST, 1.0, T0, lease_s=30.0)
        assert first.granted and first.lease_until == pytest.approx(T0 + 30)
        busy = store.reserve(HOST, 1.0, T0 + 0.5, lease_s=30.0)
        assert not busy.granted and busy.token == ""  # a refused slot cannot release the holder
        assert busy.start_at == pytest.approx(T0 + 30)  # ask again at the lease end at the latest
        store.finish(busy, end=T0 + 0.6, gap_s=100.0)  # no effect
        assert not store.reserve(HOST, 1.0, T0 + 0.7, lease_s=30.0).granted
        store.finish(first, end=T0 + 4.0, gap_s=1.0)  # the request took 4 s: end-to-end gap of 1 s
        second = store.reserve(HOST, 1.0, T0 + 4.1, lease_s=30.0)
        assert second.granted and second.start_at == pytest.approx(T0 + 5.0)

    def test_an_abandoned_lease_blocks_the_host_only_until_it_ends(self, store):
        store.reserve(HOST, 1.0, T0, lease_s=5.0)  # the holder dies and never finishes
        assert not store.reserve(HOST, 1.0, T0 + 4.9, lease_s=5.0).granted
        later = store.reserve(HOST, 1.0, T0 + 5.0, lease_s=5.0)
        assert later.granted and later.start_at == pytest.approx(T0 + 5.0)

    def test_a_late_finish_of_an_expired_lease_keeps_the_new_holder(self, store):
        old = store.reserve(HOST, 1.0, T0, lease_s=2.0)
        new = store.reserve(HOST, 1.0, T0 + 3, lease_s=2.0)
        store.finish(old, end=T0 + 3.5, gap_s=1.0)  # old finishes after its lease ran out
        assert not store.reserve(HOST, 1.0, T0 + 3.6, lease_s=2.0).granted  # new still holds the host
        store.finish(new, end=T0 + 3.7, gap_s=1.0)
        assert store.reserve(HOST, 1.0, T0 + 3.8).start_at == pytest.approx(T0 + 4.7)

    # -- facts ------------------------------------------------------------------------------
    def test_an_unknown_host_has_blank_facts(self, store):
        assert store.get("never.seen:443", T0) == HostFacts("never.seen:443")

    def test_every_field_round_trips(self, store):
        facts = HostFacts(HOST, hold_until=T0 + 60, hold_status=503, hold_reason="Retry-After: 60",
                          suppressed_until=T0 + 600, suppression_reason="403 on /pdf", learned_interval_s=1.5,
                          backoff_s=4.0, breaker_state="open", breaker_failures=3, breaker_open_until=T0 + 30,
                          robots_txt="User-agent: *\nCrawl-delay: 1\n", robots_fetched_at=T0, robots_expires_at=T0 + 3600)
        stored = store.put(facts, T0)
        assert stored == facts.__class__(**{**facts.to_json(), "updated_at": T0})
        assert store.get(HOST, T0 + 1) == stored
        assert store.hosts() == [HOST]

    def test_a_hold_only_extends(self, store):
        store.put(HostFacts(HOST, hold_until=T0 + 100, hold_status=503, hold_reason="long"), T0)
        shorter = store.put(HostFacts(HOST, hold_until=T0 + 50, hold_status=429, hold_reason="short"), T0 + 1)
        assert (shorter.hold_until, shorter.hold_status, shorter.hold_reason) == (T0 + 100, 503, "long")
        longer = store.put(HostFacts(HOST, hold_until=T0 + 200, hold_status=429, hold_reason="longer"), T0 + 2)
        assert (longer.hold_until, longer.hold_status, longer.hold_reason) == (T0 + 200, 429, "longer")
        cleared = store.put(HostFacts(HOST), T0 + 3)  # a write without a hold does not lift it
        assert cleared.hold_until == T0 + 200

    def test_a_hold_and_a_suppression_expire_by_time(self, store):
        store.put(HostFacts(HOST, hold_until=T0 + 10, hold_status=503, suppressed_until=T0 + 20, suppression_reason="403"), T0)
        assert store.get(HOST, T0 + 9.9).hold_remaining(T0 + 9.9) > 0
        after_hold = store.get(HOST, T0 + 10)
        assert (after_hold.hold_until, after_hold.hold_status, after_hold.hold_reason) == (None, None, "")
        assert after_hold.suppressed_until == T0 + 20
        assert store.get(HOST, T0 + 20).suppressed_until is None
        # an expired hold does not come back by a later write with an earlier one
        assert store.put(HostFacts(HOST, hold_until=T0 + 15), T0 + 11).hold_until == T0 + 15

    def test_an_indefinite_suppression_stays(self, store):
        store.put(HostFacts(HOST, suppressed_until=math.inf, suppression_reason="403 Forbidden"), T0)
        facts = store.get(HOST, T0 + 10 * 365 * 86400)
        assert facts.suppressed_until == math.inf and facts.suppression_reason == "403 Forbidden"

    def test_robots_txt_keeps_the_newer_fetch_and_expires_with_its_ttl(self, store):
        store.put(HostFacts(HOST, robots_txt="new", robots_fetched_at=T0 + 5, robots_expires_at=T0 + 100), T0 + 5)
        kept = store.put(HostFacts(HOST, robots_txt="old", robots_fetched_at=T0, robots_expires_at=T0 + 95), T0 + 6)
        assert kept.robots_txt == "new"
        assert store.get(HOST, T0 + 99).robots_txt == "new"
        gone = store.get(HOST, T0 + 100)
        assert (gone.robots_txt, gone.robots_fetched_at, gone.robots_expires_at) == (None, None, None)

    def test_update_applies_a_change_to_the_current_facts(self, store):
        def learn(facts: HostFacts) -> HostFacts:
            return HostFacts(facts.host, learned_interval_s=max(1.0, facts.learned_interval_s * 2), breaker_failures=facts.breaker_failures + 1,
                             hold_until=facts.hold_until)

        store.update(HOST, learn, T0)
        twice = store.update(HOST, learn, T0 + 1)
        assert (twice.learned_interval_s, twice.breaker_failures, twice.updated_at) == (2.0, 2, T0 + 1)
        assert store.get(HOST, T0 + 2) == twice

    def test_update_must_return_facts(self, store):
        with pytest.raises(TypeError):
            store.update(HOST, lambda facts: None, T0)

    def test_clear_forgets_a_host_or_all(self, store):
        store.put(HostFacts(HOST, hold_until=T0 + 100), T0)
        store.put(HostFacts("b.example:443", learned_interval_s=2.0), T0)
        store.reserve("c.example:443", 10.0, T0)
        assert store.hosts() == sorted([HOST, "b.example:443", "c.example:443"])
        store.clear(HOST)
        assert store.get(HOST, T0).hold_until is None and HOST not in store.hosts()
        store.clear()
        assert store.hosts() == []
        assert store.reserve("c.example:443", 10.0, T0).start_at == pytest.approx(T0)

    # -- across processes ---------------------------------------------------------------------
    def test_four_processes_reserve_slots_spaced_at_least_the_interval(self, spec):
        if not self.shared_across_processes:
            pytest.skip("this store lives in one process")
        context = fresh_processes(__name__)
        queue = context.Queue()
        interval = 0.01
        workers = [context.Process(target=_reserve_many, args=(spec, HOST, interval, 25, queue)) for _ in range(4)]
        for worker in workers:
            worker.start()
        starts = sorted(start for _ in workers for start in queue.get(timeout=120))
        for worker in workers:
            worker.join(60)
            assert worker.exitcode == 0
        assert len(starts) == 100
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        assert min(gaps) >= interval - 2e-6  # the stored times have microsecond resolution

    def test_a_sigkilled_holder_blocks_the_host_only_for_its_lease(self, spec):
        if not self.shared_across_processes:
            pytest.skip("this store lives in one process")
        code = (
            "import sys, time\nfrom paperfetch.state import open_store\n"
            f"store = open_store({spec!r})\nslot = store.reserve({HOST!r}, 1.0, {T0!r}, lease_s=5.0)\n"
            "print('granted' if slot.granted else 'refused', flush=True)\ntime.sleep(600)\n"
        )
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout.readline().strip() == "granted"
            os.kill(child.pid, signal.SIGKILL)
            child.wait(30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        store = open_store(spec)
        try:
            assert not store.reserve(HOST, 1.0, T0 + 1, lease_s=5.0).granted
            slot = store.reserve(HOST, 1.0, T0 + 5.0, lease_s=5.0)
            assert slot.granted and slot.start_at == pytest.approx(T0 + 5.0)
        finally:
            store.close()

    def test_a_second_opening_sees_the_first_ones_state(self, spec):
        if not self.shared_across_processes:
            pytest.skip("this store lives in one process")
        with open_store(spec) as first:
            first.put(HostFacts(HOST, hold_until=T0 + 3600, hold_status=503, hold_reason="Retry-After: 3600"), T0)
        with open_store(spec) as second:  # a re-run a minute later
            assert second.get(HOST, T0 + 60).hold_until == T0 + 3600


class TestMemoryStore(StoreContract):
    shared_across_processes = False

    @pytest.fixture
    def spec(self):
        return "memory"

    def test_a_second_opening_sees_the_first_ones_state(self, spec):
        """The opposite of the shared stores: each memory store is on its own (today's behaviour)."""
        with open_store(spec) as first, open_store(spec) as second:
            first.put(HostFacts(HOST, hold_until=T0 + 3600), T0)
            assert second.get(HOST, T0 + 60).hold_until is None
            assert first.reserve(HOST, 5.0, T0).start_at == second.reserve(HOST, 5.0, T0).start_at


class TestSqliteStore(StoreContract):
    @pytest.fixture
    def spec(self, tmp_path):
        return f"sqlite:///{tmp_path}/state.sqlite3"

    def test_wal_mode_and_a_busy_timeout(self, store):
        assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store._db.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000

    def test_the_default_file_is_in_the_user_cache_dir(self, monkeypatch, tmp_path):
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        monkeypatch.delenv("PAPERFETCH_STATE", raising=False)
        with open_store() as store:
            assert store.path == tmp_path / "cache" / "paperfetch" / "host-state.sqlite3"
            assert store.name == f"sqlite:{store.path}"


class TestRedisStore(StoreContract):
    @pytest.fixture
    def spec(self, redis_url):
        return redis_url

    def test_the_name_never_shows_a_password(self, redis_server):
        from paperfetch.state import RedisStore

        store = RedisStore(f"redis://user:s3cret@127.0.0.1:{redis_server.port}/2")
        assert store.name == f"redis://127.0.0.1:{redis_server.port}/2"
        assert "s3cret" not in repr(store)
        store.close()

    def test_holds_and_suppressions_carry_redis_ttls(self, store):
        store.put(HostFacts(HOST, hold_until=T0 + 30, suppressed_until=T0 + 90, suppression_reason="403"), T0)
        client = store.client
        assert 29_000 < client.pttl(f"paperfetch:hold:{HOST}") <= 30_000
        assert 89_000 < client.pttl(f"paperfetch:supp:{HOST}") <= 90_000
        store.put(HostFacts(HOST, suppressed_until=math.inf), T0)
        assert client.pttl(f"paperfetch:supp:{HOST}") == -1  # indefinite: no TTL


class TestRedisOutage:
    """Redis stopped and restarted: a typed error, or the local fallback; never a silent loss."""

    @pytest.fixture
    def server(self, redis_server):  # noqa: ARG002 - skips/fails like the others when Redis is missing
        from tests._services import RedisServer

        own = RedisServer().start()
        yield own
        own.cleanup()

    def test_without_a_fallback_a_lost_connection_is_a_typed_error_and_it_recovers(self, server):
        from paperfetch.state import RedisStore

        store = RedisStore(server.url, socket_timeout_s=2.0)
        assert store.reserve(HOST, 1.0, T0).granted
        server.stop()
        with pytest.raises(StoreUnavailable) as caught:
            store.get(HOST, T0)
        assert isinstance(caught.value, StateStoreError) and isinstance(caught.value, ConnectionError)
        assert server.url.split("//")[1].split("/")[0] in str(caught.value) and "fallback='local'" in str(caught.value)
        with pytest.raises(StoreUnavailable):
            store.reserve(HOST, 1.0, T0)
        server.start()
        assert store.put(HostFacts(HOST, hold_until=T0 + 5), T0).hold_until == T0 + 5
        store.close()

    def test_with_a_fallback_the_calls_go_on_locally_and_come_back(self, server):
        from paperfetch.state import RedisStore

        local = MemoryStore()
        store = RedisStore(server.url, fallback=local, retry_after_s=0.0, socket_timeout_s=2.0)
        store.put(HostFacts(HOST, learned_interval_s=2.0), T0)
        server.stop()
        assert store.put(HostFacts(HOST, hold_until=T0 + 60), T0).hold_until == T0 + 60
        assert store.on_fallback
        assert local.get(HOST, T0).hold_until == T0 + 60  # what was answered is kept, locally
        assert store.reserve(HOST, 1.0, T0).granted
        server.start()
        assert store.get(HOST, T0).hold_until is None  # Redis again (an empty one: it persists nothing)
        assert not store.on_fallback
        store.close()


def test_open_store_specs(tmp_path, monkeypatch):
    assert isinstance(open_store("memory"), MemoryStore)
    assert open_store(tmp_path / "a.sqlite3").name == f"sqlite:{tmp_path / 'a.sqlite3'}"
    assert open_store(str(tmp_path / "b.db")).name == f"sqlite:{tmp_path / 'b.db'}"
    assert open_store(f"sqlite:///{tmp_path}/c.db").name == f"sqlite:{tmp_path / 'c.db'}"
    store = MemoryStore()
    assert open_store(store) is store
    monkeypatch.setenv("PAPERFETCH_STATE", "memory")
    assert isinstance(open_store(), MemoryStore)
    for bad in ("sqlite:relative.db", "mongodb://x", 42):
        with pytest.raises(ConfigurationError):
            open_store(bad)


def test_merge_refuses_another_hosts_facts():
    with pytest.raises(ValueError):
        merge_facts(HostFacts("a"), HostFacts("b"), T0)


def test_sqlite_store_is_closed_after_close(tmp_path):
    store = SqliteStore(tmp_path / "s.sqlite3")
    store.close()
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store.get(HOST, T0)


def test_fallback_local_is_this_machines_sqlite_store(monkeypatch, tmp_path):
    pytest.importorskip("redis")
    from tests._services import free_port

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    store = open_store(f"redis://127.0.0.1:{free_port()}/0", fallback="local")  # nothing listens there
    try:
        store.put(HostFacts(HOST, hold_until=T0 + 3600, hold_status=429), T0)
        assert store.on_fallback
        with SqliteStore(tmp_path / "cache" / "paperfetch" / "host-state.sqlite3") as local:
            assert local.get(HOST, T0).hold_until == T0 + 3600  # a later run on this machine sees it
    finally:
        store.close()
