"""Reading untrusted XML safely with lxml, and flattening an element's inline markup to plain text.

The parser is built for hostile bodies: it never expands entities (no billion laughs), never reads a DTD or
anything else outside the body (no external entities, no network, no ``file://``), keeps libxml2's size and
depth limits (``huge_tree=False``), and refuses a body over its size cap before parsing a byte. A document
type declaration that declares entities is refused outright: JATS from Europe PMC, PMC and bioRxiv never has
an internal subset, and one that does is either broken or an attack.

What a JATS element *means* (which ``<p>`` is a row, what a section is) is decided in ``jats`` and
``references``; this module only knows markup.
"""

from __future__ import annotations

import html.entities
import logging
import re
from typing import Any

from lxml import etree

from paperfetch import defaults
from paperfetch.fulltext.base import FullTextError, FullTextTooLarge, normalise_space

__all__ = ["DROPPED", "flatten", "local_name", "parse_xml"]

logger = logging.getLogger(__name__)

# The first element start tag: everything before it is the prolog (XML declaration, comments, DOCTYPE).
_FIRST_ELEMENT = re.compile(rb"<[A-Za-z_:]")

# Elements whose content is not running text: figures and tables (and their captions and footers), graphics,
# supplementary files, footnotes, TeX source and MathML annotations (TeX again). Their tails are kept.
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
    """Belt and braces beside ``load_dtd=False``/``no_network=True``: whatever libxml2 asks to load (a DTD, an
    external entity) is answered with an empty document, so nothing outside the body is ever read."""

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
    """The root element of *body*, parsed with the safe settings above.

    Raises :class:`FullTextTooLarge` for a body over *max_bytes* (checked first), and :class:`FullTextError`
    for an entity declaration, malformed or truncated XML, or an unresolvable entity reference.
    """
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
    """``p`` for ``p``, ``math`` for ``{http://www.w3.org/1998/Math/MathML}math`` or an undeclared ``mml:math``;
    ``""`` for comments, processing instructions and entity references."""
    if not isinstance(tag, str):
        return ""
    return tag.rpartition("}")[2].rpartition(":")[2]


def _entity_text(node: etree._Entity) -> str:
    # Only reached for a reference to an entity no DTD defines (none is ever loaded): decode the HTML/ISO
    # names every JATS DTD defines; anything else is text we cannot know, so the body is refused.
    name = str(node.name)
    text = html.entities.html5.get(name + ";")
    if text is None:
        raise FullTextError(f"the XML body refers to an entity no DTD defines here: &{name};")
    return text


def flatten(element: etree._Element, *, dropped: frozenset[str] = DROPPED, spaced: bool = False) -> str:
    """The text of *element* with its markup removed and whitespace normalised.

    Inline markup (italic, sup, xref, ext-link, MathML tokens …) is kept as its text; the subtrees named in
    *dropped* contribute nothing but their tails; block elements are set apart by a space. With *spaced*, every
    element is set apart (for ``element-citation``, whose parts carry no punctuation between them).
    """
    out: list[str] = []
    _collect(element, out, dropped, spaced)
    return normalise_space("".join(out))


def _collect(element: etree._Element, out: list[str], dropped: frozenset[str], spaced: bool) -> None:
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
                _collect(child, out, dropped, spaced)
                if block:
                    out.append(" ")
        if child.tail:
            out.append(child.tail)
