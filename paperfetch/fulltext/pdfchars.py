"""PDFium's characters → positioned lines: words split by the glyphs' gaps, super/subscripts kept inline, font runs.

PDFium's own line breaks split a line at every raised or lowered glyph (``m`` | ``2``) and its text runs break
apart on Type-3 fonts, so the lines are built here from the characters: a glyph joins the line when its middle
lies in the line's band and it starts right of the last glyph (or inside it: a ligature's second letter), within
a gap narrower than a column gutter. A space goes where the text has one (PDFium's generated spaces included) or
where the gap passes 0.15 em (0.06 em where the font changes); a smaller raised or lowered glyph takes no space, so ``10`` +
``−3`` reads ``10−3``.
"""

from __future__ import annotations

import ctypes
import math
import time
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from paperfetch.fulltext.base import FullTextError

__all__ = ["PDFIUM_SECONDS", "pdfium_char_lines"]

#: The wall-clock budget of one PDF's text layer: a page that PDFium is slow on (Type-3 fonts) stops the reading.
PDFIUM_SECONDS = 60.0

# PDFium marks a hyphen that ends a line as U+0002 (U+FFFE in some builds): the "-" printed there.
_HYPHEN_MARKS = {0x02: "-", 0xFFFE: "-"}


@dataclass
class _Line:
    page: int
    left: float
    bottom: float
    top: float
    right: float
    height: float
    last_left: float = 0.0
    parts: list[str] = field(default_factory=list)
    fonts: list[str] = field(default_factory=list)
    sizes: Counter[float] = field(default_factory=Counter)

    def takes(self, left: float, bottom: float, top: float) -> bool:
        middle = (bottom + top) / 2
        slack = 0.25 * self.height
        return (self.bottom - slack <= middle <= self.top + slack
                and left >= min(self.right - 0.4 * self.height, self.last_left) - 0.1 * self.height
                and left - self.right < 1.6 * self.height)


def pdfium_char_lines(pdf: bytes, max_pages: int | None, seconds: float = PDFIUM_SECONDS) -> Iterator[dict[str, Any]]:
    """The lines of *pdf*, read glyph by glyph by PDFium, as the fields of a
    :class:`~paperfetch.fulltext.pdflines.TextLine` (``page``, ``x``, ``y``, ``size``, ``text``, ``right``, ``runs``)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    started = time.monotonic()
    document = pdfium.PdfDocument(pdf)
    try:
        for number in range(len(document)):
            if max_pages is not None and number >= max_pages:
                break
            if time.monotonic() - started > seconds:
                raise FullTextError(f"the PDF's text layer took over {seconds:.0f} s to read (stopped at page {number + 1})")
            page = document[number]
            textpage = page.get_textpage()
            try:
                for line in _page_lines(raw, textpage.raw, number):
                    yield _fields(line)
            finally:
                textpage.close()
                page.close()
    finally:
        document.close()


def _page_lines(raw: Any, handle: Any, number: int) -> Iterator[_Line]:  # noqa: ANN401 - ctypes handles
    rect = raw.FS_RECTF()
    matrix = raw.FS_MATRIX()
    buffer = ctypes.create_string_buffer(128)
    flags = ctypes.c_int()
    line: _Line | None = None
    space = False
    high = ""
    for k in range(raw.FPDFText_CountChars(handle)):
        code = raw.FPDFText_GetUnicode(handle, k)
        if 0xD800 <= code < 0xDC00:  # PDFium gives a character past U+FFFF as two UTF-16 halves
            high = chr(code)
            continue
        char = _HYPHEN_MARKS.get(code) or chr(code)
        if high:
            char, high = (high + char).encode("utf-16", "surrogatepass").decode("utf-16", "replace"), ""
        if char.isspace() or (unicodedata.category(char[0]) in ("Cc", "Cf", "Co", "Cn", "Cs") and code not in _HYPHEN_MARKS):
            space = space or char == " "
            continue
        # the loose box: the font's ascent to descent, the glyph's origin to its advance (a ligature's covers both)
        raw.FPDFText_GetLooseCharBox(handle, k, ctypes.byref(rect))
        left, right, bottom, top = _upright(rect, raw.FPDFText_GetCharAngle(handle, k))
        height = top - bottom
        if height <= 0:
            continue
        raw.FPDFText_GetFontInfo(handle, k, buffer, len(buffer), ctypes.byref(flags))
        font = buffer.value.decode("latin-1", "replace")
        # the font size as printed: the nominal size scaled by the text matrix (often 1 × a matrix of 10)
        raw.FPDFText_GetMatrix(handle, k, ctypes.byref(matrix))
        size = round(raw.FPDFText_GetFontSize(handle, k) * math.hypot(matrix.c, matrix.d), 1)
        if line is not None and line.takes(left, bottom, top):
            gap = left - line.right
            em = size if size >= 2 else height  # a Type-3 font's size lives in its own matrix
            largest = max(line.sizes) if size >= 2 and line.sizes else 0.0
            small = size < 0.85 * largest if largest >= 2 else height < 0.85 * line.height
            # a change of font (into maths, out of italics) takes a space at a smaller gap than within a word
            least = 0.06 if line.fonts and font != line.fonts[-1] else 0.15
            if (space or gap > least * em) and not (small and gap < 0.3 * height):
                line.parts.append(" ")
                line.fonts.append(font)
            if height > line.height:
                line.height, line.bottom, line.top = height, bottom, top
        else:
            if line is not None:
                yield line
            line = _Line(page=number, left=left, bottom=bottom, top=top, right=right, height=height, last_left=left)
        line.sizes[size] += 1
        line.parts.append(char)
        line.fonts.append(font)
        line.right = max(line.right, right)
        line.last_left = left
        space = False
    if line is not None:
        yield line


def _upright(rect: Any, angle: float) -> tuple[float, float, float, float]:  # noqa: ANN401 - an FS_RECTF
    """The glyph's box (left, right, bottom, top) in its own reading frame: text set turned a quarter, half or
    three quarters round (a landscape page, a rotated stamp) reads left to right there like any other line."""
    turns = round(angle / (math.pi / 2)) % 4 if angle >= 0 else 0
    xs, ys = (rect.left, rect.right), (rect.bottom, rect.top)
    if turns == 0:
        return min(xs), max(xs), min(ys), max(ys)
    cos, sin = ((1, 0), (0, 1), (-1, 0), (0, -1))[turns]
    corners = [(x * cos + y * sin, -x * sin + y * cos) for x in xs for y in ys]
    return (min(c[0] for c in corners), max(c[0] for c in corners),
            min(c[1] for c in corners), max(c[1] for c in corners))


def _fields(line: _Line) -> dict[str, Any]:
    runs: list[tuple[str, str]] = []
    for char, font in zip(line.parts, line.fonts):
        if runs and (runs[-1][0] == font or char == " "):
            runs[-1] = (runs[-1][0], runs[-1][1] + char)
        else:
            runs.append((font, char))
    size = line.sizes.most_common(1)[0][0] if line.sizes else 0.0
    size = size if size >= 2 else line.height  # a Type-3 font's size lives in its own matrix: the glyphs' height
    return {"page": line.page, "x": line.left, "y": line.bottom, "size": size, "text": "".join(line.parts),
            "right": line.right, "runs": tuple(runs)}
