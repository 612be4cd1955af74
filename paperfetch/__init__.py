"""paperfetch: polite, resumable retrieval of legal open-access full texts.

The public surface is what ``__all__`` lists; everything else is internal.
"""

import logging as _logging

from paperfetch._version import __version__
from paperfetch.cache import MetadataCache
from paperfetch.clock import FakeClock, SystemClock
from paperfetch.config import Identification
from paperfetch.errors import (
    ConfigurationError,
    DeadlineExceeded,
    DisallowedByRobots,
    DiskFull,
    DownloadError,
    DownloadTooLarge,
    HostSuppressed,
    Interrupted,
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
    TooSlow,
    TruncatedDownload,
    WriteError,
    WrongArticle,
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
from paperfetch.job import Job
from paperfetch.log import enable_logging
from paperfetch.outcomes import Status
from paperfetch.redact import Redactor, redact_text, redact_url, register_secrets
from paperfetch.redact import install_log_filter as _install_log_filter
from paperfetch.reports import read_report, report_schema
from paperfetch.retriever import Retriever
from paperfetch.settings import Settings, load_settings

# A library adds no handler and sets no level: the application's logging configuration decides.
_logging.getLogger(__name__).addHandler(_logging.NullHandler())
_install_log_filter()  # every paperfetch.* logger masks secrets before any handler sees a record

__all__ = [
    "ConfigurationError",
    "DeadlineExceeded",
    "DisallowedByRobots",
    "DiskFull",
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
    "Interrupted",
    "InvalidIdentifier",
    "InvalidPDF",
    "InvalidURL",
    "Job",
    "MalformedResponse",
    "MetadataCache",
    "NetworkError",
    "NotFoundError",
    "Outcome",
    "PaperfetchError",
    "RateLimited",
    "Redactor",
    "RefusedRedirect",
    "RequestTimeout",
    "Retriever",
    "ServiceError",
    "Settings",
    "Status",
    "SystemClock",
    "TooManyRedirects",
    "TooSlow",
    "TruncatedDownload",
    "WriteError",
    "WrongArticle",
    "__version__",
    "default_classify",
    "enable_logging",
    "host_limiter",
    "is_synthetic",
    "load_settings",
    "parse_identifier",
    "read_report",
    "redact_text",
    "redact_url",
    "register_secrets",
    "release_holds",
    "report_schema",
]
