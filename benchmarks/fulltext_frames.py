"""JATS to reading-machine frames: papers/s with tables, figures and citations. Prints figures; asserts nothing.

    python benchmarks/fulltext_frames.py [--papers 500]

Over the real JATS bodies (tests/data/europepmc and, when beside this checkout, shared/fixtures/real/fulltext_pairs),
repeated: ``parse_jats`` alone (paragraphs with their ids and xref links, references, tables, figures), then
the four frames of ``paperfetch.fulltext.read`` built from it (each table also as a DataFrame and a pipe table).
Times are CPU time (``time.process_time``): on a shared machine, wall time measures the neighbours.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from paperfetch.fulltext import (  # noqa: E402
    article_rows,
    figure_rows,
    figures_frame,
    paragraphs_frame,
    parse_jats,
    reference_rows,
    references_frame,
    table_rows,
    tables_frame,
)

FIXTURES = Path(os.environ.get("PAPERFETCH_FIXTURES") or REPO.parent / "shared" / "fixtures" / "real")
FOLDERS = [FIXTURES / "europepmc", FIXTURES / "fulltext_pairs"]


def _bodies() -> list[bytes]:
    seen: set[str] = set()
    bodies = []
    for folder in FOLDERS:
        for path in sorted(folder.glob("*.xml")) if folder.exists() else []:
            if path.name not in seen and (path.name.startswith("rest__PMC") or "fulltext_pairs" in str(folder)):
                seen.add(path.name)
                bodies.append(path.read_bytes())
    return bodies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=500)
    args = parser.parse_args()
    bodies = _bodies()
    parse_jats(bodies[0])
    started = time.process_time()
    counts = [0, 0, 0, 0]
    for i in range(args.papers):
        article = parse_jats(bodies[i % len(bodies)])
        counts[0] += len(article.paragraphs)
        counts[1] += sum(len(p.citations) for p in article.paragraphs)
        counts[2] += len(article.tables)
        counts[3] += len(article.figures)
    parsed = time.process_time() - started
    print(f"parse_jats: {args.papers} papers of {len(bodies)} real bodies in {parsed:.2f} s = "
          f"{args.papers / parsed:,.0f} papers/s ({counts[0] / parsed:,.0f} paragraphs/s, {counts[1] / parsed:,.0f} "
          f"citations/s, {counts[2] / parsed:,.0f} tables/s, {counts[3] / parsed:,.0f} figures/s)")
    started = time.process_time()
    rows: dict[str, list] = {"p": [], "r": [], "t": [], "f": []}
    for i in range(args.papers):
        article = parse_jats(bodies[i % len(bodies)])
        name = f"paper{i}.xml"
        rows["p"] += article_rows(article, input=name)
        rows["r"] += reference_rows(article, input=name)
        rows["t"] += table_rows(article, input=name)
        rows["f"] += figure_rows(article, input=name)
    frames = (paragraphs_frame(rows["p"]), references_frame(rows["r"]), tables_frame(rows["t"]), figures_frame(rows["f"]))
    whole = time.process_time() - started
    print(f"parse_jats + the four frames: {args.papers} papers in {whole:.2f} s = {args.papers / whole:,.0f} papers/s "
          f"({', '.join(str(len(f)) for f in frames)} rows)")


if __name__ == "__main__":
    main()
