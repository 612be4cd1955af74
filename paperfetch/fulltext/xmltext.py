"""Reading untrusted XML safely with lxml (docs/fulltext.md, "Safety"), and flattening inline markup to text."""

from __future__ import annotations

import html.entities
import logging
import re
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Any

from lxml import etree

from paperfetch import defaults
from paperfetch.fulltext.base import SECTION_SEPARATOR, FullTextError, FullTextTooLarge, normalise_space

__all__ = [
    "DROPPED", "XLINK_HREF", "XREF_KINDS", "children", "first_child", "flatten", "float_fields", "local_name", "parse_xml",
    "section_path", "xrefs",
]

logger = logging.getLogger(__name__)

XLINK_HREF = "{http://www.w3.org/1999/xlink}href"

# The first element start tag: everything before it is the prolog (XML declaration, comments, DOCTYPE).
_FIRST_ELEMENT = re.compile(rb"<[A-Za-z_:]")

# Elements whose content is not running text (figures, tables, captions, footnotes, TeX); their tails are kept.
DROPPED = frozenset({
    "alt-text", "annotation", "annotation-xml", "caption", "fig", "fig-group", "fn", "graphic", "inline-graphic",
    "long-desc", "media", "supplementary-material", "table", "table-wrap", "table-wrap-foot", "table-wrap-group",
    "tex-math",
})

# Elements that stand apart from their neighbours: a space on each side, so "a</list-item><list-item>b" is "a b".
_BLOCK = frozenset({
    "attrib", "boxed-text", "break", "def", "def-item", "def-list", "disp-formula", "disp-formula-group", "disp-quote",
    "label", "list", "list-item", "p", "speech", "statement", "term", "title", "verse-group", "verse-line",
})


class _NothingFromOutside(etree.Resolver):
    """Beside ``load_dtd=False``/``no_network=True``: anything libxml2 asks to load is answered with nothing."""

    def resolve(self, system_url: str, public_id: str, context: Any) -> Any:  # noqa: ANN401
        logger.debug("not loading %r (public id %r) while parsing XML", system_url, public_id)
        return self.resolve_string("", context)


def _parser() -> etree.XMLParser:
    # One parser per call: lxml parsers are not to be shared between threads.
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False, attribute_defaults=False,
        huge_tree=False, recover=False, remove_comments=True, remove_pis=True,
    )
    parser.resolvers.add(_NothingFromOutside())
    return parser


def parse_xml(body: bytes, *, max_bytes: int = defaults.MAX_XML_BYTES) -> etree._Element:
    """The root element of *body*, parsed safely. Raises FullTextTooLarge over *max_bytes* (checked first),
    FullTextError for an entity declaration, malformed or truncated XML, or an unresolvable entity."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    if len(body) > max_bytes:
        raise FullTextTooLarge(f"the XML body is {len(body):,} bytes, over the cap of {max_bytes:,}")
    first = _FIRST_ELEMENT.search(body)
    prolog = body[: first.start()] if first else body
    if b"<!ENTITY" in prolog:
        raise FullTextError("the XML body declares entities in its DOCTYPE; refused (entity expansion is never done)")
    try:
        root = etree.fromstring(body, _parser())
    except etree.XMLSyntaxError as exc:
        raise FullTextError(f"the XML body is not well-formed: {exc}") from None
    if root is None:
        raise FullTextError("the XML body is empty")
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise FullTextError("the XML body declares entities in its DOCTYPE; refused (entity expansion is never done)")
    return root


def local_name(tag: object) -> str:
    """``math`` for ``{…MathML}math`` or an undeclared ``mml:math``; ``""`` for comments, PIs and entities."""
    if not isinstance(tag, str):
        return ""
    return tag.rpartition("}")[2].rpartition(":")[2]


def _entity_text(node: etree._Entity) -> str:
    # an entity no loaded DTD defines: the HTML/ISO names every JATS DTD defines, else the body is refused
    name = str(node.name)
    text = html.entities.html5.get(name + ";")
    if text is None:
        raise FullTextError(f"the XML body refers to an entity no DTD defines here: &{name};")
    return text


def flatten(element: etree._Element | None, *, dropped: frozenset[str] = DROPPED, spaced: bool = False) -> str:
    """The text of *element* (``""`` for none), markup removed, whitespace normalised: inline markup kept as text,
    *dropped* subtrees only their tails, blocks set apart by a space (every element with *spaced*, for
    ``element-citation``)."""
    if element is None:
        return ""
    out: list[str] = []
    _collect(element, out, dropped, spaced)
    return normalise_space("".join(out))


def children(element: etree._Element | None, name: str) -> list[etree._Element]:
    """The children of *element* named *name* (any namespace); none for no element."""
    return [] if element is None else [child for child in element if local_name(child.tag) == name]


def first_child(element: etree._Element | None, name: str) -> etree._Element | None:
    """The first child of *element* named *name* (any namespace), or ``None``."""
    return next(iter(children(element, name)), None)


def _collect(element: etree._Element, out: list[str], dropped: frozenset[str], spaced: bool,
             links: list[tuple[str, list[str], int, int]] | None = None) -> None:
    """The raw text of *element* into *out*; with *links*, each ``<xref>``'s ref-type and rids, and the parts of
    *out* its text starts and ends at."""
    if element.text:
        out.append(element.text)
    for child in element:
        tag = child.tag
        if tag is etree.Entity:
            out.append(_entity_text(child))
        elif isinstance(tag, str):
            name = local_name(tag)
            if name not in dropped:
                block = spaced or name in _BLOCK
                if block:
                    out.append(" ")
                if links is not None and name == "xref":
                    start = len(out)
                    _collect(child, out, dropped, spaced)
                    links.append(((child.get("ref-type") or "").strip().lower(), (child.get("rid") or "").split(), start,
                                  len(out)))
                else:
                    _collect(child, out, dropped, spaced, links)
                if block:
                    out.append(" ")
        if child.tail:
            out.append(child.tail)


#: The ``<xref ref-type>`` values a row lists, and the row field each goes to.
XREF_KINDS: Mapping[str, str] = {"bibr": "citations", "fig": "figures", "table": "tables"}

# What may stand between the two ends of a citation range: "[3]–[6]", "3–6", "(3 - 6)".
_RANGE_DASH = re.compile(r"\s*[\])]?\s*[-\u2010-\u2015\u2212]\s*[\[(]?\s*")
_MAX_RANGE = 200


def xrefs(element: etree._Element, refs: Sequence[str] = (), *, dropped: frozenset[str] = DROPPED,
          order: Mapping[str, int] | None = None, offsets: list[int] | None = None) -> dict[str, tuple[str, ...]]:
    """``{"citations": (rid, …), "figures": (…), "tables": (…)}``: the rids of the ``<xref>`` links of *element*
    in document order, outside *dropped* subtrees (as :func:`flatten` reads its text): every citation, once per
    mention; each figure and table once, where it is first named.

    A multi-rid ``<xref rid="r3 r4">`` gives each rid; a citation range written as two bibliography links with
    only a dash between ("[3]–[6]") gives every reference between them too,
    in the order of *refs* (the article's ``<ref id>`` list; *order* maps each to its place).

    *offsets*, when given, receives for each citation the offset in :func:`flatten`'s text of *element* just
    after its link's text (an id a range adds shares the range's end)."""
    found: dict[str, list[str]] = {field: [] for field in XREF_KINDS.values()}
    if next(element.iter("{*}xref"), None) is None:  # most elements have none: no walk
        return {field: () for field in found}
    parts: list[str] = []
    links: list[tuple[str, list[str], int, int]] = []
    _collect(element, parts, dropped, False, links)
    if order is None:
        order = {rid: i for i, rid in enumerate(refs)}
    cited, ends = found["citations"], list(accumulate(map(len, parts), initial=0))
    text = "".join(parts) if offsets is not None else ""
    after: int | None = None  # the part the last bibliography link ended at, None when another link came since
    for kind, rids, start, end in links:
        field = XREF_KINDS.get(kind)
        if field != "citations":
            after = None
            if field is not None:
                found[field].extend(rids)
            continue
        gap = None if after is None else "".join(parts[after:start])
        before = len(cited)
        cited.extend(_range_between(cited, rids, gap, refs, order) + rids)
        if offsets is not None:
            # the flattened text of a prefix of the raw text is a prefix of the flattened whole
            offsets += [len(normalise_space(text[:ends[end]]))] * (len(cited) - before)
        after = end
    # every citation is kept (a mention is a citation context); a figure or table is listed once, where first named
    return {field: tuple(rids) if field == "citations" else tuple(dict.fromkeys(rids)) for field, rids in found.items()}


def _range_between(cited: list[str], value: list[str], gap: str | None, refs: Sequence[str],
                   order: Mapping[str, int]) -> list[str]:
    """The references a range "[3]–[6]" leaves between its ends: the link before (*cited*'s last) and *value*'s
    first, when only a dash (*gap*) stands between them."""
    if gap is None or not value or not cited or not _RANGE_DASH.fullmatch(gap):
        return []
    start, end = order.get(cited[-1]), order.get(value[0])
    if start is None or end is None or not 1 < end - start <= _MAX_RANGE:
        return []
    return list(refs[start + 1:end])


_TITLED = frozenset({"sec", "app", "boxed-text"})


def section_path(element: etree._Element, separator: str) -> str:
    """The titles of the ``<sec>``/``<app>``/``<boxed-text>`` holding *element*, outermost first, joined with
    *separator*; ``Abstract`` first inside an ``<abstract>``; ``""`` outside any."""
    titles: list[str] = []
    for ancestor in element.iterancestors():
        name = local_name(ancestor.tag)
        if name in _TITLED:
            if text := flatten(first_child(ancestor, "title")):
                titles.append(text)
        elif name == "abstract":
            titles.append("Abstract")
        elif name == "article":
            break
    return separator.join(reversed(titles))


def float_fields(element: etree._Element, refs: Sequence[str], order: Mapping[str, int] | None) -> dict[str, Any]:
    """The label, caption, section path and link rids of a ``<fig>`` or ``<table-wrap>`` (links anywhere in it)."""
    return {"label": flatten(first_child(element, "label")), "caption": flatten(first_child(element, "caption")),
            "section": section_path(element, SECTION_SEPARATOR), **xrefs(element, refs, dropped=frozenset(), order=order)}
