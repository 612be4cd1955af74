"""A Markdown twin of each paper, from the full-text frames (docs/fulltext.md, "Markdown"); written, never read
back."""

from __future__ import annotations

import hashlib
import html
import json
import logging
import re
from collections.abc import Mapping
from os.path import commonprefix
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import pandas as pd

from paperfetch.cells import is_missing
from paperfetch.fulltext.base import SECTION_SEPARATOR, license_code
from paperfetch.fulltext.bundle import FullText
from paperfetch.fulltext.frame import by_input

__all__ = ["FRONT_MATTER_KEYS", "Flavor", "escape", "reuse_of", "to_markdown"]

logger = logging.getLogger(__name__)

#: The keys of the front matter, in order; every one is written, ``null`` when unknown.
FRONT_MATTER_KEYS = ("title", "year", "journal", "authors", "retracted", "doi", "pmid", "pmcid", "license",
                     "license_id", "reuse", "text_source", "sha256", "input")
#: Where a cited work's identifier links to.
_ID_URLS = {"doi": "https://doi.org/{}", "pmid": "https://pubmed.ncbi.nlm.nih.gov/{}/",
            "pmcid": "https://www.ncbi.nlm.nih.gov/pmc/articles/{}/"}
_OPEN = frozenset({"cc by", "cc by-sa", "cc0"})
_NO_LICENSE = "no licence given: the text may not be reused without the publisher's permission"
_NOT_LISTED = "(not in the reference list)"

# Backslash-escaped wherever they stand: what would otherwise be markup, an entity, a link or a citation.
_ESCAPED = frozenset("\\`*_[]{}<>|~^$&@#")
_LEADING = re.compile(r"^(?:[-+=:%!]|\d+[.)])")
_BREAK = "* * *"
# What ends a citation's printed label going back from its end: a space, an opening bracket, a separator.
_LABEL_STOP = frozenset(" ([{,;")

#: ``full``: for people and pandoc (anchors, escapes, linked citations); ``plain``: for language models.
Flavor = Literal["full", "plain"]


def escape(text: str) -> str:
    """*text* as Markdown that renders as the text itself."""
    return "".join(_escaped(text))


def _escaped(text: str) -> list[str]:
    """Each character of *text*, escaped where it would be markup (one part a character)."""
    parts = ["\\" + ch if ch in _ESCAPED else ch for ch in text]
    if match := _LEADING.match("".join(parts)):  # what would start a list, a heading underline or a definition
        parts[match.end() - 1] = "\\" + parts[match.end() - 1]  # the characters it matches are never escaped
    return parts


def reuse_of(license: Any) -> str:  # noqa: A002 - the column's name
    """``open`` (CC BY, CC BY-SA, CC0), ``restricted`` (another Creative Commons licence: non-commercial or
    no derivatives) or ``unknown`` (no licence, or one that is not a Creative Commons licence)."""
    if is_missing(license) or not str(license).strip():
        return "unknown"
    code = license_code(str(license))
    return "open" if code in _OPEN else "restricted" if code else "unknown"


def _value(value: Any) -> Any:
    if is_missing(value):
        return None
    return value.item() if hasattr(value, "item") else value


def _list(value: Any) -> list[str]:
    return [] if is_missing(value) else [str(v) for v in value]


class _Writer:
    """The blocks of one paper in one flavor; *labels* are the reference labels by ``ref_id``."""

    def __init__(self, flavor: Flavor, labels: Mapping[str, str]) -> None:
        self.plain = flavor == "plain"
        self.labels = labels

    def text(self, text: str) -> str:
        return text if self.plain else escape(text)

    def anchor(self, ident: str, kind: str = "", **data: Any) -> str:
        """An invisible HTML anchor (with a leading space), or nothing in the plain flavor."""
        if self.plain:
            return ""
        attributes = f' id="{html.escape(ident)}"' if ident else ""
        if kind:
            attributes += f' class="{kind}"'
        for name, value in data.items():
            if value not in (None, "", []):
                text = " ".join(value) if isinstance(value, list) else str(value)
                attributes += f' data-{name}="{html.escape(text)}"'
        return f" <a{attributes}></a>"

    def link(self, label: str, rid: str) -> str:
        return label if self.plain else f"[{label}](#{quote(rid, safe='')})"

    def unplaced(self, text: str, citations: list[str]) -> str:
        """*text* (already written) and citations whose place in it is not known (a caption's, a row's without
        offsets): linked at its end; the plain flavor leaves the text as printed, which prints them."""
        return text if self.plain else self.cites(text, citations)

    def cites(self, text: str, citations: list[str]) -> str:
        """*text* (already written) and *citations* after it, each as its bracketed label."""
        marks = [self.link(self.text(f"[{self.labels.get(rid) or rid}]"), rid) for rid in dict.fromkeys(citations)]
        return " ".join([text, *marks]) if text else " ".join(marks)

    def inline(self, text: str, citations: list[str], offsets: list[int]) -> str:
        """*text* with the printed label that ends at each citation's offset linked to its reference: the label
        runs back to a space, an opening bracket, a separator or the citation before (``[3–6]`` links 3 and 6)."""
        parts = _escaped(text) if not self.plain else list(text)
        at: dict[int, str] = {}
        for rid, offset in zip(citations, offsets):
            at[min(max(offset, 0), len(text))] = rid  # ids of a range share the offset of its printed end
        missing: list[str] = []
        previous = 0
        for end, rid in sorted(at.items()):
            start, stop = end, end
            while start > previous and text[start - 1] not in _LABEL_STOP:
                start -= 1
            while start < stop and not text[start].isalnum():
                start += 1
            while stop > start and not text[stop - 1].isalnum():
                stop -= 1
            if start == stop:
                missing.append(rid)
            elif not self.plain:
                parts[start] = "[" + parts[start]
                parts[stop - 1] += f"](#{quote(rid, safe='')})"
            previous = end
        written = "".join(parts)
        return self.cites(written, missing) if missing else written


def _offsets(value: Any, citations: list[str]) -> list[int] | None:
    """The citation offsets of a row when there is one per citation, else ``None``."""
    offsets = [] if is_missing(value) else [int(v) for v in value]
    return offsets if len(offsets) == len(citations) else None


def _front_matter(meta: Mapping[str, Any]) -> str:
    """YAML front matter (pandoc reads it as the metadata); the blank line before its closing ``---`` keeps a
    CommonMark viewer (a notebook's ``Markdown()``) from making the fields above it one big setext heading."""
    lines = [f"{key}: {json.dumps(_value(meta.get(key)), ensure_ascii=False, default=str)}"
             for key in FRONT_MATTER_KEYS]
    return "---\n" + "\n".join(lines) + "\n\n---"


def _levels(section: str) -> list[str]:
    """The heading titles of a section path: one a level, the fifth level and below in one ``######`` heading."""
    titles = section.split(SECTION_SEPARATOR) if section else []
    return titles if len(titles) <= 5 else [*titles[:4], SECTION_SEPARATOR.join(titles[4:])]


def _headings(old: list[str], new: list[str], writer: _Writer) -> list[str]:
    """The headings that take the reader from section path *old* to *new*."""
    if not new:
        return [_BREAK] if old else []
    same = len(commonprefix([old, new]))
    if same == len(new):  # back up to an enclosing section: its heading again
        same -= 1
    return [f"{'#' * (level + 2)} {writer.text(title)}" for level, title in enumerate(new) if level >= same]


def _paragraph_block(row: Mapping[str, Any], writer: _Writer) -> str:
    text, citations = str(_value(row.get("text")) or ""), _list(row.get("citations"))
    offsets = _offsets(row.get("citation_offsets"), citations)
    written = writer.unplaced(writer.text(text), citations) if offsets is None or not citations else writer.inline(
        text, citations, offsets)
    page = _value(row.get("page"))
    anchor = writer.anchor(str(_value(row.get("paragraph_id")) or f"p{int(row['paragraph'])}"),
                           citations=citations, figures=_list(row.get("figures")), tables=_list(row.get("tables")),
                           page=None if page is None else int(page))
    return written + anchor


def _caption(row: Mapping[str, Any], writer: _Writer, ident: str, kind: str, **data: Any) -> str:
    label, caption = _value(row.get("label")), _value(row.get("caption"))
    parts = [f"**{writer.text(str(label))}**"] if label else []
    if caption:
        parts.append(writer.text(str(caption)))
    text = writer.unplaced(" ".join(parts), _list(row.get("citations")))
    return text + writer.anchor(ident, kind, figures=_list(row.get("figures")), tables=_list(row.get("tables")), **data)


def _table_blocks(row: Mapping[str, Any], writer: _Writer) -> list[str]:
    blocks = [_caption(row, writer, str(_value(row.get("table_id")) or ""), "table")]
    if markdown := _value(row.get("markdown")):
        blocks.append(str(markdown))
    if footnotes := _value(row.get("footnotes")):
        blocks.append("> " + writer.text(str(footnotes)) + writer.anchor("", "table-footnotes"))
    return blocks


def _reference_line(row: Mapping[str, Any], writer: _Writer) -> str:
    parts = [f"**{writer.text(str(label))}**"] if (label := _value(row.get("label"))) else []
    if text := _value(row.get("text")):
        parts.append(writer.text(str(text)))
    parts += [f"<{url.format(quote(str(ident), safe='/:;._-()'))}>" for kind, url in _ID_URLS.items()
              if (ident := _value(row.get(kind)))]
    return writer.anchor(str(_value(row.get("ref_id")))).lstrip() + " ".join(parts)


def _license_block(meta: Mapping[str, Any], writer: _Writer) -> str:
    license_ = meta.get("license")
    shown = writer.text(str(license_)) if license_ else _NO_LICENSE
    return f"> **Licence:** {shown}{writer.anchor('', 'license', reuse=meta['reuse'])}"


def _floats_after(paragraphs: pd.DataFrame, floats: list[tuple[str, list[str]]]) -> tuple[dict[int, list[str]],
                                                                                           list[tuple[str, list[str]]]]:
    """Each figure or table after the last paragraph of its section; those of a section without one, apart."""
    last = {str(section): n for n, section in enumerate(paragraphs["section"].fillna(""))}
    placed: dict[int, list[str]] = {}
    orphans: list[tuple[str, list[str]]] = []
    for section, blocks in floats:
        if section in last:
            placed.setdefault(last[section], []).extend(blocks)
        else:
            orphans.append((section, blocks))
    return placed, orphans


def _document(meta: Mapping[str, Any], paragraphs: pd.DataFrame, references: pd.DataFrame,
              floats: list[tuple[str, list[str]]], cited: list[str], writer: _Writer) -> str:
    """The paper's blocks; *cited* are the ref_ids its paragraphs, figures and tables cite."""
    blocks = [_front_matter(meta)]
    if meta.get("title"):
        blocks.append("# " + writer.text(str(meta["title"])))
    blocks.append(_license_block(meta, writer))
    placed, orphans = _floats_after(paragraphs, floats)
    path: list[str] = []
    sections = [(str(_value(row.get("section")) or ""), [_paragraph_block(row, writer), *placed.get(n, [])])
                for n, row in enumerate(paragraphs.to_dict("records"))]
    for section, section_blocks in sections + orphans:
        new = _levels(section)
        if new != path:
            blocks += _headings(path, new, writer)
            path = new
        blocks += section_blocks
    listed = {str(_value(r)) for r in references.get("ref_id", pd.Series(dtype=object)) if _value(r)}
    notes = [_reference_line(row, writer) for row in references.to_dict("records") if _value(row.get("ref_id"))]
    notes += [writer.anchor(rid).lstrip() + _NOT_LISTED for rid in dict.fromkeys(cited) if rid not in listed]
    if notes:
        blocks += ["## References", *notes]
    return "\n\n".join(blocks) + "\n"


def _sha256(path: Any) -> str | None:
    if is_missing(path) or not str(path):
        return None
    try:
        return hashlib.sha256(Path(str(path)).read_bytes()).hexdigest()
    except OSError:
        return None


def _paper_meta(rows: pd.DataFrame, extra: Mapping[str, Any]) -> dict[str, Any]:
    first = rows.iloc[0] if len(rows) else pd.Series(dtype=object)
    meta: dict[str, Any] = {key: _value(first.get(key)) for key in FRONT_MATTER_KEYS if key in rows.columns}
    for key, value in extra.items():  # what the frames lack; never in place of the paper's own ids or licence
        if key in FRONT_MATTER_KEYS and not meta.get(key) and _value(value):
            meta[key] = _value(value)
    meta["reuse"] = reuse_of(meta.get("license"))
    if not meta.get("sha256"):
        meta["sha256"] = _sha256(extra.get("text_path"))
    return meta


def _papers_meta(papers: pd.DataFrame | Mapping[Any, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    if isinstance(papers, pd.DataFrame):
        return {str(row["input"]): row for row in papers.to_dict("records")}
    return {str(key): value for key, value in papers.items()}


def _cited(*frames: pd.DataFrame) -> list[str]:
    return [rid for frame in frames if "citations" in frame for rids in frame["citations"] for rid in _list(rids)]


def to_markdown(bundle: FullText, *, papers: pd.DataFrame | Mapping[Any, Mapping[str, Any]] | None = None,
                flavor: Flavor = "full") -> dict[Any, str]:
    """One Markdown document per paper of *bundle*, keyed by the paper's ``input`` (in the order of the
    paragraphs frame).

    *papers* adds what the frames do not hold, per ``input``: ``title``, ``sha256``, or a ``text_path`` whose
    SHA-256 is computed (an id or licence there fills only one the frames lack); by default the bundle's
    ``outcomes`` (:func:`~paperfetch.fulltext.read` gives each file's ``text_path`` and ``sha256``). The licence
    is always written: ``license`` in the front matter (``null`` when none is known), ``reuse``
    (:func:`reuse_of`) beside it, and a ``> **Licence:**`` line under the title; a paper whose licence does not
    allow reuse is exported with that said, and logged as a warning.

    *flavor* ``"full"`` (for people, notebooks and pandoc) ends each block with an invisible HTML anchor and links
    each citation's printed label to its reference; ``"plain"`` (for language models) writes the same text with
    no anchor, no link and no escape, each citation once, as printed.
    """
    if flavor not in ("full", "plain"):
        raise ValueError(f"flavor must be 'full' or 'plain', not {flavor!r}")
    extra = _papers_meta(bundle.outcomes if papers is None else papers)
    references, tables, figures = by_input(bundle.references), by_input(bundle.tables), by_input(bundle.figures)
    out: dict[Any, str] = {}
    for key, rows in by_input(bundle.paragraphs).items():
        rows = rows.reset_index(drop=True)
        meta = _paper_meta(rows, extra.get(key, {}))
        meta["input"] = rows["input"].iloc[0]
        if meta["reuse"] != "open":
            logger.warning("%s: %s licence (%s); the Markdown says so in its front matter", key, meta["reuse"],
                           meta.get("license") or "none given")
        refs = references.get(key, pd.DataFrame(columns=["ref_id"]))
        writer = _Writer(flavor, {str(_value(r)): str(_value(label)).rstrip(".") for r, label in
                                  zip(refs["ref_id"], refs.get("label", pd.Series(dtype=object)))
                                  if _value(r) and _value(label)})
        figure_rows, table_rows = figures.get(key, pd.DataFrame()), tables.get(key, pd.DataFrame())
        floats = [(str(_value(row.get("section")) or ""), [_caption(row, writer, str(_value(row.get("figure_id")) or ""),
                                                                    "figure", graphic=_value(row.get("graphic")))])
                  for row in figure_rows.to_dict("records")]
        floats += [(str(_value(row.get("section")) or ""), _table_blocks(row, writer))
                   for row in table_rows.to_dict("records")]
        out[rows["input"].iloc[0]] = _document(meta, rows, refs, floats, _cited(rows, figure_rows, table_rows), writer)
    return out
