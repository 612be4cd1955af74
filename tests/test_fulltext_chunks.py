"""paperfetch.fulltext.chunks: section-bounded chunks of paragraph rows, within a token budget.

The rules are checked as properties (Hypothesis) over synthetic papers of random paragraph lengths, sections
and budgets, and on the paragraphs of the real JATS bodies in shared/fixtures/real (fulltext_pairs/*.xml and the
Europe PMC fullTextXML bodies).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperfetch.fulltext import FullText, article_rows, paragraphs_frame, parse_jats, references_frame
from paperfetch.fulltext.chunks import CHUNK_COLUMNS, chunks, count_tokens, default_tokenizer

SEP = " :: "


def _paper(paragraphs: list[tuple[str, str]], *, input: str = "10.1/x", ids: list[str] | None = None) -> pd.DataFrame:  # noqa: A002
    rows = [{"input": input, "doi": input, "text_source": "jats", "license": "cc by", "section": section,
             "paragraph": n, "text": text} for n, (section, text) in enumerate(paragraphs)]
    frame = paragraphs_frame(rows)
    if ids is not None:
        frame["paragraph_id"] = pd.Series(ids, dtype="string")
    return frame


def _body(row, contextualize: bool) -> str:
    text = str(row["text"])
    prefix = str(row["section"]) + "\n\n"
    return text[len(prefix):] if contextualize and row["section"] and text.startswith(prefix) else text


def _check_rules(paragraphs: pd.DataFrame, out: pd.DataFrame, max_tokens: int, tokenizer=default_tokenizer,
                 *, contextualize: bool = True, overlap: int = 0) -> None:
    """Every rule of the chunks contract, on one result."""
    assert list(out.columns) == list(CHUNK_COLUMNS)
    for row in out.to_dict("records"):
        assert row["tokens"] == len(tokenizer(row["text"])) <= max_tokens
    for paper, rows in paragraphs.groupby(paragraphs["input"].astype(str), sort=False):
        mine = out[out["input"].astype(str) == paper].reset_index(drop=True)
        assert list(mine["chunk_id"]) == [f"c{n}" for n in range(len(mine))]
        given = rows["paragraph_id"] if "paragraph_id" in rows else pd.Series([None] * len(rows), dtype=object)
        ids = [f"p{n}" if pd.isna(p) else p for n, p in zip(rows["paragraph"], given)]
        section_of = dict(zip(ids, rows["section"]))
        text_of = dict(zip(ids, rows["text"]))
        where: dict[str, list[int]] = {}
        records = mine.to_dict("records")
        for k, row in enumerate(records):
            tops = {section_of[p].split(SEP)[0] for p in row["paragraph_ids"]}
            assert len(tops) == 1, f"chunk {k} spans the top-level sections {tops}"
            assert all(section_of[p] == row["section"] or section_of[p].startswith(row["section"] + SEP)
                       or not row["section"] for p in row["paragraph_ids"])
            for p in row["paragraph_ids"]:
                where.setdefault(p, []).append(int(k))
        assert list(where) == ids, "every paragraph in a chunk, in order"
        for p, chunk_numbers in where.items():
            assert chunk_numbers == list(range(chunk_numbers[0], chunk_numbers[-1] + 1)), p
            if len(chunk_numbers) > 1:
                assert all(records[k]["paragraph_ids"] == [p] for k in chunk_numbers), "pieces stand alone"
        if overlap == 0:
            pieces: dict[str, list[str]] = {}
            for row in records:
                segments = _body(row, contextualize).split("\n\n")
                if len(row["paragraph_ids"]) == 1:
                    segments = ["\n\n".join(segments)]
                assert len(segments) == len(row["paragraph_ids"])
                for p, segment in zip(row["paragraph_ids"], segments):
                    pieces.setdefault(p, []).append(segment)
            for p, parts in pieces.items():
                # joined by one space, the pieces give the paragraph back: every cut is at a space
                assert " ".join(parts) == text_of[p], p


# Words that fit in any budget tested (at most two default tokens), so no cut falls inside a word.
_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ", min_size=1, max_size=12) | st.from_regex(r"\A[0-9]{1,6}\Z")
_SENTENCE = st.builds(lambda words, end: " ".join(words).capitalize() + end,
                      st.lists(_WORD, min_size=1, max_size=20), st.sampled_from([".", "!", "?", ""]))
_TEXT = st.builds(" ".join, st.lists(_SENTENCE, min_size=1, max_size=6))
_SECTION = st.sampled_from(["", "Abstract", "Introduction", "Methods", "Methods :: Participants",
                            "Methods :: Statistics :: Power", "Results", "Results and discussion :: Effect of watering"])
_PAPER = st.lists(st.tuples(_SECTION, _TEXT), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(papers=st.lists(_PAPER, min_size=1, max_size=2), max_tokens=st.integers(8, 300),
       contextualize=st.booleans())
def test_chunks_obey_every_rule_for_random_paragraphs_and_budgets(papers, max_tokens, contextualize):
    frame = pd.concat([_paper(p, input=f"10.1/{n}") for n, p in enumerate(papers)], ignore_index=True)
    out = chunks(frame, max_tokens=max_tokens, contextualize=contextualize)
    _check_rules(frame, out, max_tokens, contextualize=contextualize)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paper=_PAPER, max_tokens=st.integers(8, 200), share=st.floats(0, 0.5), contextualize=st.booleans())
def test_chunks_with_overlap_obey_every_rule(paper, max_tokens, share, contextualize):
    overlap = min(int(max_tokens * share), max_tokens // 2)
    frame = _paper(paper)
    out = chunks(frame, max_tokens=max_tokens, overlap=overlap, contextualize=contextualize)
    _check_rules(frame, out, max_tokens, contextualize=contextualize, overlap=overlap)
    assert chunks(frame, max_tokens=max_tokens, overlap=overlap, contextualize=contextualize).equals(out)


def test_overlap_leads_each_chunk_with_whole_words_from_the_end_of_the_one_before():
    words = [f"w{n}" for n in range(600)]
    frame = _paper([("Methods", " ".join(words[:300])), ("Methods :: Power", " ".join(words[300:])),
                    ("Results", "Another section starts afresh.")])
    out = chunks(frame, max_tokens=50, overlap=10, contextualize=False)
    assert out["tokens"].max() <= 50
    owned: list[str] = []
    for k in range(len(out)):
        body = out.loc[k, "text"].split()
        if k and out.loc[k, "section"].split(SEP)[0] == out.loc[k - 1, "section"].split(SEP)[0]:
            previous = out.loc[k - 1, "text"].split()
            lead = next(n for n in range(len(body), 0, -1) if body[:n] == previous[-n:])
            assert 0 < count_tokens(" ".join(body[:lead])) <= 10
            body = body[lead:]
        owned += body
    assert out.iloc[-1]["text"] == "Another section starts afresh."
    assert owned == [*words, *"Another section starts afresh.".split()]


def test_paragraphs_stay_whole_and_small_neighbours_merge_within_a_top_level_section():
    frame = _paper([("Abstract", "One short abstract."), ("Methods", "First method."),
                    ("Methods :: Participants", "Second method."), ("Results", "A result.")])
    out = chunks(frame, max_tokens=512)
    assert list(out["paragraph_ids"]) == [["p0"], ["p1", "p2"], ["p3"]]
    assert list(out["section"]) == ["Abstract", "Methods", "Results"]
    assert out.loc[1, "text"] == "Methods\n\nFirst method.\n\nSecond method."
    assert set(out["license"]) == {"cc by"} and set(out["doi"]) == {"10.1/x"}
    bare = chunks(frame, max_tokens=512, contextualize=False)
    assert bare.loc[1, "text"] == "First method.\n\nSecond method."
    assert list(bare["tokens"]) == [count_tokens(t) for t in bare["text"]]


def test_a_long_paragraph_is_cut_at_sentence_ends_and_a_long_sentence_at_word_boundaries():
    sentences = [f"Sentence number {n} says (a few words) about the result." for n in range(20)]
    sentences += [f"A sentence ends in a bracket (number {n}.) Or in a quote \"{n}!\"" for n in range(20)]
    out = chunks(_paper([("Results", " ".join(sentences))]), max_tokens=60, contextualize=False)
    assert len(out) > 1 and all(t.endswith((".", ".)", '!"')) for t in out["text"])
    assert " ".join(out["text"]) == " ".join(sentences)
    one = " ".join(["word"] * 500)  # a single sentence of 500 words, no sentence end
    cut = chunks(_paper([("Results", one)]), max_tokens=50)
    assert all(t.startswith("Results\n\n") for t in cut["text"]) and cut["tokens"].max() <= 50
    assert " ".join(t.removeprefix("Results\n\n") for t in cut["text"]) == one


def test_only_a_single_word_over_the_budget_is_cut_inside_it():
    word = "ACGT" * 200
    out = chunks(_paper([("", f"The sequence {word} follows.")]), max_tokens=20, contextualize=False)
    assert out["tokens"].max() <= 20 and "".join(out["text"]).replace(" ", "") == f"Thesequence{word}follows."
    assert out.loc[0, "text"] == "The sequence"


def test_any_tokenizer_that_returns_a_sequence_is_used_for_every_count():
    frame = _paper([("Methods", "alpha beta gamma delta epsilon. " * 30)])
    by_character = chunks(frame, max_tokens=100, tokenizer=list)
    _check_rules(frame, by_character, 100, tokenizer=list)
    assert by_character["tokens"].max() <= 100 and (by_character["text"].str.len() <= 100).all()
    by_word = chunks(frame, max_tokens=40, tokenizer=str.split)
    _check_rules(frame, by_word, 40, tokenizer=str.split)


def test_paragraph_ids_come_from_the_frame_else_p_n():
    frame = _paper([("Intro", "a."), ("Intro", "b.")], ids=["para-1", "para-2"])
    assert chunks(frame)["paragraph_ids"].tolist() == [["para-1", "para-2"]]
    frame["paragraph_id"] = pd.Series(["x", None], dtype="string")
    assert chunks(frame)["paragraph_ids"].tolist() == [["x", "p1"]]


def test_a_paper_whose_rows_are_apart_in_the_frame_is_still_one_paper():
    a, b = _paper([("Intro", "a one."), ("Intro", "a two.")], input="A"), _paper([("Intro", "b one.")], input="B")
    mixed = pd.concat([a.iloc[:1], b, a.iloc[1:]], ignore_index=True)
    out = chunks(mixed)
    assert chunks(FullText(paragraphs=mixed, references=references_frame([]))).equals(out)
    assert list(zip(out["input"], out["chunk_id"], out["paragraph_ids"])) == [("A", "c0", ["p0", "p1"]),
                                                                          ("B", "c0", ["p0"])]


def test_bad_budgets_are_a_value_error_and_no_rows_give_every_column():
    frame = _paper([("", "text")])
    for kwargs in ({"max_tokens": 0}, {"max_tokens": 10, "overlap": 6}, {"max_tokens": 10, "overlap": -1}):
        with pytest.raises(ValueError):
            chunks(frame, **kwargs)
    empty = chunks(frame.iloc[:0])
    assert empty.empty and list(empty.columns) == list(CHUNK_COLUMNS)


def test_the_default_tokenizer_counts_letter_runs_digits_and_signs():
    assert default_tokenizer("Immunohistochemistry in 2021.") == ["Immuno", "histoc", "hemist", "ry", "in", "202",
                                                                  "1", "."]
    assert count_tokens("") == 0 and count_tokens("a  b\n\nc") == 3


# --------------------------------------------------------------------------- the real JATS bodies


@pytest.fixture(scope="module")
def real_paragraphs() -> pd.DataFrame:
    from tests._fixtures import require_real_fixtures

    root = require_real_fixtures()
    paths = sorted((root / "fulltext_pairs").glob("*.xml")) + sorted((root / "europepmc").glob("rest__*.xml"))
    rows = [row for path in paths for row in article_rows(parse_jats(Path(path).read_bytes()), input=path.name)]
    return paragraphs_frame(rows)


@pytest.mark.parametrize(("max_tokens", "overlap"), [(512, 0), (128, 32), (40, 0)])
def test_chunks_of_the_real_bodies_obey_every_rule(real_paragraphs, max_tokens, overlap):
    out = chunks(real_paragraphs, max_tokens=max_tokens, overlap=overlap)
    _check_rules(real_paragraphs, out, max_tokens, overlap=overlap)
    assert out["license"].notna().all() and set(out["input"]) == set(real_paragraphs["input"])


def test_every_chunk_carries_its_papers_bibliographic_record():
    record = {"doi": "10.5555/a", "title": "A paper", "year": 2021, "journal": "J", "retracted": True,
              "authors": [{"family": "Lovelace", "given": "Ada"}], "license": "cc by"}
    rows = [{"input": "a", "section": "Intro", "paragraph": n, "text": "Words here. " * 40, **record} for n in range(4)]
    out = chunks(paragraphs_frame(rows), max_tokens=100)
    assert len(out) > 1 and out["title"].eq("A paper").all() and out["year"].eq(2021).all()
    assert out["retracted"].all() and all(a == record["authors"] for a in out["authors"])
    assert out["license_id"].eq("cc-by").all() and out["journal"].eq("J").all()
