"""Citations out: any frame with the metadata columns as BibTeX, RIS or CSL-JSON (docs/export.md).
The writers are here: bibtexparser 2, pybtex and rispy can write these formats too, but none escapes, protects
or types the fields the way the readers need; the tests read every file back with those libraries and pandoc.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from paperfetch.cells import is_missing
from paperfetch.export.markup import bibtex_text, csl_text, plain_text
from paperfetch.names import Name, name_text, names_from, transliterate

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["EXPORT_FORMATS", "PREPRINT_SERVERS", "bibtex_escape", "keys", "records", "to_bibtex", "to_csl_json",
           "to_ris", "write_export"]

#: The metadata columns read, where a frame has them (``source`` stands for ``journal`` in a frame of links;
#: ``primaryclass``, an arXiv category such as ``cs.CL``, only from a frame of the user's own: no source gives it).
FIELDS = ("doi", "pmid", "pmcid", "arxiv_id", "title", "year", "journal", "authors", "url", "primaryclass")
#: DOI prefixes and journal names of preprint servers: such a work is exported as a preprint.
PREPRINT_SERVERS = {"10.1101/": "bioRxiv", "10.48550/": "arXiv", "10.21203/": "Research Square",
                    "10.2139/": "SSRN", "10.20944/": "Preprints", "10.31219/": "OSF Preprints"}
_PREPRINT_NAMES = frozenset(n.lower() for n in (*PREPRINT_SERVERS.values(), "medRxiv", "ChemRxiv", "PsyArXiv"))


def _text(value: Any) -> str:
    """A cell as one line of text; empty for None, NaN, NA."""
    return "" if is_missing(value) else " ".join(str(value).split())


def _doi_key(doi: str) -> str:
    return re.sub(r"^(?:https://doi\.org/|http://doi\.org/|https://dx\.doi\.org/)?(?:doi:)?", "", doi.strip().lower())


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """One dict a work (the :data:`FIELDS` found, as text; ``authors`` as names), leaving out rows with no
    identifier and no title, and rows that are the same work as one before: ``same_work_as`` names it, the
    same DOI (case and ``https://doi.org/`` aside), or the same PMID."""
    columns = [c for c in (*FIELDS, "source", "same_work_as", "status", "preprint") if c in frame.columns]
    journal_column = "journal" if "journal" in frame.columns or "status" in frame.columns else "source"
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for row in frame[columns].to_dict(orient="records") if columns else []:
        record: dict[str, Any] = {name: _text(row.get(name)) for name in FIELDS if name != "authors"}
        record["journal"] = _text(row.get(journal_column))
        record["doi"] = _doi_key(record["doi"])
        record["authors"] = names_from(row.get("authors"))
        record["year"] = record["year"].removesuffix(".0")  # a float column's 2020.0
        record["preprint"] = _is_preprint(record, row.get("preprint"))
        if not any(record[k] for k in ("doi", "pmid", "pmcid", "arxiv_id", "title")):
            continue
        same = _text(row.get("same_work_as"))
        keys = {f"doi:{record['doi']}" if record["doi"] else "", f"same:{_doi_key(same)}" if same else "",
                f"same:pmid:{record['pmid']}" if record["pmid"] else ""} - {""}
        if keys & seen:
            continue
        seen |= keys | _aliases(record)
        out.append(record)
    return out


def _aliases(record: dict[str, Any]) -> set[str]:
    """How a later row's ``same_work_as`` may name this work: its DOI, ``PMID:…``, PMCID or arXiv id."""
    names = {record["doi"], f"pmid:{record['pmid']}" if record["pmid"] else "", record["pmcid"].lower(),
             f"arxiv:{record['arxiv_id'].lower()}" if record["arxiv_id"] else ""}
    return {f"same:{n}" for n in names if n}


def _is_preprint(record: dict[str, Any], flag: Any) -> bool:
    if flag is True or _text(flag).lower() in ("true", "1", "yes"):
        return True
    doi = record["doi"]
    if any(doi.startswith(p) for p in PREPRINT_SERVERS) or record["journal"].lower() in _PREPRINT_NAMES:
        return True
    return bool(record["arxiv_id"]) and not record["journal"]  # a journal's article may have an arXiv copy too


def _server(record: dict[str, Any]) -> str:
    """The preprint server's name: the journal column, else the DOI prefix's, else arXiv for an arXiv id."""
    if record["journal"]:
        return record["journal"]
    found = next((name for prefix, name in PREPRINT_SERVERS.items() if record["doi"].startswith(prefix)), "")
    return found or ("arXiv" if record["arxiv_id"] else "")


def _url(record: dict[str, Any]) -> str:
    """The one URL every reader keeps: a preprint's arXiv abstract, the DOI, PubMed, PMC, the arXiv abstract, else
    the row's own."""
    arxiv = f"https://arxiv.org/abs/{record['arxiv_id']}" if record["arxiv_id"] else ""
    in_order = [arxiv if record["preprint"] else "", record["doi"] and f"https://doi.org/{record['doi']}",
                record["pmid"] and f"https://pubmed.ncbi.nlm.nih.gov/{record['pmid']}/",
                record["pmcid"] and f"https://pmc.ncbi.nlm.nih.gov/articles/{record['pmcid']}/", arxiv,
                record["url"] if record["url"].startswith(("http://", "https://")) else ""]
    return next((url for url in in_order if url), "")


def bibtex_escape(text: str) -> str:
    """*text* safe in a braced BibTeX field: specials escaped, braces balanced, no case protection or markup."""
    return bibtex_text(text.replace("<", "\x00"), protect=False).replace("\x00", "<")


def _ascii_word(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", transliterate(text))


_STOP = frozenset({"the", "a", "an", "of", "on", "in", "and", "for", "to", "with", "from", "by", "at", "is", "are"})


def _key(record: dict[str, Any], seen: set[str]) -> str:
    """``smith2020crispr``: the first author's family name (transliterated; ``anon`` without one), the year, the
    title's first word that is not a stop word; ``a``, ``b`` … added when taken. Never starts with a digit."""
    first = record["authors"][0] if record["authors"] else {}
    family = _ascii_word(first.get("family") or first.get("literal", "").split(" ")[0]).lower()
    words = [_ascii_word(w).lower() for w in plain_text(record["title"]).split()]
    title_word = next((w for w in words if w and w not in _STOP and not w.isdigit()), "")
    base = f"{family or 'anon'}{record['year']}{title_word}"
    if base == "anon":
        kind, ident = next(((k, record[k]) for k in ("doi", "pmid", "pmcid", "arxiv_id") if record[k]), ("", "entry"))
        base = "anon" + kind.split("_")[0] + _ascii_word(ident).lower()
    if not base[:1].isalpha():
        base = "anon" + base
    key, n = base, 0
    while key in seen:
        n += 1
        key = base + (chr(ord("a") + n - 1) if n <= 26 else str(n))
    seen.add(key)
    return key


def keys(rows: list[dict[str, Any]]) -> list[str]:
    """The citation keys of *rows*, as :func:`to_bibtex` and :func:`to_csl_json` both write them."""
    seen: set[str] = set()
    return [_key(r, seen) for r in rows]


def _verbatim(text: str) -> str:
    """A DOI or URL as it is, minus braces and backslashes (they would unbalance the field)."""
    return text.replace("{", "").replace("}", "").replace("\\", "")


def _bibtex_name(name: Name) -> str:
    """``Lloyd, C. J.``, ``van der Berg, K.``, ``Smith, Jr., J.`` or ``{World Health Organization}`` (one name)."""
    if "literal" in name:
        return "{" + bibtex_escape(name["literal"]) + "}"
    family = bibtex_escape(name.get("family", ""))
    family = "{" + family + "}" if " " in family or family.lower() == "and" else family
    particle = name.get("non-dropping-particle", "")
    last = f"{bibtex_escape(particle)} {family}" if particle else family
    given = bibtex_escape(name.get("given", ""))
    given = " ".join("{" + w + "}" if w.lower() == "and" else w for w in given.split(" ")) if given else ""
    if name.get("suffix"):
        return f"{last}, {bibtex_escape(name['suffix'])}, {given}"
    return f"{last}, {given}" if given else last


def _bibtex_entry(r: dict[str, Any], key: str) -> str:
    """One entry; a field whose value is empty is left out."""
    eprint: list[tuple[str, str]] = []
    if r["arxiv_id"]:
        eprint = [("eprint", _verbatim(r["arxiv_id"])), ("archiveprefix", "arXiv"), ("eprinttype", "arxiv"),
                  ("primaryclass", _verbatim(r["primaryclass"]))]
    elif r["pmid"]:
        eprint = [("eprint", _verbatim(r["pmid"])), ("eprinttype", "pubmed")]
    fields = [("author", " and ".join(_bibtex_name(n) for n in r["authors"])), ("title", bibtex_text(r["title"])),
              ("howpublished", bibtex_escape(_server(r)) if r["preprint"] else ""),
              ("journal", "" if r["preprint"] else bibtex_text(r["journal"], protect=False)),
              ("year", bibtex_escape(r["year"])), ("doi", _verbatim(r["doi"])), ("url", _verbatim(_url(r))), *eprint,
              ("pmid", _verbatim(r["pmid"])), ("pmcid", _verbatim(r["pmcid"]))]
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields if value)
    return f"@{'article' if r['journal'] and not r['preprint'] else 'misc'}{{{key},\n{body}\n}}\n"


def to_bibtex(frame: pd.DataFrame) -> str:
    """The works as BibTeX: ``@article`` with a journal, ``@misc`` with ``howpublished`` for a preprint (as Better
    BibTeX writes Zotero's preprints) and for the rest (docs/export.md has the field table)."""
    rows = records(frame)
    return "\n".join(_bibtex_entry(r, k) for r, k in zip(rows, keys(rows)))


def to_ris(frame: pd.DataFrame) -> str:
    """The works as RIS records (``JOUR`` with a journal, ``UNPB`` for a preprint, ``GEN`` else), each ended by
    ``ER  -``; PMID in ``AN`` (and ``PMID:`` in ``C2`` beside the PMCID), the one URL in ``UR``."""
    out = []
    for r in records(frame):
        kind = "UNPB" if r["preprint"] else ("JOUR" if r["journal"] else "GEN")
        journal = _server(r) if r["preprint"] else r["journal"]
        lines = [("TY", kind), *(("AU", name_text(n)) for n in r["authors"]), ("TI", plain_text(r["title"])),
                 ("T2", plain_text(journal)), ("PY", r["year"]), ("DO", r["doi"]), ("UR", _url(r)),
                 ("AN", f"PMID:{r['pmid']}" if r["pmid"] else ""), ("C2", r["pmcid"])]
        out.append("".join(f"{tag}  - {value}\n" for tag, value in lines if value) + "ER  - \n")  # empty ones left out
    return "\n".join(out)


def _csl_name(name: Name) -> dict[str, str]:
    return {k: name[k] for k in ("family", "given", "non-dropping-particle", "suffix", "literal") if name.get(k)}


def to_csl_json(frame: pd.DataFrame) -> str:
    """The works as CSL-JSON (the input of citeproc, pandoc and Zotero): ``article-journal``, or ``article`` with
    ``genre: preprint`` for a preprint (Zotero's mapping of its preprint type); titles as CSL rich text."""
    rows = records(frame)
    items = []
    for r, key in zip(rows, keys(rows)):
        item: dict[str, Any] = {  # in this order; the empty ones are left out
            "id": key, "type": "article" if r["preprint"] or not r["journal"] else "article-journal",
            "title": csl_text(r["title"]), "genre": "preprint" if r["preprint"] else "",
            "publisher": _server(r) if r["preprint"] else "", "container-title": "" if r["preprint"] else csl_text(r["journal"]),
            "author": [_csl_name(n) for n in r["authors"]],
            "issued": {"date-parts": [[int(r["year"])]]} if r["year"].isdigit() else None,
            "DOI": r["doi"], "PMID": r["pmid"], "PMCID": r["pmcid"], "URL": _url(r),
            "number": f"arXiv:{r['arxiv_id']}" if r["arxiv_id"] else ""}
        items.append({name: value for name, value in item.items() if value})
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
