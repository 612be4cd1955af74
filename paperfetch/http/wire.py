"""The wire: one request on the network, under its ceilings (:mod:`.limits`), on the host's slot in the
host-state store, and the synthetic responses made up without a request. It does not decide whether to send
(:mod:`.policy`, :mod:`.hostside`), follow redirects (:mod:`.redirects`) or retry (the client).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, Mapping
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict

from paperfetch.clock import Clock
from paperfetch.errors import ConfigurationError, InvalidURL, PaperfetchError, Stopped, StoreUnavailable
from paperfetch.http import policy
from paperfetch.http.context import count_request, stop_event
from paperfetch.http.events import EventKind
from paperfetch.http.exceptions import NETWORK_ERRORS, unreachable
from paperfetch.http.hosts import host_key
from paperfetch.http.limits import Deadline, DeadlineErrors, deadline_scope, install_deadline_pools, read_limited
from paperfetch.redact import redact_text, redact_url
from paperfetch.state.pacing import acquire

if TYPE_CHECKING:  # pragma: no cover
    from paperfetch.http.config import TransportConfig
    from paperfetch.http.hosts import HostLimiter, HostRegistry
    from paperfetch.state import Slot

__all__ = ["Blocked", "SYNTHETIC_HEADER", "Wire", "check_url", "ensure_open", "is_synthetic", "new_session",
           "request_method", "synthetic_response"]

logger = logging.getLogger("paperfetch.http.client")  # the transport logs under one name

SYNTHETIC_HEADER = "X-Paperfetch-Synthetic"
#: one pool per host: a batch spans many hosts
_POOL_CONNECTIONS = 256
_POOL_MAXSIZE = 64

Emit = Callable[..., None]


def is_synthetic(response: requests.Response | None) -> str | None:
    """``"suppressed"`` or ``"held"`` when *response* was made up without a request, else ``None``."""
    if response is None:
        return None
    return response.headers.get(SYNTHETIC_HEADER)


def _give_body(response: requests.Response, body: bytes) -> None:
    """Give *response* a body read elsewhere, through the fields ``content`` fills (as requests-cache does)."""
    vars(response).update(_content=body, _content_consumed=True)


def synthetic_response(url: str, status: int, kind: str, reason: str,
                       headers: Mapping[str, str] | None = None) -> requests.Response:
    """A response made up without a request, marked ``X-Paperfetch-Synthetic: <kind>``."""
    response = requests.Response()
    response.status_code = status
    response.url = url
    response.reason = reason
    _give_body(response, b"")
    response.encoding = "utf-8"
    response.headers = CaseInsensitiveDict({SYNTHETIC_HEADER: kind, "Content-Length": "0", **dict(headers or {})})
    return response


class Blocked(Exception):
    """The host changed while a request waited for its turn: nothing was sent; the caller decides again."""


def ensure_open(host: "HostLimiter", settings: "TransportConfig", now: float, *, exempt: bool,
                refresh: bool = False) -> None:
    """Raise :class:`Blocked` when *host* became suppressed (unless *exempt*), held, or its breaker opened since
    the request was decided (the probe itself passes). *refresh*: read the store first (another process's 403)."""
    facts = host.facts
    if refresh:
        try:
            facts = host.refresh()
        except StoreUnavailable:
            pass  # the store does not answer: what this process knows decides
    if ((not exempt and facts.suppressed(now))
            or facts.hold_remaining(now) > 0
            or (not host.probing and policy.breaker_open(facts, settings, now) > 0)):
        raise Blocked()


def check_url(url: str) -> None:
    """Raise :class:`~paperfetch.InvalidURL` unless *url* is http(s) with a host."""
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        raise InvalidURL(f"paperfetch only requests http and https URLs, not {redact_url(url)!r}", url=redact_url(url))
    host_key(url)


# POST for idempotent reads. One code path: the method rides through the call and the wire.
_METHODS = frozenset({"GET", "POST"})


def request_method(kwargs: dict[str, Any]) -> tuple[str, Any]:
    """Pop ``method`` (default GET) and ``data`` (a POST's form body) from a call's kwargs."""
    method = str(kwargs.pop("method", None) or "GET").upper()
    data = kwargs.pop("data", None)
    if method not in _METHODS:
        raise ConfigurationError(f"paperfetch sends GET, or POST for idempotent reads; not {method!r}")
    if data is not None and method != "POST":
        raise ConfigurationError("data= is a POST's form body; pass method='POST' with it")
    return method, data


def new_session() -> requests.Session:
    """The session a client makes for itself: large pools, and the request deadline on the head too."""
    session = requests.Session()
    adapter = HTTPAdapter(pool_connections=_POOL_CONNECTIONS, pool_maxsize=_POOL_MAXSIZE)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    install_deadline_pools(session)  # the request deadline also bounds a trickling head
    return session


class Wire:
    """The session, the slots and the ceilings of one client (see the module)."""

    def __init__(self, *, session: requests.Session, registry: "HostRegistry", clock: Clock,
                 sleep: Callable[[float], None] | None, emit: Emit, config: "TransportConfig") -> None:
        self.session = session
        self.registry = registry
        self.clock = clock
        self.sleep = sleep  # None: the clock's own, interruptible wait
        self.emit = emit
        #: the client's settings (its deadline, answer ceiling, in-flight cap, minimum rate), swapped on reconfigure
        self.config = config
        self.requests_sent = 0
        self._count_lock = threading.Lock()

    def send(self, host: "HostLimiter", url: str, params: Any, headers: dict[str, str], kwargs: dict[str, Any],
             method: str = "GET", data: Any = None, *, gap_s: float | None = None,
             on_error: Callable[[BaseException], None] | None = None,
             on_response: Callable[[requests.Response], None] | None = None,
             gate: Callable[[], None] | None = None, deadline_s: float | None = None,
             cap: int | None = None) -> requests.Response:
        """Send one request. *gap_s* given (the polite path): on the caller's host slot, after reserving the
        store's start slot for that gap (always freed); ``None``: unpaced, no slot.

        *gate* runs once the pacing wait is over and raises to send nothing after all. *on_response* sees the
        answer before the host's slot is released, so the next request is decided on it; *on_error* sees a
        network error before it is raised. A request refused before it left is raised as it is and counts
        against no host. *deadline_s* replaces ``request_deadline_s``; *cap*: the host's in-flight cap."""
        paced = gap_s is not None
        slot, gap = self._take_slot(host, gap_s, gate, cap) if gap_s is not None else (None, 0.0)
        self.emit(EventKind.REQUEST, host, url)
        started = self.clock.monotonic()
        with self._count_lock:
            self.requests_sent += 1
        count_request()
        try:
            response = self.answer(method, url, params, data, headers, kwargs, deadline_s=deadline_s)
        except BaseException as exc:
            self._not_answered(host, url, exc, paced=paced, slot=slot, gap=gap, on_error=on_error)
            raise
        if not paced:
            host.end(response.status_code)
            self.emit(EventKind.RESPONSE, host, url, status=response.status_code)
            return response
        answered = self.clock.monotonic()
        try:
            if on_response is not None:
                on_response(response)
        finally:
            host.end(response.status_code, answered)
            self.finish(host, slot, gap)
        self.emit(EventKind.RESPONSE, host, url, status=response.status_code, seconds=answered - started)
        return response

    def _take_slot(self, host: "HostLimiter", gap_s: float, gate: Callable[[], None] | None,
                   cap: int | None) -> "tuple[Slot | None, float]":
        """The polite path's start slot (none when there is nothing to pace), then the *gate*; on any failure
        the slot is freed and the host's place given back."""
        slot: "Slot | None" = None
        gap = 0.0
        try:
            self.check_stop()
            if gap_s > 0 or self.config.rule(host.key).windows:  # nothing to pace: no reservation
                slot, gap = self.reserve(host, gap_s, cap)
            if gate is not None:
                gate()
        except BaseException:
            if slot is not None:
                self.finish(host, slot, 0.0)
            host.cancel()
            raise
        return slot, gap

    def _not_answered(self, host: "HostLimiter", url: str, exc: BaseException, *, paced: bool,
                      slot: "Slot | None", gap: float, on_error: Callable[[BaseException], None] | None) -> None:
        """Close the host's books on a request that got no answer; *exc* is raised by the caller."""
        network = isinstance(exc, NETWORK_ERRORS)
        # not the network's doing (an invalid header, a bug in an adapter, Ctrl-C): the host saw nothing
        # (a cap passed while reading is the host's answer: its pacing clock restarts from now)
        reached = not (paced and unreachable(exc)) if network else isinstance(exc, PaperfetchError)
        host.end(None, self.clock.monotonic() if paced or network else None, reached=reached)
        self.finish(host, slot, gap)
        if network:
            self.emit(EventKind.NETWORK_ERROR, host, url, detail=f"{type(exc).__name__}: {exc}")
            logger.debug("%s for %s: %s", type(exc).__name__, redact_url(url), redact_text(str(exc)))
            if on_error is not None:
                on_error(exc)  # a DeadlineExceeded is a timeout: a failure for the breaker
        elif isinstance(exc, Exception):
            self.emit(EventKind.NETWORK_ERROR, host, url, detail=f"not sent: {type(exc).__name__}: {exc}")
            logger.debug("%s not sent: %s: %s", redact_url(url), type(exc).__name__, redact_text(str(exc)))

    def answer(self, method: str, url: str, params: Any, data: Any, headers: dict[str, str],
               kwargs: dict[str, Any], *, deadline_s: float | None = None) -> requests.Response:
        """One request without redirects under one :class:`~paperfetch.http.limits.Deadline`; without ``stream=True``
        the body is read here within ``max_answer_bytes``, with it the response carries ``paperfetch_deadline``
        (docs/hostile.md, "Where the transport applies them")."""
        config = self.config
        deadline = Deadline(config.request_deadline_s if deadline_s is None else deadline_s, clock=self.clock,
                            min_rate_bytes_s=config.min_rate_bytes_s, min_rate_window_s=config.min_rate_window_s)
        shown = redact_url(url)
        with DeadlineErrors(shown, deadline):
            with deadline_scope(deadline):
                response = self.session.request(method, url, params=params, data=data, headers=headers,
                                                allow_redirects=False, **{**kwargs, "stream": True})
            if kwargs.get("stream"):
                response.paperfetch_deadline = deadline  # type: ignore[attr-defined]
                return response
            try:
                _give_body(response, read_limited(response, max_bytes=config.max_answer_bytes, deadline=deadline,
                                                  url=shown))
            finally:
                response.close()
            return response

    def reserve(self, host: "HostLimiter", gap_s: float, cap: int | None = None) -> "tuple[Slot | None, float]":
        """Take the host's start slot in the store, waiting for it, so every client of the store keeps the gap and
        the host's windows (end-to-end or start-to-start: docs/state.md, "How the transport uses the store")."""
        lease_s = self.registry.lease_s if (cap or self.config.max_in_flight_per_host) == 1 else 0.0
        # a start the windows put off is a wait like the gap's: the request is scheduled, never refused
        return acquire(self.registry.store, host.key, gap_s, clock=self.clock, lease_s=lease_s,
                       windows=self.config.rule(host.key).windows, sleep=self.pause), gap_s

    def finish(self, host: "HostLimiter", slot: "Slot | None", gap_s: float) -> None:
        """Release the slot: the next start is at least now + gap. A store that does not answer leaves it to its lease."""
        if slot is None:
            return
        try:
            self.registry.store.finish(slot, self.clock.time(), gap_s)
        except StoreUnavailable as exc:
            logger.warning("%s: could not release the slot in %s (%s); its lease runs out",
                           host.key, self.registry.store.name, exc)

    def pause(self, seconds: float) -> None:
        """Sleep; in a batch's worker, stopping the batch ends the sleep at once with :class:`~paperfetch.Stopped`."""
        stop = stop_event()
        if self.sleep is not None:
            self.sleep(seconds)
        elif stop is not None:
            self.clock.wait(stop, seconds)  # a batch's worker: stop() (or closing the client) wakes it
        else:
            self.clock.sleep(seconds)
        self.check_stop()

    def check_stop(self) -> None:
        stop = stop_event()
        if stop is not None and stop.is_set():
            raise Stopped("the batch was stopped; nothing more is sent")
