"""The Retriever's full-text methods: paragraphs, references, tables and figures of papers, through
:func:`paperfetch.fulltext.fetch.collect_text` (fetched, paced and cached as every request; a re-run reads the kept
files)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Literal, overload

import pandas as pd

if TYPE_CHECKING:
    from paperfetch.fulltext.fetch import FullTextResult

__all__ = ["FullTextMethods"]


class FullTextMethods:
    """Mixed into :class:`~paperfetch.retriever.Retriever`, which gives ``_text_context``."""

    def _text_context(self, pdf_engine: str | None) -> Any:
        raise NotImplementedError

    def _collect(self, ids: Iterable[object] | str | pd.Series, pdf_engine: str | None = None) -> FullTextResult:
        from paperfetch.fulltext.fetch import collect_text

        return collect_text(ids, context=self._text_context(pdf_engine))

    @overload
    def fulltext(self, ids: Iterable[object] | str | pd.Series, *, with_outcomes: Literal[False] = False,
                 pdf_engine: str | None = None) -> pd.DataFrame: ...

    @overload
    def fulltext(self, ids: Iterable[object] | str | pd.Series, *, with_outcomes: Literal[True],
                 pdf_engine: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]: ...

    def fulltext(self, ids: Iterable[object] | str | pd.Series, *, with_outcomes: bool = False,
                 pdf_engine: str | None = None) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
        """One row per paragraph of every paper with text: JATS where it exists, else the open-access PDF's text.

        Columns ``input, doi, pmid, pmcid, text_source, license, section, paragraph, text``, then
        ``paragraph_id, citations, figures, tables, words, chars, page, license_id`` (docs/fulltext.md).
        ``with_outcomes=True`` returns ``(paragraphs, outcomes)``: the outcomes frame (one row per input) with
        ``text_source`` and ``text_path`` filled. Never raises for a bad input or a failing service.

        Parameters
        ----------
        ids : iterable, str or Series
            DOIs, PMIDs (``PMID:…``), PMCIDs and arXiv IDs, in any mix; a lone string is one identifier.
        with_outcomes : bool
            Return the outcomes frame too.
        pdf_engine : str
            The PDF text extractor (``"pypdfium2"`` or ``"pypdf"``; default: the ``pdf_engine`` setting).
        """
        result = self._collect(ids, pdf_engine)
        return (result.paragraphs, result.outcomes) if with_outcomes else result.paragraphs

    def fulltext_references(self, ids: Iterable[object] | str | pd.Series) -> pd.DataFrame:
        """One row per cited work of the JATS ``<ref-list>`` of every paper with JATS (``doi``/``pmid``/``pmcid``
        are the cited work's, so the frame feeds :meth:`download_frame`); a re-run reads the kept XML.

        Parameters
        ----------
        ids : iterable, str or Series
            DOIs, PMIDs (``PMID:…``), PMCIDs and arXiv IDs, in any mix; a lone string is one identifier.
        """
        return self._collect(ids).references

    def fulltext_tables(self, ids: Iterable[object] | str | pd.Series) -> pd.DataFrame:
        """One row per JATS ``<table-wrap>`` of every paper with JATS: ``table`` a DataFrame of its cells,
        ``markdown`` a pipe table (docs/fulltext.md, "Tables and figures"); a re-run reads the kept XML.

        Parameters
        ----------
        ids : iterable, str or Series
            DOIs, PMIDs, PMCIDs or arXiv IDs, as for :meth:`fulltext`.
        """
        return self._collect(ids).tables

    def fulltext_figures(self, ids: Iterable[object] | str | pd.Series) -> pd.DataFrame:
        """One row per JATS ``<fig>`` of every paper with JATS: label, caption, section, the image's href (not
        downloaded); a re-run reads the kept XML.

        Parameters
        ----------
        ids : iterable, str or Series
            DOIs, PMIDs, PMCIDs or arXiv IDs, as for :meth:`fulltext`.
        """
        return self._collect(ids).figures
