"""Full-text parsing benchmark (paperfetch.fulltext). Prints figures; asserts nothing.

    python benchmarks/fulltext.py [--papers 1000] [--pdf-paragraphs 120] [--pdf PATH ...] [--pairs DIR] [--heldout DIR]

0. PDF paragraphs against the JATS, per engine, on the real PDF/JATS pairs (shared/fixtures/real/fulltext_pairs, and
   the real article pairs of shared/fixtures/real/articles: pdf/pairs/NAME.pdf with jats/*/NAME.xml; a PDF that
   cannot be read counts as all its paragraphs missed):
   the share of JATS paragraphs one PDF row holds (>= 90 % of its words in order), found or split over 2-4 rows,
   the share sharing a row with another, the rows out of order / carrying running furniture / with glued words /
   with control characters, headings that swallowed a first line, the line-end hyphens kept where the JATS writes
   the word whole (``under-stood``) and joined where it writes a compound (``longterm``),
   the share of found paragraphs under the JATS section title, and pages/s of the whole path
   (benchmarks/pdfscore.py, the measure tests/test_fulltext_pdf.py asserts).
0b. The same figures per layout on held-out PDFs (tests/data/heldout_pdfs, made by benchmarks/heldout_pdfs.py):
   Chromium renderings of real JATS text in journal-like layouts, not publisher PDFs; ``--heldout DIR`` scores
   another folder of ``STEM__LAYOUT.pdf`` beside ``STEM.xml``. benchmarks/pdf_layers.py puts pdfminer.six's layout
   analysis through the same scorer beside pypdfium2's lines, on these sets and the real article pairs.
1. JATS parsing in papers/s: ``parse_jats`` (paragraphs, licence, ids, references) over the real Europe PMC
   ``fullTextXML`` bodies in tests/data/europepmc, repeated.
2. PDF text extraction in pages/s, pypdf against pypdfium2 on the same PDFs: generated articles (tests/_pdfwriter,
   known paragraphs, so the recovered share is also printed), and any real PDFs given with ``--pdf`` (by default
   two documentation PDFs if this Debian machine has them). Two figures per engine: the text layer alone
   (``pdf_lines``) and the whole path to paragraph records (``pdf_paragraphs``).
3. Peak RSS for parsing *papers* JATS bodies, one after another, in a fresh child process (so the figure is
   this work's, not the parent's), with the child's RSS after imports for reference and tracemalloc's peak of
   Python allocations (lxml's C heap is not in it; RSS is).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from paperfetch.fulltext import FullTextError, paragraphs_from_lines, parse_jats, pdf_lines, pdf_paragraphs  # noqa: E402
from benchmarks.pdfscore import score_pair  # noqa: E402
from tests._pdfwriter import layout_article, write_pdf  # noqa: E402

FIXTURES = Path(os.environ.get("PAPERFETCH_FIXTURES") or REPO.parent / "shared" / "fixtures" / "real")
DATA = FIXTURES / "europepmc"  # the recorded Europe PMC fullTextXML bodies (rest__PMC…__fullTextXML.xml)
PAIRS = FIXTURES / "fulltext_pairs" if (FIXTURES / "fulltext_pairs").is_dir() else None
HELDOUT = REPO / "tests" / "data" / "heldout_pdfs"
DEFAULT_REAL_PDFS = [Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
                     Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf")]
SENTENCE = ("The measured ratio followed the water content of the stem closely in every species that was tested, "
            "and the effect of illumination was smaller than the effect of watering. ")


def _bodies() -> list[bytes]:
    return [p.read_bytes() for p in sorted(DATA.glob("rest__PMC*__fullTextXML.xml"))]


def jats_rate(papers: int) -> None:
    bodies = _bodies()
    sizes = sum(len(b) for b in bodies) / len(bodies)
    parse_jats(bodies[0])  # warm
    started = time.perf_counter()
    rows = 0
    for i in range(papers):
        rows += len(parse_jats(bodies[i % len(bodies)]).paragraphs)
    elapsed = time.perf_counter() - started
    print(f"JATS  parse_jats: {papers} papers (mean {sizes / 1024:.0f} kB) in {elapsed:.2f} s = "
          f"{papers / elapsed:,.0f} papers/s, {rows / elapsed:,.0f} paragraphs/s, "
          f"{papers * sizes / elapsed / 1e6:.1f} MB/s")


def _generated(count: int) -> tuple[bytes, list[str], int]:
    paragraphs = [f"Paragraph {i} opens here. " + SENTENCE * (2 + i % 4) for i in range(count)]
    blocks: list[tuple[str, str]] = [("title", "A Generated Article For Timing")]
    for i, text in enumerate(paragraphs):
        if i % 6 == 0:
            blocks.append(("heading", f"{i // 6 + 1}. Section {i // 6 + 1}"))
        blocks.append(("para", text))
    pages = layout_article(blocks, indent=True, footer="Generated Journal {page}")
    return write_pdf(pages), [" ".join(p.split()) for p in paragraphs], len(pages)


def _page_count(pdf: bytes) -> int:
    import io

    from pypdf import PdfReader
    return len(PdfReader(io.BytesIO(pdf)).pages)


def pdf_rates(count: int, real: list[Path]) -> None:
    generated, paragraphs, _ = _generated(count)
    cases = [("generated", generated, paragraphs)]
    cases += [(path.name, path.read_bytes(), None) for path in real if path.exists()]
    engines = ["pypdf"]
    try:
        import pypdfium2  # noqa: F401
        engines.append("pypdfium2")
    except ImportError:
        print("PDF   pypdfium2 is not installed (pip install pypdfium2): pypdf only")
    for name, pdf, known in cases:
        pages = _page_count(pdf)
        for engine in engines:
            started = time.perf_counter()
            lines = pdf_lines(pdf, engine=engine)
            lines_s = time.perf_counter() - started
            started = time.perf_counter()
            rows = pdf_paragraphs(pdf, engine=engine)
            rows_s = time.perf_counter() - started
            chars = sum(len(line.text) for line in lines)
            recovered = ""
            if known is not None:
                texts = {row.text for row in rows}
                recovered = f", known paragraphs recovered exactly {sum(p in texts for p in known)}/{len(known)}"
            print(f"PDF   {name} ({pages} pages, {len(pdf) / 1024:.0f} kB) {engine:9}: "
                  f"text layer {pages / lines_s:7.1f} pages/s, to paragraphs {pages / rows_s:7.1f} pages/s; "
                  f"{len(lines)} lines, {chars:,} chars, {len(rows)} rows{recovered}")


def _article_pairs() -> list[tuple[Path, Path]]:
    """The real article pairs of shared/fixtures/real/articles: pdf/pairs/NAME.pdf with its jats/*/NAME.xml."""
    jats = {p.stem: p for p in (FIXTURES / "articles" / "jats").glob("*/*.xml")}
    return [(p, jats[p.stem]) for p in sorted((FIXTURES / "articles" / "pdf" / "pairs").glob("*.pdf")) if p.stem in jats]


def pair_scores(label: str, pairs: list[tuple[Path, Path]]) -> None:
    """Each engine's paragraphs against the JATS of every (PDF, JATS) pair, per file and in all; a PDF that cannot
    be read counts as every paragraph missed."""
    if not pairs:
        print(f"{label} no PDF/JATS pairs found")
        return
    reference = {pdf: pdf_lines(pdf.read_bytes(), engine="pypdfium2") for pdf, _ in pairs}  # where the furniture is
    checks = ("furniture_rows", "glued_rows", "kept_hyphens", "joined_hyphens", "control_rows", "swallowing_headings")
    for engine in ("pypdfium2", "pypdf"):
        total = dict.fromkeys(("jats", "found", "split", "shared", "section", "pages", "seconds", *checks), 0.0)
        for pdf, xml in pairs:
            body, pages = pdf.read_bytes(), _page_count(pdf.read_bytes())
            started = time.perf_counter()
            try:
                rows = paragraphs_from_lines(pdf_lines(body, engine=engine, fallback=False))
            except FullTextError as exc:
                print(f"{label} {engine:9} {pdf.name:26} cannot be read (all missed): {exc}")
                rows = []
            seconds = time.perf_counter() - started
            s = score_pair(pdf.name, xml.read_bytes(), rows, reference[pdf], body)
            print(f"{label} {engine:9} {pdf.name:26} {s.jats:3} JATS paragraphs, {s.rows:4} rows: found {s.found_share:.3f}, "
                  f"found or split {s.split_share:.3f}, sharing a row {s.shared_share:.3f}; out of order "
                  f"{s.out_of_order}, furniture rows {s.furniture_rows}, glued rows {s.glued_rows}, hyphens kept "
                  f"{s.kept_hyphens}, joined {s.joined_hyphens}, control "
                  f"{s.control_rows}, swallowing headings {s.swallowing_headings}; under the JATS section "
                  f"{s.section_share:.2f}; {pages / seconds:6.1f} pages/s")
            for key, value in (("jats", s.jats), ("found", s.found), ("split", s.found_or_split), ("shared", s.shared),
                               ("section", s.same_section), ("pages", pages), ("seconds", seconds),
                               *((check, getattr(s, check)) for check in checks)):
                total[key] += value
        if total["jats"]:
            print(f"{label} {engine:9} ALL: {total['jats']:.0f} JATS paragraphs: found {total['found'] / total['jats']:.3f}, "
                  f"found or split {total['split'] / total['jats']:.3f}, sharing a row "
                  f"{total['shared'] / total['jats']:.3f}, under the JATS section "
                  f"{total['section'] / max(1, total['found']):.2f}; "
                  + ", ".join(f"{check.replace('_', ' ')} {total[check]:.0f}" for check in checks)
                  + f"; {total['pages'] / total['seconds']:.1f} pages/s")


def heldout_scores(folder: Path) -> None:
    """The default engine's paragraphs against the JATS of the held-out PDFs in *folder*, per layout and in all."""
    by_layout: dict[str, list] = {}
    for pdf in sorted(folder.glob("*__*.pdf")):
        stem, layout = pdf.stem.split("__", 1)
        body = pdf.read_bytes()
        lines = pdf_lines(body)
        score = score_pair(pdf.name, (folder / f"{stem}.xml").read_bytes(), paragraphs_from_lines(lines), lines, body)
        by_layout.setdefault(layout, []).append(score)
    if not by_layout:
        print(f"HELD  no held-out PDFs in {folder}")
        return
    for layout, scores in [*sorted(by_layout.items()), ("ALL", [s for v in by_layout.values() for s in v])]:
        jats, found = sum(s.jats for s in scores), sum(s.found for s in scores)
        bad = {check: sum(getattr(s, check) for s in scores) for check in
               ("out_of_order", "furniture_rows", "glued_rows", "kept_hyphens", "joined_hyphens", "control_rows",
                "swallowing_headings")}
        print(f"HELD  {layout:22} {len(scores):2} PDFs, {jats:4} JATS paragraphs: found {found / jats:.3f}, found or "
              f"split {sum(s.found_or_split for s in scores) / jats:.3f}, sharing a row "
              f"{sum(s.shared for s in scores) / jats:.3f}, under the JATS section "
              f"{sum(s.same_section for s in scores) / max(1, found):.2f}; "
              + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in bad.items()))


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _reset_peak() -> bool:
    try:  # Linux: writing 5 to clear_refs resets VmHWM (the peak RSS) to the current RSS
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _child_rss(papers: int) -> None:
    bodies = _bodies()
    figures: dict[str, int] = {}
    for mode in ("stream", "keep"):
        kept = []
        reset = _reset_peak()
        figures[f"{mode}_base_kb"] = _status_kb("VmRSS")
        tracemalloc.start()
        for i in range(papers):
            article = parse_jats(bodies[i % len(bodies)])
            if mode == "keep":
                kept.append(article)
        _, figures[f"{mode}_tracemalloc"] = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        figures[f"{mode}_peak_kb"] = _status_kb("VmHWM" if reset else "VmRSS")
        figures["rows"] = sum(len(a.paragraphs) for a in kept)
        del kept
    print(json.dumps(figures))


def rss(papers: int) -> None:
    out = subprocess.run([sys.executable, __file__, "--child-rss", str(papers)], check=True, capture_output=True, text=True)
    f = json.loads(out.stdout.strip().splitlines()[-1])
    for mode, what in (("stream", "each result dropped"), ("keep", f"all results kept, {f['rows']:,} paragraphs")):
        base, peak = f[f"{mode}_base_kb"] / 1024, f[f"{mode}_peak_kb"] / 1024
        print(f"RSS   {papers} papers parsed ({what}): peak RSS {peak:.1f} MB, {peak - base:+.1f} MB over the "
              f"{base:.1f} MB before; tracemalloc peak {f[f'{mode}_tracemalloc'] / 1024 / 1024:.1f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--pdf-paragraphs", type=int, default=120, help="paragraphs of the generated PDF")
    parser.add_argument("--pdf", type=Path, nargs="*", default=DEFAULT_REAL_PDFS, help="real PDFs to time as well")
    parser.add_argument("--pairs", type=Path, default=PAIRS, help="a folder of PDF/JATS pairs (NAME.pdf + NAME.xml)")
    parser.add_argument("--heldout", type=Path, default=HELDOUT, help="held-out PDFs (STEM__LAYOUT.pdf + STEM.xml)")
    parser.add_argument("--child-rss", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_rss:
        _child_rss(args.child_rss)
        return
    pair_scores("PAIRS", [(p, p.with_suffix(".xml")) for p in sorted(args.pairs.glob("*.pdf"))] if args.pairs else [])
    pair_scores("ARTICLES", _article_pairs())
    heldout_scores(args.heldout)
    jats_rate(args.papers)
    pdf_rates(args.pdf_paragraphs, args.pdf)
    rss(args.papers)


if __name__ == "__main__":
    main()
