"""Every exception paperfetch raises, in one place: each a :class:`PaperfetchError`, some also the builtin
callers catch (``ValueError``, ``OSError``, ``requests``' errors). The hierarchy, what each carries and why:
docs/politeness.md, "Exceptions". :class:`Stopped` (a ``BaseException``) and :class:`Interrupted` (a
``KeyboardInterrupt``) stand apart.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any, TypeVar

import requests

from paperfetch.redact import redact_text

__all__ = [
    "ConfigurationError", "DeadlineExceeded", "DisallowedByRobots", "DiskFull", "DownloadError", "DownloadTooLarge",
    "HostSuppressed", "Interrupted", "InvalidIdentifier", "InvalidPDF", "InvalidURL", "MalformedResponse",
    "NetworkError", "NotFoundError", "PaperfetchError", "RateLimited", "RefusedRedirect", "RequestTimeout",
    "ServiceError", "StateStoreError", "Stopped", "StoreUnavailable", "TooManyRedirects", "TooSlow",
    "TruncatedDownload", "WriteError", "WrongArticle", "parse_choice"
]


class PaperfetchError(Exception):
    """Root of every exception raised by paperfetch; its message is redacted as it is made. The keywords set the
    attributes a class declares (with their defaults, as class attributes): ``ServiceError(msg, url=u)``."""

    def __init__(self, *args: Any, **attributes: object) -> None:
        super().__init__(*(redact_text(a) if isinstance(a, str) else a for a in args))
        for name, value in attributes.items():
            if not hasattr(type(self), name):
                raise TypeError(f"{type(self).__name__} has no attribute {name!r}")
            setattr(self, name, value)


class InvalidIdentifier(PaperfetchError, ValueError):
    """An input that is not a DOI, PMID, PMCID or arXiv identifier."""

    value: Any = None


class ConfigurationError(PaperfetchError, ValueError):
    """A setting that cannot work; the message lists the valid choices."""


_E = TypeVar("_E", bound=Enum)


def parse_choice(enum_cls: type[_E], value: object, setting: str) -> _E:
    """*value* as a member of *enum_cls*, or a ConfigurationError that lists the valid choices."""
    try:
        return enum_cls(value)
    except ValueError:
        choices = ", ".join(repr(m.value) for m in enum_cls)
        raise ConfigurationError(f"{setting} must be one of {choices}, not {value!r}") from None


class InvalidURL(PaperfetchError, ValueError):
    """A URL paperfetch will not request (not http/https, or no host)."""

    url: str | None = None


class DisallowedByRobots(PaperfetchError):
    """robots.txt of the host forbids this URL for our User-Agent."""

    url: str | None = None
    status_code: int | None = None
    response: requests.Response | None = None


class StateStoreError(PaperfetchError):
    """The shared host-state store (:mod:`paperfetch.state`) or the shared ledger failed."""

    store: str | None = None  # the store's name (never a password)


class StoreUnavailable(StateStoreError, ConnectionError):
    """The store's server cannot be reached (a lost Redis connection); the failed call may not have taken effect."""


class ServiceError(PaperfetchError):
    """A service, or the network on the way to it, failed the request."""

    status_code: int | None = None
    url: str | None = None
    response: requests.Response | None = None


class NotFoundError(ServiceError):
    """The service says the record does not exist; asking again will not change that."""


class RateLimited(ServiceError):
    """The host asked for no requests until ``held_until`` (a UTC datetime)."""

    held_until: datetime | None = None


class HostSuppressed(ServiceError):
    """The host answered 403 Forbidden earlier; requests to it are short-circuited."""

    reason: str = ""
    suppressed_until: datetime | None = None


class TooManyRedirects(ServiceError, requests.TooManyRedirects):
    """A redirect loop, or a chain longer than ``max_redirects``."""


class RefusedRedirect(ServiceError):
    """A redirect from a public address to a private, loopback, link-local or unspecified one was refused."""


class MalformedResponse(ServiceError, ValueError):
    """The service answered, but the body cannot be read: invalid JSON/XML or the wrong shape."""


class NetworkError(ServiceError, requests.ConnectionError):
    """Nothing arrived: the connection failed, was reset, or the name did not resolve."""


class RequestTimeout(NetworkError, requests.Timeout):
    """Nothing arrived within the timeout."""


class DeadlineExceeded(RequestTimeout):
    """The request's total deadline (connect and every read) passed, however the bytes trickled."""


class TooSlow(RequestTimeout):
    """A body arrived slower than ``min_rate_bytes_s`` for ``min_rate_window_s`` (curl's ``--speed-limit``)."""


class DownloadError(ServiceError):
    """A body arrived but cannot be kept."""


class TruncatedDownload(DownloadError):
    """The body ended before the length the server announced."""


class DownloadTooLarge(DownloadError):
    """The body is larger than the configured limit."""


class InvalidPDF(DownloadError):
    """The body is not a PDF: an HTML page, a bot challenge, an empty file …"""


class WrongArticle(DownloadError):
    """A valid PDF whose first pages carry another title of the batch better than ours (moved aside)."""

    moved_to: str | None = None
    title_match: float | None = None


class WriteError(DownloadError, OSError):
    """A body arrived, but the output folder cannot take it: read-only, no permission, an I/O error. ``path``
    is the file, ``errno`` the OS's; the batch starts no further download (docs/outcomes.md, ``write_error``)."""

    path: str | None = None

    def __init__(self, message: str, **attributes: object) -> None:
        super().__init__(message, **attributes)  # errno: OSError's attribute, set as ours
        self.strerror = message

    def __str__(self) -> str:  # the message as written (OSError's would prefix "[Errno 28]")
        return str(self.args[0]) if self.args else ""


class DiskFull(WriteError):
    """No space left on the output folder's disk (ENOSPC, a quota)."""


class Interrupted(KeyboardInterrupt):
    """``download()`` was interrupted (Ctrl-C, SIGINT, a callback's KeyboardInterrupt). ``partial`` is the call's
    outcomes frame, finished rows as they ended, the others ``stopped``; ``str()`` is the line shown."""

    def __init__(self, message: str, *, partial: Any = None) -> None:
        super().__init__(message)
        self.partial = partial


class Stopped(BaseException):
    """The batch was stopped (stop(), Ctrl-C, a failing callback, a closed client); raised in its workers only."""
