"""The tests' one Retriever factory: loopback worlds that tests read for rows, not pace (no configured gap, no
retry, no bar, no log lines), each test adding only what it is about."""

from __future__ import annotations

from paperfetch import Retriever

EMAIL = "tester@uni.example"
FAST = {"network_retry_base_s": 0.01, "rate_limit_min_s": 0.0, "rate_limit_max_s": 0.0}


def retriever(out_dir, endpoints=None, **kwargs) -> Retriever:  # noqa: ANN001
    """``Retriever`` at *out_dir* with *endpoints*, quiet, *kwargs* on top (``http_options`` merged over FAST;
    ``email`` EMAIL, ``max_retries`` 0, ``progress`` False and ``verbosity`` 0 unless given)."""
    options = {**FAST, **kwargs.pop("http_options", {})}
    for name, value in (("email", EMAIL), ("max_retries", 0), ("progress", False), ("verbosity", 0)):
        kwargs.setdefault(name, value)
    return Retriever(out_dir=out_dir, endpoints=endpoints, http_options=options, **kwargs)
