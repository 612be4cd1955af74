"""The JATS endpoints as sources: Europe PMC ``fullTextXML`` and PMC ``efetch`` (docs/fulltext.md), whose URLs
are a paper's JATS copies (``paperfetch.flow.text``), and whose answers parse into articles (``articles``), never
records. A cut or malformed batch raises FullTextError as a whole.
Text parsing builds on the sources here, never the other way round.
"""

from __future__ import annotations

from paperfetch import defaults
from paperfetch.fulltext.base import Article, FullTextError
from paperfetch.fulltext.jats import split_articles
from paperfetch.ids import Identifier, IdType
from paperfetch.sources.base import RequestSpec, Source, quote_path
from paperfetch.sources.europepmc import EuropePMCSource
from paperfetch.sources.ncbi import NCBIEutilsSource

__all__ = ["EuropePMCFullTextSource", "JatsAnswer", "PMCEfetchSource", "TEXT_KEY_PREFIX"]

#: The ledger key of a paper's text is this prefix and the identifier's key (its PDF keeps the plain key).
TEXT_KEY_PREFIX = "fulltext:"

#: One article of an answer: its parsed form and its own XML (what is kept on disk).
JatsAnswer = tuple[Article, bytes]


class EuropePMCFullTextSource(Source):
    name = "europepmc_fulltext"
    default_base_url = EuropePMCSource.default_base_url
    min_interval_s = EuropePMCSource.min_interval_s
    rate_windows = EuropePMCSource.rate_windows
    accepts = frozenset({IdType.PMCID})

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        return RequestSpec(path=f"/europepmc/webservices/rest/{quote_path(ids[0].value)}/fullTextXML", params={},
                           ids=ids)

    def articles(self, body: bytes, spec: RequestSpec, *, max_bytes: int = defaults.MAX_XML_BYTES) -> dict[str, JatsAnswer]:
        """The one article of a ``fullTextXML`` answer, under the requested id's key."""
        found = split_articles(body, max_bytes=max_bytes)
        if len(found) != 1:
            raise FullTextError(f"expected one JATS <article>, found {len(found)}")
        return {spec.ids[0].key: found[0]}


class PMCEfetchSource(NCBIEutilsSource):
    name = "pmc_efetch"
    # Whole articles are large (tens to hundreds of kB each): 20 a request keeps an answer far below the cap.
    batch_size = 20
    accepts = frozenset({IdType.PMCID})

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        numbers = ",".join(i.value.upper().removeprefix("PMC") for i in ids)  # E-utilities' UIDs: no PMC prefix
        return RequestSpec(path="/entrez/eutils/efetch.fcgi", params={"db": "pmc", "id": numbers, "retmode": "xml"},
                           ids=ids)

    def articles(self, body: bytes, spec: RequestSpec, *, max_bytes: int = defaults.MAX_XML_BYTES) -> dict[str, JatsAnswer]:
        """The articles of a batched answer under the requested ids' keys; an id the answer lacks is absent."""
        wanted = {i.value.upper(): i.key for i in spec.ids}
        found: dict[str, JatsAnswer] = {}
        for article, xml in split_articles(body, max_bytes=max_bytes):
            key = wanted.get(article.pmcid.upper())
            if key is not None and key not in found:
                found[key] = (article, xml)
        return found
