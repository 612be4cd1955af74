"""paperfetch.fulltext: JATS and PDF text layers → paragraph records.

The JATS checks run on the real Europe PMC fullTextXML bodies in tests/data/europepmc (copied from
shared/fixtures/real, PROVENANCE-3.md), counting the expected <p> independently with lxml XPath; hostile bodies
(truncated, billion laughs, external DTD/entities, over the cap) must fail as FullTextError, fast, with no fetch.
The PDF checks run on PDFs written by hand in the test (tests/_pdfwriter.py), with both engines.
"""

from __future__ import annotations

import copy
import http.server
import re
import threading
import urllib.request

import pytest
from lxml import etree

from paperfetch.errors import ConfigurationError, PaperfetchError
from paperfetch.fulltext import (
    FullTextError,
    FullTextTooLarge,
    Paragraph,
    TextLine,
    license_code,
    paragraphs_from_lines,
    parse_jats,
    parse_jats_set,
    pdf_paragraphs,
)
from tests._fixtures import fixtures_or_placeholder, recorded_params
from tests._pdfwriter import Line, layout_article, wrap_words, write_pdf

DATA = fixtures_or_placeholder() / "europepmc"  # the recorded Europe PMC bodies, never committed
FIXTURES = sorted(DATA.glob("rest__PMC*__fullTextXML.xml"))

# What the contract leaves out of rows and out of row text (paperfetch.fulltext.jats docstring).
NOT_ROW_ANCESTORS = ("p", "fig", "fig-group", "table-wrap", "table-wrap-group", "table-wrap-foot", "caption",
                     "supplementary-material", "fn", "fn-group", "ack", "notes", "ref-list", "glossary", "sub-article")
DROPPED_IN_TEXT = ("fig", "fig-group", "table-wrap", "table-wrap-group", "table-wrap-foot", "caption", "graphic",
                   "inline-graphic", "media", "supplementary-material", "fn", "table", "tex-math", "alt-text", "long-desc")


@pytest.fixture(params=["pypdf", "pypdfium2"])
def engine(request) -> str:
    if request.param == "pypdfium2":
        pytest.importorskip("pypdfium2")
    return request.param


# --------------------------------------------------------------------------- the independent oracle


def _plain_tree(body: bytes) -> etree._Element:
    return etree.fromstring(body, etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False))


def _expected_rows(body: bytes) -> list[tuple[str, str]]:
    """Every <p> of <abstract> and <body> (XPath, document order) that the contract makes a row, with its
    section path (from its <sec> ancestors) and its text (its itertext, minus dropped subtrees)."""
    doc = _plain_tree(body)
    rows = []
    for p in doc.xpath("/article/front/article-meta/abstract//p | /article/body//p"):
        stop = p.xpath("ancestor::abstract | ancestor::body")[-1]
        between = [a for a in p.iterancestors() if a is not stop and stop in a.iterancestors()]
        if any(a.tag in NOT_ROW_ANCESTORS for a in between):
            continue
        clone = copy.deepcopy(p)
        for el in list(clone.iter(*DROPPED_IN_TEXT)):
            parent = el.getparent()
            previous = el.getprevious()
            if el.tail:  # keep the text after a removed element
                if previous is not None:
                    previous.tail = (previous.tail or "") + el.tail
                else:
                    parent.text = (parent.text or "") + el.tail
            parent.remove(el)
        text = " ".join("".join(clone.itertext()).split())
        if not text:
            continue
        titles = [" ".join("".join(s.find("title").itertext()).split()) for s in reversed(between)
                  if s.tag == "sec" and s.find("title") is not None]
        titles = [t for t in titles if t]
        if stop.tag == "abstract":
            titles = ["Abstract", *titles]
        rows.append((" :: ".join(titles), text))
    return rows


# --------------------------------------------------------------------------- real Europe PMC JATS


@pytest.mark.parametrize("path", recorded_params(FIXTURES), ids=lambda p: p.name.split("__")[1])
def test_every_abstract_and_body_p_is_one_row_with_its_section_in_document_order(path):
    body = path.read_bytes()
    article = parse_jats(body)
    expected = _expected_rows(body)
    assert expected, "the oracle found no paragraph"
    assert [(p.section, p.text) for p in article.paragraphs] == expected
    assert [p.paragraph for p in article.paragraphs] == list(range(len(expected)))


@pytest.mark.recorded
def test_the_pinned_shape_of_the_two_real_articles():
    small = parse_jats((DATA / "rest__PMC8118396__fullTextXML.xml").read_bytes())
    big = parse_jats((DATA / "rest__PMC8164761__fullTextXML.xml").read_bytes())
    assert len(small.paragraphs) == 5 and small.paragraphs[0].section == "Abstract"
    assert len(big.paragraphs) == 22
    assert [p.section for p in big.paragraphs[:5]] == [
        "Abstract :: Background", "Abstract :: Results", "Abstract :: Conclusions",
        "Abstract :: Supplementary Information", "Background"]
    assert big.paragraphs[19].section == "Methods :: Plant preparation"
    assert {"Background", "Conclusions"} <= {p.section for p in big.paragraphs}


@pytest.mark.parametrize("path", recorded_params(FIXTURES), ids=lambda p: p.name.split("__")[1])
def test_figures_captions_and_markup_do_not_leak_into_text(path):
    body = path.read_bytes()
    article = parse_jats(body)
    doc = _plain_tree(body)
    captions = [" ".join("".join(c.itertext()).split()) for c in doc.iter("caption")]
    for row in article.paragraphs:
        assert not re.search(r"</?[A-Za-z!?][^>]*>", row.text), row.text  # no tag (a bare "p > 0.05" is text)
        assert not re.search(r"&(#x?[0-9a-fA-F]+|[a-zA-Z]+);", row.text), row.text
        assert row.text == row.text.strip() and "  " not in row.text
        assert "\n" not in row.text and "\t" not in row.text and "\xa0" not in row.text
        for caption in captions:
            if len(caption) > 40:
                assert caption not in row.text
    # entities are decoded: the coordinates in PMC8118396 are written &#x000b0; &#x02032;
    if "8118396" in path.name:
        assert any("34°05′N" in row.text for row in article.paragraphs)


@pytest.mark.recorded
def test_licence_and_ids_are_read_from_article_meta():
    small = parse_jats((DATA / "rest__PMC8118396__fullTextXML.xml").read_bytes())
    big = parse_jats((DATA / "rest__PMC8164761__fullTextXML.xml").read_bytes())
    assert (small.doi, small.pmcid, small.pmid) == ("10.1080/23802359.2021.1911705", "PMC8118396", "")
    assert (big.doi, big.pmcid) == ("10.1186/s13007-021-00757-y", "PMC8164761")
    assert small.license == big.license == "https://creativecommons.org/licenses/by/4.0/"
    assert license_code(big.license) == "cc by"
    assert small.title.startswith("Complete mitochondrial genome sequence of the global invasive species Stictocephala")


@pytest.mark.recorded
def test_the_ref_list_gives_one_record_per_ref_with_its_identifiers():
    big = parse_jats((DATA / "rest__PMC8164761__fullTextXML.xml").read_bytes())
    assert len(big.references) == 22
    third = big.references[2]
    assert (third.ref_id, third.label, third.year) == ("CR3", "3.", "1971")
    assert (third.doi, third.pmid) == ("10.1104/pp.48.6.683", "16657861")
    assert third.title == "Stem diameter in relation to plant water status"
    assert sum(1 for r in big.references if r.doi) >= 15
    small = parse_jats((DATA / "rest__PMC8118396__fullTextXML.xml").read_bytes())
    assert [r.year for r in small.references][:3] == ["1912", "1984", "1987"]
    assert small.references[0].text.startswith("Horváth G. 1912. Az amerikai bivalykabócza Magyarországon.")


@pytest.mark.recorded
def test_a_pmc_articleset_gives_each_article_and_parse_jats_wants_exactly_one():
    bodies = [re.sub(rb"<!DOCTYPE[^>]*>", b"", p.read_bytes()) for p in FIXTURES]
    batch = b"<pmc-articleset>" + b"".join(bodies) + b"</pmc-articleset>"
    assert [a.pmcid for a in parse_jats_set(batch)] == ["PMC8118396", "PMC8164761"]
    with pytest.raises(FullTextError, match="expected one"):
        parse_jats(batch)
    assert parse_jats(b"<pmc-articleset>" + bodies[0] + b"</pmc-articleset>").pmcid == "PMC8118396"
    # a cut batch fails as one (the caller then asks per id), and an empty set is no article
    with pytest.raises(FullTextError):
        parse_jats_set(batch[: len(batch) * 3 // 4])
    assert parse_jats_set(b"<pmc-articleset></pmc-articleset>") == []


# --------------------------------------------------------------------------- the contract on a synthetic article

SYNTHETIC = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving and Interchange DTD v1.2 20190208//EN" "JATS-archivearticle1.dtd">
<article xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:mml="http://www.w3.org/1998/Math/MathML">
<front><article-meta>
  <article-id pub-id-type="pmid">12345</article-id><article-id pub-id-type="pmc">PMC999</article-id>
  <article-id pub-id-type="doi">10.1234/ABC.5</article-id>
  <title-group><article-title>A <italic>title</italic></article-title></title-group>
  <permissions><license license-type="open-access"><license-p>Licensed under CC BY-NC-ND 4.0.</license-p></license></permissions>
  <abstract><sec><title>Background</title><p>Why we <bold>did</bold> it.</p></sec>
    <sec><title>Results</title><p>What we found.</p></sec></abstract>
  <abstract abstract-type="summary"><title>Author summary</title><p>In plain words.</p></abstract>
  <trans-abstract xml:lang="de"><p>Auf Deutsch.</p></trans-abstract>
</article-meta></front>
<body>
  <p>Before any section, see <xref ref-type="bibr" rid="r1">[1]</xref> and <ext-link xlink:href="https://x.org">x.org</ext-link>.</p>
  <sec><title>Methods</title>
    <sec><title>Participants</title>
      <p>We enrolled 40 people (&#x3b1; = 0.05; A &amp; B).<fn id="f1"><p>A footnote.</p></fn></p>
      <p>Data in <table-wrap id="t1"><label>Table 1</label><caption><p>The table caption.</p></caption>
        <table><tr><td>cell &lt;b&gt;</td></tr></table><table-wrap-foot><p>Table footer.</p></table-wrap-foot></table-wrap> the table.</p>
      <p>  </p>
    </sec>
    <sec><p>An untitled section adds nothing.</p>
      <fig id="f1"><caption><p>A figure caption at section level.</p></caption></fig>
    </sec>
    <sec><title>Model</title>
      <p>The model is <inline-formula><alternatives><tex-math>\\documentclass{article}\\begin{document}$y=ax$\\end{document}</tex-math>
        <mml:math><mml:mi>y</mml:mi><mml:mo>=</mml:mo><mml:mi>a</mml:mi><mml:mi>x</mml:mi></mml:math></alternatives></inline-formula> with
        <inline-formula><tex-math>\\alpha</tex-math></inline-formula>only TeX.</p>
      <p>Display: <disp-formula><label>(1)</label><mml:math><mml:msup><mml:mi>x</mml:mi><mml:mn>2</mml:mn></mml:msup>
        <mml:annotation encoding="application/x-tex">x^2</mml:annotation></mml:math></disp-formula></p>
      <p>A list:<list><list-item><p>first</p></list-item><list-item><p>second</p></list-item></list></p>
      <list><list-item><p>A list item at section level.</p></list-item></list>
      <supplementary-material><caption><p>Supplement caption.</p></caption></supplementary-material>
    </sec>
  </sec>
  <sec><title>Acknowledgements in body</title><ack><p>Thanks.</p></ack></sec>
</body>
<back><ack><p>We thank everyone.</p></ack>
  <ref-list><ref id="r1"><label>1</label><element-citation><person-group><name><surname>Doe</surname><given-names>J</given-names></name></person-group>
    <article-title>On things</article-title><source>J Things</source><year>2001</year>
    <ext-link ext-link-type="doi" xlink:href="https://doi.org/10.5555/THINGS.1">link</ext-link></element-citation></ref>
  <ref id="r2"><mixed-citation>Roe R. Other things. 2019. doi:10.5555/other.2. PMID: 777. PMC123.</mixed-citation></ref>
  <ref id="r3"><mixed-citation>No ids at all, 1999.</mixed-citation></ref></ref-list>
</back></article>"""


def test_the_contract_on_a_synthetic_article():
    article = parse_jats(SYNTHETIC.encode())
    assert [(p.section, p.text) for p in article.paragraphs] == [
        ("Abstract :: Background", "Why we did it."),
        ("Abstract :: Results", "What we found."),
        ("Abstract :: Author summary", "In plain words."),
        ("", "Before any section, see [1] and x.org."),
        ("Methods :: Participants", "We enrolled 40 people (α = 0.05; A & B)."),
        ("Methods :: Participants", "Data in the table."),
        ("Methods", "An untitled section adds nothing."),
        ("Methods :: Model", "The model is y=ax with only TeX."),
        ("Methods :: Model", "Display: (1) x2"),
        ("Methods :: Model", "A list: first second"),
        ("Methods :: Model", "A list item at section level."),
    ]
    assert (article.doi, article.pmid, article.pmcid) == ("10.1234/abc.5", "12345", "PMC999")
    assert article.title == "A title"
    assert article.license == "cc by-nc-nd"
    refs = article.references
    assert [(r.label, r.title, r.source, r.year, r.doi) for r in refs[:1]] == [("1", "On things", "J Things", "2001", "10.5555/things.1")]
    assert refs[0].text == "Doe J On things J Things 2001 link"
    assert (refs[1].doi, refs[1].pmid, refs[1].pmcid, refs[1].year) == ("10.5555/other.2", "777", "PMC123", "")
    assert (refs[2].doi, refs[2].pmid, refs[2].pmcid) == ("", "", "")


@pytest.mark.parametrize(("license_xml", "expected"), [
    ('<license xlink:href="https://creativecommons.org/licenses/by-sa/4.0/"><license-p>x</license-p></license>',
     "https://creativecommons.org/licenses/by-sa/4.0/"),
    ('<license><ali:license_ref xmlns:ali="http://www.niso.org/schemas/ali/1.0/">https://creativecommons.org/publicdomain/zero/1.0/'
     '</ali:license_ref></license>', "https://creativecommons.org/publicdomain/zero/1.0/"),
    ("<license><license-p>This is an open access article under the Creative Commons Attribution-NonCommercial License."
     "</license-p></license>", "cc by-nc"),
    # a licence that is not Creative Commons is its text (or its URL), never "" (which means no licence)
    ("<license><license-p>All rights reserved.</license-p></license>", "All rights reserved."),
    ("<license><license-p>This is an open access article distributed under the terms of the Creative Commons Attribution "
     "license (http://creativecommons.org/licenses/by/4.0/).</license-p></license>", "http://creativecommons.org/licenses/by/4.0/"),
    ('<license><license-p>Open Access under the <ext-link ext-link-type="uri" xlink:href="http://creativecommons.org/'
     'licenses/by-nc/3.0/">Creative Commons Attribution License</ext-link>.</license-p></license>',
     "http://creativecommons.org/licenses/by-nc/3.0/"),
    ("<license><license-p>\u00a9 World Health Organization 2020. Licensee WHO. Some rights reserved.</license-p></license>",
     "\u00a9 World Health Organization 2020. Licensee WHO. Some rights reserved."),
    ("", ""),
])
def test_the_licence_forms(license_xml, expected):
    body = (f'<article xmlns:xlink="http://www.w3.org/1999/xlink"><front><article-meta><permissions>{license_xml}'
            f"</permissions></article-meta></front><body><p>x</p></body></article>")
    assert parse_jats(body.encode()).license == expected


@pytest.mark.parametrize(("text", "code"), [
    ("https://creativecommons.org/licenses/by/4.0/", "cc by"),
    ("http://creativecommons.org/licenses/by-nc-nd/3.0/", "cc by-nc-nd"),
    ("CC-BY 4.0", "cc by"),
    ("cc by-nc-sa", "cc by-nc-sa"),
    ("CC0 1.0", "cc0"),
    ("Creative Commons Attribution-NoDerivatives 4.0", "cc by-nd"),
    ("Creative Commons Attribution Non-Commercial No Derivatives", "cc by-nc-nd"),
    ("© Elsevier", ""),
])
def test_license_code_table(text, code):
    assert license_code(text) == code


@pytest.mark.parametrize(("text", "ident"), [
    ("https://creativecommons.org/licenses/by/4.0/", "cc-by-4.0"),
    ("http://creativecommons.org/licenses/by-nc-nd/3.0/igo/", "cc-by-nc-nd-3.0"),
    ("https://creativecommons.org/publicdomain/zero/1.0/", "cc0-1.0"),
    ("CC BY 4.0", "cc-by-4.0"),
    ("Creative Commons Attribution 4.0 International License", "cc-by-4.0"),
    ("Creative Commons Attribution-NonCommercial-NoDerivatives 4.0 International", "cc-by-nc-nd-4.0"),
    ("cc by", "cc-by"),
    ("cc-by-nc", "cc-by-nc"),
    ("distributed under the Creative Commons Attribution License, which permits", "cc-by"),
    ("\u00a9 World Health Organization 2020. Some rights reserved.", ""),
    ("", ""),
])
def test_license_id_table(text, ident):
    from paperfetch.fulltext import license_id

    assert license_id(text) == ident


# --------------------------------------------------------------------------- hostile and broken bodies


def _fails_fast(body: bytes, error: type[Exception] = FullTextError, **kwargs) -> Exception:
    with pytest.raises(error) as info:  # refused, not expanded or walked (a hang ends at the test's timeout)
        parse_jats(body, **kwargs)
    assert isinstance(info.value, PaperfetchError) and isinstance(info.value, ValueError)
    return info.value


@pytest.mark.parametrize("path", recorded_params(FIXTURES), ids=lambda p: p.name.split("__")[1])
def test_a_truncated_body_is_a_full_text_error(path):
    body = path.read_bytes()
    for cut in (len(body) // 3, len(body) // 2, len(body) - 20):
        _fails_fast(body[:cut])


def test_billion_laughs_is_refused_without_expanding():
    lols = "".join(f'<!ENTITY lol{i} "{"&lol%d;" % (i - 1) * 10}">' for i in range(1, 10))
    body = f'<?xml version="1.0"?><!DOCTYPE article [<!ENTITY lol0 "lol">{lols}]><article><body><p>&lol9;</p></body></article>'
    assert "declares entities" in str(_fails_fast(body.encode()))


def test_quadratic_blowup_and_deep_nesting_fail_fast():
    body = f'<!DOCTYPE article [<!ENTITY a "{"x" * 50_000}">]><article><body><p>{"&a;" * 50_000}</p></body></article>'
    _fails_fast(body.encode())
    _fails_fast(b"<article>" + b"<sec>" * 100_000 + b"</sec>" * 100_000 + b"</article>")


class _CountingHandler(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):  # noqa: N802
        type(self).hits.append(self.path)
        payload = b'<!ENTITY xxe "LEAKED-FROM-THE-NETWORK">'
        self.send_response(200)
        self.send_header("Content-Type", "application/xml-dtd")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def dtd_server():
    _CountingHandler.hits = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CountingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _CountingHandler.hits
    server.shutdown()
    server.server_close()
    thread.join()


def test_an_external_dtd_or_entity_is_never_fetched(dtd_server, tmp_path):
    base, hits = dtd_server
    secret = tmp_path / "secret.dtd"
    secret.write_text('<!ENTITY xxe "LEAKED-FROM-A-FILE">')
    leak = tmp_path / "leak.txt"
    leak.write_text("LEAKED-FROM-A-FILE")
    hostile = [
        # an external DTD that would define the entity the body uses
        f'<!DOCTYPE article SYSTEM "{base}/evil.dtd"><article><body><p>&xxe;</p></body></article>',
        f'<!DOCTYPE article SYSTEM "{secret.as_uri()}"><article><body><p>&xxe;</p></body></article>',
        # external general and parameter entities in an internal subset
        f'<!DOCTYPE article [<!ENTITY xxe SYSTEM "{base}/xxe">]><article><body><p>&xxe;</p></body></article>',
        f'<!DOCTYPE article [<!ENTITY % remote SYSTEM "{base}/remote.dtd"> %remote;]><article><body><p>x</p></body></article>',
        f'<!DOCTYPE article [<!ENTITY xxe SYSTEM "{leak.as_uri()}">]><article><body><p>&xxe;</p></body></article>',
    ]
    for body in hostile:
        error = _fails_fast(body.encode())
        assert "LEAKED" not in str(error)
    # a DOCTYPE naming a remote DTD is harmless when nothing needs it: parsed, and still not fetched
    fine = parse_jats(f'<!DOCTYPE article SYSTEM "{base}/jats.dtd"><article><body><p>fine &amp; well</p></body></article>'.encode())
    assert [p.text for p in fine.paragraphs] == ["fine & well"]
    assert hits == []
    # the controls: a parser left at loading settings does read the file's DTD and entity (this libxml2 has
    # no HTTP client of its own, so for the network the control is that the server counts a plain request)
    unsafe = etree.XMLParser(load_dtd=True, no_network=False, resolve_entities=True)
    assert etree.fromstring(hostile[1].encode(), unsafe).findtext("body/p") == "LEAKED-FROM-A-FILE"
    assert etree.fromstring(hostile[4].encode(), unsafe).findtext("body/p") == "LEAKED-FROM-A-FILE"
    with urllib.request.urlopen(f"{base}/evil.dtd", timeout=5) as answer:
        assert b"LEAKED" in answer.read()
    assert hits == ["/evil.dtd"]


@pytest.mark.recorded
def test_a_body_over_the_cap_is_refused_before_parsing():
    huge = b"<article><body><p>" + b"x" * 100_000_000 + b"</p></body></article>"
    error = _fails_fast(huge, FullTextTooLarge)
    assert "over the cap" in str(error)
    _fails_fast((DATA / "rest__PMC8164761__fullTextXML.xml").read_bytes(), FullTextTooLarge, max_bytes=10_000)


@pytest.mark.parametrize("body", [
    b"", b"   ", b"<html><body><p>Service unavailable</p></body></html>", b"not xml at all",
    b'{"error": "not found"}', b"<article><body><p>&nbspx;</p></body></article>",
])
def test_bodies_that_are_not_jats_are_full_text_errors(body):
    _fails_fast(body)


def test_html_named_entities_under_a_jats_doctype_are_decoded():
    body = b'<!DOCTYPE article SYSTEM "jats.dtd"><article><body><p>a&nbsp;b &mdash; c</p></body></article>'
    assert [p.text for p in parse_jats(body).paragraphs] == ["a b \u2014 c"]


# --------------------------------------------------------------------------- PDF text layer

PARAGRAPHS = [
    "Plant water content is a key indicator of physiological status and it changes over the course of a single "
    "day, which makes continuous monitoring valuable for growers and for researchers alike.",
    "We built a small probe that measures the standing wave ratio of a coil placed around the stem; the "
    "measurement is non-invasive and needs no contact with the tissue itself.",
    "Five species were grown in identical pots under controlled light and temperature for three weeks before "
    "the experiments began, and were watered on a fixed schedule by the same operator.",
    "Each pot was weighed every morning. Weights were recorded to the nearest tenth of a gram and the dry "
    "weight was obtained at the end of the study by drying the plants at sixty degrees for two days. "
    "This paragraph is long on purpose, so that when it is set on the page it runs on past the foot of the page "
    "and is continued at the top of the next page without any break in the sentence that spans the two pages, "
    "which the extractor must keep as one paragraph rather than two separate rows of text.",
    "The ratio fell within minutes of watering and recovered over the following hours in every species.",
    "Illumination changed the signal less than watering did, but the effect was consistent across species.",
]


def _article_blocks() -> list[tuple[str, str]]:
    return [
        ("title", "Standing Wave Ratio Monitoring of Plants"),
        ("para", "Jane Doe and Richard Roe"),
        ("heading", "Abstract"), ("para", PARAGRAPHS[0]),
        ("heading", "1. Introduction"), ("para", PARAGRAPHS[1]),
        ("heading", "2. Methods"), ("heading", "2.1 Plant material"), ("para", PARAGRAPHS[2]), ("para", PARAGRAPHS[3]),
        ("heading", "3. Results"), ("para", PARAGRAPHS[4]), ("para", PARAGRAPHS[5]),
        ("heading", "References"), ("para", "[1] Doe J. A reference that must not become a row. 2020."),
    ]


def _pages_breaking_inside_paragraph_3(indent: bool) -> list[list[Line]]:
    """The article set with the first page's top chosen so the page break falls inside PARAGRAPHS[3],
    mid-sentence (the last body line of page 1 does not end with a full stop)."""
    for top in range(300, 741, 4):
        pages = layout_article(_article_blocks(), indent=indent, top=top, footer="Plant Methods (2021) 17:1 page {page}")
        first = " ".join(line.text for line in pages[0])
        if "Each pot was weighed" in first and "two separate rows" not in first and not pages[0][-2].text.endswith("."):
            return pages
    raise AssertionError("no page height splits paragraph 3 mid-sentence")


@pytest.mark.parametrize("indent", [False, True], ids=["gap-separated", "indented"])
def test_pdf_paragraphs_are_one_row_each_with_sections(engine, indent):
    pages = _pages_breaking_inside_paragraph_3(indent)
    rows = pdf_paragraphs(write_pdf(pages), engine=engine)
    texts = [row.text for row in rows]
    assert texts[:2] == ["Standing Wave Ratio Monitoring of Plants", "Jane Doe and Richard Roe"]
    body = [(row.section, row.text) for row in rows[2:]]
    assert body == [
        ("Abstract", PARAGRAPHS[0]),
        ("Introduction", PARAGRAPHS[1]),
        ("Methods :: Plant material", PARAGRAPHS[2]),
        ("Methods :: Plant material", PARAGRAPHS[3]),
        ("Results", PARAGRAPHS[4]),
        ("Results", PARAGRAPHS[5]),
    ]
    assert [row.paragraph for row in rows] == list(range(len(rows)))
    assert not any("must not become a row" in t or "page 1" in t for t in texts)


def test_pdf_lines_are_joined_and_hyphenated_words_mended():
    def line(y: float, text: str, page: int = 0, x: float = 72) -> TextLine:
        return TextLine(page=page, x=x, y=y, size=10, text=text)

    lines = [
        line(700, "Results"),
        line(680, "The measure-"), line(668, "ments of COVID-"), line(656, "19 patients were taken every"),
        line(644, "morning and continued"), line(700, "on the next page.", page=1),
        line(670, "A new paragraph after a gap.", page=1),
        line(640, "4.2.1 Deeply Nested", page=1), line(620, "Text under it.", page=1),
    ]
    rows = paragraphs_from_lines(lines)
    assert rows == [
        Paragraph(section="Results", paragraph=0,
                  text="The measurements of COVID-19 patients were taken every morning and continued on the next page.",
                  page=1),
        Paragraph(section="Results", paragraph=1, text="A new paragraph after a gap.", page=2),
        Paragraph(section="Results :: Deeply Nested", paragraph=2, text="Text under it.", page=2),
    ]


def test_pdf_short_sentence_end_lines_and_all_caps_headings():
    def line(y: float, text: str) -> TextLine:
        return TextLine(page=0, x=72, y=y, size=10, text=text)

    filler = "word " * 16
    lines = [line(700, "INTRODUCTION"), line(680, filler), line(668, filler), line(656, "ends here."),
             line(644, "Next one starts " + filler), line(632, "and ends too."), line(600, "MATERIALS AND TOOLS"),
             line(580, "Body.")]
    rows = paragraphs_from_lines(lines)
    assert [(r.section, r.text[-12:]) for r in rows] == [
        ("INTRODUCTION", "d ends here."), ("INTRODUCTION", "nd ends too."), ("MATERIALS AND TOOLS", "Body.")]


def test_a_pdf_without_text_gives_no_rows(engine):
    assert pdf_paragraphs(write_pdf([[]]), engine=engine) == []


@pytest.mark.parametrize("body", [b"<html>no</html>", b"%PDF-1.4\n garbage \x00\x01", b""])
def test_an_unreadable_pdf_is_a_full_text_error(engine, body):
    with pytest.raises(FullTextError):
        pdf_paragraphs(body, engine=engine)


def test_a_pdf_over_the_cap_and_an_unknown_engine():
    pdf = write_pdf([[Line(72, 700, "Hello.")]])
    with pytest.raises(FullTextTooLarge):
        pdf_paragraphs(pdf, max_bytes=100)
    with pytest.raises(ConfigurationError, match="'pypdf', 'pypdfium2'"):
        pdf_paragraphs(pdf, engine="pymupdf")


def _two_column_pages(indent: bool = False) -> tuple[list[list[Line]], list[str]]:
    """One page, two columns of 45 characters, drawn left column first; the second paragraph runs from the foot
    of the left column to the head of the right one, mid-sentence."""
    paragraphs = [
        "Leaves were sampled at dawn from every plant in the study, and each sample was sealed at once.",
        "The second paragraph is long enough to fill the rest of the left column and to go on at the top of the "
        "right column, where the reader expects it to continue, and the extractor must keep it as one row even "
        "though its lines now start at another place on the page, far to the right of where they started.",
        "A last short paragraph closes the right column.",
    ]
    lines: list[Line] = [Line(72, 700, "1. Methods", size=11, bold=True)]
    y, x = 680.0, 72.0
    for text in paragraphs:
        for i, part in enumerate(wrap_words(text, 45)):
            if y < 580 and x == 72.0:
                y, x = 680.0, 320.0
            lines.append(Line(x + (15 if indent and i == 0 else 0), y, part))
            y -= 12
        y -= 0 if indent else 8
    return [lines], paragraphs


@pytest.mark.parametrize("indent", [False, True], ids=["gap-separated", "indented"])
def test_a_paragraph_running_from_one_column_to_the_next_is_one_row(engine, indent):
    pages, paragraphs = _two_column_pages(indent)
    left = [line for line in pages[0] if line.x == 72]
    right = [line for line in pages[0] if line.x == 320]
    assert left[-1].text in paragraphs[1] and right[0].text in paragraphs[1] and not left[-1].text.endswith(".")
    rows = pdf_paragraphs(write_pdf(pages), engine=engine)
    assert [(r.section, r.text) for r in rows] == [("Methods", p) for p in paragraphs]


@pytest.mark.parametrize("path", recorded_params(FIXTURES), ids=lambda p: p.name.split("__")[1])
def test_cut_or_corrupted_bodies_raise_only_full_text_error(path):
    import random

    body = path.read_bytes()
    rng = random.Random(17)
    for cut in sorted(rng.sample(range(1, len(body.rstrip()) - 1), 150)):
        with pytest.raises(FullTextError):
            parse_jats(body[:cut])
    for _ in range(150):
        spoiled = bytearray(body)
        for position in rng.sample(range(len(body)), 3):
            spoiled[position] = rng.choice(b"<>&;\"'\x00\xff/!?x ")
        try:
            article = parse_jats(bytes(spoiled))
        except FullTextError:
            continue
        for row in article.paragraphs:  # what still parses still keeps the contract
            assert row.text and row.text == " ".join(row.text.split())


def test_cut_or_corrupted_pdfs_raise_only_full_text_error(engine):
    import random

    pdf = write_pdf(_pages_breaking_inside_paragraph_3(False))
    rng = random.Random(3)
    bodies = [pdf[:cut] for cut in rng.sample(range(10, len(pdf)), 30)]
    for _ in range(60):
        spoiled = bytearray(pdf)
        for position in rng.sample(range(len(pdf)), 5):
            spoiled[position] = rng.randrange(256)
        bodies.append(bytes(spoiled))
    for body in bodies:
        try:  # an answer or FullTextError for each, never another exception (nor a hang: the test's timeout)
            pdf_paragraphs(body, engine=engine)
        except FullTextError:
            pass


# --------------------------------------------------------------------------- the frames


def test_the_paragraph_and_reference_frames_have_fixed_columns_even_when_empty():
    from paperfetch.fulltext import PARAGRAPH_COLUMNS, REFERENCE_COLUMNS, paragraphs_frame, references_frame

    assert list(paragraphs_frame([]).columns) == list(PARAGRAPH_COLUMNS) == [
        "input", "doi", "pmid", "pmcid", "text_source", "license", "section", "paragraph", "text",
        "paragraph_id", "citations", "citation_offsets", "figures", "tables", "words", "chars", "page", "license_id",
        "title", "year", "journal", "authors", "retracted"]
    assert len(paragraphs_frame([])) == 0 and len(references_frame([])) == 0
    assert list(references_frame([]).columns) == list(REFERENCE_COLUMNS)
    with pytest.raises(KeyError):
        paragraphs_frame([{"input": "x", "colour": "blue"}])


@pytest.mark.recorded
def test_rows_of_a_jats_paper_and_a_pdf_paper_in_one_frame():
    from paperfetch.fulltext import Article, article_rows, paragraphs_frame, reference_rows, references_frame

    article = parse_jats((DATA / "rest__PMC8164761__fullTextXML.xml").read_bytes())
    pdf = Article(text_source="pdf", paragraphs=(Paragraph(section="", paragraph=0, text="Title"),
                                                 Paragraph(section="Results", paragraph=1, text="Found.")))
    frame = paragraphs_frame(article_rows(article, input="PMC8164761")
                             + article_rows(pdf, input="10.5555/X", record={"doi": "10.5555/x", "license": "cc by",
                                                                          "title": "Found", "retracted": False}))
    assert len(frame) == 24
    assert frame["input"].tolist()[:1] == ["PMC8164761"] and frame["input"].tolist()[-1] == "10.5555/X"
    assert frame["text_source"].tolist() == ["jats"] * 22 + ["pdf"] * 2
    assert frame["pmcid"].iloc[0] == "PMC8164761" and frame["pmcid"].isna().iloc[-1]
    assert frame["paragraph"].tolist() == list(range(22)) + [0, 1]
    assert str(frame["paragraph"].dtype) == "Int64" and frame["section"].iloc[-2] == ""
    assert frame["title"].iloc[-1] == "Found" and frame["license"].iloc[-1] == "cc by" and not frame["retracted"].iloc[-1]
    assert frame["title"].iloc[0] == article.title and frame["retracted"].isna().iloc[0]
    refs = references_frame(reference_rows(article, input="PMC8164761"))
    assert len(refs) == 22 and refs["citing_pmcid"].eq("PMC8164761").all()
    assert refs.loc[2, ["doi", "pmid", "year"]].tolist() == ["10.1104/pp.48.6.683", "16657861", 1971]
