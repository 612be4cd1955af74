"""Issue 21, wrong answers and crashes on the item path: every input gets its true row.

A lone surrogate among plain string inputs (pandas 3 text columns cannot hold one), a batch
closed from another thread (an item never tried is never a final answer), a candidate URL the
client refuses (the row says so), the PubMed search answered from the metadata cache, and a
PDF whose own title names another paper (``wrong_article``).
"""

from __future__ import annotations

import socket

import pandas as pd

from paperfetch import Retriever
from paperfetch.outcomes import outcomes_frame
from paperfetch.redact import redact_frame

EMAIL = "tester@example.org"
FAST = {"network_retry_base_s": 0.01, "rate_limit_min_s": 0.0, "rate_limit_max_s": 0.0}
ENDPOINT_KEYS = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi_idconv", "ncbi_eutils", "arxiv", "doi")


def _closed_port() -> str:
    """A loopback address nothing listens on: every request is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def retriever(out_dir, endpoints, **kwargs) -> Retriever:  # noqa: ANN001
    options = {**FAST, **kwargs.pop("http_options", {})}
    kwargs.setdefault("max_retries", 0)
    return Retriever(email=EMAIL, out_dir=out_dir, endpoints=endpoints, progress=False, verbosity=0,
                     http_options=options, **kwargs)


# ------------------------------------------------------------------ 1. lone surrogates in a batch of strings
SURROGATE_INPUTS = ["\ud800", "PMC\ud800", "10.1000/\ud800x", "\udfff", "PMID:\ud800"]


def test_a_column_of_strings_with_a_lone_surrogate_makes_an_outcomes_frame():
    frame = redact_frame(outcomes_frame([{"input": "\ud800", "status": "invalid_identifier", "error": "x"},
                                         {"input": "10.1000/ok", "status": "not_found"}]))
    assert list(frame["input"]) == ["\ud800", "10.1000/ok"] and frame["input"].dtype == object


def test_a_batch_mixing_valid_ids_and_lone_surrogates_gives_every_input_its_row(tmp_path):
    closed = _closed_port()
    valid = [f"10.1000/v{n}" for n in range(20)] + ["PMID:31452104", "PMC3531190", "arXiv:1706.03762"]
    inputs: list[object] = []
    for n in range(300):  # strings only: pandas would infer a text column for them
        inputs.append(SURROGATE_INPUTS[n % len(SURROGATE_INPUTS)] if n % 3 else valid[n % len(valid)])
    inputs += SURROGATE_INPUTS  # duplicates of the damaged ones
    with retriever(tmp_path, {k: closed for k in ENDPOINT_KEYS}, respect_robots_txt=False, cache=False) as r:
        out = r.download(inputs)
    assert len(out) == len(inputs)
    assert list(out["input"]) == inputs
    for given, status, error in zip(inputs, out["status"], out["error"]):
        assert isinstance(given, str)
        if any(0xD800 <= ord(ch) <= 0xDFFF for ch in given):
            assert status == "invalid_identifier" and "surrogate" in error
        else:
            assert status == "network_error", (given, status, error)  # the services are closed: retryable
    assert isinstance(out, pd.DataFrame)
