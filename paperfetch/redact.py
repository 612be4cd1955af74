"""Keep secrets (contact e-mails, API keys) out of logs, events, errors and DataFrames.

Services want an e-mail address (Unpaywall, Crossref's polite pool, NCBI) or
an API key (OpenAlex, NCBI) in the query string. Every URL that leaves the
transport for a human or a file passes through :func:`redact_url` first.
This module only masks; it does not decide what to send.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["REDACTED", "SECRET_PARAMS", "redact_text", "redact_url"]

REDACTED = "REDACTED"

#: Query parameter names whose values are secrets, compared case-insensitively.
SECRET_PARAMS = frozenset(
    {"email", "mailto", "api_key", "apikey", "api-key", "key", "token", "access_token", "tool_email", "password"}
)

_EMAIL_RE = re.compile(r"[A-Za-z0-9._%+-]+(?:@|%40)[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


def redact_url(url: str) -> str:
    """Return *url* with secret query values and userinfo replaced by ``REDACTED``."""
    if "?" not in url and "@" not in url and "%40" not in url:
        return url  # nothing that could hold a secret (the common case: called for every event)
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() in SECRET_PARAMS for k, _ in pairs):
            query = urlencode([(k, REDACTED if k.lower() in SECRET_PARAMS else v) for k, v in pairs], safe=":/,|")
    return redact_text(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))


def redact_text(text: str) -> str:
    """Mask anything that looks like an e-mail address in free text."""
    return _EMAIL_RE.sub(REDACTED, text)
