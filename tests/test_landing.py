"""Tests for paperfetch.sources.landing: PDF links declared in publishers' landing pages."""

from __future__ import annotations

import pytest

from paperfetch.sources.landing import decode_html, find_pdf_links, is_bot_challenge
from tests._fixtures import fixtures_or_placeholder

FIXTURES = fixtures_or_placeholder()
LANDING_PAGES = FIXTURES / "landing_pages"

# file -> (the page's own URL, expected first PDF link or None). The truth comes
# from each page's citation_pdf_url meta tag (see PROVENANCE.md).
EXPECTED_FIRST_LINK: dict[str, tuple[str, str | None]] = {
    "aclanthology_N04-1001.html": (
        "https://aclanthology.org/N04-1001/",
        "https://aclanthology.org/N04-1001.pdf",
    ),
    "acs_10.1021_jp003647e_cloudflare_challenge.html": (
        "https://pubs.acs.org/doi/abs/10.1021/jp003647e",
        None,
    ),
    "aps_prx_10.1103_PhysRevX.12.041027.html": (
        "https://journals.aps.org/prx/abstract/10.1103/PhysRevX.12.041027",
        "http://link.aps.org/pdf/10.1103/PhysRevX.12.041027",
    ),
    "hal_jpa-00235190.html": (
        "https://hal.science/jpa-00235190",
        "https://hal.science/jpa-00235190/document",
    ),
    "iopscience_10.1088_1748-605X_ab007b.html": (
        "https://iopscience.iop.org/article/10.1088/1748-605X/ab007b",
        "https://iopscience.iop.org/article/10.1088/1748-605X/ab007b/pdf",
    ),
    "nber_w29971.html": (
        "https://www.nber.org/papers/w29971",
        "https://www.nber.org/system/files/working_papers/w29971/w29971.pdf",
    ),
    "opus4_kobv_trr154_481.html": (
        "https://opus4.kobv.de/opus4-trr154/frontdoor/index/index/docId/481",
        "https://opus4.kobv.de/opus4-trr154/files/481/SchaeferAguilarUlbrichpapernumadjoint.pdf",
    ),
    "peerj_10.7717_peerj.4375.html": (
        "https://peerj.com/articles/4375/",
        "https://peerj.com/articles/4375.pdf",
    ),
    "plos_one_10.1371_journal.pone.0213978.html": (
        "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0213978",
        "https://journals.plos.org/plosone/article/file?id=10.1371/journal.pone.0213978&type=printable",
    ),
    "springerlink_10.1007_s10924-010-0192-1.html": (
        "https://link.springer.com/article/10.1007/s10924-010-0192-1",
        "https://link.springer.com/content/pdf/10.1007/s10924-010-0192-1.pdf",
    ),
    "tandfonline_10.1080_00268976.2013.788745_cloudflare_challenge.html": (
        "https://www.tandfonline.com/doi/full/10.1080/00268976.2013.788745",
        None,
    ),
    "usenix_nsdi22_goyal.html": (
        "https://www.usenix.org/conference/nsdi22/presentation/goyal",
        "https://www.usenix.org/system/files/nsdi22-paper-goyal.pdf",
    ),
}


@pytest.mark.recorded
def test_table_covers_every_fixture() -> None:
    assert sorted(p.name for p in LANDING_PAGES.glob("*.html")) == sorted(EXPECTED_FIRST_LINK)


@pytest.mark.recorded
@pytest.mark.parametrize("name", sorted(EXPECTED_FIRST_LINK))
def test_first_pdf_link_of_each_real_page(name: str) -> None:
    page_url, expected = EXPECTED_FIRST_LINK[name]
    body = (LANDING_PAGES / name).read_bytes()
    links = find_pdf_links(body, page_url)
    assert (links[0] if links else None) == expected
    assert len(links) == len(set(links))
    assert all(link.startswith(("http://", "https://")) for link in links)
    # str input gives the same answer as bytes
    assert find_pdf_links(body.decode("utf-8", "replace"), page_url) == links


@pytest.mark.recorded
@pytest.mark.parametrize("name", sorted(EXPECTED_FIRST_LINK))
def test_is_bot_challenge_on_real_pages(name: str) -> None:
    body = (LANDING_PAGES / name).read_bytes()
    assert is_bot_challenge(body) == name.endswith("cloudflare_challenge.html")


@pytest.mark.recorded
def test_peerj_alternate_link_is_resolved_and_deduplicated() -> None:
    body = (LANDING_PAGES / "peerj_10.7717_peerj.4375.html").read_bytes()
    # The <link rel=alternate> is relative ("/articles/4375.pdf") and names the same PDF as the meta tag.
    assert find_pdf_links(body, "https://peerj.com/articles/4375/") == ["https://peerj.com/articles/4375.pdf"]
    # Against another base it is a distinct, lower-priority link.
    assert find_pdf_links(body, "https://mirror.example/articles/4375/") == [
        "https://peerj.com/articles/4375.pdf",
        "https://mirror.example/articles/4375.pdf",
    ]


# --------------------------------------------------------------------------- synthetic pages

BASE = "https://publisher.example/article/123"


def test_priority_order_and_dedup() -> None:
    page = """<html><head>
    <meta name="eprints.document_url" content="https://repo.example/eprint.pdf">
    <link rel="alternate" type="application/pdf" href="/alt.pdf">
    <meta name="bepress_citation_pdf_url" content="https://repo.example/bepress.pdf">
    <meta name="citation_pdf_url" content="https://publisher.example/main.pdf">
    <meta name="citation_pdf_url" content="https://publisher.example/main.pdf">
    <meta property="citation_pdf_url" content="/second.pdf">
    </head></html>"""
    assert find_pdf_links(page, BASE) == [
        "https://publisher.example/main.pdf",
        "https://publisher.example/second.pdf",
        "https://publisher.example/alt.pdf",
        "https://repo.example/eprint.pdf",
        "https://repo.example/bepress.pdf",
    ]


def test_names_and_attributes_are_case_insensitive() -> None:
    page = '<META NAME="Citation_PDF_URL" CONTENT="a.pdf"><LINK REL="Alternate Print" TYPE="Application/PDF" HREF="b.pdf">'
    assert find_pdf_links(page, "https://x.example/dir/page") == [
        "https://x.example/dir/a.pdf",
        "https://x.example/dir/b.pdf",
    ]


def test_base_href_is_honoured() -> None:
    page = '<head><meta name="citation_pdf_url" content="files/p.pdf"><base href="/static/v2/"></head>'
    assert find_pdf_links(page, BASE) == ["https://publisher.example/static/v2/files/p.pdf"]


def test_protocol_relative_url_takes_the_page_scheme() -> None:
    page = '<meta name="citation_pdf_url" content="//cdn.example/p.pdf">'
    assert find_pdf_links(page, BASE) == ["https://cdn.example/p.pdf"]


def test_only_http_and_https_links_are_kept() -> None:
    page = """
    <meta name="citation_pdf_url" content="javascript:void(0)">
    <meta name="citation_pdf_url" content="ftp://ftp.example/p.pdf">
    <meta name="citation_pdf_url" content="mailto:someone@uni.example">
    <meta name="citation_pdf_url" content="">
    <meta name="citation_pdf_url">
    <meta name="citation_pdf_url" content="  https://ok.example/p.pdf  ">
    """
    assert find_pdf_links(page, BASE) == ["https://ok.example/p.pdf"]


def test_only_pdf_alternates_count() -> None:
    page = """
    <link rel="alternate" type="application/rss+xml" href="/feed">
    <link rel="stylesheet" type="application/pdf" href="/not-alternate.pdf">
    <link rel="alternate" type="application/pdf; charset=binary" href="/yes.pdf">
    """
    assert find_pdf_links(page, BASE) == ["https://publisher.example/yes.pdf"]


def test_query_strings_survive_entity_decoding() -> None:
    # &amp; is decoded; "&section=" and "&not=" are not entity references inside an attribute (HTML5).
    page = '<meta name="citation_pdf_url" content="/file?id=1&amp;type=printable&section=2&not=3&#x26;x=4">'
    assert find_pdf_links(page, BASE) == ["https://publisher.example/file?id=1&type=printable&section=2&not=3&x=4"]


def test_malformed_html_does_not_raise() -> None:
    page = (
        '<html><head><meta name=citation_pdf_url content=https://x.example/a.pdf'
        "<div <<< <![if !IE]> <!DOCTYPE <meta name='citation_pdf_url' content='/b.pdf'"
        '<script>if (a < b) { "</head>" }</script><meta name="citation_pdf_url" content="/c.pdf">'
    )
    links = find_pdf_links(page, BASE)
    assert "https://publisher.example/c.pdf" in links
    assert find_pdf_links("", BASE) == []
    assert find_pdf_links(b"\x00\xff\xfe garbage <<<", BASE) == []


def test_meta_in_body_is_still_found() -> None:
    page = '<html><head></head><body><meta name="citation_pdf_url" content="/late.pdf"></body></html>'
    assert find_pdf_links(page, BASE) == ["https://publisher.example/late.pdf"]


def test_declared_charset_is_used_for_bytes() -> None:
    page = '<html><head><meta charset="iso-8859-1"><meta name="citation_pdf_url" content="/caf\u00e9.pdf">'
    body = page.encode("iso-8859-1")
    assert decode_html(body) == page
    assert find_pdf_links(body, BASE) == ["https://publisher.example/caf\u00e9.pdf"]


def test_undecodable_bytes_and_unknown_charset_fall_back_to_utf8() -> None:
    body = b'<meta charset="utf-8,iso-8859-1"><meta name="citation_pdf_url" content="/p.pdf">\xff\xfe'
    assert find_pdf_links(body, BASE) == ["https://publisher.example/p.pdf"]
    assert decode_html(b"\xef\xbb\xbf<html>") == "<html>"


def test_is_bot_challenge_accepts_str_and_bytes() -> None:
    assert is_bot_challenge("<html><head><title>Just a moment...</title></head></html>")
    assert not is_bot_challenge(b"<html><head><title>An article</title></head></html>")


def test_the_content_type_charset_comes_before_the_meta_declaration():
    # a Shift_JIS page whose <meta> (wrongly) says UTF-8, served with the right header
    body = '<html><head><meta charset="utf-8"><meta name="citation_title" content="論文"></head></html>'.encode("shift_jis")
    assert "論文" in decode_html(body, "text/html; charset=Shift_JIS")
    assert "論文" not in decode_html(body)  # without the header the declaration decides
    # a Latin-1 page whose <meta> (wrongly) says UTF-8: the header's charset is the one read
    latin = '<meta charset="utf-8"><meta name="citation_pdf_url" content="/caf\u00e9.pdf">'.encode("latin-1")
    assert find_pdf_links(latin, "https://x.example/a/", "text/html; charset=ISO-8859-1") == ["https://x.example/caf\u00e9.pdf"]
    # without the header the declaration decides; how its bad bytes come out is the decoder's business, but they
    # never raise and the link is still found
    assert [link.startswith("https://x.example/caf") for link in find_pdf_links(latin, "https://x.example/a/")] == [True]
