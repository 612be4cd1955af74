"""The Redis ledger: the ledger contract (tests/test_ledger.py) run on Redis, plus sharing and outages."""

from __future__ import annotations

import threading

import pytest

from paperfetch.errors import StoreUnavailable
from paperfetch.ledger import RedisLedger, SqliteLedger
from tests.test_ledger import LedgerContract, save_pdf


class TestRedisLedger(LedgerContract):
    """The contract every ledger passes (tests/test_ledger.py), on Redis."""

    @pytest.fixture
    def spec(self, redis_url) -> str:
        return redis_url

    def test_the_ledger_is_a_redis_ledger(self, ledger):
        assert isinstance(ledger, RedisLedger)


def test_every_contract_test_runs_on_redis():
    contract = [name for name in vars(LedgerContract) if name.startswith("test_")]
    assert len(contract) >= 13 and all(callable(getattr(TestRedisLedger, name)) for name in contract)


def test_a_second_machine_resumes_from_the_first_ones_rows(redis_url, tmp_path):
    shared = tmp_path / "shared-storage"
    path, size, digest = save_pdf(shared, "doi_10.1_a.pdf")
    with RedisLedger(redis_url, shared, name="batch-1") as first:
        first.record("doi:10.1/a", status="downloaded", path=path, bytes=size, sha256=digest)
        first.record("doi:10.1/b", status="not_found")
    with RedisLedger(redis_url, shared, name="batch-1") as second:
        assert second.is_done("doi:10.1/a", shared).sha256 == digest
        assert not second.should_retry("doi:10.1/b")
        assert len(second) == 2
    with RedisLedger(redis_url, shared, name="batch-2") as other:  # another batch's ledger is apart
        assert len(other) == 0 and other.get("doi:10.1/a") is None


def test_secrets_never_reach_redis(redis_url, tmp_path):
    import redis

    with RedisLedger(redis_url, tmp_path) as ledger:
        ledger.record("doi:10.1/z", status="http_error", url="https://api.unpaywall.org/v2/x?email=someone@uni.example",
                      error="GET https://api.openalex.org/works/x?api_key=s3cr3tkey failed; contact someone@uni.example")
    client = redis.Redis.from_url(redis_url)
    dumped = b"".join(client.get(key) or b"" for key in client.keys("*") if client.type(key) == b"string")
    client.close()
    assert b"doi:10.1/z" in dumped
    assert b"someone@uni.example" not in dumped and b"s3cr3tkey" not in dumped


def test_a_closed_ledger_refuses_work(redis_url, tmp_path):
    ledger = RedisLedger(redis_url, tmp_path)
    ledger.close()
    ledger.close()
    with pytest.raises(RuntimeError, match="closed"):
        ledger.record("doi:10.1/a", status="not_found")


def test_threads_of_two_ledgers_count_every_attempt(redis_url, tmp_path):
    ledgers = [RedisLedger(redis_url, tmp_path) for _ in range(2)]

    def work(ledger: RedisLedger) -> None:
        for _ in range(100):
            ledger.record("doi:10.1/shared", status="network_error", extra={"who": id(ledger)})

    threads = [threading.Thread(target=work, args=(ledger,)) for ledger in ledgers for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ledgers[0].get("doi:10.1/shared").attempts == 400
    for ledger in ledgers:
        ledger.close()


class TestOutage:
    @pytest.fixture
    def server(self, redis_server):  # noqa: ARG002
        from tests._services import RedisServer

        own = RedisServer().start()
        yield own
        own.cleanup()

    def test_without_a_fallback_a_lost_connection_is_a_typed_error(self, server, tmp_path):
        ledger = RedisLedger(server.url, tmp_path, socket_timeout_s=2.0)
        ledger.record("doi:10.1/a", status="not_found")
        server.stop()
        with pytest.raises(StoreUnavailable, match="fallback"):
            ledger.record("doi:10.1/b", status="not_found")
        with pytest.raises(StoreUnavailable):
            ledger.get("doi:10.1/a")
        server.start()
        ledger.record("doi:10.1/c", status="not_found")
        assert ledger.get("doi:10.1/c").status == "not_found"
        ledger.close()

    def test_with_a_local_fallback_no_finished_outcome_is_lost(self, server, tmp_path):
        local = SqliteLedger(tmp_path / "local.sqlite3")
        ledger = RedisLedger(server.url, tmp_path, fallback=local, socket_timeout_s=2.0)
        ledger.record("doi:10.1/a", status="not_found")
        server.stop()
        ledger.record("doi:10.1/b", status="no_open_copy")  # Redis is down: kept locally
        assert ledger.get("doi:10.1/b").status == "no_open_copy"
        server.start()
        ledger.close()
        with SqliteLedger(tmp_path / "local.sqlite3") as reopened:
            assert reopened.get("doi:10.1/b").status == "no_open_copy"
