"""JATS XML → one record per paragraph; which ``<p>`` is a row and what it carries: docs/fulltext.md, "JATS"."""

from __future__ import annotations

import re

from lxml import etree

from paperfetch import defaults
from paperfetch.fulltext.base import (
    SECTION_SEPARATOR,
    Article,
    FullTextError,
    Paragraph,
    canonical_id,
    license_code,
    license_id,
    unique_ids,
)
from paperfetch.fulltext.figures import floats
from paperfetch.fulltext.references import PUB_ID_TYPES, parse_references
from paperfetch.fulltext.xmltext import XLINK_HREF, children, first_child, flatten, local_name, parse_xml, xrefs

__all__ = ["NOT_ROWS", "article_from_element", "parse_jats", "parse_jats_set", "split_articles"]

#: Containers whose ``<p>`` are never rows (docs/fulltext.md, "JATS"); their text does not reach other rows.
NOT_ROWS = frozenset({
    "ack", "app", "app-group", "back", "caption", "fig", "fig-group", "fn", "fn-group", "glossary", "notes", "ref-list",
    "sub-article", "supplementary-material", "table-wrap", "table-wrap-foot", "table-wrap-group", "trans-abstract",
})

_LICENCE_URL = re.compile(r"https?://[^\s<>\"]+", re.IGNORECASE)


def parse_jats(body: bytes, *, max_bytes: int = defaults.MAX_XML_BYTES) -> Article:
    """The one article in *body* (or a one-article ``<pmc-articleset>``); FullTextError when it cannot be read."""
    articles = _articles(parse_xml(body, max_bytes=max_bytes))
    if len(articles) != 1:
        raise FullTextError(f"expected one JATS <article>, found {len(articles)}")
    return article_from_element(articles[0])


def parse_jats_set(body: bytes, *, max_bytes: int = defaults.MAX_XML_BYTES) -> list[Article]:
    """Every article of a batched ``<pmc-articleset>``, in order; the whole set fails as one."""
    return [article_from_element(el) for el in _articles(parse_xml(body, max_bytes=max_bytes))]


def split_articles(body: bytes, *, max_bytes: int = defaults.MAX_XML_BYTES) -> list[tuple[Article, bytes]]:
    """Every article of *body*, parsed, each with its own XML (what is kept on disk); the whole body fails as one."""
    root = parse_xml(body, max_bytes=max_bytes)
    elements = _articles(root)
    if elements == [root]:
        return [(article_from_element(root), body)]
    return [(article_from_element(el), etree.tostring(el, encoding="utf-8", xml_declaration=True)) for el in elements]


def _articles(root: etree._Element) -> list[etree._Element]:
    name = local_name(root.tag)
    if name == "article":
        return [root]
    if name == "pmc-articleset":
        return [child for child in root if local_name(child.tag) == "article"]
    raise FullTextError(f"not a JATS article: the root element is <{name or root.tag}>")


def article_from_element(article: etree._Element) -> Article:
    meta = _child_path(article, "front", "article-meta")
    ids = _article_ids(meta)
    rows: list[tuple[str, str, etree._Element]] = []
    for abstract in children(meta, "abstract"):
        _walk(abstract, _abstract_path(abstract), rows)
    body = _child_path(article, "body")
    if body is not None:
        _walk(body, [], rows)
    references = parse_references(article)
    refs = [r.ref_id for r in references]
    order = {rid: i for i, rid in enumerate(refs) if rid}
    paragraph_ids = unique_ids([(p.get("id") or "").strip() for _, _, p in rows], "p")
    paragraphs = []
    for i, (section, text, p) in enumerate(rows):
        offsets: list[int] = []
        links = xrefs(p, refs, order=order, offsets=offsets)
        paragraphs.append(Paragraph(section=section, paragraph=i, text=text, paragraph_id=paragraph_ids[i],
                                    citations=links["citations"], citation_offsets=tuple(offsets),
                                    figures=links["figures"], tables=links["tables"]))
    tables, figures = floats(article, refs)
    licence, licence_id = _license(meta)
    return Article(
        doi=ids.get("doi", ""),
        pmid=ids.get("pmid", ""),
        pmcid=ids.get("pmcid", ""),
        title=flatten(_child_path(meta, "title-group", "article-title")),
        license=licence,
        license_id=licence_id,
        paragraphs=tuple(paragraphs),
        references=references,
        tables=tables,
        figures=figures,
    )


def _child_path(element: etree._Element | None, *names: str) -> etree._Element | None:
    for name in names:
        element = first_child(element, name)
    return element


def _abstract_path(abstract: etree._Element) -> list[str]:
    if not abstract.get("abstract-type"):
        return ["Abstract"]
    return ["Abstract", flatten(first_child(abstract, "title")) or abstract.get("abstract-type", "")]


def _walk(element: etree._Element, path: list[str], rows: list[tuple[str, str, etree._Element]]) -> None:
    for child in element:
        name = local_name(child.tag)
        if name == "p":
            text = flatten(child)
            if text:
                rows.append((SECTION_SEPARATOR.join(path), text, child))
        elif name == "sec":
            heading = flatten(first_child(child, "title"))
            _walk(child, [*path, heading] if heading else path, rows)
        elif name and name not in NOT_ROWS and name != "title":
            _walk(child, path, rows)


def _article_ids(meta: etree._Element | None) -> dict[str, str]:
    ids: dict[str, str] = {}
    for element in children(meta, "article-id"):
        kind = PUB_ID_TYPES.get((element.get("pub-id-type") or "").lower())
        if kind and kind not in ids:
            value = canonical_id(flatten(element), kind)
            if value:
                ids[kind] = value
    return ids


def _license(meta: etree._Element | None) -> tuple[str, str]:
    """The first ``<license>`` that names one, and its short id (:func:`~paperfetch.fulltext.base.license_id`)."""
    for permissions in children(meta, "permissions"):
        for lic in children(permissions, "license"):
            text = flatten(lic)
            if licence := _licence_of(lic, text):
                ident, in_text = license_id(licence), license_id(text)  # the text may name the version the code lacks
                return licence, in_text if in_text.startswith(ident) and len(in_text) > len(ident) else ident or in_text
    return "", ""


def _licence_of(lic: etree._Element, text: str) -> str:
    """Its URL (``ali:license_ref``, ``xlink:href``, a link or a URL in its text), else the Creative Commons
    code its text gives (``cc by``), else its text (a licence of its own)."""
    for ref in lic.iter():
        if local_name(ref.tag) == "license_ref" and (url := flatten(ref)):
            return url
    if href := (lic.get(XLINK_HREF) or "").strip():
        return href
    for link in lic.iter():
        if local_name(link.tag) in ("ext-link", "uri") and _LICENCE_URL.match(
                url := (link.get(XLINK_HREF) or flatten(link)).strip()):
            return url
    if match := _LICENCE_URL.search(text):
        return match.group(0).rstrip(".,;:)]}")
    return license_code(text) or license_code(lic.get("license-type") or "") or text
