"""Reading a service's answer defensively: the shape is checked, a wrong-shaped field is absent."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

from paperfetch.errors import MalformedResponse

__all__ = ["ANY", "FLAG", "ID", "OBJECT", "OBJECTS", "TEXT", "TEXTS", "URL", "YEAR", "at", "load_json", "load_xml", "top_object"]

#: Longest text field kept; a longer one is junk, not a title (a candidate URL is read as :data:`URL`).
MAX_TEXT_CHARS = 100_000

Kind = Callable[[Any], Any]


def URL(value: Any) -> str | None:  # noqa: N802
    """A candidate URL: a non-empty string that can be encoded as UTF-8 (no lone surrogates), else None; no
    length cap: an over-long URL is still what the service offers, and the item's row says it was refused
    (``refused_url``, paperfetch.urlcheck); the answer's own byte cap bounds its length."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def TEXT(value: Any) -> str | None:  # noqa: N802 - a declared kind reads like a type
    """As :data:`URL`, and at most :data:`MAX_TEXT_CHARS` characters, else None."""
    return URL(value) if isinstance(value, str) and len(value) <= MAX_TEXT_CHARS else None


def ID(value: Any) -> str | None:  # noqa: N802
    """An identifier as text: services write PMIDs (and other ids) as numbers in some answers and strings in
    others, so a whole number reads as its digits; else as :data:`TEXT`."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return TEXT(value)


def YEAR(value: Any) -> int | None:  # noqa: N802
    """A plausible publication year (an int, or four digits as text), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and 1000 <= value <= 2999:
        return value
    return None


def FLAG(value: Any) -> bool | None:  # noqa: N802
    """A JSON boolean, else None."""
    return value if isinstance(value, bool) else None


def OBJECT(value: Any) -> dict[str, Any]:  # noqa: N802
    """A JSON object, else ``{}``."""
    return value if isinstance(value, dict) else {}


def OBJECTS(value: Any) -> list[dict[str, Any]]:  # noqa: N802
    """The objects of a JSON list (other members dropped); not a list: ``[]``."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def TEXTS(value: Any) -> list[str]:  # noqa: N802
    """The usable strings of a JSON list; not a list: ``[]``."""
    return [text for text in map(TEXT, value) if text is not None] if isinstance(value, list) else []


def ANY(value: Any) -> Any:  # noqa: N802
    return value


def at(data: Any, *path: str | int, kind: Kind = ANY) -> Any:
    """The value at *path* inside *data* read as *kind*; a missing or wrong-shaped step reads as absent."""
    value = data
    for step in path:
        if isinstance(step, int):
            value = value[step] if isinstance(value, list) and -len(value) <= step < len(value) else None
        else:
            value = value.get(step) if isinstance(value, dict) else None
        if value is None:
            break
    return kind(value)


def load_json(body: bytes | str, service: str) -> Any:
    """The JSON value of *body*, or :class:`MalformedResponse` naming *service* and the problem."""
    try:
        return json.loads(body)
    except RecursionError:
        raise MalformedResponse(f"{service}: the answer is nested too deeply to read") from None
    except (ValueError, TypeError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise MalformedResponse(f"{service}: the answer is not valid JSON ({_short(exc)})") from None


def load_xml(body: bytes | str, service: str) -> ET.Element:
    """The root element of *body*, or :class:`MalformedResponse` naming *service* and the problem."""
    try:
        return ET.fromstring(body)
    except (ET.ParseError, ValueError, TypeError) as exc:
        raise MalformedResponse(f"{service}: the answer is not valid XML ({_short(exc)})") from None


def top_object(data: Any, service: str) -> dict[str, Any]:
    """*data* when it is a JSON object; otherwise :class:`MalformedResponse` saying what came instead."""
    if isinstance(data, dict):
        return data
    raise MalformedResponse(f"{service}: expected a JSON object, got {_json_kind(data)}")


def _json_kind(value: Any) -> str:
    return {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list"}.get(
        type(value), type(value).__name__
    )


def _short(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 200 else text[:197] + "..."
