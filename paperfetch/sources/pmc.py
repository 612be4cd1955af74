"""The PMC Cloud Service (bucket ``pmc-oa-opendata``): an article's versions, its metadata JSON, its PDF and JATS,
read anonymously over HTTPS (docs/sources.md). One lookup is several requests: the version listing, then the
metadata JSON of the version chosen (:meth:`PMCSource.next_request`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import quote, urlsplit

from paperfetch.ids import Identifier, IdType
from paperfetch.sources.base import Record, RequestSpec, Source, dedupe
from paperfetch.sources.schema import FLAG, ID, TEXT, load_json, load_xml, top_object
from paperfetch.sources.semanticscholar import s2_license

__all__ = ["PMCSource", "PMCStep"]

_VERSION_FOLDER = re.compile(r"PMC(\d+)\.(\d+)/")


@dataclass(frozen=True)
class PMCStep(RequestSpec):
    """A request for one version's metadata JSON, with what the lookup still has to choose from."""

    version: int = 0
    #: the lower versions not read yet, newest first (asked when this one is an author manuscript)
    lower: tuple[int, ...] = ()
    #: the newest manuscript's record, kept when no published version is found below it
    fallback: Record | None = field(default=None, compare=False)


class PMCSource(Source):
    name = "pmc"
    default_base_url = "https://pmc-oa-opendata.s3.amazonaws.com"
    bucket: ClassVar[str] = "pmc-oa-opendata"
    # NCBI publishes no rate terms for the bucket; 5 requests/s is a polite default for an anonymous client.
    min_interval_s = 0.2
    #: files may change inside a version (their md5 is their identity): the listing and the JSON are kept a day
    cache_ttl_s = 24 * 3600.0
    accepts = frozenset({IdType.PMCID})
    stage: ClassVar[str] = "lookup"

    def spec_for(self, ids: tuple[Identifier, ...]) -> RequestSpec:
        # the trailing dot keeps PMC123 from listing PMC1234's versions
        return RequestSpec(path="/", params={"list-type": "2", "prefix": f"{ids[0].value.upper()}.", "delimiter": "/"},
                           ids=ids)

    def next_request(self, body: bytes, spec: RequestSpec) -> RequestSpec | None:
        """The listing's answer leads to the newest version's JSON; a manuscript's JSON to the next lower version's."""
        if not isinstance(spec, PMCStep):
            versions = self.versions(body, spec.ids[0])
            return self._step(spec, versions[0], versions[1:], None) if versions else None
        meta = top_object(load_json(body, self.name), self.name)
        if FLAG(meta.get("is_manuscript")) and spec.lower:
            return self._step(spec, spec.lower[0], spec.lower[1:], spec.fallback or self._record(meta, spec))
        return None

    def parse(self, body: bytes, spec: RequestSpec) -> dict[str, Record]:
        if not isinstance(spec, PMCStep):
            self.versions(body, spec.ids[0])  # an unreadable listing is a MalformedResponse
            return {}  # a listing without versions: PMC has no such article
        record = self._record(top_object(load_json(body, self.name), self.name), spec)
        if record.is_manuscript and spec.fallback is not None:
            record = spec.fallback  # no published version: the newest manuscript
        return {spec.ids[0].key: record}

    def versions(self, body: bytes, ident: Identifier) -> list[int]:
        """The versions the listing names for *ident*, newest first (``KeyCount`` 0: none)."""
        number = ident.value.upper().removeprefix("PMC")
        found = set()
        for element in load_xml(body, self.name).iter():
            if element.tag.rsplit("}", 1)[-1] not in ("Prefix", "Key"):
                continue
            match = _VERSION_FOLDER.match((element.text or "").strip())
            if match and match.group(1) == number:
                found.add(int(match.group(2)))
        return sorted(found, reverse=True)

    def https_url(self, value: Any) -> str | None:
        """``s3://pmc-oa-opendata/<key>?md5=…`` as the object's URL on the HTTPS base (the md5 is dropped)."""
        text = TEXT(value)
        if text is None:
            return None
        parts = urlsplit(text.strip())
        if parts.scheme in ("http", "https"):
            return text.strip()
        key = parts.path.lstrip("/")
        if parts.scheme != "s3" or parts.netloc != self.bucket or any(part in ("", ".", "..") for part in key.split("/")):
            return None
        return f"{self.base_url}/{quote(key, safe='/')}"

    def _step(self, spec: RequestSpec, version: int, lower: tuple[int, ...] | list[int], fallback: Record | None) -> PMCStep:
        folder = f"{spec.ids[0].value.upper()}.{version}"
        return PMCStep(path=f"/{folder}/{folder}.json", params={}, ids=spec.ids, version=version, lower=tuple(lower),
                       fallback=fallback)

    def _record(self, meta: dict[str, Any], spec: RequestSpec) -> Record:
        manuscript = FLAG(meta.get("is_manuscript"))
        licence = s2_license(TEXT(meta.get("license_code")))
        version = meta.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            version = getattr(spec, "version", None) or None
        pdf = self.candidate(self.https_url(meta.get("pdf_url")), kind="pdf",
                             version="acceptedVersion" if manuscript else "publishedVersion",
                             license=licence, host_type="repository")
        doi = TEXT(meta.get("doi"))
        return Record(
            doi=doi.strip().lower() if doi else None,
            pmid=ID(meta.get("pmid")),
            pmcid=spec.ids[0].value.upper(),
            title=TEXT(meta.get("title")),
            license=licence,
            is_oa=FLAG(meta.get("is_pmc_openaccess")),
            pmc_version=version,
            is_manuscript=manuscript,
            candidates=dedupe([pdf]),
            jats_url=self.https_url(meta.get("xml_url")),
            retracted=FLAG(meta.get("is_retracted")),
        )
