"""Every table model JATS allows gives its cells: XHTML (``tr``/``td``/``th`` with ``rowspan``/``colspan``) and the
OASIS exchange model (``tgroup``/``row``/``entry`` with ``namest``/``nameend``/``morerows``, as Copernicus publishes).

Each ``<table-wrap>`` of the real JATS articles in shared/fixtures/real/articles/jats is checked against a count
made here independently with the standard library's ElementTree: rows and columns from the markup, spans expanded
over a set of occupied places, header rows those of ``<thead>`` (else the leading all-``<th>`` rows)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from paperfetch.fulltext import parse_jats
from paperfetch.fulltext.tables import pipe_table

OASIS = "http://docs.oasis-open.org/ns/oasis-exchange/table"


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _parse(path: Path) -> ET.Element:
    return ET.fromstring(path.read_bytes())


def _rows(table: ET.Element) -> list[tuple[bool, ET.Element]]:
    """(in ``<thead>``, row) for every ``tr``/``row`` of *table*, walking groups and OASIS ``tgroup``s."""
    found: list[tuple[bool, ET.Element]] = []

    def walk(element: ET.Element, head: bool) -> None:
        for child in element:
            name = _local(child.tag)
            if name in ("tr", "row"):
                found.append((head, child))
            elif name in ("thead", "tbody", "tfoot", "tgroup"):
                walk(child, head or name == "thead")
    walk(table, False)
    return found


def _column_number(name: str | None) -> int | None:
    """0-based column of a Copernicus column name ``col3``; None for another name (the next free column)."""
    return int(name[3:]) - 1 if name and name.startswith("col") else None


def _oasis_columns(row: ET.Element) -> list[tuple[int | None, int, int]]:
    """(first column or None, columns, rows) of each entry, by the colspecs of the row's group: ``colN`` names."""
    out = []
    for entry in row:
        first = entry.get("namest") or entry.get("colname")
        last = entry.get("nameend") or first
        start, end = _column_number(first), _column_number(last)
        out.append((start, (end - start + 1) if start is not None and end is not None else 1,
                    int(entry.get("morerows") or 0) + 1))
    return out


def expected_shape(table: ET.Element) -> tuple[int, int, int]:
    """(header rows, body rows, columns) of *table* from its markup alone, every span expanded."""
    rows = _rows(table)
    taken: set[tuple[int, int]] = set()
    for r, (_, row) in enumerate(rows):
        if _local(row.tag) == "row":
            placed = _oasis_columns(row)
        else:
            placed = [(None, int(c.get("colspan") or 1), int(c.get("rowspan") or 1)) for c in row
                      if _local(c.tag) in ("td", "th")]
        c = 0
        for start, width, height in placed:
            c = start if start is not None else c
            while (r, c) in taken:
                c += 1
            taken |= {(r + dr, c + dc) for dr in range(min(height, len(rows) - r)) for dc in range(width)}
            c += width
    width = max((c + 1 for _, c in taken), default=0)
    if any(head for head, _ in rows):
        head = sum(head for head, _ in rows)
    else:
        head = 0
        while head < len(rows) and len(rows[head][1]) and all(_local(c.tag) == "th" for c in rows[head][1]):
            head += 1
    return head, len(rows) - head, width


def _table_wraps(root: ET.Element) -> list[ET.Element]:
    """The ``<table-wrap>``s in document order, leaving out those of a ``<sub-article>``."""
    out: list[ET.Element] = []

    def walk(element: ET.Element) -> None:
        for child in element:
            if _local(child.tag) == "sub-article":
                continue
            if _local(child.tag) == "table-wrap":
                out.append(child)
            walk(child)
    walk(root)
    return out


def test_every_real_table_wrap_gives_a_grid_of_the_shape_its_markup_has(real_fixtures):
    checked = oasis = cells = 0
    for path in sorted(p for p in (real_fixtures / "articles" / "jats").rglob("*") if p.suffix in (".xml", ".nxml")):
        root = _parse(path)
        if _local(root.tag) != "article":
            root = next(e for e in root.iter() if _local(e.tag) == "article")
        wraps = _table_wraps(root)
        tables = parse_jats(path.read_bytes()).tables
        assert len(tables) == len(wraps), path.name
        for table, wrap in zip(tables, wraps):
            grid = next((e for e in wrap.iter() if _local(e.tag) == "table"), None)
            head, body, width = expected_shape(grid) if grid is not None else (0, 0, 0)
            assert (len(table.rows), len(table.columns) if head else 0) == (body, width if head else 0), (
                path.name, table.table_id)
            assert all(len(row) == width for row in table.rows), (path.name, table.table_id)
            if body and head:
                assert pipe_table(table).count("\n") == body + 1
            oasis += grid is not None and grid.tag == f"{{{OASIS}}}table"
            cells += body * width
            checked += 1
    assert checked == 175 and oasis == 3 and cells > 5000


SYNTHETIC_OASIS = f"""<article xmlns:oasis="{OASIS}"><body><sec><title>S</title><p>Text.</p>
<table-wrap id="t1"><label>Table 1</label><caption><p>OASIS spans.</p></caption>
<oasis:table><oasis:tgroup cols="4">
<oasis:colspec colnum="1" colname="a"/><oasis:colspec colnum="2" colname="b"/>
<oasis:colspec colname="c"/><oasis:colspec colname="d"/>
<oasis:spanspec spanname="cd" namest="c" nameend="d"/>
<oasis:thead>
<oasis:row><oasis:entry morerows="1">Site</oasis:entry><oasis:entry namest="b" nameend="d">Dose</oasis:entry></oasis:row>
<oasis:row><oasis:entry colname="b">low</oasis:entry><oasis:entry>mid</oasis:entry><oasis:entry>high</oasis:entry>
</oasis:row></oasis:thead>
<oasis:tbody>
<oasis:row><oasis:entry morerows="1">North</oasis:entry><oasis:entry>1</oasis:entry><oasis:entry spanname="cd">2</oasis:entry>
</oasis:row>
<oasis:row><oasis:entry colname="c">3</oasis:entry><oasis:entry>4</oasis:entry></oasis:row>
<oasis:row><oasis:entry colname="a">South</oasis:entry><oasis:entry colname="d">5</oasis:entry></oasis:row>
</oasis:tbody></oasis:tgroup></oasis:table></table-wrap></sec></body></article>"""


def test_an_oasis_table_with_named_columns_spans_and_morerows_gives_the_exact_grid():
    """SYNTHETIC: colspec by number and by order, a spanspec, namest/nameend, morerows in head and body, an entry
    placed by colname past an empty column."""
    (table,) = parse_jats(SYNTHETIC_OASIS.encode()).tables
    assert table.columns == ("Site", "Dose / low", "Dose / mid", "Dose / high")
    assert table.rows == (("North", "1", "2", "2"), ("North", "", "3", "4"), ("South", "", "", "5"))
    assert pipe_table(table).splitlines()[2:] == ["| North | 1 | 2 | 2 |", "| North |  | 3 | 4 |", "| South |  |  | 5 |"]
    shape = expected_shape(ET.fromstring(SYNTHETIC_OASIS).find(f".//{{{OASIS}}}table"))
    assert shape[0] == 2  # the oracle reads the header rows as the product does


@pytest.mark.parametrize("markup", ["<table><tr><td>x</td></tr></table>",
                                    f'<oasis:table xmlns:oasis="{OASIS}"><oasis:tgroup cols="1"><oasis:tbody>'
                                    "<oasis:row><oasis:entry>x</oasis:entry></oasis:row></oasis:tbody>"
                                    "</oasis:tgroup></oasis:table>"])
def test_either_table_model_gives_its_cell(markup):
    """SYNTHETIC: the same one-cell table in XHTML and in OASIS."""
    (table,) = parse_jats(f"<article><body><table-wrap>{markup}</table-wrap></body></article>".encode()).tables
    assert table.rows == (("x",),)
