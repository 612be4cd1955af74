"""Real services for the shared-state tests: a redis-server on loopback and a Dask LocalCluster of worker processes;
and :func:`fresh_processes`, the processes those tests share a store between.

Without ``/usr/bin/redis-server`` (Debian's ``redis-server``) or dask the tests that need them
skip — unless ``PAPERFETCH_REQUIRE_REDIS`` is set (``.ci/run`` sets it): then they fail.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

REQUIRE = bool(os.environ.get("PAPERFETCH_REQUIRE_REDIS"))


def fresh_processes(module: str) -> multiprocessing.context.BaseContext:
    """A multiprocessing context whose processes are fresh interpreters, as ``spawn`` gives, but which import
    paperfetch once: each forks from a fork server that imported *module* (the test module of its target) at its
    start, and the session's later tests reuse that server. Spawning imports it in every process (a second or
    more each, four at a time on two cores). The children see the environment of the test that started the
    server; the targets take what they use (a store's spec, URLs) as arguments."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([module])  # only before the server starts: then a target imports its module
    return context


def missing(what: str) -> None:
    """Skip the test, or fail it when CI requires the service."""
    if REQUIRE:
        pytest.fail(f"{what} (PAPERFETCH_REQUIRE_REDIS is set)")
    pytest.skip(what)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """A ``redis-server`` on 127.0.0.1 at a free port, in its own directory, persisting nothing."""

    def __init__(self, port: int | None = None) -> None:
        self.binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="paperfetch-redis-"))
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.dir), "--daemonize", "no", "--protected-mode", "yes"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}")
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer within 20 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def redis_available() -> bool:
    if shutil.which("redis-server") is None and not os.path.exists("/usr/bin/redis-server"):
        return False
    try:
        import redis  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="session")
def redis_server():
    """One redis-server for the session; tests use their own key namespace or flush it."""
    if not redis_available():
        missing("redis-server or redis-py is not installed")
    server = RedisServer().start()
    yield server
    server.cleanup()


@pytest.fixture
def redis_url(redis_server):
    """The session server's URL, with database 0 flushed before the test."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()
    client.close()
    return redis_server.url


def _loopback_only() -> None:
    """Run on every Dask worker: sockets may only reach loopback, as in the test process."""
    import ipaddress

    real_connect = socket.socket.connect
    if getattr(real_connect, "_paperfetch_guard", False):
        return

    def connect(self, address):  # noqa: ANN001
        if isinstance(address, tuple):
            try:
                loopback = ipaddress.ip_address(address[0]).is_loopback
            except ValueError:
                loopback = False
            if not loopback:
                raise OSError(f"tests may only connect to loopback addresses, not {address[0]!r}")
        return real_connect(self, address)

    connect._paperfetch_guard = True
    socket.socket.connect = connect


@pytest.fixture(scope="session")
def dask_client():
    """A ``dask.distributed`` client of a LocalCluster: 2 worker processes, 1 thread each, on 127.0.0.1."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        missing("dask.distributed is not installed")
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, memory_limit=0)
    client = Client(cluster)
    client.run(_loopback_only)
    yield client
    client.close()
    cluster.close()
