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
    assert first["doi"] == "10.1000/a_b%c" and first["author"] == "Smith, J. A. and {van der Berg}, K."
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
    assert "url = {https://arxiv.org/abs/2101.00001v2}" in entries[2] and entries[2].startswith("misc{")
    with_class = to_bibtex(EXPORT_ROWS.assign(primaryclass=[None, None, "cs.CL", None]))
    assert "primaryclass = {cs.CL}" in with_class


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
    assert items[0]["author"][1] == {"family": "van der Berg", "given": "K."}
    assert items[0]["issued"] == {"date-parts": [[2020]]} and items[1]["title"] == "Zweite Arbeit über Ähnliches"
    assert len({i["id"] for i in items}) == 3


def test_title_markup_is_read_once_and_written_per_format():
    from paperfetch.export.markup import bibtex_text, csl_text, plain_text

    math = ('<mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML"><mml:msub><mml:mi>x</mml:mi><mml:mn>2</mml:mn>'
            '</mml:msub><mml:mo>+</mml:mo><mml:mfrac><mml:mn>1</mml:mn><mml:mn>2</mml:mn></mml:mfrac></mml:math> rule')
    assert csl_text(math) == "x<sub>2</sub>+1/2 rule" and bibtex_text(math) == r"x\textsubscript{2}+1/2 rule"
    assert plain_text("p<0.05 and a<b and c>d") == "p<0.05 and a<b and c>d"  # no tag: text
    assert plain_text("An <mml:math><mml:mi>x</mml:mi> left open") == "An x left open"
    assert plain_text("&amp;lt;i&amp;gt; R&amp;D") == "&lt;i&gt; R&D"  # entities decoded once
    assert csl_text("<scp>Dna</scp> of <jats:italic>E. coli</jats:italic>") == \
        '<span style="font-variant:small-caps;">Dna</span> of <i>E. coli</i>'
    assert bibtex_text("a {b} c } d -- e") == r"a \{b\} c \textbraceright{} d -{}- e"
    assert bibtex_text("EZH2 in Germany") == "{EZH}2 in {Germany}" and bibtex_text("Germany") == "Germany"


def test_a_full_texts_references_export_with_their_authors_not_their_editors():
    """The JATS ``<ref>``'s ``<name>``, ``<string-name>`` and ``<collab>`` reach the references frame's ``authors``
    and so every export of it; a ``person-group`` of editors does not."""
    from paperfetch.export import to_bibtex, to_csl_json, to_ris
    from paperfetch.fulltext import parse_jats, references_frame
    from paperfetch.fulltext.frame import reference_rows

    jats = b"""<article><front><article-meta><title-group><article-title>Citing</article-title></title-group>
    </article-meta></front><body><p>x</p></body><back><ref-list>
    <ref id="r1"><element-citation publication-type="journal"><person-group person-group-type="author">
      <name><surname>Aivazian</surname><given-names>D</given-names></name><name><surname>Serrano</surname>
      <given-names>RL</given-names></name><collab>WHO Study Group</collab></person-group>
      <article-title>Cited one</article-title><source>J Cell Biol</source><year>2006</year>
      <pub-id pub-id-type="doi">10.1000/one</pub-id></element-citation></ref>
    <ref id="r2"><mixed-citation publication-type="book"><string-name><surname>Avery</surname>
      <given-names>SV</given-names></string-name>, <string-name>Longo D</string-name>. In:
      <person-group person-group-type="editor"><name><surname>Editor</surname><given-names>E</given-names></name>
      </person-group>. <chapter-title>A chapter</chapter-title>. <source>A Book</source>. <year>2010</year>.
      </mixed-citation></ref>
    <ref id="r3"><mixed-citation>Anonymous. A note. 1999.</mixed-citation></ref>
    </ref-list></back></article>"""
    refs = references_frame(reference_rows(parse_jats(jats), input="10.1000/citing"))
    assert refs["authors"].tolist() == [
        [{"family": "Aivazian", "given": "D."}, {"family": "Serrano", "given": "R. L."}, {"literal": "WHO Study Group"}],
        [{"family": "Avery", "given": "S. V."}, {"family": "Longo", "given": "D."}],
        None,
    ]
    bibtex = to_bibtex(refs)
    assert "author = {Aivazian, D. and Serrano, R. L. and {WHO Study Group}}" in bibtex
    assert "author = {Avery, S. V. and Longo, D.}" in bibtex and "Editor" not in bibtex
    assert "AU  - Aivazian, D." in to_ris(refs) and "AU  - Longo, D." in to_ris(refs)
    csl = json.loads(to_csl_json(refs))
    assert [a.get("family") for a in csl[1]["author"]] == ["Avery", "Longo"]
