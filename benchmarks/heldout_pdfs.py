"""Held-out article PDFs for the PDF text path: real JATS bodies printed to PDF by Chromium in journal-like layouts.

    python benchmarks/heldout_pdfs.py [--out tests/data/heldout_pdfs] [--chromium PATH] [JATS ...]

The PDF path's rules were tuned on the real publisher PDFs of shared/fixtures/real/fulltext_pairs. This script makes
PDFs from another producer (Chromium's print to PDF, Skia) out of JATS bodies those rules never saw (by default the
Europe PMC ``fullTextXML`` bodies in shared/fixtures/real/europepmc beside the checkout, or in $PAPERFETCH_FIXTURES), each in the layouts of ``LAYOUTS``: one or two columns,
running headers and footers with page numbers (``@page`` margin boxes, or a fixed-position element that Chromium
repeats on every printed page), justified text broken at soft hyphens (Chromium on Linux has no hyphenation
dictionaries offline, so ``hyphens: auto`` alone breaks nothing; the soft hyphens are placed by a simple syllable
rule and the browser hyphenates at the line ends it chooses), superscript citation numbers, a sidebar box, figure
captions, a table, run-in bold headings and numbered headings. The text is the JATS text; the box holds the article's
own notes (text JATS keeps out of its paragraphs), and the table, where the article has none, is made-up figures.

Each PDF is written as ``<stem>__<layout>.pdf`` beside its JATS copy ``<stem>.xml``; tests/test_fulltext_pdf.py
scores them with benchmarks/pdfscore.py and benchmarks/fulltext.py prints the figures per layout. The
output is made of recorded article text, so it is never committed: the tests render it when they need it
(tests/_fixtures.py, ``heldout_pdfs``), and ``benchmarks/fulltext.py --heldout DIR`` reads what this script wrote.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from lxml import etree

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(os.environ.get("PAPERFETCH_FIXTURES") or REPO.parent / "shared" / "fixtures" / "real")
DEFAULT_JATS = sorted((FIXTURES / "europepmc").glob("rest__PMC*__fullTextXML.xml"))
OUT = REPO / "tests" / "data" / "heldout_pdfs"

_BASE = """
@page { size: A4; margin: 22mm 18mm 20mm 18mm; }
body { margin: 0; }
h1 { font-size: 17pt; margin: 0 0 4mm 0; line-height: 1.2; }
.authors { font-size: 10pt; margin-bottom: 1mm; }
.affil { font-size: 7.5pt; margin-bottom: 4mm; }
figure { margin: 3mm 0; break-inside: avoid; }
figure .art { height: 32mm; background: #ddd; border: 1px solid #999; }
figcaption, .tcap { font-size: 0.8em; line-height: 1.25; margin-top: 1.5mm; }
table { border-collapse: collapse; font-size: 0.8em; margin: 2mm 0 4mm 0; break-inside: avoid; }
td, th { padding: 0.5mm 2mm; border-bottom: 0.5px solid #666; text-align: left; }
aside { border: 1px solid #333; background: #eef; padding: 2mm 3mm; margin: 3mm 0; font-size: 0.85em;
        break-inside: avoid; }
aside h4 { margin: 0 0 1mm 0; text-transform: uppercase; font-size: 0.9em; }
.refs { font-size: 0.8em; }
.refs li { margin-bottom: 0.6mm; }
sup, sub { font-size: 0.7em; line-height: 0; }
"""

#: name -> (CSS, numbered headings, run-in subsection headings, running furniture as a fixed element, citations as superscripts)
LAYOUTS: dict[str, tuple[str, bool, bool, bool, bool]] = {
    "one_column": ("""
@page { @top-left { content: "Journal of Held-out Results"; font: 8pt 'Liberation Serif'; }
        @top-right { content: "Vol. 12 (2021)"; font: 8pt 'Liberation Serif'; }
        @bottom-center { content: counter(page); font: 9pt 'Liberation Serif'; } }
body { font: 11pt/1.35 'Liberation Serif'; }
p { margin: 0 0 2.5mm 0; }
h2 { font-size: 13pt; margin: 5mm 0 2mm 0; } h3 { font-size: 11pt; font-style: italic; margin: 4mm 0 1.5mm 0; }
""", True, False, False, False),
    "two_column_justified": ("""
@page { @top-center { content: "Held-out Letters · 2021 · 12: 101–112"; font: 7.5pt 'Liberation Serif'; }
        @bottom-right { content: counter(page); font: 8pt 'Liberation Serif'; } }
body { font: 9.5pt/1.25 'Liberation Serif'; }
.flow { column-count: 2; column-gap: 6mm; text-align: justify; hyphens: auto; }
p { margin: 0; text-indent: 1.2em; } h2 + p, .first { text-indent: 0; }
h2 { font-size: 10.5pt; margin: 4mm 0 1.5mm 0; }
""", False, True, False, True),
    "two_column_boxed": ("""
.running { position: fixed; top: -13mm; left: 0; right: 0; font: 7.5pt 'Liberation Sans'; border-bottom: 0.5px solid #000; }
.running span { float: right; }
@page { @bottom-center { content: "Page " counter(page); font: 8pt 'Liberation Sans'; } }
body { font: 9pt/1.3 'Liberation Sans'; }
.flow { column-count: 2; column-gap: 7mm; text-align: justify; hyphens: auto; }
p { margin: 0 0 2mm 0; }
h2 { font-size: 10pt; margin: 4mm 0 1.5mm 0; } h3 { font-size: 9pt; margin: 3mm 0 1mm 0; }
""", True, False, True, True),
    "two_column_dense": ("""
@page :right { @bottom-right { content: counter(page); font: 7pt 'DejaVu Sans'; }
               @top-right { content: "HELD-OUT REPORTS"; font: 6.5pt 'DejaVu Sans'; letter-spacing: 1pt; } }
@page :left { @bottom-left { content: counter(page); font: 7pt 'DejaVu Sans'; }
              @top-left { content: "Synthetic rendering of a real article"; font: 6.5pt 'DejaVu Sans'; } }
body { font: 8pt/1.3 'DejaVu Sans'; }
.flow { column-count: 2; column-gap: 5mm; }
p { margin: 0 0 1.6mm 0; }
h2 { font-size: 8pt; text-transform: uppercase; letter-spacing: 0.5pt; margin: 3mm 0 1mm 0; }
h3 { font-size: 8pt; font-style: italic; font-weight: normal; margin: 2mm 0 0.8mm 0; }
""", False, False, False, True),
    "one_column_large": ("""
@page { @bottom-left { content: "https://example.org/heldout/2021"; font: 8pt 'Liberation Sans'; }
        @bottom-right { content: counter(page) " / " counter(pages); font: 8pt 'Liberation Sans'; } }
body { font: 12pt/1.55 'Liberation Sans'; }
.flow { text-align: justify; hyphens: auto; }
p { margin: 0 0 3mm 0; }
aside { float: right; width: 42%; margin: 0 0 2mm 4mm; }
h2 { font-size: 15pt; margin: 6mm 0 2mm 0; } h3 { font-size: 12.5pt; margin: 4mm 0 1.5mm 0; }
""", False, False, False, False),
}

_VOWELS = set("aeiouy")


def soft_hyphens(word: str) -> str:
    """*word* with soft hyphens where a simple syllable rule allows a break (vowel, consonant | consonant, vowel, or
    vowel | consonant, vowel), three letters at least either side; words with capitals or digits stay whole."""
    if len(word) < 7 or not word.isalpha() or not word.islower():
        return word
    cuts = []
    for k in range(3, len(word) - 2):
        a, b, c = word[k - 1], word[k], word[k + 1]
        if b not in _VOWELS and c in _VOWELS and (a not in _VOWELS or word[k - 2] in _VOWELS and a in _VOWELS):
            cuts.append(k if a not in _VOWELS else k)
        elif a not in _VOWELS and b not in _VOWELS and c in _VOWELS and word[k - 2] in _VOWELS:
            cuts.append(k)
    out, last = [], 0
    for k in sorted(set(cuts)):
        if k - last >= 3:
            out.append(word[last:k])
            last = k
    out.append(word[last:])
    return "\u00ad".join(out)


def _local(tag: object) -> str:
    return etree.QName(tag).localname if isinstance(tag, str) else ""


class _Renderer:
    """One JATS article as HTML in one layout."""

    def __init__(self, root: etree._Element, layout: str) -> None:
        self.root = root
        self.css, self.numbered, self.run_in, self.fixed, self.superscripts = LAYOUTS[layout]
        self.hyphenate = "hyphens: auto" in self.css
        self.boxed = False
        self.tabled = False

    def inline(self, element: etree._Element) -> str:
        """The element's text and children as inline HTML (italic, bold, super/subscripts, citations)."""
        parts = [self._text(element.text)]
        for child in element:
            name = _local(child.tag)
            inner = self.inline(child)
            if name in ("italic", "bold", "sup", "sub"):
                tag = {"italic": "i", "bold": "b"}.get(name, name)
                parts.append(f"<{tag}>{inner}</{tag}>")
            elif name == "xref" and child.get("ref-type") == "bibr" and self.superscripts:
                parts.append("<sup>" + re.sub(r"[\[\]]", "", inner) + "</sup>")
            elif name in ("fig", "table-wrap", "fn", "supplementary-material"):
                pass
            else:
                parts.append(inner)
            parts.append(self._text(child.tail))
        return "".join(parts)

    def _text(self, text: str | None) -> str:
        escaped = html.escape(text or "", quote=False)
        if not self.hyphenate:
            return escaped
        return re.sub(r"[A-Za-z]+", lambda m: soft_hyphens(m.group(0)), escaped)

    def page(self) -> str:
        meta = self.root.find(".//{*}article-meta")
        journal = self.root.findtext(".//{*}journal-title") or "Journal"
        title = meta.find(".//{*}article-title") if meta is not None else None
        out = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><style>{_BASE}{self.css}</style></head><body>"]
        if self.fixed:
            out.append(f"<div class='running'>{html.escape(journal)} · Research article<span>Held-out 2021</span></div>")
        out.append(f"<h1>{self.inline(title) if title is not None else ''}</h1>")
        names = [" ".join(filter(None, (c.findtext(".//{*}given-names"), c.findtext(".//{*}surname"))))
                 for c in self.root.iterfind(".//{*}contrib-group/{*}contrib")]
        out.append(f"<div class='authors'>{html.escape(', '.join(n for n in names if n))}</div>")
        for aff in self.root.iterfind(".//{*}aff"):
            out.append(f"<div class='affil'>{html.escape(' '.join(''.join(aff.itertext()).split()))}</div>")
        out.append("<div class='flow'>")
        for abstract in (meta.findall("{*}abstract") if meta is not None else []):
            out.append("<h2>Abstract</h2>")
            out.append(self.block(abstract, depth=2, numbers=[], abstract=True))
        body = self.root.find("{*}body")
        if body is not None:
            out.append(self.block(body, depth=1, numbers=[]))
        if not self.tabled:
            out.append(self._made_up_table())
        out.append(self._references())
        out.append("</div></body></html>")
        return "\n".join(out)

    def block(self, element: etree._Element, depth: int, numbers: list[int], abstract: bool = False) -> str:
        out: list[str] = []
        count = 0
        pending = ""  # a run-in heading waiting for its section's first paragraph
        for child in element:
            name = _local(child.tag)
            if name == "p":
                inner = self.inline(child)
                if pending:
                    inner, pending = f"<b>{pending}</b> {inner}", ""
                out.append(f"<p class='first'>{inner}</p>" if out and out[-1].startswith("<h") else f"<p>{inner}</p>")
                for float_ in child.iter("{*}fig", "{*}table-wrap"):
                    out.append(self.floating(float_))
                if not self.boxed and depth == 1 and len(out) > 2:
                    out.append(self._box())
            elif name == "sec":
                count += 1
                heading = child.find("{*}title")
                text = self.inline(heading) if heading is not None else ""
                number = [*numbers, count]
                label = child.findtext("{*}label") or ".".join(map(str, number)) + ("." if len(number) == 1 else "")
                numbered = self.numbered and not abstract and text and not text[:1].isdigit()
                shown = f"{label} {text}" if numbered else text
                inner = self.block(child, depth + 1, number, abstract)
                if text and (abstract or self.run_in and depth >= 2) and inner.startswith("<p"):
                    inner = re.sub(r"^<p[^>]*>", f"<p class='first'><b>{shown}.</b> ", inner, count=1)
                elif text:
                    inner = f"<h{min(depth + 1, 4)}>{shown}</h{min(depth + 1, 4)}>\n{inner}"
                out.append(inner)
            elif name in ("fig", "table-wrap"):
                out.append(self.floating(child))
            elif name == "list":
                items = "".join(f"<li>{' '.join(self.inline(p) for p in item.iterfind('{*}p'))}</li>"
                                for item in child.iterfind("{*}list-item"))
                out.append(f"<ul>{items}</ul>")
            elif name in ("title", "label", "sec-meta", "supplementary-material", "fn-group", "notes", "glossary"):
                continue
            elif len(child):
                out.append(self.block(child, depth, numbers, abstract))
        if pending:
            out.append(f"<p>{pending}</p>")
        return "\n".join(out)

    def floating(self, element: etree._Element) -> str:
        label = element.findtext("{*}label") or ""
        caption = element.find("{*}caption")
        text = " ".join(self.inline(c) for c in caption) if caption is not None else ""
        if _local(element.tag) == "fig":
            return f"<figure><div class='art'></div><figcaption><b>{html.escape(label)}</b> {text}</figcaption></figure>"
        self.tabled = True
        table = element.find(".//{*}table")
        body = etree.tostring(table, encoding="unicode") if table is not None else ""
        return f"<div class='tcap'><b>{html.escape(label)}</b> {text}</div>{body}"

    def _box(self) -> str:
        """The article's own notes (data availability, funding, the supplement's note) as a boxed sidebar."""
        self.boxed = True
        notes = [" ".join("".join(p.itertext()).split()) for p in self.root.iterfind(".//{*}notes//{*}p")]
        notes += [" ".join("".join(p.itertext()).split()) for p in self.root.iterfind(".//{*}author-notes//{*}p")]
        notes = [n for n in notes if n][:2] or ["Keywords: " + ", ".join(k.text or "" for k in self.root.iterfind(".//{*}kwd"))]
        items = "".join(f"<p>{html.escape(n)}</p>" for n in notes)
        return f"<aside><h4>Key points</h4>{items}</aside>"

    def _made_up_table(self) -> str:
        rows = "".join(f"<tr><td>Sample {i}</td><td>{12.5 + 3.1 * i:.1f}</td><td>{0.41 + 0.07 * i:.2f}</td>"
                       f"<td>{20 + 7 * i}</td></tr>" for i in range(1, 6))
        return ("<div class='tcap'><b>Table 1</b> Made-up figures of the layout, not of the article.</div>"
                f"<table><tr><th>Sample</th><th>Mean</th><th>Ratio</th><th>n</th></tr>{rows}</table>")

    def _references(self) -> str:
        refs = []
        for ref in self.root.iterfind(".//{*}ref-list/{*}ref"):
            found = [ref.find("{*}mixed-citation"), ref.find("{*}element-citation")]
            citation = next((c for c in found if c is not None), None)
            if citation is not None:
                refs.append(f"<li>{html.escape(' '.join(' '.join(citation.itertext()).split()))}</li>")
        return f"<h2>References</h2><ol class='refs'>{''.join(refs)}</ol>" if refs else ""


def render(jats: Path, layout: str) -> str:
    return _Renderer(etree.parse(str(jats)).getroot(), layout).page()


def print_pdf(page: str, out: Path, chromium: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "article.html"
        source.write_text(page, encoding="utf-8")
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                        f"--user-data-dir={tmp}/profile", f"--print-to-pdf={out}", source.as_uri()],
                       check=True, capture_output=True, timeout=120)


def stem(jats: Path) -> str:
    match = re.search(r"PMC\d+", jats.name)
    return match.group(0) if match else jats.stem


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("jats", type=Path, nargs="*", default=DEFAULT_JATS)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--layouts", nargs="*", default=list(LAYOUTS))
    args = parser.parse_args()
    if not args.jats:
        parser.error(f"no JATS given and none in {FIXTURES / 'europepmc'}")
    for target in render_all(args.jats, args.out, args.layouts, args.chromium):
        print(f"{target.relative_to(REPO) if target.is_relative_to(REPO) else target}: {target.stat().st_size / 1024:.0f} kB",
              file=sys.stderr)


def render_all(jats_paths: list[Path], out: Path, layouts: list[str], chromium: str) -> list[Path]:
    """Each JATS copied to ``out/<stem>.xml`` and printed as ``out/<stem>__<layout>.pdf``; the PDFs written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for jats in jats_paths:
        shutil.copyfile(jats, out / f"{stem(jats)}.xml")
        for layout in layouts:
            target = out / f"{stem(jats)}__{layout}.pdf"
            print_pdf(render(jats, layout), target, chromium)
            written.append(target)
    return written


if __name__ == "__main__":
    main()
