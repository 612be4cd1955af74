"""The records full text becomes, its error, and the text helpers both parsers share (values and pure functions)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from paperfetch.errors import InvalidIdentifier, PaperfetchError
from paperfetch.ids import IdType, parse_identifier

__all__ = [
    "FullTextError",
    "FullTextTooLarge",
    "JatsArticle",
    "Paragraph",
    "Reference",
    "SECTION_SEPARATOR",
    "canonical_id",
    "license_code",
    "normalise_space",
]

#: Joins the titles of nested sections, outermost first: ``Methods :: Participants``.
SECTION_SEPARATOR = " :: "


class FullTextError(PaperfetchError, ValueError):
    """A full-text body that cannot be read (malformed, truncated, hostile, not an article): one paper's failure."""


class FullTextTooLarge(FullTextError):
    """A body larger than the size cap, refused before any parsing."""


@dataclass(frozen=True, kw_only=True)
class Paragraph:
    """One paragraph of a paper: its section path, its 0-based place in the paper, its text.

    ``paragraph_id`` is the JATS ``<p id>`` or ``""``; ``citations``, ``figures`` and ``tables`` are the ``rid``s of
    the ``<xref>`` links in the paragraph, in order; ``page`` is the 1-based PDF page the paragraph starts on.
    """

    section: str
    paragraph: int
    text: str
    paragraph_id: str = ""
    citations: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    page: int | None = None


@dataclass(frozen=True, kw_only=True)
class Reference:
    """One ``<ref>`` of a JATS ``<ref-list>``: a cited work, with the identifiers the citation gives."""

    index: int
    ref_id: str = ""
    label: str = ""
    text: str = ""
    title: str = ""
    source: str = ""
    year: str = ""
    doi: str = ""
    pmid: str = ""
    pmcid: str = ""


@dataclass(frozen=True, kw_only=True)
class JatsArticle:
    """What one JATS article gives: its identifiers, its licence, its paragraphs and its references."""

    doi: str = ""
    pmid: str = ""
    pmcid: str = ""
    title: str = ""
    license: str = ""
    paragraphs: tuple[Paragraph, ...] = field(default_factory=tuple)
    references: tuple[Reference, ...] = field(default_factory=tuple)

    def paragraph_records(self) -> list[dict[str, Any]]:
        """The paragraphs as plain dicts (``section``, ``paragraph``, ``text``), ready for a DataFrame."""
        return [asdict(p) for p in self.paragraphs]

    def reference_records(self) -> list[dict[str, Any]]:
        return [asdict(r) for r in self.references]


def normalise_space(text: str) -> str:
    """Every run of whitespace (newline, tab, no-break space …) as one space, none at the edges."""
    return " ".join(text.split())


def canonical_id(value: str, kind: str) -> str:
    """*value* as paperfetch writes a ``doi`` / ``pmid`` / ``pmcid`` (``PMC…``), or ``""`` when it is not one."""
    value = normalise_space(value)
    if not value:
        return ""
    try:
        identifier = parse_identifier(value, hint=kind)
    except InvalidIdentifier:
        return ""
    if kind == IdType.DOI.value:
        return identifier.doi or ""
    return identifier.value if identifier.type.value == kind else ""


_CC_URL = re.compile(r"creativecommons\.org/(licenses|publicdomain)/([a-z-]+)", re.IGNORECASE)
_CC_CODE = re.compile(r"\bCC[\s-]?(BY(?:[\s-]?(?:NC|ND|SA)){0,2}|0)\b", re.IGNORECASE)
_CC_WORDS = re.compile(
    r"creative\s+commons\s+(?:attribution((?:[\s-]+(?:non[\s-]?commercial|no[\s-]?deriv\w*|share[\s-]?alike)){0,2})"
    r"|(?:public\s+domain|zero|cc0))",
    re.IGNORECASE,
)
_CC_PARTS = ((r"\bnon[\s-]?commercial", "nc"), (r"\bno[\s-]?deriv", "nd"), (r"\bshare", "sa"))


def license_code(text: str) -> str:
    """A short licence code (``cc by``, ``cc by-nc-nd``, ``cc0``) from a licence URL or sentence; ``""`` if none.

    >>> license_code("https://creativecommons.org/licenses/by-nc/4.0/")
    'cc by-nc'
    >>> license_code("distributed under the Creative Commons Attribution License")
    'cc by'
    """
    if match := _CC_URL.search(text):
        kind, code = match.group(1).lower(), match.group(2).lower()
        return "cc0" if kind == "publicdomain" or code == "zero" else f"cc {code}"
    if match := _CC_CODE.search(text):
        code = re.sub(r"[\s-]+", "-", match.group(1).lower())
        return "cc0" if code == "0" else f"cc {code}"
    if match := _CC_WORDS.search(text):
        if match.group(0).lower().split()[2].startswith("attribution"):
            parts = ["by"]
            tail = (match.group(1) or "").lower()
            parts += [code for pattern, code in _CC_PARTS if re.search(pattern, tail)]
            return "cc " + "-".join(parts)
        return "cc0"
    return ""
