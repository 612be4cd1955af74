"""The transport's knobs as one frozen value, :class:`TransportConfig`: declared once (its fields), validated
once, and built once into what the rules read (:mod:`.policy` takes the config itself), each host's one
:class:`HostRule`, and what every call starts from (``retry``).
Every knob is also a setting of :func:`paperfetch.settings.load_settings` (docs/politeness.md, "Constructor parameters").
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from paperfetch import defaults
from paperfetch.errors import ConfigurationError
from paperfetch.http.delays import BackoffPolicy, DelayRange, RetrySchedule, resolve_configured_range
from paperfetch.http.identity import user_agent, with_contact
from paperfetch.http.pools import POOL_MARK, Pool, parse_pools, pool_host
from paperfetch.http.retry import Retry
from paperfetch.http.robots import UnreachablePolicy
from paperfetch.state.base import Window

__all__ = ["ConfiguredKnobs", "DEFAULT_HOST_RULES", "DEFAULT_USER_AGENT", "HostRule", "KNOBS", "POSITIONAL_KNOBS",
           "TransportConfig", "knob_signature"]

#: What a client sends without being told: the project and its home page (:func:`.identity.user_agent`).
DEFAULT_USER_AGENT = user_agent()

#: The RFC 9309 §2.4 ceiling of a cached robots.txt's life.
_ROBOTS_TTL_CEILING_S = 86400.0


def _set(obj: object, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)  # a frozen dataclass normalising its own fields once


@dataclass(frozen=True)
class HostRule:
    """What one host (or pool, ``host#pool``) is kept to: the least seconds between two request starts, the
    cap on requests in flight (a declared pool's: the host's announced limit applies under it), the windows
    counted in the host-state store, and its pools per request kind. ``None``: not declared (a pool then
    takes its host's interval and cap)."""

    interval_s: float | None = None
    in_flight: int | None = None
    windows: tuple[Window, ...] = ()
    pools: tuple[Pool, ...] = ()

    def __str__(self) -> str:
        """The rule in plain words: ``1 request per 3 s; 3 in flight; 10 per 1 s; pools: list (filter=)``."""
        parts = [] if self.interval_s is None else [f"1 request per {self.interval_s:g} s"]
        if self.in_flight is not None:
            parts.append(f"{self.in_flight} in flight")
        parts.extend(f"{w.count} per {w.seconds:g} s" for w in self.windows)
        if self.pools:
            parts.append("pools: " + ", ".join(f"{p.label} ({p.name}: {p.pattern.pattern})" if p.label
                                               else f"{p.name} ({p.pattern.pattern})" for p in self.pools))
        return "; ".join(parts) or "no rule"


#: Every client's rules without being told: arXiv asks for no more than one request every three seconds.
DEFAULT_HOST_RULES: Mapping[str, HostRule] = {host: HostRule(interval_s=defaults.ARXIV_INTERVAL_S)
                                              for host in ("export.arxiv.org", "arxiv.org")}
_NO_RULE = HostRule()

#: A knob declared ``float``, ``int`` or ``bool`` is kept as a value of that kind, whatever number was given.
_KINDS = {"float": float, "int": int, "bool": bool}
#: Host names kept in lower case, as a set.
_HOST_SETS = ("contact_hosts", "suppression_exempt")
#: The checks of :meth:`TransportConfig._refuse_impossible`: a knob's test and what it must be.
_LIMITS: tuple[tuple[str, Any, str], ...] = (
    ("max_retries", lambda v: v >= 0, ">= 0"),
    ("max_in_flight_per_host", lambda v: v >= 1, ">= 1"),
    ("max_redirects", lambda v: v >= 0, ">= 0"),
    ("request_deadline_s", lambda v: v > 0, "> 0"),
    ("max_answer_bytes", lambda v: v >= 1, ">= 1"),
    ("robots_deadline_s", lambda v: v > 0, "> 0"),
    ("breaker_failures", lambda v: v >= 0, ">= 0 (0: no breaker)"),
)


@dataclass(frozen=True, kw_only=True, eq=False)
class TransportConfig:
    """The validated settings of one :class:`~paperfetch.http.client.HttpClient` (see its parameters)."""

    user_agent: str = DEFAULT_USER_AGENT
    respect_robots_txt: bool = False
    delay_min_s: float | None = None
    delay_max_s: float | None = None
    honor_retry_after: bool = True
    suppress_on_403: bool = True
    max_retries: int = defaults.MAX_RETRIES
    default_retry_after_s: float = defaults.DEFAULT_RETRY_AFTER_S
    max_retry_after_s: float = defaults.MAX_RETRY_AFTER_S
    backoff_base_s: float = defaults.BACKOFF_BASE_S
    backoff_multiplier: float = defaults.BACKOFF_MULTIPLIER
    backoff_max_s: float = defaults.BACKOFF_MAX_S
    backoff_decay_s: float = defaults.BACKOFF_DECAY_S
    rate_limit_min_s: float = defaults.RATE_LIMIT_MIN_S
    rate_limit_max_s: float = defaults.RATE_LIMIT_MAX_S
    verbosity: int = 1
    polite_mode: bool = True
    timeout: float | tuple[float, float] = defaults.TIMEOUT
    max_elapsed: float | None = None
    max_in_flight_per_host: int = defaults.MAX_IN_FLIGHT_PER_HOST
    # The next four knobs are the spellings a host's rule is given in (:attr:`hosts` is what the rules read).
    #: per host, the least seconds between two starts (merged over :data:`DEFAULT_HOST_RULES`)
    host_intervals: Mapping[str, float] | None = None
    #: per host, the pool's cap on requests in flight (Crossref's pools)
    host_concurrency: Mapping[str, int] | None = None
    #: per host (or pool), windows kept beside its interval: at most so many starts in any span
    #: (``{"www.ebi.ac.uk": ["10/s", "500/min"]}``), counted in the host-state store across its clients
    host_windows: Mapping[str, Iterable[Window | str]] | None = None
    #: per host, its pools per request kind: ``{host: {pool: regex of path and query}}`` (or ``(regex, label)``:
    #: the label people read, ``list queries``), the first that finds the request wins
    #: (:mod:`paperfetch.http.pools`); each pool is paced, held and broken as a host
    host_pools: Mapping[str, Mapping[str, str | Sequence[str]]] | None = None
    max_redirects: int = defaults.MAX_REDIRECTS
    #: total seconds one request may take: connect, head and every read, however the bytes trickle
    request_deadline_s: float = defaults.REQUEST_DEADLINE_S
    #: decoded bytes of a (non-streamed) answer read at most: a gzip bomb stops here
    max_answer_bytes: int = defaults.MAX_ANSWER_BYTES
    #: a body slower than this many bytes per second over ``min_rate_window_s`` ends (``TooSlow``; 0: off)
    min_rate_bytes_s: float = defaults.MIN_RATE_BYTES_S
    min_rate_window_s: float = defaults.MIN_RATE_WINDOW_S
    #: total seconds a robots.txt request may take (past it: unreachable)
    robots_deadline_s: float = defaults.ROBOTS_DEADLINE_S
    #: the contact e-mail added to the User-Agent for ``contact_hosts`` only (every host: ``contact_everywhere``)
    contact_email: str | None = field(default=None, repr=False)
    contact_hosts: Iterable[str] = ()
    contact_everywhere: bool = False
    #: follow a redirect from a public address to a private, loopback or link-local one (default: refuse)
    allow_private_redirects: bool = False
    suppress_403_ttl_s: float | None = defaults.SUPPRESS_403_TTL_S
    suppression_exempt: Iterable[str] = defaults.SUPPRESSION_EXEMPT
    robots_unreachable: UnreachablePolicy | str = UnreachablePolicy.ALLOW
    robots_cache_ttl_s: float = defaults.ROBOTS_CACHE_TTL_S
    robots_unreachable_ttl_s: float = defaults.ROBOTS_UNREACHABLE_TTL_S
    max_crawl_delay_s: float = defaults.MAX_CRAWL_DELAY_S
    network_retry_schedule: RetrySchedule | str = RetrySchedule.EXPONENTIAL
    network_retry_base_s: float = defaults.NETWORK_RETRY_BASE_S
    #: added to every non-zero gap (the network's latency varies; see :data:`paperfetch.defaults.PACING_MARGIN_S`)
    pacing_margin_s: float = defaults.PACING_MARGIN_S
    #: consecutive failures that open a host's circuit breaker (0: no breaker)
    breaker_failures: int = defaults.BREAKER_FAILURES
    #: whether the interval a host enforces is learned from its 429s
    learn_interval: bool = True
    #: how long a batch waits for one host's breaker before its remaining items end at once
    max_host_wait_s: float = defaults.MAX_HOST_WAIT_S

    #: each host's (or pool's) one rule, built from the four ``host_*`` knobs over :data:`DEFAULT_HOST_RULES`
    hosts: Mapping[str, HostRule] = field(init=False, repr=False)
    #: the retry policy every call starts from, built once
    retry: Retry = field(init=False, repr=False)
    #: the configured delay range (``None``: no configured delay)
    configured_range: DelayRange | None = field(init=False, repr=False)
    #: the delay range of a host whose robots.txt names no Crawl-delay
    fallback_range: DelayRange = field(init=False, repr=False)
    #: the backoff after a 429 or 5xx, and its decay
    backoff: BackoffPolicy = field(init=False, repr=False)
    #: ``user_agent`` with the contact e-mail, for the hosts that asked for it
    contact_user_agent: str = field(init=False, repr=False)
    #: each host's pools, as :func:`.pools.request_key` reads them
    pools: Mapping[str, tuple[Pool, ...]] = field(init=False, repr=False)

    def _refuse_impossible(self) -> None:
        """A :class:`ConfigurationError` naming the first knob whose value cannot work."""
        for name, works, wanted in _LIMITS:
            if not works(getattr(self, name)):
                raise ConfigurationError(f"{name} must be {wanted}, not {getattr(self, name)!r}")
        if self.rate_limit_max_s < self.rate_limit_min_s:
            raise ConfigurationError("rate_limit_max_s must not be smaller than rate_limit_min_s")
        if self.min_rate_bytes_s < 0 or self.min_rate_window_s < 0:
            raise ConfigurationError("min_rate_bytes_s and min_rate_window_s must be >= 0 (0: no minimum rate)")

    def __post_init__(self) -> None:
        self._refuse_impossible()
        for f in fields(self):
            if f.init and f.type in _KINDS:
                _set(self, f.name, _KINDS[f.type](getattr(self, f.name)))
        for name in _HOST_SETS:
            _set(self, name, frozenset(h.lower() for h in getattr(self, name)))
        configured = resolve_configured_range(self.delay_min_s, self.delay_max_s)
        _set(self, "configured_range", configured)
        _set(self, "delay_min_s", None if configured is None else configured.low)
        _set(self, "delay_max_s", None if configured is None else configured.high)
        _set(self, "fallback_range", DelayRange(self.rate_limit_min_s, self.rate_limit_max_s))
        _set(self, "backoff", BackoffPolicy(self.backoff_base_s, self.backoff_multiplier, self.backoff_max_s,
                                            self.backoff_decay_s))
        self._build_hosts()
        _set(self, "robots_deadline_s", min(self.robots_deadline_s, self.request_deadline_s))
        _set(self, "contact_email", self.contact_email or None)
        _set(self, "contact_user_agent", with_contact(self.user_agent, self.contact_email))
        _set(self, "robots_unreachable", UnreachablePolicy.parse(self.robots_unreachable))
        # RFC 9309 §2.4: a cached robots.txt should not be used for more than 24 hours.
        _set(self, "robots_cache_ttl_s", min(self.robots_cache_ttl_s, _ROBOTS_TTL_CEILING_S))
        _set(self, "robots_unreachable_ttl_s", min(self.robots_unreachable_ttl_s, self.robots_cache_ttl_s))
        schedule = RetrySchedule.parse(self.network_retry_schedule)
        _set(self, "network_retry_schedule", schedule)
        _set(self, "retry", Retry(self.max_retries, schedule, self.network_retry_base_s, self.backoff_max_s))

    def _build_hosts(self) -> None:
        """:attr:`hosts` from the four ``host_*`` knobs (which are kept as given, host names in lower case)."""
        intervals = {k.lower(): float(v) for k, v in (self.host_intervals or {}).items()}
        concurrency = {k.lower(): int(v) for k, v in (self.host_concurrency or {}).items()}
        if any(v < 1 for v in concurrency.values()):
            raise ConfigurationError(f"host_concurrency caps must be >= 1, not {self.host_concurrency!r}")
        windows = {host.lower(): tuple(Window.parse(w) for w in ([given] if isinstance(given, (str, Window)) else given))
                   for host, given in (self.host_windows or {}).items() if given}  # "500/min", or a list of them
        pools = parse_pools(self.host_pools)
        hosts = dict(DEFAULT_HOST_RULES)
        for host in sorted({*intervals, *concurrency, *windows, *pools}):
            rule = hosts.get(host, _NO_RULE)
            hosts[host] = HostRule(interval_s=intervals.get(host, rule.interval_s), in_flight=concurrency.get(host),
                                   windows=windows.get(host, ()), pools=pools.get(host, ()))
        _set(self, "hosts", hosts)
        _set(self, "pools", pools)
        _set(self, "host_intervals", intervals)
        _set(self, "host_concurrency", concurrency)
        _set(self, "host_windows", windows)
        _set(self, "host_pools", {host: {pool.name: pool.rule for pool in rules} for host, rules in pools.items()})

    def rule(self, key: str) -> HostRule:
        """The rule *key* is kept to: its own; a pool (``host#pool``) takes its host's interval and cap where
        it declares none (its windows are its own)."""
        own = self.hosts.get(key, _NO_RULE)
        if POOL_MARK not in key or (own.interval_s is not None and own.in_flight is not None):
            return own
        parent = self.hosts.get(pool_host(key), _NO_RULE)
        return replace(own, interval_s=parent.interval_s if own.interval_s is None else own.interval_s,
                       in_flight=parent.in_flight if own.in_flight is None else own.in_flight)

    def user_agent_for(self, host: str) -> str:
        """The User-Agent for *host* (a host key, or a pool's): with the contact e-mail only where it was asked for."""
        if self.contact_email and (self.contact_everywhere or host in self.contact_hosts
                                   or pool_host(host) in self.contact_hosts):
            return self.contact_user_agent
        return self.user_agent

    def replace(self, **changes: Any) -> "TransportConfig":
        """A new value with *changes* applied, validated and built again."""
        return replace(self, **changes)

    @classmethod
    def from_arguments(cls, args: tuple[Any, ...], knobs: dict[str, Any]) -> "TransportConfig":
        """The config of ``HttpClient(*args, **knobs)``: positions as :data:`POSITIONAL_KNOBS`, names as the fields."""
        if len(args) > len(POSITIONAL_KNOBS):
            raise TypeError(f"HttpClient takes at most {len(POSITIONAL_KNOBS)} settings by position ({len(args)} given)")
        for name, value in zip(POSITIONAL_KNOBS, args):
            if name in knobs:
                raise TypeError(f"HttpClient got multiple values for argument {name!r}")
            knobs[name] = value
        unknown = sorted(set(knobs) - KNOBS)
        if unknown:
            raise TypeError(f"HttpClient got an unexpected keyword argument {unknown[0]!r}")
        return cls(**knobs)


#: The names of the knobs (the init fields of :class:`TransportConfig`).
KNOBS = frozenset(f.name for f in fields(TransportConfig) if f.init)
#: The knobs a client takes by position, in order: PyPaperRetriever's ``HttpClient(user_agent, …, polite_mode)``.
POSITIONAL_KNOBS: tuple[str, ...] = tuple(f.name for f in fields(TransportConfig) if f.init)[:17]


def knob_signature(init: Any) -> inspect.Signature:
    """*init*'s signature with ``*args, **knobs`` spelled out as the knobs, for ``help()`` and tooltips."""
    own = inspect.signature(init)
    self_param = next(iter(own.parameters.values()))
    collaborators = [p for p in own.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    knob_params = [inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD if f.name in POSITIONAL_KNOBS
                                     else inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=f.type)
                   for f in fields(TransportConfig) if f.init]
    return own.replace(parameters=[self_param, *knob_params, *collaborators])


class ConfiguredKnobs:
    """Every knob of a :class:`TransportConfig` as an attribute; the mixing class supplies ``config`` and ``reconfigure``."""

    @property
    def config(self) -> TransportConfig:
        raise NotImplementedError  # pragma: no cover

    def reconfigure(self, config: TransportConfig) -> None:
        raise NotImplementedError  # pragma: no cover

    if TYPE_CHECKING:  # the knobs are attributes made from the fields below
        def __getattr__(self, name: str) -> Any: ...

        def __setattr__(self, name: str, value: Any) -> None: ...


def _knob(name: str) -> property:
    """Knob *name* as an attribute read from its owner's ``config``; setting it hands a new, validated config to
    ``reconfigure``."""
    def put(obj: ConfiguredKnobs, value: Any) -> None:
        obj.reconfigure(obj.config.replace(**{name: value}))

    return property(lambda obj: getattr(obj.config, name), put)


for _name in sorted(KNOBS):
    setattr(ConfiguredKnobs, _name, _knob(_name))
