"""An empty input is an empty outcomes frame with every column, whatever pandas version is installed."""

from __future__ import annotations

import pandas as pd

from paperfetch.outcomes import COLUMNS, DTYPES
from paperfetch.redact import redact_frame
from tests._quick import retriever

#: No endpoint is asked: nothing kept, nothing drawn.
QUIET = {"state": "memory", "cache": False, "dashboard": False}


def test_an_empty_list_gives_an_empty_frame_with_every_column(tmp_path):
    with retriever(tmp_path / "out", **QUIET) as r:
        frame = r.download([])
    assert list(frame.columns) == list(COLUMNS) and len(frame) == 0
    assert str(frame["status"].dtype) == "category" and str(frame["doi"].dtype) == str(pd.StringDtype()) == str(DTYPES["doi"])


def test_a_frame_a_filter_left_empty_gives_an_empty_joined_frame(tmp_path):
    papers = pd.DataFrame({"doi": ["10.1000/a"], "note": ["x"]}).iloc[0:0]
    with retriever(tmp_path / "out", **QUIET) as r:
        frame = r.download_frame(papers, column="doi")
    assert len(frame) == 0 and {"doi", "note", "status"} <= set(frame.columns)


def test_redacting_an_empty_text_column_is_a_no_op():
    frame = pd.DataFrame({"error": pd.Series([], dtype="string"), "n": pd.Series([], dtype="Int64")})
    assert redact_frame(frame).shape == (0, 2)
