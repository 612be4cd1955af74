"""Frozen settings that are not the transport's own: who we are to the services.

The transport's knobs live on :class:`paperfetch.HttpClient` (their names and
defaults are PyPaperRetriever's contract). This module holds the identity a
service asks for — a contact e-mail, API keys, a tool name — as an immutable
value whose ``repr`` never shows a secret.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["Identification"]


def _mask(value: str | None) -> str:
    return "None" if value is None else "'***'"


@dataclass(frozen=True)
class Identification:
    """Who is asking: sent to each service the way that service documents.

    * ``email`` — Unpaywall (required), Crossref and OpenAlex polite pools (``mailto``), NCBI (``email``).
    * ``openalex_api_key`` — OpenAlex ``api_key``, sent only when given.
    * ``ncbi_api_key`` — NCBI E-utilities / ID converter ``api_key`` (10 requests/s instead of 3).
    * ``tool`` — NCBI's ``tool`` parameter.
    """

    email: str | None = None
    openalex_api_key: str | None = None
    ncbi_api_key: str | None = None
    tool: str = "paperfetch"

    def __repr__(self) -> str:
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            shown = repr(value) if f.name == "tool" else _mask(value)
            parts.append(f"{f.name}={shown}")
        return f"Identification({', '.join(parts)})"

    __str__ = __repr__

    def secrets(self) -> list[str]:
        """The secret values present, for scrubbing (cassettes, logs)."""
        return [v for v in (self.email, self.openalex_api_key, self.ncbi_api_key) if v]
