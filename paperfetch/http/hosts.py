"""Per-host state, shared by every client in the process.

The limits being respected belong to the host, not to a Python object: a
Crawl-delay, a Retry-After, a ban. So the state lives in one small record per
host (:class:`HostLimiter`), kept in a :class:`HostRegistry`; every
:class:`~paperfetch.HttpClient` aimed at a host uses the same record.
``host_limiter(url)`` returns it; ``release_holds()`` clears every hold.

A host is the URL's authority: lower-cased host name, plus the port when it
is not the scheme's default (so ``http://127.0.0.2:8001`` and
``http://127.0.0.2:8002`` are two hosts, as their robots.txt are).

The record only keeps facts and answers questions about them ("how long
until the next request may start?"); the client decides and acts.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import urlsplit

from paperfetch.clock import SYSTEM_CLOCK, Clock
from paperfetch.errors import InvalidURL
from paperfetch.http.robots import RobotsRules

__all__ = ["HostLimiter", "HostRegistry", "default_registry", "host_key", "host_limiter", "release_holds"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def host_key(url: str) -> str:
    """The host a URL's politeness is kept under: ``host`` or ``host:port``."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidURL(f"cannot read a host from {url!r}: {exc}", url=url) from None
    host = parts.hostname
    if not host:
        if "://" not in url:
            raise InvalidURL(f"{url!r} has no host; did you mean 'https://{url}'?", url=url)
        raise InvalidURL(f"{url!r} has no host", url=url)
    if ":" in host:
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS.get(parts.scheme.lower()):
        return host
    return f"{host}:{port}"


@dataclass
class Suppression:
    reason: str
    since: float          #: monotonic
    until: float | None   #: monotonic; None: never expires


class HostLimiter:
    """The shared record of one host: pacing clock, backoff, hold, suppression, robots.

    All fields are guarded by ``cond``; read them through the methods.
    """

    def __init__(self, key: str, registry: "HostRegistry") -> None:
        self.key = key
        self._registry = registry
        self.cond = threading.Condition()
        self.robots_lock = threading.Lock()
        # pacing
        self.last_start: float | None = None
        self.gap_fraction: float = 0.0
        self.in_flight = 0
        self.min_interval_s = 0.0
        # counters
        self.requests = 0
        self.responses = 0
        self.ok = 0
        self.errors = 0
        self.last_status: int | None = None
        # politeness state
        self.backoff_s = 0.0
        self.hold_until: float | None = None
        self.hold_status: int | None = None
        self.hold_reason = ""
        self.suppression: Suppression | None = None
        self.robots: RobotsRules | None = None

    # -- holds -------------------------------------------------------------
    def hold_remaining(self, now: float) -> float:
        with self.cond:
            if self.hold_until is None:
                return 0.0
            remaining = self.hold_until - now
            if remaining <= 0:
                return 0.0
            return remaining

    def set_hold(self, until: float, *, status: int | None, reason: str) -> bool:
        """Hold the host until *until* (monotonic). A shorter hold never shortens a longer one.
        Returns True when the hold was extended."""
        with self.cond:
            if self.hold_until is not None and self.hold_until >= until:
                return False
            self.hold_until = until
            self.hold_status = status
            self.hold_reason = reason
            return True

    def release(self) -> None:
        """Clear this host's hold (after a network change, say)."""
        with self.cond:
            self.hold_until = None
            self.hold_status = None
            self.hold_reason = ""
            self.cond.notify_all()

    @property
    def held_until(self) -> datetime | None:
        """The end of the hold as a UTC datetime, or ``None`` when not held."""
        clock = self._registry.clock
        remaining = self.hold_remaining(clock.monotonic())
        if remaining <= 0:
            return None
        return datetime.fromtimestamp(clock.time() + remaining, tz=timezone.utc)

    # -- suppression ---------------------------------------------------------
    def active_suppression(self, now: float) -> Suppression | None:
        """The suppression in force, or ``None``. An expired one is cleared here, so the
        host is tried once more; a new 403 suppresses it again."""
        with self.cond:
            s = self.suppression
            if s is None:
                return None
            if s.until is not None and now >= s.until:
                self.suppression = None
                return None
            return s

    def suppress(self, reason: str, now: float, ttl: float | None) -> None:
        with self.cond:
            self.suppression = Suppression(reason, now, None if ttl is None else now + ttl)

    def unsuppress(self) -> None:
        with self.cond:
            self.suppression = None

    # -- pacing ------------------------------------------------------------
    def begin(self, now: float, gap_fraction: float) -> None:
        """A request starts now (caller holds ``cond``)."""
        self.last_start = now
        self.gap_fraction = gap_fraction
        self.in_flight += 1
        self.requests += 1

    def end(self, status: int | None, now: float | None = None) -> None:
        """A request ended (its response headers arrived, or it failed) at *now*.

        The pacing clock restarts from here: the server saw the request at some time between its
        start and now, so a gap measured from now is a gap the server sees too, whatever the latency."""
        with self.cond:
            if now is not None and (self.last_start is None or now > self.last_start):
                self.last_start = now
            self.in_flight = max(0, self.in_flight - 1)
            if status is None:
                self.errors += 1
            else:
                self.responses += 1
                self.last_status = status
                if 200 <= status < 400:
                    self.ok += 1
                else:
                    self.errors += 1
            self.cond.notify_all()

    def note_min_interval(self, seconds: float) -> None:
        with self.cond:
            self.min_interval_s = max(self.min_interval_s, seconds)

    def __repr__(self) -> str:
        return f"HostLimiter({self.key!r}, requests={self.requests}, backoff={self.backoff_s:g}s)"


class HostRegistry:
    """Every host's :class:`HostLimiter`, created on first use. One per process by default."""

    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self.clock = clock
        self._hosts: dict[str, HostLimiter] = {}
        self._lock = threading.Lock()

    def limiter(self, url_or_host: str) -> HostLimiter:
        key = host_key(url_or_host) if "://" in url_or_host else url_or_host.lower()
        with self._lock:
            limiter = self._hosts.get(key)
            if limiter is None:
                limiter = self._hosts[key] = HostLimiter(key, self)
            return limiter

    def hosts(self) -> list[HostLimiter]:
        with self._lock:
            return list(self._hosts.values())

    def release_holds(self) -> None:
        for limiter in self.hosts():
            limiter.release()

    def clear(self) -> None:
        """Forget every host (tests; a fresh start in a long-lived kernel)."""
        with self._lock:
            self._hosts.clear()


_DEFAULT_REGISTRY = HostRegistry()


def default_registry() -> HostRegistry:
    return _DEFAULT_REGISTRY


def host_limiter(url: str) -> HostLimiter:
    """The process-wide record of *url*'s host: the same object for every client."""
    return _DEFAULT_REGISTRY.limiter(url)


def release_holds() -> None:
    """Clear every host's hold in this process."""
    _DEFAULT_REGISTRY.release_holds()
