"""Per-host politeness state that outlives the process and spans machines (docs/state.md, "Choosing a store")."""

from __future__ import annotations

import os

from paperfetch.config import env_state
from paperfetch.state.base import HostFacts, HostStateStore, Slot, expire_facts, merge_facts, parse_store_spec
from paperfetch.state.memory import MemoryStore
from paperfetch.state.redis import RedisStore  # redis-py itself (an extra) is imported by RedisStore()
from paperfetch.state.sqlite import SqliteStore, default_state_path

__all__ = [
    "HostFacts",
    "HostStateStore",
    "MemoryStore",
    "RedisStore",
    "Slot",
    "SqliteStore",
    "default_state_path",
    "expire_facts",
    "merge_facts",
    "open_store",
]



def open_store(spec: str | os.PathLike[str] | HostStateStore | None = None, *, fallback: str | None = None) -> HostStateStore:
    """The store *spec* names (a store as it is; None: ``PAPERFETCH_STATE``, else SQLite); *fallback* ``"local"`` backs Redis."""
    if spec is None:
        spec = env_state()
    if isinstance(spec, HostStateStore) and not isinstance(spec, (str, os.PathLike)):
        return spec
    choices = "'memory', a path, 'sqlite:///path' or 'redis://host:port/db'"
    kind, target = parse_store_spec(spec, "state", "state store", choices, memory=True)
    if kind == "memory":
        return MemoryStore()
    if kind == "redis":
        return RedisStore(str(target), fallback=fallback)
    return SqliteStore(target)  # None: the default file
