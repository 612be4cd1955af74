"""Is it the paper asked for? :func:`judge` says ``ok``, ``low`` or ``wrong_article`` (docs/research.md)."""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "FirstPages", "MARGIN", "MIN_TITLE_WORDS", "OWN_TITLE_MATCH", "PAGES", "THRESHOLD", "TitleVerdict",
    "confident_title", "judge", "normalise", "read_first_pages", "title_score",
    "title_similarity"
]

logger = logging.getLogger("paperfetch.titlematch")

#: Below this share of the title's words on the first pages, the PDF is suspect.
THRESHOLD = 0.6
#: How much better another title must score to call the PDF that other article.
MARGIN = 0.25
PAGES = 2
#: A PDF's own title names the paper asked for at this :func:`title_similarity` (a subtitle more or less matches).
OWN_TITLE_MATCH = 0.8
#: Fewer words (not counting stop words) than this is not a confident title ("Editorial", "Research Article").
MIN_TITLE_WORDS = 4
#: A first-page line set this much larger than the body text is a headline (the title of an article page).
HEADLINE_RATIO = 1.15
_MAX_TITLE_CHARS = 300
#: Placeholders and production names, not titles: document info that names a tool, a file or nothing.
_PLACEHOLDER_RE = re.compile(
    r"^\s*(?:untitled|no\s+title|title|document\d*|manuscript|article|paper|pdf|none|null|unknown|slide\s*\d*|"
    r"print|draft|author|cover|front\s+matter|table\s+of\s+contents|contents|supplementary\b.*|editorial)\s*$"
    r"|^\s*microsoft\s+(?:word|powerpoint|excel)\b|\.(?:docx?|pdf|tex|dvi|ps|indd|qxd|rtf|odt)\s*$|^\s*(?:doi:?\s*)?10\.\d{4,}/"
    r"|^[\W\d_]+$",
    re.I,
)
_STOP = frozenset("a an and are as at by for from in into is of on or the to with via".split())


def normalise(text: str) -> list[str]:
    """Lower-case ASCII word tokens: accents stripped, punctuation and hyphens as separators."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return re.findall(r"[a-z0-9]+", folded)


def _title_tokens(title: str) -> set[str]:
    return {t for t in normalise(title) if len(t) > 1 and t not in _STOP}


def title_score(title: str | None, text: str | None) -> float | None:
    """Share of *title*'s words found in *text*, 0..1; None when either is empty."""
    if not title or not text:
        return None
    wanted = _title_tokens(title)
    if not wanted:
        return None
    found = set(normalise(text))
    return round(len(wanted & found) / len(wanted), 3)


def title_similarity(a: str | None, b: str | None) -> float | None:
    """How much two titles share: the words (not stop words) they have in common, over the shorter's; 0..1."""
    if not a or not b:
        return None
    left, right = _title_tokens(a), _title_tokens(b)
    if not left or not right:
        return None
    return round(len(left & right) / min(len(left), len(right)), 3)


def confident_title(title: str | None, *, journal: str | None = None) -> bool:
    """Whether *title* (a PDF's own) reads like an article's title, not a placeholder or the journal's name."""
    if not title:
        return False
    text = " ".join(title.split())
    if len(text) > _MAX_TITLE_CHARS or _PLACEHOLDER_RE.search(text) or "@" in text:  # "@": authors' addresses
        return False
    if sum(1 for token in _title_tokens(text) if token.isalpha()) < MIN_TITLE_WORDS:  # "Nature 2008 455:123"
        return False
    return not (journal and (title_similarity(text, journal) or 0.0) >= OWN_TITLE_MATCH)


@dataclass(frozen=True)
class FirstPages:
    """What the first pages of a PDF say: their text layer and the PDF's own title, where it has one."""

    text: str | None        #: the text layer of the first PAGES pages (None: no text layer)
    info_title: str | None  #: the document information dictionary's /Title
    headline: str | None    #: the first page's largest-font lines, when they stand out from the body text

    @property
    def own_titles(self) -> list[tuple[str, str]]:
        """``(title, where)`` for the document info's title, then the headline (those it has)."""
        found = [(self.info_title, "its document info"), (self.headline, "its first page's largest type")]
        return [(title, where) for title, where in found if title]


def read_first_pages(path: str | Path, pages: int = PAGES) -> FirstPages:
    """The text layer of the first *pages* pages and the PDF's own title; empty when pypdf cannot read it."""
    try:
        from pypdf import PdfReader

        reader = PdfReader(str(path))
        first = list(reader.pages[:pages])
        text = "\n".join((page.extract_text() or "") for page in first)
    except Exception as exc:  # noqa: BLE001 - a PDF pypdf cannot read is "no text", never a failed download
        logger.debug("no text from %s: %s: %s", path, type(exc).__name__, exc)
        return FirstPages(None, None, None)
    try:
        info = reader.metadata
        raw = info.title if info is not None else None
        info_title = (" ".join(str(raw).split()) or None) if raw else None
    except Exception:  # noqa: BLE001 - a damaged info dictionary is no title
        info_title = None
    headline = _headline(first[0]) if first else None
    return FirstPages(text if text.strip() else None, info_title, headline)


def _headline(page: object) -> str | None:
    """The lines set in the page's largest type, when that type is clearly larger than most of the text."""
    pieces: list[tuple[float, str]] = []

    def visit(text: str, cm: list[float], tm: list[float], font: object, size: float) -> None:
        words = " ".join(text.split())
        if words:
            # the rendered size: the Tf size scaled by the text and graphics matrices (their vertical scale)
            c = tm[2] * cm[0] + tm[3] * cm[2]
            d = tm[2] * cm[1] + tm[3] * cm[3]
            scale = (c * c + d * d) ** 0.5 or 1.0
            pieces.append((round(float(size) * scale, 1), words))

    try:
        page.extract_text(visitor_text=visit)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - an unreadable page has no headline
        return None
    if not pieces:
        return None
    by_size: Counter[float] = Counter()
    for size, words in pieces:
        by_size[size] += len(words)
    body = by_size.most_common(1)[0][0]  # the size most of the text is set in
    for largest in sorted(by_size, reverse=True):
        if largest < body * HEADLINE_RATIO:
            return None
        headline = " ".join(words for size, words in pieces if largest * 0.97 <= size <= largest * 1.03)
        if len(headline.replace(" ", "")) > 3:  # not a drop cap or a page number set large
            return headline if len(headline) <= _MAX_TITLE_CHARS else None
    return None


@dataclass(frozen=True)
class TitleVerdict:
    score: float                     #: our title's score, 0..1
    verdict: str                     #: "ok" | "low" | "wrong_article"
    better_title: str | None = None  #: the other title that matched better (wrong_article)
    better_score: float | None = None
    own_title: str | None = None     #: the PDF's own title, when it decided (wrong_article) or was not confident (low)
    own_title_from: str | None = None  #: where it was read: "its document info" or "its first page's largest type"
    own_similarity: float | None = None  #: how much of it the title asked for shares (title_similarity)


def judge(title: str | None, text: str | None, other_titles: Iterable[str | None] = (), *,
          threshold: float = THRESHOLD, margin: float = MARGIN, own_titles: Iterable[tuple[str, str]] = (),
          journal: str | None = None) -> TitleVerdict | None:
    """The verdict for a PDF whose first pages read *text*, asked for as *title*. Of *own_titles* ``(title,
    where)``, the first :func:`confident_title` one decides a low score: sharing less than
    :data:`OWN_TITLE_MATCH` with *title*, ``wrong_article``; else ``low``."""
    score = title_score(title, text)
    if score is None:
        return None
    if score >= threshold:
        return TitleVerdict(score, "ok")
    own = set(normalise(title or ""))
    scored = [(title_score(other, text) or 0.0, other) for other in other_titles if other and set(normalise(other)) != own]
    best_score, best = max(scored, key=lambda pair: pair[0], default=(0.0, None))  # the first of the best
    if best is not None and best_score >= threshold and best_score >= score + margin:
        return TitleVerdict(score, "wrong_article", best, best_score)
    confident = [(stated, where, title_similarity(title, stated) or 0.0) for stated, where in own_titles
                 if confident_title(stated, journal=journal)]
    # all its confident titles another paper's (a stale document info beside the right headline only warns)
    if confident and all(similarity < OWN_TITLE_MATCH for _, _, similarity in confident):
        stated, where, similarity = confident[0]
        return TitleVerdict(score, "wrong_article", own_title=stated, own_title_from=where, own_similarity=similarity)
    return TitleVerdict(score, "low")
