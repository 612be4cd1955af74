"""Tests for paperfetch.ledger: the contract every ledger passes (run here on SQLite), open_ledger, and the SQLite ledger."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from paperfetch import defaults
from paperfetch.errors import ConfigurationError
from paperfetch.ledger import (
    DEFAULT_LEDGER_NAME,
    SCHEMA_VERSION,
    LedgerEntry,
    RedisLedger,
    ResumeLedger,
    SqliteLedger,
    default_retryable,
    open_ledger,
    recheck_at,
    sha256_of_file,
)

PDF_BODY = b"%PDF-1.7\nhello\n%%EOF\n"


@pytest.fixture
def ledger(tmp_path: Path):
    with SqliteLedger.in_folder(tmp_path) as opened:
        yield opened


def save_pdf(folder: Path, name: str = "paper.pdf", body: bytes = PDF_BODY) -> tuple[Path, int, str]:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    return path, len(body), hashlib.sha256(body).hexdigest()


def record_download(ledger: SqliteLedger, key: str, path: Path, size: int, digest: str) -> None:
    ledger.record(key, status="downloaded", path=path, bytes=size, sha256=digest, source="unpaywall")


# --------------------------------------------------------------------------- basics

def test_in_folder_creates_the_default_file(tmp_path: Path) -> None:
    out_dir = tmp_path / "new" / "out"
    with SqliteLedger.in_folder(out_dir) as ledger:
        assert ledger.path == (out_dir / DEFAULT_LEDGER_NAME).resolve()
    assert (out_dir / DEFAULT_LEDGER_NAME).is_file()
    connection = sqlite3.connect(out_dir / DEFAULT_LEDGER_NAME)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    connection.close()


def test_path_outside_the_folder_is_stored_absolute(tmp_path: Path) -> None:
    elsewhere, _, _ = save_pdf(tmp_path / "elsewhere")
    with SqliteLedger.in_folder(tmp_path / "out") as ledger:
        ledger.record("pmid:1", status="downloaded", path=elsewhere)
        entry = ledger.get("pmid:1")
        assert entry is not None and entry.path == str(elsewhere.resolve())
        assert ledger.absolute_path(entry) == elsewhere.resolve()


def test_url_and_error_are_redacted(ledger: SqliteLedger) -> None:
    ledger.record(
        "doi:10.1/z",
        status="http_error",
        url="https://api.unpaywall.org/v2/10.1/z?email=someone@uni.example",
        error="GET https://api.openalex.org/works/x?api_key=s3cr3tkey failed; contact someone@uni.example",
    )
    entry = ledger.get("doi:10.1/z")
    assert entry is not None
    assert "s3cr3tkey" not in (entry.error or "") and "api.openalex.org" in (entry.error or "")
    assert "someone@uni.example" not in (entry.url or "") and "REDACTED" in (entry.url or "")
    assert "someone@uni.example" not in (entry.error or "")
    on_disk = [ledger.path, Path(f"{ledger.path}-wal")]
    assert all(b"someone@uni.example" not in p.read_bytes() for p in on_disk if p.exists())


# --------------------------------------------------------------------------- is_done


def test_is_done_after_folder_moves(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    path, size, digest = save_pdf(out_dir)
    with SqliteLedger.in_folder(out_dir) as ledger:
        record_download(ledger, "doi:10.1/a", path, size, digest)
    moved = out_dir.rename(tmp_path / "moved")
    with SqliteLedger.in_folder(moved) as ledger:
        assert ledger.is_done("doi:10.1/a", moved) is not None


def test_is_done_false_when_file_is_outside_out_dir(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    path, size, digest = save_pdf(tmp_path / "run1")
    with SqliteLedger(shared / "ledger.sqlite3") as ledger:
        record_download(ledger, "doi:10.1/a", path, size, digest)
        assert ledger.is_done("doi:10.1/a", tmp_path / "run1") is not None
        assert ledger.is_done("doi:10.1/a", tmp_path / "run2") is None


def test_sha256_of_file(tmp_path: Path) -> None:
    path, _, digest = save_pdf(tmp_path, body=os.urandom(3 * (1 << 20) + 7))  # spans several read chunks
    assert sha256_of_file(path) == digest


# --------------------------------------------------------------------------- the contract every ledger passes

class LedgerContract:
    """Every ledger backend must pass these (tests/test_redis_ledger.py runs them on Redis).

    A subclass provides ``spec``: what :func:`paperfetch.ledger.open_ledger` opens for the folder ``tmp_path``.
    """

    @pytest.fixture
    def spec(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    @pytest.fixture
    def ledger(self, spec, tmp_path: Path):
        with open_ledger(spec, folder=tmp_path) as opened:
            yield opened

    def test_is_a_resume_ledger_of_its_folder(self, ledger, tmp_path: Path) -> None:
        assert isinstance(ledger, ResumeLedger)
        assert ledger.folder == tmp_path.resolve()

    def test_record_get_roundtrip(self, ledger: ResumeLedger, tmp_path: Path) -> None:
        path, size, digest = save_pdf(tmp_path, "sub/x.pdf")
        ledger.record(
            "doi:10.1/x",
            status="downloaded",
            path=path,
            bytes=size,
            sha256=digest,
            source="unpaywall",
            url="https://publisher.example/x.pdf",
            http_status=200,
            extra={"title": "A paper", "year": 2020},
        )
        entry = ledger.get("doi:10.1/x")
        assert isinstance(entry, LedgerEntry)
        assert (entry.key, entry.status, entry.path, entry.bytes, entry.sha256) == (
            "doi:10.1/x", "downloaded", "sub/x.pdf", size, digest,
        )
        assert (entry.source, entry.url, entry.http_status, entry.error) == (
            "unpaywall", "https://publisher.example/x.pdf", 200, None,
        )
        assert entry.retryable is True and entry.attempts == 1
        assert entry.extra == {"title": "A paper", "year": 2020}
        assert entry.first_seen.tzinfo is not None and entry.first_seen.utcoffset() == timezone.utc.utcoffset(None)
        assert entry.first_seen == entry.updated_at
        assert ledger.absolute_path(entry) == path.resolve()
        assert ledger.get("doi:10.1/absent") is None
        assert "doi:10.1/x" in ledger and "doi:10.1/absent" not in ledger and len(ledger) == 1

    def test_attempts_increment_and_fields_update(self, ledger: ResumeLedger) -> None:
        ledger.record("doi:10.1/y", status="network_error", error="timed out", extra={"title": "T"})
        first = ledger.get("doi:10.1/y")
        ledger.record("doi:10.1/y", status="http_error", http_status=503, extra={"year": 1999})
        ledger.record("doi:10.1/y", status="not_found", http_status=404)
        last = ledger.get("doi:10.1/y")
        assert first is not None and last is not None
        assert last.attempts == 3
        assert (last.status, last.http_status, last.error) == ("not_found", 404, None)
        assert last.first_seen == first.first_seen
        assert last.updated_at >= first.updated_at
        assert last.extra == {"title": "T", "year": 1999}  # merged across records

    def test_is_done_with_intact_file(self, ledger: ResumeLedger, tmp_path: Path) -> None:
        path, size, digest = save_pdf(tmp_path)
        record_download(ledger, "doi:10.1/a", path, size, digest)
        entry = ledger.is_done("doi:10.1/a", tmp_path)
        assert entry is not None and entry.status == "downloaded"
        assert ledger.is_done("doi:10.1/a") is not None
        ledger.record("doi:10.1/b", status="already_downloaded", path=path, bytes=size, sha256=digest)
        assert ledger.is_done("doi:10.1/b", tmp_path) is not None

    def test_is_done_false_when_modified_same_size(self, ledger: ResumeLedger, tmp_path: Path) -> None:
        path, size, digest = save_pdf(tmp_path)
        record_download(ledger, "doi:10.1/a", path, size, digest)
        path.write_bytes(PDF_BODY.replace(b"hello", b"HELLO"))
        assert path.stat().st_size == size
        assert ledger.is_done("doi:10.1/a", tmp_path) is None

    def test_is_done_false_when_size_changed(self, ledger: ResumeLedger, tmp_path: Path) -> None:
        path, size, digest = save_pdf(tmp_path)
        record_download(ledger, "doi:10.1/a", path, size, digest)
        path.write_bytes(PDF_BODY[:5])
        assert ledger.is_done("doi:10.1/a", tmp_path) is None

    def test_is_done_false_when_deleted(self, ledger: ResumeLedger, tmp_path: Path) -> None:
        path, size, digest = save_pdf(tmp_path)
        record_download(ledger, "doi:10.1/a", path, size, digest)
        path.unlink()
        assert ledger.is_done("doi:10.1/a", tmp_path) is None
        assert ledger.should_retry("doi:10.1/a")

    def test_is_done_false_for_other_statuses_and_unknown_keys(self, ledger: ResumeLedger, tmp_path: Path) -> None:
        path, size, digest = save_pdf(tmp_path)
        ledger.record("doi:10.1/a", status="invalid_pdf", path=path, bytes=size, sha256=digest)
        assert ledger.is_done("doi:10.1/a", tmp_path) is None
        assert ledger.is_done("doi:10.1/never", tmp_path) is None
        ledger.record("doi:10.1/c", status="downloaded")  # no path recorded
        assert ledger.is_done("doi:10.1/c", tmp_path) is None

    @pytest.mark.parametrize(
        "status, retryable",
        [
            ("not_found", False),
            ("no_open_copy", False),
            ("invalid_identifier", False),
            ("network_error", True),
            ("http_error", True),
            ("host_held", True),
            ("host_suppressed", True),
            ("invalid_pdf", True),
            ("bot_challenge", True),
            ("disallowed_by_robots", True),
            ("downloaded", True),
        ],
    )
    def test_should_retry_defaults(self, ledger: ResumeLedger, status: str, retryable: bool) -> None:
        ledger.record("doi:10.1/r", status=status)
        assert ledger.should_retry("doi:10.1/r") is retryable
        assert default_retryable(status) is retryable

    def test_should_retry_explicit_flag_wins(self, ledger: ResumeLedger) -> None:
        ledger.record("doi:10.1/a", status="http_error", http_status=400, retryable=False)
        ledger.record("doi:10.1/b", status="not_found", retryable=True)
        assert ledger.should_retry("doi:10.1/a") is False
        assert ledger.should_retry("doi:10.1/b") is True

    def test_should_retry_unknown_key(self, ledger: ResumeLedger) -> None:
        assert ledger.should_retry("doi:10.1/never") is True

    @pytest.mark.parametrize("status", ["not_found", "no_open_copy"])
    def test_a_final_absent_answer_is_asked_again_after_the_recheck_age(self, ledger: ResumeLedger, status: str) -> None:
        ledger.record("doi:10.1/absent", status=status)
        entry = ledger.get("doi:10.1/absent")
        assert entry is not None and entry.retryable is False and ledger.should_retry("doi:10.1/absent") is False
        due = recheck_at(entry)
        assert due == entry.updated_at + timedelta(seconds=defaults.RECHECK_AFTER_S)
        assert defaults.RECHECK_AFTER_S == 30 * 24 * 3600
        assert ledger.should_retry("doi:10.1/absent", now=due - timedelta(seconds=1)) is False
        assert ledger.should_retry("doi:10.1/absent", now=due) is True
        assert ledger.should_retry("doi:10.1/absent", recheck_after_s=0) is True

    def test_other_final_answers_are_not_rechecked(self, ledger: ResumeLedger) -> None:
        ledger.record("doi:10.1/gone", status="http_error", http_status=404)
        ledger.record("doi:10.1/flag", status="not_found", retryable=False)
        ledger.record("doi:10.1/net", status="network_error")
        later = datetime.now(timezone.utc) + timedelta(days=365)
        assert ledger.should_retry("doi:10.1/gone", now=later) is False  # a gone URL is not an absence
        assert ledger.should_retry("doi:10.1/flag", now=later) is True
        assert recheck_at(ledger.get("doi:10.1/net")) is None  # asked at every run already

    def test_entries_dataframe(self, ledger: ResumeLedger, tmp_path: Path) -> None:
        empty = ledger.entries()
        assert empty.empty and "key" in empty.columns and "extra" in empty.columns
        path, size, digest = save_pdf(tmp_path)
        record_download(ledger, "doi:10.1/a", path, size, digest)
        ledger.record("pmid:2", status="not_found", http_status=404, extra={"title": "T"})
        frame = ledger.entries()
        assert list(frame["key"]) == ["doi:10.1/a", "pmid:2"]
        assert list(frame["status"]) == ["downloaded", "not_found"]
        assert frame.loc[1, "extra"] == {"title": "T"}
        assert frame.loc[1, "retryable"] == False  # noqa: E712 - numpy bool
        assert str(frame["first_seen"].dt.tz) == "UTC"
        assert frame["bytes"].isna().tolist() == [False, True]

    def test_concurrent_records_lose_nothing(self, ledger: ResumeLedger) -> None:
        threads_count, per_thread = 8, 200
        errors: list[BaseException] = []

        def worker(thread_number: int) -> None:
            try:
                for i in range(per_thread):
                    ledger.record(f"doi:10.{thread_number}/{i}", status="not_found", extra={"i": i})
                    ledger.record("doi:10.0/shared", status="network_error")
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(threads_count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors
        assert len(ledger) == threads_count * per_thread + 1
        assert ledger.get("doi:10.0/shared").attempts == threads_count * per_thread  # type: ignore[union-attr]


class TestSqliteLedger(LedgerContract):
    @pytest.fixture
    def spec(self) -> str:
        return "sqlite"


# --------------------------------------------------------------------------- open_ledger

def test_open_ledger_specs(tmp_path: Path) -> None:
    with open_ledger(folder=tmp_path) as default, open_ledger("", folder=tmp_path) as blank:
        assert isinstance(default, SqliteLedger) and default.path == (tmp_path / DEFAULT_LEDGER_NAME).resolve()
        assert blank.path == default.path
        assert open_ledger(default, folder=tmp_path / "elsewhere") is default  # a ledger object as it is
    with open_ledger(tmp_path / "a.sqlite3", folder=tmp_path) as by_path, \
            open_ledger(str(tmp_path / "b.sqlite3"), folder=tmp_path) as by_text, \
            open_ledger(f"sqlite:///{tmp_path}/c.sqlite3", folder=tmp_path) as by_url:
        assert [ledger.path.name for ledger in (by_path, by_text, by_url)] == ["a.sqlite3", "b.sqlite3", "c.sqlite3"]
    pytest.importorskip("redis")
    redis_ledger = open_ledger("redis://127.0.0.1:1/0", folder=tmp_path, name="batch")  # nothing is asked yet
    assert isinstance(redis_ledger, RedisLedger) and redis_ledger.name == "batch" and redis_ledger.fallback is None
    redis_ledger.close()


@pytest.mark.parametrize("spec, message", [
    ("memory", "unknown ledger 'memory'; use 'sqlite'"),
    ("s3://bucket/ledger", "unknown ledger 's3'.*'redis://host:port/db'"),
    ("sqlite:relative.sqlite3", "three slashes"),
    (42, "a ledger is one of"),
])
def test_open_ledger_names_the_choices(tmp_path: Path, spec: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        open_ledger(spec, folder=tmp_path)  # type: ignore[arg-type]


def test_open_ledger_local_fallback_is_the_folders_sqlite_ledger(tmp_path: Path) -> None:
    pytest.importorskip("redis")
    redis_ledger = open_ledger("redis://127.0.0.1:1/0", folder=tmp_path, fallback="local")
    assert isinstance(redis_ledger, RedisLedger) and isinstance(redis_ledger.fallback, SqliteLedger)
    assert redis_ledger.fallback.path == (tmp_path / DEFAULT_LEDGER_NAME).resolve()
    redis_ledger.close()
    with pytest.raises(ConfigurationError, match="fallback"):
        open_ledger("redis://127.0.0.1:1/0", folder=tmp_path, fallback="remote")


# --------------------------------------------------------------------------- lifecycle and schema

def test_closed_ledger_refuses_work(tmp_path: Path) -> None:
    ledger = SqliteLedger.in_folder(tmp_path)
    ledger.close()
    ledger.close()
    with pytest.raises(RuntimeError, match="closed"):
        ledger.record("doi:10.1/a", status="not_found")
    with pytest.raises(RuntimeError, match="closed"):
        ledger.get("doi:10.1/a")


def test_reopen_keeps_rows(tmp_path: Path) -> None:
    with SqliteLedger.in_folder(tmp_path) as ledger:
        ledger.record("doi:10.1/a", status="not_found")
    with SqliteLedger.in_folder(tmp_path) as ledger:
        entry = ledger.get("doi:10.1/a")
        assert entry is not None and entry.status == "not_found"
        ledger.record("doi:10.1/a", status="not_found")
        assert ledger.get("doi:10.1/a").attempts == 2  # type: ignore[union-attr]


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / DEFAULT_LEDGER_NAME
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    with pytest.raises(ConfigurationError, match="newer paperfetch"):
        SqliteLedger(path)


# --------------------------------------------------------------------------- concurrency and durability


def test_rows_survive_sigkill(tmp_path: Path) -> None:
    rows_before_signal = 50
    script = textwrap.dedent(
        f"""
        import sys, time
        from paperfetch.ledger import SqliteLedger
        ledger = SqliteLedger.in_folder({str(tmp_path)!r})
        for i in range({rows_before_signal}):
            ledger.record(f"doi:10.1/{{i}}", status="not_found", extra={{"i": i}})
        sys.stdout.write("written\\n")
        sys.stdout.flush()
        i = {rows_before_signal}
        while True:  # keep writing until killed, mid-batch
            ledger.record(f"doi:10.1/{{i}}", status="network_error")
            i += 1
            time.sleep(0.001)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line == b"written\n", process.stderr.read() if process.stderr else b""
        os.kill(process.pid, signal.SIGKILL)
        assert process.wait(timeout=10) == -signal.SIGKILL
    finally:
        if process.poll() is None:  # pragma: no cover - only when an assertion above failed
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()

    with SqliteLedger.in_folder(tmp_path) as ledger:
        for i in range(rows_before_signal):
            entry = ledger.get(f"doi:10.1/{i}")
            assert entry is not None and entry.status == "not_found" and entry.extra == {"i": i}
        assert len(ledger) >= rows_before_signal


# --------------------------------------------------------------------------- download_action: what the ledger's answers decide

@pytest.mark.parametrize("facts, action", [
    (dict(resume=True), "fetch"),                                          # never recorded, nothing looked at
    (dict(resume=True, done=True), "reuse"),                               # the ledger vouches for the file
    (dict(resume=True, done=True, final=True), "reuse"),
    (dict(resume=True, final=True), "recorded"),                           # the services called it absent
    (dict(resume=False, done=True, final=True), "fetch"),                  # resume=False: the ledger does not answer
    (dict(resume=True, done=True, on_disk=False), "fetch"),                # nothing valid under the destination
    (dict(resume=True, on_disk=True, fresh=True), "reuse"),                # another process wrote it during this run
    (dict(resume=False, on_disk=True, fresh=True), "reuse"),
    (dict(resume=False, on_disk=True, done=True), "fetch"),                # an older file, and no resume
    (dict(resume=True, on_disk=True), "fetch"),                            # an older file nobody vouches for
    (dict(resume=True, on_disk=True, done=True), "reuse"),
])
def test_download_action_table(facts: dict, action: str) -> None:
    from paperfetch.download import FileAction, download_action

    assert download_action(**facts) is FileAction(action)


def test_download_action_asks_the_ledger_only_when_its_answer_matters() -> None:
    from paperfetch.download import FileAction, download_action

    asked: list[bool] = []

    def done() -> bool:
        asked.append(True)
        return True

    assert download_action(resume=True, on_disk=True, fresh=True, done=done) is FileAction.REUSE
    assert download_action(resume=False, on_disk=True, done=done) is FileAction.FETCH
    assert download_action(resume=True, on_disk=False, done=done) is FileAction.FETCH
    assert asked == []
    assert download_action(resume=True, on_disk=True, done=done) is FileAction.REUSE and asked == [True]


def test_a_not_found_row_older_than_the_recheck_age_is_asked_again(tmp_path: Path) -> None:
    """A re-run answers a fresh not_found from the ledger (no request); one past the recheck age asks the services."""
    from paperfetch import Retriever
    from paperfetch.demo import DemoWorld

    fast = {"network_retry_base_s": 0.05, "rate_limit_min_s": 0.01, "rate_limit_max_s": 0.02}

    def run(world: DemoWorld):
        before = world.requests_served()
        with Retriever(email="tester@uni.example", out_dir=tmp_path, endpoints=world.endpoints, progress=False,
                       verbosity=0, http_options=fast, state="memory", cache=False) as r:
            frame = r.download(["10.5555/demo.unknown"])
        return str(frame["status"].iloc[0]), world.requests_served() - before

    with DemoWorld(base_ip=93) as world:
        first, asked = run(world)
        assert first == "not_found" and asked > 0
        assert run(world) == ("not_found", 0)  # final: answered from the ledger
        old = (datetime.now(timezone.utc) - timedelta(seconds=defaults.RECHECK_AFTER_S + 60)).isoformat()
        with sqlite3.connect(tmp_path / DEFAULT_LEDGER_NAME) as db:
            db.execute("UPDATE outcomes SET updated_at = ?", (old,))
        again, asked_again = run(world)
        assert again == "not_found" and asked_again > 0  # past the recheck age: the services are asked again
        assert run(world) == ("not_found", 0)  # and the new answer is final for another recheck age
