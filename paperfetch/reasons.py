"""The ``reason`` column: why a row ended as it did, in a few fixed words (docs/outcomes.md, "Schema")."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Sequence
from urllib.parse import urlsplit

__all__ = ["REASON_WIDTH", "absent_reason", "failure_reason", "short_time"]

#: The longest reason: the rest of a message is in ``error``.
REASON_WIDTH = 80


def short_time(when: datetime | None) -> str:
    """``07:28 UTC`` (a date too when it is not today)."""
    if when is None:
        return ""
    when = when.astimezone(timezone.utc) if when.tzinfo else when.replace(tzinfo=timezone.utc)
    today = datetime.now(timezone.utc).date()
    return when.strftime("%H:%M UTC" if when.date() == today else "%Y-%m-%d %H:%M UTC")


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REASON_WIDTH else text[: REASON_WIDTH - 1] + "…"


def _last_part(message: str) -> str:
    """The transport's own words at the end of ``"<url>: <url>: <reason>"``."""
    parts = [p.strip() for p in message.replace("://", "\0").split(": ")]
    words = [p for p in parts if p and "\0" not in p]
    return (words[-1] if words else message).replace("\0", "://")


def failure_reason(status: str, *, http_status: int | None = None, url: str | None = None, message: str = "",
                   until: datetime | None = None) -> str:
    """The reason of a row that failed on a candidate (or a lookup) with *status*."""
    when = f" until {short_time(until)}" if until is not None else ""
    if status == "host_suppressed":
        code = f"HTTP {http_status} → " if http_status else ""
        return _clip(f"{code}host suppressed{when}")
    if status == "host_held":
        return _clip(f"server asked to wait{when}" if when else "host held: " + _last_part(message))
    if status == "disallowed_by_robots":
        path = urlsplit(url or "").path or "/"
        return _clip(f"robots.txt disallows {path.rsplit('/', 1)[0] + '/' if path.count('/') > 1 else path}")
    if status == "http_error" and http_status:
        return _clip(f"HTTP {http_status} from {urlsplit(url or '').hostname or 'the server'}")
    if status == "invalid_pdf":
        return _clip("not a PDF: " + _last_part(message))
    if status == "network_error":
        return _clip("network: " + _last_part(message))
    return _clip(f"{status.replace('_', ' ')}: {_last_part(message)}" if message else status.replace("_", " "))


def absent_reason(*, known: bool, asked: Sequence[str]) -> str:
    """A row no source had a copy for: known but closed (``no_open_copy``) or unknown (``not_found``)."""
    names = f" (asked: {', '.join(asked)})" if asked else ""
    return _clip(("no source has an open copy" if known else "no service knows this identifier") + names)
