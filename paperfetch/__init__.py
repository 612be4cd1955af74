"""paperfetch: polite, resumable retrieval of legal open-access full texts.

The public surface is what ``__all__`` lists; everything else is internal.
"""

from paperfetch._version import __version__
from paperfetch.clock import FakeClock, SystemClock
from paperfetch.config import Identification
from paperfetch.errors import (
    ConfigurationError,
    DisallowedByRobots,
    DownloadError,
    DownloadTooLarge,
    HostSuppressed,
    InvalidIdentifier,
    InvalidPDF,
    InvalidURL,
    NetworkError,
    NotFoundError,
    PaperfetchError,
    RateLimited,
    RequestTimeout,
    ServiceError,
    TooManyRedirects,
    TruncatedDownload,
)
from paperfetch.http import (
    Event,
    EventKind,
    HostLimiter,
    HostRegistry,
    HttpClient,
    Outcome,
    default_classify,
    host_limiter,
    is_synthetic,
    release_holds,
)

__all__ = [
    "ConfigurationError",
    "DisallowedByRobots",
    "DownloadError",
    "DownloadTooLarge",
    "Event",
    "EventKind",
    "FakeClock",
    "HostLimiter",
    "HostRegistry",
    "HostSuppressed",
    "HttpClient",
    "Identification",
    "InvalidIdentifier",
    "InvalidPDF",
    "InvalidURL",
    "NetworkError",
    "NotFoundError",
    "Outcome",
    "PaperfetchError",
    "RateLimited",
    "RequestTimeout",
    "ServiceError",
    "SystemClock",
    "TooManyRedirects",
    "TruncatedDownload",
    "__version__",
    "default_classify",
    "host_limiter",
    "is_synthetic",
    "release_holds",
]
