"""Decide whether a downloaded body is a PDF (header, ``%%EOF``, length; not its structure), and if not, say
what it is, bot challenges named but never got round. Raises nothing for a bad body.
"""

from __future__ import annotations

import codecs
import html
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

__all__ = [
    "HEAD_BYTES", "KINDS", "MAX_PDF_HEADER_OFFSET", "PMC_BOT_CHECK", "TAIL_BYTES", "Verdict", "check_pdf_file",
    "detect_bot_challenge", "refusal_bot_check", "sniff"
]


#: How many bytes from the start of a body :func:`sniff` needs to decide.
HEAD_BYTES = 2048

#: How far into the file ``%PDF-`` may start: as far as Adobe's readers, pdf.js and poppler accept it,
#: after junk a server put in front (a BOM, blank lines), so a PDF every viewer opens is kept.
MAX_PDF_HEADER_OFFSET = 1024

#: How many bytes from the end of a file :func:`check_pdf_file` searches for ``%%EOF``.
TAIL_BYTES = 2048

#: Every ``Verdict.kind``. Only ``"pdf"`` comes with ``ok=True``.
KINDS = frozenset({"pdf", "html", "bot_challenge", "empty", "other", "truncated", "length_mismatch"})

_PDF_MAGIC = b"%PDF-"
_EOF_MARKER = b"%%EOF"
_NOT_GOT_ROUND = "paperfetch does not get round bot challenges"


@dataclass(frozen=True)
class Verdict:
    """What a body is: ``ok`` only for a PDF; ``kind`` one of :data:`KINDS`; ``reason`` a sentence for a person."""

    ok: bool
    kind: str
    reason: str


# Markers only challenge pages carry, as plain substrings of the lower-cased page (far faster than regexes).
# Cloudflare injects ``challenge-platform/scripts/jsd/main.js`` into ordinary pages (the APS and USENIX
# fixtures), so only ``challenge-platform/h/<x>/orchestrate/`` counts.
#: How a row names PMC's bot check: a 134-byte 403 or a "Preparing to download ..." proof-of-work page.
PMC_BOT_CHECK = "PMC's bot check"
_PMC_POW = f"{PMC_BOT_CHECK}, its proof-of-work page with the cookie cloudpmc-viewer-pow"

_VENDOR_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (_PMC_POW, ("cloudpmc-viewer-pow", "ncbi.pmc.pow")),
    ("a Cloudflare bot challenge", (
        "cf-browser-verification", "cf_chl_", "/cdn-cgi/challenge-platform/h/", "/cdn-cgi/styles/challenges.css",
        'id="challenge-form"', 'id="challenge-error-text"', 'id="challenge-running"', 'id="challenge-body-text"',
    )),
    ("a PerimeterX (HUMAN) bot challenge", ('id="px-captcha"', "_pxcaptcha", "press &amp; hold", "press & hold")),
    ("a DataDome bot challenge", ("captcha-delivery.com",)),
    ("an Akamai bot challenge", ("/_sec/cp_challenge", "sec-if-cpt-container", "bm-verify", "errors.edgesuite.net")),
    ("an Imperva (Incapsula) bot block page", ("incapsula incident id", "request unsuccessful. incapsula")),
    ("an AWS WAF bot challenge", ("gokuprops",)),
    ("a Sucuri firewall block page", ("sucuri website firewall",)),
)

# Titles that name the vendor (compared after lower-casing, collapsing whitespace and dropping trailing dots).
_VENDOR_TITLES = {
    "just a moment": "a Cloudflare bot challenge",
    "attention required! | cloudflare": "a Cloudflare bot challenge",
    "access to this page has been denied": "a PerimeterX (HUMAN) bot challenge",
    "pardon our interruption": "an Imperva (Distil) bot challenge",
    "ddos-guard": "a DDoS-Guard bot challenge",
    "preparing to download": _PMC_POW,
}

# Phrases that mean "bot check" in the page's *title* (in the body they are too common to count).
_TITLE_MARKERS = re.compile(
    r"just a moment|checking your browser|attention required|captcha|verify(?:ing)? (?:that )?you are (?:a )?human"
    r"|are you a (?:human|robot)|robot check|bot (?:check|verification|protection)|human verification"
    r"|access to this page has been denied|pardon our interruption|ddos-guard|security check|one more step"
    r"|please wait while we verify|please enable (?:cookies|javascript)",
)
_TITLE_RE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)


def detect_bot_challenge(text: str) -> str | None:
    """The bot challenge *text* (a page, or its first :data:`HEAD_BYTES`) is, as ``"a Cloudflare bot challenge"``; or None."""
    title_match = _TITLE_RE.search(text)
    title = " ".join(html.unescape(title_match.group(1)).split()) if title_match else ""
    title_key = title.lower()
    if (vendor := _VENDOR_TITLES.get(title_key.replace("\u2026", "").rstrip(". "))) is not None:
        return vendor
    lowered = text.lower()
    for label, markers in _VENDOR_MARKERS:
        if any(marker in lowered for marker in markers):
            return label
    if title_key and _TITLE_MARKERS.search(title_key):
        return f"a bot check page titled {title[:80]!r}"
    return None


# PMC's 403 to scripts (134 bytes, a bare page titled "403", recorded 2025-09-20): a bot check on PMC's hosts only.
_PMC_HOSTS = ("pmc.ncbi.nlm.nih.gov",)
_BARE_403 = re.compile(rb"<title>\s*403\s*</title>\s*403 Forbidden\s*$", re.IGNORECASE)


def refusal_bot_check(url: str, status: int | None, head: bytes = b"") -> str | None:
    """The bot check a refusal (*status*, its body's first bytes) is: PMC's 403 to scripts or a challenge page; else None."""
    if head and (named := detect_bot_challenge(_decode_head(head[:HEAD_BYTES]))):
        return named
    host = (urlsplit(url).hostname or "").lower() if url else ""
    pmc = host in _PMC_HOSTS or (host == "www.ncbi.nlm.nih.gov" and "/pmc/" in urlsplit(url).path)
    if pmc and status == 403 and (not head or len(head) <= 512 and _BARE_403.search(head.strip())):
        return f"{PMC_BOT_CHECK} (HTTP 403 to scripts; open the article in a browser or use Europe PMC's copy)"
    return None


_HTML_START = re.compile(
    r"<(?:!doctype\s+html|html|head|body|title|meta|script|noscript|style|link|iframe|div|p|h1|table|form)[\s>/]",
    re.IGNORECASE,
)
_XML_PROLOG_OR_COMMENT = re.compile(r"\s*(?:<\?xml[^>]*\?>|<!--.*?-->)\s*", re.DOTALL)


def _decode_head(head: bytes) -> str:
    """Text of *head* for markup checks: honour a UTF-16/UTF-8 BOM, else UTF-8 with replacement."""
    for bom, encoding in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if head.startswith(bom):
            return head[len(bom):].decode(encoding, errors="replace")
    return head.decode("utf-8", errors="replace")


def _looks_like_html(text: str) -> bool:
    """True when *text*, after whitespace, an XML prolog and comments, starts with an HTML tag."""
    position = 0
    while (skipped := _XML_PROLOG_OR_COMMENT.match(text, position)) and skipped.end() > position:
        position = skipped.end()
    return bool(_HTML_START.match(text[position:].lstrip(" \t\r\n\f\v\ufeff")))


def _describe_other(text: str, content_type: str | None) -> str:
    """A short description of a body that is neither PDF nor HTML."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        what = "JSON"
    elif stripped.startswith("<"):
        what = "XML or other markup"
    elif "\ufffd" in text[:256] or any(ch < " " and ch not in "\t\r\n\f" for ch in text[:256]):
        what = "binary data that is not a PDF"
    else:
        what = "plain text"
    declared = f" (declared as {content_type!r})" if content_type else ""
    return f"the server sent {what}{declared} instead of a PDF"


def sniff(head: bytes, content_type: str | None = None) -> Verdict:
    """Whether *head* (a body's first :data:`HEAD_BYTES`) is a PDF; the body decides, not *content_type*."""
    if not head.strip(b" \t\r\n\f\v\x00"):
        size = "an empty body" if not head else "a body of only whitespace"
        return Verdict(False, "empty", f"the server sent {size} instead of a PDF; try again later or another source")

    offset = head.find(_PDF_MAGIC, 0, MAX_PDF_HEADER_OFFSET + len(_PDF_MAGIC))
    if offset >= 0:
        after = f" (its %PDF- header follows {offset} leading bytes)" if offset else ""
        return Verdict(True, "pdf", f"the body is a PDF{after}")

    text = _decode_head(head)
    declared = (content_type or "").lower()
    if _looks_like_html(text) or "html" in declared:
        if challenge := detect_bot_challenge(text):
            return Verdict(
                False,
                "bot_challenge",
                f"the server sent an HTML page ({challenge}) instead of a PDF; {_NOT_GOT_ROUND}, "
                "so try another source for this paper or download it in a browser",
            )
        label = " although it was labelled application/pdf" if "pdf" in declared else ""
        return Verdict(
            False,
            "html",
            f"the server sent an HTML page{label} instead of a PDF (a landing page, login or error page); "
            "the PDF link may be on that page, or the copy may not be open access",
        )

    return Verdict(False, "other", _describe_other(text, content_type) + "; try another source for this paper")


def check_pdf_file(path: str | os.PathLike[str], *, expected_length: int | None = None) -> Verdict:
    """Check a file on disk: it sniffs as a PDF, its size equals *expected_length* when given (fewer bytes:
    ``"truncated"``, more: ``"length_mismatch"``), and its last :data:`TAIL_BYTES` hold a ``%%EOF`` (any one:
    viewers open such files). Raises OSError when the file cannot be read (a bug or a full disk)."""
    file_path = Path(path)
    size = file_path.stat().st_size
    with file_path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
        verdict = sniff(head)
        if not verdict.ok:
            return verdict
        if expected_length is not None and size != expected_length:
            short = size < expected_length
            what = "the download was cut short" if short else "the download is not what the server described"
            return Verdict(False, "truncated" if short else "length_mismatch",
                           f"the file has {size} bytes but the server announced {expected_length}; {what}, try again")
        handle.seek(max(0, size - TAIL_BYTES))
        tail = handle.read(TAIL_BYTES)
    if size > 0 and _EOF_MARKER not in tail:
        return Verdict(
            False,
            "truncated",
            f"the PDF has no %%EOF marker in its last {TAIL_BYTES} bytes, so it was most likely cut short; try again",
        )
    return verdict
