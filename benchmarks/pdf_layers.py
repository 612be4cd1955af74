"""Two PDF layout layers through one scorer: pypdfium2 glyph lines (the package's) against pdfminer.six's layout
analysis, each with the package's heading, furniture and hyphenation rules on top (``paragraphs_from_lines``).

    python benchmarks/pdf_layers.py [--set shared|heldout|articles ...] [--layer pdfium|pdfminer ...]

The sets: the eight shared pairs (shared/fixtures/real/fulltext_pairs, the ones the rules were tuned on), the
held-out Chromium renderings (tests/data/heldout_pdfs) and the real article pairs of
shared/fixtures/real/articles (pdf/pairs/NAME.pdf beside jats/*/NAME.xml). Per layer and set it prints the share of
JATS paragraphs *found* in one row, *found or split* over 2-4 rows, *sharing a row* with another (benchmarks/
pdfscore.py) and pages/s of the whole path; a PDF a layer refuses or cannot read counts as nothing found.

pdfminer.six (MIT, pure Python) is an optional import here: ``pip install pdfminer.six`` to measure it; the package
does not depend on it (docs/fulltext.md, "PDF text layer", says why).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.pdfscore import PairScore, score_pair  # noqa: E402
from paperfetch.fulltext import FullTextError, TextLine, paragraphs_from_lines, pdf_lines  # noqa: E402
from paperfetch.fulltext.pdftext import refused  # noqa: E402

#: The recorded fixtures: $PAPERFETCH_FIXTURES, else shared/fixtures/real beside the checkout.
SHARED = Path(os.environ.get("PAPERFETCH_FIXTURES") or REPO.parent / "shared" / "fixtures" / "real")
HELDOUT = REPO / "tests" / "data" / "heldout_pdfs"


def pdfminer_lines(pdf: bytes) -> Iterator[TextLine]:
    """pdfminer.six's text lines in its reading order (LAParams defaults, boxes flow), as :class:`TextLine`."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTChar, LTTextBox, LTTextLine

    for number, page in enumerate(extract_pages(io.BytesIO(pdf))):
        for box in page:
            if not isinstance(box, LTTextBox):
                continue
            for line in box:
                if not isinstance(line, LTTextLine) or not line.get_text().strip():
                    continue
                chars = [c for c in line if isinstance(c, LTChar)]
                runs: list[tuple[str, str]] = []
                for item in line:
                    text = item.get_text().replace("\n", "")
                    font = item.fontname if isinstance(item, LTChar) else (runs[-1][0] if runs else "")
                    if runs and (runs[-1][0] == font or text == " "):
                        runs[-1] = (runs[-1][0], runs[-1][1] + text)
                    elif text:
                        runs.append((font, text))
                sizes = sorted(round(c.size, 1) for c in chars) or [line.height]
                yield TextLine(page=number, x=line.x0, y=line.y0, size=sizes[len(sizes) // 2],
                               text=line.get_text().rstrip("\n"), right=line.x1, runs=tuple(runs))


LAYERS: dict[str, Callable[[bytes], list[TextLine]]] = {
    "pdfium": lambda pdf: pdf_lines(pdf, fallback=False),
    "pdfminer": lambda pdf: list(pdfminer_lines(pdf)),
}


def pairs(name: str) -> list[tuple[str, Path, Path]]:
    """The (name, PDF, JATS) triples of a set."""
    if name == "shared":
        folder = SHARED / "fulltext_pairs"
        return [(p.name, p, p.with_suffix(".xml")) for p in sorted(folder.glob("*.pdf"))]
    if name == "heldout":
        return [(p.name, p, HELDOUT / f"{p.stem.split('__')[0]}.xml") for p in sorted(HELDOUT.glob("*__*.pdf"))]
    jats = {p.stem: p for p in (SHARED / "articles" / "jats").glob("*/*.xml")}
    return [(p.name, p, jats[p.stem]) for p in sorted((SHARED / "articles" / "pdf" / "pairs").glob("*.pdf"))
            if p.stem in jats]


def _pages(pdf: bytes) -> int:
    from pypdf import PdfReader
    return len(PdfReader(io.BytesIO(pdf)).pages)


def measure(layer: str, triples: list[tuple[str, Path, Path]], verbose: bool) -> dict[str, float]:
    total = {"jats": 0.0, "found": 0.0, "split": 0.0, "shared": 0.0, "pages": 0.0, "seconds": 0.0, "refused": 0.0}
    for name, pdf, xml in triples:
        body = pdf.read_bytes()
        started = time.perf_counter()
        try:
            lines = LAYERS[layer](body)
            why = refused(lines)
            rows = [] if why else paragraphs_from_lines(lines)
        except FullTextError as exc:
            lines, rows, why = [], [], str(exc)
        total["seconds"] += time.perf_counter() - started
        total["pages"] += _pages(body)
        total["refused"] += bool(why)
        score: PairScore = score_pair(name, xml.read_bytes(), rows, lines)
        if verbose:
            print(f"  {layer:8} {name:40} found {score.found_share:.3f} split {score.split_share:.3f} "
                  f"shared {score.shared_share:.3f}" + (f"  REFUSED: {why}" if why else ""), flush=True)
        for key, value in (("jats", score.jats), ("found", score.found), ("split", score.found_or_split),
                           ("shared", score.shared)):
            total[key] += value
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", nargs="*", default=["shared", "heldout", "articles"])
    parser.add_argument("--layer", nargs="*", default=list(LAYERS))
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    for name in args.set:
        triples = pairs(name)
        for layer in args.layer:
            t = measure(layer, triples, args.verbose)
            jats = t["jats"] or 1
            print(f"{name:8} {layer:8} {len(triples):2} PDFs, {t['jats']:5.0f} JATS paragraphs: found "
                  f"{t['found'] / jats:.3f}, found or split {t['split'] / jats:.3f}, sharing a row "
                  f"{t['shared'] / jats:.3f}; {t['refused']:.0f} refused; {t['pages'] / t['seconds']:.1f} pages/s",
                  flush=True)


if __name__ == "__main__":
    main()
