"""Tests for paperfetch.ids: parsing, normalising, de-duplicating and naming identifiers."""

from __future__ import annotations

import math
import re
import unicodedata

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperfetch.errors import ConfigurationError, InvalidIdentifier
from paperfetch.ids import (
    FILENAME_FIELDS,
    Identifier,
    IdType,
    ParsedInput,
    filename_for,
    parse_identifier,
    parse_many,
)

DOI, PMID, PMCID, ARXIV = IdType.DOI, IdType.PMID, IdType.PMCID, IdType.ARXIV

# --------------------------------------------------------------------------- accepted forms

ACCEPTED = [
    # DOIs
    ("10.1000/xyz", DOI, "10.1000/xyz", None),
    ("10.1038/NATURE12373", DOI, "10.1038/nature12373", None),
    ("doi:10.1038/nature12373", DOI, "10.1038/nature12373", None),
    ("DOI: 10.1038/nature12373", DOI, "10.1038/nature12373", None),
    ("Doi 10.1038/nature12373", DOI, "10.1038/nature12373", None),
    ("https://doi.org/10.1038/nature12373", DOI, "10.1038/nature12373", None),
    ("HTTPS://DOI.ORG/10.1038/nature12373", DOI, "10.1038/nature12373", None),
    ("http://dx.doi.org/10.1038/nature12373", DOI, "10.1038/nature12373", None),
    ("doi.org/10.1038/nature12373", DOI, "10.1038/nature12373", None),
    ("10.1000%2Fxyz", DOI, "10.1000/xyz", None),
    (
        "https://doi.org/10.1002%2F%28SICI%291097-4636%28199706%2935%3A4%3C459%3A%3AAID-JBM7%3E3.0.CO%3B2-%23",
        DOI,
        "10.1002/(sici)1097-4636(199706)35:4<459::aid-jbm7>3.0.co;2-#",
        None,
    ),
    (
        "10.1002/(SICI)1097-4636(199706)35:4<459::AID-JBM7>3.0.CO;2-#",
        DOI,
        "10.1002/(sici)1097-4636(199706)35:4<459::aid-jbm7>3.0.co;2-#",
        None,
    ),
    ("10.1038/nature12373.", DOI, "10.1038/nature12373", None),
    ("10.1038/nature12373,", DOI, "10.1038/nature12373", None),
    ("10.1038/nature12373;", DOI, "10.1038/nature12373", None),
    ("(10.1038/nature12373)", DOI, "10.1038/nature12373", None),
    ("see 10.1016/s0140-6736(20)30183-5)"[4:], DOI, "10.1016/s0140-6736(20)30183-5", None),
    ("10.1000.10/abc", DOI, "10.1000.10/abc", None),
    ("10.123456789/abc", DOI, "10.123456789/abc", None),
    ("  10.1038/nature12373  ", DOI, "10.1038/nature12373", None),
    ("\u00a010.1038/nature12373\u00a0", DOI, "10.1038/nature12373", None),
    ("\u200b10.1038/nature12373\ufeff", DOI, "10.1038/nature12373", None),
    ("\t10.1038/nature12373\n", DOI, "10.1038/nature12373", None),
    # DOIs of arXiv become arXiv IDs
    ("10.48550/arXiv.1706.03762", ARXIV, "1706.03762", None),
    ("10.48550/ARXIV.1706.03762v2", ARXIV, "1706.03762", "v2"),
    ("doi:10.48550/arxiv.hep-th/9901001", ARXIV, "hep-th/9901001", None),
    ("https://doi.org/10.48550/arXiv.1706.03762", ARXIV, "1706.03762", None),
    # PMIDs
    ("PMID:31452104", PMID, "31452104", None),
    ("pmid 31452104", PMID, "31452104", None),
    ("PMID: 31452104", PMID, "31452104", None),
    ("PMID- 31452104", PMID, "31452104", None),
    ("31452104", PMID, "31452104", None),
    ("031452104", PMID, "31452104", None),
    ("1", PMID, "1", None),
    ("999999999", PMID, "999999999", None),
    (31452104, PMID, "31452104", None),
    (np.int64(31452104), PMID, "31452104", None),
    (np.int32(31452104), PMID, "31452104", None),
    (31452104.0, PMID, "31452104", None),
    (np.float64(31452104.0), PMID, "31452104", None),
    ("https://pubmed.ncbi.nlm.nih.gov/31452104/", PMID, "31452104", None),
    # PMCIDs
    ("PMC3531190", PMCID, "PMC3531190", None),
    ("pmc3531190", PMCID, "PMC3531190", None),
    ("PMCID: PMC3531190", PMCID, "PMC3531190", None),
    ("PMCID:3531190", PMCID, "PMC3531190", None),
    ("pmcid pmc3531190", PMCID, "PMC3531190", None),
    ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC3531190/", PMCID, "PMC3531190", None),
    ("https://pmc.ncbi.nlm.nih.gov/articles/PMC3531190/", PMCID, "PMC3531190", None),
    # arXiv, new style
    ("1706.03762", ARXIV, "1706.03762", None),
    ("2101.00001v2", ARXIV, "2101.00001", "v2"),
    ("2101.00001V2", ARXIV, "2101.00001", "v2"),
    ("0704.0001", ARXIV, "0704.0001", None),
    ("arXiv:1706.03762", ARXIV, "1706.03762", None),
    ("ARXIV:1706.03762v5", ARXIV, "1706.03762", "v5"),
    ("arxiv 1706.03762", ARXIV, "1706.03762", None),
    ("https://arxiv.org/abs/1706.03762v5", ARXIV, "1706.03762", "v5"),
    ("https://arxiv.org/pdf/1706.03762v5", ARXIV, "1706.03762", "v5"),
    ("https://arxiv.org/pdf/1706.03762v5.pdf", ARXIV, "1706.03762", "v5"),
    ("http://export.arxiv.org/abs/1706.03762", ARXIV, "1706.03762", None),
    # arXiv, old style
    ("hep-th/9901001", ARXIV, "hep-th/9901001", None),
    ("math.GT/0309136", ARXIV, "math/0309136", None),
    ("cond-mat/0211034v1", ARXIV, "cond-mat/0211034", "v1"),
    ("arXiv:hep-th/9901001", ARXIV, "hep-th/9901001", None),
    ("https://arxiv.org/abs/hep-th/9901001v2", ARXIV, "hep-th/9901001", "v2"),
]


@pytest.mark.parametrize(("text", "idtype", "value", "version"), ACCEPTED, ids=[repr(c[0])[:50] for c in ACCEPTED])
def test_accepted_form_is_normalised(text: object, idtype: IdType, value: str, version: str | None) -> None:
    identifier = parse_identifier(text)
    assert identifier.type is idtype
    assert identifier.value == value
    assert identifier.version == version


@pytest.mark.parametrize(("text", "idtype", "value", "version"), ACCEPTED, ids=[repr(c[0])[:50] for c in ACCEPTED])
def test_key_round_trips_through_parse(text: object, idtype: IdType, value: str, version: str | None) -> None:
    identifier = parse_identifier(text)
    again = parse_identifier(identifier.key)
    assert again.key == identifier.key
    assert again.type is identifier.type


def test_percent_encoded_doi_is_decoded() -> None:
    assert parse_identifier("https://doi.org/10.1000%2Fa%2Fb").value == "10.1000/a/b"


def test_doi_prefixes_are_case_insensitive_and_doi_is_lower_cased() -> None:
    assert parse_identifier("dOi:10.1038/NaTuRe12373") == parse_identifier("10.1038/nature12373")


def test_bare_new_style_arxiv_id_is_not_a_pmid() -> None:
    assert parse_identifier("1706.03762").type is ARXIV
    assert parse_identifier("17060376").type is PMID


# --------------------------------------------------------------------------- Identifier


@pytest.mark.parametrize(
    ("identifier", "key", "doi"),
    [
        (Identifier(DOI, "10.1038/nature12373"), "doi:10.1038/nature12373", "10.1038/nature12373"),
        (Identifier(PMID, "31452104"), "pmid:31452104", None),
        (Identifier(PMCID, "PMC3531190"), "pmcid:PMC3531190", None),
        (Identifier(ARXIV, "1706.03762", "v5"), "arxiv:1706.03762", "10.48550/arxiv.1706.03762"),
        (Identifier(ARXIV, "hep-th/9901001"), "arxiv:hep-th/9901001", "10.48550/arxiv.hep-th/9901001"),
    ],
)
def test_identifier_key_doi_and_str(identifier: Identifier, key: str, doi: str | None) -> None:
    assert identifier.key == key
    assert str(identifier) == key
    assert identifier.doi == doi


def test_identifier_is_frozen_and_hashable() -> None:
    identifier = parse_identifier("PMC3531190")
    with pytest.raises(AttributeError):
        identifier.value = "PMC1"  # type: ignore[misc]
    assert {identifier, parse_identifier("pmc3531190")} == {identifier}


def test_identifier_accepts_type_given_as_string() -> None:
    assert Identifier("doi", "10.1000/x").type is DOI  # type: ignore[arg-type]


def test_parsing_an_identifier_returns_it() -> None:
    identifier = parse_identifier("10.1000/x")
    assert parse_identifier(identifier) is identifier


def test_an_identifier_built_with_a_lone_surrogate_is_invalid_like_parsed_text() -> None:
    built = [Identifier(DOI, "10.1000/\ud800"), Identifier(PMID, "1\udfff"), Identifier(ARXIV, "2101.00001", "v\ud800")]
    for identifier in built:
        with pytest.raises(InvalidIdentifier, match="lone surrogate") as info:
            parse_identifier(identifier)
        str(info.value).encode("utf-8")  # the message itself is encodable
    parsed = parse_many([*built, Identifier(DOI, "10.1000/ok")])
    assert [p.identifier for p in parsed] == [None, None, None, Identifier(DOI, "10.1000/ok")]


# --------------------------------------------------------------------------- rejections

REJECTED = [
    (None, "blank input"),
    (float("nan"), "blank input"),
    (np.float64("nan"), "blank input"),
    (pd.NA, "blank input"),
    (pd.NaT, "blank input"),
    ("", "blank input"),
    ("   ", "blank input"),
    ("\u00a0\u200b", "blank input"),
    (True, "boolean"),
    (False, "boolean"),
    (np.bool_(True), "boolean"),
    ("hello", "not an identifier"),
    ("10.1234", "not a DOI"),
    ("10.1234/", "not a DOI"),
    ("10.12/abc", "not a DOI"),
    ("10.1000/a b", "whitespace"),
    ("10.1000/a\x00b", "control character"),
    ("doi:", "not a DOI"),
    ("doi:hello", "not a DOI"),
    ("https://doi.org/", "not a DOI"),
    ("PMC", "not a PMCID"),
    ("PMCabc", "not a PMCID"),
    ("PMC0", "not a PMCID"),
    ("PMID:", "not a PMID"),
    ("PMID: 12a", "not a PMID"),
    ("0", "not a PMID"),
    ("000", "not a PMID"),
    ("1234567890", "not a PMID"),
    ("-5", "negative"),
    (-5, "negative"),
    (0, "not a PMID"),
    (-31452104.0, "negative"),
    (1.5, "fractional"),
    (1706.03762, "fractional"),
    (float("inf"), "fractional"),
    ("arXiv:99", "not an arXiv ID"),
    ("arXiv:", "not an arXiv ID"),
    ("1713.03762", "not an arXiv ID"),
    ("1706.123", "not an arXiv ID"),
    ("1706.03762v0", "not an arXiv ID"),
    ("foo-bar/9901001", "not an arXiv ID"),
    ("hep-th/1201001", "not an arXiv ID"),
    ("hep-th/99010", "not an arXiv ID"),
    ("https://example.com/paper.pdf", "URL"),
    ("３１４５２１０４", "not an identifier"),  # full-width digits are not ASCII digits
    (["10.1000/x"], "got list"),
    (b"\xff\xfe", "UTF-8"),
]


@pytest.mark.parametrize(("value", "expected"), REJECTED, ids=[repr(c[0])[:40] for c in REJECTED])
def test_rejection_raises_invalid_identifier_naming_the_value(value: object, expected: str) -> None:
    with pytest.raises(InvalidIdentifier) as info:
        parse_identifier(value)
    message = str(info.value)
    assert expected in message
    assert repr(value)[:40] in message
    assert "e.g. '" in message  # every rejection shows what an identifier looks like
    assert info.value.value is value
    assert isinstance(info.value, ValueError)


def test_missing_doi_suffix_message_matches_spec_wording() -> None:
    with pytest.raises(InvalidIdentifier, match=re.escape("'10.1234' is not a DOI")) as info:
        parse_identifier("10.1234")
    assert "'10.<registrant>/<suffix>'" in str(info.value)


def test_long_value_is_shortened_in_message() -> None:
    with pytest.raises(InvalidIdentifier) as info:
        parse_identifier("x" * 500)
    assert len(str(info.value)) < 400


# --------------------------------------------------------------------------- hint

HINTED = [
    ("31452104", "pmid", PMID, "31452104"),
    (31452104, PMID, PMID, "31452104"),
    ("PMID:31452104", "PMID", PMID, "31452104"),
    ("3531190", "pmcid", PMCID, "PMC3531190"),
    (3531190, PMCID, PMCID, "PMC3531190"),
    (3531190.0, PMCID, PMCID, "PMC3531190"),
    ("PMC3531190", PMCID, PMCID, "PMC3531190"),
    ("1706.03762", ARXIV, ARXIV, "1706.03762"),
    ("10.48550/arXiv.1706.03762", ARXIV, ARXIV, "1706.03762"),
    ("10.1038/nature12373", DOI, DOI, "10.1038/nature12373"),
    ("10.48550/arXiv.1706.03762", DOI, ARXIV, "1706.03762"),
]


@pytest.mark.parametrize(("text", "hint", "idtype", "value"), HINTED)
def test_hint_parses_as_that_type(text: object, hint: IdType | str, idtype: IdType, value: str) -> None:
    identifier = parse_identifier(text, hint=hint)
    assert (identifier.type, identifier.value) == (idtype, value)


HINT_REJECTED = [
    ("1706.03762", PMID, "not a PMID"),
    ("PMC3531190", PMID, "not a PMID"),
    ("10.1038/nature12373", PMID, "not a PMID"),
    ("31452104", DOI, "not a DOI"),
    (31452104, DOI, "not a DOI"),
    ("PMID:31452104", DOI, "not a DOI"),
    ("arXiv:1706.03762", DOI, "not a DOI"),
    ("10.1038/nature12373", ARXIV, "not an arXiv ID"),
    ("31452104", ARXIV, "not an arXiv ID"),
    (1706.03762, ARXIV, "dtype=str"),
    ("PMID:31452104", PMCID, "not a PMCID"),
    (parse_identifier("PMC3531190"), PMID, "not a PMID"),
]


@pytest.mark.parametrize(("text", "hint", "expected"), HINT_REJECTED)
def test_hint_rejects_other_types(text: object, hint: IdType, expected: str) -> None:
    with pytest.raises(InvalidIdentifier, match=re.escape(expected)):
        parse_identifier(text, hint=hint)


def test_unknown_hint_is_a_configuration_error_listing_types() -> None:
    with pytest.raises(ConfigurationError, match="'pmcid'"):
        parse_identifier("31452104", hint="isbn")
    with pytest.raises(ConfigurationError):
        parse_many(["31452104"], hint="isbn")


# --------------------------------------------------------------------------- parse_many


def test_parse_many_preserves_order_and_positions() -> None:
    values = ["PMC1", "10.1000/a", 7, "1706.03762"]
    results = parse_many(values)
    assert [r.position for r in results] == [0, 1, 2, 3]
    assert [r.input for r in results] == values
    assert [r.identifier.key for r in results if r.identifier] == [
        "pmcid:PMC1",
        "doi:10.1000/a",
        "pmid:7",
        "arxiv:1706.03762",
    ]
    assert all(r.error is None and r.duplicate_of is None and r.ok for r in results)


@pytest.mark.parametrize(
    "pair",
    [
        ("10.1038/NATURE12373", "10.1038/nature12373"),
        ("doi:10.1038/nature12373", "https://doi.org/10.1038/nature12373"),
        ("10.1038/nature12373", "10.1038%2Fnature12373"),
        (31452104, "31452104"),
        ("PMID:31452104", 31452104.0),
        ("PMC3531190", "PMCID:3531190"),
        ("1706.03762v1", "arXiv:1706.03762v5"),
        ("10.48550/arXiv.1706.03762", "1706.03762"),
    ],
)
def test_parse_many_marks_later_equal_identifier_as_duplicate(pair: tuple[object, object]) -> None:
    first, second = parse_many(["PMC1", pair[0], "PMC2", pair[1]])[1::2]
    assert first.duplicate_of is None
    assert second.duplicate_of == 1
    assert second.identifier is not None and second.error is None


def test_parse_many_points_every_duplicate_at_first_occurrence() -> None:
    results = parse_many(["1", "1", "PMID:1", 1])
    assert [r.duplicate_of for r in results] == [None, 0, 0, 0]


@pytest.mark.parametrize("blank", [None, float("nan"), "", "  ", pd.NA, pd.NaT])
def test_parse_many_blank_rows_get_error_and_no_identifier(blank: object) -> None:
    results = parse_many(["1", blank, "2"])
    assert results[1].identifier is None
    assert results[1].error is not None and "blank input" in results[1].error
    assert results[1].duplicate_of is None
    assert not results[1].ok
    assert results[2].identifier == parse_identifier("2")


def test_parse_many_blanks_and_errors_are_never_duplicates() -> None:
    results = parse_many(["", "", "hello", "hello"])
    assert [r.duplicate_of for r in results] == [None] * 4
    assert all(r.error for r in results)


def test_parse_many_accepts_pandas_series_in_value_order() -> None:
    # pandas turns an int column with a blank into floats; the index is not the position
    series = pd.Series([31452104, None, 7], index=[10, 5, 3])
    assert series.dtype == float
    results = parse_many(series)
    assert [r.position for r in results] == [0, 1, 2]
    assert results[0].identifier == Identifier(PMID, "31452104")
    assert results[1].identifier is None and "blank input" in (results[1].error or "")
    assert results[2].identifier == Identifier(PMID, "7")


def test_parse_many_accepts_object_series_with_pandas_na() -> None:
    series = pd.Series(["10.1000/A", pd.NA, "10.1000/a"], dtype="string")
    results = parse_many(series)
    assert results[1].error is not None and results[2].duplicate_of == 0


@pytest.mark.parametrize(
    "values",
    [
        ["1", "2"],
        ("1", "2"),
        (v for v in ["1", "2"]),
        np.array(["1", "2"]),
        pd.Series([1, 2]),
    ],
    ids=["list", "tuple", "generator", "ndarray", "series"],
)
def test_parse_many_accepts_common_containers(values: object) -> None:
    assert [r.identifier.value for r in parse_many(values) if r.identifier] == ["1", "2"]


def test_parse_many_single_string_is_one_item() -> None:
    results = parse_many("10.1038/nature12373")
    assert len(results) == 1
    assert results[0].identifier == Identifier(DOI, "10.1038/nature12373")


def test_parse_many_rejects_dataframe_with_hint_to_pass_a_column() -> None:
    with pytest.raises(TypeError, match="column"):
        parse_many(pd.DataFrame({"doi": ["10.1000/x"]}))


def test_parse_many_applies_hint_to_every_item() -> None:
    results = parse_many(["3531190", "PMC1", "10.1000/x"], hint="pmcid")
    assert [r.identifier.value if r.identifier else None for r in results] == ["PMC3531190", "PMC1", None]
    assert results[2].error is not None and "not a PMCID" in results[2].error


def test_parse_many_keeps_original_input_untouched() -> None:
    value = np.float64(31452104.0)
    result = parse_many([value])[0]
    assert result.input == value and isinstance(result, ParsedInput)


def test_parse_many_of_empty_input_is_empty() -> None:
    assert parse_many([]) == []


# --------------------------------------------------------------------------- filename_for

RESERVED_CHARS = set('/\\:*?"<>|')


def assert_safe_filename(name: str, *, extension: str = ".pdf", max_length: int = 150) -> None:
    assert name.endswith(extension)
    assert len(name) <= max_length
    assert name not in {"", ".", ".."}
    assert not name.startswith(".")
    assert not (RESERVED_CHARS & set(name))
    assert not any(unicodedata.category(ch)[0] == "C" or ch.isspace() for ch in name)
    assert name.isascii()
    assert not name.endswith((".", " "))
    assert name.split(".")[0].upper() not in {"CON", "PRN", "AUX", "NUL"} | {
        f"{d}{i}" for d in ("COM", "LPT") for i in range(10)
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("31452104", "pmid_31452104.pdf"),
        ("PMC3531190", "pmcid_PMC3531190.pdf"),
        ("arXiv:1706.03762v5", "arxiv_1706.03762.pdf"),
    ],
)
def test_filename_without_replacement_has_no_hash(text: str, expected: str) -> None:
    assert filename_for(parse_identifier(text)) == expected


def test_filename_of_doi_replaces_slash_and_appends_hash_of_key() -> None:
    name = filename_for(parse_identifier("10.1038/nature12373"))
    assert re.fullmatch(r"doi_10\.1038_nature12373_[0-9a-f]{8}\.pdf", name)


def test_filename_is_stable_across_calls_and_case_of_doi() -> None:
    a = filename_for(parse_identifier("10.1038/NATURE12373"))
    b = filename_for(parse_identifier("https://doi.org/10.1038/nature12373"))
    assert a == b == filename_for(parse_identifier("doi:10.1038/nature12373"))
    # sha256-based, so also stable across processes (pinned value)
    assert a == "doi_10.1038_nature12373_" + __import__("hashlib").sha256(b"doi:10.1038/nature12373").hexdigest()[:8] + ".pdf"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("10.1000/a/b", "10.1000/a_b"),
        ("10.1000/a:b", "10.1000/a*b"),
        ("10.1000/a<b>", "10.1000/a|b|"),
        ("10.1000/\u00e9", "10.1000/\u00e8"),
    ],
)
def test_filenames_of_dois_differing_only_in_reserved_chars_do_not_collide(a: str, b: str) -> None:
    assert filename_for(parse_identifier(a)) != filename_for(parse_identifier(b))


def test_filename_of_traversal_attempt_is_a_single_component() -> None:
    name = filename_for(parse_identifier("10.1000/../../etc/passwd"), "{value}")
    assert_safe_filename(name)
    name = filename_for(parse_identifier("10.1000/x"), "../{version}")
    assert_safe_filename(name)
    assert not name.startswith("..")


def test_filename_leading_dots_and_empty_render_are_made_safe() -> None:
    ident = parse_identifier("PMC1")
    assert_safe_filename(filename_for(ident, "..{version}"))
    assert_safe_filename(filename_for(ident, "{version}"))
    assert_safe_filename(filename_for(ident, "{version}", extension=""), extension="")
    assert_safe_filename(filename_for(ident, "x...", extension=""), extension="")


@pytest.mark.parametrize("device", ["CON", "prn", "Aux", "nul", "COM1", "lpt9", "con.tar", "NUL.{value}"])
def test_filename_windows_device_names_get_a_suffix(device: str) -> None:
    name = filename_for(parse_identifier("31452104"), device)
    assert_safe_filename(name)
    assert name.lower().startswith(device.split(".")[0].lower() + "_")


def test_filename_is_truncated_to_max_length_keeping_extension_and_hash() -> None:
    ident = parse_identifier("10.1000/" + "a" * 400)
    name = filename_for(ident, max_length=60)
    assert len(name) == 60
    assert re.search(r"_[0-9a-f]{8}\.pdf$", name)
    other = filename_for(parse_identifier("10.1000/" + "a" * 399 + "b"), max_length=60)
    assert other != name and len(other) == 60


def test_filename_long_but_clean_name_is_truncated_with_hash() -> None:
    ident = parse_identifier("PMC3531190")
    name = filename_for(ident, "{value}" * 30, max_length=40)
    assert len(name) <= 40 and re.search(r"_[0-9a-f]{8}\.pdf$", name)


def test_filename_template_fields() -> None:
    ident = parse_identifier("arXiv:1706.03762v5")
    assert filename_for(ident, "{value}{version}") == "1706.03762v5.pdf"
    assert filename_for(parse_identifier("1706.03762"), "{value}{version}") == "1706.03762.pdf"
    assert filename_for(ident, "{type}-{key}").startswith("arxiv-arxiv_1706.03762_")


@pytest.mark.parametrize("template", ["{doi}", "{value}_{title}", "{0}", "{}", "{value.upper}", "{value[0]}"])
def test_filename_unknown_template_field_lists_valid_fields(template: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        filename_for(parse_identifier("1"), template)
    for field in FILENAME_FIELDS:
        assert "{" + field + "}" in str(info.value)


def test_filename_malformed_template_is_configuration_error() -> None:
    with pytest.raises(ConfigurationError):
        filename_for(parse_identifier("1"), "{value")


def test_filename_extension_forms() -> None:
    ident = parse_identifier("1")
    assert filename_for(ident, extension="") == "pmid_1"
    assert filename_for(ident, extension="pdf") == "pmid_1.pdf"
    assert filename_for(ident, extension=".tar.gz") == "pmid_1.tar.gz"
    with pytest.raises(ConfigurationError):
        filename_for(ident, extension="./../x")
    with pytest.raises(ConfigurationError):
        filename_for(ident, max_length=10)


def test_filename_rejects_non_identifier() -> None:
    with pytest.raises(TypeError):
        filename_for("10.1000/x")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- properties

_texts = st.one_of(
    st.text(max_size=40),
    st.sampled_from([str(c[0]) for c in ACCEPTED if isinstance(c[0], str)]),
    st.builds(lambda s: "10.1234/" + s, st.text(min_size=1, max_size=40)),
)


@settings(max_examples=150, deadline=None)
@given(text=_texts, max_length=st.integers(min_value=30, max_value=200), extension=st.sampled_from([".pdf", "", ".xml"]))
def test_filename_of_anything_that_parses_is_safe_and_deterministic(text: str, max_length: int, extension: str) -> None:
    try:
        identifier = parse_identifier(text)
    except InvalidIdentifier:
        return
    name = filename_for(identifier, extension=extension, max_length=max_length)
    assert_safe_filename(name, extension=extension, max_length=max_length)
    assert name == filename_for(identifier, extension=extension, max_length=max_length)


@settings(max_examples=150, deadline=None)
@given(suffix=st.text(min_size=1, max_size=200), template=st.sampled_from(["{type}_{value}", "{key}", "{value}{version}"]))
def test_filename_of_arbitrary_doi_suffix_is_safe(suffix: str, template: str) -> None:
    identifier = Identifier(DOI, "10.1234/" + suffix)  # bypass parsing: the file name must be safe regardless
    name = filename_for(identifier, template)
    assert_safe_filename(name)
    assert name == filename_for(Identifier(DOI, "10.1234/" + suffix), template)


@settings(max_examples=100, deadline=None)
@given(text=st.one_of(st.text(max_size=30), st.integers(), st.floats(), st.none(), st.booleans()))
def test_parse_identifier_either_returns_identifier_or_raises_invalid_identifier(text: object) -> None:
    try:
        result = parse_identifier(text)
    except InvalidIdentifier as exc:
        assert str(exc)
    else:
        assert isinstance(result, Identifier) and result.value


@settings(max_examples=100, deadline=None)
@given(number=st.integers(min_value=1, max_value=999_999_999))
def test_pmid_as_int_float_and_string_agree(number: int) -> None:
    keys = {parse_identifier(v).key for v in (number, float(number), str(number), f"PMID: {number}")}
    assert keys == {f"pmid:{number}"}


def test_nan_float_is_blank_not_a_number_error() -> None:
    with pytest.raises(InvalidIdentifier, match="blank input"):
        parse_identifier(math.nan)


def test_from_key_round_trips_a_key_and_splits_an_arxiv_version():
    ident = parse_identifier("arXiv:1706.03762v5")
    assert Identifier.from_key("arxiv:1706.03762v5") == ident
    assert Identifier.from_key(parse_identifier("10.1038/X").key) == parse_identifier("10.1038/x")


@pytest.mark.parametrize("text", ["10.", "10.1", "10.1000", "10.1000.", " 10. ", "10.,", "doi:10."])
def test_a_truncated_doi_is_invalid_never_a_pmid(text: str) -> None:
    # "10." stripped of its trailing dot is the digits 10: another paper (PMID 10), not a truncated DOI
    with pytest.raises(InvalidIdentifier, match="DOI"):
        parse_identifier(text)


def test_a_doi_followed_by_sentence_punctuation_still_parses() -> None:
    assert parse_identifier("10.1038/nature12373.").value == "10.1038/nature12373"
    assert parse_identifier("10 ").value == "10"  # bare digits stay a PMID
