"""JATS ``<table-wrap>`` → :class:`~paperfetch.fulltext.base.Table`: the cells as a grid, spans expanded, and a
Markdown pipe table of it (docs/fulltext.md, "Tables and figures")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
from lxml import etree

from paperfetch.fulltext.base import SECTION_SEPARATOR, Table
from paperfetch.fulltext.xmltext import DROPPED, flatten, local_name, section_path, xrefs

__all__ = ["HEADER_SEPARATOR", "MAX_CELLS", "MAX_SPAN", "parse_table", "pipe_table", "table_frame"]

#: Joins the texts of a column's header cells when a table has more than one header row: ``Group A / n``.
HEADER_SEPARATOR = " / "
#: A ``rowspan``/``colspan`` above this is read as this (a hostile body cannot ask for a grid of any size).
MAX_SPAN = 1000
#: A table whose grid would hold more cells than this keeps its caption and gets an empty grid, as an image does.
MAX_CELLS = 1_000_000

_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_ROW_GROUPS = ("thead", "tbody", "tfoot")
_NOTHING_DROPPED: frozenset[str] = frozenset()
_FOOTNOTES_KEPT = DROPPED - {"fn", "table-wrap-foot"}


def parse_table(wrap: etree._Element, number: int, refs: Sequence[str] = (),
                order: Mapping[str, int] | None = None) -> Table:
    """The table of one ``<table-wrap>``; *number* (1-based, in document order) names one without an ``id``."""
    label = _first_child(wrap, "label")
    caption = _first_child(wrap, "caption")
    foot = list(wrap.iter("{*}table-wrap-foot"))
    table = next(wrap.iter("{*}table"), None)
    try:
        columns, rows = _grid(table) if table is not None else ((), ())
    except _TooLarge:
        columns, rows = (), ()
    links = xrefs(wrap, refs, dropped=_NOTHING_DROPPED, order=order)
    return Table(
        table_id=wrap.get("id") or f"t{number}",
        label=flatten(label) if label is not None else "",
        caption=flatten(caption) if caption is not None else "",
        footnotes=" ".join(text for el in foot if (text := flatten(el, dropped=_FOOTNOTES_KEPT))),
        section=section_path(wrap, SECTION_SEPARATOR),
        columns=columns, rows=rows, **links,
    )


class _TooLarge(Exception):
    """A grid over :data:`MAX_CELLS`."""


def _first_child(element: etree._Element, name: str) -> etree._Element | None:
    return next((child for child in element if local_name(child.tag) == name), None)


def _span(cell: etree._Element, name: str) -> int:
    try:
        return max(1, min(int(cell.get(name) or 1), MAX_SPAN))
    except ValueError:
        return 1


def _table_rows(table: etree._Element) -> list[tuple[bool, etree._Element]]:
    """Every ``<tr>`` in order, each with whether it is a header row (in ``<thead>``)."""
    rows: list[tuple[bool, etree._Element]] = []
    for child in table:
        name = local_name(child.tag)
        if name == "tr":
            rows.append((False, child))
        elif name in _ROW_GROUPS:
            rows += [(name == "thead", tr) for tr in child if local_name(tr.tag) == "tr"]
    return rows


def _grid(table: etree._Element) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """(column names, body rows) of a ``<table>``: every spanned cell's text in each grid place it covers.

    Header rows are the ``<thead>`` rows, else the leading rows made only of ``<th>`` cells."""
    rows = _table_rows(table)
    grid: list[list[str | None]] = [[] for _ in rows]
    header_flags: list[bool] = []
    cells_made = 0
    for r, (in_head, tr) in enumerate(rows):
        cells = [cell for cell in tr if local_name(cell.tag) in ("td", "th")]
        cells_made += _place_row(grid, r, cells, cells_made)
        header_flags.append(in_head or (bool(cells) and all(local_name(cell.tag) == "th" for cell in cells)))
    width = max((len(line) for line in grid), default=0)
    if width * len(grid) > MAX_CELLS:  # short rows are padded to the widest
        raise _TooLarge
    texts = [tuple("" if value is None else value for value in line) + ("",) * (width - len(line)) for line in grid]
    if any(in_head for in_head, _ in rows):
        head = sum(1 for in_head, _ in rows if in_head)
    else:
        head = next((i for i, flag in enumerate(header_flags) if not flag), len(header_flags))
    return _column_names(texts[:head], width), tuple(texts[head:])


def _place_row(grid: list[list[str | None]], r: int, cells: list[etree._Element], made: int) -> int:
    """Put row *r*'s *cells* into *grid*, each in the places its spans cover (rows below included), left of
    which the spans from above leave free; the number of grid places filled (over :data:`MAX_CELLS` raises)."""
    line, c, filled = grid[r], 0, 0
    for cell in cells:
        while c < len(line) and line[c] is not None:
            c += 1
        rowspan, colspan = min(_span(cell, "rowspan"), len(grid) - r), _span(cell, "colspan")
        filled += rowspan * colspan
        if made + filled > MAX_CELLS:
            raise _TooLarge
        text = flatten(cell)
        for target in grid[r:r + rowspan]:
            target.extend([None] * (c + colspan - len(target)))
            target[c:c + colspan] = [text] * colspan
        c += colspan
    return filled


def _column_names(header: list[tuple[str, ...]], width: int) -> tuple[str, ...]:
    if not header:
        return ()
    names: list[str] = []
    for c in range(width):
        parts: list[str] = []
        for line in header:
            if line[c] and (not parts or parts[-1] != line[c]):
                parts.append(line[c])
        names.append(HEADER_SEPARATOR.join(parts))
    seen: dict[str, int] = {}
    unique = []
    for name in names:  # as pandas names repeated CSV headers: "n", "n.1"
        count = seen.get(name, 0)
        seen[name] = count + 1
        unique.append(name if count == 0 else f"{name}.{count}")
    return tuple(unique)


def table_frame(table: Table) -> pd.DataFrame:
    """The cells of *table* as a DataFrame of strings: the header as column names (0, 1, … without a header)."""
    if not table.rows and not table.columns:
        return pd.DataFrame()
    columns = list(table.columns) if table.columns else None
    return pd.DataFrame([list(row) for row in table.rows], columns=columns, dtype=object)


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|")


def pipe_table(table: Table) -> str:
    """*table* as a Markdown pipe table (an empty header line when the table has none); ``""`` for no cells."""
    width = len(table.columns) or max((len(row) for row in table.rows), default=0)
    if not width:
        return ""
    header = table.columns or ("",) * width
    lines = ["| " + " | ".join(_cell(name) for name in header) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(_cell(text) for text in row) + " |" for row in table.rows]
    return "\n".join(lines)
