"""Authors typed from the sources (paperfetch.names): PubMed ``ForeName``/``CollectiveName``, Crossref ``name``,
OpenAlex authorships and Europe PMC's authorList, on recorded bodies; the PubMed XML below is SYNTHETIC (no recorded
body has initials without a ForeName, a CollectiveName and a suffix together)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paperfetch.ids import parse_identifier
from paperfetch.names import initials, names_from, names_text, parse_name, person, transliterate
from paperfetch.sources.base import RequestSpec

SYNTHETIC_EFETCH = b"""<?xml version="1.0"?><PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>99000002</PMID>
<Article><ArticleTitle>A title</ArticleTitle><AuthorList>
<Author><LastName>Lloyd</LastName><Initials>CJ</Initials></Author>
<Author><CollectiveName>Bill and Melinda Gates Foundation</CollectiveName></Author>
<Author><LastName>Smith</LastName><ForeName>J</ForeName><Initials>J</Initials><Suffix>Jr</Suffix></Author>
<Author><LastName>de la Cruz</LastName><ForeName>Maria Luisa N</ForeName><Initials>MLN</Initials></Author>
</AuthorList></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>"""


def _spec(key: str) -> RequestSpec:
    return RequestSpec(path="", params={}, ids=(parse_identifier(key),))


def test_pubmed_keeps_forename_dots_initials_and_types_collective_names(real_fixtures: Path) -> None:
    from paperfetch.sources.ncbi import NCBIEutilsSource
    from paperfetch.sources.pubmed import parse_efetch

    hit = parse_efetch(SYNTHETIC_EFETCH)[0]
    expected = [{"family": "Lloyd", "given": "C. J."}, {"literal": "Bill and Melinda Gates Foundation"},
                {"family": "Smith", "given": "J.", "suffix": "Jr"},
                {"family": "de la Cruz", "given": "Maria Luisa N."}]
    assert hit.names == expected
    record = NCBIEutilsSource().parse(SYNTHETIC_EFETCH, _spec("PMID:99000002"))["pmid:99000002"]
    assert record.authors == expected
    recorded = parse_efetch((real_fixtures / "ncbi_eutils/efetch.fcgi__db-pubmed_retmode-xml_id-19008416,18927361,18787170,18487186,18239126,18239125.xml").read_bytes())
    people = [n for h in recorded for n in h.names or []]
    assert len(people) == 58 and {"family": "Varambally", "given": "Sooryanarayana"} == people[0]
    assert {"family": "Brenner", "given": "J. Chad"} in people  # the recorded ForeName "J Chad", its initial dotted


def test_crossref_name_alone_is_an_organisation_and_particles_are_kept(real_fixtures: Path) -> None:
    from paperfetch.sources.crossref import CrossrefSource

    body = json.dumps({"status": "ok", "message": {"DOI": "10.1000/x", "title": ["T"], "author": [
        {"name": "World Health Organization"}, {"given": "Ludwig", "family": "van Beethoven"}, {"given": "A"}]}}).encode()
    record = CrossrefSource().parse(body, _spec("10.1000/x"))["doi:10.1000/x"]
    assert record.authors == [{"literal": "World Health Organization"},
                              {"family": "van Beethoven", "given": "Ludwig"}]
    recorded = (real_fixtures / "crossref/works_10.7554_elife.01567.body.json").read_bytes()
    authors = CrossrefSource().parse(recorded, _spec("10.7554/elife.01567"))["doi:10.7554/elife.01567"].authors
    assert authors[0] == {"family": "Sankar", "given": "Martial"}


def test_openalex_and_europepmc_authors_from_the_recorded_answers(real_fixtures: Path) -> None:
    from paperfetch.sources.europepmc import EuropePMCSource
    from paperfetch.sources.openalex import OpenAlexSource

    body = (real_fixtures / "openalex/works__https-doi.org-10.1073-pnas.1414271111.json").read_bytes()
    record = OpenAlexSource().parse(body, _spec("10.1073/pnas.1414271111"))["doi:10.1073/pnas.1414271111"]
    assert record.authors[0] == {"family": "Makris", "given": "Eleftherios A."}
    results = json.loads((real_fixtures / "europepmc/search_cancer_resultType-core_pageSize25.json").read_bytes())
    first = EuropePMCSource()._record(results["resultList"]["result"][0])
    assert first.authors[:2] == [{"family": "Schoenfeld", "given": "Jonathan D."}, {"family": "Haas-Kogan", "given": "Daphne A."}]


@pytest.mark.parametrize(("text", "name"), [
    ("Smith JA", {"family": "Smith", "given": "J. A."}),
    ("Glaudemans AWJM", {"family": "Glaudemans", "given": "A. W. J. M."}),
    ("World Health Organization", {"literal": "World Health Organization"}),
    ("{Some Lab}", {"literal": "Some Lab"}),
    ("van der Berg, K", {"family": "van der Berg", "given": "K."}),
    ("Ludwig van Beethoven", {"family": "van Beethoven", "given": "Ludwig"}),
    ("Jean-Pierre Dupont", {"family": "Dupont", "given": "Jean-Pierre"}),
    ("", None),
])
def test_untyped_names_are_typed(text: str, name: dict | None) -> None:
    assert parse_name(text) == name


def test_a_long_name_is_still_a_person() -> None:
    assert "family" in parse_name("María de los Ángeles García López")  # six words, no organisation's word


def test_initials_cells_and_transliteration() -> None:
    assert initials("CJ") == "C. J." and initials("J-P") == "J.-P." and initials("C.J.") == "C. J."
    assert person("Dalla Serra", "Mauro") == {"family": "Dalla Serra", "given": "Mauro"}  # a capital particle is the name
    assert names_from("Smith JA; {WHO}") == [{"family": "Smith", "given": "J. A."}, {"literal": "WHO"}]
    assert names_from(None) == [] and names_from(float("nan")) == []
    cell = [{"family": "van der Berg", "given": "K."}, {"literal": "WHO"}]
    assert names_from(str(cell)) == cell and names_from(json.dumps(cell)) == cell  # a CSV report's cell, JSON
    assert names_text([{"family": "van der Berg", "given": "K."}, {"literal": "WHO"}]) == \
        "van der Berg, K.; WHO"
    assert transliterate("Müller Øster Straße Иванов Σωκράτης 李") == "Muller Oster Strasse Ivanov Sokrates u674e"


def test_the_outcomes_frame_has_an_authors_column_of_lists() -> None:
    from paperfetch.outcomes import COLUMNS, outcomes_frame

    assert "authors" in COLUMNS
    frame = outcomes_frame([{"input": "10.1/x", "status": "downloaded", "authors": [{"literal": "WHO"}]}, {"input": "y"}])
    assert frame["authors"].iloc[0] == [{"literal": "WHO"}] and frame["authors"].iloc[1] is None


def test_reports_write_the_authors_as_json_that_reads_back(tmp_path: Path) -> None:
    import pandas as pd

    from paperfetch.cli.common import write_report

    cell = [{"family": "Lloyd", "given": "C. J."}, {"literal": "World Health Organization"}]
    frame = pd.DataFrame({"doi": ["10.1000/x", "10.1000/y"], "authors": pd.Series([cell, None], dtype=object)})
    for suffix in (".csv", ".parquet"):
        write_report(frame, tmp_path / f"r{suffix}")
        back = pd.read_csv(tmp_path / "r.csv") if suffix == ".csv" else pd.read_parquet(tmp_path / "r.parquet")
        assert json.loads(back["authors"][0]) == cell and names_from(back["authors"][0]) == cell
        assert pd.isna(back["authors"][1])
