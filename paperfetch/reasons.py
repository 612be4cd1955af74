"""The ``reason`` column: why a row ended as it did, in a few fixed words (docs/outcomes.md, "Schema")."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Sequence
from urllib.parse import urlsplit

from paperfetch.clock import utc_words

__all__ = ["absent_reason", "failure_reason", "invalid_reason"]


def _top_level_parts(text: str) -> list[str]:
    """*text* split at ``": "`` and ``"; "`` outside parentheses, so that no part ends inside one."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and char in ":;" and text[i + 1:i + 2] == " ":
            parts.append(text[start:i])
            start = i + 2
    return [*parts, text[start:]]


def _balanced(text: str) -> str:
    """*text* without a repr's tail: closing parentheses and quotes at its end that open nowhere."""
    text = text.strip()
    while text and ((text[-1] == ")" and text.count(")") > text.count("("))
                    or (text[-1] in "'\"" and text.count(text[-1]) % 2)):
        text = text[:-1].rstrip()
    return text


def _last_part(message: str) -> str:
    """The transport's own words at the end of ``"<url>: <url>: <reason>"``; of a urllib3 error, the words
    its ``(Caused by …)`` ends with, without the repr around them."""
    caused = message.rfind("(Caused by ")
    if caused >= 0:
        inner = message[caused + len("(Caused by "):]
        message = _balanced(re.sub(r"^\w+\(['\"]?", "", inner))
    parts = [p.strip() for p in _top_level_parts(message.replace("://", "\0"))]
    words = [p for p in parts if p and "\0" not in p]
    return _balanced((words[-1] if words else message).replace("\0", "://"))


def _one_line(text: str) -> str:
    """*text* on one line, whole: a reason names what it names (every source asked, the time) in the frames and
    files; a terminal wraps it (:func:`paperfetch.cli.common.hanging_table`) rather than cut it."""
    return " ".join(text.split())


def failure_reason(status: str, *, http_status: int | None = None, url: str | None = None, message: str = "",
                   until: datetime | None = None) -> str:
    """The reason of a row that failed on a candidate (or a lookup) with *status*."""
    return _one_line(_failure_words(status, http_status, url, message, until))


def _failure_words(status: str, http_status: int | None, url: str | None, message: str, until: datetime | None) -> str:
    when = f" until {utc_words(until, datetime.now(timezone.utc))}" if until is not None else ""  # 07:28 UTC
    if status == "host_suppressed":
        code = f"HTTP {http_status} → " if http_status else ""
        return f"{code}host suppressed{when}"
    if status == "host_held":
        return f"server asked to wait{when}" if when else "host held: " + _last_part(message)
    if status == "disallowed_by_robots":
        path = urlsplit(url or "").path or "/"
        return f"robots.txt disallows {path.rsplit('/', 1)[0] + '/' if path.count('/') > 1 else path}"
    if status == "http_error" and http_status and http_status >= 400:  # a 2xx answer failed on its body: say how
        return f"HTTP {http_status} from {urlsplit(url or '').hostname or 'the server'}"
    if status == "invalid_pdf":
        return "not a PDF: " + _last_part(message)
    if status == "network_error":
        return "network: " + _last_part(message)
    words = re.sub(r"^[a-z][a-z0-9+.-]*://\S+\s+", "", _last_part(message))  # "<url> announces …": the words
    return f"{status.replace('_', ' ')}: {words}" if message else status.replace("_", " ")


def absent_reason(*, known: bool, asked: Sequence[str]) -> str:
    """A row no source had a copy for: known but closed (``no_open_copy``) or unknown (``not_found``)."""
    names = f" (asked: {', '.join(asked)})" if asked else ""
    return _one_line(("no source has an open copy" if known else "no service knows this identifier") + names)


def invalid_reason(error: str | None) -> str:
    """The reason of an ``invalid_identifier`` row, from the parser's sentence (*error*): ``blank input``,
    ``not a DOI`` (``not a PMID``, …) or ``not a DOI, PMID, PMCID or arXiv ID``."""
    found = re.findall(r" is (blank input|not an? [A-Za-z ]+?)(?=: | \(|$)", error or "")
    said = found[-1] if found else ""
    if not said or said == "not an identifier":
        return "blank input" if not error else "not a DOI, PMID, PMCID or arXiv ID"
    return said
