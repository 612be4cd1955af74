"""The fixed schema of the report files (``--report``, ``--outcomes``): one Arrow type a column, whatever a run
wrote. JSON Lines cannot carry a type where every value is null (a file whose ``authors`` or ``reason`` is
empty everywhere reads as ``null``), so files of two runs read with this schema concatenate with the same types;
Parquet is written with the same list types (docs/cli.md, "Reports").
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

__all__ = ["LIST_TYPES", "read_report", "report_schema"]

#: The Arrow type of each list column the frames carry (the authors' records, a paragraph's citations, figures and
#: tables, a chunk's paragraphs): fixed, so a report whose lists are all empty has the same schema as one with values.
_AUTHOR = {"family": "string", "given": "string", "literal": "string"}
LIST_TYPES: Mapping[str, Any] = {"authors": _AUTHOR, "citing_authors": _AUTHOR, "citations": "string",
                                 "citation_offsets": "int64", "figures": "string", "tables": "string",
                                 "paragraph_ids": "string"}
#: The Arrow type of a frame's pandas dtype (a category, an input as given, a cell of text: ``string``).
_SCALARS = {"Int64": "int64", "float64": "float64", "Float64": "float64", "boolean": "bool"}


def _arrow(name: str, dtype: str) -> pa.DataType:
    import pyarrow as pa

    item = LIST_TYPES.get(name)
    if isinstance(item, Mapping):
        return pa.list_(pa.struct([(field, pa.type_for_alias(kind)) for field, kind in item.items()]))
    if item is not None:
        return pa.list_(pa.type_for_alias(item))
    return pa.type_for_alias(_SCALARS.get(dtype, "string"))


def _dtypes() -> dict[str, str]:
    """Every column of the library's frames (outcomes, paragraphs, references, tables, figures, chunks, search
    hits and links) and its pandas dtype's name."""
    from paperfetch.fulltext.chunks import CHUNK_DTYPES
    from paperfetch.fulltext.frame import FIGURE_DTYPES, PARAGRAPH_DTYPES, REFERENCE_DTYPES, TABLE_DTYPES
    from paperfetch.outcomes import DTYPES
    from paperfetch.research import HIT_DTYPES, LINK_DTYPES

    known: dict[str, str] = {}
    for dtypes in (DTYPES, PARAGRAPH_DTYPES, REFERENCE_DTYPES, TABLE_DTYPES, FIGURE_DTYPES, CHUNK_DTYPES, HIT_DTYPES,
                   LINK_DTYPES):
        for name, dtype in dtypes.items():
            known.setdefault(name, dtype if isinstance(dtype, str) else "string")
    return known


def report_schema(columns: Iterable[str]) -> pa.Schema:
    """The Arrow schema of a report with *columns*: each column of the library's frames by its type (lists of
    text, of numbers, of author structs; ``Int64`` as int64; ``boolean`` as bool), any other as text."""
    import pyarrow as pa

    known = _dtypes()
    return pa.schema([(name, _arrow(name, known.get(name, "string"))) for name in columns])


def read_report(path: str | Path) -> pd.DataFrame:
    """A ``.jsonl`` or ``.parquet`` report as a frame typed by :func:`report_schema` (text as ``string``,
    counts as ``Int64``, lists as lists): reports of two runs concatenate with the same dtypes (needs pyarrow)."""
    import json

    import pandas as pd
    import pyarrow as pa
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    path = Path(path)
    if path.suffix.lower() == ".parquet":
        table = pq.read_table(path)
        table = table.cast(report_schema(table.column_names))
    else:
        with path.open(encoding="utf-8") as lines:
            first = next((line for line in lines if line.strip()), "{}")
        schema = report_schema(json.loads(first))
        table = pj.read_json(path, parse_options=pj.ParseOptions(explicit_schema=schema)) if len(schema) else pa.table({})
    kinds = {pa.string(): pd.StringDtype(), pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    frame = table.to_pandas(types_mapper=kinds.get)
    for name in table.column_names:
        if pa.types.is_list(table.schema.field(name).type):  # lists as lists (None: unknown), not NumPy arrays
            frame[name] = pd.Series(table.column(name).to_pylist(), index=frame.index, dtype=object)
    return frame
