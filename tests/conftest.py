"""Shared fixtures. Tests never leave the machine: sockets may only reach loopback."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest

from paperfetch.http.hosts import default_registry
from paperfetch.testing import LoopbackHost
from tests._real import real_fixtures_dir

REPO = Path(__file__).resolve().parents[1]


def _shared_fixtures() -> Path | None:
    return real_fixtures_dir()  # $PAPERFETCH_FIXTURES, else shared/fixtures/real beside the checkout


@pytest.fixture(scope="session")
def real_fixtures() -> Path:
    path = _shared_fixtures()
    if path is None:
        pytest.skip("shared/fixtures/real is not beside this checkout")
    return path


@pytest.fixture(autouse=True)
def _private_metadata_cache(tmp_path_factory, monkeypatch):
    """Each test gets an empty metadata cache (paperfetch.cache), never the user's (kernels inherit it too)."""
    monkeypatch.setenv("PAPERFETCH_CACHE_DIR", str(tmp_path_factory.mktemp("metadata-cache")))
    yield


@pytest.fixture(autouse=True)
def _throwaway_host_state(tmp_path_factory, monkeypatch):
    """Every test defaults to host state of its own: PAPERFETCH_STATE=memory, and the user cache dir
    (where the SQLite default lives) moved to a temporary folder, so no test writes to the user's
    cache or sees another test's holds. Subprocesses (the CLI, notebook kernels) inherit both."""
    monkeypatch.setenv("PAPERFETCH_STATE", "memory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user-cache")))
    yield


@pytest.fixture(autouse=True)
def _no_user_settings(tmp_path_factory, monkeypatch):
    """The Retriever reads the settings the CLI reads: no test sees the user's config file
    or contact e-mail. PAPERFETCH_CONFIG names a file that does not exist; a test sets it to its own."""
    monkeypatch.setenv("PAPERFETCH_CONFIG", str(tmp_path_factory.mktemp("user-config") / "absent.toml"))
    from paperfetch.settings import ENV_VARS

    for name in ENV_VARS:  # every variable the settings read, but the store (PAPERFETCH_STATE, set above)
        if name != "PAPERFETCH_STATE" and not name.endswith("_URL"):
            monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture(autouse=True)
def _fresh_default_registry():
    """Each test starts with no per-host state in the process-wide registry."""
    default_registry().clear()
    yield
    default_registry().clear()


_real_connect = socket.socket.connect


def _loopback_only_connect(self, address):  # noqa: ANN001
    host = address[0] if isinstance(address, tuple) else None
    if host is not None:
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            ip = None
        if ip is None or not ip.is_loopback:
            raise OSError(f"tests may only connect to loopback addresses, not {host!r}")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """Any connection to a non-loopback address fails loudly instead of leaving the machine."""
    monkeypatch.setattr(socket.socket, "connect", _loopback_only_connect)
    yield


@pytest.fixture
def hosts():
    """``hosts(address, routes)`` starts a LoopbackHost; every one is stopped after the test."""
    started: list[LoopbackHost] = []

    def make(address, routes):
        host = LoopbackHost(address, routes).start()
        started.append(host)
        return host

    yield make
    for host in started:
        host.stop()


# Real services for the shared-state tests (a redis-server, a Dask LocalCluster): tests/_services.py
from tests._services import dask_client, redis_server, redis_url  # noqa: E402,F401
