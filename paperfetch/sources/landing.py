"""The PDF link a landing page declares for machines (``citation_pdf_url`` and kin): no network, no guessing,
and a bot challenge only recognised, never solved (docs/sources.md, "What is read").
"""

from __future__ import annotations

import codecs
import html as html_module
import logging
import re
from html.entities import html5 as html5_entities
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

from paperfetch.validate import detect_bot_challenge

__all__ = ["PDF_META_NAMES", "decode_html", "find_pdf_links", "is_bot_challenge"]

logger = logging.getLogger(__name__)

#: ``<meta>`` names (or properties) that carry a PDF URL, best first, compared case-insensitively.
PDF_META_NAMES: tuple[str, ...] = ("citation_pdf_url", "bepress_citation_pdf_url", "eprints.document_url")

# Priority groups: a lower number is a better link.
_PRIORITY_CITATION_META = 0
_PRIORITY_ALTERNATE_LINK = 1
_PRIORITY_OTHER_META = 2



def decode_html(page: str | bytes, content_type: str | None = None) -> str:
    """Text of an HTML page: a BOM, then the *content_type* charset, then ``<meta charset>`` / XML declaration,
    else UTF-8 (w3lib's order). Never raises: bad bytes replaced, unknown charsets skipped."""
    if isinstance(page, str):
        return page
    from w3lib.encoding import html_to_unicode

    encoding, text = html_to_unicode(content_type, page)
    if encoding.startswith("utf-16") and not page.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        # A UTF-16 page cannot declare itself in ASCII-compatible bytes; the declaration lies.
        return page.decode("utf-8", errors="replace")
    return text


_CHARREF_RE = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]*;?)")


def _unescape_attribute(value: str) -> str:
    """Character references in an attribute decoded as HTML5 does, so ``?a=1&section=2`` survives (not ``§ion=2``)."""

    def replace(match: re.Match[str]) -> str:
        reference = match.group(1)
        if reference.startswith("#"):
            return html_module.unescape(match.group(0))
        if reference.endswith(";"):
            return html5_entities.get(reference, match.group(0))
        if reference in html5_entities and value[match.end():match.end() + 1] != "=":
            return html5_entities[reference]
        return match.group(0)

    return _CHARREF_RE.sub(replace, value)


def _placeholder_for_ampersand(text: str) -> str:
    """A character absent from *text*, to hide ``&`` from html.parser's own (non-HTML5) unescaping."""
    for code_point in range(0xE000, 0xF8FF):
        if chr(code_point) not in text:
            return chr(code_point)
    raise ValueError("page uses every private-use character")  # pragma: no cover - 6400 distinct PUA characters


class _PdfLinkParser(HTMLParser):
    """Collects PDF-link candidates and the first ``<base href>``; ``&`` comes hidden, for :func:`_unescape_attribute`."""

    def __init__(self, ampersand_placeholder: str) -> None:
        super().__init__(convert_charrefs=False)
        self.ampersand_placeholder = ampersand_placeholder
        self.candidates: list[tuple[int, str]] = []  # (priority, raw URL), in document order
        self.base_href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("meta", "link", "base"):
            return
        attributes: dict[str, str] = {}
        for name, value in attrs:
            raw_value = (value or "").replace(self.ampersand_placeholder, "&")
            attributes.setdefault(name.lower(), _unescape_attribute(raw_value))
        if tag == "base":
            if self.base_href is None and attributes.get("href", "").strip():
                self.base_href = attributes["href"].strip()
        elif tag == "meta":
            self._meta(attributes)
        else:
            self._link(attributes)

    handle_startendtag = handle_starttag

    def _meta(self, attributes: dict[str, str]) -> None:
        content = attributes.get("content", "").strip()
        if not content:
            return
        for key in ("name", "property"):
            label = attributes.get(key, "").strip().lower()
            if label in PDF_META_NAMES:
                self.candidates.append((_PRIORITY_CITATION_META if label == "citation_pdf_url" else _PRIORITY_OTHER_META,
                                        content))
                return

    def _link(self, attributes: dict[str, str]) -> None:
        rel_tokens = attributes.get("rel", "").lower().split()
        media_type = attributes.get("type", "").split(";")[0].strip().lower()
        href = attributes.get("href", "").strip()
        if "alternate" in rel_tokens and media_type == "application/pdf" and href:
            self.candidates.append((_PRIORITY_ALTERNATE_LINK, href))


def _absolute_http_url(raw_url: str, base: str) -> str | None:
    """*raw_url* resolved against *base*, or None when it is not an http(s) URL with a host."""
    cleaned = "".join(raw_url.split()) if "\n" in raw_url or "\t" in raw_url else raw_url.strip()
    try:
        absolute = urljoin(base, cleaned)
        parts = urlsplit(absolute)
    except ValueError:
        return None
    return absolute if parts.scheme.lower() in ("http", "https") and parts.hostname else None


def find_pdf_links(html: str | bytes, base_url: str, content_type: str | None = None) -> list[str]:
    """Absolute http(s) PDF URLs a landing page declares, best first, no duplicates (docs/sources.md); relative
    ones resolve against the first ``<base href>`` or *base_url*. ``[]``: none declared (or a bot challenge)."""
    text = decode_html(html, content_type)
    placeholder = _placeholder_for_ampersand(text)
    parser = _PdfLinkParser(placeholder)
    try:
        parser.feed(text.replace("&", placeholder))
        parser.close()
    except Exception as exc:  # noqa: BLE001 - html.parser can still trip on pathological markup; keep what it found
        logger.debug("HTML parser stopped early on %s: %s", base_url, exc)

    base = urljoin(base_url, parser.base_href) if parser.base_href else base_url
    links: dict[str, None] = {}
    for _priority, raw_url in sorted(parser.candidates, key=lambda candidate: candidate[0]):  # stable: page order
        absolute = _absolute_http_url(raw_url, base)
        if absolute is None:
            logger.debug("ignoring non-http(s) PDF link %r on %s", raw_url, base_url)
        else:
            links.setdefault(absolute)
    return list(links)


def is_bot_challenge(html: str | bytes) -> bool:
    """True when the page is a bot challenge (Cloudflare "Just a moment...", PerimeterX, DataDome …)."""
    return detect_bot_challenge(decode_html(html)) is not None
