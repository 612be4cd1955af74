"""The polite transport: one client, per-host state shared by every client in the process."""

from paperfetch.http.client import DEFAULT_USER_AGENT, SYNTHETIC_HEADER, DownloadResult, HttpClient, is_synthetic
from paperfetch.http.events import Event, EventBus, EventKind
from paperfetch.http.hosts import HostLimiter, HostRegistry, host_key, host_limiter, release_holds
from paperfetch.http.outcome import Outcome, default_classify

__all__ = [
    "DEFAULT_USER_AGENT",
    "DownloadResult",
    "Event",
    "EventBus",
    "EventKind",
    "HostLimiter",
    "HostRegistry",
    "HttpClient",
    "Outcome",
    "SYNTHETIC_HEADER",
    "default_classify",
    "host_key",
    "host_limiter",
    "is_synthetic",
    "release_holds",
]
