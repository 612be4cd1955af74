"""paperfetch.fulltext frames for reading machines: paragraph ids and xref links, tables, figures, ``read()``.

The checks run on the real JATS bodies of shared/fixtures/real (Europe PMC ``fullTextXML`` in tests/data/europepmc,
and the eight ``fulltext_pairs/*.xml``), counting every ``<table-wrap>``, ``<fig>`` and ``<xref>`` independently
with lxml XPath. The small articles written in this file are synthetic (each test says what it pins). Retriever
tests run against loopback servers that serve those real bodies; ``read()`` runs with every socket connect failing.
"""

from __future__ import annotations

import copy
import json
import shutil
import socket
from urllib.parse import parse_qs

import pandas as pd
import pytest
from lxml import etree

from paperfetch.fulltext import (
    FIGURE_COLUMNS,
    PARAGRAPH_COLUMNS,
    TABLE_COLUMNS,
    FullText,
    FullTextError,
    parse_jats,
    read,
)
from paperfetch.testing import LoopbackHost, Reply, Request
from tests._fixtures import fixtures_or_placeholder
from tests._quick import retriever
from tests.test_fulltext_parse import DROPPED_IN_TEXT, NOT_ROW_ANCESTORS

EUROPEPMC = fixtures_or_placeholder() / "europepmc"  # the recorded Europe PMC bodies, never committed
PAIRS_NAMES = ("04-00932", "PMC4417228", "PMC4678086", "PMC4686705", "PMC4706911", "PMC4707348", "PMC4709779",
               "journal.pone.0115884")


def _plain(body: bytes) -> etree._Element:
    return etree.fromstring(body, etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False))


def _norm(element: etree._Element | None) -> str:
    return "" if element is None else " ".join("".join(element.itertext()).split())


@pytest.fixture(scope="module")
def bodies(request) -> dict[str, bytes]:
    """Every real JATS body: the two Europe PMC answers and the eight fulltext_pairs XMLs."""
    real = request.getfixturevalue("real_fixtures")
    found = {p.name: p.read_bytes() for p in sorted(EUROPEPMC.glob("rest__PMC*__fullTextXML.xml"))}
    found.update({f"{name}.xml": (real / "fulltext_pairs" / f"{name}.xml").read_bytes() for name in PAIRS_NAMES})
    return found


@pytest.fixture(scope="module")
def articles(bodies):
    return {name: parse_jats(body) for name, body in bodies.items()}


# --------------------------------------------------------------------------- the independent oracle


def _row_elements(doc: etree._Element) -> list[etree._Element]:
    """The <p> elements that are rows, in document order: the rule of tests/test_fulltext_parse.py's oracle
    (not inside a container whose paragraphs are not rows; some text once figures, tables … are removed)."""
    out = []
    for p in doc.xpath("/article/front/article-meta/abstract//p | /article/body//p"):
        stop = p.xpath("ancestor::abstract | ancestor::body")[-1]
        between = [a for a in p.iterancestors() if a is not stop and stop in a.iterancestors()]
        if any(a.tag in NOT_ROW_ANCESTORS for a in between):
            continue
        clone = copy.deepcopy(p)
        for el in list(clone.iter(*DROPPED_IN_TEXT)):
            el.text = None
            for child in list(el):
                el.remove(child)  # its tail stays: the text after a figure is the paragraph's
        if "".join(clone.itertext()).strip():
            out.append(p)
    return out


def _own_rids(p: etree._Element, kind: str = "bibr") -> list[str]:
    """The rids of the p's own xrefs of *kind*: not those inside a figure, table, caption or footnote."""
    rids = []
    for xref in p.iter("xref"):
        if xref.get("ref-type") != kind:
            continue
        inside = [a for a in xref.iterancestors() if a is not p and p in a.iterancestors()]
        if not any(a.tag in DROPPED_IN_TEXT for a in inside):
            rids += (xref.get("rid") or "").split()
    return rids


def _is_subsequence(needle: list[str], haystack: list[str]) -> bool:
    it = iter(haystack)
    return all(any(x == y for y in it) for x in needle)


def _floats(doc: etree._Element, tag: str) -> list[etree._Element]:
    return [el for el in doc.iter(tag) if not any(a.tag in ("sub-article", "response") for a in el.iterancestors())]


# --------------------------------------------------------------------------- paragraphs


def test_every_bibliography_link_of_a_paragraph_is_in_its_citations_in_order_and_joins_a_reference(bodies, articles):
    checked = 0
    for name, body in bodies.items():
        article = articles[name]
        elements = _row_elements(_plain(body))
        rows = list(article.paragraphs)
        assert len(elements) == len(rows) > 0, name
        ref_ids = {r.ref_id for r in article.references}
        for p, element in zip(rows, elements):
            expected = _own_rids(element)
            assert _is_subsequence(expected, list(p.citations)), (name, p.paragraph_id, expected, p.citations)
            assert set(p.citations) <= ref_ids, (name, p.paragraph_id)
            checked += len(expected)
        # every bibliography link of the body is in one row: a paragraph, a table or a figure
        doc = _plain(body)
        body_links = [rid for x in doc.xpath("/article/body//xref[@ref-type='bibr'] | /article/front//abstract//xref"
                                             "[@ref-type='bibr']") for rid in (x.get("rid") or "").split()
                      if not any(a.tag in ("fn", "supplementary-material") for a in x.iterancestors())]
        listed = [c for p in rows for c in p.citations] + [c for t in article.tables for c in t.citations] \
            + [c for f in article.figures for c in f.citations]
        assert set(body_links) <= set(listed), name
    assert checked > 400  # 431 links in paragraphs, of 436 in these bodies (the rest in tables and figures)


def test_figure_and_table_links_of_a_paragraph_are_listed_once_each_in_order(bodies, articles):
    for name, body in bodies.items():
        for p, element in zip(articles[name].paragraphs, _row_elements(_plain(body))):
            for kind, field in (("fig", "figures"), ("table", "tables")):
                wanted = _own_rids(element, kind)
                assert getattr(p, field) == tuple(dict.fromkeys(wanted)), (name, p.paragraph_id, kind)
    assert sum(len(p.figures) for a in articles.values() for p in a.paragraphs) > 30
    assert sum(len(p.tables) for a in articles.values() for p in a.paragraphs) > 30


def test_paragraph_ids_are_unique_stable_and_the_jats_ids_where_given(bodies, articles):
    for name, body in bodies.items():
        ids = [p.paragraph_id for p in articles[name].paragraphs]
        assert len(set(ids)) == len(ids) and all(ids), name
        assert ids == [p.paragraph_id for p in parse_jats(body).paragraphs]  # the same on every run
    given = articles["rest__PMC8164761__fullTextXML.xml"]
    doc = _plain(EUROPEPMC.joinpath("rest__PMC8164761__fullTextXML.xml").read_bytes())
    jats_ids = {p.get("id") for p in doc.iter("p") if p.get("id")}
    assert sum(p.paragraph_id in jats_ids for p in given.paragraphs) >= 15
    assert [p.paragraph_id for p in given.paragraphs[:6]] == ["Par1", "Par2", "Par3", "p3", "Par6", "Par7"]


SYNTHETIC = b"""<article><front><article-meta><permissions><license><license-p>Under CC BY-NC 4.0.</license-p>
</license></permissions></article-meta></front><body>
<sec id="s1"><title>Intro</title>
<p id="p1">Ranges [<xref ref-type="bibr" rid="r2">2</xref>&#x2013;<xref ref-type="bibr" rid="r5">5</xref>], a pair
<xref ref-type="bibr" rid="r1 r6">1,6</xref>, a list [<xref ref-type="bibr" rid="r1">1</xref>,
<xref ref-type="bibr" rid="r3">3</xref>], see <xref ref-type="fig" rid="f1">Fig. 1</xref> and
<xref ref-type="table" rid="t1">Table 1</xref>.
<fig id="f1"><label>Figure 1</label><caption><title>A fig.</title><p>After <xref ref-type="bibr" rid="r4">4</xref>.</p>
</caption><graphic xmlns:xlink="http://www.w3.org/1999/xlink" xlink:href="fig1.tif"/></fig></p>
<p>No id here; a gap is not a range: <xref ref-type="bibr" rid="r1">1</xref> and <xref ref-type="bibr" rid="r4">4</xref>.</p>
<p id="p1">A repeated id.</p>
<table-wrap id="t1"><label>Table 1</label><caption><p>Spans.</p></caption><table>
<thead><tr><th rowspan="2">Group</th><th colspan="2">Weight</th></tr><tr><th>kg</th><th>lb</th></tr></thead>
<tbody><tr><td rowspan="2">A</td><td>1</td><td>2.2</td></tr><tr><td colspan="2">n/a <xref ref-type="bibr" rid="r6">6</xref></td></tr>
<tr><td>B | C</td><td>3</td></tr></tbody></table>
<table-wrap-foot><fn><p>Weighed twice.</p></fn></table-wrap-foot></table-wrap>
<table-wrap id="t2"><label>Table 2</label><caption><p>Only an image.</p></caption><graphic/></table-wrap>
</sec></body><back><ref-list>""" + b"".join(
    b'<ref id="r%d"><mixed-citation>Ref %d.</mixed-citation></ref>' % (i, i) for i in range(1, 7)) + b"</ref-list></back></article>"


def test_citations_expand_ranges_and_multi_rid_links_and_a_caption_belongs_to_its_figure():
    """Synthetic: what each link form gives, and where a figure caption's link goes."""
    article = parse_jats(SYNTHETIC)
    first, second, third = article.paragraphs
    assert first.citations == ("r2", "r3", "r4", "r5", "r1", "r6", "r1", "r3")
    assert (first.figures, first.tables) == (("f1",), ("t1",))
    assert second.citations == ("r1", "r4")
    assert [p.paragraph_id for p in article.paragraphs] == ["p1", "p1-2", "p2"]
    (figure,) = article.figures
    assert (figure.figure_id, figure.label, figure.caption, figure.graphic, figure.section, figure.citations) == (
        "f1", "Figure 1", "A fig. After 4.", "fig1.tif", "Intro", ("r4",))
    assert "After 4" not in first.text


def test_a_table_with_rowspan_and_colspan_gives_the_grid():
    """Synthetic: a two-row header with a spanning cell, a body rowspan and colspan, a short row, a pipe."""
    article = parse_jats(SYNTHETIC)
    spans, image = article.tables
    assert spans.columns == ("Group", "Weight / kg", "Weight / lb")
    assert spans.rows == (("A", "1", "2.2"), ("A", "n/a 6", "n/a 6"), ("B | C", "3", ""))
    assert (spans.table_id, spans.label, spans.caption, spans.footnotes, spans.section) == (
        "t1", "Table 1", "Spans.", "Weighed twice.", "Intro")
    assert spans.citations == ("r6",)
    assert (image.columns, image.rows, image.caption) == ((), (), "Only an image.")
    from paperfetch.fulltext import table_rows, tables_frame

    frame = tables_frame(table_rows(article, input="x"))
    grid = frame.loc[0, "table"]
    assert list(grid.columns) == ["Group", "Weight / kg", "Weight / lb"] and grid.shape == (3, 3)
    assert grid.iloc[1].tolist() == ["A", "n/a 6", "n/a 6"]
    assert frame.loc[0, "markdown"].splitlines() == [
        "| Group | Weight / kg | Weight / lb |", "|---|---|---|", "| A | 1 | 2.2 |", "| A | n/a 6 | n/a 6 |",
        "| B \\| C | 3 |  |"]
    assert frame.loc[1, "table"].empty and frame.loc[1, "markdown"] == ""
    assert set(frame["license_id"]) == {"cc-by-nc-4.0"}


def test_a_table_asking_for_a_huge_grid_keeps_its_caption_and_an_empty_grid_fast():
    """Synthetic, hostile: spans that would make billions of cells, and a ragged table padded past the cap."""

    wide = "<tr>" + '<td colspan="999999">x</td>' * 3 + "</tr>"
    tall = '<tr><td rowspan="999999" colspan="999">y</td></tr>' + "<tr><td>z</td></tr>" * 3000
    ragged = '<tr><td colspan="1000">w</td></tr>' + "<tr><td>v</td></tr>" * 1500
    tables = "".join(f'<table-wrap id="h{i}"><caption><p>Huge {i}.</p></caption><table>{body * 400 if i == 0 else body}'
                     f"</table></table-wrap>" for i, body in enumerate((wide, tall, ragged)))
    article = parse_jats(f"<article><body><p>Text.</p>{tables}</body></article>".encode())  # no grid is built
    assert [(t.caption, t.columns, t.rows) for t in article.tables] == [
        ("Huge 0.", (), ()), ("Huge 1.", (), ()), ("Huge 2.", (), ())]
    assert [p.text for p in article.paragraphs] == ["Text."]


# --------------------------------------------------------------------------- tables and figures of real bodies


def test_every_table_wrap_and_fig_is_one_row_with_its_label_and_caption(bodies, articles):
    tables = figures = 0
    for name, body in bodies.items():
        doc = _plain(body)
        article = articles[name]
        for tag, rows in (("table-wrap", article.tables), ("fig", article.figures)):
            elements = _floats(doc, tag)
            assert len(rows) == len(elements), (name, tag)
            for row, element in zip(rows, elements):
                assert row.label == _norm(element.find("label")), (name, tag)
                assert row.caption == _norm(element.find("caption")) and row.caption, (name, tag)
                if element.get("id"):
                    assert (row.table_id if tag == "table-wrap" else row.figure_id) == element.get("id")
                if tag == "table-wrap":
                    assert row.footnotes == " ".join(_norm(f) for f in element.iter("table-wrap-foot")).strip()
        tables += len(article.tables)
        figures += len(article.figures)
        for table in article.tables:
            element = next(e for e in _floats(doc, "table-wrap") if e.get("id") == table.table_id)
            width = max((sum(int(c.get("colspan") or 1) for c in tr if c.tag in ("td", "th")) for tr in element.iter("tr")),
                        default=0)
            assert all(len(r) == width for r in table.rows) and len(table.columns) in (0, width), (name, table.table_id)
            assert len(table.rows) + (1 if table.columns else 0) <= len(list(element.iter("tr")))
    assert tables == 18 and figures == 26


def test_a_real_table_with_spans_gives_the_right_grid(articles):
    """PMC4706911 Table 1: three header rows spanning (surgery/endoscopy × before/after/Δ), body rows of 7."""
    table = articles["PMC4706911.xml"].tables[0]
    assert table.columns[:2] == ("", "Surgery / Myotomy / 11 patients / Before")
    assert table.columns[4] == "Endoscopy / Pneumatic dilation / 8 patients / Before"
    assert table.rows[0] == ("Esophagus diameter (cm)", "5.20", "3.10", "–2.10", "4.80", "6.54", "+1.74")
    assert table.rows[1] == ("Column baryta height",) + ("",) * 6


# --------------------------------------------------------------------------- licence and identifiers


def test_the_licence_keeps_its_url_and_a_short_id(articles):
    from paperfetch.fulltext import license_id

    got = {name: (a.license, license_id(a.license)) for name, a in articles.items()}
    assert got["04-00932.xml"] == ("http://creativecommons.org/licenses/by/4.0/", "cc-by-4.0")  # a URL in the text
    assert got["PMC4417228.xml"] == ("http://creativecommons.org/licenses/by/4.0", "cc-by-4.0")  # an ext-link
    assert got["journal.pone.0115884.xml"] == ("http://creativecommons.org/licenses/by/4.0/", "cc-by-4.0")
    assert got["PMC4678086.xml"] == ("cc by", "cc-by")  # the text names no version and no URL
    assert all(licence for licence, _ in got.values())


def test_a_doi_with_stray_whitespace_in_its_element_is_repaired():
    body = b"""<article><front><article-meta><article-id pub-id-type="doi">10.1234/
      abc.5</article-id></article-meta></front><body><p>x</p></body><back><ref-list><ref id="r1"><element-citation>
      <pub-id pub-id-type="doi">10.5555/ THINGS.1</pub-id></element-citation></ref></ref-list></back></article>"""
    article = parse_jats(body)
    assert article.doi == "10.1234/abc.5" and article.references[0].doi == "10.5555/things.1"


# --------------------------------------------------------------------------- read(): local files, no request


@pytest.fixture
def no_socket(monkeypatch):
    """Every connect fails: read() must need none."""
    def refuse(self, address):  # noqa: ANN001
        raise AssertionError(f"read() tried to connect to {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    yield


def test_read_a_folder_a_file_and_bytes_with_no_request(real_fixtures, no_socket, bodies):
    pairs = real_fixtures / "fulltext_pairs"
    bundle = read(pairs, recursive=False)
    assert isinstance(bundle, FullText)
    assert sorted(set(bundle.paragraphs["input"])) == sorted(f"{n}.xml" for n in PAIRS_NAMES)  # JATS over the PDF
    assert set(bundle.paragraphs["text_source"]) == {"jats"} and len(bundle.errors) == 0
    assert list(bundle.paragraphs.columns) == list(PARAGRAPH_COLUMNS)
    assert list(bundle.tables.columns) == list(TABLE_COLUMNS) and list(bundle.figures.columns) == list(FIGURE_COLUMNS)
    assert len(bundle.tables) == 18 and len(bundle.figures) == 18
    one = read(pairs / "PMC4706911.xml")
    assert set(one.paragraphs["input"]) == {"PMC4706911.xml"} and len(one.tables) == 2
    from_bytes = read(bodies["PMC4706911.xml"], name="PMC4706911")
    assert from_bytes.paragraphs["text"].tolist() == one.paragraphs["text"].tolist()
    assert set(from_bytes.paragraphs["input"]) == {"PMC4706911"}
    pdf = read((pairs / "PMC4706911.pdf").read_bytes())
    assert set(pdf.paragraphs["text_source"]) == {"pdf"} and len(pdf.paragraphs) > 0
    assert set(pdf.paragraphs["input"]) == {"<bytes>"} and pdf.paragraphs["citations"].map(len).eq(0).all()


def test_read_gives_each_bad_file_one_error_row_and_never_raises_for_a_folder(real_fixtures, no_socket, tmp_path):
    robust = real_fixtures / "fulltext_pairs" / "robust"
    shutil.copy(real_fixtures / "fulltext_pairs" / "PMC4678086.xml", tmp_path / "good.nxml")
    (tmp_path / "cut.xml").write_bytes((real_fixtures / "fulltext_pairs" / "PMC4686705.xml").read_bytes()[:5000])
    (tmp_path / "laughs.xml").write_bytes(b'<!DOCTYPE a [<!ENTITY a "aaaa">]><article><body><p>&a;</p></body></article>')
    (tmp_path / "notes.txt").write_text("not read")
    nested = tmp_path / "nested"
    nested.mkdir()
    for name in ("html_named_pdf.pdf", "derived_empty.pdf", "encrypted_user_password.pdf"):
        shutil.copy(robust / name, nested / name)
    bundle = read(tmp_path)
    assert set(bundle.paragraphs["input"]) == {"good.nxml"}
    errors = bundle.errors.set_index("input")
    assert sorted(errors.index) == ["cut.xml", "laughs.xml", "nested/derived_empty.pdf",
                                    "nested/encrypted_user_password.pdf", "nested/html_named_pdf.pdf"]
    assert set(errors["error"]) <= {"FullTextError", "FullTextTooLarge"} and errors["message"].str.len().gt(0).all()
    assert "good.nxml" not in set(read(tmp_path, recursive=False).errors["input"])
    with pytest.raises(FileNotFoundError):
        read(tmp_path / "missing")
    assert len(read(tmp_path / "cut.xml").errors) == 1  # one bad file on its own: its error row, no exception
    too_big = read(tmp_path, max_xml_bytes=1000, recursive=False).errors.set_index("input")
    assert too_big.loc["good.nxml", "error"] == "FullTextTooLarge"  # refused before it is read
    assert issubclass(FullTextError, ValueError)


# --------------------------------------------------------------------------- through the Retriever



class _EuropePMC:
    """Europe PMC on loopback: the search gives each DOI's PMCID (open access), fullTextXML the real body."""

    def __init__(self, bodies: dict[str, bytes]) -> None:
        self.by_doi: dict[str, tuple[str, bytes]] = {}
        for n, (name, body) in enumerate(sorted(bodies.items())):
            article = parse_jats(body)
            self.by_doi[article.doi] = (article.pmcid or f"PMC900000{n}", body)
        self.host = LoopbackHost("127.0.0.131", {"*": self._serve}).start()
        self.other = LoopbackHost("127.0.0.132", {"*": self._nothing}).start()

    def _serve(self, request: Request) -> Reply:
        if request.path.endswith("/fullTextXML"):
            pmcid = request.path.split("/")[-2]
            for found, body in self.by_doi.values():
                if found == pmcid:
                    return Reply(200, body, {"Content-Type": "application/xml"})
            return Reply(404, b"<error/>")
        query = parse_qs(request.query).get("query", [""])[0].lower()
        results = [{"id": pmcid, "source": "PMC", "pmcid": pmcid, "doi": doi, "isOpenAccess": "Y"}
                   for doi, (pmcid, _) in self.by_doi.items() if doi in query]
        return Reply(200, json.dumps({"hitCount": len(results), "resultList": {"result": results}}),
                     {"Content-Type": "application/json"})

    def _nothing(self, request: Request) -> Reply:
        if request.path.startswith("/pmc/utils/idconv"):
            return Reply(200, json.dumps({"status": "ok", "records": []}), {"Content-Type": "application/json"})
        return Reply(404, b"{}", {"Content-Type": "application/json"})

    def served(self) -> int:
        return self.host.hits() + self.other.hits()

    @property
    def endpoints(self) -> dict[str, str]:
        """Europe PMC here, every other service on the host that knows nothing."""
        return {"europepmc": self.host.base_url, **{name: self.other.base_url for name in (
            "ncbi_idconv", "ncbi_eutils", "unpaywall", "openalex", "crossref", "arxiv", "doi")}}

    def stop(self) -> None:
        self.host.stop()
        self.other.stop()


@pytest.fixture(scope="module")
def pair_bodies(real_fixtures) -> dict[str, bytes]:
    return {f"{n}.xml": (real_fixtures / "fulltext_pairs" / f"{n}.xml").read_bytes() for n in PAIRS_NAMES}


@pytest.fixture
def epmc(pair_bodies):
    world = _EuropePMC(pair_bodies)
    yield world
    world.stop()


def _comparable(frame: pd.DataFrame, inputs: dict[str, str], drop: tuple[str, ...] = ("pmcid",)) -> pd.DataFrame:
    """*frame* with *inputs* renamed (identifier → file name), without the *drop* columns, sorted by input."""
    frame = frame.drop(columns=list(drop)).copy()
    frame["input"] = frame["input"].map(lambda v: inputs.get(v, v))
    return frame.sort_values(["input"], kind="stable").reset_index(drop=True)


def test_read_of_the_folder_gives_the_frames_r_fulltext_gives(epmc, pair_bodies, real_fixtures, tmp_path):
    dois = {parse_jats(body).doi: name for name, body in pair_bodies.items()}
    with retriever(tmp_path, epmc.endpoints, sources=("unpaywall",), state="memory", cache=False) as r:
        paragraphs = r.fulltext(list(dois)).paragraphs
        references = r.fulltext_references(list(dois))
        tables = r.fulltext_tables(list(dois))
        figures = r.fulltext_figures(list(dois))
    local = read(real_fixtures / "fulltext_pairs", recursive=False)
    assert local.paragraphs["title"].notna().all()  # what the JATS says of itself; r.fulltext's is the search's
    record = ("title", "year", "journal", "authors", "retracted")
    paragraphs, tables, figures, references, local = (
        *(frame.drop(columns=list(record)) for frame in (paragraphs, tables, figures)),
        references.drop(columns=[f"citing_{name}" for name in record]),
        FullText(paragraphs=local.paragraphs.drop(columns=list(record)), tables=local.tables.drop(columns=list(record)),
                 figures=local.figures.drop(columns=list(record)),
                 references=local.references.drop(columns=[f"citing_{name}" for name in record])))
    pd.testing.assert_frame_equal(_comparable(paragraphs, dois), _comparable(local.paragraphs, {}))
    # the pmcid of the two articles whose JATS has none is the search's in r.fulltext (a PMCID was needed to fetch)
    pd.testing.assert_frame_equal(_comparable(references, dois, ("citing_pmcid",)),
                                  _comparable(local.references, {}, ("citing_pmcid",)))
    pd.testing.assert_frame_equal(_comparable(figures, dois), _comparable(local.figures, {}))
    pd.testing.assert_frame_equal(_comparable(tables, dois, ("pmcid", "table")), _comparable(local.tables, {}, ("pmcid", "table")))
    ours, theirs = _comparable(tables, dois), _comparable(local.tables, {})
    for a, b in zip(ours["table"], theirs["table"]):
        pd.testing.assert_frame_equal(a, b)
    # every citation of every paragraph joins to a reference row of its paper
    refs = set(zip(references["input"], references["ref_id"]))
    cited = {(i, c) for i, cs in zip(paragraphs["input"], paragraphs["citations"]) for c in cs}
    assert cited and cited <= refs
    assert set(paragraphs["license"].dropna()) and paragraphs["license"].notna().all()


def test_a_second_fulltext_tables_reads_the_kept_jats_and_sends_no_request(epmc, pair_bodies, tmp_path):
    dois = [parse_jats(body).doi for body in pair_bodies.values()]
    with retriever(tmp_path, epmc.endpoints, sources=("unpaywall",), state="memory", cache=False) as r:
        first = r.fulltext_tables(dois)
    sent = epmc.served()
    assert sent >= 2 * len(dois)
    with retriever(tmp_path, epmc.endpoints, sources=("unpaywall",), state="memory", cache=False) as r:
        second = r.fulltext_tables(dois)
        figures = r.fulltext_figures(dois)
        assert len(r.requests()) == 0
    assert epmc.served() == sent
    assert len(first) == len(second) == 18 and len(figures) == 18
    pd.testing.assert_frame_equal(first.drop(columns=["table"]), second.drop(columns=["table"]))
    assert first["license"].notna().all() and first["doi"].notna().all()


def test_read_gives_one_paper_per_work_from_its_jats_and_leaves_a_readme_alone(no_socket, tmp_path, bodies):
    """A JATS file and a PDF of the same work are one paper, read from the JATS: matched by the file name's stem
    or by the DOI the PDF's first page states; a PDF alone gives that DOI and the licence its first page names."""
    from tests._pdfwriter import layout_article, write_pdf

    def pdf(*lines: str) -> bytes:
        return write_pdf(layout_article([("title", "A paper"), *(("para", line) for line in lines),
                                         ("heading", "Results"), ("para", "The results were as expected, and more.")]))

    twin = parse_jats(bodies["PMC4678086.xml"])
    (tmp_path / "README.md").write_text("# What this folder holds\n")
    (tmp_path / "twin.xml").write_bytes(bodies["PMC4678086.xml"])
    (tmp_path / "twin.pdf").write_bytes(pdf("The same work as a PDF."))
    (tmp_path / "a.xml").write_bytes(bodies["PMC4417228.xml"])
    (tmp_path / "z.pdf").write_bytes(pdf(f"https://doi.org/{parse_jats(bodies['PMC4417228.xml']).doi} is this work."))
    (tmp_path / "alone.pdf").write_bytes(pdf("doi:10.5555/Alone.1 Published under a CC BY 4.0 licence."))
    (tmp_path / "empty").mkdir()
    empty = read(tmp_path / "empty")
    assert len(empty.paragraphs) == len(empty.errors) == 0 and list(empty.tables.columns) == list(TABLE_COLUMNS)
    bundle = read(tmp_path)
    assert len(bundle.errors) == 0 and list(bundle.paragraphs.columns) == list(PARAGRAPH_COLUMNS)
    by_input = bundle.paragraphs.groupby("input").first()
    assert list(by_input.index) == ["a.xml", "alone.pdf", "twin.xml"]
    assert by_input.loc["twin.xml", "doi"] == twin.doi and by_input.loc["twin.xml", "text_source"] == "jats"
    assert by_input.loc["alone.pdf", ["doi", "license", "license_id"]].tolist() == ["10.5555/alone.1", "cc by", "cc-by-4.0"]
