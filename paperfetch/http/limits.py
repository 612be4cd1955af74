"""Ceilings on one request's time and size, enforced while the head and body are read: a deadline (a read
timeout alone is reset by every trickled byte), a minimum rate, and a cap on decoded bytes (a gzip bomb is small
on the wire). Where the transport applies them: docs/hostile.md, "Where the transport applies them".
"""

from __future__ import annotations

import io
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import DecodeError, ProtocolError, ReadTimeoutError
from urllib3.response import BaseHTTPResponse

from paperfetch import defaults
from paperfetch.clock import SYSTEM_CLOCK, Clock
from paperfetch.errors import DeadlineExceeded, DownloadTooLarge, TooSlow

__all__ = ["Deadline", "DeadlineErrors", "ReadErrors", "deadline_scope", "install_deadline_pools", "iter_limited", "read_limited"]


@dataclass
class Deadline:
    """A point in *clock*'s monotonic time by which a request must be over, and the slowest its body may arrive:
    once the body has started, each *min_rate_window_s* must bring ``min_rate_bytes_s × min_rate_window_s``
    bytes, or :class:`~paperfetch.errors.TooSlow` (0 for either: no floor)."""

    seconds: float
    clock: Clock = SYSTEM_CLOCK
    min_rate_bytes_s: float = 0.0
    min_rate_window_s: float = 0.0
    expires_at: float = field(init=False)
    _window_start: float | None = field(init=False, default=None, repr=False)
    _window_bytes: int = field(init=False, default=0, repr=False)

    def __post_init__(self) -> None:
        self.expires_at = self.clock.monotonic() + self.seconds

    @property
    def rate_floor(self) -> bool:
        return self.min_rate_bytes_s > 0 and self.min_rate_window_s > 0

    def read_budget(self, *, start: bool = True) -> float:
        """Seconds the next read may block: what is left of the deadline, and of the rate window
        (*start*: the body's reads begin now, if they had not; the head's reads do not start it)."""
        left = self.remaining()
        if self.rate_floor:
            now = self.clock.monotonic()
            if self._window_start is None and start:
                self._window_start = now
            if self._window_start is not None:
                left = min(left, max(0.0, self._window_start + self.min_rate_window_s - now) + 0.01)
        return left

    def progress(self, nbytes: int, url: str | None = None) -> None:
        """Count *nbytes* of body; :class:`~paperfetch.errors.TooSlow` when a window closed under the floor."""
        if not self.rate_floor:
            return
        now = self.clock.monotonic()
        if self._window_start is None:
            self._window_start = now
        self._window_bytes += nbytes
        if self._window_bytes >= self.min_rate_bytes_s * self.min_rate_window_s:
            self._window_start, self._window_bytes = now, 0
        else:
            self.check_rate(url)

    def check_rate(self, url: str | None = None) -> None:
        """Raise :class:`~paperfetch.errors.TooSlow` when the current window has closed under the floor."""
        if not self.rate_floor or self._window_start is None:
            return
        elapsed = self.clock.monotonic() - self._window_start
        if elapsed >= self.min_rate_window_s and self._window_bytes < self.min_rate_bytes_s * self.min_rate_window_s:
            raise TooSlow(f"{url or 'the request'} sent {self._window_bytes} bytes in {elapsed:.1f} s, under the "
                          f"minimum of {self.min_rate_bytes_s:g} bytes/s (min_rate_bytes_s, min_rate_window_s)", url=url)

    def remaining(self) -> float:
        return self.expires_at - self.clock.monotonic()

    def expired(self) -> bool:
        return self.remaining() <= 0

    def check(self, url: str | None = None) -> None:
        if self.expired():
            raise DeadlineExceeded(f"{url or 'the request'} took longer than its deadline of {self.seconds:g} s", url=url)


class _ErrorsBlock:
    """A block that maps the errors leaving it, for *shown* under *deadline* (a class: it wraps every request
    and every read of a body, a generator costs more)."""

    __slots__ = ("shown", "deadline")

    def __init__(self, shown: str, deadline: Deadline | None) -> None:
        self.shown = shown
        self.deadline = deadline

    def __enter__(self) -> None:
        return None


class DeadlineErrors(_ErrorsBlock):
    """A request whose head trickled past *deadline* leaves as :class:`~paperfetch.DeadlineExceeded`
    (a ``requests.Timeout``, so ``get`` still raises what ``requests`` would)."""

    __slots__ = ()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        deadline = self.deadline
        if isinstance(exc, requests.RequestException) and deadline is not None and deadline.expired() \
                and not isinstance(exc, DeadlineExceeded):
            raise DeadlineExceeded(f"{self.shown} took longer than its deadline of {deadline.seconds:g} s",
                                   url=self.shown) from None


class ReadErrors(_ErrorsBlock):
    """A body read's ``urllib3`` and socket errors as ``requests`` reports them (so a call's retry and
    :func:`map_network_errors` see one family): a read timeout past *deadline* is
    :class:`~paperfetch.DeadlineExceeded`, another a ``ReadTimeout``; a broken or undecodable body a
    ``ConnectionError``."""

    __slots__ = ()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc is None:
            return
        shown, deadline = self.shown, self.deadline
        if isinstance(exc, (ReadTimeoutError, socket.timeout, requests.exceptions.Timeout)):
            if deadline is not None:
                deadline.check(shown)  # past it: DeadlineExceeded
                deadline.check_rate(shown)  # the read waited out the rate window: too slow, not a lost connection
            raise requests.exceptions.ReadTimeout(f"{shown}: no data within the read timeout") from None
        if isinstance(exc, requests.exceptions.RequestException):
            return
        if isinstance(exc, (ProtocolError, DecodeError, OSError)):
            raise requests.exceptions.ConnectionError(
                f"{shown}: the body could not be read ({exc.__class__.__name__}: {str(exc)[:200]})"
            ) from None


def read_limited(response: requests.Response, **limits: Any) -> bytes:
    """The decoded body of a streamed *response*: :func:`iter_limited`'s chunks (*limits*: its keywords), joined."""
    return b"".join(iter_limited(response, **limits))


def iter_limited(
    response: requests.Response,
    *,
    max_bytes: int,
    deadline: Deadline | None = None,
    chunk_size: int = defaults.DOWNLOAD_CHUNK_BYTES,
    truncate: bool = False,
    url: str | None = None,
) -> Iterator[bytes]:
    """Decoded chunks (at most *chunk_size*) of a ``stream=True`` *response*, within *max_bytes* and *deadline*.

    Raises :class:`~paperfetch.errors.DeadlineExceeded`, :class:`~paperfetch.errors.TooSlow`, or past the cap
    :class:`~paperfetch.errors.DownloadTooLarge` (with *truncate*: just stops); a broken body raises what
    ``iter_content`` would, so the caller's retries apply. *url* (redacted) names the request in errors.
    """
    shown = url or response.url
    raw = response.raw
    read = _reader(response, chunk_size)
    sock = _socket_of(raw)
    base_timeout = sock.gettimeout() if sock is not None else None
    total = 0
    try:
        while True:
            if deadline is not None:
                left = deadline.read_budget()  # what is left of the deadline, and of the body's rate window
                if left <= 0:
                    deadline.check(shown)
                if sock is not None:
                    sock.settimeout(left if base_timeout is None else min(left, base_timeout))
            with ReadErrors(shown, deadline):  # as requests' own iter_content reports them
                chunk = read()
            if not chunk:
                return
            if deadline is not None:
                deadline.progress(len(chunk), shown)
            if total + len(chunk) > max_bytes:
                if truncate:
                    if max_bytes > total:
                        yield chunk[: max_bytes - total]
                    return
                raise DownloadTooLarge(f"{shown} is larger than the limit of {max_bytes:,} bytes (decoded)",
                                       url=shown, status_code=response.status_code)
            total += len(chunk)
            yield chunk
    finally:
        if sock is not None:
            try:
                sock.settimeout(base_timeout)
            except OSError:
                pass


def _reader(response: requests.Response, chunk_size: int) -> Callable[[], bytes]:
    """A function returning the next decoded chunk ('' at the end), as soon as any bytes arrive."""
    raw = response.raw
    if isinstance(raw, BaseHTTPResponse):
        return lambda: raw.read1(chunk_size, decode_content=True)
    chunks = response.iter_content(chunk_size)  # a test double's body (BytesIO …): already in memory
    return lambda: next(chunks, b"")


def _socket_of(raw: object) -> socket.socket | None:
    """The socket under a urllib3 response, when it can be reached (None for test doubles)."""
    connection = getattr(raw, "_connection", None) or getattr(raw, "connection", None)
    sock = getattr(connection, "sock", None)
    return sock if isinstance(sock, socket.socket) else None


# The head: http.client reads it line by line and each byte resets the read timeout, so the socket's timeout
# is narrowed to the deadline before every receive (a timer thread per request cost a third of a loopback request).

_current = threading.local()


class _Scope:
    """:func:`deadline_scope`'s block (a class: it wraps every request, a generator costs more)."""

    __slots__ = ("deadline", "previous")

    def __init__(self, deadline: Deadline | None) -> None:
        self.deadline = deadline
        self.previous: Deadline | None = None

    def __enter__(self) -> None:
        self.previous = getattr(_current, "deadline", None)
        _current.deadline = self.deadline

    def __exit__(self, *exc: object) -> None:
        _current.deadline = self.previous


def deadline_scope(deadline: Deadline | None) -> _Scope:
    """Requests this thread sends inside the block must have their head by *deadline*."""
    return _Scope(deadline)


class _DeadlineReader(io.RawIOBase):
    """The socket's own reader (``makefile``), each receive bounded by what is left of the deadline."""

    def __init__(self, raw: Any, sock: "_DeadlineSocket") -> None:
        super().__init__()
        self._raw = raw
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        left = self._sock.deadline.read_budget(start=False)  # narrowed to the body's rate window once it started
        if left <= 0:
            raise socket.timeout("the request's deadline passed")
        base = self._sock.base_timeout
        self._sock.sock.settimeout(left if base is None else min(left, base))
        return self._raw.readinto(buffer)

    def close(self) -> None:
        if not self.closed:
            self._raw.close()  # the socket's reference count of open files, as http.client expects
        super().close()


class _DeadlineSocket:
    """*sock* as http.client sees it while it reads a head: ``makefile`` gives a :class:`_DeadlineReader`;
    ``base_timeout`` is the timeout urllib3 set (the read timeout), restored after the head."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        self.sock = sock
        self.deadline = deadline
        self.base_timeout = sock.gettimeout()

    def settimeout(self, value: float | None) -> None:
        self.base_timeout = value
        self.sock.settimeout(value)

    def makefile(self, mode: str = "rb", buffering: int = -1, **kwargs: Any) -> Any:
        if mode != "rb":  # http.client reads a response with "rb"; anything else is the socket's own
            return self.sock.makefile(mode, buffering, **kwargs)  # type: ignore[call-overload]
        reader = _DeadlineReader(self.sock.makefile("rb", buffering=0), self)
        return io.BufferedReader(reader) if buffering != 0 else reader

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


def _armed(getresponse: Callable[..., Any], conn: Any) -> Callable[..., Any]:
    """*getresponse* of *conn*, reading the head under the scoped deadline."""

    def deadline_getresponse(*args: Any, **kwargs: Any) -> Any:
        deadline: Deadline | None = getattr(_current, "deadline", None)
        sock = getattr(conn, "sock", None)
        if deadline is None or not isinstance(sock, socket.socket):
            return getresponse(*args, **kwargs)
        wrapped = _DeadlineSocket(sock, deadline)
        conn.sock = wrapped
        try:
            return getresponse(*args, **kwargs)
        finally:
            if conn.sock is wrapped:  # http.client drops the socket of a connection it closes
                conn.sock = sock
                try:
                    sock.settimeout(wrapped.base_timeout)
                except OSError:
                    pass

    return deadline_getresponse


class _DeadlinePool:
    """Mixin for urllib3 pools: each new connection's ``getresponse`` reads heads under the scoped deadline."""

    def _new_conn(self) -> Any:
        conn = super()._new_conn()  # type: ignore[misc]
        conn.getresponse = _armed(conn.getresponse, conn)
        return conn


class _HTTPPool(_DeadlinePool, HTTPConnectionPool):
    pass


class _HTTPSPool(_DeadlinePool, HTTPSConnectionPool):
    pass


def install_deadline_pools(session: requests.Session) -> None:
    """Make the HTTP adapters mounted on *session* honour :func:`deadline_scope` while reading heads."""
    for adapter in session.adapters.values():
        manager = getattr(adapter, "poolmanager", None)
        if isinstance(adapter, HTTPAdapter) and manager is not None:
            manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
