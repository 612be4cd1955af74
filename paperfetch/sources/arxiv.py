"""arXiv: the PDF address follows from the id; the Atom API only adds metadata (docs/sources.md)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from paperfetch.ids import Identifier, IdType, parse_identifier
from paperfetch.sources.base import Candidate, Record, RequestSpec, Source, batched, dedupe
from paperfetch.sources.schema import load_xml

__all__ = ["ArxivSource", "arxiv_id"]

_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV = "{http://arxiv.org/schemas/atom}"
_ARXIV_DOI_PREFIX = "10.48550/arxiv."
_ABS_ID = re.compile(r"/abs/(?P<id>.+?)(?P<version>v\d+)?$")
_FEED_PDF = re.compile(r"^https?://(?:www\.|export\.)?arxiv\.org(?P<path>/pdf/[^?#]+?)(?:\.pdf)?$", re.IGNORECASE)


class ArxivSource(Source):
    name = "arxiv"
    default_base_url = "https://export.arxiv.org"
    pdf_base_url: ClassVar[str] = "https://arxiv.org"
    # arXiv API terms of use: "make no more than one request every three seconds".
    min_interval_s = 3.0
    batch_size = 100
    accepts = frozenset({IdType.ARXIV, IdType.DOI})

    def requests_for(self, ids: Sequence[Identifier]) -> list[RequestSpec]:
        usable = [i for i in self.accepted(ids) if arxiv_id(i) is not None]
        return [self.spec_for(batch) for batch in batched(usable, self.batch_size)]

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        id_list = ",".join(f"{arxiv_id(i)}{_version(i)}" for i in ids)
        return RequestSpec(
            path="/api/query", params={"id_list": id_list, "start": "0", "max_results": str(self.batch_size)}, ids=ids
        )

    def candidates_for(self, identifier: Identifier) -> list[Candidate]:
        """The direct PDF for an arXiv id or arXiv DOI, without any request; [] for anything else."""
        paper = arxiv_id(identifier)
        if paper is None:
            return []
        url = f"{self.service_url(self.pdf_base_url)}/pdf/{paper}{_version(identifier)}"
        return [Candidate(url=url, source=self.name, kind="pdf", version="submittedVersion", host_type="repository")]

    def feed_pdf(self, href: str | None) -> str | None:
        """A feed's PDF link on arxiv.org as ``https://arxiv.org/pdf/{id}{version}`` (on the override host if any)."""
        match = _FEED_PDF.match(href or "")
        return href if match is None else f"{self.service_url(self.pdf_base_url)}{match.group('path')}"

    def parse(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        wanted = {arxiv_id(i).lower(): i for i in spec.ids}  # type: ignore[union-attr]
        records = {}
        for entry in load_xml(body, self.name).iter(f"{_ATOM}entry"):
            match = _ABS_ID.search(entry.findtext(f"{_ATOM}id") or "")
            if match is None:  # an error entry (…/api/errors#…) has no /abs/ id
                continue
            ident = wanted.get(match.group("id").lower())
            if ident is None:
                continue
            published = entry.findtext(f"{_ATOM}published") or ""
            doi = entry.findtext(f"{_ARXIV}doi")
            pdf_links = [
                link.get("href")
                for link in entry.findall(f"{_ATOM}link")
                if link.get("title") == "pdf" or link.get("type") == "application/pdf"
            ]
            records[ident.key] = Record(
                doi=doi.strip().lower() if doi else None,
                published_doi=doi.strip().lower() if doi else None,  # arxiv:doi is the journal version's
                arxiv_id=match.group("id"),
                title=" ".join((entry.findtext(f"{_ATOM}title") or "").split()) or None,
                year=int(published[:4]) if published[:4].isdigit() else None,
                candidates=dedupe(
                    [*self.candidates_for(ident)]
                    + [self.candidate(self.feed_pdf(u), kind="pdf", version="submittedVersion", host_type="repository")
                       for u in pdf_links]
                ),
            )
        return records


def arxiv_id(identifier: Identifier) -> str | None:
    """The arXiv id behind an arXiv identifier or a 10.48550/arXiv.* DOI (no version)."""
    if identifier.type == IdType.ARXIV:
        return identifier.value
    if identifier.type == IdType.DOI and identifier.value.lower().startswith(_ARXIV_DOI_PREFIX):
        # The DOI's suffix becomes a URL path: only a well-formed arXiv id may (never "../x").
        try:
            return parse_identifier(identifier.value[len(_ARXIV_DOI_PREFIX) :], hint=IdType.ARXIV).value
        except ValueError:
            return None
    return None


def _version(identifier: Identifier) -> str:
    version = identifier.version or ""
    return f"v{version}" if version and not version.lower().startswith("v") else version
