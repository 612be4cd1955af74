"""The metadata services, one module each; ``SOURCES`` and :func:`get_source` name them (docs/sources.md)."""

from __future__ import annotations

from paperfetch.errors import ConfigurationError
from paperfetch.sources.arxiv import ArxivSource
from paperfetch.sources.base import Candidate, Record, RequestSpec, Source
from paperfetch.sources.biorxiv import BiorxivSource
from paperfetch.sources.crossref import CrossrefSource
from paperfetch.sources.europepmc import EuropePMCSource
from paperfetch.sources.ncbi import NCBIEutilsSource, NCBIIdConvSource
from paperfetch.sources.openalex import OpenAlexSource
from paperfetch.sources.pmc import PMCSource
from paperfetch.sources.semanticscholar import SemanticScholarSource
from paperfetch.sources.unpaywall import UnpaywallSource

__all__ = [
    "ArxivSource", "BiorxivSource", "Candidate", "CrossrefSource", "EuropePMCSource", "NCBIEutilsSource",
    "NCBIIdConvSource", "OpenAlexSource", "PMCSource", "Record", "RequestSpec", "SOURCES", "SemanticScholarSource", "Source",
    "UnpaywallSource", "get_source"
]

SOURCES: dict[str, type[Source]] = {
    cls.name: cls
    for cls in (
        UnpaywallSource,
        OpenAlexSource,
        CrossrefSource,
        EuropePMCSource,
        NCBIIdConvSource,
        NCBIEutilsSource,
        ArxivSource,
        SemanticScholarSource,
        BiorxivSource,
        PMCSource,
    )
}


def get_source(name: str) -> type[Source]:
    """The source class registered under *name*; the error lists the valid names."""
    try:
        return SOURCES[name]
    except KeyError:
        raise ConfigurationError(f"unknown source {name!r}; choose one of: {', '.join(sorted(SOURCES))}") from None
