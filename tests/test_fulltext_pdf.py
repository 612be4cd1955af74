"""The PDF text path on real article PDFs, scored against each article's own JATS (benchmarks/pdfscore.py).

The pairs are shared/fixtures/real/fulltext_pairs/ (PROVENANCE.md there): eight CC-BY articles from five
publishers, each PDF beside its JATS. Every PDF is parsed once (module-scoped fixture). The checks on hand-made
lines (``TextLine``) and on ``tests/_pdfwriter`` PDFs are synthetic and say so.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from benchmarks.pdfscore import PairScore, printed_whole, score_pair
from paperfetch.fulltext import FullTextError, Paragraph, PdfEngine, TextLine, paragraphs_from_lines, pdf_lines, pdf_paragraphs, pdflines
from paperfetch.fulltext.pdflines import PdfLayout
from paperfetch.fulltext.pdftext import refused
from tests._fixtures import fixtures_or_placeholder, heldout_pdfs, recorded_params, require_real_fixtures
from tests._pdfwriter import Line, write_pdf

pytest.importorskip("pypdfium2")

PAIRS = fixtures_or_placeholder() / "fulltext_pairs"
PDFS = sorted(PAIRS.glob("*.pdf"))
ROBUST = sorted((PAIRS / "robust").glob("*.pdf"))

#: What the default engine reaches on the pairs (docs/fulltext.md, "PDF text layer"); the floor per file is lower.
FOUND_OVERALL = 0.95
FOUND_PER_FILE = 0.90


@pytest.fixture(scope="module")
def parsed() -> dict[str, list]:
    """Each pair's rows from the default engine, every PDF read once."""
    require_real_fixtures()
    return {pdf.name: (pdf_lines(pdf.read_bytes()),) for pdf in PDFS}


@pytest.fixture(scope="module")
def rows(parsed) -> dict[str, list]:
    return {name: paragraphs_from_lines(lines) for name, (lines,) in parsed.items()}


@pytest.fixture(scope="module")
def scores(parsed, rows) -> dict[str, PairScore]:
    return {name: score_pair(name, (PAIRS / name).with_suffix(".xml").read_bytes(), rows[name], lines,
                             (PAIRS / name).read_bytes())
            for name, (lines,) in parsed.items()}


def test_the_default_engine_is_pypdfium2():
    assert pdflines.DEFAULT_ENGINE is PdfEngine.PYPDFIUM2
    assert pdf_paragraphs.__kwdefaults__["engine"] is PdfEngine.PYPDFIUM2


def test_the_default_engine_finds_the_jats_paragraphs_one_row_each(scores):
    jats = sum(s.jats for s in scores.values())
    found = sum(s.found for s in scores.values())
    shared = sum(s.shared for s in scores.values())
    assert len(scores) == 8 and jats > 200
    assert found / jats >= FOUND_OVERALL, {n: round(s.found_share, 3) for n, s in scores.items()}
    assert shared / jats <= 0.02, [p for s in scores.values() for p in s.problems if "holds" in p]
    section = sum(s.same_section for s in scores.values()) / found
    assert section >= 0.9, {n: round(s.section_share, 2) for n, s in scores.items()}
    for name, score in scores.items():
        assert score.found_share >= FOUND_PER_FILE, (name, score.problems[:5])
        assert score.split_share >= 0.94, (name, score.problems[:5])


@pytest.mark.parametrize("check", ["out_of_order", "furniture_rows", "glued_rows", "control_rows", "swallowing_headings"])
def test_no_row_is_out_of_order_furniture_glued_controlled_or_eaten_by_a_heading(scores, check):
    bad = {name: [p for p in s.problems if not p.startswith("not found")] for name, s in scores.items() if getattr(s, check)}
    assert not bad, bad


#: Line-end hyphens the rows keep where the JATS writes the word whole, on the eight shared pairs (benchmarks/
#: pdfscore.py): ``occur-`` + ``ring`` (both halves are words of that document) and ``patho-`` + ``physiological``
#: (no evidence either way; long halves keep it); none is joined where the JATS writes a compound.
PAIRS_KEPT_HYPHENS = 2


def test_line_end_hyphens_are_kept_and_joined_as_the_jats_writes_the_words(scores):
    problems = [p for s in scores.values() for p in s.problems if p.startswith("hyphen")]
    assert sum(s.kept_hyphens for s in scores.values()) <= PAIRS_KEPT_HYPHENS, problems
    assert sum(s.joined_hyphens for s in scores.values()) == 0, problems


def test_the_scorer_counts_a_line_end_hyphen_kept_or_joined_against_the_jats():
    """Synthetic lines: the JATS writes "understood" and "long-term"; rows that keep ``under-stood`` count one
    hyphen kept, rows that print ``longterm`` one joined, rows that follow the JATS none."""
    jats = (b"<article><body><sec><title>Results</title><p>It was understood as a long-term gain by all."
            b"</p></sec></body></article>")
    lines = [_line(700, "Results"), _line(680, "It was under-"), _line(668, "stood as a long-"), _line(656, "term gain by all.")]

    def scored(text: str) -> PairScore:
        return score_pair("synthetic", jats, [Paragraph(section="Results", paragraph=0, text=text)], lines)

    wrong = scored("It was under-stood as a longterm gain by all.")
    assert (wrong.kept_hyphens, wrong.joined_hyphens) == (1, 1)
    right = scored("It was understood as a long-term gain by all.")
    assert (right.kept_hyphens, right.joined_hyphens) == (0, 0)


def test_a_word_the_pdf_prints_whole_is_not_glue_but_one_run_together_across_a_gap_is():
    """Synthetic PDFs: the JATS writes "Springer" and "link" apart; a row "Springerlink.com" is glue only where the
    page leaves a gap inside it, never where it draws the word in one piece."""
    jats = (b"<article><body><sec><title>Results</title><p>The Springer link was followed to the archive page."
            b"</p></sec></body></article>")
    rows = [Paragraph(section="Results", paragraph=0, text="Read it at Springerlink.com today.")]
    whole = write_pdf([[Line(72, 700, "Read it at Springerlink.com today.")]])
    apart = write_pdf([[Line(72, 700, "Read it at Springer"), Line(300, 700, "link.com today.")]])
    assert printed_whole(whole, {"springerlink"}) == {"springerlink"}
    assert printed_whole(apart, {"springerlink"}) == set()
    assert score_pair("whole", jats, rows, pdf=whole).glued_rows == 0
    assert score_pair("apart", jats, rows, pdf=apart).glued_rows == 1
    assert score_pair("no pdf", jats, rows).glued_rows == 1


def test_every_row_has_its_page_and_the_pages_rise(rows):
    pages = [row.page for row in rows["PMC4417228.pdf"]]
    assert all(isinstance(p, int) and p >= 1 for p in pages) and pages == sorted(pages) and pages[-1] > 15


def test_superscripts_stay_inline_in_their_paragraph(rows):
    text = " ".join(row.text for row in rows["04-00932.pdf"])
    assert "approximately 107 conidia" in text and "(R2 0.812, Q2" in text


@pytest.mark.parametrize("path", recorded_params(ROBUST), ids=lambda p: p.name)
def test_a_robust_pdf_gives_no_rows_or_full_text_error(path):
    try:
        rows = pdf_paragraphs(path.read_bytes())
    except FullTextError:
        rows = []
    assert rows == []


# ------------------------------------------------------------------- synthetic lines (hand-made TextLine values)


def _line(y: float, text: str, *, page: int = 0, x: float = 72, runs: tuple = (), size: float = 10) -> TextLine:
    return TextLine(page=page, x=x, y=y, size=size, text=text, right=x + 5.5 * len(text), runs=runs)


def _body(text: str) -> tuple:
    return (("Body-Regular", text),)


def test_run_in_headings_are_split_without_losing_a_word():
    """Synthetic: a run-in heading in its own font, then the paragraph on the same line."""
    filler = "The patients were followed for two years and seen every month at the same clinic by one doctor."
    lines = [_line(700, filler, runs=_body(filler)), _line(688, filler, runs=_body(filler)),
             _line(664, "2.1. Patients and Methods. Between February 2010 and Jan-",
                   runs=(("Body-Italic", "2.1. Patients and Methods."), ("Body-Regular", " Between February 2010 and Jan-"))),
             _line(652, "uary 2014 every patient was seen.", runs=_body("uary 2014 every patient was seen."))]
    rows = paragraphs_from_lines(lines)
    assert rows[-1].section == "Patients and Methods"
    assert rows[-1].text == "Between February 2010 and January 2014 every patient was seen."


def test_a_table_row_or_byline_in_the_body_font_is_never_a_section():
    """Synthetic: short lines in the body's font and size after a gap are text, not headings."""
    filler = "Blood samples were taken in the morning after an overnight fast and frozen at once for later study."
    lines = [_line(700, "Results", runs=(("Body-Bold", "Results"),), size=12),
             _line(680, filler, runs=_body(filler)), _line(668, filler, runs=_body(filler)),
             _line(640, "Female 65 (51.6%) 86 (51.2%)", runs=_body("Female 65 (51.6%) 86 (51.2%)")),
             _line(612, "Jane Doe and Richard Roe", runs=_body("Jane Doe and Richard Roe")),
             _line(584, filler, runs=_body(filler))]
    assert {row.section for row in paragraphs_from_lines(lines)} == {"Results"}


def test_line_end_hyphens_follow_the_documents_own_compounds():
    """Synthetic: ``long-term`` printed whole elsewhere keeps its hyphen at a line end; ``treat-ment`` does not."""
    lines = [_line(700, "Results"), _line(680, "The long-term effect of the treat-"), _line(668, "ment was a long-"),
             _line(656, "term gain in every group of the study.")]
    assert paragraphs_from_lines(lines)[0].text == "The long-term effect of the treatment was a long-term gain in every group of the study."


def test_a_piece_after_a_line_end_hyphen_is_no_evidence_and_a_word_running_on_across_the_break_joins_it():
    """Synthetic: ``stood`` opens a line only after ``under-``, so it is no word of the document's and
    ``under-stood`` is one word although ``under`` is; ``pro-`` + ``jected`` joins beside ``project``, which runs
    on across the break; ``long-term`` printed whole elsewhere keeps its hyphen."""
    lines = [_line(700, "Results"), _line(680, "Under the long-term project the gain was under-"),
             _line(668, "stood by few, as pro-"), _line(656, "jected under the model.")]
    assert paragraphs_from_lines(lines)[0].text == ("Under the long-term project the gain was understood by few, "
                                                    "as projected under the model.")


def test_control_characters_never_reach_the_text():
    """Synthetic: NUL and ``\\x03`` inside a line are dropped."""
    rows = paragraphs_from_lines([_line(700, "Results"), _line(680, "Water\x00 content rose\x03 at dawn.")])
    assert rows[0].text == "Water content rose at dawn."


def test_running_headers_and_page_numbers_inside_a_paragraph_are_dropped():
    """Synthetic: a header and a page number at the top and foot of three pages, a paragraph running over them."""
    lines = []
    words = ("the holding pens were located near the shore and were checked every day by two of the authors "
             "who kept a record of each animal and its weight over the season").split()
    for page in range(3):
        lines.append(_line(760, f"Behav Ecol Sociobiol (2015) 69:1383-1394 {1383 + page}", page=page))
        lines += [_line(700 - 12 * i, " ".join(words[i * 6:(i + 1) * 6]) or "x", page=page) for i in range(3)]
        lines.append(_line(40, str(page + 1), page=page, x=300))
    text = " ".join(row.text for row in paragraphs_from_lines(lines))
    assert "Sociobiol" not in text and " 1385" not in text and not text.endswith(" 3")


def test_a_file_one_engine_cannot_parse_is_read_by_the_other(monkeypatch):
    """Synthetic PDF (tests/_pdfwriter); the default engine is made to fail, and pypdf reads the file."""
    def broken(*args):
        raise RuntimeError("no")
        yield  # pragma: no cover

    monkeypatch.setattr(pdflines, "_pdfium_lines", broken)
    pdf = write_pdf([[Line(72, 700, "Hello there.")]])
    assert [line.text for line in pdf_lines(pdf)] == ["Hello there."]
    with pytest.raises(FullTextError, match="pypdfium2"):
        pdf_lines(pdf, fallback=False)


@pytest.mark.recorded
def test_a_scanned_pdf_gives_no_rows_and_the_reason_no_text_layer(tmp_path):
    """Loopback world of tests/test_fulltext.py; the publisher serves a real image-only PDF (robust/)."""
    from tests._quick import retriever
    from tests.test_fulltext import PDF_ONLY, TEXT_ONLY, World

    scan = (PAIRS / "robust" / "image_only_6pages.pdf").read_bytes()

    class ScanWorld(World):
        def _pub(self, request):
            from paperfetch.testing import Reply

            return Reply(200, scan, {"Content-Type": "application/pdf"})

    with ScanWorld(base_ip=110) as world, retriever(tmp_path, world.endpoints, **TEXT_ONLY) as r:
        text = r.fulltext([PDF_ONLY])
        paragraphs, outcomes = text.paragraphs, text.outcomes
    assert len(paragraphs) == 0
    assert outcomes.iloc[0]["error"].startswith("no text layer")


def test_a_table_drawn_between_two_lines_of_a_paragraph_stays_out_of_it():
    """Synthetic: two table lines drawn, in the file's order, between two lines of one paragraph."""
    lines = [_line(720, "Methods"), _line(700, "All participants were diagnosed by the same criteria. None"),
             _line(500, "Variables", x=330), _line(488, "Value 12.2", x=330),
             _line(688, "had eating disorders or other acute complications of the disease.")]
    rows = paragraphs_from_lines(lines)
    assert rows[0].text == ("All participants were diagnosed by the same criteria. None had eating disorders or other "
                            "acute complications of the disease.")


def test_two_columns_drawn_line_by_line_lose_no_line():
    """Synthetic: a file that draws a left-column line, then a right-column line, and so on."""
    left = [f"left column line {i} of the first paragraph goes on here" for i in range(6)]
    right = [f"right column line {i} of the other paragraph goes on too" for i in range(6)]
    lines = [_line(720, "Methods")]
    for i in range(6):
        lines += [_line(700 - 12 * i, left[i]), _line(700 - 12 * i, right[i], x=320)]
    text = " ".join(row.text for row in paragraphs_from_lines(lines))
    assert all(part in text for part in left + right)


# ------------------------------------------- held-out PDFs (Chromium renderings of real JATS text, synthetic layout)


#: Paragraphs found per layout on the held-out PDFs (docs/fulltext.md, "PDF text layer"), the measured share rounded down.
HELDOUT_FOUND = {"one_column": 1.0, "one_column_large": 1.0, "two_column_boxed": 1.0, "two_column_dense": 0.96,
                 "two_column_justified": 1.0}


@pytest.fixture(scope="module")
def heldout() -> dict[str, list[PairScore]]:
    """Each held-out PDF of tests/data/heldout_pdfs scored against its JATS, by layout. The PDFs are synthetic:
    real Europe PMC JATS text printed by Chromium in made-up journal layouts (benchmarks/heldout_pdfs.py), rendered
    from the recorded fixtures when the test needs them, never committed."""
    folder = heldout_pdfs()
    out: dict[str, list[PairScore]] = {}
    for pdf in sorted(folder.glob("*__*.pdf")):
        stem, layout = pdf.stem.split("__")
        body = pdf.read_bytes()
        lines = pdf_lines(body)
        jats = (folder / f"{stem}.xml").read_bytes()
        out.setdefault(layout, []).append(score_pair(pdf.name, jats, paragraphs_from_lines(lines), lines, body))
    return out


def test_the_held_out_pdfs_keep_their_paragraphs_per_layout(heldout):
    assert set(heldout) == set(HELDOUT_FOUND) and all(len(s) == 2 for s in heldout.values())
    for layout, scores in heldout.items():
        found = sum(s.found for s in scores) / sum(s.jats for s in scores)
        assert found >= HELDOUT_FOUND[layout], (layout, [p for s in scores for p in s.problems][:5])
        assert sum(s.found_or_split for s in scores) == sum(s.jats for s in scores), layout
    scores = [s for layout in heldout.values() for s in layout]
    assert sum(s.shared for s in scores) <= 2, [p for s in scores for p in s.problems if "holds" in p]
    for check in ("out_of_order", "furniture_rows", "glued_rows", "joined_hyphens", "control_rows", "swallowing_headings"):
        assert not [s.name for s in scores if getattr(s, check)], check
    # one line-end hyphen kept where the JATS writes the word whole: ``control-`` + ``led``, both words there
    assert sum(s.kept_hyphens for s in scores) <= 1, [p for s in scores for p in s.problems if p.startswith("hyphen")]


# ------------------------------------------- real article pairs (shared/fixtures/real/articles: pdf/pairs + jats)


#: What the default engine reaches on the 21 real article pairs (benchmarks/pdf_layers.py --set articles): 490 of
#: 515 JATS paragraphs found in one row, 4 sharing a row; with the eight shared pairs 739 of 769 (0.96) in all.
ARTICLES_FOUND = 490
ARTICLES_SHARED = 4
#: Rows with a glued word (benchmarks/pdfscore.py; a word the PDF prints whole is none): two, "long-" + "term" read
#: as "longterm" and "fine-" + "needle" as "fineneedle", in documents that print neither half nor the compound
#: anywhere else (short halves without evidence are joined: most such breaks are a word's).
ARTICLES_GLUED = 2
#: Line-end hyphens the rows keep where the JATS writes the word whole (``occur-`` + ``ring``, ``con-`` + ``tests``:
#: both halves are words of the document; ``decom-`` + ``pressive`` …: long halves without evidence), and those
#: joined where it writes a compound (the two glued words above).
ARTICLES_KEPT_HYPHENS = 6
ARTICLES_JOINED_HYPHENS = 2


def test_the_real_article_pairs_keep_their_paragraphs_apart_and_no_furniture(scores):
    """Each PDF of articles/pdf/pairs against its own JATS (articles/jats/*/NAME.xml): found in one row, sharing a
    row, glued rows, and no running head, control character or swallowed heading; found overall with the shared
    pairs."""
    root = require_real_fixtures() / "articles"
    jats = {p.stem: p for p in (root / "jats").glob("*/*.xml")}
    pairs = [p for p in sorted((root / "pdf" / "pairs").glob("*.pdf")) if p.stem in jats]
    assert len(pairs) == 21
    articles = []
    for pdf in pairs:
        body = pdf.read_bytes()
        lines = pdf_lines(body)
        articles.append(score_pair(pdf.name, jats[pdf.stem].read_bytes(), paragraphs_from_lines(lines), lines, body))
    problems = [p for s in articles for p in s.problems if not p.startswith("not found")]
    assert sum(s.jats for s in articles) == 515
    assert sum(s.found for s in articles) >= ARTICLES_FOUND, {s.name: round(s.found_share, 3) for s in articles}
    assert sum(s.shared for s in articles) <= ARTICLES_SHARED, [p for p in problems if "holds" in p]
    assert sum(s.glued_rows for s in articles) <= ARTICLES_GLUED, [p for p in problems if p.startswith("glued")]
    hyphens = [p for p in problems if p.startswith("hyphen")]
    assert sum(s.kept_hyphens for s in articles) <= ARTICLES_KEPT_HYPHENS, hyphens
    assert sum(s.joined_hyphens for s in articles) <= ARTICLES_JOINED_HYPHENS, hyphens
    for check in ("furniture_rows", "control_rows", "swallowing_headings"):
        assert not [s.name for s in articles if getattr(s, check)], (check, problems)
    both = [*articles, *scores.values()]
    assert sum(s.found for s in both) / sum(s.jats for s in both) >= 0.95
    assert sum(s.shared for s in both) / sum(s.jats for s in both) <= 0.02


def test_a_widely_spaced_justified_line_in_pieces_is_joined_again():
    """Synthetic: a justified line drawn as word pieces with even wide gaps, spanning what the full line above spans."""
    full = "The adult specimens were collected in the vicinity of the county and kept"
    pieces: list[TextLine] = []
    for word in "Northwest A&F University (accession".split():  # even 20-point word spaces
        pieces.append(_line(688, word, x=pieces[-1].right + 20 if pieces else 72))
    spread = pieces[-1].right
    lines = [_line(712, "Methods"), replace(_line(700, full), right=spread), *pieces,
             _line(676, "number: Hm-085256), Yangling, China.")]
    rows = paragraphs_from_lines(lines)
    assert [row.text for row in rows] == [f"{full} Northwest A&F University (accession number: Hm-085256), Yangling, China."]


def test_text_right_after_a_small_print_caption_is_not_part_of_it():
    """Synthetic: a caption in smaller type, then a body paragraph after a gap smaller than the body's paragraph gap."""
    body = "The measured ratio followed the water content of the stem closely in every species."
    lines = [_line(720, "Results"), _line(700, body), _line(688, body),
             _line(660, "Fig. 1 The ratio of the stem over three days.", size=8), _line(651, "Measured at noon.", size=8),
             _line(636, "To evaluate the effect of watering, the ratio was measured again."), _line(624, body)]
    texts = [row.text for row in paragraphs_from_lines(lines)]
    assert texts[-1].startswith("To evaluate the effect of watering") and not any("Fig. 1" in t for t in texts)


def test_a_run_in_heading_that_fills_its_line_opens_a_section():
    """Synthetic: a bold run-in heading ending its line, its paragraph on the next line, after a figure's gap."""
    body = "The measured ratio followed the water content of the stem closely in every species tested."
    lines = [_line(720, "Results", runs=(("Body-Bold", "Results"),), size=12), _line(700, body, runs=_body(body)),
             _line(688, "on every day.", runs=_body("on every day.")),
             _line(560, "Effect of watering and illumination on growth.",
                   runs=(("Body-Bold", "Effect of watering and illumination on growth."),)),
             _line(548, body, runs=_body(body)), _line(536, body, runs=_body(body))]
    rows = paragraphs_from_lines(lines)
    assert [row.section for row in rows] == ["Results", "Results :: Effect of watering and illumination on growth"]
    assert rows[1].text == f"{body} {body}"


def test_a_numbered_heading_set_over_two_lines_is_one_heading():
    """Synthetic: ``2.1 Changes in … ves-`` / ``sels under …`` in the heading's bold, then the body text."""
    body = "The measured ratio followed the water content of the stem closely in every species tested."
    bold = "Body-Bold"
    lines = [_line(720, "2. Results", runs=((bold, "2. Results"),), size=12), _line(700, body, runs=_body(body)),
             _line(676, "2.1 Changes in the ratio for experimental ves\u2010",
                   runs=((bold, "2.1 Changes in the ratio for experimental ves\u2010"),)),
             _line(664, "sels under dry conditions", runs=((bold, "sels under dry conditions"),)),
             _line(650, body, runs=_body(body))]
    rows = paragraphs_from_lines(lines)
    assert rows[-1].section == "Results :: Changes in the ratio for experimental vessels under dry conditions"
    assert rows[-1].text == body


def test_tight_paragraph_spacing_after_a_sentence_end_parts_two_paragraphs():
    """Synthetic: unindented paragraphs a third of a line apart (14.2 points at a 10.5-point pitch)."""
    a = ["The volatile compounds were produced in higher amounts two days after",
         "inoculation, and the controls gave only slight traces of them at all."]
    b = ["In conclusion, volatile metabolites can indicate the presence of fungi",
         "during the spoilage of grain in the silo and in the mill alike as well."]
    ys = [700, 689.5, 675.3, 664.8]
    lines = [_line(720, "Results")] + [_line(y, text) for y, text in zip(ys, a + b)]
    assert [row.text for row in paragraphs_from_lines(lines)] == [" ".join(a), " ".join(b)]


def test_a_suspended_hyphen_at_a_line_end_stays():
    """Synthetic: ``intra-`` ending a line before ``and inter-assay``."""
    lines = [_line(700, "Results"), _line(680, "The intra-"), _line(668, "and inter-assay variation was low.")]
    assert paragraphs_from_lines(lines)[0].text == "The intra- and inter-assay variation was low."


def test_a_text_layer_in_any_language_is_read_and_one_broken_into_letters_is_refused():
    """Synthetic lines: Portuguese and Spanish prose, full of one- and two-letter words (de, da, em, os, e, y, el,
    la), is a readable text layer; letters standing one beside another (``C o n t i n u o u s``) are not."""
    portuguese = ("Os resultados de um estudo e a análise da amostra em que o grupo de controle e o tratamento foram "
                  "comparados em dois momentos mostraram que a dose é segura para os pacientes da região")
    spanish = ("El análisis de la muestra y de los datos de un grupo de pacientes en la región a lo largo de un año "
               "mostró que el tratamiento es seguro y que la dosis y el efecto son los esperados")
    broken = "C o n t i n u o u s w a t e r i n g o f t h e s t e m w a s m e a s u r e d"
    for text in (portuguese, spanish):
        assert refused([_line(700 - i, text) for i in range(20)]) == ""
    assert "breaks words into letters" in refused([_line(700 - i, broken) for i in range(20)])
    one_glyph_a_line = [_line(700 - i, c) for i, c in enumerate(broken.replace(" ", "") * 8)]
    assert refused(one_glyph_a_line)


def test_text_printed_turned_round_is_left_out_of_an_upright_page():
    """Synthetic lines: an axis label set turned on an upright page is no paragraph; a page set turned (a
    landscape page) is read in its own frame."""
    body = "The measured ratio followed the water content of the stem closely in every species tested."
    label = replace(_line(400, "TBD (U/d) (1 U-mmol/L)"), turned=True)
    rows = paragraphs_from_lines([_line(700, body), label, _line(688, body)])
    assert "TBD" not in " ".join(row.text for row in rows)
    turned = [replace(_line(700 - 12 * i, body, page=1), turned=True) for i in range(3)]
    assert [row.text for row in paragraphs_from_lines(turned)] == [" ".join([body] * 3)]


def test_text_read_turned_round_comes_in_words():
    """Real Hindawi PDF (shared/fixtures/real/articles): a table printed reading up the page (PDFium's angle
    3π/2) reads as words in its own frame, so the file is not refused as broken into letters."""
    pdf = require_real_fixtures() / "articles" / "pdf" / "pairs" / "PMC4736231.pdf"
    lines = pdf_lines(pdf.read_bytes())
    assert any(line.turned and line.text.startswith("Table 2: Echocardiographic") for line in lines)
    assert refused(lines) == "" and pdf_paragraphs(pdf.read_bytes())


def test_the_layout_measures_are_one_value_passed_through():
    """Synthetic lines: a heading longer than the layout allows is text."""
    body = "The measured ratio followed the water content of the stem closely in every species tested."
    lines = [_line(720, "2. Results of the trial", size=12), _line(700, body)]
    assert paragraphs_from_lines(lines)[0].section == "Results of the trial"
    assert paragraphs_from_lines(lines, PdfLayout(numbered_words=2, heading_words=3))[0].section == ""
    with pytest.raises(AttributeError):
        PdfLayout().line_gap = 2.0  # type: ignore[misc]
