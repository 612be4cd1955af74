"""The redirect rules, the same for the polite and the unpaced path and robots.txt: every hop is followed by the
transport itself, so each is paced by its own host (docs/politeness.md, "Redirects"). Neither sends nor waits.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from paperfetch.errors import RefusedRedirect, TooManyRedirects
from paperfetch.http.addresses import redirect_refusal
from paperfetch.redact import redact_url

__all__ = ["REDIRECT_STATUSES", "location", "next_hop"]

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


def location(response: requests.Response) -> str | None:
    """Where *response* redirects to (``None``: it is not a redirect to follow)."""
    target = response.headers.get("Location")
    if response.status_code not in REDIRECT_STATUSES or not target:
        return None
    return target


def next_hop(url: str, current: str, target_location: str, response: requests.Response, hop: int, seen: set[str],
             headers: dict[str, str], method: str, data: Any, *, max_redirects: int,
             allow_private: bool) -> tuple[str, str, Any]:
    """One redirect hop of the request for *url*: the next URL, method and body. Raises
    :class:`~paperfetch.TooManyRedirects` or :class:`~paperfetch.RefusedRedirect` (the response closed)."""
    target = urljoin(response.url or current, target_location)
    seen.add(current)
    shown = redact_url(url)
    if hop >= max_redirects or target in seen:
        response.close()
        why = "a redirect loop" if target in seen else f"more than {max_redirects} redirects"
        raise TooManyRedirects(
            f"{shown} led to {why} (last hop {redact_url(current)} -> {redact_url(target)})",
            status_code=response.status_code,
            url=shown,
            response=response,
        )
    refused = redirect_refusal(current, target, allow_private)
    if refused is not None:
        response.close()
        raise RefusedRedirect(f"{redact_url(current)} -> {redact_url(target)}: {refused}",
                              status_code=response.status_code, url=shown)
    if urlsplit(target).hostname != urlsplit(current).hostname:
        headers.pop("Authorization", None)
    if response.status_code in (301, 302, 303):
        method, data = "GET", None
    return target, method, data
