"""The title check on a downloaded PDF: a PDF whose own title names another paper is a ``wrong_article``."""

from __future__ import annotations

import json
from urllib.parse import unquote

import pandas as pd

from paperfetch.testing import Reply
from tests._quick import retriever

ASKED = "Profiling essential genes in human mammary cells by multiplex RNAi screening"
OTHER = "Cancer proliferation gene discovery through functional genomics"
BODY = ["Abstract. We describe a screen in cell lines and report the results of the analysis.",
        "Methods and materials are given in the supplement; the data are available on request."]


def titled_pdf(*, info_title: str | None = None, lines: list[tuple[str, float]] = ()) -> bytes:  # type: ignore[assignment]
    """A one-page PDF: *lines* as ``(text, font size)`` from the top, and a document info /Title when given."""
    def esc(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    ops, y = [], 740.0
    for text, size in lines:
        ops.append(f"BT /F1 {size:g} Tf 72 {y:g} Td ({esc(text)}) Tj ET")
        y -= size * 1.5
    stream = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    if info_title is not None:
        objects.append(f"<< /Title ({esc(info_title)}) /Producer (test) >>".encode("latin-1"))
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    info = b" /Info 6 0 R" if info_title is not None else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, info, xref)
    return bytes(out)


def _page(title: str, size: float = 18.0) -> list[tuple[str, float]]:
    return [("Journal of Cell Screens", 9.0), (title, size)] + [(line, 10.0) for line in BODY]


PDF_CASES = {
    # the document info names another paper, the first page's headline too: refused
    "10.1000/info-other": (titled_pdf(info_title=OTHER, lines=_page(OTHER)), "wrong_article"),
    # no document info; the first page's largest type is another paper's title: refused
    "10.1000/headline-other": (titled_pdf(lines=_page(OTHER)), "wrong_article"),
    # a placeholder in the info and the journal's name as the largest type: not confident, a warning only
    "10.1000/placeholder": (titled_pdf(info_title="Microsoft Word - draft3.docx",
                                       lines=[("Journal of Cell Screens", 20.0)] + [(line, 10.0) for line in BODY]),
                            "downloaded"),
    # a drop cap set larger than the headline: the headline is still found
    "10.1000/drop-cap": (titled_pdf(lines=[("T", 40.0)] + _page(OTHER)), "wrong_article"),
    # a short generic headline: not confident
    "10.1000/untitled": (titled_pdf(info_title="Untitled", lines=_page("Research Article")), "downloaded"),
    # its own title is the paper asked for (a subtitle less), though the text layer matches it poorly
    "10.1000/own-right": (titled_pdf(info_title="Profiling essential genes in human mammary cells",
                                     lines=[(line, 10.0) for line in BODY]), "downloaded"),
    # the right paper: its first page carries the title asked for
    "10.1000/right": (titled_pdf(info_title=OTHER, lines=_page(ASKED)), "downloaded"),
}


def test_judge_refuses_a_confident_own_title_of_another_paper_and_only_warns_otherwise():
    from paperfetch.titlematch import confident_title, judge, title_similarity

    text = "\n".join(BODY)
    assert judge(ASKED, text, own_titles=[(OTHER, "its document info")]).verdict == "wrong_article"
    assert judge(ASKED, text, own_titles=[("Untitled", "its document info")]).verdict == "low"
    assert judge(ASKED, text, own_titles=[("Journal of Cell Screens and Assays", "x")],
                 journal="Journal of Cell Screens and Assays").verdict == "low"
    assert judge(ASKED, text, own_titles=[("Microsoft Word - x.docx", "a"), (ASKED, "b")]).verdict == "low"
    assert judge(ASKED, ASKED, own_titles=[(OTHER, "its document info")]).verdict == "ok"
    # a stale document info beside a headline naming the paper asked for: only the warning
    assert judge(ASKED, text, own_titles=[(OTHER, "its document info"), (ASKED, "its first page")]).verdict == "low"
    assert not confident_title("Nature 2008 455:123-127") and not confident_title("PII: S0092-8674(08)01234-5")
    assert title_similarity(ASKED, "Profiling essential genes in human mammary cells") == 1.0
    for placeholder in ("Untitled", "Microsoft Word - paper.docx", "manuscript.pdf", "10.1000/xyz.123", "Layout 1",
                        "Editorial", "12345"):
        assert not confident_title(placeholder), placeholder
    assert confident_title(OTHER)


def test_a_pdf_whose_own_title_is_another_papers_is_a_wrong_article(hosts, tmp_path):
    publisher = hosts("127.0.0.37", {
        "*": lambda request: Reply(200, PDF_CASES[unquote(request.path[len("/pdf/"):-len(".pdf")])][0],
                                   {"Content-Type": "application/pdf"})})

    def unpaywall(request):  # noqa: ANN001, ANN202
        doi = unquote(request.path[len("/v2/"):]).lower()
        pdf = publisher.url(f"/pdf/{doi}.pdf")
        location = {"url_for_pdf": pdf, "url": pdf, "host_type": "publisher"}
        body = {"doi": doi, "title": ASKED, "journal_name": "Journal of Cell Screens", "is_oa": True,
                "best_oa_location": location, "oa_locations": [location]}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    service = hosts("127.0.0.38", {"*": unpaywall})
    rows = {}
    for doi in PDF_CASES:  # one item per batch: no other title of the batch to compare with
        with retriever(tmp_path, {"unpaywall": service.base_url}, sources=["unpaywall"], respect_robots_txt=False,
                       cache=False) as r:
            rows[doi] = r.download([doi]).iloc[0]
    for doi, (_, expected) in PDF_CASES.items():
        row = rows[doi]
        assert row["status"] == expected, (doi, row["status"], row["error"])
        if expected == "wrong_article":
            assert OTHER in row["error"] and "shares" in row["error"] and pd.isna(row["path"])
            assert row["title_match"] < 0.6
        elif doi != "10.1000/right":
            assert row["title_match"] < 0.6  # kept, with the low score as the warning
    assert "document info" in rows["10.1000/info-other"]["error"]
    assert "largest type" in rows["10.1000/headline-other"]["error"]
    assert len(list((tmp_path / "wrong_article").glob("*.pdf"))) == 3
