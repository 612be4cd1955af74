"""JATS ``<table-wrap>`` → :class:`~paperfetch.fulltext.base.Table`: the cells as a grid, spans expanded, and a
Markdown pipe table of it (docs/fulltext.md, "Tables and figures").

Both table models JATS allows are read: XHTML (``tr``/``td``/``th`` with ``rowspan``/``colspan``) and the OASIS
exchange model (``tgroup``/``row``/``entry`` placed by ``colname``/``namest``/``nameend``/``spanname`` against the
group's ``colspec``/``spanspec``, ``morerows`` below), as Copernicus publishes them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import NamedTuple

import pandas as pd
from lxml import etree

from paperfetch.fulltext.base import Table
from paperfetch.fulltext.xmltext import DROPPED, flatten, float_fields, local_name

__all__ = ["HEADER_SEPARATOR", "MAX_CELLS", "MAX_SPAN", "parse_table", "pipe_table", "table_frame"]

#: Joins the texts of a column's header cells when a table has more than one header row: ``Group A / n``.
HEADER_SEPARATOR = " / "
#: A ``rowspan``/``colspan`` above this is read as this (a hostile body cannot ask for a grid of any size).
MAX_SPAN = 1000
#: A table whose grid would hold more cells than this keeps its caption and gets an empty grid, as an image does.
MAX_CELLS = 1_000_000

_ROW_GROUPS = ("thead", "tbody", "tfoot")
_FOOTNOTES_KEPT = DROPPED - {"fn", "table-wrap-foot"}


def parse_table(wrap: etree._Element, table_id: str, refs: Sequence[str] = (),
                order: Mapping[str, int] | None = None) -> Table:
    """The table of one ``<table-wrap>``, under *table_id*."""
    foot = list(wrap.iter("{*}table-wrap-foot"))
    table = next(wrap.iter("{*}table"), None)
    try:
        columns, rows = _grid(table) if table is not None else ((), ())
    except _TooLarge:
        columns, rows = (), ()
    return Table(
        table_id=table_id,
        footnotes=" ".join(text for el in foot if (text := flatten(el, dropped=_FOOTNOTES_KEPT))),
        columns=columns, rows=rows, **float_fields(wrap, refs, order),
    )


class _TooLarge(Exception):
    """A grid over :data:`MAX_CELLS`."""


def _span(cell: etree._Element, name: str) -> int:
    try:
        return max(1, min(int(cell.get(name) or 1), MAX_SPAN))
    except ValueError:
        return 1


class _Cell(NamedTuple):
    """One cell to place: the element, its first column when the markup names it (OASIS), its rows and columns."""

    element: etree._Element
    start: int | None
    rowspan: int
    colspan: int


def _table_rows(element: etree._Element, head: bool = False, columns: dict[str, int] | None = None,
                spans: dict[str, tuple[str, str]] | None = None) -> list[tuple[bool, list[_Cell]]]:
    """Every row (``<tr>`` or OASIS ``<row>``) in order, each with whether it is a header row (in ``<thead>``)
    and its cells; an OASIS ``<tgroup>``'s rows place their cells by the group's column and span names."""
    rows: list[tuple[bool, list[_Cell]]] = []
    for child in element:
        name = local_name(child.tag)
        if name in ("tr", "row"):
            rows.append((head, _row_cells(child, columns or {}, spans or {})))
        elif name in _ROW_GROUPS:
            rows += _table_rows(child, name == "thead", columns, spans)
        elif name == "tgroup":
            rows += _table_rows(child, head, *_colspecs(child))
    return rows


def _colspecs(tgroup: etree._Element) -> tuple[dict[str, int], dict[str, tuple[str, str]]]:
    """An OASIS group's column names → 0-based column (``colnum``, else the one after the previous ``colspec``),
    and span names → (first, last) column name."""
    columns: dict[str, int] = {}
    spans: dict[str, tuple[str, str]] = {}
    last = -1
    for spec in tgroup:
        name = local_name(spec.tag)
        if name == "colspec":
            try:
                last = max(0, min(int(spec.get("colnum") or ""), MAX_SPAN) - 1)
            except ValueError:
                last += 1
            columns[spec.get("colname") or f"col{last + 1}"] = last
        elif name == "spanspec":
            spans[spec.get("spanname") or ""] = (spec.get("namest") or "", spec.get("nameend") or "")
    return columns, spans


def _row_cells(row: etree._Element, columns: dict[str, int], spans: dict[str, tuple[str, str]]) -> list[_Cell]:
    cells: list[_Cell] = []
    for cell in row:
        name = local_name(cell.tag)
        if name in ("td", "th"):
            cells.append(_Cell(cell, None, _span(cell, "rowspan"), _span(cell, "colspan")))
        elif name == "entry":
            first, last = spans.get(cell.get("spanname") or "", ("", ""))
            first = cell.get("namest") or cell.get("colname") or first
            start, end = columns.get(first), columns.get(cell.get("nameend") or last)
            width = end - start + 1 if start is not None and end is not None and end >= start else 1
            cells.append(_Cell(cell, start, _span(cell, "morerows") + 1 if cell.get("morerows") else 1,
                          min(width, MAX_SPAN)))
    return cells


def _grid(table: etree._Element) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """(column names, body rows) of a ``<table>``: every spanned cell's text in each grid place it covers.

    Header rows are the ``<thead>`` rows, else the leading rows made only of ``<th>`` cells."""
    rows = _table_rows(table)
    grid: list[list[str | None]] = [[] for _ in rows]
    header_flags: list[bool] = []
    cells_made = 0
    for r, (in_head, cells) in enumerate(rows):
        cells_made += _place_row(grid, r, cells, cells_made)
        header_flags.append(in_head or (bool(cells) and all(local_name(cell.tag) == "th" for cell, *_ in cells)))
    width = max((len(line) for line in grid), default=0)
    if width * len(grid) > MAX_CELLS:  # short rows are padded to the widest
        raise _TooLarge
    texts = [tuple("" if value is None else value for value in line) + ("",) * (width - len(line)) for line in grid]
    head = sum(in_head for in_head, _ in rows) \
        or next((i for i, flag in enumerate(header_flags) if not flag), len(header_flags))
    return _column_names(texts[:head], width), tuple(texts[head:])


def _place_row(grid: list[list[str | None]], r: int, cells: list[_Cell], made: int) -> int:
    """Put row *r*'s *cells* into *grid*, each in the places its spans cover (rows below included): at the column
    the markup names, else left of which the spans from above leave free; the number of grid places filled (over
    :data:`MAX_CELLS` raises)."""
    line, c, filled = grid[r], 0, 0
    for cell, start, rowspan, colspan in cells:
        if start is not None:
            c = start
        while c < len(line) and line[c] is not None:
            c += 1
        rowspan = min(rowspan, len(grid) - r)
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
    # a column's header texts top down, a text spanning several header rows once
    names = [HEADER_SEPARATOR.join(text for text, _ in groupby(line[c] for line in header if line[c])) for c in range(width)]
    seen: Counter[str] = Counter()
    unique = []
    for name in names:  # as pandas names repeated CSV headers: "n", "n.1"
        unique.append(f"{name}.{seen[name]}" if seen[name] else name)
        seen[name] += 1
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
