"""``paperfetch.export``: BibTeX, RIS and CSL JSON from a frame of rows (docs/outcomes.md, "Export")."""

from __future__ import annotations

import json

import pandas as pd


def _bib_fields(entry: str) -> dict:
    """The fields of one BibTeX entry written by to_bibtex (one `name = {value}` a line)."""
    fields = {}
    for line in entry.splitlines()[1:-1]:
        name, _, value = line.strip().rstrip(",").partition(" = ")
        assert value.startswith("{") and value.endswith("}"), line
        fields[name] = value[1:-1]
    return fields


def _unescape(text: str) -> str:
    for raw, escaped in (("\\", r"\textbackslash{}"), ("~", r"\textasciitilde{}"), ("^", r"\textasciicircum{}")):
        text = text.replace(escaped, raw)
    for c in "{}&%$#_":
        text = text.replace("\\" + c, c)
    return text


EXPORT_ROWS = pd.DataFrame({
    "doi": ["10.1000/a_b%c", "10.1000/two", None, None],
    "pmid": ["123", None, "456", None],
    "pmcid": [None, "PMC99", None, None],
    "arxiv_id": [None, None, "2101.00001v2", None],
    "title": ["50% of {genes} & #tags_x ~ ^caret \\ back", "Zweite Arbeit über Ähnliches", "Same key", None],
    "year": [2020, None, 2020, None],
    "journal": ["Nature", None, None, None],
    "authors": ["Smith JA; van der Berg K", None, "Smith JA", None],
})


def test_bibtex_escapes_every_special_and_keeps_dois_verbatim():
    from paperfetch.export import to_bibtex

    text = to_bibtex(EXPORT_ROWS)
    entries = [e for e in text.split("\n@") if e.strip()]
    assert len(entries) == 3  # the row with neither identifier nor title is left out
    first = _bib_fields(entries[0])
    assert _unescape(first["title"]) == EXPORT_ROWS["title"][0]  # round trip
    assert first["doi"] == "10.1000/a_b%c" and first["author"] == "Smith, J. A. and van der Berg, K."
    for entry in entries:  # braces balance in every entry: an escaped brace is not counted
        body = entry.replace("\\{", "").replace("\\}", "")
        depth = 0
        for ch in body:
            depth += {"{": 1, "}": -1}.get(ch, 0)
            assert depth >= 0
        assert depth == 0
    keys = [e.split("{", 1)[1].split(",", 1)[0] for e in entries]
    assert len(set(keys)) == len(keys) and keys[0] == "smith2020genes" and keys[2].startswith("smith2020same")
    assert entries[0].startswith("@article{") and "misc{" in entries[1]
    assert "eprint = {2101.00001v2}" in entries[2] and "archiveprefix = {arXiv}" in entries[2]


def test_ris_and_csl_json_carry_the_same_fields():
    from paperfetch.export import to_csl_json, to_ris

    records = [r for r in to_ris(EXPORT_ROWS).split("ER  - \n") if r.strip()]
    assert len(records) == 3
    tags = [dict((line[:2], line[6:]) for line in r.strip().splitlines()) for r in records]
    assert tags[0]["TY"] == "JOUR" and tags[0]["TI"] == EXPORT_ROWS["title"][0] and tags[0]["DO"] == "10.1000/a_b%c"
    assert tags[0]["AN"] == "PMID:123" and tags[1]["C2"] == "PMC99" and tags[1]["TY"] == "GEN"
    assert all(len(line) >= 6 and line[2:6] == "  - " for r in records for line in r.strip().splitlines())
    items = json.loads(to_csl_json(EXPORT_ROWS))
    assert [i.get("DOI") for i in items] == ["10.1000/a_b%c", "10.1000/two", None]
    assert items[0]["author"][1] == {"family": "Berg", "given": "K.", "non-dropping-particle": "van der"}
    assert items[0]["issued"] == {"date-parts": [[2020]]} and items[1]["title"] == "Zweite Arbeit über Ähnliches"
    assert len({i["id"] for i in items}) == 3
