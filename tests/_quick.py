"""The tests' one Retriever factory: loopback worlds that tests read for rows, not pace (no configured gap, no
retry, no bar, no log lines), each test adding only what it is about; and the services' own intervals left out
of such a world (:func:`unpaced`, :func:`unpaced_config` for the command)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from paperfetch import Retriever
from paperfetch.http.hosts import host_key

EMAIL = "tester@uni.example"
FAST = {"network_retry_base_s": 0.01, "rate_limit_min_s": 0.0, "rate_limit_max_s": 0.0}


def retriever(out_dir, endpoints=None, **kwargs) -> Retriever:  # noqa: ANN001
    """``Retriever`` at *out_dir* with *endpoints*, quiet, *kwargs* on top (``http_options`` merged over FAST;
    ``email`` EMAIL, ``max_retries`` 0, ``progress`` False and ``verbosity`` 0 unless given)."""
    options = {**FAST, **kwargs.pop("http_options", {})}
    for name, value in (("email", EMAIL), ("max_retries", 0), ("progress", False), ("verbosity", 0)):
        kwargs.setdefault(name, value)
    return Retriever(out_dir=out_dir, endpoints=endpoints, http_options=options, **kwargs)


def unpaced(endpoints: Mapping[str, str]) -> dict[str, float]:
    """``host_intervals`` that put every service of *endpoints* at no interval of its own (bioRxiv's 1 s, arXiv's
    3 s, NCBI's 0.34 s, ...): for a loopback world read for rows, not pace. A test of pacing does not use it."""
    return {host_key(url): 0.0 for url in endpoints.values()}


#: The services whose own interval is a second or more (bioRxiv 1 s, arXiv 3 s). A demo-world run leaves out only
#: theirs (:func:`slow_services`): which source offers a paper a copy first races with the other services' pace.
SLOW_SERVICES = ("arxiv", "biorxiv")


def slow_services(endpoints: Mapping[str, str]) -> dict[str, str]:
    """*endpoints* of :data:`SLOW_SERVICES` only, for :func:`unpaced` or :func:`unpaced_config`."""
    return {name: url for name, url in endpoints.items() if name in SLOW_SERVICES}


def unpaced_config(path: Path, endpoints: Mapping[str, str]) -> Path:
    """A settings file at *path* (for ``PAPERFETCH_CONFIG``) holding :func:`unpaced` of *endpoints*: the command
    reads the table from a file only (docs/cli.md)."""
    pairs = ", ".join(f'"{host}" = 0' for host in unpaced(endpoints))
    path.write_text(f"host_intervals = {{ {pairs} }}\n", encoding="utf-8")
    return path

