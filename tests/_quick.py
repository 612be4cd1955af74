"""A Retriever for loopback worlds that tests read for rows, not pace: no configured gap, no retry."""

from __future__ import annotations

from paperfetch import Retriever

EMAIL = "tester@example.org"
FAST = {"network_retry_base_s": 0.01, "rate_limit_min_s": 0.0, "rate_limit_max_s": 0.0}


def retriever(out_dir, endpoints, **kwargs) -> Retriever:  # noqa: ANN001
    """``Retriever`` at *out_dir* with *endpoints*, quiet, *kwargs* on top (``http_options`` merged over FAST)."""
    options = {**FAST, **kwargs.pop("http_options", {})}
    kwargs.setdefault("max_retries", 0)
    return Retriever(email=EMAIL, out_dir=out_dir, endpoints=endpoints, progress=False, verbosity=0,
                     http_options=options, **kwargs)
