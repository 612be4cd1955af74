"""The polite HTTP transport: every request paperfetch makes goes through :class:`HttpClient`.

Order of operations for one hop (a redirect is a new hop, checked afresh
against its own host):

1. the URL must be http or https;
2. **suppression** — a host that answered 403 is short-circuited with a synthetic 403;
3. **hold** — a host that sent Retry-After is not asked before the time it named: a hold
   no longer than this call may wait (``max_retry_after_s`` and what is left of
   ``max_elapsed``) is waited out, a longer one ends the call at once;
4. **robots.txt** — a disallowed URL is not requested (``get`` returns ``None``);
5. **pacing** — the host's turn: at most ``max_in_flight_per_host`` requests in flight, and
   the gap since the host's previous request was answered at least the effective delay
   (configured range, Crawl-delay, backoff and per-host interval, see :mod:`.delays`);
6. send, with a timeout, without following redirects;
7. **observe** — record a hold (Retry-After on 429/503, or on a 403 that carries
   rate-limit headers), grow or shrink the backoff, suppress on a plain 403.

Then the call decides: follow a redirect, retry (429/503/504 for ``get``; a
``RETRY`` verdict for ``fetch``; timeouts and connection errors for both), or
return. ``get`` keeps PyPaperRetriever's contract and never raises for an HTTP
status; ``fetch`` follows PROVESID's and raises a typed error for anything but
``Outcome.OK``.

Synthetic responses (no request was sent) carry the header
``X-Paperfetch-Synthetic: suppressed`` or ``held``; :func:`is_synthetic`
reads it.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import random
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import urljoin, urlsplit

import pandas as pd
import requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict

from paperfetch._version import __version__
from paperfetch.clock import SYSTEM_CLOCK, Clock
from paperfetch.errors import (
    ConfigurationError,
    DeadlineExceeded,
    DisallowedByRobots,
    DownloadTooLarge,
    HostSuppressed,
    InvalidURL,
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
from paperfetch.http.delays import (
    BackoffPolicy,
    DelayRange,
    RetrySchedule,
    effective_range,
    resolve_configured_range,
)
from paperfetch.http.events import Event, EventBus, EventKind
from paperfetch.http.headers import has_rate_limit_headers, server_requested_wait
from paperfetch.http.hosts import HostLimiter, HostRegistry, default_registry, host_key
from paperfetch.http.outcome import Outcome, default_classify
from paperfetch.http.robots import MAX_ROBOTS_BYTES, RobotsRules, RobotsStatus, UnreachablePolicy
from paperfetch.redact import redact_url
# issue 11: ceilings, redirect safety and locked part files (helpers the split transport must keep calling)
from paperfetch.http.addresses import redirect_refusal
from paperfetch.http.limits import (
    DEFAULT_DEADLINE_S,
    MAX_METADATA_BYTES,
    Deadline,
    deadline_scope,
    install_deadline_pools,
    iter_limited,
    read_limited,
)
from paperfetch.parts import part_file

__all__ = ["DEFAULT_USER_AGENT", "DownloadResult", "HttpClient", "SYNTHETIC_HEADER", "is_synthetic"]

logger = logging.getLogger("paperfetch.http")

DEFAULT_USER_AGENT = f"paperfetch/{__version__}"
SYNTHETIC_HEADER = "X-Paperfetch-Synthetic"

#: Per-host minimum intervals every client applies unless told otherwise (seconds).
#: arXiv asks for no more than one request every three seconds.
DEFAULT_HOST_INTERVALS: Mapping[str, float] = {"export.arxiv.org": 3.0, "arxiv.org": 3.0}

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_ROBOTS_REDIRECTS = 5
_VERBOSITY_LEVELS = {0: logging.CRITICAL + 10, 1: logging.WARNING, 2: logging.INFO, 3: logging.DEBUG}
_NETWORK_ERRORS = (requests.Timeout, requests.ConnectionError, requests.exceptions.ChunkedEncodingError)


def is_synthetic(response: requests.Response | None) -> str | None:
    """``"suppressed"`` or ``"held"`` when *response* was made up without a request, else ``None``."""
    if response is None:
        return None
    return response.headers.get(SYNTHETIC_HEADER)


def _synthetic_response(url: str, status: int, kind: str, reason: str, headers: Mapping[str, str] = ()) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response.url = url
    response.reason = reason
    response._content = b""  # noqa: SLF001 - requests' own way to give a Response a body
    response.encoding = "utf-8"
    response.headers = CaseInsensitiveDict({SYNTHETIC_HEADER: kind, "Content-Length": "0", **dict(headers)})
    return response


@dataclass
class _Call:
    """The bookkeeping of one ``get``/``fetch`` call: what it waited and may still wait."""

    max_elapsed: float | None
    waited: float = 0.0
    attempts: int = 0

    def remaining(self) -> float:
        if self.max_elapsed is None:
            return math.inf
        return max(0.0, self.max_elapsed - self.waited)


@dataclass
class _Exchange:
    """How one request (with its redirects) ended."""

    kind: str  # "response" | "disallowed" | "suppressed" | "held" | "gave_up"
    response: requests.Response | None
    host: HostLimiter
    url: str
    detail: str = ""


@dataclass(frozen=True)
class DownloadResult:
    """A body saved under its final name."""

    path: Path
    bytes: int
    sha256: str
    url: str            #: the final URL after redirects, redacted
    status_code: int
    content_type: str | None
    attempts: int
    waited_s: float
    reused: bool = False  #: issue 11: another writer produced this file while we waited; nothing was requested


class HttpClient:
    """HTTP client with robots.txt, per-host pacing, backoff, retries, holds and 403 suppression.

    The positional parameters and their defaults are PyPaperRetriever's
    ``HttpClient`` contract (``user_agent`` defaults to ``paperfetch/<version>``);
    the keyword-only ones are paperfetch's additions. See ``docs/politeness.md``.
    """

    def __init__(
        self,
        user_agent: str = DEFAULT_USER_AGENT,
        respect_robots_txt: bool = False,
        delay_min_s: float | None = None,
        delay_max_s: float | None = None,
        honor_retry_after: bool = True,
        suppress_on_403: bool = True,
        max_retries: int = 3,
        default_retry_after_s: float = 60.0,
        max_retry_after_s: float = 300.0,
        backoff_base_s: float = 1.0,
        backoff_multiplier: float = 2.0,
        backoff_max_s: float = 300.0,
        backoff_decay_s: float = 1.0,
        rate_limit_min_s: float = 1.0,
        rate_limit_max_s: float = 3.0,
        verbosity: int = 1,
        polite_mode: bool = True,
        *,
        timeout: float | tuple[float, float] = (10.0, 60.0),
        max_elapsed: float | None = None,
        max_in_flight_per_host: int = 1,
        host_intervals: Mapping[str, float] | None = None,
        max_redirects: int = 10,
        request_deadline_s: float = DEFAULT_DEADLINE_S,  # issue 11: connect + every read, however bytes trickle
        max_answer_bytes: int = MAX_METADATA_BYTES,  # issue 11: decoded metadata answers
        allow_private_redirects: bool = False,  # issue 11: public -> private redirects are refused
        suppress_403_ttl_s: float | None = 3600.0,
        suppression_exempt: Iterable[str] = ("doi.org", "dx.doi.org"),
        robots_unreachable: UnreachablePolicy | str = UnreachablePolicy.ALLOW,
        robots_cache_ttl_s: float = 86400.0,
        robots_unreachable_ttl_s: float = 300.0,
        max_crawl_delay_s: float = 60.0,
        network_retry_schedule: RetrySchedule | str = RetrySchedule.EXPONENTIAL,
        network_retry_base_s: float = 1.0,
        pacing_margin_s: float = 0.002,
        session: requests.Session | None = None,
        clock: Clock | None = None,
        sleep: Callable[[float], None] | None = None,
        registry: HostRegistry | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if max_retries < 0:
            raise ConfigurationError(f"max_retries must be >= 0, not {max_retries!r}")
        if max_in_flight_per_host < 1:
            raise ConfigurationError(f"max_in_flight_per_host must be >= 1, not {max_in_flight_per_host!r}")
        if max_redirects < 0:
            raise ConfigurationError(f"max_redirects must be >= 0, not {max_redirects!r}")
        if rate_limit_max_s < rate_limit_min_s:
            raise ConfigurationError("rate_limit_max_s must not be smaller than rate_limit_min_s")
        self.user_agent = user_agent
        self.respect_robots_txt = respect_robots_txt
        self.honor_retry_after = honor_retry_after
        self.suppress_on_403 = suppress_on_403
        self.max_retries = int(max_retries)
        self.default_retry_after_s = float(default_retry_after_s)
        self.max_retry_after_s = float(max_retry_after_s)
        self.backoff_base_s = backoff_base_s
        self.backoff_multiplier = backoff_multiplier
        self.backoff_max_s = backoff_max_s
        self.backoff_decay_s = backoff_decay_s
        self.rate_limit_min_s = rate_limit_min_s
        self.rate_limit_max_s = rate_limit_max_s
        self.verbosity = verbosity
        self.polite_mode = polite_mode
        configured = resolve_configured_range(delay_min_s, delay_max_s)
        self.delay_min_s = None if configured is None else configured.low
        self.delay_max_s = None if configured is None else configured.high
        self._configured_range = configured
        self._fallback_range = DelayRange(float(rate_limit_min_s), float(rate_limit_max_s))
        self._backoff = BackoffPolicy(backoff_base_s, backoff_multiplier, backoff_max_s, backoff_decay_s)

        self.timeout = timeout
        self.max_elapsed = max_elapsed
        self.max_in_flight_per_host = int(max_in_flight_per_host)
        self.host_intervals = dict(DEFAULT_HOST_INTERVALS)
        if host_intervals:
            self.host_intervals.update({k.lower(): float(v) for k, v in host_intervals.items()})
        self.max_redirects = int(max_redirects)
        self.request_deadline_s = float(request_deadline_s)  # issue 11
        self.max_answer_bytes = int(max_answer_bytes)  # issue 11
        self.allow_private_redirects = bool(allow_private_redirects)  # issue 11
        self.suppress_403_ttl_s = suppress_403_ttl_s
        self.suppression_exempt = frozenset(h.lower() for h in suppression_exempt)
        self.robots_unreachable = UnreachablePolicy.parse(robots_unreachable)
        # RFC 9309 §2.4: a cached robots.txt should not be used for more than 24 hours.
        self.robots_cache_ttl_s = min(float(robots_cache_ttl_s), 86400.0)
        self.robots_unreachable_ttl_s = min(float(robots_unreachable_ttl_s), self.robots_cache_ttl_s)
        self.max_crawl_delay_s = float(max_crawl_delay_s)
        self.network_retry_schedule = RetrySchedule.parse(network_retry_schedule)
        self.network_retry_base_s = float(network_retry_base_s)
        # Added to every non-zero gap: the server sees our requests through a network whose
        # latency varies, so a gap exactly at the floor on our side can arrive below it.
        self.pacing_margin_s = float(pacing_margin_s)

        self._clock: Clock = clock if clock is not None else SYSTEM_CLOCK
        self._sleep: Callable[[float], None] = sleep if sleep is not None else self._clock.sleep
        if registry is None:
            # Host state is kept in the clock's time: a fake clock gets a registry of its own.
            registry = default_registry() if self._clock is SYSTEM_CLOCK else HostRegistry(self._clock)
        self._registry = registry
        self._rng = rng if rng is not None else random.Random()
        self._rng_lock = threading.Lock()
        self._own_session = session is None
        if session is None:
            session = requests.Session()
            adapter = HTTPAdapter(pool_connections=256, pool_maxsize=64)  # one pool per host: a batch spans many hosts
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            install_deadline_pools(session)  # issue 11: the request deadline also bounds a trickling head
        self._session = session
        self.events = EventBus()
        self._log_level = _VERBOSITY_LEVELS.get(max(0, min(3, int(verbosity))), logging.WARNING)
        if self._log_level <= logging.INFO:
            _ensure_log_handler(self._log_level)
        self._requests_sent = 0
        self._count_lock = threading.Lock()

    # ------------------------------------------------------------------ public API
    def get(self, url: str, **kwargs: Any) -> requests.Response | None:
        """GET *url* politely. PyPaperRetriever's contract:

        * a :class:`requests.Response` for any HTTP status;
        * ``None`` only when robots.txt (with ``respect_robots_txt``) disallows the URL;
        * after ``max_retries`` the final 429 (or 503/504) response;
        * a synthetic 403 for a suppressed host, and a synthetic response with the
          status that created the hold and ``Retry-After`` for a held host
          (both marked ``X-Paperfetch-Synthetic``).

        Timeouts and connection errors are retried, then raised as ``requests`` raised them.
        """
        if not self.polite_mode:
            return self._raw_get(url, kwargs)
        exchange, _ = self._call(url, kwargs, classify=self._get_classify, max_elapsed=self.max_elapsed)
        if exchange.kind == "disallowed":
            return None
        return exchange.response

    def get_many(
        self,
        urls: Iterable[str],
        *,
        workers: int | None = None,
        return_exceptions: bool = True,
        **kwargs: Any,
    ) -> list[requests.Response | BaseException | None]:
        """``[self.get(url, **kwargs) for url in urls]``, in input order, with hosts served side by side.

        Each host stays exactly as polite as with ``get``; the batch takes about as long
        as its busiest host needs. Where ``get`` would raise, the slot holds the exception
        (``return_exceptions=True``) or the first one stops the batch and is raised.
        See :func:`paperfetch.batch.get_many`.
        """
        from paperfetch.batch import get_many  # imported here, not at the top: no import cycle

        return get_many(self, urls, workers=workers, return_exceptions=return_exceptions, **kwargs)

    def fetch(
        self,
        url: str,
        *,
        classify: Callable[[requests.Response], Outcome] = default_classify,
        max_elapsed: float | None = None,
        **kwargs: Any,
    ) -> requests.Response:
        """GET *url* and return the response when ``classify(response)`` is ``Outcome.OK``.

        Raises :class:`~paperfetch.NotFoundError` (ABSENT), :class:`~paperfetch.RateLimited`
        (a held host), :class:`~paperfetch.HostSuppressed`, :class:`~paperfetch.DisallowedByRobots`,
        :class:`~paperfetch.NetworkError` / :class:`~paperfetch.RequestTimeout` or
        :class:`~paperfetch.ServiceError`; never a raw ``requests`` exception.
        """
        budget = self.max_elapsed if max_elapsed is None else max_elapsed
        shown = redact_url(url)
        try:
            if not self.polite_mode:
                response = self._raw_get(url, kwargs)
                return self._judge(response, classify(response), shown, None)
            exchange, _ = self._call(url, kwargs, classify=classify, max_elapsed=budget)
        except PaperfetchError:
            raise
        except requests.Timeout as exc:
            raise RequestTimeout(f"no answer from {shown} in time: {exc}", url=shown) from exc
        except requests.RequestException as exc:
            raise NetworkError(f"could not reach {shown}: {exc}", url=shown) from exc
        response = exchange.response
        if exchange.kind == "disallowed":
            raise DisallowedByRobots(f"robots.txt of {exchange.host.key} disallows {shown}", url=shown)
        if exchange.kind == "suppressed":
            supp = exchange.host.suppression
            raise HostSuppressed(
                f"{exchange.host.key} is suppressed ({supp.reason if supp else '403'}); no request sent",
                status_code=403,
                url=shown,
                response=response,
                reason=supp.reason if supp else "",
                suppressed_until=self._wall(supp.until) if supp and supp.until is not None else None,
            )
        if exchange.kind == "held":
            raise self._rate_limited(exchange, shown, "no request sent")
        assert response is not None
        verdict = classify(response)
        if response.status_code == 403 and exchange.host.hold_remaining(self._clock.monotonic()) > 0:
            raise self._rate_limited(exchange, shown, "HTTP 403 with rate-limit headers")
        if verdict is Outcome.RETRY and (exchange.host.hold_remaining(self._clock.monotonic()) > 0 or response.status_code == 429):
            raise self._rate_limited(exchange, shown, f"HTTP {response.status_code}")
        return self._judge(response, verdict, shown, exchange)

    def download(
        self,
        url: str,
        dest: str | os.PathLike[str],
        *,
        classify: Callable[[requests.Response], Outcome] = default_classify,
        validate: Callable[[bytes, requests.Response], None] | None = None,
        max_bytes: int | None = None,
        chunk_size: int = 64 * 1024,
        max_elapsed: float | None = None,
        validate_bytes: int = 2048,
        reuse: Callable[[Path, bool], bool] | None = None,
        **kwargs: Any,
    ) -> DownloadResult:
        """Stream *url* into *dest*, atomically.

        The body is written in chunks to a temporary file beside *dest* while its
        SHA-256 is computed; ``validate(first_bytes, response)`` may raise to reject
        it (it sees the first *validate_bytes*, or the whole body if shorter); the length must
        match Content-Length when given and stay within *max_bytes*; only then is the
        file renamed to *dest*. Timeouts, connection errors and truncated bodies are
        retried (``max_retries``, ``network_retry_schedule``). Nothing is ever left
        under *dest* unless it is complete, and no temporary file survives a failure.

        Issue 11: the body goes to a locked part file (:func:`paperfetch.parts.part_file`),
        so one destination has one writer at a time, across processes. Once the part file
        is claimed, ``reuse(dest, waited)`` may say that the file already under *dest*
        (written by another process, ``waited`` when we waited for it) is to be kept: then
        nothing is requested and the result has ``reused=True``.
        """
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shown = redact_url(url)
        with part_file(dest) as claim:  # issue 11: one writer per destination; the part file is swept if we die
            if reuse is not None and dest.exists() and reuse(dest, claim.waited):
                size, digest = _size_and_sha256(dest)
                return DownloadResult(path=dest, bytes=size, sha256=digest, url=shown, status_code=200,
                                      content_type="application/pdf", attempts=0, waited_s=0.0, reused=True)
            return self._download_claimed(url, dest, claim, classify, validate, max_bytes, chunk_size, max_elapsed,
                                          validate_bytes, shown, kwargs)

    def _download_claimed(self, url, dest, claim, classify, validate, max_bytes, chunk_size, max_elapsed,  # noqa: ANN001
                          validate_bytes, shown, kwargs) -> DownloadResult:
        attempt = 0
        waited = 0.0
        while True:
            response = self.fetch(url, classify=classify, max_elapsed=max_elapsed, stream=True, **kwargs)
            try:
                result = self._stream_to(response, dest, validate, max_bytes, chunk_size, shown, validate_bytes, claim)
                return DownloadResult(
                    path=result[0], bytes=result[1], sha256=result[2], url=redact_url(response.url or url),
                    status_code=response.status_code, content_type=response.headers.get("Content-Type"),
                    attempts=attempt + 1, waited_s=waited,
                )
            except (TruncatedDownload, *_NETWORK_ERRORS) as exc:
                if attempt >= self.max_retries:
                    if isinstance(exc, PaperfetchError):
                        raise
                    raise NetworkError(f"download of {shown} failed: {exc}", url=shown) from exc
                wait = self.network_retry_schedule.wait(attempt, self.network_retry_base_s, self.backoff_max_s)
                host = self._registry.limiter(url)
                self._emit(EventKind.RETRY, host, url, seconds=wait, detail=f"download interrupted: {exc}")
                self._log(logging.WARNING, "download of %s interrupted (%s); retrying in %.1fs", shown, exc, wait)
                self._sleep(wait)
                waited += wait
                attempt += 1
            finally:
                response.close()

    def domain_status(self) -> pd.DataFrame:
        """One row per host this process has talked to: counts, pacing, backoff, holds, suppression."""
        now = self._clock.monotonic()
        rows = []
        for host in sorted(self._registry.hosts(), key=lambda h: h.key):
            with host.cond:
                rng = self._range_for(host)
                supp = host.active_suppression(now)
                hold = host.hold_remaining(now)
                crawl = self._crawl_delay(host)
                next_at = None
                if host.last_start is not None:
                    next_at = max(host.last_start + self._gap(host), host.hold_until or 0.0)
                elif hold > 0:
                    next_at = host.hold_until
                rows.append(
                    {
                        "host": host.key,
                        "requests": host.requests,
                        "in_flight": host.in_flight,
                        "ok": host.ok,
                        "errors": host.errors,
                        "last_status": host.last_status,
                        "delay_min_s": None if rng is None else rng.low,
                        "delay_max_s": None if rng is None else rng.high,
                        "backoff_s": host.backoff_s,
                        "held_until": self._wall(host.hold_until) if hold > 0 else None,
                        "hold_status": host.hold_status if hold > 0 else None,
                        "suppressed": supp is not None,
                        "suppressed_reason": supp.reason if supp else None,
                        "suppressed_until": self._wall(supp.until) if supp and supp.until is not None else None,
                        "crawl_delay_s": crawl,
                        "robots": host.robots.status.value if host.robots else None,
                        "next_allowed_at": self._wall(next_at) if next_at is not None else None,
                    }
                )
        frame = pd.DataFrame(rows, columns=_STATUS_COLUMNS)
        for column in ("held_until", "suppressed_until", "next_allowed_at"):
            frame[column] = pd.to_datetime(frame[column], utc=True)
        for column in ("last_status", "hold_status"):
            frame[column] = frame[column].astype("Int64")
        return frame

    @property
    def suppressed_domains(self) -> dict[str, str]:
        """A copy of the suppressed hosts and why (PyPaperRetriever's property)."""
        now = self._clock.monotonic()
        result = {}
        for host in self._registry.hosts():
            supp = host.active_suppression(now)
            if supp is not None:
                result[host.key] = supp.reason
        return result

    @property
    def backoff_delays(self) -> dict[str, float]:
        """A copy of the hosts with active backoff and its seconds (PyPaperRetriever's property)."""
        return {h.key: h.backoff_s for h in self._registry.hosts() if h.backoff_s > 0}

    @property
    def registry(self) -> HostRegistry:
        return self._registry

    @property
    def requests_sent(self) -> int:
        """Requests this client actually put on the wire (robots.txt included)."""
        return self._requests_sent

    def host_limiter(self, url: str) -> HostLimiter:
        """The shared record of *url*'s host in this client's registry."""
        return self._registry.limiter(url)

    def release_holds(self) -> None:
        """Clear every hold in this client's registry."""
        self._registry.release_holds()

    def subscribe(self, subscriber: Callable[[Event], None]) -> Callable[[], None]:
        """Receive every :class:`~paperfetch.http.events.Event`; returns an unsubscribe function."""
        return self.events.subscribe(subscriber)

    def ready_in(self, url: str) -> float:
        """Seconds until a request to *url*'s host could start (0: now); ``inf`` while suppressed.

        A scheduler reads this to serve hosts that are due and defer the others.
        """
        host = self._registry.limiter(url)
        now = self._clock.monotonic()
        if self.polite_mode and self.suppress_on_403 and host.active_suppression(now) and not self._exempt(url):
            return math.inf
        with host.cond:
            hold = host.hold_remaining(now)
            pace = 0.0 if host.last_start is None else host.last_start + self._gap(host) - now
            busy = 0.0 if host.in_flight < self.max_in_flight_per_host else 0.001
            return max(0.0, hold, pace, busy) if self.polite_mode else 0.0

    def close(self) -> None:
        """Close the session if this client created it."""
        if self._own_session:
            self._session.close()

    def __enter__(self) -> "HttpClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"HttpClient(user_agent={self.user_agent!r}, polite_mode={self.polite_mode}, "
            f"respect_robots_txt={self.respect_robots_txt}, hosts={len(self._registry.hosts())})"
        )

    # ------------------------------------------------------------------ the call
    def _get_classify(self, response: requests.Response) -> Outcome:
        """``get``'s retry rule: 429 (with honor_retry_after), 503 and 504 are retried."""
        status = response.status_code
        if status == 429 and self.honor_retry_after:
            return Outcome.RETRY
        if status in (503, 504):
            return Outcome.RETRY
        return Outcome.OK

    def _call(
        self,
        url: str,
        kwargs: dict[str, Any],
        *,
        classify: Callable[[requests.Response], Outcome],
        max_elapsed: float | None,
    ) -> tuple[_Exchange, _Call]:
        call = _Call(max_elapsed)
        while True:
            try:
                exchange = self._exchange(url, dict(kwargs), call)
            except TooManyRedirects:
                raise
            except _NETWORK_ERRORS as exc:
                if call.attempts < self.max_retries:
                    wait = self.network_retry_schedule.wait(call.attempts, self.network_retry_base_s, self.backoff_max_s)
                    if wait <= call.remaining():
                        host = self._registry.limiter(url)
                        self._emit(EventKind.RETRY, host, url, seconds=wait, detail=type(exc).__name__)
                        self._log(logging.WARNING, "%s for %s; retrying in %.1fs", type(exc).__name__, redact_url(url), wait)
                        self._wait(wait, host, url, call, "network retry")
                        call.attempts += 1
                        continue
                raise
            if exchange.kind != "response":
                return exchange, call
            response = exchange.response
            assert response is not None
            if classify(response) is not Outcome.RETRY or call.attempts >= self.max_retries:
                return exchange, call
            wait = self._retry_wait(exchange)
            allowance = min(self.max_retry_after_s, call.remaining())
            if wait > allowance:
                self._log(
                    logging.INFO,
                    "HTTP %s from %s asks for %.0fs, more than this call may wait (%.0fs); giving up",
                    response.status_code, exchange.host.key, wait, allowance,
                )
                exchange.kind = "gave_up"
                return exchange, call
            self._emit(EventKind.RETRY, exchange.host, exchange.url, status=response.status_code, seconds=wait)
            self._log(logging.WARNING, "HTTP %s from %s; waiting %.1fs before retry", response.status_code, exchange.host.key, wait)
            response.close()
            self._wait(wait, exchange.host, exchange.url, call, f"HTTP {response.status_code}")
            call.attempts += 1

    def _retry_wait(self, exchange: _Exchange) -> float:
        response = exchange.response
        assert response is not None
        host = exchange.host
        server = server_requested_wait(response.headers, self._clock.time())
        if server is not None:
            return server.seconds  # never shortened: a wait beyond the allowance ends the call
        if response.status_code == 429:
            return min(max(self.default_retry_after_s, host.backoff_s), self.max_retry_after_s)
        if response.status_code not in (503, 504):
            # a RETRY verdict on another status (a 500, a service's "busy" page) slows the host too
            self._change_backoff(host, exchange.url, self._backoff.increase(host.backoff_s))
        return min(host.backoff_s, self.max_retry_after_s)

    def _exchange(self, url: str, kwargs: dict[str, Any], call: _Call) -> _Exchange:
        params = kwargs.pop("params", None)
        kwargs.pop("allow_redirects", None)
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self.timeout
        headers = dict(kwargs.pop("headers", None) or {})
        headers.setdefault("User-Agent", self.user_agent)
        current = url
        history: list[requests.Response] = []
        seen: set[str] = set()
        for hop in range(self.max_redirects + 1):
            self._check_url(current)
            host = self._registry.limiter(current)
            now = self._clock.monotonic()
            exempt = self._exempt(current)
            if self.suppress_on_403 and not exempt:
                supp = host.active_suppression(now)
                if supp is not None:
                    self._emit(EventKind.SUPPRESSED, host, current, status=403, detail=supp.reason)
                    self._log(logging.DEBUG, "%s is suppressed; synthetic 403 for %s", host.key, redact_url(current))
                    response = _synthetic_response(current, 403, "suppressed", "Forbidden (suppressed)")
                    return _Exchange("suppressed", response, host, current, supp.reason)
            if self._held_beyond_allowance(host, now, call):
                return _Exchange("held", self._held_response(host, current), host, current)
            if self.respect_robots_txt:
                rules = self._robots_rules(host, current, call)
                if not rules.can_fetch(current, self.user_agent):
                    self._emit(EventKind.DISALLOWED, host, current, detail=rules.status.value)
                    self._log(logging.WARNING, "Blocked by robots.txt: %s", redact_url(current))
                    return _Exchange("disallowed", None, host, current)
            if not self._acquire(host, current, call):
                return _Exchange("held", self._held_response(host, current), host, current)
            response = self._send(host, current, params if hop == 0 else None, headers, kwargs)
            self._observe(host, current, response, exempt=exempt)
            location = response.headers.get("Location")
            if response.status_code in _REDIRECT_STATUSES and location:
                target = urljoin(response.url or current, location)
                seen.add(current)
                if hop >= self.max_redirects or target in seen:
                    response.close()
                    shown = redact_url(url)
                    why = "a redirect loop" if target in seen else f"more than {self.max_redirects} redirects"
                    raise TooManyRedirects(
                        f"{shown} led to {why} (last hop {redact_url(current)} -> {redact_url(target)})",
                        status_code=response.status_code,
                        url=shown,
                        response=response,
                    )
                refusal = redirect_refusal(current, target, self.allow_private_redirects)  # issue 11
                if refusal is not None:
                    response.close()
                    raise RefusedRedirect(f"{redact_url(current)} -> {redact_url(target)}: {refusal}",
                                          status_code=response.status_code, url=redact_url(url))
                if urlsplit(target).hostname != urlsplit(current).hostname:
                    headers.pop("Authorization", None)
                self._emit(EventKind.REDIRECT, host, current, status=response.status_code, detail=redact_url(target))
                response.close()
                history.append(response)
                current = target
                continue
            response.history = history
            return _Exchange("response", response, host, current)
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(
        self, host: HostLimiter, url: str, params: Any, headers: dict[str, str], kwargs: dict[str, Any]
    ) -> requests.Response:
        """Send one request on the host slot taken by ``_acquire``; always frees the slot."""
        self._emit(EventKind.REQUEST, host, url)
        started = self._clock.monotonic()
        with self._count_lock:
            self._requests_sent += 1
        deadline = Deadline(self.request_deadline_s)  # issue 11: the whole request, first byte to last
        try:
            with deadline_scope(deadline):  # issue 11
                response = self._session.get(url, params=params, headers=headers, allow_redirects=False,
                                             **{**kwargs, "stream": True})
            if not kwargs.get("stream"):  # issue 11: read the answer within its deadline and decoded-size cap
                try:
                    response._content = read_limited(response, max_bytes=self.max_answer_bytes, deadline=deadline,
                                                     url=redact_url(url))
                finally:
                    response.close()
            else:
                response.paperfetch_deadline = deadline  # type: ignore[attr-defined]
        except requests.RequestException as exc:
            host.end(None, self._clock.monotonic())
            self._emit(EventKind.NETWORK_ERROR, host, url, detail=f"{type(exc).__name__}: {exc}")
            if deadline.expired() and not isinstance(exc, DeadlineExceeded):  # issue 11: the head trickled past it
                shown = redact_url(url)
                raise DeadlineExceeded(f"{shown} took longer than its deadline of {deadline.seconds:g} s",
                                       url=shown) from None
            raise
        except BaseException:
            host.end(None, self._clock.monotonic())
            raise
        answered = self._clock.monotonic()
        host.end(response.status_code, answered)
        self._emit(EventKind.RESPONSE, host, url, status=response.status_code, seconds=answered - started)
        return response

    # ------------------------------------------------------------------ politeness
    def _held_beyond_allowance(self, host: HostLimiter, now: float, call: _Call) -> bool:
        remaining = host.hold_remaining(now)
        return remaining > 0 and remaining > min(self.max_retry_after_s, call.remaining())

    def _held_response(self, host: HostLimiter, url: str) -> requests.Response:
        remaining = host.hold_remaining(self._clock.monotonic())
        status = host.hold_status or 429
        self._emit(EventKind.HELD, host, url, status=status, seconds=remaining, detail=host.hold_reason)
        self._log(logging.DEBUG, "%s is held for %.0fs more; no request sent for %s", host.key, remaining, redact_url(url))
        return _synthetic_response(
            url, status, "held", "Held (no request sent)", {"Retry-After": str(max(1, math.ceil(remaining)))}
        )

    def _acquire(self, host: HostLimiter, url: str, call: _Call) -> bool:
        """Wait for the host's turn and take a slot. False when a hold longer than this call
        may wait stands in the way (nothing was sent)."""
        while True:
            with host.cond:
                now = self._clock.monotonic()
                hold = host.hold_remaining(now)
                if hold > 0:
                    kind, seconds = "hold", hold
                elif host.in_flight >= self.max_in_flight_per_host:
                    host.cond.wait(timeout=0.5)  # real time: woken when a request on this host ends
                    continue
                else:
                    seconds = 0.0
                    if host.last_start is not None:
                        seconds = host.last_start + self._gap(host) - now
                    if seconds <= 0:
                        with self._rng_lock:
                            fraction = self._rng.random()
                        host.begin(now, fraction)
                        return True
                    kind = "pacing"
            if kind == "hold" and seconds > min(self.max_retry_after_s, call.remaining()):
                return False
            self._wait(seconds, host, url, call, kind)

    def _gap(self, host: HostLimiter) -> float:
        """Seconds required between the host's last request start and the next one."""
        rng = self._range_for(host)
        if rng is None:
            return 0.0
        gap = rng.sample(host.gap_fraction)
        return gap + self.pacing_margin_s if gap > 0 else 0.0

    def _range_for(self, host: HostLimiter) -> DelayRange | None:
        interval = max(host.min_interval_s, self.host_intervals.get(host.key, 0.0))
        return effective_range(
            configured=self._configured_range,
            # robots (and its fallback range) only for hosts whose robots.txt this client consulted:
            # a documented API that another client of the process paces is not crawled by this one
            respect_robots_txt=self.respect_robots_txt and host.robots is not None,
            crawl_delay=self._crawl_delay(host),
            fallback=self._fallback_range,
            backoff=host.backoff_s,
            min_interval=interval,
        )

    def _crawl_delay(self, host: HostLimiter) -> float | None:
        if not self.respect_robots_txt or host.robots is None:
            return None
        return host.robots.crawl_delay(self.user_agent, self.max_crawl_delay_s)

    def _observe(self, host: HostLimiter, url: str, response: requests.Response, *, exempt: bool, robots: bool = False) -> None:
        """Record what a response says about its host: hold, backoff, suppression."""
        status = response.status_code
        now_wall = self._clock.time()
        server = server_requested_wait(response.headers, now_wall)
        rate_limited_403 = status == 403 and has_rate_limit_headers(response.headers, now_wall)
        if status in (429, 503) or rate_limited_403:
            seconds = server.seconds if server is not None else (self.default_retry_after_s if rate_limited_403 else 0.0)
            if seconds > 0:
                source = server.header if server is not None else "rate-limit headers"
                reason = f"HTTP {status} with {source}: {seconds:.0f}s"
                if host.set_hold(self._clock.monotonic() + seconds, status=status, reason=reason):
                    self._emit(EventKind.HOLD, host, url, status=status, seconds=seconds, detail=reason)
                    self._log(logging.WARNING, "%s asked for no requests for %.0fs (%s)", host.key, seconds, reason)
        if status in (503, 504) or (status == 429 and server is None):
            self._change_backoff(host, url, self._backoff.increase(host.backoff_s))
        elif 200 <= status < 300 and host.backoff_s > 0:
            self._change_backoff(host, url, self._backoff.decrease(host.backoff_s))
        if status == 403 and not rate_limited_403 and not robots and self.suppress_on_403 and not exempt:
            reason = f"HTTP 403 for {redact_url(url)}"
            host.suppress(reason, self._clock.monotonic(), self.suppress_403_ttl_s)
            self._emit(EventKind.SUPPRESS, host, url, status=403, seconds=self.suppress_403_ttl_s, detail=reason)
            self._log(logging.WARNING, "%s answered 403; suppressing it (%s)", host.key, reason)

    def _change_backoff(self, host: HostLimiter, url: str, value: float) -> None:
        with host.cond:
            old, host.backoff_s = host.backoff_s, value
        if old != value:
            self._emit(EventKind.BACKOFF, host, url, seconds=value, detail=f"{old:g}s -> {value:g}s")
            self._log(logging.INFO, "backoff for %s: %gs -> %gs", host.key, old, value)

    def _exempt(self, url: str) -> bool:
        return (urlsplit(url).hostname or "") in self.suppression_exempt

    # ------------------------------------------------------------------ robots.txt
    def _robots_rules(self, host: HostLimiter, url: str, call: _Call) -> RobotsRules:
        rules = host.robots
        if rules is not None and rules.expires_at > self._clock.monotonic():
            return rules
        with host.robots_lock:  # one fetch per host, however many threads ask
            rules = host.robots
            if rules is not None and rules.expires_at > self._clock.monotonic():
                return rules
            rules = self._fetch_robots(host, url, call)
            host.robots = rules
            return rules

    def _fetch_robots(self, host: HostLimiter, url: str, call: _Call) -> RobotsRules:
        parts = urlsplit(url)
        robots_url = f"{parts.scheme}://{parts.netloc}/robots.txt"
        unreachable_for = self.robots_unreachable_ttl_s

        def unreachable(detail: str) -> RobotsRules:
            now = self._clock.monotonic()
            self._emit(EventKind.ROBOTS, host, robots_url, detail=f"unreachable: {detail}")
            self._log(
                logging.WARNING, "robots.txt of %s unreachable (%s); %s for now", host.key, detail,
                "allowing" if self.robots_unreachable is UnreachablePolicy.ALLOW else "disallowing",
            )
            return RobotsRules(RobotsStatus.UNREACHABLE, now, now + unreachable_for,
                               unreachable_policy=self.robots_unreachable, detail=detail)

        # RFC 9309 §2.3.1.2: follow at least five consecutive redirects, each hop paced by its own host.
        hop_url, hop_host = robots_url, host
        for _ in range(_ROBOTS_REDIRECTS + 1):
            if not self._acquire(hop_host, hop_url, call):
                return unreachable("host is held")
            try:
                response = self._send(hop_host, hop_url, None, {"User-Agent": self.user_agent},
                                      {"timeout": self.timeout, "stream": True})
            except requests.RequestException as exc:
                return unreachable(type(exc).__name__)
            location = response.headers.get("Location")
            if response.status_code not in _REDIRECT_STATUSES or not location:
                break
            target = urljoin(hop_url, location)
            response.close()
            if urlsplit(target).scheme.lower() not in ("http", "https"):
                break
            hop_url, hop_host = target, self._registry.limiter(target)
        try:
            self._observe(hop_host, hop_url, response, exempt=True, robots=True)
            status = response.status_code
            now = self._clock.monotonic()
            if 200 <= status < 300:
                body = bytearray()
                truncated = False
                try:  # issue 11: within the request's deadline, decoded bytes capped
                    for chunk in iter_limited(response, max_bytes=MAX_ROBOTS_BYTES + 1, chunk_size=16 * 1024, truncate=True,
                                              deadline=getattr(response, "paperfetch_deadline", None), url=robots_url):
                        body.extend(chunk)
                        if len(body) > MAX_ROBOTS_BYTES:
                            truncated = True
                            break
                except requests.RequestException as exc:
                    return unreachable(f"body: {type(exc).__name__}")
                rules = RobotsRules.parse(bytes(body), fetched_at=now, expires_at=now + self.robots_cache_ttl_s, truncated=truncated)
                detail = f"{rules.status.value}{' (truncated at 500 KiB)' if truncated else ''}"
                self._emit(EventKind.ROBOTS, host, robots_url, status=status, detail=detail)
                return rules
            if 300 <= status < 500:
                # RFC 9309 §2.3.1.3: "unavailable" (4xx, or more than five redirects) -> allow all
                self._emit(EventKind.ROBOTS, host, robots_url, status=status, detail="unavailable")
                return RobotsRules(RobotsStatus.UNAVAILABLE, now, now + self.robots_cache_ttl_s, detail=f"HTTP {status}")
            return unreachable(f"HTTP {status}")
        finally:
            response.close()

    # ------------------------------------------------------------------ helpers
    def _wait(self, seconds: float, host: HostLimiter, url: str, call: _Call, why: str) -> None:
        if seconds <= 0:
            return
        self._emit(EventKind.WAIT, host, url, seconds=seconds, detail=why)
        self._sleep(seconds)
        call.waited += seconds

    def _check_url(self, url: str) -> None:
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            raise InvalidURL(f"paperfetch only requests http and https URLs, not {redact_url(url)!r}", url=redact_url(url))
        host_key(url)

    def _raw_get(self, url: str, kwargs: dict[str, Any]) -> requests.Response:
        """``polite_mode=False``: one plain request, redirects followed by requests itself."""
        self._check_url(url)
        kwargs = dict(kwargs)
        headers = dict(kwargs.pop("headers", None) or {})
        headers.setdefault("User-Agent", self.user_agent)
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self.timeout
        host = self._registry.limiter(url)
        with host.cond:
            host.begin(self._clock.monotonic(), 0.0)
        return self._send_started(host, url, headers, kwargs)

    def _send_started(self, host: HostLimiter, url: str, headers: dict[str, str], kwargs: dict[str, Any]) -> requests.Response:
        params = kwargs.pop("params", None)
        self._emit(EventKind.REQUEST, host, url)
        with self._count_lock:
            self._requests_sent += 1
        try:
            response = self._session.get(url, params=params, headers=headers, **kwargs)
        except requests.RequestException as exc:
            host.end(None, self._clock.monotonic())
            self._emit(EventKind.NETWORK_ERROR, host, url, detail=f"{type(exc).__name__}: {exc}")
            raise
        except BaseException:
            host.end(None)
            raise
        host.end(response.status_code)
        self._emit(EventKind.RESPONSE, host, url, status=response.status_code)
        return response

    def _judge(self, response: requests.Response, verdict: Outcome, shown: str, exchange: _Exchange | None) -> requests.Response:
        if verdict is Outcome.OK:
            return response
        status = response.status_code
        if verdict is Outcome.ABSENT:
            raise NotFoundError(f"{shown}: not found (HTTP {status})", status_code=status, url=shown, response=response)
        if verdict is Outcome.RETRY:
            raise ServiceError(
                f"{shown}: HTTP {status} after {self.max_retries + 1} attempts", status_code=status, url=shown, response=response
            )
        raise ServiceError(f"{shown}: HTTP {status} ({response.reason or 'error'})", status_code=status, url=shown, response=response)

    def _rate_limited(self, exchange: _Exchange, shown: str, what: str) -> RateLimited:
        host = exchange.host
        held_until = host.held_until
        status = exchange.response.status_code if exchange.response is not None else host.hold_status
        when = held_until.strftime("%H:%M:%S UTC") if held_until else "later"
        return RateLimited(
            f"{host.key} asked for no requests until {when} ({what}); {shown} not fetched",
            held_until=held_until,
            status_code=status,
            url=shown,
            response=exchange.response,
        )

    def _wall(self, monotonic: float | None) -> datetime | None:
        if monotonic is None:
            return None
        return datetime.fromtimestamp(self._clock.time() + (monotonic - self._clock.monotonic()), tz=timezone.utc)

    def _emit(self, kind: EventKind, host: HostLimiter, url: str | None, **fields: Any) -> None:
        if not len(self.events):
            return
        self.events.publish(Event(kind, host.key, self._clock.time(), redact_url(url) if url else None, **fields))

    def _log(self, level: int, message: str, *args: Any) -> None:
        if level >= self._log_level:
            logger.log(level, message, *args)

    def _stream_to(
        self,
        response: requests.Response,
        dest: Path,
        validate: Callable[[bytes, requests.Response], None] | None,
        max_bytes: int | None,
        chunk_size: int,
        shown: str,
        validate_bytes: int = 2048,
        claim: Any = None,
    ) -> tuple[Path, int, str]:
        expected = None
        if (response.headers.get("Content-Encoding") or "identity").lower() == "identity":
            try:
                expected = int(response.headers["Content-Length"])
            except (KeyError, ValueError):
                expected = None
        if max_bytes is not None and expected is not None and expected > max_bytes:
            raise DownloadTooLarge(
                f"{shown} announces {expected:,} bytes, over the limit of {max_bytes:,}",
                status_code=response.status_code, url=shown, response=response,
            )
        digest = hashlib.sha256()
        size = 0
        head = bytearray()
        validated = validate is None
        handle = claim.handle  # issue 11: the locked part file (paperfetch.parts), emptied for this attempt
        handle.seek(0)
        handle.truncate()
        deadline = getattr(response, "paperfetch_deadline", None)
        limit = max_bytes + 1 if max_bytes is not None else 1 << 62  # the size message below stays ours
        for chunk in iter_limited(response, max_bytes=limit, deadline=deadline, chunk_size=chunk_size, url=shown):
            if not chunk:
                continue
            size += len(chunk)
            if max_bytes is not None and size > max_bytes:
                raise DownloadTooLarge(
                    f"{shown} is larger than the limit of {max_bytes:,} bytes",
                    status_code=response.status_code, url=shown, response=response,
                )
            if not validated:
                head.extend(chunk)
                if len(head) >= validate_bytes:
                    validate(bytes(head), response)  # type: ignore[misc]
                    validated = True
            digest.update(chunk)
            handle.write(chunk)
        if not validated:
            validate(bytes(head), response)  # type: ignore[misc]
        if expected is not None and size != expected:
            raise TruncatedDownload(
                f"{shown} ended after {size:,} of {expected:,} bytes",
                status_code=response.status_code, url=shown, response=response,
            )
        claim.commit(dest)
        return dest, size, digest.hexdigest()


def _size_and_sha256(path: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            size += len(block)
            digest.update(block)
    return size, digest.hexdigest()


_STATUS_COLUMNS = [
    "host", "requests", "in_flight", "ok", "errors", "last_status", "delay_min_s", "delay_max_s", "backoff_s",
    "held_until", "hold_status", "suppressed", "suppressed_reason", "suppressed_until", "crawl_delay_s", "robots",
    "next_allowed_at",
]

_handler_lock = threading.Lock()


def _ensure_log_handler(level: int) -> None:
    """With verbosity >= 2 and no logging configured, show paperfetch's messages on stderr."""
    package_logger = logging.getLogger("paperfetch")
    with _handler_lock:
        if package_logger.level == logging.NOTSET or package_logger.level > level:
            package_logger.setLevel(level)
        if not package_logger.handlers and not logging.getLogger().handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("[paperfetch] %(levelname)s %(message)s"))
            package_logger.addHandler(handler)
