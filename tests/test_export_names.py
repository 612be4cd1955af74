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
    write_report(frame, tmp_path / "r.csv")
    back = pd.read_csv(tmp_path / "r.csv")
    assert json.loads(back["authors"][0]) == cell and names_from(back["authors"][0]) == cell
    assert pd.isna(back["authors"][1])
    write_report(frame, tmp_path / "r.parquet")  # Parquet: a list of structs, read back as records
    back = pd.read_parquet(tmp_path / "r.parquet")
    assert [{k: v for k, v in name.items() if v is not None} for name in back["authors"][0]] == cell
    assert names_from([{k: v for k, v in name.items() if v is not None} for name in back["authors"][0]]) == cell
    assert back["authors"][1] is None


def _paragraph_runs():
    """The paragraphs of two runs: one with authors, citations and figures, one where every list is empty or
    unknown (a PDF's text: no links, no authors)."""
    from paperfetch.fulltext.frame import paragraphs_frame

    full = paragraphs_frame([{"input": "10.1000/x", "doi": "10.1000/x", "text_source": "jats", "paragraph": 1,
                              "text": "As shown [1].", "citations": ("CR1",), "citation_offsets": (12,),
                              "figures": ("F1",), "tables": (), "authors": [{"family": "Lloyd", "given": "C. J."}]}])
    bare = paragraphs_frame([{"input": "10.1000/y", "doi": "10.1000/y", "text_source": "pdf", "paragraph": 1,
                              "text": "Plain.", "citations": (), "citation_offsets": (), "figures": (), "tables": (),
                              "page": 1}])
    return full, bare


def test_parquet_reports_keep_lists_and_structs_typed(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from paperfetch.cli.common import write_report

    schemas = []
    for name, frame in zip(("full", "bare"), _paragraph_runs()):
        write_report(frame, tmp_path / f"{name}.parquet")
        schemas.append(pq.read_schema(tmp_path / f"{name}.parquet"))
    full, bare = schemas
    assert full.field("citations").type == pa.list_(pa.string()) and full.field("figures").type == pa.list_(pa.string())
    assert full.field("citation_offsets").type == pa.list_(pa.int64())
    authors = full.field("authors").type
    assert pa.types.is_list(authors) and pa.types.is_struct(authors.value_type)
    assert {authors.value_type.field(i).name for i in range(authors.value_type.num_fields)} >= {"family", "given"}
    assert all(bare.field(c).type == full.field(c).type for c in ("authors", "citations", "citation_offsets", "figures",
                                                                   "tables"))  # a run without values: same types
    back = pq.read_table(tmp_path / "full.parquet").to_pylist()[0]
    assert back["citations"] == ["CR1"] and back["citation_offsets"] == [12] and back["tables"] == []
    assert back["authors"][0]["family"] == "Lloyd"


def test_jsonl_reports_read_with_the_fixed_schema_concatenate_with_one_type_a_column(tmp_path: Path) -> None:
    """A column empty everywhere in one run's file (its authors, a reason, its page numbers) is typed by the
    report schema, not ``null``: the two files concatenate without promotion, in pyarrow and in pandas."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.json as pj

    import paperfetch
    from paperfetch.cli.common import write_report

    full, bare = _paragraph_runs()
    bare = bare.assign(license=pd.array([None], dtype="string"))  # a text column empty everywhere
    paths = [tmp_path / "full.jsonl", tmp_path / "bare.jsonl"]
    for frame, path in zip((full, bare), paths):
        write_report(frame, path)
    assert pj.read_json(paths[1]).schema.field("authors").type == pa.null()  # what JSON alone carries
    schema = paperfetch.report_schema(full.columns)
    tables = [pj.read_json(path, parse_options=pj.ParseOptions(explicit_schema=schema)) for path in paths]
    assert tables[0].schema == tables[1].schema == schema
    both = pa.concat_tables(tables)  # no promotion needed: one type a column
    assert both.schema.field("authors").type.value_type.field("family").type == pa.string()
    assert both.schema.field("license").type == pa.string() and both.schema.field("page").type == pa.int64()
    assert both.schema.field("tables").type == pa.list_(pa.string())
    frames = [paperfetch.read_report(path) for path in paths]
    assert dict(frames[0].dtypes) == dict(frames[1].dtypes)
    assert frames[0]["page"].dtype == "Int64" and frames[1]["license"].dtype == "string"
    joined = pd.concat(frames, ignore_index=True)
    assert dict(joined.dtypes) == dict(frames[0].dtypes)
    assert joined["citations"].tolist() == [["CR1"], []] and joined.loc[1, "authors"] is None
    assert joined.loc[0, "authors"][0]["family"] == "Lloyd"
    parquet = tmp_path / "bare.parquet"
    write_report(bare, parquet)
    assert dict(paperfetch.read_report(parquet).dtypes) == dict(frames[0].dtypes)  # one schema, either format


def test_jsonl_reports_of_two_runs_concatenate_typed(tmp_path: Path) -> None:
    import io

    import pandas as pd
    import pyarrow as pa
    import pyarrow.json as pj

    from paperfetch.cli.common import write_report

    paths = []
    for name, frame in zip(("full", "bare"), _paragraph_runs()):
        paths.append(tmp_path / f"{name}.jsonl")
        write_report(frame, paths[-1])
    rows = [json.loads(line) for path in paths for line in path.read_text(encoding="utf-8").splitlines()]
    assert len({tuple(row) for row in rows}) == 1  # every row has every column, in one order
    assert rows[1]["citations"] == [] and rows[1]["authors"] is None  # empty: []; unknown: null
    frames = [pd.read_json(io.StringIO(path.read_text(encoding="utf-8")), lines=True) for path in paths]
    assert list(frames[0].columns) == list(frames[1].columns)
    both = pd.concat(frames, ignore_index=True)
    assert all(isinstance(v, list) for c in ("citations", "citation_offsets", "figures", "tables") for v in both[c])
    table = pa.concat_tables([pj.read_json(path) for path in paths], promote_options="default")
    assert table.schema.field("citations").type == pa.list_(pa.string())
    assert table.schema.field("citation_offsets").type == pa.list_(pa.int64())
    assert pa.types.is_struct(table.schema.field("authors").type.value_type)
    assert table.column("tables").to_pylist() == [[], []]
