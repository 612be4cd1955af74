"""The polite HTTP transport: every request paperfetch makes goes through :class:`HttpClient`, which carries out
:mod:`.policy`'s decisions hop by hop and retries in one loop (docs/politeness.md, "Order of operations").
"""

from __future__ import annotations

import functools
import logging
import math
import random
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import requests

from paperfetch import defaults
from paperfetch.clock import SYSTEM_CLOCK, Clock
from paperfetch.errors import ConfigurationError, DeadlineExceeded, TooManyRedirects, TooSlow, TruncatedDownload
from paperfetch.http import batch, policy, redirects, wire
from paperfetch.http.config import DEFAULT_USER_AGENT, ConfiguredKnobs, TransportConfig, knob_signature
from paperfetch.http.context import stop_event
from paperfetch.http.events import Event, EventBus, EventKind
from paperfetch.http.exceptions import NETWORK_ERRORS, map_network_errors, since_words, unreachable
from paperfetch.http.files import DownloadResult, file_digest, stream_to_file
from paperfetch.http.hosts import HostLimiter, HostRegistry, HostSnapshot, registry_for
from paperfetch.http.hostside import Budget, Exchange, HostSide
from paperfetch.http.outcome import Outcome, default_classify
from paperfetch.http.pools import request_key
from paperfetch.http.retry import Retry
from paperfetch.http.verdicts import fetched, judge
from paperfetch.http.wire import SYNTHETIC_HEADER, Wire, check_url, is_synthetic, new_session, request_method
from paperfetch.log import enable_logging
from paperfetch.parts import part_file
from paperfetch.redact import redact_exception, redact_text, redact_url
from paperfetch.state.base import window_depth, window_floor

if TYPE_CHECKING:  # pragma: no cover
    import os

    import pandas as pd

    from paperfetch.state import HostStateStore

__all__ = ["DEFAULT_USER_AGENT", "DownloadResult", "HttpClient", "SYNTHETIC_HEADER", "TransportConfig", "is_synthetic"]

logger = logging.getLogger(__name__)

class HttpClient(ConfiguredKnobs):
    """HTTP client with robots.txt, per-host pacing, backoff, retries, holds and 403 suppression.

    Positional parameters are PyPaperRetriever's ``HttpClient`` contract, keyword-only ones paperfetch's;
    all are sugar over one frozen :class:`~paperfetch.http.config.TransportConfig` (docs/politeness.md,
    "Constructor parameters").
    """

    def __init__(self, *args: Any, session: requests.Session | None = None, clock: Clock | None = None,
                 sleep: Callable[[float], None] | None = None, registry: HostRegistry | None = None,
                 rng: random.Random | None = None, state: "str | os.PathLike[str] | HostStateStore | None" = None,
                 state_fallback: str | None = None, config: TransportConfig | None = None, **knobs: Any) -> None:
        # the knobs are TransportConfig's fields, declared once there (the signature below is derived from them)
        if config is not None and (args or knobs):
            raise TypeError("give HttpClient a config= or its settings, not both")
        config = config if config is not None else TransportConfig.from_arguments(args, knobs)
        self._config = config
        self._clock: Clock = clock if clock is not None else SYSTEM_CLOCK
        if registry is None:
            # a fake clock gets a registry of its own
            registry = registry_for(state, self._clock, fallback=state_fallback)
        elif state is not None:
            raise ConfigurationError("give either registry= or state=, not both")
        self._registry = registry
        self._own_session = session is None
        self._session = session if session is not None else new_session()
        self.events = EventBus()
        self._wire = Wire(session=self._session, registry=registry, clock=self._clock, sleep=sleep, emit=self._emit,
                          config=config)
        self._hosts = HostSide(config=config, registry=registry, clock=self._clock, wire=self._wire,
                               events=self.events, rng=rng if rng is not None else random.Random())
        # the library adds no handler; verbosity >= 2 is an explicit request to see the messages
        if config.verbosity >= 2:
            enable_logging(logging.DEBUG if config.verbosity >= 3 else logging.INFO)
        self._closed = threading.Event()

    @classmethod
    def from_config(cls, config: TransportConfig, *, session: requests.Session | None = None,
                    clock: Clock | None = None, sleep: Callable[[float], None] | None = None,
                    registry: HostRegistry | None = None, rng: random.Random | None = None,
                    state: "str | os.PathLike[str] | HostStateStore | None" = None,
                    state_fallback: str | None = None) -> "HttpClient":
        """A client running on *config* itself (the collaborators as in the constructor)."""
        return cls(config=config, session=session, clock=clock, sleep=sleep, registry=registry, rng=rng, state=state,
                   state_fallback=state_fallback)

    @property
    def config(self) -> TransportConfig:
        """The frozen settings this client runs on."""
        return self._config

    def reconfigure(self, config: TransportConfig) -> None:
        """Run on *config* from now on (what setting one of the client's attributes does)."""
        self._config = config
        self._hosts.config = config
        self._wire.config = config

    def get(self, url: str, **kwargs: Any) -> requests.Response | None:
        """GET *url* politely: a response for any HTTP status, ``None`` when robots.txt disallows it, a
        synthetic response for a suppressed or held host (docs/politeness.md, "get(), fetch(), ...").
        A ``requests`` error it lets through has its chain redacted (:func:`~paperfetch.redact.redact_exception`)."""
        config = self._config
        try:
            if not config.polite_mode:
                return self._raw_get(url, kwargs)
            exchange, _ = self._call(url, kwargs, classify=self._get_classify, max_elapsed=config.max_elapsed)
        except Exception as exc:
            redact_exception(exc)
            raise
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
        """``[self.get(url, **kwargs) for url in urls]``, in input order, hosts served side by side
        (:func:`paperfetch.http.batch.get_many`)."""
        return batch.get_many(self, urls, workers=workers, return_exceptions=return_exceptions, **kwargs)

    def iter_many(
        self, urls: Iterable[str], *, workers: int | None = None, **kwargs: Any
    ) -> Iterator[tuple[int, requests.Response | BaseException | None]]:
        """``(index, self.get(urls[index], **kwargs))`` as each URL finishes, or the exception ``get`` would
        raise; leaving the loop early stops the batch (:func:`paperfetch.http.batch.iter_many`)."""
        return batch.iter_many(self, urls, workers=workers, **kwargs)

    def fetch(
        self,
        url: str,
        *,
        classify: Callable[[requests.Response], Outcome] = default_classify,
        max_elapsed: float | None = None,
        **kwargs: Any,
    ) -> requests.Response:
        """GET *url* and return the response when ``classify(response)`` is ``Outcome.OK``; otherwise raise a
        typed error, never a raw ``requests`` one (the table: docs/politeness.md, "get(), fetch(), ...").

        ``method="POST"`` with ``data=`` is for idempotent reads only (NCBI EFetch with a long id list): it is
        paced and retried like a GET, because asking twice is harmless.
        """
        budget = self._config.max_elapsed if max_elapsed is None else max_elapsed
        shown = redact_url(url)
        if not self._config.polite_mode:
            with map_network_errors(shown):
                response = self._raw_get(url, kwargs)
            return judge(response, classify(response), shown, max_retries=self._config.max_retries)
        with map_network_errors(shown, since=functools.partial(self._failing_since, url, kwargs.get("params"))):
            exchange, _ = self._call(url, kwargs, classify=classify, max_elapsed=budget)
        return fetched(exchange, classify, shown, now=self._clock.time(), max_retries=self._config.max_retries,
                       pools=self._config.pools)

    def download(
        self,
        url: str,
        dest: str | os.PathLike[str],
        *,
        classify: Callable[[requests.Response], Outcome] = default_classify,
        validate: Callable[[bytes, requests.Response], None] | None = None,
        max_bytes: int | None = None,
        chunk_size: int = defaults.DOWNLOAD_CHUNK_BYTES,
        max_elapsed: float | None = None,
        validate_bytes: int = defaults.DOWNLOAD_VALIDATE_BYTES,
        reuse: Callable[[Path, bool], bool] | None = None,
        **kwargs: Any,
    ) -> DownloadResult:
        """Stream *url* into *dest* atomically, with ``fetch``'s retries (docs/politeness.md, "get(), fetch(), ...").

        ``validate`` sees the first *validate_bytes* (the whole body if shorter). ``reuse(dest, waited)`` runs
        once the part file is claimed; when it keeps the file already there, nothing is requested.
        """
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shown = redact_url(url)
        budget = self._config.max_elapsed if max_elapsed is None else max_elapsed
        kwargs["stream"] = True
        with part_file(dest) as claim:  # one writer per destination; a killed run's part file is swept later
            if reuse is not None and dest.exists() and reuse(dest, claim.waited):
                size, digest = file_digest(dest)
                return DownloadResult(path=dest, bytes=size, sha256=digest, url=shown, status_code=200,
                                      content_type="application/pdf", attempts=0, waited_s=0.0, reused=True)

            def finish(exchange: Exchange, retry: Retry) -> DownloadResult:
                response = fetched(exchange, classify, shown, now=self._clock.time(),
                                   max_retries=self._config.max_retries, pools=self._config.pools)
                try:
                    stop = stop_event()
                    path, size, sha256 = stream_to_file(
                        response, dest, shown=shown, validate=validate, max_bytes=max_bytes,
                        chunk_size=chunk_size, validate_bytes=validate_bytes,
                        should_stop=None if stop is None else stop.is_set, part=claim,
                    )
                except (DeadlineExceeded, TooSlow) as exc:  # the body outlived the deadline or trickled: its host's failure
                    self._hosts.observe_error(exchange.host, exchange.url, exc)
                    raise
                finally:
                    response.close()
                return DownloadResult(
                    path=path, bytes=size, sha256=sha256, url=redact_url(response.url or url),
                    status_code=response.status_code, content_type=response.headers.get("Content-Type"),
                    attempts=retry.attempts + 1, waited_s=retry.waited_s,
                )

            with map_network_errors(shown, since=functools.partial(self._failing_since, url, kwargs.get("params"))):
                return self._call(url, kwargs, classify=classify, max_elapsed=budget, finish=finish)

    def _failing_since(self, url: str, params: Any) -> str:
        """``since 16:41 UTC``: since when *url*'s host has failed (now, when it has not)."""
        now = self._clock.time()
        return since_words(self._hosts.limiter(url, params).facts.failing_since or now, now)

    def snapshot(self, url_or_host: str) -> HostSnapshot:
        """The state of *url_or_host*'s host as this client sees it (pacing by this client's settings)."""
        return self._hosts.snapshot(self._hosts.limiter(url_or_host))

    def snapshots(self) -> list[HostSnapshot]:
        """One :class:`~paperfetch.http.hosts.HostSnapshot` per host of the store (other processes' too), by host."""
        hosts = sorted(self._registry.known_hosts(), key=lambda h: h.key)
        return [self._hosts.snapshot(h, refresh=False) for h in hosts]

    def domain_status(self) -> "pd.DataFrame":
        """One row per host of the store (docs/politeness.md, "domain_status()"); pandas is imported only here."""
        from paperfetch.http.status import domain_status_frame

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
        return {host.key: host.facts.suppression_reason for host in self._registry.hosts() if host.facts.suppressed(now)}

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
        return self._wire.requests_sent

    def host_limiter(self, url: str) -> HostLimiter:
        """The shared record of *url*'s host (or of its pool, :mod:`.pools`) in this client's registry."""
        return self._hosts.limiter(url)

    def pacing_key(self, url: str) -> str:
        """The key *url*'s request is paced under: its host (``host_key``), or ``host#pool`` (:mod:`.pools`)."""
        return request_key(url, None, self._config.pools)

    def release_holds(self) -> None:
        """Clear every hold in this client's registry."""
        self._registry.release_holds()

    def subscribe(self, subscriber: Callable[[Event], None]) -> Callable[[], None]:
        """Receive every :class:`~paperfetch.http.events.Event`; returns an unsubscribe function."""
        return self.events.subscribe(subscriber)

    # ---- what a batch asks (paperfetch.http.scheduler.Transport)
    def ready_in(self, url: str) -> float:
        """Seconds until a request to *url*'s host (or pool) could start (0: now, ``inf``: suppressed;
        :func:`.policy.next_start`), no sooner than its windows allow; a hold counts as long as it lasts on the
        monotonic clock (:meth:`.HostLimiter.steady`), whatever the wall clock did."""
        config, clock = self._config, self._clock
        if not config.polite_mode:
            return 0.0
        host = self._hosts.limiter(url)
        exempt = self._hosts.exempt(url)
        with host.cond:
            ready = policy.next_start(host.steady(), self._hosts.pace(host), config, host=host.key,
                                      now=clock.time(), mono=clock.monotonic(), exempt=exempt)
        windows = config.rule(host.key).windows
        if windows and ready < math.inf:  # a full window keeps the next start too (the store's log says until when)
            now = clock.time()
            ready = max(ready, window_floor(self._registry.store.starts(host.key, window_depth(windows)), windows, now) - now)
        return ready

    def in_flight_cap(self, url: str) -> int:
        """How many requests to *url*'s host may be in flight at once (:func:`.policy.in_flight_cap`)."""
        host = self._hosts.limiter(url)
        return policy.in_flight_cap(host.facts, self._config, host.key)

    def call_allowance(self) -> float:
        """How long one call may wait for a host: ``max_retry_after_s``, within ``max_elapsed`` (:func:`.policy.allowance`)."""
        return policy.allowance(self._config, Budget(self._config.max_elapsed).remaining())

    def read_robots(self, url: str) -> None:
        """Read *url*'s host's robots.txt now when it is respected and not known yet (in the host's first slot, as
        a request there would), so its Crawl-delay is in :meth:`ready_in` before a caller commits to waiting for
        the host. Nothing is sent while the host is held, open or suppressed."""
        config = self._config
        if not config.respect_robots_txt:
            return
        host = self._hosts.limiter(url)
        budget = Budget(config.max_elapsed)
        if self._hosts.decide(host, budget, exempt=self._hosts.exempt(url)).verdict in (
                policy.Verdict.SUPPRESSED, policy.Verdict.HELD, policy.Verdict.OPEN):
            return
        self._hosts.robots_rules(host, url, budget)

    def hold_remaining(self, url: str) -> float:
        """Seconds *url*'s host is held (Retry-After, a spent budget; 0: not held)."""
        return self._hosts.limiter(url).steady().hold_remaining(self._clock.time())

    def closed_for(self, url: str) -> float:
        """Seconds *url*'s host sends nothing: the longer of its hold and its open breaker's time to the probe
        (:func:`.policy.breaker_open`; 0: it may be asked now or once paced)."""
        facts, now = self._hosts.limiter(url).steady(), self._clock.time()
        return max(facts.hold_remaining(now), policy.breaker_open(facts, self._config, now))

    def would_send(self, url: str) -> bool:
        """``False`` when the host's fresh cached robots.txt disallows *url* (``get`` answers ``None`` at once);
        ``True`` before it is known."""
        config = self._config
        rules = self._hosts.limiter(url).robots
        if not (config.respect_robots_txt and config.polite_mode) or rules is None or rules.expires_at <= self._clock.time():
            return True
        try:
            return rules.can_fetch(url, config.user_agent)
        except Exception:  # noqa: BLE001 - odd URL: the request will say what is wrong with it
            return True

    def breaker_ends_batch(self, url: str, *, since: float | None, max_host_wait_s: float) -> bool:
        """Whether *url*'s host's open breaker ends a batch's items for it at once (:func:`.policy.breaker_ends_batch`)."""
        host = self._hosts.limiter(url)
        return policy.breaker_ends_batch(host.facts, self._config, now=self._clock.time(), since=since,
                                         max_host_wait_s=max_host_wait_s)

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

    def _get_classify(self, response: requests.Response) -> Outcome:
        """``get``'s retry rule: 429 (with honor_retry_after), 503 and 504 are retried."""
        status = response.status_code
        if status == 429 and self._config.honor_retry_after:
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
        finish: Callable[[Exchange, Retry], Any] | None = None,
    ) -> Any:
        """The one retry loop. Returns ``(exchange, retry)``, or what ``finish(exchange, retry)`` returns.

        ``finish`` (``download``'s streaming) runs on the exchange the loop settled on; a timeout,
        connection error or truncated body inside it is retried like one in the request itself.
        """
        budget = Budget(max_elapsed)
        retry = self._config.retry
        shown = redact_url(url)
        while True:
            try:
                exchange = self._exchange(url, dict(kwargs), budget)
            except TooManyRedirects:
                raise
            except NETWORK_ERRORS as exc:
                retry = self._network_retry(retry, url, exc, budget, type(exc).__name__, kwargs.get("params"))
                continue
            if exchange.kind == "response":
                again = self._status_retry(exchange, retry, budget, classify, shown)
                if again is not None:
                    retry = again
                    continue
            if finish is None:
                return exchange, retry
            try:
                return finish(exchange, retry)
            except TooSlow:
                raise  # a trickling host is its failure (counted in finish), not asked again at once
            except (TruncatedDownload, *NETWORK_ERRORS) as exc:
                with map_network_errors(shown, what="download"):
                    retry = self._network_retry(retry, url, exc, budget, f"download interrupted: {exc}",
                                                kwargs.get("params"))

    def _status_retry(self, exchange: Exchange, retry: Retry, budget: Budget,
                      classify: Callable[[requests.Response], Outcome], shown: str) -> Retry | None:
        """The retry after an answer *classify* calls worth retrying, once its wait is over; None to settle on
        *exchange* (``gave_up`` when the breaker is open or the host asks for more than this call may wait)."""
        hosts, response = self._hosts, exchange.response
        assert response is not None
        if classify(response) is not Outcome.RETRY or retry.exhausted:
            return None
        wait = hosts.retry_wait(exchange)
        allowance = hosts.allowance(budget)
        if hosts.decide(exchange.host, budget, exempt=True).verdict is policy.Verdict.OPEN:
            # the breaker would answer the retry without a request: do not sleep for it
            logger.info("%s: breaker open; HTTP %s is the answer", exchange.host.key, response.status_code)
            exchange.kind = "gave_up"
            return None
        if wait > allowance:
            logger.info("HTTP %s from %s asks for %.0fs, more than this call may wait (%.0fs); giving up",
                        response.status_code, exchange.host.key, wait, allowance)
            exchange.kind = "gave_up"
            return None
        self._emit(EventKind.RETRY, exchange.host, exchange.url, status=response.status_code, seconds=wait)
        logger.warning("HTTP %s from %s; waiting %.1fs before retry", response.status_code, exchange.host.key, wait)
        response.close()
        hosts.wait(wait, exchange.host, exchange.url, budget, f"HTTP {response.status_code}")
        return retry.increment(shown, status=response.status_code, wait_s=wait)

    def _network_retry(self, retry: Retry, url: str, exc: BaseException, budget: Budget, detail: str,
                       params: Any = None) -> Retry:
        """The retry after a timeout, connection error or truncated body; re-raises *exc* when none is left."""
        if retry.exhausted:
            raise exc
        wait = retry.network_wait()
        if unreachable(exc):
            wait = min(wait, retry.schedule.wait(retry.attempts, defaults.UNREACHABLE_RETRY_BASE_S, retry.cap_s))
        if wait > budget.remaining():
            raise exc
        host = self._hosts.limiter(url, params)
        if self._hosts.decide(host, budget, exempt=True).verdict is policy.Verdict.OPEN:
            raise exc  # the breaker would answer the retry without a request: waiting would only cost time
        self._emit(EventKind.RETRY, host, url, seconds=wait, detail=detail)
        logger.warning("%s for %s; retrying in %.1fs", type(exc).__name__, redact_url(url), wait)
        self._hosts.wait(wait, host, url, budget, "network retry")
        return retry.increment(redact_url(url), error=type(exc).__name__, wait_s=wait)

    def _exchange(self, url: str, kwargs: dict[str, Any], budget: Budget | None) -> Exchange:
        """One request with its redirects (:mod:`.redirects`' rules), each hop through the host side: decide, robots,
        acquire, send, observe. Without *budget* (``polite_mode=False``): plain requests, no pacing, redirects
        followed unless ``allow_redirects=False``, every hop still under the ceilings and the redirect check."""
        config, hosts = self._config, self._hosts
        follow = kwargs.pop("allow_redirects", True) or budget is not None  # a polite call follows, hop by hop
        params, method, data, headers, chosen_agent = self._prepare(kwargs)
        current = url
        history: list[requests.Response] = []
        seen: set[str] = set()
        for hop in range(config.max_redirects + 1):
            check_url(current)
            hop_params = params if hop == 0 else None
            # its pool's, where the host has pools (a plain request: its host's)
            host = hosts.limiter(current, hop_params) if budget is not None else self._registry.limiter(current)
            if not chosen_agent:
                headers["User-Agent"] = config.user_agent_for(host.key)  # the e-mail only where it is asked for
            if budget is None:
                with host.cond:
                    host.begin(self._clock.monotonic(), 0.0)
                answer: Exchange | requests.Response = self._wire.send(host, current, hop_params, headers, kwargs,
                                                                      method, data)
            else:
                answer = self._hop(host, current, hop_params, headers, kwargs, method, data, budget=budget,
                                   exempt=hosts.exempt(current))
            if isinstance(answer, Exchange):
                return answer
            location = redirects.location(answer)
            if follow and location is not None:
                current, method, data = self._follow(url, current, location, answer, hop, seen, headers, history,
                                                     host, method, data)
                continue
            answer.history = history
            return Exchange("response", answer, host, current)
        raise AssertionError("unreachable")  # pragma: no cover

    def _hop(self, host: HostLimiter, url: str, params: Any, headers: dict[str, str], kwargs: dict[str, Any],
             method: str, data: Any, *, budget: Budget, exempt: bool) -> Exchange | requests.Response:
        """One hop: the host asked (and its robots.txt read), its slot acquired, the request sent; again when the
        host was suppressed, held or opened while this request waited. An Exchange when no request was sent."""
        config = self._config
        while True:
            if config.respect_robots_txt:  # the host is asked before its robots.txt is read, and after
                refused = self._robots_refusal(host, url, budget, exempt)
                if refused is not None:
                    return refused
            decision = self._hosts.acquire(host, url, budget, exempt=exempt or config.respect_robots_txt)
            refused = self._refusal(host, url, decision)
            if refused is not None:
                return refused
            try:
                return self._send(host, url, params, headers, kwargs, method, data, exempt=exempt)
            except wire.Blocked:
                continue

    def _refusal(self, host: HostLimiter, url: str, decision: policy.Decision) -> Exchange | None:
        """The answer without a request for a host suppressed, held or with its breaker open; None to go on."""
        if decision.verdict is policy.Verdict.SUPPRESSED:
            return self._hosts.suppressed(host, url, decision)
        if decision.verdict is policy.Verdict.HELD:
            return self._hosts.held(host, url)
        if decision.verdict is policy.Verdict.OPEN:
            return self._hosts.open(host, url, decision)
        return None

    def _robots_refusal(self, host: HostLimiter, url: str, budget: Budget, exempt: bool) -> Exchange | None:
        """:meth:`_refusal` on the host's standing, then robots.txt's verdict on *url*; None to go on."""
        refused = self._refusal(host, url, self._hosts.decide(host, budget, exempt=exempt))
        if refused is not None:
            return refused
        rules = self._hosts.robots_rules(host, url, budget)
        if rules.can_fetch(url, self._config.user_agent):
            return None
        self._emit(EventKind.DISALLOWED, host, url, detail=rules.status.value)
        logger.warning("Blocked by robots.txt: %s", redact_url(url))
        return Exchange("disallowed", None, host, url)

    def _send(self, host: HostLimiter, url: str, params: Any, headers: dict[str, str], kwargs: dict[str, Any],
              method: str, data: Any, *, exempt: bool) -> requests.Response:
        """Send on the slot ``acquire`` took, checked again at the moment of sending (:func:`.wire.ensure_open`);
        the answer is observed before the slot is released, so a request waiting for the host is decided on it."""
        hosts, clock, settings = self._hosts, self._clock, self._config
        gap = hosts.gap(host)
        return self._wire.send(
            host, url, params, headers, kwargs, method, data, gap_s=gap,
            on_error=lambda exc: hosts.observe_error(host, url, exc),
            on_response=lambda response: hosts.observe(host, url, response, exempt=exempt),
            gate=lambda: wire.ensure_open(host, settings, clock.time(), exempt=exempt, refresh=gap > 0),
            cap=policy.in_flight_cap(host.facts, settings, host.key),
        )

    def _follow(self, url: str, current: str, location: str, response: requests.Response, hop: int, seen: set[str],
                headers: dict[str, str], history: list[requests.Response], host: HostLimiter, method: str,
                data: Any) -> tuple[str, str, Any]:
        """Follow one redirect hop by :mod:`.redirects`' rules; publish it and keep the response in the history."""
        target, method, data = redirects.next_hop(
            url, current, location, response, hop, seen, headers, method, data,
            max_redirects=self._config.max_redirects, allow_private=self._config.allow_private_redirects,
        )
        self._emit(EventKind.REDIRECT, host, current, status=response.status_code, detail=redact_url(target))
        response.close()
        history.append(response)
        return target, method, data

    def _raw_get(self, url: str, kwargs: dict[str, Any]) -> requests.Response:
        """``polite_mode=False``: :meth:`_exchange` without a budget, which always ends in a response."""
        response = self._exchange(url, dict(kwargs), None).response
        assert response is not None
        return response

    def _prepare(self, kwargs: dict[str, Any]) -> tuple[Any, str, Any, dict[str, str], bool]:
        """Pop a call's ``params``, method (POST for idempotent reads, see fetch), body and headers from *kwargs*
        and set its timeout; the last item: whether the caller chose the User-Agent (then sent everywhere)."""
        params = kwargs.pop("params", None)
        method, data = request_method(kwargs)
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self._config.timeout
        headers = dict(kwargs.pop("headers", None) or {})
        return params, method, data, headers, any(name.lower() == "user-agent" for name in headers)

    def _emit(self, kind: EventKind, host: HostLimiter, url: str | None, **fields: Any) -> None:
        self._hosts.emit(kind, host, url, **fields)  # the wire's, which is made before the host side



HttpClient.__init__.__signature__ = knob_signature(HttpClient.__init__)  # type: ignore[attr-defined]
