"""Faults of the machine: damaged, locked and full state files, a full output disk.

Each case runs the Retriever against the offline demo world with the three SQLite files a run uses (the
host state, the metadata cache, the ledger in ``out_dir``) and one of them damaged: filled with garbage,
cut in half, replaced by a folder, or made read-only (``chattr +i``: the file cannot be written *or*
moved, even by root). Every case must give one row per input within a bounded time, a WARNING naming
the file, nothing finished lost, and a re-run that resumes.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paperfetch import Retriever
from paperfetch.demo import DemoWorld
from paperfetch.state import SqliteStore, HostFacts

FAST = {"network_retry_base_s": 0.05, "rate_limit_min_s": 0.05, "rate_limit_max_s": 0.1}
GOOD = ["10.5555/demo.fast", "10.5555/demo.fast2", "10.5555/demo.slow1", "PMID:90000001"]
INPUTS = [*GOOD, "10.5555/demo.unknown"]
DONE = {"downloaded", "already_downloaded"}
#: the time limit of a test whose runs meet a damaged or locked file (a clean run takes about a second): a run
#: that waited out a lock or retried a broken store for its old 30-60 s per write does not fit in it
BOUND_S = 90
FILES = ("state", "cache", "ledger")
DAMAGES = ("garbage", "half", "folder", "readonly")


@pytest.fixture(scope="module")
def world():
    with DemoWorld(base_ip=92) as w:
        yield w


@pytest.fixture(autouse=True)
def _short_lock_timeout(monkeypatch):
    monkeypatch.setenv("PAPERFETCH_LOCK_TIMEOUT_S", "0.5")


class Files:
    """The three files of one test: state and cache in their own folders, the ledger in out_dir."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.state = root / "state" / "host-state.sqlite3"
        self.cache = root / "cache" / "metadata-cache.sqlite"
        self.out = root / "out"
        self.ledger = self.out / ".paperfetch-ledger.sqlite3"
        self.immutable: list[Path] = []

    def path(self, which: str) -> Path:
        return {"state": self.state, "cache": self.cache, "ledger": self.ledger}[which]

    def make(self, world):
        """A clean first run: four PDFs, the ledger and the cache; the host-state file written directly
        (a run keeps its store open in the process-wide registry, as a second process would not)."""
        frame, _ = self.run(world, state="memory")
        with SqliteStore(self.state) as store:
            for host in ("a.example:443", "b.example:443"):
                store.reserve(host, 1.0, time.time())
                store.put(HostFacts(host, learned_interval_s=0.01), time.time())
        return frame

    def start_from(self, clean: tuple[Path, object]):
        """The files and PDFs of a clean first run (:meth:`make`, made once per module by :func:`clean_run`),
        copied here (the ledger keeps its paths relative to its folder); the run's outcomes."""
        root, frame = clean
        shutil.copytree(root, self.root, dirs_exist_ok=True)
        return frame

    def run(self, world, out: Path | None = None, state: str | None = None):
        with Retriever(email="tester@uni.example", out_dir=out or self.out, endpoints=world.endpoints, progress=False,
                       verbosity=0, http_options=FAST, state=state or str(self.state), cache=str(self.cache)) as r:
            frame = r.download(INPUTS)
            store = r.store.name
        return frame, store

    def release(self) -> None:
        for path in self.immutable:
            subprocess.run(["chattr", "-i", str(path)], check=False)


@pytest.fixture(scope="module")
def clean_run(world, tmp_path_factory) -> tuple[Path, object]:
    """One clean first run's three files and four PDFs, which the damaged and the locked cases start from."""
    made = Files(tmp_path_factory.mktemp("clean-run"))
    return made.root, made.make(world)


@pytest.fixture
def files(tmp_path):
    made = Files(tmp_path)
    yield made
    made.release()


def damage(files: Files, which: str, how: str) -> None:
    path = files.path(which)
    assert path.is_file(), path
    for suffix in ("-wal", "-shm"):  # the damage is the file's alone: no sidecar keeps a good copy of its pages
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    if how == "garbage":
        path.write_bytes(os.urandom(64) + b"this is not a database " * 300)
    elif how == "half":
        size = path.stat().st_size
        with open(path, "r+b") as handle:
            handle.truncate(size // 2)
    elif how == "folder":
        path.unlink()
        path.mkdir()
        (path / "something").write_text("a folder where the file was")
    elif how == "readonly":
        if shutil.which("chattr") is None or os.geteuid() != 0:
            pytest.skip("chattr +i (root) is needed to make a file read-only for root")
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"chattr +i not supported here: {done.stderr.decode().strip()}")
        files.immutable.append(path)
    else:  # pragma: no cover
        raise AssertionError(how)


def statuses(frame) -> dict[str, str]:
    return dict(zip(frame["input"], frame["status"].astype(str)))


@pytest.mark.timeout(BOUND_S)
@pytest.mark.parametrize("how", DAMAGES)
@pytest.mark.parametrize("which", FILES)
def test_a_damaged_state_file_gives_rows_a_warning_naming_it_and_a_resumable_run(world, clean_run, files, caplog, which,
                                                                                   how):
    first = files.start_from(clean_run)  # a clean run made the three files (and four PDFs)
    assert set(statuses(first)[i] for i in GOOD) == {"downloaded"}
    damage(files, which, how)
    path = files.path(which)
    # The ledger's damage is seen by a re-run in the same folder (its rows must not be lost); the state
    # and the cache are read by a run into a fresh folder (so it has to ask the services again).
    out = files.out if which == "ledger" else files.root / "out2"
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="paperfetch"):
        frame, store = files.run(world, out)
    got = statuses(frame)
    assert len(frame) == len(INPUTS) and list(frame["input"]) == INPUTS
    assert {got[i] for i in GOOD} <= DONE, got
    assert got["10.5555/demo.unknown"] == "not_found"
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any(str(path) in message for message in warnings), warnings
    movable = how != "readonly"
    aside = list(path.parent.glob(path.name + ".damaged-*"))
    assert bool(aside) == movable, aside
    if which == "ledger":
        assert {got[i] for i in GOOD} == {"already_downloaded"}, got  # rebuilt from the PDFs: nothing fetched again
    if which == "state":
        assert store.startswith("memory") != movable, store
    # a re-run resumes: the PDFs of the run are not fetched again
    again, _ = files.run(world, out)
    assert {statuses(again)[i] for i in GOOD} == {"already_downloaded"}


def _hold_lock(path: Path) -> subprocess.Popen:
    """A child process holding ``BEGIN EXCLUSIVE`` on *path* until its stdin closes."""
    code = (
        "import sqlite3, sys\n"
        f"db = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
        "db.execute('BEGIN EXCLUSIVE')\n"
        "print('locked', flush=True)\n"
        "sys.stdin.read()\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "locked"
    return child


@pytest.mark.timeout(BOUND_S)
@pytest.mark.parametrize("which", FILES)
def test_a_file_locked_by_another_process_is_waited_for_a_bounded_time_then_the_run_goes_on(world, clean_run, files, caplog,
                                                                                            which):
    files.start_from(clean_run)
    path = files.path(which)
    out = files.out if which == "ledger" else files.root / "out2"
    child = _hold_lock(path)
    try:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="paperfetch"):
            frame, store = files.run(world, out)  # returns while the other process still holds the lock
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)
    got = statuses(frame)
    assert len(frame) == len(INPUTS) and {got[i] for i in GOOD} <= DONE, got
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any(str(path) in m and "locked by another process" in m for m in warnings), warnings
    if Path("/proc/locks").exists():  # Linux names the holder
        assert any(f"held by pid {child.pid}" in m for m in warnings), warnings
    assert not list(path.parent.glob(path.name + ".damaged-*"))  # a locked file is fine: never moved
    if which == "state":
        assert store.startswith("memory"), store
    again, _ = files.run(world, out)
    assert {statuses(again)[i] for i in GOOD} == {"already_downloaded"}


def test_the_lock_timeout_is_a_setting_with_a_documented_default(monkeypatch):
    from paperfetch import defaults
    from paperfetch.config import lock_timeout_s
    from paperfetch.errors import ConfigurationError

    monkeypatch.delenv("PAPERFETCH_LOCK_TIMEOUT_S")
    assert lock_timeout_s() == defaults.LOCK_TIMEOUT_S == 10.0
    assert lock_timeout_s({"PAPERFETCH_LOCK_TIMEOUT_S": "2.5"}) == 2.5
    with pytest.raises(ConfigurationError, match="PAPERFETCH_LOCK_TIMEOUT_S"):
        lock_timeout_s({"PAPERFETCH_LOCK_TIMEOUT_S": "soon"})


# ---------------------------------------------------------------------------- a full disk

@pytest.fixture
def small_disk(tmp_path):
    """A 3 MB tmpfs (root only; skipped elsewhere)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    """Fill *disk* to the last byte; the filler file (delete it to make room)."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
        except OSError:
            pass
        try:
            while True:
                handle.write(b"\0" * 512)
        except OSError:
            pass
    return filler


@pytest.mark.timeout(BOUND_S)
def test_a_full_output_disk_gives_write_error_rows_one_message_and_keeps_every_finished_row(world, files, small_disk,
                                                                                            caplog):
    out = small_disk / "out"
    with Retriever(email="tester@uni.example", out_dir=out, endpoints=world.endpoints, progress=False, verbosity=0,
                   http_options=FAST, state="memory", cache=str(files.cache)) as r:
        first = r.download(GOOD[:2])
    assert set(first["status"].astype(str)) == {"downloaded"}
    filler = fill(small_disk)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="paperfetch"):
        with Retriever(email="tester@uni.example", out_dir=out, endpoints=world.endpoints, progress=False, verbosity=0,
                       http_options=FAST, state="memory", cache=str(files.cache)) as r:
            full = r.download(INPUTS)
    got = statuses(full)
    assert len(full) == len(INPUTS)
    assert got[GOOD[0]] == got[GOOD[1]] == "already_downloaded"  # finished before: kept
    assert {got[i] for i in GOOD[2:]} == {"write_error"}, got
    assert got["10.5555/demo.unknown"] in ("not_found", "write_error")
    errors = " ".join(full.loc[full["status"] == "write_error", "error"].astype(str))
    assert "disk is full" in errors and str(out) in errors
    stops = [r.getMessage() for r in caplog.records if "starts no further downloads" in r.getMessage()]
    assert len(stops) == 1, stops  # one clear message
    assert not list(out.glob("*.part")) and not list(out.glob(".*.part"))
    filler.unlink()  # room again: the re-run fetches what failed, and only that
    with Retriever(email="tester@uni.example", out_dir=out, endpoints=world.endpoints, progress=False, verbosity=0,
                   http_options=FAST, state="memory", cache=str(files.cache)) as r:
        again = r.download(INPUTS)
    got = statuses(again)
    assert got[GOOD[0]] == got[GOOD[1]] == "already_downloaded"
    assert {got[i] for i in GOOD[2:]} == {"downloaded"}, got


def test_a_full_user_cache_disk_disables_the_cache_and_the_host_state_file_with_a_warning(world, files, small_disk,
                                                                                          caplog):
    fill(small_disk)
    cache, state = small_disk / "cache" / "metadata-cache.sqlite", small_disk / "host-state.sqlite3"
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="paperfetch"):
        with Retriever(email="tester@uni.example", out_dir=files.out, endpoints=world.endpoints, progress=False,
                       verbosity=0, http_options=FAST, state=str(state), cache=str(cache)) as r:
            frame = r.download(INPUTS)
            store = r.store.name
    got = statuses(frame)
    assert {got[i] for i in GOOD} == {"downloaded"}, got
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any(str(cache) in m and "full" in m for m in warnings), warnings
    assert any(str(state) in m and "full" in m for m in warnings), warnings
    assert store.startswith("memory")


# ---------------------------------------------------------------------------- a Redis that fails

def _redis(*args: str):
    from tests._services import free_port

    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(binary).exists():
        pytest.skip("redis-server is not installed")
    port = free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import redis

    deadline = time.monotonic() + 20
    while True:
        try:
            redis.Redis(port=port, password=args[1] if args[:1] == ("--requirepass",) else None).ping()
            break
        except redis.exceptions.RedisError:
            if time.monotonic() > deadline:
                process.kill()
                raise
            time.sleep(0.05)
    return process, port


@pytest.fixture
def redis_with_password():
    process, port = _redis("--requirepass", "right-horse-battery")
    yield port
    process.terminate()
    process.wait(10)


@pytest.fixture
def redis_out_of_memory():
    import redis

    process, port = _redis("--maxmemory", "1mb", "--maxmemory-policy", "noeviction")
    client = redis.Redis(port=port)
    try:
        for i in range(100_000):
            client.set(f"filler:{i}", "x" * 1000)
    except redis.exceptions.OutOfMemoryError:
        pass
    yield port
    process.terminate()
    process.wait(10)


def _assert_store_failure_rows(frame, store: str, secret: str | None) -> None:
    got = statuses(frame)
    assert len(frame) == len(INPUTS)
    assert "not_found" not in set(got.values()), got  # never a wrong "absent"
    assert set(got.values()) == {"network_error"}, got
    errors = " ".join(frame["error"].astype(str))
    assert store in errors
    if secret is not None:
        assert secret not in errors


@pytest.mark.timeout(BOUND_S)
@pytest.mark.parametrize("fault", ["wrong_password", "out_of_memory"])
def test_a_redis_fault_is_a_retryable_failure_with_the_stores_error_never_not_found(world, files, request, fault):
    from paperfetch.ledger import SqliteLedger

    if fault == "wrong_password":
        port = request.getfixturevalue("redis_with_password")
        url, secret, good = f"redis://:wrong-pass-123@127.0.0.1:{port}/0", "wrong-pass-123", \
            f"redis://:right-horse-battery@127.0.0.1:{port}/0"  # the same store, its password fixed, in the same process
    else:
        port = request.getfixturevalue("redis_out_of_memory")
        url, secret, good = f"redis://127.0.0.1:{port}/0", None, "memory"
    frame, _ = files.run(world, state=url)
    _assert_store_failure_rows(frame, f"127.0.0.1:{port}", secret)
    with SqliteLedger.in_folder(files.out) as ledger:
        entries = ledger.entries()
    assert entries["retryable"].all() and len(entries) == len(INPUTS)  # the re-run asks again
    again, _ = files.run(world, state=good)  # the store fixed (the password right, or another store)
    got = statuses(again)
    assert {got[i] for i in GOOD} == {"downloaded"} and got["10.5555/demo.unknown"] == "not_found", got


# ---------------------------------------------------------------------------- a wall clock that moves

T0 = 1_800_000_000.0
HOUR = 3600.0


@pytest.fixture(params=["memory", "sqlite", "redis"])
def any_store(request, tmp_path):
    from paperfetch.state import open_store

    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        store = open_store(url)
        store.clear()
    elif request.param == "sqlite":
        store = open_store(str(tmp_path / "clock.sqlite3"))
    else:
        store = open_store("memory")
    yield store
    store.close()


def test_a_slot_stored_by_a_clock_two_hours_ahead_is_clamped_to_one_interval(any_store):
    host = "pub.example:443"
    any_store.reserve(host, 1.0, T0 + 2 * HOUR)  # the clock ran 2 h ahead: next start stored at T0 + 7201
    slot = any_store.reserve(host, 1.0, T0)      # then set right
    assert slot.granted and slot.start_at <= T0 + 1.0 + 1e-6
    assert any_store.reserve(host, 1.0, T0).start_at <= T0 + 2.0 + 1e-6  # and pacing goes on from there


def test_a_lease_taken_an_hour_ahead_does_not_block_the_host_for_an_hour(any_store):
    host = "pub.example:443"
    any_store.reserve(host, 1.0, T0 + HOUR, lease_s=10.0)  # a holder whose clock was an hour ahead
    slot = any_store.reserve(host, 1.0, T0, lease_s=10.0)
    assert slot.start_at <= T0 + 10.0 + 1e-6  # at most one lease, never the hour


def test_a_hold_set_before_the_clock_stepped_back_keeps_its_length(any_store):
    host = "pub.example:443"
    any_store.put(HostFacts(host, hold_until=T0 + HOUR + 4, hold_status=429, hold_reason="Retry-After: 4"), T0 + HOUR)
    facts = any_store.get(host, T0)  # stepped back an hour during the 4 s hold
    assert facts.hold_until is not None and facts.hold_until <= T0 + 4 + 1e-6


def test_a_hold_stored_further_ahead_than_seven_days_is_clamped(any_store):
    from paperfetch import defaults

    host = "pub.example:443"
    any_store.put(HostFacts(host, hold_until=T0 + 400 * 24 * HOUR, breaker_open_until=T0 + 400 * 24 * HOUR), T0)
    facts = any_store.get(host, T0 + 1)
    assert facts.hold_until <= T0 + 1 + defaults.MAX_HOLD_S and facts.breaker_open_until <= T0 + 1 + defaults.MAX_HOLD_S


def test_the_clamp_keeps_an_honest_queue_of_starts(any_store):
    host = "pub.example:443"
    starts = [any_store.reserve(host, 3.0, T0).start_at for _ in range(20)]  # 20 workers at one instant
    assert starts == pytest.approx([T0 + 3.0 * i for i in range(20)], abs=1e-5)


def test_a_disk_that_fills_up_mid_run_moves_each_file_to_memory_with_what_it_had(small_disk, caplog):
    from paperfetch.cache import MetadataCache
    from paperfetch.ledger import SqliteLedger

    ledger = SqliteLedger(small_disk / "out" / ".paperfetch-ledger.sqlite3")
    store = SqliteStore(small_disk / "host-state.sqlite3")
    cache = MetadataCache(small_disk / "metadata-cache.sqlite")
    ledger.record("doi:10.1/first", status="not_found")
    store.put(HostFacts("first.example:443", learned_interval_s=2.0), T0)
    cache.put_answer("GET https://first.example/", 200, "application/json", b"{}")
    filler = fill(small_disk)
    with caplog.at_level(logging.WARNING, logger="paperfetch"):
        for i in range(40):  # big rows: new pages the full disk cannot give
            ledger.record(f"doi:10.1/{i}", status="network_error", error="x" * 20_000)
            store.put(HostFacts(f"h{i}.example:443", robots_txt="Disallow: /x\n" * 2000, robots_fetched_at=T0,
                                  robots_expires_at=T0 + 3600), T0)
            cache.put_answer(f"GET https://h{i}.example/", 200, "application/json", b"x" * 20_000)
    assert ledger.in_memory and store.in_memory and cache.in_memory
    assert ledger.get("doi:10.1/first").status == "not_found" and ledger.get("doi:10.1/39") is not None
    assert store.name.startswith("memory") and store.get("h39.example:443", T0).robots_txt
    assert cache.get("GET https://h39.example/") is not None
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert str(ledger.path) in messages and str(store.path) in messages and str(cache.path) in messages
    ledger.close()
    store.close()
    cache.close()
    filler.unlink()
    with SqliteLedger(small_disk / "out" / ".paperfetch-ledger.sqlite3") as reopened:  # every row committed before is kept
        assert reopened.get("doi:10.1/first").status == "not_found"
        assert reopened.recovered  # and the next run rebuilds the rest from the PDFs


DOIS = ["10.5555/demo.fast", "10.5555/demo.fast2"]  # the demo papers OpenAlex has a PDF for


def test_a_redis_fault_during_the_batched_lookup_is_retryable_and_the_fixed_rerun_downloads(world, tmp_path,
                                                                                           redis_with_password):
    """OpenAlex alone: a lookup that failed on the store is a network_error naming the store, never not_found."""
    port = redis_with_password

    def run(state: str):
        before = world.requests_served()
        with Retriever(email="tester@uni.example", out_dir=tmp_path / "out", endpoints=world.endpoints,
                       sources=("openalex",), progress=False, verbosity=0, http_options=FAST, state=state,
                       cache=str(tmp_path / "cache.sqlite")) as r:
            frame = r.download(DOIS)
        return frame, world.requests_served() - before

    frame, _ = run(f"redis://:wrong-pass-123@127.0.0.1:{port}/0")
    got = statuses(frame)
    assert set(got.values()) == {"network_error"}, got
    errors = " ".join(frame["error"].astype(str))
    assert f"127.0.0.1:{port}" in errors and "openalex" in errors and "wrong-pass-123" not in errors
    again, served = run(f"redis://:right-horse-battery@127.0.0.1:{port}/0")  # the password fixed, same process
    assert set(statuses(again).values()) == {"downloaded"}, statuses(again)
    assert served >= 1 + len(DOIS)  # the lookup and every PDF were asked for


def test_a_fixed_redis_password_is_used_in_the_same_process(redis_with_password):
    """The process-wide registry keys a Redis store by its whole URL (the password too), so a fixed one is used."""
    from paperfetch.errors import StoreUnavailable
    from paperfetch.http.hosts import registry_for

    port = redis_with_password
    wrong = registry_for(f"redis://:wrong-pass-123@127.0.0.1:{port}/0")
    with pytest.raises(StoreUnavailable):
        wrong.store.get("a.example:443", time.time())
    right = registry_for(f"redis://:right-horse-battery@127.0.0.1:{port}/0")
    assert right is not wrong and right.store.name == wrong.store.name == f"redis://127.0.0.1:{port}/0"
    assert right.store.get("a.example:443", time.time()).host == "a.example:443"
    assert registry_for(f"redis://:right-horse-battery@127.0.0.1:{port}/0") is right  # one registry per store
    for shown in (repr(right.store), right.store.name, repr(right), str(getattr(right.store, "identity", ""))):
        assert "right-horse-battery" not in shown and "wrong-pass-123" not in shown


def test_candidates_say_a_failed_batched_lookup_failed(world, tmp_path, redis_with_password):
    """``candidates()`` names the lookup's failure where no candidate came, never "no service knows" it."""
    with Retriever(email="tester@uni.example", out_dir=tmp_path, endpoints=world.endpoints, sources=("openalex",),
                   progress=False, verbosity=0, http_options=FAST, cache=False,
                   state=f"redis://:wrong-pass-123@127.0.0.1:{redis_with_password}/0") as r:
        frame = r.candidates(DOIS)
    assert len(frame) == len(DOIS) and frame["url"].isna().all()
    for error in frame["error"]:
        assert "no service knows" not in error and f"127.0.0.1:{redis_with_password}" in error, error
        assert "wrong-pass-123" not in error
