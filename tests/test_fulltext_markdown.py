"""paperfetch.fulltext.markdown: each paper as Markdown.

What is written is read here by :func:`_paragraphs_of` (the package writes Markdown and does not read it back):
on every real JATS body in shared/fixtures/real (fulltext_pairs/*.xml and the Europe PMC fullTextXML bodies)
each paragraph comes out once, with its section, id, text and citations; the escaping is checked on random text
(Hypothesis) and, with pandoc where it is installed, by rendering: footnotes resolve and escaped text renders as
itself.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from paperfetch.fulltext import paragraphs_frame, read
from paperfetch.fulltext.bundle import FullText
from paperfetch.fulltext.frame import references_frame
from paperfetch.fulltext.markdown import FRONT_MATTER_KEYS, escape, reuse_of, to_markdown

PANDOC = shutil.which("pandoc")
_UNESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_PARAGRAPH = re.compile(r'^(.*) <a id="([^"]*)"((?: data-[a-z]+="[^"]*")*)></a>$', re.S)
_LINK = re.compile(r"(?<!\\)\[((?:\\.|[^\\\]])*)\]\(#[^)\s]*\)")
_CITATIONS = re.compile(r' data-citations="([^"]*)"')


def unescape(text: str) -> str:
    return _UNESCAPE.sub(r"\1", text)


def _paragraphs_of(document: str) -> list[tuple[str, str, str, list[str]]]:
    """Each paragraph block of a paperfetch Markdown document as ``(section, paragraph_id, text, citations)``:
    headings (``##`` … ``######``) and breaks (``* * *``) set the section path; the block's anchor gives its id and
    its citations (``data-citations``), and a linked label reads as its text."""
    path: list[str] = []
    out = []
    for block in document.split("\n---\n", 1)[1].split("\n\n"):
        if block == "* * *":
            path = []
        elif heading := re.match(r"^(#{2,6}) (.*)$", block):
            path = [*path[: len(heading.group(1)) - 2], unescape(heading.group(2))]
        elif paragraph := _PARAGRAPH.match(block):
            body = re.sub(r"(?: \[\\\[[^\]]*\\\]\]\(#[^)\s]*\))+$", "", paragraph.group(1))  # citations with no place
            cited = _CITATIONS.search(paragraph.group(3))
            out.append((" :: ".join(path), paragraph.group(2), unescape(_LINK.sub(r"\1", body)),
                        cited.group(1).split() if cited else []))
    return out


def _rows(frame: pd.DataFrame) -> list[tuple[str, str, str, list[str]]]:
    return [(str(s) if isinstance(s, str) else "", str(p), str(t), list(c))
            for s, p, t, c in zip(frame["section"], frame["paragraph_id"], frame["text"], frame["citations"])]


@pytest.fixture(scope="module")
def real_bundle(tmp_path_factory) -> FullText:
    from tests._fixtures import require_real_fixtures

    root = require_real_fixtures()
    folder = tmp_path_factory.mktemp("jats")
    for path in [*(root / "fulltext_pairs").glob("*.xml"), *(root / "europepmc").glob("rest__*.xml")]:
        shutil.copy(path, folder / path.name)
    bundle = read(folder)
    assert bundle.errors.empty and bundle.paragraphs["input"].nunique() == 10
    return bundle


@pytest.fixture(scope="module")
def real_documents(real_bundle) -> dict[object, str]:
    return to_markdown(real_bundle)


def _part(frame: pd.DataFrame, key: object) -> pd.DataFrame:
    return frame[frame["input"] == key].reset_index(drop=True)


def test_every_real_jats_paragraph_table_figure_and_reference_is_written(real_bundle, real_documents):
    assert list(real_documents) == list(dict.fromkeys(real_bundle.paragraphs["input"]))
    for key, document in real_documents.items():
        assert _paragraphs_of(document) == _rows(_part(real_bundle.paragraphs, key)), key
        for row in _part(real_bundle.tables, key).itertuples():
            assert (not isinstance(row.markdown, str) or row.markdown in document) and f'<a id="{row.table_id}"' in document
        for row in _part(real_bundle.figures, key).itertuples():
            assert f'<a id="{row.figure_id}" class="figure"' in document, key
        assert all(f'\n<a id="{rid}"></a>' in document for rid in _part(real_bundle.references, key)["ref_id"].dropna())
    assert sum(len(c) for c in real_bundle.paragraphs["citations"]) > 400  # the bodies do cite (460 citations)


def test_read_of_a_folder_leaves_the_markdown_twins_alone(real_documents, tmp_path):
    for key, document in real_documents.items():
        (tmp_path / f"{Path(str(key)).stem}.md").write_text(document, encoding="utf-8")
    again = read(tmp_path)
    assert again.errors.empty and again.paragraphs.empty


def test_the_front_matter_is_yaml_with_every_key_and_the_licence(real_documents):
    for document in real_documents.values():
        meta = yaml.safe_load(document.split("---\n")[1])
        assert list(meta) == list(FRONT_MATTER_KEYS)
        assert meta["license"] and meta["reuse"] in ("open", "restricted", "unknown") and meta["text_source"] == "jats"
        assert "> **Licence:**" in document


def test_headings_anchors_tables_and_footnotes_are_written(real_bundle, real_documents):
    key = next(k for k in real_documents if str(k).startswith("PMC4417228"))
    document = real_documents[key]
    paragraphs = _part(real_bundle.paragraphs, key)
    assert "## Abstract\n\n### Background" in document
    for pid in paragraphs["paragraph_id"]:
        assert len(re.findall(f'<a id="{pid}"[ >].*?</a>\n', document)) == 1, pid
    first_table = _part(real_bundle.tables, key).iloc[0]
    assert f"**{first_table['label']}** " in document and first_table["markdown"] in document
    cited = {rid for rids in paragraphs["citations"] for rid in rids}
    assert all(f'\n<a id="{rid}"></a>' in document for rid in cited)
    assert "<https://doi.org/" in document


@pytest.mark.skipif(PANDOC is None, reason="pandoc is not installed")
def test_pandoc_renders_each_document_with_every_citation_linked_to_its_reference(real_bundle, real_documents, tmp_path):
    for key, document in real_documents.items():
        source = tmp_path / "doc.md"
        source.write_text(document, encoding="utf-8")
        done = subprocess.run([PANDOC, "-f", "markdown", "-t", "html", str(source)], capture_output=True, text=True,
                              timeout=60, check=True)
        cited = [rid for frame in (real_bundle.paragraphs, real_bundle.tables, real_bundle.figures)
                 for rids in _part(frame, key)["citations"] for rid in rids]
        targets = re.findall(r'href="#([^"]+)"', done.stdout)
        assert "[^" not in done.stdout and 'class="footnote-ref"' not in done.stdout, key
        assert set(targets) <= set(re.findall(r' id="([^"]+)"', done.stdout)), key  # every link resolves
        # one link a place a citation is printed (the ids of a range "[3–6]" share one: its end), one a cited float
        paragraphs = _part(real_bundle.paragraphs, key)
        places = sum(len(set(o)) for o in paragraphs["citation_offsets"])
        places += sum(len(set(c)) for frame in (real_bundle.tables, real_bundle.figures) for c in _part(frame, key)["citations"])
        assert set(targets) <= set(cited) and len(targets) == places, key
        assert "<table" in done.stdout or _part(real_bundle.tables, key).empty


_HOSTILE = ("*not emphasis* _nor this_ [a](link) <b>html</b> &amp; `code` # @cite $x$ ~sub~ ^sup^ | pipe "
            "\\ backslash [^fake] {#id}")


@pytest.mark.skipif(PANDOC is None, reason="pandoc is not installed")
def test_escaped_text_renders_as_itself_in_pandoc():
    for text in (_HOSTILE, "1. not a list", "- not an item", "# not a heading", "> not a quote", "+ plus"):
        done = subprocess.run([PANDOC, "-f", "markdown-smart", "-t", "plain", "--wrap=none"], input=escape(text),
                              capture_output=True, text=True, timeout=60, check=True)
        assert done.stdout.strip() == text


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1,
                        max_size=80), min_size=1, max_size=12))
def test_escape_round_trips_any_text(texts):
    texts = [" ".join(text.split()) or "x" for text in texts]
    assert [unescape(escape(text)) for text in texts] == texts
    frame = paragraphs_frame([{"input": "x", "section": "A :: B", "paragraph": n, "text": text,
                               "paragraph_id": f"p{n}", "citations": ["r1"], "figures": [], "tables": []}
                              for n, text in enumerate(texts)])
    back = _paragraphs_of(to_markdown(FullText(paragraphs=frame, references=references_frame([])))["x"])
    assert [t for _, _, t, _ in back] == texts and [c for _, _, _, c in back] == [["r1"]] * len(texts)


def _synthetic(sections: list[str], **paper: object) -> FullText:
    rows = [{"input": "paper", "section": s, "paragraph": n, "text": f"Paragraph {n}.", "citations": [],
             "figures": [], "tables": [], **paper} for n, s in enumerate(sections)]
    return FullText(paragraphs=paragraphs_frame(rows), references=references_frame([]))


def test_sections_that_go_back_up_or_to_none_round_trip():
    sections = ["", "Abstract", "Methods", "Methods :: A", "Methods :: A :: deep", "Methods", "", "Results :: X",
                "Results", "Results :: Y", "1 :: 2 :: 3 :: 4 :: 5 :: 6 :: 7", "1 :: 2 :: 3 :: 4 :: 5 :: 6", "1 :: 2"]
    document = to_markdown(_synthetic(sections))["paper"]
    back = _paragraphs_of(document)
    assert [s for s, _, _, _ in back] == sections
    assert [p for _, p, _, _ in back] == [f"p{n}" for n in range(len(sections))]


_TITLE = st.sampled_from(["Methods", "Results", "A", "B", "1. Numbered", "*Starred*", "x :: y"])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.lists(_TITLE, max_size=8), st.lists(st.sampled_from(["r1", "r2", "b-3"]), max_size=4)),
                min_size=1, max_size=15))
def test_any_sections_and_citations_round_trip(rows):
    sections = [" :: ".join(titles) for titles, _ in rows]
    frame = paragraphs_frame([{"input": "paper", "section": s, "paragraph": n, "text": f"Text {n}.", "citations": c,
                               "figures": [], "tables": []} for n, (s, (_, c)) in enumerate(zip(sections, rows))])
    back = _paragraphs_of(to_markdown(FullText(paragraphs=frame, references=references_frame([])))["paper"])
    assert [s for s, _, _, _ in back] == sections
    assert [c for _, _, _, c in back] == [c for _, c in rows]


def test_a_paper_without_a_reuse_licence_says_so_and_is_logged(caplog):
    caplog.set_level(logging.WARNING, logger="paperfetch")
    none = to_markdown(_synthetic(["Intro"]))["paper"]
    meta = yaml.safe_load(none.split("---\n")[1])
    assert meta["license"] is None and meta["reuse"] == "unknown"
    assert "no licence given" in none and "unknown licence" in caplog.text
    nc = to_markdown(_synthetic(["Intro"], license="https://creativecommons.org/licenses/by-nc-nd/4.0/"))["paper"]
    assert yaml.safe_load(nc.split("---\n")[1])["reuse"] == "restricted"
    assert [reuse_of(x) for x in ("cc by", "CC0", "http://creativecommons.org/licenses/by-sa/3.0/", "All rights", None)] \
        == ["open", "open", "open", "unknown", "unknown"]


def test_papers_add_the_title_and_the_text_files_sha256(tmp_path):
    kept = tmp_path / "paper.xml"
    kept.write_bytes(b"<article/>")
    papers = pd.DataFrame([{"input": "paper", "title": "A *title*", "text_path": str(kept)}])
    document = to_markdown(_synthetic(["Intro"]), papers=papers)["paper"]
    meta = yaml.safe_load(document.split("---\n")[1])
    assert meta["title"] == "A *title*" and "# A \\*title\\*" in document
    assert meta["sha256"] == hashlib.sha256(b"<article/>").hexdigest()
    assert json.loads(document.split("input: ")[1].split("\n")[0]) == "paper"
    own = _synthetic(["Intro"], license="https://creativecommons.org/licenses/by/4.0/", doi="10.1/own")
    other = pd.DataFrame([{"input": "paper", "license": "cc by-nc", "doi": "10.1/other", "pmid": "123"}])
    meta = yaml.safe_load(to_markdown(own, papers=other)["paper"].split("---\n")[1])
    assert (meta["license"], meta["doi"], meta["pmid"]) == ("https://creativecommons.org/licenses/by/4.0/", "10.1/own",
                                                            "123")


@pytest.mark.parametrize("folder", ["jats", "pdf/solo"])
def test_local_files_give_their_title_and_sha256(folder):
    """Markdown of files read from disk: every real JATS article (97) has its ``<article-title>``, every PDF with no
    JATS beside it a title from its first page, and each front matter the SHA-256 of the file read."""
    from tests._fixtures import require_real_fixtures

    root = require_real_fixtures() / "articles" / folder
    bundle = read(root)
    documents = to_markdown(bundle)
    assert len(documents) == bundle.paragraphs["input"].nunique() == (97 if folder == "jats" else 9)
    for key, document in documents.items():
        meta = yaml.safe_load(document.split("---\n")[1])
        assert isinstance(meta["title"], str) and meta["title"].strip(), key
        assert meta["sha256"] == hashlib.sha256((root / str(key)).read_bytes()).hexdigest(), key
    titles = bundle.paragraphs.groupby("input")["title"].first()
    if folder == "pdf/solo":
        assert titles["cermine_test1.pdf"].startswith("Complications related to deep venous thrombosis prophylaxis")


# --------------------------------------------------------------------------- paperfetch text --format md|chunks


@pytest.fixture(scope="module")
def demo_world():
    from paperfetch.demo import DemoWorld

    with DemoWorld(base_ip=30) as world:
        yield world


@pytest.fixture
def demo_env(demo_world, monkeypatch):
    for name, url in demo_world.endpoints.items():
        monkeypatch.setenv(f"PAPERFETCH_{name.upper()}_URL", url)
    monkeypatch.setenv("PAPERFETCH_DELAY_MIN", "0")
    monkeypatch.setenv("PAPERFETCH_DELAY_MAX", "0")
    return demo_world


def _text_cli(*args: str, out: Path) -> list[str]:
    from paperfetch.demo.fulltext import JATS_DOIS
    from paperfetch.demo.research import science_papers

    ids = [*JATS_DOIS, science_papers()[0]["doi"], "10.5555/demo.closed"]
    return ["text", *ids, "--email", "t@uni.example", "--out", str(out), "--state", "memory", "--no-cache",
            "--no-progress", *args]


def test_cli_text_format_md_writes_one_markdown_file_per_paper_beside_its_text(demo_env, tmp_path, capsys):
    from paperfetch.cli import main

    main(_text_cli(out=tmp_path / "warm"))  # the module's world is warm from here on: each run asks alike
    start = demo_env.requests_served()
    main(_text_cli(out=tmp_path / "plain"))
    plain = demo_env.requests_served() - start
    code = main(_text_cli("--format", "md", out=tmp_path))
    out, _ = capsys.readouterr()
    assert code == 1  # the closed paper has no text
    assert demo_env.requests_served() - start - plain == plain  # the Markdown's other frames cost no request
    written = sorted(tmp_path.glob("*.md"))
    assert len(written) == 3 and "3 Markdown files written to" in out
    for path in written:
        kept = next(p for p in tmp_path.iterdir() if p.stem == path.stem and p.suffix in (".xml", ".pdf"))
        text = path.read_text(encoding="utf-8")
        meta = yaml.safe_load(text.split("---\n")[1])
        assert meta["sha256"] == hashlib.sha256(kept.read_bytes()).hexdigest()
        assert meta["text_source"] == kept.suffix[1:].replace("xml", "jats") and meta["title"] and meta["year"]
        back = _paragraphs_of(text)
        assert len(back) > 0 and len({p for _, p, _, _ in back}) == len(back)
        if kept.suffix == ".xml":
            assert meta["license"] and "](#" in text and "[^" not in text
            original = read(kept).paragraphs
            assert [t for _, _, t, _ in back] == original["text"].tolist()
            assert [c for _, _, _, c in back] == original["citations"].tolist()
    before = demo_env.requests_served()
    assert main(_text_cli("--format", "md", out=tmp_path)) == 1  # again, from disk: the same files, no request
    assert demo_env.requests_served() == before
    for path in written:
        meta = yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1])
        assert meta["title"] and meta["year"], path.name
    assert main(_text_cli("--format", "md-plain", out=tmp_path)) == 1  # for a language model: the plain flavor
    for path in written:
        text = path.read_text(encoding="utf-8")
        assert "<a " not in text and "](#" not in text and yaml.safe_load(text.split("---\n")[1])["title"], path.name


def test_cli_text_format_chunks_prints_one_json_line_per_chunk(demo_env, tmp_path, capsys):
    from paperfetch.cli import main

    main(_text_cli("--format", "chunks", "--max-tokens", "100", "--overlap", "10", out=tmp_path))
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows and {row["input"] for row in rows} == set(_text_cli(out=tmp_path)[1:4])
    assert all(row["tokens"] <= 100 and row["paragraph_ids"] and row["chunk_id"].startswith("c") for row in rows)
    assert "papers: " in err and "text of " in err  # the counts line on stderr, stdout all chunks
    code = main(_text_cli("--format", "jsonl", out=tmp_path))  # per-paper lines, as before
    out, _ = capsys.readouterr()
    assert code == 1 and [json.loads(line)["input"] for line in out.splitlines()] == _text_cli(out=tmp_path)[1:5]


def test_cli_text_report_follows_format_chunks(demo_env, tmp_path, capsys):
    import pandas as pd

    from paperfetch.cli import main

    report = tmp_path / "chunks.parquet"
    main(_text_cli("--format", "chunks", "--max-tokens", "100", "--report", str(report), out=tmp_path))
    printed = [json.loads(line) for line in capsys.readouterr()[0].splitlines()]
    written = pd.read_parquet(report)
    assert {"chunk_id", "tokens", "paragraph_ids"} <= set(written.columns) and "paragraph" not in written.columns
    assert list(written["chunk_id"]) == [row["chunk_id"] for row in printed]
    assert list(written["text"]) == [row["text"] for row in printed]


def test_cli_text_refuses_a_bad_chunk_budget_before_any_request(tmp_path, capsys):
    from paperfetch.cli import main

    assert main(_text_cli("--format", "chunks", "--max-tokens", "10", "--overlap", "6", out=tmp_path)) == 2
    assert "--overlap" in capsys.readouterr().err


def test_citations_stand_where_they_occur_in_text_and_markdown():
    """A synthetic JATS paragraph: each citation's printed label linked to its reference (once: no footnote
    beside it), a range's ids at its end."""
    from paperfetch.fulltext import parse_jats

    body = (b'<article><body><p>Known <xref ref-type="bibr" rid="r1">[1]</xref> and '
            b'<xref ref-type="bibr" rid="r2">[2]</xref>&#8211;<xref ref-type="bibr" rid="r4">[4]</xref>, '
            b'see <xref ref-type="fig" rid="f1">Fig 1</xref>.</p></body><back><ref-list>'
            b'<ref id="r1"/><ref id="r2"/><ref id="r3"/><ref id="r4"/></ref-list></back></article>')
    p = parse_jats(body).paragraphs[0]
    assert p.text == "Known [1] and [2]\u2013[4], see Fig 1."
    assert p.citations == ("r1", "r2", "r3", "r4") and p.citation_offsets == (9, 17, 21, 21)
    frame = paragraphs_frame([{"input": "x", "section": "", "paragraph": 0, "text": p.text,
                               "citations": list(p.citations), "citation_offsets": list(p.citation_offsets)}])
    document = to_markdown(FullText(paragraphs=frame, references=references_frame([])))["x"]
    assert "Known \\[[1](#r1)\\] and \\[[2](#r2)\\]\u2013\\[[4](#r4)\\], see" in document
    plain = to_markdown(FullText(paragraphs=frame, references=references_frame([])), flavor="plain")["x"]
    assert f"\n\n{p.text}\n" in plain and "](#" not in plain
    assert _paragraphs_of(document) == [("", "p0", p.text, ["r1", "r2", "r3", "r4"])]


def test_real_citation_offsets_end_where_a_link_does(real_bundle):
    rows = real_bundle.paragraphs
    assert all(len(c) == len(o) for c, o in zip(rows["citations"], rows["citation_offsets"]))
    assert all(0 < o <= len(t) and t[o - 1] != " " for t, offs in zip(rows["text"], rows["citation_offsets"])
               for o in offs)


# What a notebook shows: IPython's Markdown() is rendered as CommonMark (GFM) with no front-matter extension.
_NOTEBOOK = [PANDOC or "pandoc", "-f", "gfm-yaml_metadata_block", "-t", "html", "--wrap=none"]


@pytest.fixture(scope="module")
def article_bundle(tmp_path_factory) -> FullText:
    """Two real JATS articles of each publisher in shared/fixtures/real/articles (eLife, Hindawi, PLOS, PMC OA …)."""
    from tests._fixtures import require_real_fixtures

    folder = tmp_path_factory.mktemp("articles")
    for publisher in sorted((require_real_fixtures() / "articles" / "jats").iterdir()):
        for path in sorted(p for p in publisher.iterdir() if p.suffix in (".xml", ".nxml"))[:2]:
            shutil.copy(path, folder / f"{publisher.name}_{path.name}")
    bundle = read(folder)
    assert bundle.errors.empty and bundle.paragraphs["input"].nunique() >= 8
    return bundle


def _headings_html(html_text: str) -> list[str]:
    return re.findall(r"<h[1-6][^>]*>.*?</h[1-6]>", html_text, re.S)


@pytest.mark.skipif(PANDOC is None, reason="pandoc is not installed")
def test_a_notebook_shows_no_heading_made_of_the_front_matter(article_bundle):
    old = "---\ntitle: x\ndoi: null\n---\n\n# x\n"  # the closing line of a block of text is a setext heading
    shown = subprocess.run(_NOTEBOOK, input=old, capture_output=True, text=True, timeout=60, check=True).stdout
    assert "<h2" in shown and "doi:" in _headings_html(shown)[0]
    for key, document in to_markdown(article_bundle).items():
        shown = subprocess.run(_NOTEBOOK, input=document, capture_output=True, text=True, timeout=60, check=True).stdout
        headings = _headings_html(shown)
        title = yaml.safe_load(document.split("---\n")[1])["title"]
        assert headings[0].startswith("<h1") and len([h for h in headings if h.startswith("<h1")]) == 1, key
        assert not title or html.escape(title.split()[0], quote=False) in headings[0], key  # the paper's title
        assert not any(word in h for h in headings for word in ("doi:", "sha256:", "license:")), key


@pytest.mark.skipif(PANDOC is None, reason="pandoc is not installed")
def test_pandoc_reads_the_front_matter_of_the_written_file_as_metadata(article_bundle, tmp_path):
    for key, document in to_markdown(article_bundle).items():
        source = tmp_path / "paper.md"
        source.write_text(document, encoding="utf-8")
        done = subprocess.run([PANDOC, "-s", str(source), "-t", "json"], capture_output=True, text=True, timeout=60,
                              check=True)
        meta = json.loads(done.stdout)["meta"]
        title = yaml.safe_load(document.split("---\n")[1])["title"]
        words = [part["c"] for part in meta["title"]["c"] if part["t"] == "Str"]
        assert words and " ".join(words).split()[0] == title.split()[0], key
        assert set(FRONT_MATTER_KEYS) - {k for k, v in yaml.safe_load(document.split("---\n")[1]).items()
                                         if v is None} <= set(meta), key


def test_the_plain_flavor_has_no_anchor_no_footnote_and_each_citation_once(article_bundle):
    full, plain = to_markdown(article_bundle), to_markdown(article_bundle, flavor="plain")
    assert list(plain) == list(full)
    rows = article_bundle.paragraphs
    assert sum(len(set(o)) for o in rows["citation_offsets"]) > 200  # the articles do cite, in captions too
    assert sum(len(c) for c in article_bundle.figures["citations"]) > 5
    for key, document in plain.items():
        assert "<a id=" not in document and "<a " not in document and "[^" not in document and "](#" not in document
        assert yaml.safe_load(document.split("---\n")[1]) == yaml.safe_load(full[key].split("---\n")[1])
        blocks = document.split("\n\n")
        for row in _part(rows, key).itertuples():
            # the paragraph as printed: its citations stand once, as the paper prints them, and nothing is added
            expected = row.text if len(row.citations) == len(row.citation_offsets) else None
            assert expected is None or expected in blocks, (key, row.paragraph_id)
        for row in _part(article_bundle.figures, key).itertuples():  # a caption prints its citations: none added
            parts = [f"**{row.label}**" if isinstance(row.label, str) and row.label else "", row.caption if isinstance(row.caption, str) else ""]
            assert " ".join(x for x in parts if x) in blocks, (key, row.figure_id)
    for key, document in full.items():  # the full flavor: the printed label linked, never a footnote beside it
        assert "[^" not in document
        assert _paragraphs_of(document) == _rows(_part(rows, key)), key


def test_an_unknown_flavor_is_refused():
    with pytest.raises(ValueError, match="flavor"):
        to_markdown(_synthetic(["Intro"]), flavor="html")  # type: ignore[arg-type]
