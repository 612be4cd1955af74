"""Pools per request kind: one host whose requests are limited by kind (Crossref's single-record lookups and its
list queries) is paced as several, one per pool. The pool is chosen here from the request itself (its path and
query), so every caller of the transport gets it (docs/politeness.md, "Windows and pools").

A pool is kept under the key ``host#pool`` wherever a host's key goes: its own facts in the host-state store
(holds, backoff, breaker, learned interval), its own start slot and windows, and its own ``host_intervals``,
``host_concurrency`` and ``host_windows`` entries (a pool without its own entry takes its host's). A 429 in
one pool therefore holds that pool only: Crossref's pools are separate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence
from urllib.parse import urlencode, urlsplit

from paperfetch.errors import ConfigurationError
from paperfetch.http.hosts import host_key

__all__ = ["CROSSREF_LIST", "POOL_MARK", "Pool", "parse_pools", "pool_host", "pool_label", "pool_name", "request_key"]

#: Between a host and its pool in a key: ``api.crossref.org#public-array``.
POOL_MARK = "#"

#: A Crossref list request: a collection route (``/works``, ``/journals``, ``/members/{id}/works`` …) or any
#: request with a filter, a query, a cursor, rows, a sample, facets or an offset.
CROSSREF_LIST = (r"^/(works|members|journals|funders|prefixes|types|licenses)/?(\?|$)"
                 r"|^/(members|journals|funders|prefixes|types)/[^?]+/works/?(\?|$)"
                 r"|[?&](filter|query(\.[a-z.-]+)?|cursor|rows|sample|facet|offset)=")


@dataclass(frozen=True)
class Pool:
    """Requests to a host whose path and query (``/works?filter=…``) *pattern* finds are paced in the pool *name*;
    people read it as its *label* (``list queries``), or its name where it declares none."""

    name: str
    pattern: re.Pattern[str]
    label: str = ""

    @property
    def rule(self) -> str | tuple[str, str]:
        """The pool as ``host_pools`` spells it: its regex, or ``(regex, label)``."""
        return (self.pattern.pattern, self.label) if self.label else self.pattern.pattern


def parse_pools(value: Mapping[str, Mapping[str, str | Sequence[str]]] | None) -> dict[str, tuple[Pool, ...]]:
    """``{host: {pool: regex or (regex, label), …}}`` as the transport keeps it: the rules of each host in order
    (the first whose regex finds the request's path and query wins; none: the host's own key); each pool keeps
    its label (:func:`pool_label` reads it from the mapping returned here, nothing is kept beside it)."""
    pools: dict[str, tuple[Pool, ...]] = {}
    for host, rules in (value or {}).items():
        if not isinstance(rules, Mapping):
            raise ConfigurationError(f"host_pools[{host!r}] must map pool names to regular expressions, not {rules!r}")
        parsed = []
        for name, rule in rules.items():
            pattern, label = (rule, "") if isinstance(rule, str) else tuple(rule) if _is_pair(rule) else (None, "")
            if not name or POOL_MARK in name or not isinstance(pattern, str) or not isinstance(label, str):
                raise ConfigurationError(f"host_pools[{host!r}]: a pool is a name without {POOL_MARK!r} and a regular "
                                         f"expression (or an expression and a label), not {name!r}: {rule!r}")
            try:
                parsed.append(Pool(str(name), re.compile(pattern), label))
            except re.error as exc:
                raise ConfigurationError(f"host_pools[{host!r}][{name!r}] is not a regular expression: {exc}") from None
        pools[host.lower()] = tuple(parsed)
    return pools


def _is_pair(rule: object) -> bool:
    return isinstance(rule, Sequence) and not isinstance(rule, str) and len(rule) == 2


def pool_label(key: str, pools: Mapping[str, tuple[Pool, ...]]) -> str:
    """The pool of *key* (``api.crossref.org#polite-array``) as people read it: the label its declaration in
    *pools* (as :func:`parse_pools` returns them) gave (``list queries``), else its name; ``""`` for a host's own
    key. The label comes from the declaration in hand only, so two clients that label one pool differently each
    show their own."""
    name = pool_name(key)
    for pool in pools.get(pool_host(key).lower(), ()) if name else ():
        if pool.name == name and pool.label:
            return pool.label
    return name


def request_key(url: str, params: Any, pools: Mapping[str, tuple[Pool, ...]]) -> str:
    """The key *url*'s request (with *params*, as requests would add them) is paced under: its host's, or
    ``host#pool`` when the host has pools and one of them takes the request."""
    host = host_key(url)
    rules = pools.get(host) if pools else None
    if not rules:
        return host
    parts = urlsplit(url)
    target = parts.path or "/"
    query = parts.query
    if params:
        extra = params if isinstance(params, (str, bytes)) else urlencode(params, doseq=True)
        extra = extra.decode() if isinstance(extra, bytes) else extra
        query = f"{query}&{extra}" if query else extra
    if query:
        target = f"{target}?{query}"
    for pool in rules:
        if pool.pattern.search(target):
            return f"{host}{POOL_MARK}{pool.name}"
    return host


def pool_host(key: str) -> str:
    """The host of a key (``api.crossref.org#public-array`` → ``api.crossref.org``)."""
    return key.partition(POOL_MARK)[0]


def pool_name(key: str) -> str:
    """The pool of a key (``""`` for a host's own key)."""
    return key.partition(POOL_MARK)[2]
