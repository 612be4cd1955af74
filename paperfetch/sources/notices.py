"""Reading the notices and version links the services already send with a work (docs/research.md, "Is this
the paper to use?"): Crossref ``updated-by`` / ``update-to`` / ``relation``, PubMed and Europe PMC publication
types and comment-correction links. No request of its own: each parser reads the record it was given.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, Iterable

from paperfetch.sources.base import Update
from paperfetch.sources.schema import ID, OBJECT, OBJECTS, TEXT, TEXTS, at

__all__ = ["RETRACTING_KINDS", "crossref_notices", "crossref_versions", "europepmc_notices", "normalise_kind",
           "pubmed_notices"]

#: The kinds of update that withdraw the work itself (an expression of concern or a correction does not).
RETRACTING_KINDS: frozenset[str] = frozenset({"retraction", "removal", "withdrawal"})
#: The kinds of notice a work may be (Crossref's ``update-to`` types that speak of the work's standing).
_NOTICE_KINDS = frozenset({"retraction", "correction", "expression_of_concern", "removal", "withdrawal",
                           "partial_retraction", "erratum", "corrigendum"})
#: PubMed's and Europe PMC's names, lower-cased, for the same kinds.
_PUBMED_KINDS = {"retractionin": "retraction", "retraction in": "retraction", "erratumin": "correction",
                 "erratum in": "correction", "expressionofconcernin": "expression_of_concern",
                 "expression of concern in": "expression_of_concern"}
_RETRACTED_TYPES = frozenset({"retracted publication"})
_NOTICE_TYPES = frozenset({"retraction of publication", "published erratum", "expression of concern"})


def normalise_kind(value: Any) -> str | None:
    """``Expression of Concern`` / ``expression-of-concern`` → ``expression_of_concern``; None for no text."""
    text = TEXT(value)
    if not text:
        return None
    return "_".join(text.strip().lower().replace("-", " ").split())


def _date(value: Any) -> str | None:
    """Crossref ``{"date-parts": [[2024, 5, 1]]}`` → ``2024-05-01`` (fewer parts: a shorter date)."""
    parts = at(value, "date-parts", 0)
    if not isinstance(parts, list) or not parts or not all(isinstance(p, int) and not isinstance(p, bool) for p in parts):
        return None
    return "-".join(f"{part:04d}" if i == 0 else f"{part:02d}" for i, part in enumerate(parts[:3]))


def _crossref_update(entry: dict[str, Any]) -> Update | None:
    kind = normalise_kind(entry.get("type"))
    if kind is None:
        return None
    notice = ID(entry.get("DOI"))
    return Update(kind=kind, notice=notice.lower() if notice else None, date=_date(entry.get("updated")),
                  source=TEXT(entry.get("source")) or "publisher")


def crossref_notices(work: dict[str, Any]) -> dict[str, Any]:
    """The Record fields a Crossref work gives about its standing: ``retracted``, ``updates`` (its
    ``updated-by``), ``is_notice`` and ``notice_of`` (its ``update-to``). Crossref carries Retraction Watch's
    data: a work it lists no retraction for is ``retracted=False``."""
    updates = tuple(u for u in (_crossref_update(e) for e in at(work, "updated-by", kind=OBJECTS)) if u is not None)
    updates = tuple(sorted(set(updates), key=lambda u: (u.date or "", u.kind, u.notice or "")))
    targets = [e for e in at(work, "update-to", kind=OBJECTS) if normalise_kind(e.get("type")) in _NOTICE_KINDS]
    notice_of = tuple(dict.fromkeys(d.lower() for d in (ID(e.get("DOI")) for e in targets) if d))
    return {"retracted": any(u.kind in RETRACTING_KINDS for u in updates), "updates": updates,
            "is_notice": True if targets else None, "notice_of": notice_of}


def crossref_versions(work: dict[str, Any]) -> dict[str, Any]:
    """``published_doi`` (``relation.is-preprint-of``) and ``preprint`` (``relation.has-preprint``) of a work."""
    relation = at(work, "relation", kind=OBJECT)

    def first_doi(name: str) -> str | None:
        for link in at(relation, name, kind=OBJECTS):
            if (TEXT(link.get("id-type")) or "").lower() == "doi" and ID(link.get("id")):
                return str(ID(link.get("id"))).lower()
        return None

    return {"published_doi": first_doi("is-preprint-of"), "preprint": first_doi("has-preprint")}


def _typed(types: Iterable[str], links: Iterable[tuple[str | None, str | None]], source: str) -> dict[str, Any]:
    """Record fields from PubMed's or Europe PMC's publication *types* and comment-correction *links*
    (``(type, PMID)``), as *source* gives them."""
    lowered = {t.strip().lower() for t in types}
    fields: dict[str, Any] = {}
    if lowered & _RETRACTED_TYPES:
        fields["retracted"] = True
    if lowered & _NOTICE_TYPES:
        fields["is_notice"] = True
    updates = [Update(kind=kind, notice=f"PMID:{pmid}" if pmid else None, source=source)
               for kind, pmid in ((_PUBMED_KINDS.get((raw or "").strip().lower()), pmid) for raw, pmid in links) if kind]
    if updates:
        fields["updates"] = tuple(dict.fromkeys(updates))
        if any(u.kind in RETRACTING_KINDS for u in updates):
            fields["retracted"] = True
    return fields


def europepmc_notices(result: dict[str, Any]) -> dict[str, Any]:
    """A Europe PMC core record's ``pubTypeList`` and ``commentCorrectionList``, as Record fields."""
    links = at(result, "commentCorrectionList", "commentCorrection", kind=OBJECTS)
    return _typed(at(result, "pubTypeList", "pubType", kind=TEXTS),
                  [(TEXT(link.get("type")), ID(link.get("id"))) for link in links], "europepmc")


def pubmed_notices(article: ET.Element) -> dict[str, Any]:
    """A PubmedArticle's publication types and ``CommentsCorrections`` links, as Record fields."""
    types = [(el.text or "") for el in article.findall("MedlineCitation/Article/PublicationTypeList/PublicationType")]
    links = article.findall("MedlineCitation/CommentsCorrectionsList/CommentsCorrections")
    return _typed(types, [(link.get("RefType"), (link.findtext("PMID") or "").strip()) for link in links], "pubmed")
