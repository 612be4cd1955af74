"""Citations out: any frame with the metadata columns as BibTeX, RIS or CSL-JSON (docs/outcomes.md, "Export").
Written here: bibtexparser 2, rispy and citeproc-py read or format these, which paperfetch never does.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["EXPORT_FORMATS", "bibtex_escape", "records", "to_bibtex", "to_csl_json", "to_ris", "write_export"]

#: The metadata columns read, where a frame has them.
FIELDS = ("doi", "pmid", "pmcid", "arxiv_id", "title", "year", "journal", "authors")

_BIBTEX_SPECIALS = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
    "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}
_BIBTEX_RE = re.compile("|".join(re.escape(c) for c in _BIBTEX_SPECIALS))


def _text(value: Any) -> str:
    """A cell as one line of text; empty for None, NaN, NA."""
    if value is None:
        return ""
    try:
        if value != value:  # NaN, NaT
            return ""
    except (TypeError, ValueError):  # pd.NA
        return ""
    return " ".join(str(value).split())


def _authors(value: Any) -> list[tuple[str, str]]:
    """``"Smith JA; van der Berg K"`` (or a list, or "Family, Given") → ``[("Smith", "JA"), ("van der Berg", "K")]``."""
    items = value if isinstance(value, (list, tuple)) else _text(value).split(";")
    people = []
    for item in items:
        name = _text(item)
        if not name:
            continue
        if "," in name:
            family, _, given = name.partition(",")
        elif " " in name and name.rsplit(" ", 1)[1].isupper() and len(name.rsplit(" ", 1)[1]) <= 3:
            family, given = name.rsplit(" ", 1)  # PubMed's "Last FM"
        else:
            family, given = name, ""
        people.append((family.strip(), given.strip()))
    return people


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """One dict a row (the :data:`FIELDS` found, as text), leaving out rows with no identifier and no title."""
    columns = [c for c in FIELDS if c in frame.columns]
    out = []
    for row in frame[columns].to_dict(orient="records") if columns else []:
        record: dict[str, Any] = {name: _text(row.get(name)) for name in FIELDS if name != "authors"}
        record["authors"] = _authors(row.get("authors"))
        year = record["year"]
        record["year"] = year[:-2] if year.endswith(".0") else year
        if any(record[k] for k in ("doi", "pmid", "pmcid", "arxiv_id", "title")):
            out.append(record)
    return out


def bibtex_escape(text: str) -> str:
    """*text* safe in a braced BibTeX field: every special character escaped."""
    return _BIBTEX_RE.sub(lambda m: _BIBTEX_SPECIALS[m.group(0)], text)


def _ascii_word(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9]", "", plain)


def _key(record: dict[str, Any], seen: set[str]) -> str:
    """``smith2020crispr``; ``doi10.1234abc`` without author and year; ``a``, ``b`` … added when taken."""
    family = _ascii_word(record["authors"][0][0]).lower() if record["authors"] else ""
    title_word = next((_ascii_word(w).lower() for w in record["title"].split() if len(_ascii_word(w)) > 3), "")
    base = f"{family}{record['year']}{title_word}" if family or record["year"] else ""
    if not base:
        kind, ident = next(((k, record[k]) for k in ("doi", "pmid", "pmcid", "arxiv_id") if record[k]), ("", "entry"))
        base = (kind.split("_")[0] + _ascii_word(ident).lower()) or "entry"
    key, n = base, 0
    while key in seen:
        n += 1
        key = base + (chr(ord("a") + n - 1) if n <= 26 else str(n))
    seen.add(key)
    return key


def _verbatim(text: str) -> str:
    """A DOI or URL as it is, minus braces (they would unbalance the field)."""
    return text.replace("{", "").replace("}", "")


def to_bibtex(frame: pd.DataFrame) -> str:
    """The rows as BibTeX entries: ``@article`` with a journal, ``@misc`` without."""
    seen: set[str] = set()
    entries = []
    for r in records(frame):
        fields: list[tuple[str, str]] = []
        if r["authors"]:
            names = [f"{family}, {given}" if given else family for family, given in r["authors"]]
            fields.append(("author", bibtex_escape(" and ".join(names))))
        for name, value in (("title", r["title"]), ("journal", r["journal"]), ("year", r["year"])):
            if value:
                fields.append((name, bibtex_escape(value)))
        if r["doi"]:
            fields.append(("doi", _verbatim(r["doi"])))
        if r["pmid"]:
            fields.append(("pmid", bibtex_escape(r["pmid"])))
        if r["pmcid"]:
            fields.append(("pmcid", bibtex_escape(r["pmcid"])))
        if r["arxiv_id"]:
            fields += [("eprint", _verbatim(r["arxiv_id"])), ("archiveprefix", "arXiv")]
        kind = "article" if r["journal"] else "misc"
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        entries.append(f"@{kind}{{{_key(r, seen)},\n{body}\n}}\n")
    return "\n".join(entries)


def to_ris(frame: pd.DataFrame) -> str:
    """The rows as RIS records (``TY  - JOUR`` with a journal, ``GEN`` without), each ended by ``ER  -``."""
    out = []
    for r in records(frame):
        lines = [("TY", "JOUR" if r["journal"] else "GEN")]
        lines += [("AU", f"{family}, {given}" if given else family) for family, given in r["authors"]]
        for tag, value in (("TI", r["title"]), ("T2", r["journal"]), ("PY", r["year"]), ("DO", r["doi"]),
                           ("AN", f"PMID:{r['pmid']}" if r["pmid"] else ""), ("C2", r["pmcid"])):
            if value:
                lines.append((tag, value))
        if r["arxiv_id"]:
            lines.append(("UR", f"https://arxiv.org/abs/{r['arxiv_id']}"))
        out.append("".join(f"{tag}  - {value}\n" for tag, value in lines) + "ER  - \n")
    return "\n".join(out)


def to_csl_json(frame: pd.DataFrame) -> str:
    """The rows as CSL-JSON (the input of citeproc, Pandoc and Zotero): one item a row."""
    seen: set[str] = set()
    items = []
    for r in records(frame):
        item: dict[str, Any] = {"id": _key(r, seen), "type": "article-journal" if r["journal"] else "article"}
        if r["title"]:
            item["title"] = r["title"]
        if r["journal"]:
            item["container-title"] = r["journal"]
        if r["authors"]:
            item["author"] = [{"family": f, **({"given": g} if g else {})} for f, g in r["authors"]]
        if r["year"].isdigit():
            item["issued"] = {"date-parts": [[int(r["year"])]]}
        for name, key in (("doi", "DOI"), ("pmid", "PMID"), ("pmcid", "PMCID")):
            if r[name]:
                item[key] = r[name]
        if r["arxiv_id"]:
            item["URL"] = f"https://arxiv.org/abs/{r['arxiv_id']}"
            item["number"] = f"arXiv:{r['arxiv_id']}"
        items.append(item)
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n"


#: ``--export`` file extensions and their writers.
EXPORT_FORMATS: dict[str, Callable[[Any], str]] = {".bib": to_bibtex, ".ris": to_ris, ".json": to_csl_json}


def write_export(frame: pd.DataFrame, path: str | Path) -> int:
    """Write *frame* to *path* in the format its extension names (:data:`EXPORT_FORMATS`); the entries written."""
    path = Path(path)
    writer = EXPORT_FORMATS.get(path.suffix.lower())
    if writer is None:
        raise ValueError(f"unknown export format {path.suffix or '(none)'!r}; use {', '.join(EXPORT_FORMATS)}")
    path.write_text(writer(frame), encoding="utf-8")
    return len(records(frame))
