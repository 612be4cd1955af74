"""Per-host politeness state that outlives the process and spans machines (docs/state.md, "Choosing a store")."""

from __future__ import annotations

import os
from pathlib import Path

from paperfetch.config import STATE_ENV, clean_setting, env_state
from paperfetch.errors import ConfigurationError
from paperfetch.state.base import HostStateStore, Slot, StoredFacts, expire_facts, merge_facts
from paperfetch.state.memory import MemoryStore
from paperfetch.state.sqlite import SqliteStore, default_state_path

__all__ = [
    "ENV_VAR",
    "HostStateStore",
    "MemoryStore",
    "RedisStore",
    "Slot",
    "SqliteStore",
    "StoredFacts",
    "default_state_path",
    "expire_facts",
    "merge_facts",
    "open_store",
]

#: The environment variable naming the store when no spec is given (read by :func:`paperfetch.config.env_state`).
ENV_VAR = STATE_ENV


def __getattr__(name: str) -> object:  # RedisStore imports only when asked for: redis-py is an extra
    if name == "RedisStore":
        from paperfetch.state.redis import RedisStore

        return RedisStore
    raise AttributeError(name)


def open_store(spec: str | os.PathLike[str] | HostStateStore | None = None, *, fallback: str | None = None) -> HostStateStore:
    """The store *spec* names (a store as it is; None: ``PAPERFETCH_STATE``, else SQLite); *fallback* ``"local"`` backs Redis."""
    if spec is None:
        spec = env_state()
    if isinstance(spec, HostStateStore) and not isinstance(spec, (str, os.PathLike)):
        return spec
    if isinstance(spec, os.PathLike):
        return SqliteStore(spec)
    if not isinstance(spec, str):
        raise ConfigurationError(f"state must be 'memory', 'sqlite', a path, 'sqlite:///path' or 'redis://…', not {spec!r}")
    text = clean_setting("state", spec) or ""  # stripped; a control character refused, the password masked
    lowered = text.lower()
    if lowered == "memory":
        return MemoryStore()
    if lowered in ("", "sqlite", "sqlite:", "sqlite://"):
        return SqliteStore()
    if lowered.startswith(("redis://", "rediss://", "unix://")):
        from paperfetch.state.redis import RedisStore

        return RedisStore(text, fallback=fallback)
    if lowered.startswith("sqlite:///"):
        return SqliteStore(text[len("sqlite://"):])
    if lowered.startswith("sqlite:"):
        raise ConfigurationError(f"a SQLite state URL has three slashes and an absolute path: 'sqlite:///path', not {spec!r}")
    if "://" in text:
        raise ConfigurationError(f"unknown state store {text.split('://')[0]!r}; use 'memory', a path, 'sqlite:///path' or 'redis://host:port/db'")
    return SqliteStore(Path(text))
