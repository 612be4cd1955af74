"""The outcomes DataFrame's one schema, its status groups and how an exception ends an item (docs/outcomes.md)."""

from __future__ import annotations

from enum import Enum
from typing import Any, Iterable, Mapping

import pandas as pd

from paperfetch.cells import is_missing
from paperfetch.errors import (
    DisallowedByRobots,
    HostSuppressed,
    InvalidPDF,
    InvalidURL,
    NetworkError,
    RateLimited,
    RefusedRedirect,
    StateStoreError,
    TruncatedDownload,
    WriteError,
    WrongArticle,
)

__all__ = ["BLOCKED_STATUSES", "COLUMNS", "DTYPES", "FINAL_HTTP_STATUSES", "FINAL_STATUSES", "FINISHED_WELL_STATUSES",
           "NOTABLE_STATUSES", "STATUS_FOR_ERROR", "Status", "is_final", "outcomes_frame", "retried_by_rerun",
           "status_for", "typed_frame"]


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
    WRITE_ERROR = "write_error"                    #: the PDF could not be written to out_dir (full disk, read-only)
    STOPPED = "stopped"                            #: the batch was stopped before this item was finished
    REFUSED_URL = "refused_url"                    #: the candidate URL cannot be requested (too long, not http(s) …)
    RETRACTED = "retracted"                        #: a source calls the paper retracted, and skip_retracted is on

    @property
    def final(self) -> bool:
        """A re-run does not ask again: the answer describes the work, not this moment."""
        return self.value in FINAL_STATUSES


#: Statuses whose item has a valid PDF on disk (the status values, so frames and ledger rows compare directly).
FINISHED_WELL_STATUSES: frozenset[str] = frozenset({Status.DOWNLOADED.value, Status.ALREADY_DOWNLOADED.value})
#: Final answers: a re-run does not retry them unless forced.
FINAL_STATUSES: frozenset[str] = frozenset({Status.NOT_FOUND.value, Status.NO_OPEN_COPY.value, Status.INVALID_IDENTIFIER.value,
                                           Status.RETRACTED.value})
#: HTTP answers that describe the URL, not the moment: an ``http_error`` with one of them is final too.
FINAL_HTTP_STATUSES: frozenset[int] = frozenset({404, 410, 451})
#: Statuses of the moment, not the paper: a re-run meeting one keeps the earlier status, this as the reason.
BLOCKED_STATUSES: frozenset[str] = frozenset({"host_held", "host_suppressed", "stopped"})


def is_final(status: str, http_status: Any = None) -> bool:
    """A re-run does not ask again: a final status, or an ``http_error`` with a final HTTP answer."""
    if status in FINAL_STATUSES:
        return True
    try:
        code = None if is_missing(http_status) else int(http_status)
    except (TypeError, ValueError):
        code = None
    return status == Status.HTTP_ERROR.value and code in FINAL_HTTP_STATUSES


def retried_by_rerun(status: str, http_status: Any = None) -> bool:
    """What a re-run of the same call asks again (``--failed`` lists exactly these): not finished well, not final."""
    return status not in FINISHED_WELL_STATUSES and not is_final(status, http_status)


#: Worth a line in the dashboard's notable events: a body that was not the paper.
NOTABLE_STATUSES: frozenset[str] = frozenset({Status.INVALID_PDF.value, Status.WRONG_ARTICLE.value})

#: How an exception ends an item, first match wins (then ``status_code == 403``: the host was suppressed).
STATUS_FOR_ERROR: tuple[tuple[type[BaseException], Status], ...] = (
    (WriteError, Status.WRITE_ERROR),  # before everything: the machine failed, not the service
    (WrongArticle, Status.WRONG_ARTICLE),
    (DisallowedByRobots, Status.DISALLOWED_BY_ROBOTS),
    (HostSuppressed, Status.HOST_SUPPRESSED),
    (RateLimited, Status.HOST_HELD),
    (InvalidPDF, Status.INVALID_PDF),
    (NetworkError, Status.NETWORK_ERROR),
    (StateStoreError, Status.NETWORK_ERROR),  # the host-state store (Redis) failed: retryable, its error in the row
    (TruncatedDownload, Status.NETWORK_ERROR),
    (InvalidURL, Status.REFUSED_URL),  # the client's own URL checks (scheme, host) refused the candidate
    (RefusedRedirect, Status.HTTP_ERROR),  # the row's error says which redirect and why (allow_private_redirects)
)


def status_for(exc: BaseException) -> Status:
    """The outcome status an exception gives an item (:data:`STATUS_FOR_ERROR`)."""
    for kind, status in STATUS_FOR_ERROR:
        if isinstance(exc, kind):
            return status
    if getattr(exc, "status_code", None) == 403:
        return Status.HOST_SUPPRESSED
    return Status.HTTP_ERROR


#: The outcome columns and their dtypes, in order; docs/outcomes.md ("Schema") says what each holds.
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
    "authors": "object",
    "oa_status": "string",
    "license": "string",
    "title_match": "float64",
    "reason": "string",
    "error": "string",
    "offered_by": "string",  # the sources asked that offered a copy, comma-joined (paperfetch.report.yield_by_source)
    "text_source": "string",
    "text_path": "string",
    "copies": "Int64",
    "pmc_version": "Int64",
    "is_manuscript": "boolean",
    "retracted": "boolean",
    "updates": "string",  # the notices: "retraction 10.1234/notice 2024-05-01 (retraction-watch)", "; "-joined
    "is_notice": "boolean",  # the input is itself a retraction/correction notice
    "version": "string",  # of the copy downloaded: submitted / accepted / published
    "preprint_of": "string",  # a preprint's journal-version DOI
    "preprint": "string",  # a journal version's preprint DOI
    "same_work_as": "object",  # the input whose file this row shares (the same work given twice); inputs are as given
}

COLUMNS: tuple[str, ...] = tuple(DTYPES)


def outcomes_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Build the outcomes frame from row dicts (missing keys are nulls; extra keys are an error)."""
    rows = list(rows)
    for row in rows:
        extra = set(row) - set(COLUMNS)
        if extra:
            raise KeyError(f"not outcome columns: {sorted(extra)}")
    return typed_frame(rows, DTYPES)


def typed_frame(rows: Iterable[Mapping[str, Any]], dtypes: Mapping[str, Any]) -> pd.DataFrame:
    """A frame of *rows* (missing keys are nulls), each column built as objects and then given its dtype (None: as
    pandas infers it): an ``object`` column keeps an input as given (pandas 3's Arrow text cannot hold a lone
    surrogate)."""
    rows = list(rows)
    frame = pd.DataFrame(index=pd.RangeIndex(len(rows)))
    for column, dtype in dtypes.items():
        values = pd.Series([row.get(column) for row in rows], index=frame.index, dtype=object)
        frame[column] = (values.infer_objects() if dtype is None else values.astype(dtype) if dtype != "float64"
                         else pd.to_numeric(values, errors="coerce").astype("float64"))
    return frame
