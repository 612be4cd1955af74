"""What a batch met of the papers' standing (retracted papers, notices), tallied from their rows, and whether
a PDF is a notice rather than the paper asked for (docs/outcomes.md, docs/research.md). A paper's own standing
is :class:`paperfetch.paper.Paper`'s.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

__all__ = ["looks_like_notice", "met_by", "met_line"]


def met_by(row: Mapping[str, Any] | None) -> tuple[str, ...]:
    """What a row counts toward in the batch's tally of standing: ``retracted``, ``notices`` (or neither)."""
    if not row:
        return ()
    flags = (("retracted", row.get("retracted")), ("notices", row.get("is_notice")))
    return tuple(name for name, value in flags if value is True or (value is not None and str(value) == "True"))


def met_line(met: Mapping[str, int]) -> str:
    """``2 retracted papers, 1 notice`` (the parts that count some); ``""`` when none."""
    counts = ((met.get("retracted", 0), "retracted paper"), (met.get("notices", 0), "notice"))
    return ", ".join(f"{count} {noun}{'s' if count != 1 else ''}" for count, noun in counts if count)


#: How a notice's first page opens: "Retraction Note", "Notice of Retraction", "RETRACTION: …", "Retraction notice
#: to …", "Expression of Concern: …". A retracted paper's own label ("RETRACTED: <title>", Elsevier's, or a
#: "This article has been retracted" watermark) does not open so: that PDF is the paper.
_NOTICE_HEAD = re.compile(r"^\W*(retraction\s+(note|notice)|notice\s+of\s+retraction|retraction\s*(of\b|:|to\b)|"
                          r"expression\s+of\s+concern\b|withdrawal\s*:)", re.IGNORECASE)


def looks_like_notice(title_asked: str | None, first_page: str | None, own_titles: Iterable[str] = ()) -> bool:
    """A PDF whose first page (or its own title) opens as a retraction notice, for a paper whose title does
    not: the file is the notice, not the paper asked for."""
    if title_asked and _NOTICE_HEAD.search(title_asked.strip()):
        return False
    heads = [t for t in own_titles if t] + [(first_page or "").strip()[:300]]
    return any(_NOTICE_HEAD.search(" ".join(head.split())) for head in heads)
