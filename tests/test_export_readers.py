"""The exports read back by the readers people use: bibtexparser 2, pybtex (parser and ``plain`` style), rispy,
the CSL-JSON schema and ``pandoc --citeproc`` (Debian's pandoc; skipped without it unless CI or
PAPERFETCH_REQUIRE_PANDOC is set, as .ci/run does).

The hard set is built from recorded bodies in shared/fixtures/real (PubMed EFetch with ``ForeName``, Crossref
works, Europe PMC's core search, hawc's six PubMed hits), plus SYNTHETIC records for the
cases no recorded body shows: ``HARD_EFETCH`` (initials only, ``CollectiveName``, particles, a suffix) and
``HARD_CROSSREF`` (titles with ``<i>``/``<sub>``/``<sup>``/``<scp>``/MathML/entities, a ``name``-only author) and
``HARD_ROWS`` (unbalanced braces, TeX specials, ``--``, capitals, non-Latin names, no authors, preprints, a DOI
given twice). Each reader reads each whole file once.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pandas as pd
import pytest

from paperfetch.export import keys, records, to_bibtex, to_csl_json, to_ris
from paperfetch.export.markup import plain_text
from paperfetch.ids import parse_identifier
from paperfetch.names import from_openalex
from paperfetch.sources.base import RequestSpec
from paperfetch.sources.crossref import CrossrefSource
from paperfetch.sources.europepmc import EuropePMCSource
from paperfetch.sources.pubmed import parse_efetch
from tests._quick import slow_services, unpaced, unpaced_config

CSL_SCHEMA = Path(__file__).resolve().parent / "data" / "csl" / "csl-data.json"
APA_CSL = Path(__file__).resolve().parent / "data" / "csl" / "apa.csl"
PANDOC = shutil.which("pandoc")

#: SYNTHETIC: PubMed authors no recorded body shows together.
HARD_EFETCH = b"""<?xml version="1.0"?><PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>99000001</PMID><Article>
<Journal><JournalIssue><PubDate><Year>2019</Year></PubDate></JournalIssue><Title>The Lancet</Title></Journal>
<ArticleTitle>Exposure to PM<sub>2.5</sub> in Germany and the R&amp;D of WHO guidance</ArticleTitle><AuthorList>
<Author><LastName>Lloyd</LastName><Initials>CJ</Initials></Author>
<Author><LastName>Glaudemans</LastName><Initials>AWJM</Initials></Author>
<Author><CollectiveName>World Health Organization</CollectiveName></Author>
<Author><LastName>van der Berg</LastName><ForeName>Karin</ForeName><Initials>K</Initials></Author>
<Author><LastName>Smith</LastName><ForeName>John A</ForeName><Initials>JA</Initials><Suffix>Jr</Suffix></Author>
</AuthorList></Article></MedlineCitation><PubmedData><ArticleIdList><ArticleId IdType="pubmed">99000001</ArticleId>
<ArticleId IdType="pmc">PMC9900001</ArticleId></ArticleIdList></PubmedData></PubmedArticle></PubmedArticleSet>"""

#: SYNTHETIC: Crossref works with the markup Crossref titles carry.
HARD_CROSSREF = [
    {"DOI": "10.9999/markup.1", "title": ["<i>Escherichia coli</i> in H<sub>2</sub>O at 10<sup>5</sup> cells &amp; <scp>Dna</scp> repair"],
     "container-title": ["Journal of <i>Bacteriology</i>"], "issued": {"date-parts": [[2021]]},
     "author": [{"name": "Bill and Melinda Gates Foundation"}, {"given": "María", "family": "de la Cruz"}]},
    {"DOI": "10.9999/markup.2", "title": ["Scaling as <mml:math xmlns:mml=\"http://www.w3.org/1998/Math/MathML\"><mml:msup>"
                                          "<mml:mi>n</mml:mi><mml:mn>2</mml:mn></mml:msup></mml:math> in <jats:italic>vivo</jats:italic>"],
     "container-title": ["Physical Review E"], "issued": {"date-parts": [[2018]]},
     "author": [{"given": "Ludwig", "family": "van Beethoven"}, {"given": "Иван", "family": "Иванов"}]},
]

#: SYNTHETIC: the rest of the hard cases, as rows of a frame.
HARD_ROWS = [
    {"doi": "10.9999/brace", "title": "Parsing the } character: an unmatched { and a $5 #1 50% a_b ~x^2 \\ back",
     "year": 2020, "journal": "Software: Practice and Experience", "authors": [{"family": "Knuth", "given": "D. E."}]},
    {"doi": "10.9999/dash", "title": "α-Synuclein -- the R&D of CRISPR in Germany", "year": 2022, "journal": "Brain",
     "authors": [{"family": "李", "given": "小龙"}, {"family": "Øster", "given": "Åse"}]},
    {"doi": "10.9999/anon", "title": "2021 fast methods", "year": 2021, "journal": "Methods"},
    {"doi": "10.1101/2024.04.01.587366", "title": "A bioRxiv preprint of Cell Atlases", "year": 2024, "journal": "bioRxiv",
     "authors": [{"family": "Doe", "given": "J."}]},
    {"arxiv_id": "2101.00001v2", "title": "Attention over Transformers", "year": 2021,
     "authors": [{"family": "Vaswani", "given": "A."}]},
    {"pmid": "31452104", "title": "A PubMed-only record", "year": 2019, "journal": "Cureus", "authors": "Smith JA; Doe K"},
    {"doi": "HTTPS://DOI.ORG/10.9999/DASH", "title": "α-Synuclein -- the R&D of CRISPR in Germany", "year": 2022},
    # PubMed-style names whose initial is not ASCII, an em dash written as TeX's ---
    {"doi": "10.9999/emdash", "title": "Ozone---a review of Turkish and Greek sites", "year": 2020, "journal": "Ozone",
     "authors": "Çelik Ö; Παπαδόπουλος Γ; Øster ÅB"},
    # a journal article Semantic Scholar also gives an arXiv id for: an article, its DOI the link
    {"doi": "10.9999/nature.1", "arxiv_id": "2001.00002", "title": "Quantum supremacy in Nature", "year": 2019,
     "journal": "Nature", "authors": [from_openalex({"author": {"display_name": "Ruud van der Meulen"}}),
                                      from_openalex({"raw_author_name": "Maria dos Santos"})]},
    # the PubMed-only record again, no DOI: the same work
    {"pmid": "31452104", "title": "A PubMed-only record (again)", "year": 2019, "journal": "Cureus"},
]

EXPECTED_TYPES = {"article": ("article", "article-journal", "JOUR"), "preprint": ("misc", "article", "UNPB"),
                  "misc": ("misc", "article", "GEN")}


def _spec(doi: str) -> RequestSpec:
    return RequestSpec(path="", params={}, ids=(parse_identifier(doi),))


def _record_row(record) -> dict:
    return {k: getattr(record, k) for k in ("doi", "pmid", "pmcid", "title", "year", "journal", "authors")}


@pytest.fixture(scope="module")
def hard_frame(real_fixtures: Path) -> pd.DataFrame:
    return build_hard_frame(real_fixtures)


def build_hard_frame(fixtures: Path) -> pd.DataFrame:
    """The hard set: recorded bodies read by the sources' own parsers, then the synthetic rows."""
    rows = []
    bodies = [(fixtures / "ncbi_eutils/efetch.fcgi__db-pubmed_retmode-xml_id-19008416,18927361,18787170,18487186,18239126,18239125.xml").read_bytes(), HARD_EFETCH]
    bodies += [p.read_bytes() for p in sorted((fixtures / "ncbi_eutils").glob("efetch_pubmed_3*.xml"))]
    for body in bodies:
        rows += [{**{k: getattr(h, k) for k in ("pmid", "doi", "pmcid", "title", "journal", "year")}, "authors": h.names}
                 for h in parse_efetch(body)]
    crossref = CrossrefSource()
    for path in sorted((fixtures / "crossref").glob("works_10.*.body.json")):
        body = path.read_bytes()
        doi = json.loads(body)["message"]["DOI"]
        rows += [_record_row(r) for r in crossref.parse(body, _spec(doi)).values()]
    for work in HARD_CROSSREF:
        body = json.dumps({"status": "ok", "message": work}).encode()
        rows += [_record_row(r) for r in crossref.parse(body, _spec(work["DOI"])).values()]
    epmc = EuropePMCSource()
    results = json.loads((fixtures / "europepmc/search_cancer_resultType-core_pageSize25.json").read_bytes())
    rows += [_record_row(epmc._record(r)) for r in results["resultList"]["result"][:10]]
    rows += HARD_ROWS
    return pd.DataFrame(rows)


def _exports(frame: pd.DataFrame) -> dict:
    rows = records(frame)
    return {"rows": rows, "keys": keys(rows), "bib": to_bibtex(frame), "ris": to_ris(frame), "json": to_csl_json(frame)}


@pytest.fixture(scope="module")
def hard_exports(hard_frame: pd.DataFrame) -> dict:
    return _exports(hard_frame)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory):
    """The demo world's download (its 25 inputs), search, references and citations frames, and the world."""
    from paperfetch import Retriever
    from paperfetch.demo import DEMO_INPUTS, DemoWorld
    from paperfetch.demo.research import SEARCH_QUERY, science_papers

    folder = tmp_path_factory.mktemp("demo")
    with DemoWorld(base_ip=215) as world:
        with Retriever(email="you@uni.example", out_dir=folder / "pdfs", endpoints=world.endpoints, progress=False,
                       verbosity=0, delay_min_s=0, delay_max_s=0, cache=folder / "cache.sqlite",
                       http_options={"host_intervals": unpaced(world.endpoints)}) as r:
            doi = science_papers()[0]["doi"]
            frames = {"download": r.download(DEMO_INPUTS), "search": r.search_pubmed(SEARCH_QUERY, max_results=20),
                      "references": r.references(doi), "citations": r.citations(doi)}
        yield {"world": world, "frames": frames, "folder": folder}


@pytest.fixture(scope="module", params=["hard", "download", "search", "references", "citations"])
def exports(request: pytest.FixtureRequest) -> dict:
    if request.param == "hard":
        return request.getfixturevalue("hard_exports")
    return {**_exports(request.getfixturevalue("demo")["frames"][request.param]), "case": request.param}


# ---------------------------------------------------------------------- what each record should read as
def _norm(text: str) -> str:
    # curly quotes as straight ones, and pylatexenc's circumflex (U+02C6 for \\textasciicircum) as ^
    text = unicodedata.normalize("NFC", text).replace("\u2019", "'").replace("\u2018", "'").replace("\u02c6", "^")
    return " ".join(text.replace("\u201c", '"').replace("\u201d", '"').split())


def _expected(row: dict) -> dict:
    from paperfetch.export import _server, _url

    kind = "preprint" if row["preprint"] else ("article" if row["journal"] else "misc")
    title = _norm(plain_text(row["title"]))
    return {"title": title, "bib_title": title.replace("---", "\u2014"), "year": row["year"], "doi": row["doi"], "url": _url(row),
            "journal": _norm(plain_text(_server(row) if row["preprint"] else row["journal"])), "kind": kind,
            "authors": [_name_tuple(n) for n in row["authors"]], "pmid": row["pmid"], "pmcid": row["pmcid"]}


def _name_tuple(name: dict) -> tuple:
    """(literal) or (family, given, particle, suffix), as every reader can be compared on: a particle a reader
    splits off (pandoc's citeproc does, even from a braced family) is read as part of the family name."""
    if name.get("literal"):
        return (_norm(name["literal"]),)
    particle = name.get("non-dropping-particle") or name.get("dropping-particle") or ""
    family = " ".join(p for p in (particle, name.get("family", "")) if p)
    return (_norm(family), _norm(name.get("given", "")), "", _norm(name.get("suffix", "")))


def _unbraced(text: str) -> str:
    """A title as readers that drop ``\\textbraceleft{}`` show it (pandoc 2.17, pylatexenc): lone braces gone."""
    return _norm(text.replace("{", "").replace("}", ""))


MARKUP_RE = re.compile(r"</?(i|b|sub|sup|scp|span|mml:\w+|jats:\w+|italic)\b|&(amp|lt|gt|quot|#\d+);")


def test_the_hard_set_holds_the_cases_and_one_entry_per_work(hard_exports: dict) -> None:
    exports = hard_exports
    rows, bib = exports["rows"], exports["bib"]
    names = [n for r in rows for n in r["authors"]]
    assert {"literal": "World Health Organization"} in names and {"literal": "Bill and Melinda Gates Foundation"} in names
    assert {"family": "Lloyd", "given": "C. J."} in names and {"family": "Glaudemans", "given": "A. W. J. M."} in names
    assert {"family": "van der Berg", "given": "Karin"} in names
    assert {"family": "Makris", "given": "Eleftherios A."} not in names  # OpenAlex is not in this set
    assert sum(1 for n in names if n.get("given", "").endswith(".")) > 20  # recorded ForeName initials dotted
    assert [r["doi"] for r in rows].count("10.9999/dash") == 1  # the same DOI twice: one entry
    assert len(exports["keys"]) == len(set(exports["keys"])) and all(k[0].isalpha() for k in exports["keys"])
    assert "anon2021fast" in exports["keys"] and "u674e2022asynuclein" in exports["keys"]  # 李: U+674E
    assert keys(records(pd.DataFrame(HARD_ROWS))) == keys(records(pd.DataFrame(HARD_ROWS)))  # stable
    assert [i["id"] for i in json.loads(exports["json"])] == exports["keys"]  # the same keys in CSL-JSON
    assert bib.count("@") == len(rows)
    depth = 0
    for ch in bib:  # BibTeX counts every brace, escaped or not
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    assert r"\textbraceright{}" in bib and "-{}-" in bib and r"\textit{Escherichia coli}" in bib
    assert "{Germany}" in bib and "{R}\\&{D}" in bib and "{α}-{Synuclein}" in bib and "{EZH}2" in bib


def test_names_dashes_types_and_duplicates_read_back_as_meant_in_every_reader(hard_exports: dict) -> None:
    """Non-ASCII PubMed initials, Greek names, ``---``, a journal article with an arXiv id, a PMID given twice
    and particles, as bibtexparser, pybtex, rispy, CSL-JSON and pandoc read them."""
    import bibtexparser
    import rispy
    from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors, SplitNameParts
    from pybtex.database import parse_string

    bib, ris = hard_exports["bib"], hard_exports["ris"]
    library = bibtexparser.parse_string(bib, append_middleware=[LatexDecodingMiddleware()])
    people = bibtexparser.parse_string(bib, append_middleware=[SeparateCoAuthors(), SplitNameParts()])
    by_doi = {e.fields_dict["doi"].value: (e, n) for e, n in zip(library.entries, people.entries) if "doi" in e}
    entry, named = by_doi["10.9999/emdash"]
    assert entry["title"] == "Ozone—a review of Turkish and Greek sites"
    assert [(" ".join(n.last), " ".join(n.first)) for n in named["author"]] == [
        ("Çelik", "Ö."), ("Παπαδόπουλος", "Γ."), ("Øster", "Å. B.")]
    entry, named = by_doi["10.9999/nature.1"]
    assert entry.entry_type == "article" and entry["journal"] == "Nature"
    assert entry["url"] == "https://doi.org/10.9999/nature.1" and entry["eprint"] == "2001.00002"
    assert [(" ".join(n.last).strip("{}"), " ".join(n.first)) for n in named["author"]] == [
        ("van der Meulen", "Ruud"), ("dos Santos", "Maria")]
    pybtex = {e.fields["doi"]: e for e in parse_string(bib, "bibtex").entries.values() if "doi" in e.fields}
    assert pybtex["10.9999/emdash"].fields["title"].startswith("Ozone—a review")
    assert [str(p) for p in pybtex["10.9999/emdash"].persons["author"]] == ["Çelik, Ö.", "Παπαδόπουλος, Γ.", "Øster, Å. B."]
    assert pybtex["10.9999/nature.1"].type == "article"
    assert [" ".join(p.last_names).strip("{}") for p in pybtex["10.9999/nature.1"].persons["author"]] == [
        "van der Meulen", "dos Santos"]
    records_ = {r.get("doi"): r for r in rispy.loads(ris)}
    assert records_["10.9999/nature.1"]["type_of_reference"] == "JOUR"
    assert records_["10.9999/nature.1"]["urls"] == ["https://doi.org/10.9999/nature.1"]
    assert records_["10.9999/emdash"]["authors"][:2] == ["Çelik, Ö.", "Παπαδόπουλος, Γ."]
    items = {i.get("DOI"): i for i in json.loads(hard_exports["json"])}
    assert items["10.9999/nature.1"]["type"] == "article-journal" and "genre" not in items["10.9999/nature.1"]
    assert items["10.9999/nature.1"]["author"][0] == {"family": "van der Meulen", "given": "Ruud"}
    assert items["10.9999/emdash"]["author"][0] == {"family": "Çelik", "given": "Ö."}
    assert [r["pmid"] for r in hard_exports["rows"]].count("31452104") == 1
    assert bib.count("pmid = {31452104}") == 1 and ris.count("AN  - PMID:31452104") == 1
    if PANDOC:
        with_pandoc = {i.get("DOI"): i for i in json.loads(_pandoc("-f", "bibtex", "-t", "csljson", stdin=bib))}
        assert _norm(plain_text(with_pandoc["10.9999/emdash"]["title"])) == "Ozone—a review of Turkish and Greek sites"
        assert with_pandoc["10.9999/emdash"]["author"][0] == {"family": "Çelik", "given": "Ö."}
        assert with_pandoc["10.9999/nature.1"]["type"] == "article-journal"
        assert _name_tuple(with_pandoc["10.9999/nature.1"]["author"][0]) == ("van der Meulen", "Ruud", "", "")


def test_bibtexparser_2_reads_every_field(exports: dict) -> None:
    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors, SplitNameParts

    # decoded to text for the fields; names split from the undecoded file (decoding drops {Organisation} braces)
    library = bibtexparser.parse_string(exports["bib"], append_middleware=[LatexDecodingMiddleware()])
    people = bibtexparser.parse_string(exports["bib"], append_middleware=[SeparateCoAuthors(), SplitNameParts()])
    assert library.failed_blocks == [] and len(library.entries) == len(exports["rows"]) == len(people.entries)
    for entry, named, row, key in zip(library.entries, people.entries, exports["rows"], exports["keys"]):
        want = _expected(row)
        fields = {f.key: f.value for f in entry.fields}
        fields["author"] = named.fields_dict["author"].value if "author" in named.fields_dict else []
        assert entry.key == key and entry.entry_type == EXPECTED_TYPES[want["kind"]][0]
        title = _norm(fields.get("title", ""))
        assert title == (_unbraced(want["title"]) if "unmatched" in want["title"] else want["bib_title"]), key
        assert not re.search(r"\\[A-Za-z]", title) and not MARKUP_RE.search(title), title
        got = [(" ".join(n.last).strip("{}"),) if not n.first and n.last and n.last[0].startswith("{")
               else (" ".join(n.last).strip("{}"), " ".join(n.first), " ".join(n.von), " ".join(n.jr))
               for n in fields["author"]]
        assert [tuple(_norm(p) for p in g) for g in got] == want["authors"], key
        assert fields.get("year", "") == want["year"] and fields.get("doi", "") == want["doi"]
        assert fields.get("url", "") == want["url"]
        assert _norm(fields.get("journal") or fields.get("howpublished") or "") == want["journal"]
        if want["pmid"]:
            assert fields["pmid"] == want["pmid"] and (fields["eprint"] == want["pmid"] or "arxiv" in fields["eprinttype"])
        if want["pmcid"]:
            assert fields["pmcid"] == want["pmcid"]


def test_pybtex_parses_names_and_its_plain_style_formats_every_entry(exports: dict) -> None:
    from pybtex.backends.plaintext import Backend
    from pybtex.database import parse_string
    from pybtex.style.formatting.plain import Style
    from pybtex.style.template import FieldIsMissing

    from paperfetch.export import _server, bibtex_escape
    from paperfetch.export.markup import bibtex_text

    data = parse_string(exports["bib"], "bibtex")
    assert list(data.entries) == exports["keys"]
    for key, row in zip(exports["keys"], exports["rows"]):
        entry, want = data.entries[key], _expected(row)
        people = entry.persons.get("author", [])
        got = [(_norm(" ".join(p.last_names).strip("{}")),) if not p.first_names and str(p).startswith("{")
               else (_norm(" ".join(p.last_names).strip("{}")), _norm(" ".join(p.first_names + p.middle_names)),
                     _norm(" ".join(p.prelast_names)), _norm(" ".join(p.lineage_names))) for p in people]
        assert got == want["authors"], key
        assert entry.fields.get("doi", "") == want["doi"] and entry.fields.get("url", "") == want["url"]
        assert entry.fields.get("year", "") == want["year"]
        assert entry.type == EXPECTED_TYPES[want["kind"]][0]
        # pybtex keeps a field's TeX as written (Journal of \textit{Bacteriology}): compared with what was written
        journal = entry.fields.get("howpublished" if want["kind"] == "preprint" else "journal", "")
        assert journal == (bibtex_escape(_server(row)) if want["kind"] == "preprint" else
                           bibtex_text(row["journal"], protect=False)), key
        assert entry.fields.get("pmid", "") == want["pmid"] and entry.fields.get("pmcid", "") == want["pmcid"]
    style, rendered = Style(), []
    for key, row in zip(exports["keys"], exports["rows"]):
        try:
            rendered.append((style.format_entry(key, data.entries[key]).text.render(Backend()), row))
        except FieldIsMissing as missing:  # pybtex's plain needs an author for @article (BibTeX's only warns)
            assert missing.field_name == "author" and not row["authors"] and row["journal"], key
    authorless = [r for r in exports["rows"] if not r["authors"] and r["journal"] and not r["preprint"]]
    assert len(rendered) == len(exports["rows"]) - len(authorless) and len(authorless) <= 3
    for text, row in rendered:
        assert not MARKUP_RE.search(text), text
        # plain lower-cases titles: every protected capital stays (pybtex leaves \\textit and \\$ as written)
        words = [w for w in re.findall(r"[A-Za-zα-ω]+", plain_text(row["title"])) if any(c.isupper() for c in w[1:])]
        assert all(w in text for w in words), (words, text)


def test_rispy_reads_every_record(exports: dict) -> None:
    import rispy

    entries = rispy.loads(exports["ris"])
    assert len(entries) == len(exports["rows"])
    for entry, row in zip(entries, exports["rows"]):
        want = _expected(row)
        assert entry["type_of_reference"] == EXPECTED_TYPES[want["kind"]][2]
        assert _norm(entry.get("primary_title") or entry.get("title", "")) == want["title"]
        authors = entry.get("authors", [])
        assert [_norm(a) for a in authors] == [_ris_as_written(w) for w in want["authors"]]
        assert entry.get("year", "") == want["year"] and entry.get("doi", "") == want["doi"]
        assert entry.get("urls", [""])[0] == want["url"]
        if want["pmid"]:
            assert entry["accession_number"] == f"PMID:{want['pmid']}"
        if want["pmcid"]:
            assert entry["custom2"] == want["pmcid"]
        if want["journal"]:
            assert _norm(entry["secondary_title"]) == want["journal"]


def _ris_as_written(name: tuple) -> str:
    if len(name) == 1:
        return name[0]
    family, given, particle, suffix = name
    last = " ".join(p for p in (particle, family) if p)
    rest = ", ".join(p for p in (given, suffix) if p)
    return f"{last}, {rest}" if rest else last


def test_csl_json_validates_and_carries_every_field(exports: dict) -> None:
    items = json.loads(exports["json"])
    _csl_validator()(items)
    for item, row in zip(items, exports["rows"]):
        want = _expected(row)
        assert item["type"] == EXPECTED_TYPES[want["kind"]][1] and (item.get("genre") == "preprint") == (want["kind"] == "preprint")
        assert _norm(plain_text(item.get("title", ""))) == want["title"]
        assert [_name_tuple(a) for a in item.get("author", [])] == want["authors"]
        assert item.get("DOI", "") == want["doi"] and item.get("URL", "") == want["url"]
        assert item.get("PMID", "") == want["pmid"] and item.get("PMCID", "") == want["pmcid"]
        journal = item.get("publisher", "") if want["kind"] == "preprint" else item.get("container-title", "")
        assert _norm(plain_text(journal)) == want["journal"]
        tags = set(re.findall(r"</?([a-z]+)", item.get("title", "")))
        assert tags <= {"i", "b", "sub", "sup", "span"}, item["title"]


@functools.lru_cache(maxsize=1)
def _csl_validator():
    import fastjsonschema  # the schema is draft-07; fastjsonschema compiles it in milliseconds

    return fastjsonschema.compile(json.loads(CSL_SCHEMA.read_text()))


def test_the_schema_refuses_what_it_should() -> None:
    import fastjsonschema

    with pytest.raises(fastjsonschema.JsonSchemaException):
        _csl_validator()([{"id": "x", "type": "journal-article"}])  # Crossref's type name, not CSL's


def test_the_cli_export_is_byte_identical_to_the_functions(demo: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    from paperfetch import Retriever
    from paperfetch.cli import main
    from paperfetch.demo.research import SEARCH_QUERY
    from paperfetch.export import EXPORT_FORMATS
    from paperfetch.log import disable_logging

    world, folder = demo["world"], demo["folder"]
    for name, url in world.endpoints.items():
        monkeypatch.setenv(f"PAPERFETCH_{name.upper()}_URL", url)
    slow = slow_services(world.endpoints)  # bioRxiv's 1 s and arXiv's 3 s; the others race, as before
    monkeypatch.setenv("PAPERFETCH_CONFIG", str(unpaced_config(folder / "unpaced.toml", slow)))
    monkeypatch.setenv("PAPERFETCH_DELAY_MIN", "0")
    monkeypatch.setenv("PAPERFETCH_DELAY_MAX", "0")
    inputs = ["10.5555/demo.fast", "https://doi.org/10.5555/DEMO.FAST", "10.1101/2026.01.05.000001"]
    with Retriever(email="you@uni.example", out_dir=folder / "cli", endpoints=world.endpoints, progress=False,
                   verbosity=0, delay_min_s=0, delay_max_s=0, cache=folder / "cache.sqlite",
                   http_options={"host_intervals": unpaced(slow)}) as r:
        outcomes = r.download(inputs)
        hits = r.search_pubmed(SEARCH_QUERY, max_results=20)
    try:
        for suffix, writer in EXPORT_FORMATS.items():
            path = folder / f"download{suffix}"
            main(["download", *inputs, "--out", str(folder / "cli"), "--email", "you@uni.example", "--export", str(path),
                  "--state", "memory", "--no-cache", "--no-progress", "-q"])
            assert path.read_bytes() == writer(outcomes).encode("utf-8"), suffix
            path = folder / f"search{suffix}"
            assert main(["search", SEARCH_QUERY, "--max", "20", "--email", "you@uni.example", "--export", str(path),
                         "--no-cache", "--no-progress", "-q"]) == 0
            assert path.read_bytes() == writer(hits).encode("utf-8"), suffix
    finally:
        disable_logging()


def test_the_demo_frames_carry_typed_authors_and_journals(demo: dict) -> None:
    frames = demo["frames"]
    download = _exports(frames["download"])
    assert len(download["rows"]) == 23  # 26 inputs: the DOI given twice once, the two invalid ones left out
    # every work OpenAlex or Crossref knows; the arXiv, Semantic Scholar and bioRxiv/medRxiv answers name no authors
    assert download["bib"].count("author = {") == 18 and "{van der Berg}, Karin and {Demo Consortium}" in download["bib"]
    assert "@misc{anon2026preprint," in download["bib"] and "howpublished = {bioRxiv}" in download["bib"]
    assert frames["search"]["authors"].iloc[0][:2] == [{"family": "Quill", "given": "Ada"},
                                                      {"family": "Marlow", "given": "Tobias J."}]
    refs = _exports(frames["references"])
    assert all(r["journal"] for r in refs["rows"]) and refs["bib"].count("author = {") == len(refs["rows"])
    assert "journal = {Journal of Fast Results}" in refs["bib"]
    assert frames["citations"]["journal"].notna().all()


# ---------------------------------------------------------------------- pandoc
def _pandoc(*args: str, stdin: str = "") -> str:
    if PANDOC is None:
        if os.environ.get("CI") or os.environ.get("PAPERFETCH_REQUIRE_PANDOC"):
            pytest.fail("pandoc is not installed (.ci/run installs Debian's pandoc)")
        pytest.skip("pandoc is not installed")
    done = subprocess.run([PANDOC, *args], input=stdin, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module", params=["hard", "demo"])
def pandoc_exports(request: pytest.FixtureRequest) -> dict:
    """pandoc reads two files: the hard set, and the four demo frames in one (one pandoc call per format and file)."""
    if request.param == "hard":
        return request.getfixturevalue("hard_exports")
    frames = request.getfixturevalue("demo")["frames"]
    return {**_exports(pd.concat([frames[k] for k in ("download", "search", "references", "citations")])), "case": "demo"}


@pytest.fixture(scope="module")
def pandoc_files(pandoc_exports: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    exports = pandoc_exports
    folder = tmp_path_factory.mktemp("pandoc")
    folder = folder / exports.get("case", "hard")
    folder.mkdir()
    (folder / "refs.bib").write_text(exports["bib"], encoding="utf-8")
    (folder / "refs.json").write_text(exports["json"], encoding="utf-8")
    return {"bib": folder / "refs.bib", "json": folder / "refs.json"}


def test_pandoc_reads_the_bibtex_as_the_records(pandoc_exports: dict, pandoc_files: dict) -> None:
    exports = pandoc_exports
    items = {i["id"]: i for i in json.loads(_pandoc(str(pandoc_files["bib"]), "-f", "bibtex", "-t", "csljson"))}
    assert list(items) == exports["keys"]
    for key, row in zip(exports["keys"], exports["rows"]):
        item, want = items[key], _expected(row)
        title = _colon(_norm(plain_text(item.get("title", ""))))
        assert title == _colon(_unbraced(want["title"]) if "unmatched" in want["title"] else want["bib_title"]), key
        assert [_name_tuple(a) for a in item.get("author", [])] == want["authors"], key
        assert item.get("DOI", "") == want["doi"] and item.get("URL", "") == want["url"]
        assert str(item.get("issued", {}).get("date-parts", [[""]])[0][0]) == want["year"]
        assert item.get("PMID", "") == want["pmid"] and item.get("PMCID", "") == want["pmcid"]
        if want["kind"] == "article":
            assert item["type"] == "article-journal" and _norm(plain_text(item["container-title"])) == want["journal"]
        elif want["kind"] == "preprint":  # @misc: pandoc 2.17 gives it no CSL type, and howpublished as publisher
            assert _norm(item["publisher"]) == want["journal"]


_SCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉⁰¹²³⁴⁵⁶⁷⁸⁹", "01234567890123456789")


def _colon(title: str) -> str:
    """pandoc capitalises the first word after ``: `` (a subtitle): compared without that letter's case."""
    return re.sub(r": (\w)", lambda m: ": " + m.group(1).lower(), title)


def _rendered(pandoc_files: dict, fmt: str, style: str) -> str:
    document = "---\nnocite: '@*'\n---\n"
    csl = ("--csl", str(APA_CSL)) if style == "apa" else ()
    return _pandoc("--citeproc", "--bibliography", str(pandoc_files[fmt]), *csl, "-f", "markdown", "-t", "plain",
                   "--wrap=none", stdin=document)


@pytest.mark.parametrize("style", ["default", "apa"])
@pytest.mark.parametrize("fmt", ["bib", "json"])
def test_pandoc_citeproc_renders_capitals_and_initials_and_no_markup(pandoc_exports: dict, pandoc_files: dict, fmt: str,
                                                                     style: str) -> None:
    """Rendered with pandoc's default style (Chicago author-date) and with APA 7th edition (the Citation Style
    Language project's ``apa.csl``, vendored in tests/data/csl): the first author inverted, ``Lloyd, C. J.``, every
    capital of a title kept (APA sentence-cases titles: the BibTeX case protection keeps acronyms and names), and
    no markup, entity or TeX command in the text."""
    exports = pandoc_exports
    raw = _norm(_rendered(pandoc_files, fmt, style))
    text = raw.translate(_SCRIPTS)
    if "case" not in exports:  # the hard set
        assert "Lloyd, C. J." in text and "World Health Organization" in text and "Glaudemans" in text
        if style == "apa":  # APA inverts every author and keeps the title's capitals after the year
            assert "Lloyd, C. J., Glaudemans, A. W. J. M., World Health Organization, " in text
            assert "(2019). Exposure to PM2.5 in Germany and the R&D of WHO guidance. The Lancet." in text
    assert not MARKUP_RE.search(text) and not re.search(r"\\[A-Za-z]+", text), re.findall(r".{30}\\[A-Za-z]+.{10}", text)
    for row in exports["rows"]:
        title = plain_text(row["title"])
        for word in re.findall(r"\w*[A-Z]\w*", title):
            assert word in text or word.upper() in text, (word, title)
    if "case" not in exports:
        assert "R&D" in text and "Germany" in text and "α-Synuclein" in text and "--" in text and "H₂O" in raw
