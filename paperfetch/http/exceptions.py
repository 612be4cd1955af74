"""Where ``requests`` errors become paperfetch errors (:func:`map_network_errors`, in the shape of httpx's
``map_httpcore_exceptions``). ``get`` lets the raw ``requests`` error through after its retries, as
PyPaperRetriever's does; only a trickling head is typed there (:class:`.limits.DeadlineErrors`, beside the
ceilings, which also maps a body's ``urllib3`` read errors: :class:`.limits.ReadErrors`).
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Callable, Generator, NoReturn

import requests

from paperfetch.clock import utc_words
from paperfetch.errors import NetworkError, PaperfetchError, RequestTimeout
from paperfetch.redact import redact_exception

__all__ = ["NETWORK_ERRORS", "map_network_errors", "network_words", "since_words",
           "unreachable", "unreachable_kind"]


#: What a call retries: a timeout, a connection error, a body cut short on the wire.
NETWORK_ERRORS = (requests.Timeout, requests.ConnectionError, requests.exceptions.ChunkedEncodingError)

#: Words of an error's text that say the host's name did not resolve ...
_DNS_WORDS = ("NameResolution", "getaddrinfo", "Name or service not known", "nodename nor servname",
              "Temporary failure in name resolution", "No address associated", "did not resolve (DNS)")
#: ... or that the host refused the connection.
_REFUSED_WORDS = ("Connection refused", "NewConnectionError", "ConnectionRefused")


def unreachable_kind(text: str) -> str:
    """``dns`` or ``refused`` when an error's *text* says the host could not be reached at all; else ``""``."""
    if any(word in text for word in _DNS_WORDS):
        return "dns"
    if any(word in text for word in _REFUSED_WORDS):
        return "refused"
    return ""


def since_words(at: float, now: float) -> str:
    """``since 16:41 UTC`` for the epoch seconds *at* (with the date when *now* is another day)."""
    return f"since {utc_words(datetime.fromtimestamp(at, timezone.utc), datetime.fromtimestamp(now, timezone.utc))}"


def unreachable(exc: BaseException) -> bool:
    """A connection that could not even start: the name did not resolve, or it was refused."""
    if isinstance(exc, requests.Timeout) or not isinstance(exc, requests.ConnectionError):
        return False
    return bool(unreachable_kind(repr(exc)))


#: What a failed connection says in words, by the words of its error's text (first match wins).
_NETWORK_WORDS = (
    (_DNS_WORDS, "the name did not resolve (DNS)"),
    (("Connection refused",), "Connection refused"),
    (("ProxyError", "Unable to connect to proxy"), "the proxy could not be used"),
    (("SSLError", "CERTIFICATE_VERIFY_FAILED", "SSL:"), "the TLS handshake failed"),
    (("Connection reset", "ConnectionResetError"), "connection reset"),
    (("RemoteDisconnected", "Connection aborted"), "the connection was closed before an answer"),
    (("Network is unreachable", "No route to host"), "no route to the host"),
    (("ConnectTimeout", "Connect timeout", "connect timeout"), "no connection in time"),
    (("ReadTimeout", "Read timed out", "read timeout"), "no answer in time"),
)
#: The marks of urllib3's reprs in an error's text (its pool, its retries, an object's address).
_REPR_MARKS = ("Pool(", "Max retries exceeded", "Caused by", "object at 0x", "Connection(host=")
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^)\"'\]]+)")


def network_words(exc: BaseException) -> str:
    """A failed request in a few words (``the name did not resolve (DNS)``, ``Connection refused``, …), never
    urllib3's repr of its connection pool; an error's own text when it holds no such repr, else its class name
    and its errno text."""
    text = f"{type(exc).__name__}: {exc!r}"
    for words, said in _NETWORK_WORDS:
        if any(word in text for word in words):
            return said
    if isinstance(exc, requests.Timeout):
        return "no answer in time"
    plain = " ".join(str(exc).split())
    if plain and not any(mark in plain for mark in _REPR_MARKS):  # paperfetch's own words, or requests' plain ones
        return plain if len(plain) <= 160 else plain[:159] + "…"
    errno = _ERRNO.search(text)
    return f"{type(exc).__name__} ({errno.group(1).strip()})" if errno else type(exc).__name__


@contextmanager
def map_network_errors(shown: str, *, what: str = "",
                       since: Callable[[], str] | None = None) -> Generator[None, None, None]:
    """A raw ``requests`` error leaving the block becomes :class:`~paperfetch.RequestTimeout` /
    :class:`~paperfetch.NetworkError`; paperfetch's own errors pass. *what* names the step in the message;
    *since* says since when an unreachable host has failed (``since 16:41 UTC``).

    The raw error is not chained as the cause (``from None``), and what stays of it as the context is redacted
    (:func:`~paperfetch.redact.redact_exception`): urllib3 names the URL with its e-mail and keys, and a
    notebook's saved traceback would show it."""
    try:
        yield
    except PaperfetchError as exc:
        _unchain(exc)
        redact_exception(exc)
        raise
    except requests.RequestException as exc:
        redact_exception(exc)
        _raise_mapped(exc, shown, what, since() if since is not None and unreachable(exc) else "")


def _raise_mapped(exc: requests.RequestException, shown: str, what: str, since: str = "") -> NoReturn:
    """Raise the paperfetch error of a raw ``requests`` *exc* (:func:`map_network_errors`)."""
    if what:
        raise NetworkError(f"{what} of {shown} failed: {network_words(exc)}", url=shown) from None
    if isinstance(exc, requests.Timeout):
        words = network_words(exc)
        detail = "" if words == "no answer in time" else f": {words}"
        raise RequestTimeout(f"no answer from {shown} in time{detail}", url=shown) from None
    reach = "is unreachable" if unreachable(exc) else "could not be reached"
    raise NetworkError(f"{shown} {reach}: {network_words(exc)}{' ' + since if since else ''}", url=shown) from None


def _unchain(exc: BaseException) -> None:
    """Drop the raw errors a paperfetch error was raised from: their text names the URL unredacted."""
    cause = exc.__cause__ if exc.__cause__ is not None else exc.__context__
    if cause is not None and not isinstance(cause, PaperfetchError):
        exc.__cause__ = None
        exc.__context__ = None
        exc.__suppress_context__ = True
