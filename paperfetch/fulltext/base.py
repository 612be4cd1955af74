"""The records full text becomes, its error, and the text helpers both parsers share (values and pure functions)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from paperfetch.errors import InvalidIdentifier, PaperfetchError
from paperfetch.ids import IdType, parse_identifier

__all__ = [
    "Article",
    "Figure",
    "FullTextError",
    "FullTextTooLarge",
    "NoTextLayer",
    "Paragraph",
    "Reference",
    "SECTION_SEPARATOR",
    "Table",
    "canonical_id",
    "license_code",
    "license_id",
    "normalise_space",
    "unique_ids",
]

#: Joins the titles of nested sections, outermost first: ``Methods :: Participants``.
SECTION_SEPARATOR = " :: "


class FullTextError(PaperfetchError, ValueError):
    """A full-text body that cannot be read (malformed, truncated, hostile, not an article): one paper's failure."""


class NoTextLayer(FullTextError):
    """A PDF that gives no text (scanned pages are not read: no OCR)."""


class FullTextTooLarge(FullTextError):
    """A body larger than the size cap, refused before any parsing."""


@dataclass(frozen=True, kw_only=True)
class Paragraph:
    """One paragraph of a paper: its section path, its 0-based place in the paper, its text.

    ``paragraph_id`` is the JATS ``<p id>``, else ``p{paragraph}`` (``""`` from the PDF path: the frames write
    ``p{paragraph}``); ``citations`` are the ``rid``s of the bibliography ``<xref>`` links in the paragraph, once per
    mention, in order, and ``citation_offsets`` where each stands: the offset in ``text`` just after its link's text
    (the ids of a range "[3–6]" share the offset of its end); ``figures`` and ``tables`` those of the
    figure and table links, each once; ``page`` is the
    1-based PDF page the paragraph starts on.
    """

    section: str
    paragraph: int
    text: str
    paragraph_id: str = ""
    citations: tuple[str, ...] = ()
    citation_offsets: tuple[int, ...] = ()
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
    authors: tuple[dict[str, str], ...] = ()  #: the cited work's authors as :mod:`paperfetch.names` gives them


@dataclass(frozen=True, kw_only=True)
class Table:
    """One JATS ``<table-wrap>``: its id, label, caption, footnotes and section, and its cells as a grid.

    ``columns`` are the header rows' texts (one name a column; several header rows joined with ``" / "``);
    ``rows`` the body rows, every spanned cell repeated in each place it covers. A table given only as an image
    has no columns and no rows. ``citations``, ``figures`` and ``tables`` are the ``<xref>`` rids inside it.
    """

    table_id: str
    label: str = ""
    caption: str = ""
    footnotes: str = ""
    section: str = ""
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    citations: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Figure:
    """One JATS ``<fig>``: its id, label, caption, section, the href of its first ``<graphic>``, its xref rids."""

    figure_id: str
    label: str = ""
    caption: str = ""
    section: str = ""
    graphic: str = ""
    citations: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Article:
    """What one document says of itself, parsed from its bytes (JATS or a PDF's text layer): its identifiers,
    title and licence as it states them, its paragraphs, references, tables and figures (a PDF gives paragraphs
    only, and its DOI and licence when its first page states them)."""

    text_source: str = "jats"   #: ``jats`` or ``pdf``: what the text was parsed from
    doi: str = ""
    pmid: str = ""
    pmcid: str = ""
    title: str = ""
    license: str = ""
    license_id: str = ""   #: the short id of a Creative Commons licence (``cc-by-4.0``), from its URL or its text
    paragraphs: tuple[Paragraph, ...] = field(default_factory=tuple)
    references: tuple[Reference, ...] = field(default_factory=tuple)
    tables: tuple[Table, ...] = field(default_factory=tuple)
    figures: tuple[Figure, ...] = field(default_factory=tuple)

    @property
    def has_body(self) -> bool:
        """Whether it has text beyond its abstract (PMC gives front matter alone where a publisher withholds it)."""
        return any(not p.section.startswith("Abstract") for p in self.paragraphs)


def normalise_space(text: str) -> str:
    """Every run of whitespace (newline, tab, no-break space …) as one space, none at the edges."""
    return " ".join(text.split())


def unique_ids(given: list[str], prefix: str, start: int = 0) -> list[str]:
    """One id per item: its own (*given*, ``""`` for none) when no earlier item took it, else ``{prefix}{n}``
    (*n* its place, counted from *start*), else that with ``-2``, ``-3`` … until unused: unique, and the same on every run."""
    taken = {value for value in given if value}
    used: set[str] = set()
    out: list[str] = []
    for n, value in enumerate(given):
        if not value or value in used:
            value = candidate = f"{prefix}{n + start}"
            k = 2
            while value in taken or value in used:
                value, k = f"{candidate}-{k}", k + 1
        used.add(value)
        out.append(value)
    return out


def canonical_id(value: str, kind: str) -> str:
    """*value* as paperfetch writes a ``doi`` / ``pmid`` / ``pmcid`` (``PMC…``), or ``""`` when it is not one.

    *value* is the whole content of an identifier element, so whitespace inside a DOI is stray and is removed
    (``10.1000/ abc`` wrapped over two lines is ``10.1000/abc``)."""
    value = "".join(value.split()) if kind == IdType.DOI.value else normalise_space(value)
    if not value:
        return ""
    try:
        identifier = parse_identifier(value, hint=kind)
    except InvalidIdentifier:
        return ""
    if kind == IdType.DOI.value:
        return identifier.doi or ""
    return identifier.value if identifier.type.value == kind else ""


_CC_URL = re.compile(r"creativecommons\.org/(licenses|publicdomain)/([a-z-]+)(?:/(\d+(?:\.\d+)?))?", re.IGNORECASE)
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
            tail = (match.group(1) or "").lower()
            return "cc " + "-".join(["by", *(code for pattern, code in _CC_PARTS if re.search(pattern, tail))])
        return "cc0"
    return ""


_VERSION_AFTER = re.compile(
    r"^[\s,(-]*(?:(?:international|generic|unported)\s+)?(?:(?:public\s+)?licen[cs]e\s*)?(?:\(\s*)?"
    r"(?:version\s*|v)?(\d\.\d)\b", re.IGNORECASE)


def license_id(text: str) -> str:
    """A lower-case short id of a Creative Commons licence, with its version when *text* gives one
    (``cc-by-4.0``, ``cc-by-nc-nd-3.0``, ``cc0-1.0``, ``cc-by``); ``""`` for any other licence or none.

    >>> license_id("https://creativecommons.org/licenses/by-nc/4.0/")
    'cc-by-nc-4.0'
    >>> license_id("distributed under the Creative Commons Attribution 4.0 International License")
    'cc-by-4.0'
    >>> license_id("cc by")
    'cc-by'
    """
    if match := _CC_URL.search(text):
        kind, code, version = match.group(1).lower(), match.group(2).lower(), match.group(3)
        code = f"cc-{code}" if kind != "publicdomain" else "cc0" if code == "zero" else f"publicdomain-{code}"
        return f"{code}-{version}" if version else code
    code = license_code(text)
    if not code:
        return ""
    ident = code.replace(" ", "-")
    for pattern in (_CC_CODE, _CC_WORDS):
        if (match := pattern.search(text)) and (version := _VERSION_AFTER.match(text[match.end():])):
            return f"{ident}-{version.group(1)}"
    return ident
