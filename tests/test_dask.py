"""paperfetch.dask: a batch over a real dask.distributed LocalCluster (worker processes) and a real redis-server."""

from __future__ import annotations

import pandas as pd
import pytest

from paperfetch.demo import DemoWorld
from paperfetch.errors import ConfigurationError
from paperfetch.ledger import DEFAULT_LEDGER_NAME
from paperfetch.outcomes import COLUMNS, DTYPES

INPUTS = [
    "10.5555/demo.fast",
    "https://doi.org/10.5555/DEMO.FAST",  # a duplicate, written differently
    "doi:10.5555/demo.fast2",
    "10.5555/demo.closed",
    "10.5555/demo.unknown",
    "PMID:90000001",
    "arXiv:2101.00001v2",
    "not an identifier",
    None,
]
EXPECTED = ["downloaded", "downloaded", "downloaded", "no_open_copy", "not_found", "downloaded", "downloaded",
            "invalid_identifier", "invalid_identifier"]
#: No configured gap between requests: the demo's Crawl-delays, Retry-Afters and arXiv's interval still apply.
NO_GAP = {"delay_min_s": 0.0, "delay_max_s": 0.0}


@pytest.fixture(scope="module")
def world():
    with DemoWorld(base_ip=140) as started:
        yield started


def _frame(npartitions: int = 3):
    import dask.dataframe as dd

    index = range(100, 100 + len(INPUTS))
    pdf = pd.DataFrame({"doi": pd.Series(INPUTS, index=index, dtype=object), "row": range(len(INPUTS))}, index=index)
    return dd.from_pandas(pdf, npartitions=npartitions), pdf


def _run(world, out_dir, state, **kwargs):
    from paperfetch.dask import download_frame

    ddf, pdf = _frame()
    lazy = download_frame(ddf, "doi", out_dir=out_dir, state=state, email="tester@uni.example",
                          endpoints=world.endpoints, verbosity=0, **NO_GAP, **kwargs)
    return lazy, lazy.compute().loc[pdf.index]


def test_a_dask_run_gives_the_outcomes_schema_and_a_rerun_resumes_from_redis(dask_client, redis_url, world, tmp_path):
    from paperfetch.ledger import RedisLedger

    out_dir = tmp_path / "shared"
    lazy, outcomes = _run(world, out_dir, redis_url)
    assert list(lazy.columns) == list(COLUMNS) and list(outcomes.columns) == list(COLUMNS)
    assert {c: str(t) for c, t in outcomes.dtypes.items()} == {c: str(pd.Series(dtype=t).dtype) for c, t in DTYPES.items()}
    assert list(outcomes.index) == list(range(100, 100 + len(INPUTS)))
    assert list(outcomes["status"]) == EXPECTED
    assert outcomes["input"].tolist() == INPUTS  # None stays None
    for path in outcomes.loc[outcomes["status"] == "downloaded", "path"]:
        assert path.startswith(str(out_dir)) and open(path, "rb").read(5) == b"%PDF-"
    with RedisLedger(redis_url, out_dir) as ledger:
        assert len(ledger) == 6  # every parsed identifier, the duplicate once
        assert ledger.get("doi:10.5555/demo.unknown").status == "not_found"

    # A re-run "on another machine": the local SQLite ledgers are gone; the Redis ledger resumes.
    (out_dir / DEFAULT_LEDGER_NAME).unlink()
    served = world.requests_served()
    _, again = _run(world, out_dir, redis_url)
    assert world.requests_served() == served  # not one request: everything is done or called absent
    assert list(again["status"]) == [
        "already_downloaded" if s == "downloaded" else s for s in EXPECTED
    ]
    assert again["attempts"].fillna(0).eq(0).all()
    assert again.loc[again["status"] == "already_downloaded", "path"].tolist() == \
        outcomes.loc[outcomes["status"] == "downloaded", "path"].tolist()


class TestRedisDown:
    @pytest.fixture
    def server(self, redis_server):  # noqa: ARG002 - skips/fails like the others when Redis is missing
        from tests._services import RedisServer

        own = RedisServer().start()
        yield own
        own.cleanup()

    def test_with_the_local_fallback_every_item_gets_its_row(self, dask_client, server, world, tmp_path):
        out_dir = tmp_path / "out"
        _, first = _run(world, out_dir, server.url)  # Redis up: recorded there
        server.stop()  # Redis gone before the next batch (no persistence: a restart would come back empty)
        _, second = _run(world, out_dir, server.url)
        assert list(second["status"]) == ["already_downloaded" if s == "downloaded" else s for s in EXPECTED]
        assert len(second) == len(INPUTS)
        server.start()  # back, and empty: the next run asks the services again and records anew
        _, third = _run(world, out_dir, server.url)
        assert list(third["status"]) == list(second["status"])  # the local ledger kept every finished row

    def test_redis_stopped_mid_batch_every_item_gets_its_row_and_nothing_finished_is_lost(self, dask_client, server, world, tmp_path):
        import time

        import dask.dataframe as dd
        import redis

        from paperfetch.dask import download_frame
        from paperfetch.ledger import SqliteLedger

        inputs = INPUTS + ["10.5555/demo.slow1", "10.5555/demo.slow2", "10.5555/demo.slow3"]
        expected = EXPECTED + ["downloaded"] * 3
        pdf = pd.DataFrame({"doi": pd.Series(inputs, dtype=object)})
        out_dir = tmp_path / "out"
        lazy = download_frame(dd.from_pandas(pdf, npartitions=6), "doi", out_dir=out_dir, state=server.url,
                              email="tester@uni.example", endpoints=world.endpoints, verbosity=0, **NO_GAP)
        future = dask_client.compute(lazy)
        watcher = redis.Redis.from_url(server.url)
        deadline = time.monotonic() + 120
        while watcher.zcard("paperfetch:ledger:default:index") == 0 and not future.done() and time.monotonic() < deadline:
            time.sleep(0.02)
        watcher.close()
        stopped_mid_batch = not future.done()
        server.stop()
        outcomes = future.result(timeout=300).sort_index()
        future.release()  # else the scheduler keeps the result and hands it to the identical graph below
        assert stopped_mid_batch  # the outage really fell inside the batch
        assert list(outcomes["status"]) == expected  # every item has its row
        with SqliteLedger.in_folder(out_dir) as local:  # every finished row is kept, Redis or not
            for key in ("doi:10.5555/demo.fast", "doi:10.5555/demo.slow3", "doi:10.5555/demo.closed", "pmid:90000001"):
                assert local.get(key) is not None
        server.start()  # back, and empty (it persists nothing): the local ledger resumes the batch
        again = download_frame(dd.from_pandas(pdf, npartitions=6), "doi", out_dir=out_dir, state=server.url,
                               email="tester@uni.example", endpoints=world.endpoints, verbosity=0,
                               **NO_GAP).compute().sort_index()
        assert list(again["status"]) == ["already_downloaded" if s == "downloaded" else s for s in expected]

    def test_with_fallback_error_the_task_fails_with_a_typed_error(self, dask_client, server, world, tmp_path):
        from paperfetch.errors import StoreUnavailable

        server.stop()
        with pytest.raises(StoreUnavailable, match="does not answer"):
            _run(world, tmp_path / "out", server.url, fallback="error")


def test_download_partition_runs_without_dask_and_without_a_store(world, tmp_path):
    from paperfetch.dask import download_partition

    series = pd.Series(INPUTS[:5], index=[7, 8, 9, 10, 11], dtype=object)
    frame = download_partition(series, out_dir=tmp_path, options={"email": "tester@uni.example",
                                                                  "endpoints": world.endpoints, "verbosity": 0, **NO_GAP})
    assert list(frame.index) == [7, 8, 9, 10, 11]
    assert list(frame["status"]) == EXPECTED[:5]


def test_bad_arguments_are_refused(tmp_path):
    pytest.importorskip("dask.dataframe")
    from paperfetch.dask import download_frame

    ddf, _ = _frame(1)
    with pytest.raises(ConfigurationError, match="no column"):
        download_frame(ddf, "pmid", out_dir=tmp_path)
    with pytest.raises(ConfigurationError, match="redis://"):
        download_frame(ddf, "doi", out_dir=tmp_path, state="/tmp/state.sqlite3")
    with pytest.raises(ConfigurationError, match="fallback"):
        download_frame(ddf, "doi", out_dir=tmp_path, fallback="maybe")
    with pytest.raises(ConfigurationError, match="pandas"):
        download_frame(pd.DataFrame({"doi": ["10.1/x"]}), "doi", out_dir=tmp_path)
