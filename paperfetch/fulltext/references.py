"""A JATS ``<ref-list>`` → one :class:`~paperfetch.fulltext.base.Reference` per ``<ref>`` (docs/fulltext.md, "JATS")."""

from __future__ import annotations

import re

from lxml import etree

from paperfetch.fulltext.base import Reference, canonical_id
from paperfetch.fulltext.xmltext import XLINK_HREF, children, first_child, flatten, local_name
from paperfetch.names import Name, organisation, parse_name, person

__all__ = ["PUB_ID_TYPES", "parse_references"]

_CITATIONS = ("mixed-citation", "element-citation", "citation", "nlm-citation")
_TITLES = ("article-title", "chapter-title", "data-title", "part-title")
#: The ``pub-id-type`` / ``article-id`` kinds read, and the id each gives.
PUB_ID_TYPES = {"doi": "doi", "pmid": "pmid", "pmcid": "pmcid", "pmc": "pmcid"}

_DOI_IN_TEXT = re.compile(r"(?:doi\.org/|\bdoi:?\s*)(10\.\d{4,9}/[^\s\"<>]+)", re.IGNORECASE)
_DOI_BARE = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?(10\.\d{4,9}/\S+)$", re.IGNORECASE)
_PMID_IN_TEXT = re.compile(r"\bPMID:?\s*(\d{1,9})\b")
_PMID_URL = re.compile(r"(?:ncbi\.nlm\.nih\.gov/pubmed/|pubmed\.ncbi\.nlm\.nih\.gov/)(\d{1,9})")
_PMCID_IN_TEXT = re.compile(r"\b(PMC\d{1,9})\b")
_YEAR = re.compile(r"\b(1[5-9]\d\d|2[01]\d\d)\b")
_NAMES = ("name", "string-name", "collab")


def parse_references(article: etree._Element) -> tuple[Reference, ...]:
    """The references of *article* (a parsed ``<article>``) in document order; ``()`` when it has none."""
    refs = [el for back in children(article, "back") for el in back.iter() if local_name(el.tag) == "ref"]
    return tuple(_reference(i, ref) for i, ref in enumerate(refs))


def _first(element: etree._Element, names: tuple[str, ...]) -> etree._Element | None:
    return next((el for name in names for el in element.iter() if local_name(el.tag) == name), None)


def _reference(index: int, ref: etree._Element) -> Reference:
    citation = _first(ref, _CITATIONS)
    holder = citation if citation is not None else ref
    spaced = citation is not None and local_name(citation.tag) != "mixed-citation"
    text = flatten(holder, spaced=spaced)
    year_match = _YEAR.search(flatten(_first(holder, ("year",))))
    ids = _identifiers(holder, text)
    return Reference(
        index=index,
        ref_id=ref.get("id") or "",
        label=flatten(first_child(ref, "label")),
        text=text,
        title=flatten(_first(holder, _TITLES)),
        source=flatten(_first(holder, ("source",))),
        year=year_match.group(1) if year_match else "",
        doi=ids.get("doi", ""),
        pmid=ids.get("pmid", ""),
        pmcid=ids.get("pmcid", ""),
        authors=_authors(holder),
    )


def _authors(holder: etree._Element) -> tuple[Name, ...]:
    """The cited work's ``<name>``, ``<string-name>`` and ``<collab>`` in order; an editor's group is not its authors."""
    names: list[Name | None] = []
    for el in holder.iter():
        above = {local_name(a.tag): a for a in el.iterancestors()}
        group = (above["person-group"].get("person-group-type") or "author") if "person-group" in above else "author"
        if local_name(el.tag) not in _NAMES or group != "author" or set(above) & set(_NAMES):
            continue
        if local_name(el.tag) == "collab":
            names.append(organisation(flatten(el)))
        elif (surname := first_child(el, "surname")) is not None:
            names.append(person(flatten(surname), flatten(first_child(el, "given-names"))))
        else:  # a string-name written out: "Smith JA", "Smith, J. A."
            names.append(parse_name(flatten(el)))
    return tuple(name for name in names if name)


def _identifiers(holder: etree._Element, text: str) -> dict[str, str]:
    found: dict[str, str] = {}

    def offer(kind: str, value: str) -> None:
        if kind not in found and (canonical := canonical_id(value, kind)):
            found[kind] = canonical

    for el in holder.iter():
        if local_name(el.tag) == "pub-id" and (kind := PUB_ID_TYPES.get((el.get("pub-id-type") or "").lower())):
            offer(kind, flatten(el))
    for el in holder.iter():
        if local_name(el.tag) not in ("ext-link", "uri"):
            continue
        for value in (el.get(XLINK_HREF) or "", flatten(el)):
            if (el.get("ext-link-type") or "").lower() == "doi" or "doi.org/" in value.lower():
                if match := _DOI_BARE.match(value.strip()):
                    offer("doi", _strip_end(match.group(1)))
            if match := _PMID_URL.search(value):
                offer("pmid", match.group(1))
            if (el.get("ext-link-type") or "").lower() == "pmid":
                offer("pmid", value)
    for kind, pattern in (("doi", _DOI_IN_TEXT), ("pmid", _PMID_IN_TEXT), ("pmcid", _PMCID_IN_TEXT)):
        if match := pattern.search(text):
            offer(kind, _strip_end(match.group(1)))  # a PMID's or PMCID's digits end at a word boundary already
    return found


def _strip_end(doi: str) -> str:
    # A DOI written in running text ends at the sentence's punctuation, not inside it.
    return doi.rstrip(".,;:)]}")
