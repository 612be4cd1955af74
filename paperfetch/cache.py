"""The metadata cache, asked *before* the transport paces (docs/research.md, "The metadata cache")."""

from __future__ import annotations

import io
import os
import sqlite3
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import requests

from paperfetch import defaults
from paperfetch.config import env_cache_dir
from paperfetch.errors import ConfigurationError, NotFoundError
from paperfetch.state.sqlite import default_state_path
from paperfetch.state.sqlite_faults import FallbackDatabase

__all__ = [
    "CachedFetcher", "IDENTITY_PARAMETERS", "MetadataCache", "cache_key",
    "default_cache_path", "metadata_fetcher"
]


#: Query parameters that say who asks, never what: dropped from the key (and so from the file).
IDENTITY_PARAMETERS = frozenset({"email", "mailto", "tool", "api_key"})
_FILENAME = "metadata-cache.sqlite"
_NOT_FOUND = -1  # status column value of a stored "not found"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    status INTEGER NOT NULL,
    content_type TEXT,
    body BLOB,
    stored_at REAL NOT NULL,
    expires_at REAL NOT NULL
)
"""


def default_cache_path(folder: str | os.PathLike[str] | None = None) -> Path:
    """The cache file in *folder*, else in ``$PAPERFETCH_CACHE_DIR``, else in the platform's user cache directory."""
    named = Path(folder).expanduser() if folder else env_cache_dir()
    return (named or default_state_path().parent) / _FILENAME  # the user cache directory: the host state's


def cache_key(url: str, params: Mapping[str, Any] | None = None, data: Mapping[str, Any] | str | bytes | None = None) -> str:
    """``GET <url>?<sorted query>`` without the identity parameters; a POST's form *data* joins the key (``POST …``)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True) + [(str(k), str(v)) for k, v in (params or {}).items()]
    if isinstance(data, (str, bytes)):  # a JSON body (Semantic Scholar's batch): its text is the key
        query.append(("body", data.decode("utf-8", "replace") if isinstance(data, bytes) else data))
    else:
        query += [(str(k), str(v)) for k, v in (data or {}).items()]
    kept = sorted((k, v) for k, v in query if k.lower() not in IDENTITY_PARAMETERS)
    method = "GET" if data is None else "POST"
    return f"{method} " + urlunsplit((parts.scheme, parts.netloc.lower(), parts.path, urlencode(kept), ""))


def _create_table(db: sqlite3.Connection) -> None:
    db.execute(_SCHEMA)


class MetadataCache(FallbackDatabase):
    """Stored answers with a time to live, in one SQLite file (*path*, default :func:`default_cache_path`;
    ``":memory:"`` for a private one). Thread-safe; *now* gives wall-clock seconds (tests inject it).
    ``in_memory``: the answers live in memory only (``":memory:"``, or the file failed: see ``problem``)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, answer_ttl_s: float = defaults.CACHE_ANSWER_TTL_S,
                 not_found_ttl_s: float = defaults.CACHE_NOT_FOUND_TTL_S, now: Callable[[], float] = time.time) -> None:
        self.path = Path(path) if path not in (None, ":memory:") else (default_cache_path() if path is None else None)
        self.answer_ttl_s = answer_ttl_s
        self.not_found_ttl_s = not_found_ttl_s
        self._now = now
        super().__init__(self.path, what="the metadata cache", fallback="a cache in memory", prepare=_create_table)
        self.purge_expired()  # the file never grows beyond a week of answers

    def _execute(self, sql: str, parameters: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        return self._run("a query", lambda db: db.execute(sql, parameters))

    def get(self, key: str) -> tuple[int, str | None, bytes] | None:
        """``(status, content_type, body)`` of a live entry, or None; status -1 is a stored "not found"."""
        row = self._execute("SELECT status, content_type, body, expires_at FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None or row[3] <= self._now():
            return None
        return int(row[0]), row[1], bytes(row[2] or b"")

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return int(self._execute("SELECT COUNT(*) FROM answers WHERE expires_at > ?", (self._now(),)).fetchone()[0])

    def put_answer(self, key: str, status: int, content_type: str | None, body: bytes, *, ttl_s: float | None = None) -> None:
        """Store an answer for *ttl_s* seconds (default :attr:`answer_ttl_s`; a search's is shorter)."""
        self._put(key, status, content_type, body, self.answer_ttl_s if ttl_s is None else ttl_s)

    def put_not_found(self, key: str) -> None:
        self._put(key, _NOT_FOUND, None, b"", self.not_found_ttl_s)

    def _put(self, key: str, status: int, content_type: str | None, body: bytes, ttl: float) -> None:
        now = self._now()
        self._execute(
            "INSERT OR REPLACE INTO answers (key, status, content_type, body, stored_at, expires_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (key, status, content_type, sqlite3.Binary(body), now, now + ttl),
        )

    def delete(self, key: str) -> None:
        self._execute("DELETE FROM answers WHERE key = ?", (key,))

    def clear(self) -> int:
        """Forget every entry; the number removed."""
        removed = self._execute("DELETE FROM answers").rowcount
        self._execute("VACUUM")
        return int(removed or 0)

    def purge_expired(self) -> int:
        return int(self._execute("DELETE FROM answers WHERE expires_at <= ?", (self._now(),)).rowcount or 0)

    def __repr__(self) -> str:
        return f"MetadataCache(path={str(self.path) if self.path else ':memory:'!r})"


class CachedFetcher:
    """A Fetcher that asks *cache* first and *fetcher* on a miss; every other attribute is the wrapped fetcher's."""

    def __init__(self, fetcher: Any, cache: MetadataCache) -> None:
        self.fetcher = fetcher
        self.cache = cache

    def cached(self, url: str, params: Mapping[str, Any] | None = None) -> bool:
        """Whether :meth:`fetch` would answer from the cache (no request, no wait)."""
        return cache_key(url, params) in self.cache

    def forget(self, url: str, params: Mapping[str, Any] | None = None) -> None:
        """Drop the stored answer for this request (it could not be read), so the next fetch asks again."""
        self.cache.delete(cache_key(url, params))

    def fetch(self, url: str, *, params: dict[str, str] | None = None, key: str | None = None,
              ttl_s: float | None = None, **kwargs: Any) -> requests.Response:
        """The stored answer (``X-Paperfetch-Cache: hit``), else the transport's (*kwargs* go to it: ``classify``,
        ``headers`` …); *key* replaces :func:`cache_key`."""
        key = key or cache_key(url, params, kwargs.get("data"))
        stored = self.cache.get(key)
        if stored is not None:
            status, content_type, body = stored
            if status == _NOT_FOUND:
                shown = key.split(" ", 1)[1]
                raise NotFoundError(f"no record (cached): {shown}", url=shown, status_code=404)
            return _response(key.split(" ", 1)[1], status, content_type, body)
        try:
            response = self.fetcher.fetch(url, params=params, **kwargs)
        except NotFoundError:
            self.cache.put_not_found(key)
            raise
        if 200 <= response.status_code < 300:
            self.cache.put_answer(key, response.status_code, response.headers.get("Content-Type"), response.content,
                                  ttl_s=ttl_s)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self.fetcher, name)

    def __repr__(self) -> str:
        return f"CachedFetcher({self.fetcher!r}, {self.cache!r})"


def _response(url: str, status: int, content_type: str | None, body: bytes) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response.raw = io.BytesIO(body)  # read once by .content, as a live response's body is
    response.url = url  # the key's URL: identity parameters already removed
    response.reason = "OK (cached)"
    if content_type:
        response.headers["Content-Type"] = content_type
    response.headers["X-Paperfetch-Cache"] = "hit"
    return response


def metadata_fetcher(api: Any, cache: bool | str | os.PathLike[str] | MetadataCache | None, *,
                     folder: str | os.PathLike[str] | None = None) -> tuple[Any, MetadataCache | None]:
    """``(fetcher for metadata requests, the cache this call opened or None)``; *cache* True means the file in
    *folder* (default: the user cache directory), a path that file, a MetadataCache the caller's own."""
    if cache is None or cache is False:
        return api, None
    if isinstance(cache, MetadataCache):
        return CachedFetcher(api, cache), None  # the caller's: closed by the caller
    if cache is not True and not isinstance(cache, (str, os.PathLike)):
        raise ConfigurationError(f"cache must be True, False, a file path or a MetadataCache, not {cache!r}")
    opened = MetadataCache(default_cache_path(folder) if cache is True else cache)
    return CachedFetcher(api, opened), opened
