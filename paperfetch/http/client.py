"""The polite HTTP transport: every request paperfetch makes goes through :class:`HttpClient`.

The client executes; it does not decide. For each hop (a redirect is a new
hop, checked afresh against its own host) it asks :func:`.policy.decide`
about the host's facts and acts on the answer:

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
7. **observe** — :func:`.policy.observe_response` turns the answer into new host facts
   (hold, backoff, suppression), which are stored and published as events.

Then the call decides, in one loop over an immutable :class:`.retry.Retry`:
follow a redirect, retry (429/503/504 for ``get``; a ``RETRY`` verdict for
``fetch``; timeouts, connection errors and, for ``download``, truncated bodies),
or return. ``get`` keeps PyPaperRetriever's contract and never raises for an
HTTP status; ``fetch`` follows PROVESID's and raises a typed error for anything
but ``Outcome.OK``; ``download`` streams through :mod:`paperfetch.download`.

Synthetic responses (no request was sent) carry the header
``X-Paperfetch-Synthetic: suppressed`` or ``held``; :func:`is_synthetic`
reads it.
"""

from __future__ import annotations

import logging
import math
import os
import random
import threading
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping
from urllib.parse import urljoin, urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict

from paperfetch import defaults
from paperfetch._version import __version__
from paperfetch.clock import SYSTEM_CLOCK, Clock
from paperfetch.download import DownloadResult, file_digest, stream_to_file
from paperfetch.errors import (
    ConfigurationError,
    DeadlineExceeded,
    DisallowedByRobots,
    HostSuppressed,
    InvalidURL,
    NetworkError,
    NotFoundError,
    PaperfetchError,
    RateLimited,
    RefusedRedirect,
    RequestTimeout,
    ServiceError,
    Stopped,
    StoreUnavailable,
    TooManyRedirects,
    TruncatedDownload,
)
from paperfetch.http import policy
from paperfetch.http.addresses import redirect_refusal
from paperfetch.http.delays import BackoffPolicy, DelayRange, RetrySchedule, resolve_configured_range
from paperfetch.http.events import Event, EventBus, EventKind
from paperfetch.http.hosts import HostLimiter, HostRegistry, HostSnapshot, host_key, registry_for
from paperfetch.http.limits import (
    DEFAULT_DEADLINE_S,
    MAX_METADATA_BYTES,
    Deadline,
    deadline_scope,
    install_deadline_pools,
    iter_limited,
    read_limited,
)
from paperfetch.http.outcome import Outcome, default_classify
from paperfetch.http.retry import Retry
from paperfetch.http.robots import MAX_ROBOTS_BYTES, RobotsRules, RobotsStatus, UnreachablePolicy
from paperfetch.http.scheduler import answering_now, get_many, iter_many, stop_event
from paperfetch.log import enable_logging
from paperfetch.parts import part_file
from paperfetch.redact import redact_text, redact_url

if TYPE_CHECKING:  # pragma: no cover
    import os

    import pandas as pd

    from paperfetch.state import HostStateStore, Slot

__all__ = ["DEFAULT_USER_AGENT", "DownloadResult", "HttpClient", "SYNTHETIC_HEADER", "is_synthetic"]

logger = logging.getLogger(__name__)

DEFAULT_USER_AGENT = f"paperfetch/{__version__}"
SYNTHETIC_HEADER = "X-Paperfetch-Synthetic"
DEFAULT_HOST_INTERVALS: Mapping[str, float] = defaults.DEFAULT_HOST_INTERVALS

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_ROBOTS_REDIRECTS = 5
_POLL_S = 0.02  # how often a client asks again while another process holds a host's slot
_NETWORK_ERRORS = (requests.Timeout, requests.ConnectionError, requests.exceptions.ChunkedEncodingError)


def is_synthetic(response: requests.Response | None) -> str | None:
    """``"suppressed"`` or ``"held"`` when *response* was made up without a request, else ``None``."""
    if response is None:
        return None
    return response.headers.get(SYNTHETIC_HEADER)


def _synthetic_response(url: str, status: int, kind: str, reason: str,
                        headers: Mapping[str, str] | None = None) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response.url = url
    response.reason = reason
    response._content = b""  # noqa: SLF001 - requests' own way to give a Response a body
    response.encoding = "utf-8"
    response.headers = CaseInsensitiveDict({SYNTHETIC_HEADER: kind, "Content-Length": "0", **dict(headers or {})})
    return response


def _unreachable(exc: BaseException) -> bool:
    """A connection that could not even start: the name did not resolve, or it was refused."""
    if isinstance(exc, requests.Timeout) or not isinstance(exc, requests.ConnectionError):
        return False
    text = repr(exc)
    return any(word in text for word in ("NameResolution", "NewConnectionError", "Connection refused", "getaddrinfo",
                                         "Name or service not known", "nodename nor servname"))


def _utc(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, tz=timezone.utc)


@dataclass
class _Budget:
    """What one call waited, and may still wait (``max_elapsed``)."""

    max_elapsed: float | None
    waited: float = 0.0

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


class HttpClient:
    """HTTP client with robots.txt, per-host pacing, backoff, retries, holds and 403 suppression.

    The positional parameters and their defaults are PyPaperRetriever's
    ``HttpClient`` contract (``user_agent`` defaults to ``paperfetch/<version>``);
    the keyword-only ones are paperfetch's additions. Defaults come from
    :mod:`paperfetch.defaults`. See ``docs/politeness.md``.
    """

    def __init__(
        self,
        user_agent: str = DEFAULT_USER_AGENT,
        respect_robots_txt: bool = False,
        delay_min_s: float | None = None,
        delay_max_s: float | None = None,
        honor_retry_after: bool = True,
        suppress_on_403: bool = True,
        max_retries: int = defaults.MAX_RETRIES,
        default_retry_after_s: float = defaults.DEFAULT_RETRY_AFTER_S,
        max_retry_after_s: float = defaults.MAX_RETRY_AFTER_S,
        backoff_base_s: float = defaults.BACKOFF_BASE_S,
        backoff_multiplier: float = defaults.BACKOFF_MULTIPLIER,
        backoff_max_s: float = defaults.BACKOFF_MAX_S,
        backoff_decay_s: float = defaults.BACKOFF_DECAY_S,
        rate_limit_min_s: float = defaults.RATE_LIMIT_MIN_S,
        rate_limit_max_s: float = defaults.RATE_LIMIT_MAX_S,
        verbosity: int = 1,
        polite_mode: bool = True,
        *,
        timeout: float | tuple[float, float] = defaults.TIMEOUT,
        max_elapsed: float | None = None,
        max_in_flight_per_host: int = 1,
        host_intervals: Mapping[str, float] | None = None,
        max_redirects: int = 10,
        request_deadline_s: float = DEFAULT_DEADLINE_S,
        max_answer_bytes: int = MAX_METADATA_BYTES,
        allow_private_redirects: bool = False,
        suppress_403_ttl_s: float | None = 3600.0,
        suppression_exempt: Iterable[str] = ("doi.org", "dx.doi.org"),
        robots_unreachable: UnreachablePolicy | str = UnreachablePolicy.ALLOW,
        robots_cache_ttl_s: float = 86400.0,
        robots_unreachable_ttl_s: float = 300.0,
        max_crawl_delay_s: float = defaults.MAX_CRAWL_DELAY_S,
        network_retry_schedule: RetrySchedule | str = RetrySchedule.EXPONENTIAL,
        network_retry_base_s: float = 1.0,
        pacing_margin_s: float = 0.002,
        breaker_failures: int = defaults.BREAKER_FAILURES,
        learn_interval: bool = True,
        max_host_wait_s: float = defaults.MAX_HOST_WAIT_S,
        session: requests.Session | None = None,
        clock: Clock | None = None,
        sleep: Callable[[float], None] | None = None,
        registry: HostRegistry | None = None,
        rng: random.Random | None = None,
        state: "str | os.PathLike[str] | HostStateStore | None" = None,
        state_fallback: str | None = None,
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

        self.timeout = timeout
        self.max_elapsed = max_elapsed
        self.max_in_flight_per_host = int(max_in_flight_per_host)
        self.host_intervals = dict(DEFAULT_HOST_INTERVALS)
        if host_intervals:
            self.host_intervals.update({k.lower(): float(v) for k, v in host_intervals.items()})
        self.max_redirects = int(max_redirects)
        if not request_deadline_s > 0:
            raise ConfigurationError(f"request_deadline_s must be > 0, not {request_deadline_s!r}")
        if max_answer_bytes < 1:
            raise ConfigurationError(f"max_answer_bytes must be >= 1, not {max_answer_bytes!r}")
        #: total seconds one request may take: connect, head and every read, however the bytes trickle
        self.request_deadline_s = float(request_deadline_s)
        #: decoded bytes of a (non-streamed) answer read at most: a gzip bomb stops here
        self.max_answer_bytes = int(max_answer_bytes)
        #: follow a redirect from a public address to a private, loopback or link-local one (default: refuse)
        self.allow_private_redirects = bool(allow_private_redirects)
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
        if breaker_failures < 0:
            raise ConfigurationError(f"breaker_failures must be >= 0 (0: no breaker), not {breaker_failures!r}")
        #: consecutive failures that open a host's circuit breaker (0: no breaker)
        self.breaker_failures = int(breaker_failures)
        #: whether the interval a host enforces is learned from its 429s
        self.learn_interval = bool(learn_interval)
        #: how long a batch waits for one host's breaker before its remaining items end at once
        self.max_host_wait_s = float(max_host_wait_s)

        self._clock: Clock = clock if clock is not None else SYSTEM_CLOCK
        self._sleep: Callable[[float], None] | None = sleep  # None: the clock's own, interruptible wait
        if registry is None:
            # Host state lives in a store (paperfetch.state): "memory" (None) is this process's registry
            # (a fake clock gets one of its own); a SQLite path or a Redis URL is shared with other processes.
            registry = registry_for(state, self._clock, fallback=state_fallback)
        elif state is not None:
            raise ConfigurationError("give either registry= or state=, not both")
        self._registry = registry
        self._rng = rng if rng is not None else random.Random()
        self._rng_lock = threading.Lock()
        self._own_session = session is None
        if session is None:
            session = requests.Session()
            adapter = HTTPAdapter(pool_connections=256, pool_maxsize=64)  # one pool per host: a batch spans many hosts
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            install_deadline_pools(session)  # the request deadline also bounds a trickling head
        self._session = session
        self.events = EventBus()
        # The library sets no level and adds no handler; verbosity >= 2 is sugar for
        # paperfetch.enable_logging(INFO/DEBUG), an explicit request to see the messages.
        if int(verbosity) >= 2:
            enable_logging(logging.DEBUG if int(verbosity) >= 3 else logging.INFO)
        self._requests_sent = 0
        self._count_lock = threading.Lock()
        self._closed = threading.Event()

    # ------------------------------------------------------------------ settings
    @property
    def settings(self) -> policy.PolicySettings:
        """The settings the politeness rules read, as a frozen value (made from the attributes now)."""
        return policy.PolicySettings(
            user_agent=self.user_agent,
            respect_robots_txt=self.respect_robots_txt,
            configured_range=self._configured_range,
            fallback_range=DelayRange(float(self.rate_limit_min_s), float(self.rate_limit_max_s)),
            max_crawl_delay_s=self.max_crawl_delay_s,
            host_intervals=self.host_intervals,
            backoff=BackoffPolicy(self.backoff_base_s, self.backoff_multiplier, self.backoff_max_s, self.backoff_decay_s),
            honor_retry_after=self.honor_retry_after,
            default_retry_after_s=self.default_retry_after_s,
            max_retry_after_s=self.max_retry_after_s,
            suppress_on_403=self.suppress_on_403,
            suppress_403_ttl_s=self.suppress_403_ttl_s,
            pacing_margin_s=self.pacing_margin_s,
            max_in_flight_per_host=self.max_in_flight_per_host,
            breaker_failures=self.breaker_failures,
            learn=self.learn_interval,
            max_host_wait_s=self.max_host_wait_s,
        )

    def _retry(self) -> Retry:
        return Retry(self.max_retries, self.network_retry_schedule, self.network_retry_base_s, self.backoff_max_s)

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
        See :func:`paperfetch.http.scheduler.get_many`.
        """
        return get_many(self, urls, workers=workers, return_exceptions=return_exceptions, **kwargs)

    def iter_many(
        self, urls: Iterable[str], *, workers: int | None = None, **kwargs: Any
    ) -> Iterator[tuple[int, requests.Response | BaseException | None]]:
        """``(index, self.get(urls[index], **kwargs))`` as each URL finishes, hosts side by side.

        Where ``get`` would raise, the pair holds the exception. Leaving the loop early stops the
        batch; see :func:`paperfetch.http.scheduler.iter_many`.
        """
        return iter_many(self, urls, workers=workers, **kwargs)

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

        ``method="POST"`` with a form ``data=`` (issue 12) is for **idempotent reads only** (NCBI's
        EFetch/ESummary with an id list too long for a URL): it is paced, held, breaker-checked and
        retried exactly like a GET, because asking such a service twice is harmless.
        """
        budget = self.max_elapsed if max_elapsed is None else max_elapsed
        shown = redact_url(url)
        if not self.polite_mode:
            with _TypedNetworkErrors(shown):
                response = self._raw_get(url, kwargs)
            return self._judge(response, classify(response), shown)
        with _TypedNetworkErrors(shown):
            exchange, _ = self._call(url, kwargs, classify=classify, max_elapsed=budget)
        return self._fetched(exchange, classify, shown)

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
        """Stream *url* into *dest*, atomically (see :func:`paperfetch.download.stream_to_file`).

        The body is written in chunks to a temporary file beside *dest* while its
        SHA-256 is computed; ``validate(first_bytes, response)`` may raise to reject
        it (it sees the first *validate_bytes*, or the whole body if shorter); the length must
        match Content-Length when given and stay within *max_bytes*; only then is the
        file renamed to *dest*. Timeouts, connection errors and truncated bodies are
        retried in the same loop as ``fetch``'s retries (``max_retries``, ``network_retry_schedule``).
        Nothing is ever left under *dest* unless it is complete, and no temporary file survives a failure.

        The body goes to the locked part file of *dest* (:func:`paperfetch.parts.part_file`), so one
        destination has one writer at a time, across threads and processes. Once the part file is
        claimed, ``reuse(dest, waited)`` may say that the file already under *dest* (written by another
        process; ``waited`` when we waited for it) is to be kept: then nothing is requested and the
        result has ``reused=True``. The body is read within ``request_deadline_s``.
        """
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shown = redact_url(url)
        budget = self.max_elapsed if max_elapsed is None else max_elapsed
        kwargs["stream"] = True
        with part_file(dest) as claim:  # one writer per destination; a killed run's part file is swept later
            if reuse is not None and dest.exists() and reuse(dest, claim.waited):
                size, digest = file_digest(dest)
                return DownloadResult(path=dest, bytes=size, sha256=digest, url=shown, status_code=200,
                                      content_type="application/pdf", attempts=0, waited_s=0.0, reused=True)

            def finish(exchange: _Exchange, retry: Retry) -> DownloadResult:
                response = self._fetched(exchange, classify, shown)
                try:
                    stop = stop_event()
                    path, size, sha256 = stream_to_file(
                        response, dest, shown=shown, validate=validate, max_bytes=max_bytes,
                        chunk_size=chunk_size, validate_bytes=validate_bytes,
                        should_stop=None if stop is None else stop.is_set, part=claim,
                    )
                except DeadlineExceeded as exc:  # the body outlived the request's deadline: a failure of its host
                    self._observe_error(exchange.host, exchange.url, exc)
                    raise
                finally:
                    response.close()
                return DownloadResult(
                    path=path, bytes=size, sha256=sha256, url=redact_url(response.url or url),
                    status_code=response.status_code, content_type=response.headers.get("Content-Type"),
                    attempts=retry.attempts + 1, waited_s=retry.waited_s,
                )

            with _TypedNetworkErrors(shown):
                return self._call(url, kwargs, classify=classify, max_elapsed=budget, finish=finish)

    def snapshot(self, url_or_host: str) -> HostSnapshot:
        """The state of *url_or_host*'s host as this client sees it (pacing by this client's settings)."""
        return self._snapshot(self._registry.limiter(url_or_host))

    def snapshots(self) -> list[HostSnapshot]:
        """One :class:`~paperfetch.http.hosts.HostSnapshot` per host of the store (this process's and
        the ones other processes of a shared store wrote), as the store has them now, sorted by host."""
        return [self._snapshot(h, refresh=False) for h in sorted(self._registry.known_hosts(), key=lambda h: h.key)]

    def domain_status(self) -> "pd.DataFrame":
        """One row per host of the store: counts (this process's), pacing, backoff, holds, suppression.

        The frame is built by :func:`paperfetch.report.domain_status_frame` from :meth:`snapshots`
        (pandas is imported then, not with the transport); ``frame.attrs["store"]`` names the store."""
        from paperfetch.report import domain_status_frame

        frame = domain_status_frame(self.snapshots())
        frame.attrs["store"] = self.store.name
        return frame

    @property
    def store(self) -> "HostStateStore":
        """The host-state store this client reads and writes (see :mod:`paperfetch.state`)."""
        return self._registry.store

    @property
    def suppressed_domains(self) -> dict[str, str]:
        """A copy of the suppressed hosts and why (PyPaperRetriever's property)."""
        now = self._clock.time()
        result = {}
        for host in self._registry.hosts():
            supp = policy.suppression_in_force(host.facts, now)
            if supp is not None:
                result[host.key] = supp.reason
        return result

    @property
    def backoff_delays(self) -> dict[str, float]:
        """A copy of the hosts with active backoff and its seconds (PyPaperRetriever's property)."""
        return {h.key: h.facts.backoff_s for h in self._registry.hosts() if h.facts.backoff_s > 0}

    @property
    def registry(self) -> HostRegistry:
        return self._registry

    @property
    def session(self) -> requests.Session:
        """The ``requests`` session requests go through (shareable with another client)."""
        return self._session

    @property
    def clock(self) -> Clock:
        """The clock this client paces on."""
        return self._clock

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
        if not self.polite_mode:
            return 0.0
        host = self._registry.limiter(url)
        with host.cond:
            return self._ready_in(host, self._exempt(url), self.settings)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (a batch of this client stops then)."""
        return self._closed.is_set()

    def close(self) -> None:
        """Stop this client's batches and close the session if this client created it."""
        self._closed.set()
        if self._own_session:
            self._session.close()

    def __enter__(self) -> "HttpClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"HttpClient(user_agent={redact_text(repr(self.user_agent))}, polite_mode={self.polite_mode}, "
            f"respect_robots_txt={self.respect_robots_txt}, hosts={len(self._registry.hosts())})"
        )

    # ------------------------------------------------------------------ reading host state
    def _pace(self, host: HostLimiter) -> policy.Pace:
        return policy.Pace(host.last_start, host.gap_fraction, host.in_flight, host.min_interval_s, host.probing)

    def _ready_in(self, host: HostLimiter, exempt: bool, settings: policy.PolicySettings) -> float:
        """Caller holds ``host.cond``."""
        facts = host.facts
        now = self._clock.time()
        if settings.suppress_on_403 and not exempt and policy.suppression_in_force(facts, now) is not None:
            return math.inf
        pace = self._pace(host)
        hold = max(policy.hold_remaining(facts, now), policy.breaker_open(facts, settings, now))
        wait = 0.0
        if host.last_start is not None:
            wait = host.last_start + policy.gap(facts, settings, host.key, pace) - self._clock.monotonic()
        busy = 0.0 if host.in_flight < settings.max_in_flight_per_host else 0.001
        return max(0.0, hold, wait, busy)

    def _snapshot(self, host: HostLimiter, *, refresh: bool = True) -> HostSnapshot:
        settings = self.settings
        if refresh:
            host.refresh()
        with host.cond:
            facts = host.facts
            now = self._clock.time()
            pace = self._pace(host)
            rng = policy.delay_range(facts, settings, host.key, pace)
            supp = policy.suppression_in_force(facts, now)
            held = policy.hold_remaining(facts, now) > 0
            ready = self._ready_in(host, False, settings) if self.polite_mode else 0.0
            next_at = None
            if host.last_start is not None or held or facts.breaker_open_until is not None:
                pacing = 0.0
                if host.last_start is not None:
                    pacing = host.last_start + policy.gap(facts, settings, host.key, pace) - self._clock.monotonic()
                next_at = now + max(pacing, policy.hold_remaining(facts, now), policy.breaker_open(facts, settings, now))
            return HostSnapshot(
                host=host.key,
                requests=host.requests,
                in_flight=host.in_flight,
                ok=host.ok,
                errors=host.errors,
                last_status=host.last_status,
                delay_min_s=None if rng is None else rng.low,
                delay_max_s=None if rng is None else rng.high,
                backoff_s=facts.backoff_s,
                learned_interval_s=facts.learned_interval_s,
                crawl_delay_s=policy.crawl_delay(facts, settings),
                robots=facts.robots.status.value if facts.robots else None,
                held_until=_utc(facts.hold_until) if held else None,
                hold_status=facts.hold_status if held else None,
                hold_reason=facts.hold_reason if held else "",
                suppressed=supp is not None,
                suppressed_reason=supp.reason if supp else None,
                suppressed_until=_utc(supp.until) if supp else None,
                breaker=facts.breaker.value,
                failures=facts.failures,
                breaker_open_until=_utc(facts.breaker_open_until),
                next_allowed_at=_utc(next_at),
                ready_in_s=ready,
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
        finish: Callable[[_Exchange, Retry], Any] | None = None,
    ) -> Any:
        """The one retry loop. Returns ``(exchange, retry)``, or what ``finish(exchange, retry)`` returns.

        ``finish`` (``download``'s streaming) runs on the exchange the loop settled on; a timeout,
        connection error or truncated body inside it is retried like one in the request itself.
        """
        budget = _Budget(max_elapsed)
        retry = self._retry()
        shown = redact_url(url)
        while True:
            try:
                exchange = self._exchange(url, dict(kwargs), budget)
            except TooManyRedirects:
                raise
            except _NETWORK_ERRORS as exc:
                retry = self._network_retry(retry, url, exc, budget, type(exc).__name__)
                continue
            if exchange.kind == "response":
                response = exchange.response
                assert response is not None
                if classify(response) is Outcome.RETRY and not retry.exhausted:
                    wait = self._retry_wait(exchange)
                    allowance = self._allowance(budget)
                    if self._decide(exchange.host, budget, exempt=True).verdict is policy.Verdict.OPEN:
                        # the breaker would answer the retry without a request: do not sleep for it
                        self._log(logging.INFO, "%s: breaker open; HTTP %s is the answer", exchange.host.key,
                                  response.status_code)
                        exchange.kind = "gave_up"
                    elif wait > allowance:
                        self._log(
                            logging.INFO,
                            "HTTP %s from %s asks for %.0fs, more than this call may wait (%.0fs); giving up",
                            response.status_code, exchange.host.key, wait, allowance,
                        )
                        exchange.kind = "gave_up"
                    else:
                        self._emit(EventKind.RETRY, exchange.host, exchange.url, status=response.status_code, seconds=wait)
                        self._log(logging.WARNING, "HTTP %s from %s; waiting %.1fs before retry",
                                  response.status_code, exchange.host.key, wait)
                        response.close()
                        self._wait(wait, exchange.host, exchange.url, budget, f"HTTP {response.status_code}")
                        retry = retry.increment(shown, status=response.status_code, wait_s=wait)
                        continue
            if finish is None:
                return exchange, retry
            try:
                return finish(exchange, retry)
            except (TruncatedDownload, *_NETWORK_ERRORS) as exc:
                try:
                    retry = self._network_retry(retry, url, exc, budget, f"download interrupted: {exc}")
                except requests.RequestException as final:
                    if isinstance(final, PaperfetchError):  # typed already (DeadlineExceeded): as it is
                        raise
                    raise NetworkError(f"download of {shown} failed: {final}", url=shown) from final

    def _network_retry(self, retry: Retry, url: str, exc: BaseException, budget: _Budget, detail: str) -> Retry:
        """The retry after a timeout, connection error or truncated body; re-raises *exc* when none is left."""
        if retry.exhausted:
            raise exc
        wait = retry.network_wait()
        if _unreachable(exc):
            wait = min(wait, retry.schedule.wait(retry.attempts, defaults.UNREACHABLE_RETRY_BASE_S, retry.cap_s))
        if wait > budget.remaining():
            raise exc
        host = self._registry.limiter(url)
        if self._decide(host, budget, exempt=True).verdict is policy.Verdict.OPEN:
            raise exc  # the breaker would answer the retry without a request: waiting would only cost time
        self._emit(EventKind.RETRY, host, url, seconds=wait, detail=detail)
        self._log(logging.WARNING, "%s for %s; retrying in %.1fs", type(exc).__name__, redact_url(url), wait)
        self._wait(wait, host, url, budget, "network retry")
        return retry.increment(redact_url(url), error=type(exc).__name__, wait_s=wait)

    def _retry_wait(self, exchange: _Exchange) -> float:
        response = exchange.response
        assert response is not None
        settings = self.settings
        out: list[Any] = []

        def change(facts: Any) -> Any:
            wait, new, notices = policy.retry_wait(
                facts, settings, status=response.status_code, headers=response.headers, now=self._clock.time()
            )
            out[:] = [wait, notices]
            return new

        exchange.host.update(change)
        wait, notices = out
        self._publish(exchange.host, exchange.url, notices)
        return wait

    def _exchange(self, url: str, kwargs: dict[str, Any], budget: _Budget) -> _Exchange:
        params = kwargs.pop("params", None)
        method, data = _method(kwargs)  # issue 12: POST for idempotent reads (see fetch)
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
            exempt = self._exempt(current)
            decision = self._decide(host, budget, exempt=exempt)
            if decision.verdict is policy.Verdict.SUPPRESSED:
                self._emit(EventKind.SUPPRESSED, host, current, status=403, detail=decision.reason)
                self._log(logging.DEBUG, "%s is suppressed; synthetic 403 for %s", host.key, redact_url(current))
                response = _synthetic_response(current, 403, "suppressed", "Forbidden (suppressed)")
                return _Exchange("suppressed", response, host, current, decision.reason)
            if decision.verdict is policy.Verdict.HELD:
                return _Exchange("held", self._held_response(host, current), host, current)
            if decision.verdict is policy.Verdict.OPEN:
                return self._open(host, current, decision)
            if self.respect_robots_txt:
                rules = self._robots_rules(host, current, budget)
                if not rules.can_fetch(current, self.user_agent):
                    self._emit(EventKind.DISALLOWED, host, current, detail=rules.status.value)
                    self._log(logging.WARNING, "Blocked by robots.txt: %s", redact_url(current))
                    return _Exchange("disallowed", None, host, current)
            decision = self._acquire(host, current, budget)
            if decision.verdict is policy.Verdict.OPEN:
                return self._open(host, current, decision)
            if decision.verdict is policy.Verdict.HELD:
                return _Exchange("held", self._held_response(host, current), host, current)
            response = self._send(host, current, params if hop == 0 else None, headers, kwargs, method, data)
            self._observe(host, current, response, exempt=exempt)
            location = response.headers.get("Location")
            if response.status_code in _REDIRECT_STATUSES and location:
                current, method, data = self._next_hop(url, current, location, response, hop, seen, headers, history,
                                                       host, method, data)
                continue
            response.history = history
            return _Exchange("response", response, host, current)
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(
        self, host: HostLimiter, url: str, params: Any, headers: dict[str, str], kwargs: dict[str, Any],
        method: str = "GET", data: Any = None,
    ) -> requests.Response:
        """Send one request on the host slot taken by ``_acquire``; always frees the slot."""
        try:
            self._check_stop()
            slot, gap_s = self._reserve(host, url)
        except BaseException:
            host.cancel()
            raise
        self._emit(EventKind.REQUEST, host, url)
        started = self._clock.monotonic()
        with self._count_lock:
            self._requests_sent += 1
        try:
            response = self._answer(method, url, params, data, headers, kwargs)
        except requests.RequestException as exc:
            host.end(None, self._clock.monotonic(), reached=not _unreachable(exc))
            self._finish(host, slot, gap_s)
            self._emit(EventKind.NETWORK_ERROR, host, url, detail=f"{type(exc).__name__}: {exc}")
            self._observe_error(host, url, exc)  # a DeadlineExceeded is a timeout: a failure for the breaker
            raise
        except BaseException:
            host.end(None, self._clock.monotonic())
            self._finish(host, slot, gap_s)
            raise
        answered = self._clock.monotonic()
        host.end(response.status_code, answered)
        self._finish(host, slot, gap_s)
        self._emit(EventKind.RESPONSE, host, url, status=response.status_code, seconds=answered - started)
        return response

    def _answer(self, method: str, url: str, params: Any, data: Any, headers: dict[str, str],
                kwargs: dict[str, Any]) -> requests.Response:
        """One request (GET, or POST for an idempotent read) without redirects, under the request's
        ceilings (:mod:`paperfetch.http.limits`).

        A :class:`~paperfetch.http.limits.Deadline` of ``request_deadline_s`` bounds the connect, the
        head (however it trickles) and every read of the body. Without ``stream=True`` the body is read
        here, at most ``max_answer_bytes`` decoded bytes (:class:`~paperfetch.DownloadTooLarge` past
        them); with it, the response carries its deadline (``paperfetch_deadline``) for the reader
        (``paperfetch.download``, robots.txt, landing pages). A deadline that passes raises
        :class:`~paperfetch.DeadlineExceeded` (a ``requests.Timeout``).
        """
        deadline = Deadline(self.request_deadline_s)
        shown = redact_url(url)
        try:
            with deadline_scope(deadline):
                response = self._session.request(method, url, params=params, data=data, headers=headers,
                                                 allow_redirects=False, **{**kwargs, "stream": True})
            if kwargs.get("stream"):
                response.paperfetch_deadline = deadline  # type: ignore[attr-defined]
                return response
            try:
                # requests' own way to give a Response the body read here
                response._content = read_limited(  # noqa: SLF001
                    response, max_bytes=self.max_answer_bytes, deadline=deadline, url=shown)
                response._content_consumed = True  # noqa: SLF001
            finally:
                response.close()
            return response
        except requests.RequestException as exc:
            if deadline.expired() and not isinstance(exc, DeadlineExceeded):  # the head trickled past it
                raise DeadlineExceeded(f"{shown} took longer than its deadline of {deadline.seconds:g} s",
                                       url=shown) from None
            raise

    # ------------------------------------------------------------------ pacing across processes
    def _reserve(self, host: HostLimiter, url: str) -> "tuple[Slot | None, float]":
        """Take the host's start slot in the store (every process of a shared store asks the same one),
        waiting for it: the gap this request keeps is then kept by every client of the store. With one
        request in flight per host the slot is held until :meth:`_finish` (end-to-end pacing) or the
        registry's lease runs out; with more, starts are spaced (start-to-start)."""
        with host.cond:
            gap_s = policy.gap(host.facts, self.settings, host.key, self._pace(host))
        if gap_s <= 0:
            return None, 0.0  # nothing to pace: no reservation
        store = self._registry.store
        lease_s = self._registry.lease_s if self.max_in_flight_per_host == 1 else 0.0
        while True:
            now = self._clock.time()
            slot = store.reserve(host.key, gap_s, now, lease_s)
            wait = slot.start_at - now if slot.granted else max(0.001, min(_POLL_S, slot.start_at - now))
            if wait > 1e-6:  # below: float noise between the wall and the monotonic clock
                try:
                    self._pause(wait)
                except BaseException:
                    if slot.granted:
                        self._finish(host, slot, 0.0)
                    raise
            if slot.granted:
                return slot, gap_s

    def _finish(self, host: HostLimiter, slot: "Slot | None", gap_s: float) -> None:
        """Release the slot: the host's next start is at least now + gap. A store that does not answer
        loses nothing here (the lease runs out by itself); the response in hand is kept."""
        if slot is None:
            return
        try:
            self._registry.store.finish(slot, self._clock.time(), gap_s)
        except StoreUnavailable as exc:
            self._log(logging.WARNING, "%s: could not release the slot in %s (%s); its lease runs out",
                      host.key, self._registry.store.name, exc)

    def _pause(self, seconds: float) -> None:
        stop = stop_event()
        if self._sleep is not None:
            self._sleep(seconds)
        elif stop is not None:
            self._clock.wait(stop, seconds)
        else:
            self._clock.sleep(seconds)
        self._check_stop()

    # ------------------------------------------------------------------ politeness
    def _allowance(self, budget: _Budget) -> float:
        if answering_now():
            return 0.0  # the scheduler drains this host: nothing is waited for
        return min(self.max_retry_after_s, budget.remaining())

    def _decide(self, host: HostLimiter, budget: _Budget, *, exempt: bool) -> policy.Decision:
        facts = host.refresh()  # what the store says now: a hold another process set counts
        with host.cond:
            return policy.decide(
                facts, self._pace(host), self.settings, host=host.key, now=self._clock.time(),
                mono=self._clock.monotonic(), allowance=self._allowance(budget), exempt=exempt,
            )

    def _held_response(self, host: HostLimiter, url: str) -> requests.Response:
        facts = host.facts
        remaining = policy.hold_remaining(facts, self._clock.time())
        status = facts.hold_status or 429
        self._emit(EventKind.HELD, host, url, status=status, seconds=remaining, detail=facts.hold_reason)
        self._log(logging.DEBUG, "%s is held for %.0fs more; no request sent for %s", host.key, remaining, redact_url(url))
        return _synthetic_response(
            url, status, "held", "Held (no request sent)", {"Retry-After": str(max(1, math.ceil(remaining)))}
        )

    def _open(self, host: HostLimiter, url: str, decision: policy.Decision) -> _Exchange:
        """The breaker is open: no request. An unreachable host raises a network error; one that
        answered gets a synthetic response with the failing status and Retry-After."""
        facts = host.facts
        until = _utc(facts.breaker_open_until)
        when = until.strftime("%H:%M:%S UTC") if until else "later"
        self._emit(EventKind.HELD, host, url, status=facts.hold_status, seconds=decision.seconds,
                   detail=f"breaker open: {facts.breaker_reason}")
        self._log(logging.DEBUG, "%s: breaker open for %.0fs more; no request sent for %s", host.key, decision.seconds,
                  redact_url(url))
        if policy.unreachable(facts):
            shown = redact_url(url)
            raise NetworkError(
                f"{host.key} is unreachable ({facts.breaker_reason}); {shown} not requested, next try after {when}",
                url=shown,
            )
        status = facts.failure_status or facts.hold_status or 503
        response = _synthetic_response(
            url, status, "held", "Held: breaker open (no request sent)",
            {"Retry-After": str(max(1, math.ceil(decision.seconds)))},
        )
        return _Exchange("held", response, host, url, facts.breaker_reason)

    def _acquire(self, host: HostLimiter, url: str, budget: _Budget) -> policy.Decision:
        """Wait for the host's turn and take a slot (``PROCEED``); or ``HELD`` / ``OPEN`` when a hold
        or an open breaker stands in the way for longer than this call may wait (nothing was sent)."""
        while True:
            facts = host.refresh()
            with host.cond:
                # suppression was checked before robots.txt: here only holds, slots and pacing
                decision = policy.decide(
                    facts, self._pace(host), self.settings, host=host.key, now=self._clock.time(),
                    mono=self._clock.monotonic(), allowance=self._allowance(budget), exempt=True,
                )
                verdict = decision.verdict
                if verdict is policy.Verdict.PROCEED:
                    with self._rng_lock:
                        fraction = self._rng.random()
                    host.begin(self._clock.monotonic(), fraction)
                    if decision.probe:
                        host.update(policy.begin_probe)
                        host.probing = True
                        self._log(logging.INFO, "%s: breaker half-open; one probe request", host.key)
                    return decision
                if verdict is policy.Verdict.BUSY:
                    host.cond.wait(timeout=0.5)  # real time: woken when a request on this host ends
                    continue
            if verdict in (policy.Verdict.HELD, policy.Verdict.OPEN):
                return decision
            self._wait(decision.seconds, host, url, budget, decision.reason)

    def _observe(self, host: HostLimiter, url: str, response: requests.Response, *, exempt: bool, robots: bool = False) -> None:
        """Record what a response says about its host (:func:`.policy.observe_response`), then publish it."""
        settings = self.settings
        now = self._clock.time()
        out: list[Any] = []
        gap_s = host.last_gap_s
        pace = self._pace(host)

        def change(facts: Any) -> Any:
            new, notices = policy.observe_response(
                facts, settings, status=response.status_code, headers=response.headers, now=now,
                exempt=exempt, robots=robots, shown_url=redact_url(url), gap_s=gap_s,
                floor_s=policy.floor(facts, settings, host.key, pace),
            )
            out[:] = notices
            return new

        host.update(change)
        self._publish(host, url, out)

    def _observe_error(self, host: HostLimiter, url: str, exc: BaseException) -> None:
        settings = self.settings
        now = self._clock.time()
        out: list[Any] = []

        def change(facts: Any) -> Any:
            new, notices = policy.observe_error(facts, settings, error=type(exc).__name__, now=now,
                                                unreachable=_unreachable(exc))
            out[:] = notices
            return new

        host.update(change)
        self._publish(host, url, out)

    def _publish(self, host: HostLimiter, url: str, notices: Iterable[policy.Notice]) -> None:
        for n in notices:
            if n.kind == "hold":
                self._emit(EventKind.HOLD, host, url, status=n.status, seconds=n.seconds, detail=n.detail)
                self._log(logging.WARNING, "%s asked for no requests for %.0fs (%s)", host.key, n.seconds or 0.0, n.detail)
            elif n.kind == "backoff":
                self._emit(EventKind.BACKOFF, host, url, seconds=n.seconds, detail=n.detail)
                self._log(logging.INFO, "backoff for %s: %s", host.key, n.detail)
            elif n.kind == "breaker":
                self._emit(EventKind.BREAKER, host, url, seconds=n.seconds, detail=n.detail)
                self._log(logging.WARNING, "%s: %s", host.key, n.detail)
            elif n.kind == "learned":
                self._emit(EventKind.LEARNED, host, url, status=n.status, seconds=n.seconds, detail=n.detail)
                self._log(logging.INFO, "%s: %s", host.key, n.detail)
            elif n.kind == "suppress":
                self._emit(EventKind.SUPPRESS, host, url, status=n.status, seconds=n.seconds, detail=n.detail)
                self._log(logging.WARNING, "%s answered 403; suppressing it (%s)", host.key, n.detail)

    def _exempt(self, url: str) -> bool:
        return (urlsplit(url).hostname or "") in self.suppression_exempt

    # ------------------------------------------------------------------ robots.txt
    def _robots_rules(self, host: HostLimiter, url: str, budget: _Budget) -> RobotsRules:
        rules = host.facts.robots
        if rules is not None and rules.expires_at > self._clock.time():
            return rules
        with host.robots_lock:  # one fetch per host, however many threads ask
            rules = host.facts.robots
            if rules is not None and rules.expires_at > self._clock.time():
                return rules
            rules = self._fetch_robots(host, url, budget)
            host.update(lambda f: replace(f, robots=rules))
            return rules

    def _fetch_robots(self, host: HostLimiter, url: str, budget: _Budget) -> RobotsRules:
        parts = urlsplit(url)
        robots_url = f"{parts.scheme}://{parts.netloc}/robots.txt"
        unreachable_for = self.robots_unreachable_ttl_s

        def unreachable(detail: str) -> RobotsRules:
            now = self._clock.time()
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
            if self._acquire(hop_host, hop_url, budget).verdict is not policy.Verdict.PROCEED:
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
            refusal = redirect_refusal(hop_url, target, self.allow_private_redirects)  # as for any other request
            if refusal is not None:
                return unreachable(f"redirect to {redact_url(target)} refused: {refusal}")
            hop_url, hop_host = target, self._registry.limiter(target)
        try:
            self._observe(hop_host, hop_url, response, exempt=True, robots=True)
            status = response.status_code
            now = self._clock.time()
            if 200 <= status < 300:
                body = bytearray()
                truncated = False
                try:  # within the request's deadline, decoded bytes capped (paperfetch.http.limits)
                    for chunk in iter_limited(response, max_bytes=MAX_ROBOTS_BYTES + 1, chunk_size=16 * 1024, truncate=True,
                                              deadline=getattr(response, "paperfetch_deadline", None), url=robots_url):
                        body.extend(chunk)
                        if len(body) > MAX_ROBOTS_BYTES:
                            truncated = True
                            break
                except requests.RequestException as exc:
                    return unreachable(f"body: {type(exc).__name__}")
                rules = RobotsRules.parse(bytes(body), fetched_at=now, expires_at=now + self.robots_cache_ttl_s,
                                          truncated=truncated)
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
    def _wait(self, seconds: float, host: HostLimiter, url: str, budget: _Budget, why: str) -> None:
        """Sleep for the host; in a batch's worker, stopping the batch ends the sleep at once with :class:`Stopped`."""
        if seconds <= 0:
            return
        self._emit(EventKind.WAIT, host, url, seconds=seconds, detail=why)
        stop = stop_event()
        if self._sleep is not None:
            self._sleep(seconds)
        elif stop is not None:
            self._clock.wait(stop, seconds)  # a batch's worker: stop() (or closing the client) wakes it
        else:
            self._clock.sleep(seconds)
        budget.waited += seconds
        self._check_stop()

    def _check_stop(self) -> None:
        stop = stop_event()
        if stop is not None and stop.is_set():
            raise Stopped("the batch was stopped; nothing more is sent")

    def _check_url(self, url: str) -> None:
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            raise InvalidURL(f"paperfetch only requests http and https URLs, not {redact_url(url)!r}", url=redact_url(url))
        host_key(url)

    def _next_hop(self, url: str, current: str, location: str, response: requests.Response, hop: int, seen: set[str],
                  headers: dict[str, str], history: list[requests.Response], host: HostLimiter, method: str,
                  data: Any) -> tuple[str, str, Any]:
        """One redirect hop, the same with and without politeness: checked (loops, hop count, public ->
        private), credentials dropped across hosts, a GET after 301/302/303 as browsers and requests do.
        Returns the next URL, method and body."""
        target = urljoin(response.url or current, location)
        seen.add(current)
        self._check_redirect(url, current, target, response, hop, seen)
        if urlsplit(target).hostname != urlsplit(current).hostname:
            headers.pop("Authorization", None)
        if response.status_code in (301, 302, 303):
            method, data = "GET", None
        self._emit(EventKind.REDIRECT, host, current, status=response.status_code, detail=redact_url(target))
        response.close()
        history.append(response)
        return target, method, data

    def _raw_get(self, url: str, kwargs: dict[str, Any]) -> requests.Response:
        """``polite_mode=False``: plain requests, no pacing; redirects are followed here, hop by hop,
        so every hop keeps the ceilings (deadline, decoded-bytes cap) and the redirect check."""
        self._check_url(url)
        kwargs = dict(kwargs)
        headers = dict(kwargs.pop("headers", None) or {})
        headers.setdefault("User-Agent", self.user_agent)
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self.timeout
        follow = kwargs.pop("allow_redirects", True)
        params = kwargs.pop("params", None)
        method, data = _method(kwargs)  # issue 12
        current = url
        history: list[requests.Response] = []
        seen: set[str] = set()
        for hop in range(self.max_redirects + 1):
            self._check_url(current)
            host = self._registry.limiter(current)
            with host.cond:
                host.begin(self._clock.monotonic(), 0.0)
            response = self._send_started(host, current, params if hop == 0 else None, headers, kwargs, method, data)
            location = response.headers.get("Location")
            if not follow or response.status_code not in _REDIRECT_STATUSES or not location:
                response.history = history
                return response
            current, method, data = self._next_hop(url, current, location, response, hop, seen, headers, history,
                                                   host, method, data)
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_redirect(self, url: str, current: str, target: str, response: requests.Response, hop: int,
                        seen: set[str]) -> None:
        """Raise when the redirect *current* -> *target* is not to be followed: a loop, one hop too many,
        or a public address sending us to a private one (:mod:`paperfetch.http.addresses`)."""
        shown = redact_url(url)
        if hop >= self.max_redirects or target in seen:
            response.close()
            why = "a redirect loop" if target in seen else f"more than {self.max_redirects} redirects"
            raise TooManyRedirects(
                f"{shown} led to {why} (last hop {redact_url(current)} -> {redact_url(target)})",
                status_code=response.status_code,
                url=shown,
                response=response,
            )
        refusal = redirect_refusal(current, target, self.allow_private_redirects)
        if refusal is not None:
            response.close()
            raise RefusedRedirect(f"{redact_url(current)} -> {redact_url(target)}: {refusal}",
                                  status_code=response.status_code, url=shown)

    def _send_started(self, host: HostLimiter, url: str, params: Any, headers: dict[str, str],
                      kwargs: dict[str, Any], method: str = "GET", data: Any = None) -> requests.Response:
        self._emit(EventKind.REQUEST, host, url)
        with self._count_lock:
            self._requests_sent += 1
        try:
            response = self._answer(method, url, params, data, headers, kwargs)
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

    def _fetched(self, exchange: _Exchange, classify: Callable[[requests.Response], Outcome], shown: str) -> requests.Response:
        """``fetch``'s verdict on a settled exchange: the response, or the typed error."""
        response = exchange.response
        host = exchange.host
        if exchange.kind == "disallowed":
            raise DisallowedByRobots(f"robots.txt of {host.key} disallows {shown}", url=shown)
        if exchange.kind == "suppressed":
            supp = host.facts.suppression
            raise HostSuppressed(
                f"{host.key} is suppressed ({supp.reason if supp else '403'}); no request sent",
                status_code=403,
                url=shown,
                response=response,
                reason=supp.reason if supp else "",
                suppressed_until=_utc(supp.until) if supp else None,
            )
        if exchange.kind == "held":
            raise self._rate_limited(exchange, shown, "no request sent")
        assert response is not None
        verdict = classify(response)
        held = policy.hold_remaining(host.facts, self._clock.time()) > 0
        if response.status_code == 403 and held:
            raise self._rate_limited(exchange, shown, "HTTP 403 with rate-limit headers")
        if verdict is Outcome.RETRY and (held or response.status_code == 429):
            raise self._rate_limited(exchange, shown, f"HTTP {response.status_code}")
        return self._judge(response, verdict, shown)

    def _judge(self, response: requests.Response, verdict: Outcome, shown: str) -> requests.Response:
        if verdict is Outcome.OK:
            return response
        status = response.status_code
        if verdict is Outcome.ABSENT:
            raise NotFoundError(f"{shown}: not found (HTTP {status})", status_code=status, url=shown, response=response)
        if verdict is Outcome.RETRY:
            raise ServiceError(
                f"{shown}: HTTP {status} after {self.max_retries + 1} attempts", status_code=status, url=shown,
                response=response,
            )
        raise ServiceError(f"{shown}: HTTP {status} ({response.reason or 'error'})", status_code=status, url=shown,
                           response=response)

    def _rate_limited(self, exchange: _Exchange, shown: str, what: str) -> RateLimited:
        host = exchange.host
        held_until = host.held_until
        status = exchange.response.status_code if exchange.response is not None else host.facts.hold_status
        when = held_until.strftime("%H:%M:%S UTC") if held_until else "later"
        return RateLimited(
            f"{host.key} asked for no requests until {when} ({what}); {shown} not fetched",
            held_until=held_until,
            status_code=status,
            url=shown,
            response=exchange.response,
        )

    def _emit(self, kind: EventKind, host: HostLimiter, url: str | None, **fields: Any) -> None:
        if not len(self.events):
            return
        self.events.publish(Event(kind, host.key, self._clock.time(), redact_url(url) if url else None, **fields))

    def _log(self, level: int, message: str, *args: Any) -> None:
        logger.log(level, message, *args)  # no per-instance gate: the logging configuration decides


# ---- issue 12: POST for idempotent reads. One code path: the method rides through _exchange/_send.
_METHODS = frozenset({"GET", "POST"})


def _method(kwargs: dict[str, Any]) -> tuple[str, Any]:
    """Pop ``method`` (default GET) and ``data`` (a POST's form body) from a call's kwargs."""
    method = str(kwargs.pop("method", None) or "GET").upper()
    data = kwargs.pop("data", None)
    if method not in _METHODS:
        raise ConfigurationError(f"paperfetch sends GET, or POST for idempotent reads; not {method!r}")
    if data is not None and method != "POST":
        raise ConfigurationError("data= is a POST's form body; pass method='POST' with it")
    return method, data
# ---- end issue 12


class _TypedNetworkErrors:
    """``fetch``/``download``: a raw ``requests`` error leaves as :class:`~paperfetch.RequestTimeout` /
    :class:`~paperfetch.NetworkError`; paperfetch's own errors pass."""

    def __init__(self, shown: str) -> None:
        self.shown = shown

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if exc is None or isinstance(exc, PaperfetchError):
            return
        if isinstance(exc, requests.Timeout):
            raise RequestTimeout(f"no answer from {self.shown} in time: {exc}", url=self.shown) from exc
        if isinstance(exc, requests.RequestException):
            what = "is unreachable" if _unreachable(exc) else "could not be reached"
            raise NetworkError(f"{self.shown} {what}: {exc}", url=self.shown) from exc

