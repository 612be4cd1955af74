"""The outcomes DataFrame: one schema, declared once, whose columns never depend on flags.

One row per input, in input order; failures are rows. ``status`` is a
categorical with exactly the values of :class:`Status`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Iterable, Mapping

import pandas as pd

__all__ = ["COLUMNS", "DTYPES", "Status", "outcomes_frame"]


class Status(str, Enum):
    DOWNLOADED = "downloaded"                      #: a valid PDF was saved in this run
    ALREADY_DOWNLOADED = "already_downloaded"      #: the ledger had it, and the file still matches
    NO_OPEN_COPY = "no_open_copy"                  #: the work is known, but no source offers a legal copy
    NOT_FOUND = "not_found"                        #: no service knows the identifier
    INVALID_IDENTIFIER = "invalid_identifier"      #: not a DOI, PMID, PMCID or arXiv ID (or blank)
    DISALLOWED_BY_ROBOTS = "disallowed_by_robots"  #: every copy is behind a robots.txt Disallow
    HOST_SUPPRESSED = "host_suppressed"            #: the host answered 403 and is suppressed
    HOST_HELD = "host_held"                        #: the host asked for no requests until later
    INVALID_PDF = "invalid_pdf"                    #: the body was not a PDF (HTML, a bot challenge …)
    HTTP_ERROR = "http_error"                      #: an HTTP error status, or a response we cannot use
    NETWORK_ERROR = "network_error"                #: nothing arrived (timeout, connection error)
    WRONG_ARTICLE = "wrong_article"                #: a PDF whose first pages name another article of the batch


DTYPES: Mapping[str, Any] = {
    "input": "object",
    "id_type": "string",
    "doi": "string",
    "pmid": "string",
    "pmcid": "string",
    "arxiv_id": "string",
    "status": pd.CategoricalDtype([s.value for s in Status]),
    "source": "string",
    "url": "string",
    "path": "string",
    "bytes": "Int64",
    "sha256": "string",
    "http_status": "Int64",
    "attempts": "Int64",
    "waited_s": "float64",
    "elapsed_s": "float64",
    "title": "string",
    "year": "Int64",
    "journal": "string",
    "oa_status": "string",
    "license": "string",
    "title_match": "float64",
    "error": "string",
}

COLUMNS: tuple[str, ...] = tuple(DTYPES)


def outcomes_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Build the outcomes frame from row dicts (missing keys are nulls; extra keys are an error)."""
    rows = list(rows)
    for row in rows:
        extra = set(row) - set(COLUMNS)
        if extra:
            raise KeyError(f"not outcome columns: {sorted(extra)}")
    data = {column: [row.get(column) for row in rows] for column in COLUMNS}
    frame = pd.DataFrame(data, columns=list(COLUMNS))
    # the inputs as given (None stays None), whatever pandas would infer from them
    frame["input"] = pd.Series(data["input"], index=frame.index, dtype=object)
    for column, dtype in DTYPES.items():
        if column == "input":
            continue
        if dtype == "float64":
            frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
        else:
            frame[column] = frame[column].astype(dtype)
    return frame
