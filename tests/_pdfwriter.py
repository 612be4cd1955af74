"""A minimal PDF writer for tests and benchmarks: pages of text lines set in the standard Helvetica fonts.

No dependency: the file is written by hand (objects, a content stream of BT/Tf/Td/Tj/ET operators per line, the
xref table with exact offsets), so a test knows exactly which words stand where on which page.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Line", "layout_article", "wrap_words", "write_pdf"]

PAGE_WIDTH = 612
PAGE_HEIGHT = 792


@dataclass(frozen=True)
class Line:
    """One line of text at (x, y) from the bottom-left corner, in points; ``bold`` sets Helvetica-Bold."""

    x: float
    y: float
    text: str
    size: float = 10.0
    bold: bool = False


def _escape(text: str) -> bytes:
    raw = text.encode("cp1252")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def write_pdf(pages: list[list[Line]]) -> bytes:
    """The bytes of a PDF whose pages hold *pages*' lines (WinAnsi text; no compression)."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below, once the page tree's number is known
    pages_obj = add(b"")
    regular = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    bold = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
    kids: list[int] = []
    for lines in pages:
        ops = []
        for line in lines:
            font = b"/F2" if line.bold else b"/F1"
            ops.append(b"BT %s %g Tf %g %g Td (%s) Tj ET" % (font, line.size, line.x, line.y, _escape(line.text)))
        stream = b"\n".join(ops)
        content = add(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
        kids.append(add(
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R /F2 %d 0 R >> >> >>"
            % (pages_obj, PAGE_WIDTH, PAGE_HEIGHT, content, regular, bold)
        ))
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    objects[pages_obj - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, catalog, xref)
    return bytes(out)


def wrap_words(text: str, width: int) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


def layout_article(blocks: list[tuple[str, str]], *, width: int = 90, leading: float = 12.0, indent: bool = False,
                   gap: float = 8.0, top: float = 740.0, bottom: float = 72.0, footer: str | None = None) -> list[list[Line]]:
    """Pages for *blocks*: ``("title"|"heading"|"para", text)``, paragraphs wrapped at *width* characters.

    Paragraphs are set apart by *gap* points (and, with *indent*, by a first-line indent); a paragraph runs on
    to the next page when it does not fit; *footer* (``{page}`` is replaced) is set at the foot of every page.
    """
    pages: list[list[Line]] = [[]]
    y = top  # the first page starts at *top*; the following ones at the usual 740

    def new_page() -> None:
        nonlocal y
        pages.append([])
        y = 740.0

    for kind, text in blocks:
        if kind == "title":
            pages[-1].append(Line(72, y, text, size=16, bold=True))
            y -= 16 + gap
        elif kind == "heading":
            if y - 2 * leading < bottom:
                new_page()
            y -= gap
            pages[-1].append(Line(72, y, text, size=11, bold=True))
            y -= leading + gap / 2
        else:
            for i, line in enumerate(wrap_words(text, width)):
                if y < bottom:
                    new_page()
                x = 72 + (18 if indent and i == 0 else 0)
                pages[-1].append(Line(x, y, line))
                y -= leading
            y -= 0 if indent else gap
    if footer:
        for number, page in enumerate(pages, start=1):
            page.append(Line(290, 40, footer.replace("{page}", str(number)), size=8))
    return pages
