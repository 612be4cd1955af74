"""paperfetch: polite, resumable retrieval of legal open-access full texts.

The public surface is what ``__all__`` lists; everything else is internal.
"""

from paperfetch._version import __version__
from paperfetch.clock import FakeClock, SystemClock
from paperfetch.config import Identification
from paperfetch.errors import (
    ConfigurationError,
    DeadlineExceeded,
    DisallowedByRobots,
    DownloadError,
    DownloadTooLarge,
    HostSuppressed,
    InvalidIdentifier,
    InvalidPDF,
    InvalidURL,
    MalformedResponse,
    NetworkError,
    NotFoundError,
    PaperfetchError,
    RateLimited,
    RefusedRedirect,
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
from paperfetch.ids import Identifier, IdType, parse_identifier
from paperfetch.outcomes import Status
from paperfetch.retriever import Retriever

__all__ = [
    "ConfigurationError",
    "DeadlineExceeded",
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
    "IdType",
    "Identification",
    "Identifier",
    "InvalidIdentifier",
    "InvalidPDF",
    "InvalidURL",
    "MalformedResponse",
    "NetworkError",
    "NotFoundError",
    "Outcome",
    "PaperfetchError",
    "RateLimited",
    "RefusedRedirect",
    "RequestTimeout",
    "Retriever",
    "ServiceError",
    "Status",
    "SystemClock",
    "TooManyRedirects",
    "TruncatedDownload",
    "__version__",
    "default_classify",
    "host_limiter",
    "is_synthetic",
    "parse_identifier",
    "release_holds",
]
