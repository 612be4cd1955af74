"""The Retriever and the CLI replaying cassettes: a real recorded OpenAlex answer, arXiv's real robots.txt,
and two synthetic PDF bodies (labelled below; a PDF is never stored in a cassette)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from paperfetch import Retriever
from paperfetch.cli import main
from paperfetch.demo import fake_pdf
from paperfetch.testing import cassette_vcr
from tests._fixtures import cassette as built_cassette

DOI = "10.1371/journal.pone.0000030"
PLOS_PDF = "https://journals.plos.org/plosone/article/file?id=10.1371/journal.pone.0000030&type=printable"


# arXiv's real robots.txt asks for Crawl-delay: 15; the cap keeps this test short (and shows the cap works).
FAST = {"host_intervals": {"arxiv.org": 0.0}, "max_crawl_delay_s": 0.2, "rate_limit_min_s": 0.05, "rate_limit_max_s": 0.1}


def _interaction(uri: str, status: int, body: str, content_type: str) -> dict:
    return {
        "request": {"body": None, "headers": {}, "method": "GET", "uri": uri},
        "response": {"status": {"code": status, "message": "OK" if status == 200 else "Not Found"},
                     "headers": {"Content-Type": [content_type]}, "body": {"string": body}},
    }


@pytest.fixture
def cassette(tmp_path, real_fixtures) -> Path:
    recorded = yaml.safe_load(built_cassette("openalex/works_doi_10.1371_journal.pone.0000030.yaml").read_text())
    interactions = list(recorded["interactions"])  # real: OpenAlex's answer for the DOI
    interactions.append(_interaction("https://journals.plos.org/robots.txt", 404, "Not Found", "text/plain"))  # synthetic
    interactions.append(_interaction(PLOS_PDF, 200, fake_pdf("plos").decode("latin-1"), "application/pdf"))  # synthetic
    robots = (real_fixtures / "robots_txt/arxiv.org.robots.txt").read_text()  # real: arXiv's robots.txt
    interactions.append(_interaction("https://arxiv.org/robots.txt", 200, robots, "text/plain"))
    interactions.append(_interaction("https://arxiv.org/pdf/1706.03762", 200, fake_pdf("arxiv").decode("latin-1"), "application/pdf"))
    path = tmp_path / "retriever.yaml"
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}))
    return path


def replay(path: Path):
    return cassette_vcr().use_cassette(str(path))


def test_retriever_downloads_from_cassettes(cassette, tmp_path, monkeypatch):
    for name in ("openalex", "arxiv"):
        monkeypatch.delenv(f"PAPERFETCH_{name.upper()}_URL", raising=False)
    # One worker: vcrpy's patching is not thread-safe, and a request made beside it could escape the cassette.
    with replay(cassette) as tape, Retriever(out_dir=tmp_path / "pdfs", progress=False, verbosity=0, workers=1,
                                             sources=("arxiv", "openalex"),
                                             http_options=FAST) as r:
        outcomes = r.download([DOI, "arXiv:1706.03762"])
        assert tape.all_played
        status = r.domain_status().set_index("host")
    assert status.loc["arxiv.org", "crawl_delay_s"] == 0.2
    by_input = outcomes.set_index("input")
    assert list(outcomes["status"]) == ["downloaded", "downloaded"]
    assert by_input.loc[DOI, "source"] == "openalex"
    assert by_input.loc[DOI, "title"].startswith("Triose Phosphate Isomerase Deficiency")
    assert by_input.loc[DOI, "year"] == 2006 and by_input.loc[DOI, "license"] == "cc-by"
    assert by_input.loc["arXiv:1706.03762", "source"] == "arxiv"
    assert Path(by_input.loc[DOI, "path"]).read_bytes() == fake_pdf("plos")


def test_cli_download_replays_the_same_cassette(cassette, tmp_path, capsys):
    report = tmp_path / "report.csv"
    with replay(cassette):
        code = main(["download", DOI, "--out", str(tmp_path / "cli"), "--report", str(report), "--no-progress", "--workers", "1"])
    assert code == 0
    assert "downloaded" in report.read_text()
