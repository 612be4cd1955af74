"""Whether a candidate URL can be requested at all, and if not why: a ``refused_url`` row (docs/outcomes.md)."""

from __future__ import annotations

import requests

from paperfetch import defaults
from paperfetch.errors import InvalidURL
from paperfetch.http.hosts import host_key

__all__ = ["shown_url", "url_refusal"]

#: How much of a refused URL a row or a log line shows.
SHOWN_URL_CHARS = 200


def shown_url(url: str) -> str:
    """*url* as a row shows it: at most :data:`SHOWN_URL_CHARS` characters, encodable, with its length when cut."""
    text = url.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) <= SHOWN_URL_CHARS:
        return text
    return f"{text[:SHOWN_URL_CHARS]}… ({len(url):,} characters)"


def url_refusal(url: object) -> str | None:
    """Why *url* cannot be requested (one sentence), or None when the client may send it."""
    if not isinstance(url, str):
        return f"the candidate URL is not text ({type(url).__name__})"
    if len(url) > defaults.MAX_CANDIDATE_URL_CHARS:
        return (f"the candidate URL is {len(url):,} characters long; paperfetch requests at most "
                f"{defaults.MAX_CANDIDATE_URL_CHARS:,} (servers refuse longer ones)")
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        return "the candidate URL holds a lone surrogate and cannot be sent as text"
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme not in ("http", "https"):
        return "the candidate URL is not an http(s) URL"
    try:
        host_key(url)
        requests.models.PreparedRequest().prepare_url(url, None)
    except (InvalidURL, requests.RequestException, ValueError) as exc:
        return f"the candidate URL cannot be requested: {shown_url(str(exc))}"
    return None
