"""robots.txt rules for one host, parsed by Protego: RFC 9309's status rules, how much is read, the Crawl-delay cap
(docs/politeness.md, "The behaviours, their defaults and why"). Fetching and caching are the client's job.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum

from protego import Protego

from paperfetch import defaults
from paperfetch.errors import parse_choice

__all__ = ["RobotsRules", "RobotsStatus", "UnreachablePolicy"]

logger = logging.getLogger(__name__)


#: media types a robots.txt is never served as (a text/plain file, or one with no type, is read)
_NOT_TEXT_TYPES = ("json", "html", "xml", "image/", "audio/", "video/", "font/", "application/pdf", "zip")


def _not_text(body: bytes, content_type: str) -> str:
    """What *body* is instead of a robots.txt (its media type, or what its bytes look like); "" for text."""
    media = content_type.split(";")[0].strip().lower()
    if any(kind in media for kind in _NOT_TEXT_TYPES):
        return media
    head = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] in (b"{", b"["):
        return "a JSON body"
    if head[:1] == b"<":
        return "an HTML or XML body"
    if b"\x00" in body[:4096] or head.startswith(b"%PDF"):
        return "a binary body"
    return ""


class RobotsStatus(str, Enum):
    PARSED = "parsed"            #: a robots.txt was fetched and parsed
    UNAVAILABLE = "unavailable"  #: 4xx: no robots.txt, everything allowed
    UNREACHABLE = "unreachable"  #: 5xx or network failure: see UnreachablePolicy


class UnreachablePolicy(str, Enum):
    ALLOW = "allow"        #: treat the host as fully permissive (PyPaperRetriever)
    DISALLOW = "disallow"  #: RFC 9309 §2.3.1.4: assume complete disallow, for now

    @classmethod
    def parse(cls, value: "UnreachablePolicy | str") -> "UnreachablePolicy":
        return parse_choice(cls, value, "robots_unreachable")


@dataclass(frozen=True)
class RobotsRules:
    """What one host's robots.txt says, as of ``fetched_at`` (monotonic seconds)."""

    status: RobotsStatus
    fetched_at: float
    expires_at: float
    parser: Protego | None = None
    unreachable_policy: UnreachablePolicy = UnreachablePolicy.ALLOW
    truncated: bool = False
    detail: str = ""
    #: the body as parsed (what a host-state store keeps, to parse again in another process)
    text: str = ""

    @classmethod
    def parse(
        cls, body: bytes, *, fetched_at: float, expires_at: float, truncated: bool = False, content_type: str = ""
    ) -> "RobotsRules":
        """The rules of a 2xx *body*; a body that is not text (JSON, HTML, XML, binary: by *content_type* or by
        its first bytes: an API's or a web page's answer to ``/robots.txt``) is no robots.txt: everything allowed,
        no Crawl-delay."""
        other = _not_text(body, content_type)
        if other:
            return cls(RobotsStatus.UNAVAILABLE, fetched_at, expires_at, detail=f"not a robots.txt: {other}")
        text = body[:defaults.MAX_ROBOTS_BYTES].decode("utf-8", errors="replace")
        try:
            parser = Protego.parse(text)
        except Exception as exc:  # noqa: BLE001 - a file we cannot parse allows everything, as a 4xx would
            logger.warning("robots.txt could not be parsed (%s); treating the host as permissive", exc)
            return cls(RobotsStatus.UNAVAILABLE, fetched_at, expires_at, detail=f"unparseable: {exc}")
        return cls(RobotsStatus.PARSED, fetched_at, expires_at, parser=parser, truncated=truncated, text=text)

    def can_fetch(self, url: str, user_agent: str) -> bool:
        if self.status is RobotsStatus.UNREACHABLE:
            return self.unreachable_policy is UnreachablePolicy.ALLOW
        if self.parser is None:
            return True
        return bool(self.parser.can_fetch(url, user_agent))

    def crawl_delay(self, user_agent: str, cap: float) -> float | None:
        """The larger of Crawl-delay and Request-rate's interval for *user_agent*, capped at *cap*; ``None``: none."""
        if self.parser is None:
            return None
        delays: list[float] = []
        delay = self.parser.crawl_delay(user_agent)
        if delay is not None:
            delays.append(float(delay))
        rate = self.parser.request_rate(user_agent)
        if rate is not None and rate.requests:
            delays.append(float(rate.seconds) / float(rate.requests))
        return min(max(delays), cap) if delays else None
