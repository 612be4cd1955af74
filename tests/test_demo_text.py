"""The demo shows full text: its PDFs have a text layer (synthetic, tests/write_demo_data.py), a JATS has a table,
the bioRxiv preprint's journal version is open, and ``paperfetch demo`` prints a full-text line."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from paperfetch.demo import DemoWorld
from paperfetch.fulltext import read
from tests._quick import retriever

PREPRINT = "10.1101/2026.01.05.000001"
SECTIONS = ["Introduction", "Methods", "Results", "Discussion"]


@pytest.fixture(scope="module")
def world():
    with DemoWorld(base_ip=220) as w:
        yield w


def test_fulltext_of_demo_papers_gives_a_pdfs_paragraphs_and_a_jats_table(world, tmp_path):
    with retriever(tmp_path, world.endpoints, state="memory", cache=False) as r:
        text = r.fulltext(["10.5555/demo.fast", "10.5555/demo.jats.sensor"])
    outcomes = text.outcomes.set_index("input")
    assert list(outcomes["status"]) == ["downloaded", "downloaded"], text.errors
    assert outcomes.loc["10.5555/demo.fast", "text_source"] == "pdf" and text.errors.empty
    pdf = text.paragraphs[text.paragraphs["input"] == "10.5555/demo.fast"]
    assert set(pdf["text_source"]) == {"pdf"}
    assert [s for s in dict.fromkeys(pdf["section"]) if s] == SECTIONS  # the headings, in order
    body = pdf[pdf["section"] != ""]
    assert len(body) >= 6 and body["text"].str.contains("written for the paperfetch demo").any()
    tables = text.tables
    assert len(tables) == 1 and tables.iloc[0]["input"] == "10.5555/demo.jats.sensor"
    table = tables.iloc[0]
    assert table["label"] == "Table 1" and table["caption"].startswith("Ratio readings of three invented stems")
    assert list(table["table"].columns) == ["Stem", "Water content (%)", "Ratio", "Reading time (s)"]
    assert table["table"].values.tolist()[0] == ["A", "62", "1.41", "0.8"] and len(table["table"]) == 6


def test_every_demo_pdf_has_a_text_layer_with_its_title_and_doi():
    """Every PDF the demo serves with a text layer reads back (pypdfium2): title, DOI line, the four headings."""
    from importlib.resources import files

    data = files("paperfetch.demo").joinpath("data")
    pdfs = sorted(p for p in data.iterdir() if p.name.startswith("pdf_"))
    assert len(pdfs) >= 13
    for pdf in pdfs:
        bundle = read(pdf.read_bytes(), name=pdf.name)
        assert bundle.errors.empty, (pdf.name, bundle.errors)
        texts = list(bundle.paragraphs["text"])
        assert texts[1].startswith("https://doi.org/10."), (pdf.name, texts[:2])
        assert [s for s in dict.fromkeys(bundle.paragraphs["section"]) if s] == SECTIONS, pdf.name


@pytest.mark.parametrize("prefer", ["version", "published"])
def test_prefer_published_fetches_the_demo_preprints_journal_version(world, tmp_path, prefer):
    with retriever(tmp_path, world.endpoints, state="memory", cache=False, prefer=prefer) as r:
        row = r.download([PREPRINT]).iloc[0]
    assert row["status"] == "downloaded" and row["preprint_of"] == "10.5555/demo.vor"
    if prefer == "version":  # the default: the preprint's own copy
        assert row["source"] == "biorxiv" and row["version"] == "submitted"
    else:  # bioRxiv names the journal version, Unpaywall has its open copy on the "fast" publisher
        assert row["source"] == "unpaywall" and row["version"] == "published"
        assert row["url"].endswith("/pdf/demo.vor.pdf") and row["url"].startswith(world.hosts["fast"].base_url)
        assert row["reason"] == 'the version of record 10.5555/demo.vor (prefer="published")'
    assert row["title_match"] == 1.0  # the PDF's text layer names the paper


def test_the_demo_command_prints_its_full_text_line(tmp_path):
    env = {**os.environ, "PAPERFETCH_CONFIG": str(tmp_path / "none.toml"), "HOME": str(tmp_path), "COLUMNS": "120"}
    done = subprocess.run([sys.executable, "-m", "paperfetch", "demo", "--no-progress"], capture_output=True, text=True,
                          env=env, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    line = next((line for line in done.stdout.splitlines() if line.startswith("full text:")), None)
    assert line is not None, done.stdout
    found = re.match(r"full text: (\d+) paragraphs, 1 table from 2 papers \(r\.fulltext of 10\.5555/demo\.fast, "
                     r"10\.5555/demo\.jats\.sensor\)$", line)
    assert found is not None and int(found.group(1)) >= 16, line  # 8 from the PDF, 12 from the JATS


def test_fulltext_takes_a_frame_as_download_frame_does_and_names_its_real_column(world, tmp_path):
    """A Zotero-like frame: its ``DOI`` column is read (``column=`` names another), and a frame given where one
    column is wanted is told the column it has (``df['DOI']``), not ``df['doi']``."""
    import pandas as pd

    from paperfetch.errors import ConfigurationError
    from paperfetch.ids import parse_many

    zotero = pd.DataFrame({"Key": ["K1", "K2"], "DOI": ["10.5555/demo.fast", "10.5555/demo.jats.sensor"]})
    with retriever(tmp_path, world.endpoints, state="memory", cache=False) as r:
        text = r.fulltext(zotero)
        assert list(text.outcomes["input"]) == list(zotero["DOI"])
        assert set(text.paragraphs["doi"]) == set(zotero["DOI"])
        named = r.fulltext(zotero.rename(columns={"DOI": "ref"}), column="ref")
        assert list(named.outcomes["status"]) == ["downloaded", "downloaded"]
        with pytest.raises(ConfigurationError, match="column= goes with a DataFrame"):
            r.fulltext(["10.5555/demo.fast"], column="DOI")
        with pytest.raises(TypeError, match=r"df\['DOI'\]"):
            r.download(zotero)
    with pytest.raises(TypeError, match=r"df\['PMID'\]"):
        parse_many(pd.DataFrame({"Title": ["x"], "PMID": ["1"]}))
