"""The polite transport: one client, per-host state kept in a host-state store (see :mod:`paperfetch.state`)."""

from paperfetch.http.client import DEFAULT_USER_AGENT, SYNTHETIC_HEADER, DownloadResult, HttpClient, is_synthetic
from paperfetch.http.config import TransportConfig
from paperfetch.http.events import Event, EventBus, EventKind
from paperfetch.http.hosts import HostLimiter, HostRegistry, host_key, host_limiter, release_holds
from paperfetch.http.identity import user_agent
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
    "TransportConfig",
    "default_classify",
    "host_key",
    "host_limiter",
    "is_synthetic",
    "release_holds",
    "user_agent",
]
