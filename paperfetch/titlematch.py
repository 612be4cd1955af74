"""Is it the paper asked for? The first pages' text against the title the metadata gave.

A landing page's ``citation_pdf_url`` can point at a supplement, a cover page or
another article of the same issue. After a PDF validates, :func:`first_pages_text`
reads the text layer of its first :data:`PAGES` pages with pypdf and
:func:`title_score` says which share of the title's words (normalised: accents
and case folded, punctuation dropped, words of one letter and common stop words
ignored) occur there — 1.0 when every word of the title is on the page.

:func:`judge` turns the scores into a verdict: ``ok``, ``low`` (below
:data:`THRESHOLD`; the file is kept and a warning logged) or ``wrong_article``
(below the threshold while another title of the same batch scores at least
:data:`THRESHOLD` and clearly better). ``None`` when there is nothing to compare:
no title, or a PDF without a text layer (a scan).

Deliberately not here: OCR, fuzzy matching across line breaks inside words, and
any decision about files (the Retriever moves a wrong article aside).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MARGIN", "PAGES", "THRESHOLD", "TitleVerdict", "first_pages_text", "judge", "normalise", "title_score"]

logger = logging.getLogger("paperfetch.titlematch")

#: Below this share of the title's words on the first pages, the PDF is suspect.
THRESHOLD = 0.6
#: How much better another title must score to call the PDF that other article.
MARGIN = 0.25
PAGES = 2
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


def first_pages_text(path: str | Path, pages: int = PAGES) -> str | None:
    """The text layer of the first *pages* pages, or None (no text layer, or pypdf cannot read it)."""
    try:
        from pypdf import PdfReader

        reader = PdfReader(str(path))
        text = "\n".join((page.extract_text() or "") for page in reader.pages[:pages])
    except Exception as exc:  # noqa: BLE001 - a PDF pypdf cannot read is "no text", never a failed download
        logger.debug("no text from %s: %s: %s", path, type(exc).__name__, exc)
        return None
    return text if text.strip() else None


@dataclass(frozen=True)
class TitleVerdict:
    score: float                     #: our title's score, 0..1
    verdict: str                     #: "ok" | "low" | "wrong_article"
    better_title: str | None = None  #: the other title that matched better (wrong_article)
    better_score: float | None = None


def judge(title: str | None, text: str | None, other_titles: Iterable[str | None] = (), *,
          threshold: float = THRESHOLD, margin: float = MARGIN) -> TitleVerdict | None:
    """The verdict for a PDF whose first pages read *text*, asked for as *title*."""
    score = title_score(title, text)
    if score is None:
        return None
    if score >= threshold:
        return TitleVerdict(score, "ok")
    best, best_score = None, 0.0
    own = set(normalise(title or ""))
    for other in other_titles:
        if not other or set(normalise(other)) == own:
            continue
        other_score = title_score(other, text) or 0.0
        if other_score > best_score:
            best, best_score = other, other_score
    if best is not None and best_score >= threshold and best_score >= score + margin:
        return TitleVerdict(score, "wrong_article", best, best_score)
    return TitleVerdict(score, "low")
