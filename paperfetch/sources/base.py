"""What every metadata source is: a host, an endpoint, a parser (docs/sources.md). It never sends: the
transport does, and paces; ``min_interval_s`` only states a host's published limit.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar
from urllib.parse import quote, urlsplit

import requests

from paperfetch import defaults
from paperfetch.config import Identification, endpoint_env_var
from paperfetch.errors import ConfigurationError, MalformedResponse, NotFoundError
from paperfetch.http.outcome import Outcome, default_classify
from paperfetch.sources.schema import TEXT

if TYPE_CHECKING:  # ids.py is written alongside; only its names are needed here
    from paperfetch.ids import Identifier, IdType

__all__ = ["Candidate", "Fetcher", "Metadata", "Record", "RequestSpec", "Source", "Standing", "Update", "batched", "dedupe",
           "license_key", "quote_path"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_CC_URL = re.compile(r"(?:https?://)?(?:www\.)?creativecommons\.org/(licenses|publicdomain)/([a-z-]+)", re.IGNORECASE)
_CC_CODE = re.compile(r"cc[\s_-]*(?:0|by(?:[\s_-]*(?:nc|nd|sa))*)", re.IGNORECASE)


def license_key(value: str | None) -> str | None:
    """One form for a licence whichever source names it: a Creative Commons licence as the lower-case hyphenated
    ``cc-by``, ``cc-by-nc-nd``, ``cc0`` (Europe PMC's ``cc by-nc``, bioRxiv's ``cc_by``, a creativecommons.org URL);
    any other licence as the source wrote it.

    >>> [license_key(x) for x in ("cc by-nc-nd", "CC_BY", "https://creativecommons.org/licenses/by/4.0/", "other-oa")]
    ['cc-by-nc-nd', 'cc-by', 'cc-by', 'other-oa']
    """
    text = (value or "").strip()
    if match := _CC_URL.match(text):
        kind, code = match.group(1).lower(), match.group(2).lower()
        return "cc0" if code == "zero" else "public-domain" if kind == "publicdomain" else f"cc-{code}"
    if _CC_CODE.fullmatch(text):
        parts = re.findall(r"0|by|nc|nd|sa", text[2:].lower())
        return "cc0" if parts == ["0"] else "-".join(["cc", *parts])
    return text or None


@dataclass(frozen=True)
class Candidate:
    """One URL a service proposes for the full text."""

    url: str
    source: str  #: name of the service that proposed it
    kind: str = "pdf"  #: "pdf" (a direct PDF link) or "landing" (an HTML page to scan for citation_pdf_url)
    version: str | None = None  #: publishedVersion / acceptedVersion / submittedVersion
    license: str | None = None  #: :func:`license_key`'s form
    host_type: str | None = None  #: "publisher" / "repository"

    def __post_init__(self) -> None:
        object.__setattr__(self, "license", license_key(self.license))


@dataclass(frozen=True)
class Update:
    """A notice about a work: a retraction, correction, expression of concern, removal or withdrawal."""

    kind: str  #: ``retraction``, ``correction``, ``expression_of_concern``, ``removal``, ``withdrawal`` …
    notice: str | None = None  #: the notice's DOI (lower case), or ``PMID:…`` where only PubMed names it
    date: str | None = None  #: ``YYYY-MM-DD`` (or shorter, as the service gives it)
    source: str | None = None  #: who says so: ``retraction-watch``, ``publisher``, ``pubmed``, ``europepmc``


@dataclass(frozen=True, kw_only=True)
class Metadata:
    """The metadata of a work a service may give (a :class:`Record`'s) and a paper gathers (its outcome row's)."""

    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    arxiv_id: str | None = None
    title: str | None = None
    year: int | None = None
    journal: str | None = None
    oa_status: str | None = None
    license: str | None = None  #: :func:`license_key`'s form, whichever source named it
    #: the PMC Cloud Service's article version (an int) and whether it is an author manuscript
    pmc_version: int | None = None
    is_manuscript: bool | None = None
    #: the authors in order, typed (:mod:`paperfetch.names`: ``{"family", "given"}`` or ``{"literal"}``)
    authors: list[dict[str, str]] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "license", license_key(self.license))


@dataclass(frozen=True, kw_only=True)
class Standing:
    """A work's standing as the services say it (a :class:`Record`'s, and the paper's that gathers them)."""

    #: the work is retracted (OpenAlex ``is_retracted``, a retraction among the updates); None: not said
    retracted: bool | None = None
    #: the notices about the work (Crossref ``updated-by``, PubMed/Europe PMC comment-correction links)
    updates: tuple[Update, ...] = ()
    #: the work is itself a notice (Crossref ``update-to``, "Retraction of Publication"); None: not said
    is_notice: bool | None = None
    #: the works a notice is about (the DOIs of its Crossref ``update-to``)
    notice_of: tuple[str, ...] = ()
    #: the preprint's DOI of a journal version (Crossref ``has-preprint``)
    preprint: str | None = None


@dataclass(frozen=True, kw_only=True)
class Record(Metadata, Standing):
    """What one service learned about one work."""

    is_oa: bool | None = None
    candidates: list[Candidate] = field(default_factory=list)
    #: earliest date a location became open (Unpaywall's 2025 ``oa_date``), ``YYYY-MM-DD``
    oa_date: str | None = None
    #: the version's JATS XML (bioRxiv/medRxiv ``jatsxml``), for a full-text reader
    jats_url: str | None = None
    #: the journal version's DOI of a preprint (bioRxiv/medRxiv ``published``, Crossref ``is-preprint-of``,
    #: arXiv ``arxiv:doi``): the outcome's ``preprint_of``
    published_doi: str | None = None


@dataclass(frozen=True)
class RequestSpec:
    """One request a source wants sent, before identification is applied."""

    path: str  #: service path joined onto the base URL, already percent-quoted
    params: dict[str, str]  #: query parameters WITHOUT identification
    ids: tuple[Identifier, ...]  #: the identifiers this request covers
    #: a POST's body (an idempotent read, e.g. Semantic Scholar's batch); None: a GET
    body: str | None = None


class Fetcher(Protocol):
    """The transport as a source sees it (``paperfetch.HttpClient`` has this shape)."""

    def fetch(
        self,
        url: str,
        *,
        classify: Any,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> requests.Response: ...


class Source:
    """Base class: subclasses declare their service and implement :meth:`parse`."""

    name: ClassVar[str]
    default_base_url: ClassVar[str]  #: scheme://host only
    min_interval_s: ClassVar[float]  #: the host's published limit, as the default pause between requests
    #: windows the host publishes beside its interval (``"500/min"``), kept by the transport for every client
    rate_windows: ClassVar[tuple[str, ...]] = ()
    batch_size: ClassVar[int] = 1  #: how many ids one request may carry
    accepts: ClassVar[frozenset[IdType]]
    requires_email: ClassVar[bool] = False
    #: the service asks for a contact e-mail: it gets the one in the User-Agent (everyone else gets the project URL)
    wants_contact: ClassVar[bool] = False
    #: seconds the metadata cache keeps this service's answers (None: the cache's own time to live)
    cache_ttl_s: ClassVar[float | None] = None
    #: who is asking, as query parameters (and headers): name -> the :class:`Identification` field sent, when set
    identity: ClassVar[Mapping[str, str]] = {}
    identity_header: ClassVar[Mapping[str, str]] = {}
    #: ``(Identification field, interval)``: the shorter interval the host grants a caller who gives that field
    faster_with: ClassVar[tuple[str, float] | None] = None

    def __init__(self, *, base_url: str | None = None, identification: Identification = Identification()) -> None:
        if self.requires_email and not identification.email:
            raise ConfigurationError(
                f"{self.name} requires a contact e-mail address: pass "
                f"identification=Identification(email='your.name@your-university.edu')"
            )
        self.identification = identification
        override = base_url or None  # PAPERFETCH_<NAME>_URL reaches here through the settings (paperfetch.settings)
        self.base_url_overridden = override is not None
        self.base_url = _origin(override, self.env_var) if override is not None else self.default_base_url

    @property
    def env_var(self) -> str:
        """Environment variable that overrides the base URL (scheme, host and port only)."""
        return endpoint_env_var(self.name)

    @classmethod
    def interval_for(cls, identification: Identification) -> float:
        """Seconds between requests for this identification (:attr:`faster_with`)."""
        faster = cls.faster_with
        return faster[1] if faster is not None and getattr(identification, faster[0]) else cls.min_interval_s

    @property
    def interval_s(self) -> float:
        return self.interval_for(self.identification)

    def identity_params(self) -> dict[str, str]:
        """Query parameters that say who is asking (:attr:`identity`)."""
        return _given(self.identification, self.identity)

    def send_options(self, spec: RequestSpec) -> dict[str, Any]:
        """What :meth:`lookup` passes to the transport beside URL and query: a POST's body, identity headers."""
        options: dict[str, Any] = {}
        headers = _given(self.identification, self.identity_header)
        if spec.body is not None:
            options.update(method="POST", data=spec.body)
            headers = {"Content-Type": "application/json", **headers}
        if headers:
            options["headers"] = headers
        return options

    def related_hosts(self) -> tuple[str, ...]:
        """Other hosts of this service that serve its files (paced like the service); usually none."""
        return ()

    def candidates_for(self, identifier: Identifier) -> list[Candidate]:
        """Candidates straight from an identifier, with no request (a ``from_identifier`` source such as arXiv)."""
        return []

    def requests_for(self, ids: Sequence[Identifier]) -> list[RequestSpec]:
        """One spec per id (``batch_size == 1``); batching sources override. Ids it cannot take are skipped."""
        return [self.spec_for(batch) for batch in batched(self.accepted(ids), self.batch_size)]

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        raise NotImplementedError

    def parse(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        """Records keyed by ``Identifier.key`` of the ids in *spec*; unknown ids are simply absent."""
        raise NotImplementedError

    def next_request(self, body: bytes, spec: RequestSpec) -> RequestSpec | None:
        """The request that continues a lookup of several requests after *spec*'s answer *body* (then that answer
        gives no records); None: *body* ends the lookup and :meth:`read` gives its records."""
        return None

    def fetch_options(self, http: Any) -> dict[str, Any]:
        """What a lookup passes to *http* for the metadata cache: this service's time to live, when *http* caches."""
        if self.cache_ttl_s is None or not callable(getattr(http, "cached", None)):
            return {}
        return {"ttl_s": self.cache_ttl_s}

    def read(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        """:meth:`parse`, with any failure to read the answer raised as :class:`MalformedResponse` naming the service."""
        try:
            return self.parse(body, spec)
        except MalformedResponse:
            raise
        except RecursionError:
            raise MalformedResponse(f"{self.name}: the answer is nested too deeply to read") from None
        except Exception as exc:  # noqa: BLE001 - a parser bug or an answer of a shape nobody foresaw
            raise MalformedResponse(
                f"{self.name}: the answer could not be read ({type(exc).__name__}: {str(exc)[:200]})"
            ) from None

    def classify(self, response: requests.Response) -> Outcome:
        """Per-service reading of a response; most services use status codes honestly."""
        return default_classify(response)

    def url_for(self, spec: RequestSpec) -> tuple[str, dict[str, str]]:
        """Full URL (base + service path) and query parameters including identification."""
        return self.base_url + spec.path, {**spec.params, **self.identity_params()}

    def lookup(self, http: Fetcher, ids: Sequence[Identifier]) -> dict[str, Record]:
        """Send every request through *http* and merge the parsed records; ABSENT means no record."""
        return {key: record for spec in self.requests_for(ids) for key, record in self.lookup_spec(http, spec).items()}

    def send(self, http: Fetcher, spec: RequestSpec) -> requests.Response:
        """Send one request of a lookup through *http*."""
        url, params = self.url_for(spec)
        return http.fetch(url, classify=self.classify, params=params, **self.send_options(spec), **self.fetch_options(http))

    def lookup_spec(self, http: Fetcher, spec: RequestSpec) -> dict[str, Record]:
        """One request of :meth:`lookup`: its records, or none when the service has no record."""
        while True:
            try:
                response = self.send(http, spec)
            except NotFoundError:
                logger.debug("%s: no record for %s", self.name, [i.key for i in spec.ids])
                return {}
            follow = self.next_request(response.content, spec)
            if follow is None:
                return self.read(response.content, spec)
            spec = follow

    def accepted(self, ids: Iterable[Identifier]) -> list[Identifier]:
        """The ids this source can look up, in order, without duplicates."""
        kept: dict[str, Identifier] = {}
        for ident in ids:
            if ident.type in self.accepts:
                kept.setdefault(ident.key, ident)
        return list(kept.values())

    def candidate(self, url: Any, **kwargs: Any) -> Candidate | None:
        """A candidate from this source, or None when *url* is not an http(s) URL."""
        # long junk is dropped; a long http(s) URL is kept, and the item (paperfetch.urlcheck) says why it was refused
        if not isinstance(url, str) or (len(url) > defaults.MAX_CANDIDATE_URL_CHARS
                                        and not url.lstrip()[:8].lower().startswith(("http://", "https://"))):
            return None
        url = url.strip()
        try:
            url.encode("utf-8")
            parts = urlsplit(url)
            usable = parts.scheme in ("http", "https") and bool(parts.hostname)
        except ValueError:  # lone surrogates, "http://[::1" …
            return None
        if not usable:
            return None
        # version / license / host_type come from the answer too: a wrong-shaped one is absent.
        meta: dict[str, Any] = {name: value if name == "kind" else TEXT(value) for name, value in kwargs.items()}
        return Candidate(url=url, source=self.name, **meta)

    def service_url(self, real_base: str) -> str:
        """A second host of the same service (europepmc.org beside www.ebi.ac.uk); it follows the base-URL override."""
        return self.base_url if self.base_url_overridden else real_base

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, identification={self.identification!r})"


def _given(identification: Identification, names: Mapping[str, str]) -> dict[str, str]:
    given = {name: getattr(identification, field) for name, field in names.items()}
    return {name: value for name, value in given.items() if value}


def _origin(url: str, env_var: str) -> str:
    """``scheme://host[:port]`` of an override; anything else there would be silently lost, so refuse it."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(f"base URL override {url!r} must be http(s)://host[:port] (also settable via {env_var})")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ConfigurationError(
            f"base URL override {url!r} may only give scheme, host and port; the service's own paths are kept"
        )
    return f"{parts.scheme}://{parts.netloc}"


def batched(items: Sequence[T], size: int) -> Iterator[tuple[T, ...]]:
    for start in range(0, len(items), size):
        yield tuple(items[start : start + size])


def dedupe(candidates: Iterable[Candidate | None]) -> list[Candidate]:
    """Drop Nones and repeated URLs, keeping the first (best-ranked) occurrence."""
    kept: dict[str, Candidate] = {}
    for cand in candidates:
        if cand is not None:
            kept.setdefault(cand.url, cand)
    return list(kept.values())


def quote_path(value: str) -> str:
    """Identifier text percent-quoted as ONE path segment (``10.1000/../x`` → ``10.1000%2F..%2Fx``), so it cannot
    leave the service's path. ValueError for unencodable text (a lone surrogate), ``""``, ``.`` and ``..``."""
    segment = quote(value.encode("utf-8"), safe=":@!$&'()*+,;=-._~")
    if segment in ("", ".", ".."):
        # requests decodes %2E back to "." before sending: a dot segment cannot be quoted, only refused.
        raise ValueError(f"{value!r} cannot be a path segment")
    return segment
