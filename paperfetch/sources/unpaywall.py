"""Unpaywall v2: one DOI per request (docs/sources.md). A 422 about the e-mail is a ConfigurationError raised
once; the source then asks nothing more, and no DOI is reported "not found" for it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

import requests

from paperfetch.config import Identification
from paperfetch.errors import ConfigurationError
from paperfetch.http.outcome import Outcome, default_classify
from paperfetch.ids import Identifier, IdType
from paperfetch.sources.base import Record, RequestSpec, Source, dedupe, quote_path
from paperfetch.sources.schema import FLAG, OBJECT, OBJECTS, TEXT, URL, YEAR, at, load_json, top_object

__all__ = ["UNPAYWALL_EMAIL_HELP", "UnpaywallSource", "check_email", "oa_date", "placeholder_email"]

logger = logging.getLogger(__name__)

#: What Unpaywall wants, said wherever an address is refused.
UNPAYWALL_EMAIL_HELP = (
    "Unpaywall requires a real contact e-mail address you read: a name, '@' and a domain with a dot, not "
    "'YOUR_EMAIL' or one at example.com (see https://unpaywall.org/products/api; paperfetch also refuses 'REDACTED' "
    "and example.org or example.net): give yours with Retriever(email=...), --email or PAPERFETCH_EMAIL"
)
#: local@domain with a dot in the domain, no spaces: the least an address a person reads has.
_ADDRESS_RE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")


def placeholder_email(email: str | None) -> bool:
    """True for an address refused as a placeholder: Unpaywall's own rule (ending in ``example.com`` or holding
    ``YOUR_EMAIL``), extended to ``example.org``/``example.net``, ``REDACTED`` (what masking prints) and text
    that is not shaped ``local@domain.tld`` at all. No address (``None``, ``""``) is not a placeholder."""
    if not email:
        return False
    text = email.strip()
    return (not _ADDRESS_RE.fullmatch(text) or text.lower().endswith(("example.com", "example.org", "example.net"))
            or any(word in text.upper() for word in ("YOUR_EMAIL", "REDACTED")))


def check_email(email: str | None, *, origin: str | None = None, argument: str = "Retriever(email=...)") -> None:
    """Refuse a placeholder address before any request, with what Unpaywall wants and where the address
    came from (*origin*, a :attr:`Settings.origin <paperfetch.settings.Settings.origin>` value; *argument*
    names an ``"argument"`` one). The address itself is never said."""
    if placeholder_email(email):
        where = ""
        if origin and origin != "default":
            kind, _, rest = origin.partition(" ")
            where = " from " + {"env": rest, "file": f"the config file {rest}"}.get(kind, argument)
        raise ConfigurationError(f"the contact e-mail{where} is a placeholder or not an address. {UNPAYWALL_EMAIL_HELP}")


class UnpaywallSource(Source):
    name = "unpaywall"
    default_base_url = "https://api.unpaywall.org"
    # a daily quota (100,000 calls/day), no per-second limit: 10/s keeps bursts modest
    min_interval_s = 0.1
    wants_contact = True  #: asks for a contact e-mail in the User-Agent (the transport sends it here only)
    accepts = frozenset({IdType.DOI})
    requires_email = True
    identity = {"email": "email"}

    def __init__(self, *, base_url: str | None = None, identification: Identification = Identification()) -> None:
        check_email(identification.email)  # before the base class's own check, so the message says what Unpaywall wants
        super().__init__(base_url=base_url, identification=identification)
        #: Unpaywall's refusal of the e-mail, once seen: nothing more is asked (every DOI would get it).
        self.refusal: str | None = None

    def requests_for(self, ids: Sequence[Identifier]) -> list[RequestSpec]:
        return [] if self.refusal else super().requests_for(ids)

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        return RequestSpec(path=f"/v2/{quote_path(ids[0].value)}", params={}, ids=ids)

    def classify(self, response: requests.Response) -> Outcome:
        if response.status_code == 422:
            if _about_email(response.content):
                # The request is refused for who asks, not for the DOI: every DOI would get it.
                message = f"Unpaywall refused the contact e-mail address (HTTP 422). {UNPAYWALL_EMAIL_HELP}"
                if self.refusal is None:
                    self.refusal = message
                    logger.warning("%s; Unpaywall is not asked again in this run", message)
                raise ConfigurationError(message)
            return Outcome.ABSENT  # a string that is not a DOI Unpaywall can look up
        if response.status_code == 404:
            return Outcome.ABSENT  # since 2025 a plain HTML page, before that a JSON error: no record either way
        return default_classify(response)

    def parse(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        work = top_object(load_json(body, self.name), self.name)
        doi = at(work, "doi", kind=TEXT)
        if not doi:
            return {}
        best = at(work, "best_oa_location", kind=OBJECT) or None
        locations = [best] + [loc for loc in at(work, "oa_locations", kind=OBJECTS) if loc != best]
        candidates = []
        for loc in filter(None, locations):
            meta = {"version": loc.get("version"), "license": loc.get("license"), "host_type": loc.get("host_type")}
            pdf, url = at(loc, "url_for_pdf", kind=URL), at(loc, "url", kind=URL)
            candidates.append(self.candidate(pdf, kind="pdf", **meta))
            # `url` is url_for_pdf when there is one, else the landing page; dedupe drops the repeat.
            candidates.append(self.candidate(url, kind="pdf" if url == pdf else "landing", **meta))
            candidates.append(self.candidate(at(loc, "url_for_landing_page", kind=URL), kind="landing", **meta))
        record = Record(
            doi=doi.lower(),
            title=at(work, "title", kind=TEXT),
            year=at(work, "year", kind=YEAR),
            journal=at(work, "journal_name", kind=TEXT),
            oa_status=at(work, "oa_status", kind=TEXT),
            license=at(best, "license", kind=TEXT),
            is_oa=at(work, "is_oa", kind=FLAG),
            oa_date=oa_date(locations),
            candidates=dedupe(candidates),
        )
        return {spec.ids[0].key: record}


def oa_date(locations: list[dict[str, object] | None]) -> str | None:
    """The earliest ``oa_date`` (``YYYY-MM-DD``) among the locations (2025 schema), or None."""
    dates = sorted(d[:10] for d in (at(loc, "oa_date", kind=TEXT) for loc in locations if loc) if d and d[:4].isdigit())
    return dates[0] if dates else None


def _about_email(body: bytes) -> bool:
    """A 422 JSON error whose message is about the e-mail address (oadoi: "Email address required …")."""
    try:
        data = load_json(body, "unpaywall")
    except Exception:  # noqa: BLE001 - not JSON: not the e-mail error
        return False
    message = at(data, "message", kind=TEXT) or ""
    return "email" in message.lower() or "e-mail" in message.lower()
