"""JATS ``<fig>`` and ``<table-wrap>`` of an article → :class:`~paperfetch.fulltext.base.Figure` and
:class:`~paperfetch.fulltext.base.Table` records, in document order (docs/fulltext.md, "Tables and figures")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lxml import etree

from paperfetch.fulltext.base import Figure, Table, unique_ids
from paperfetch.fulltext.tables import parse_table
from paperfetch.fulltext.xmltext import XLINK_HREF, float_fields, local_name

__all__ = ["floats", "parse_figure"]

#: Where a figure or table is never the article's own: peer reviews and decision letters, translated abstracts.
_ELSEWHERE = frozenset({"sub-article", "response", "trans-abstract"})


def parse_figure(fig: etree._Element, figure_id: str, refs: Sequence[str] = (),
                 order: Mapping[str, int] | None = None) -> Figure:
    """The figure of one ``<fig>``, under *figure_id*."""
    graphic = next((el.get(XLINK_HREF) or "" for el in fig.iter("{*}graphic")), "")
    return Figure(figure_id=figure_id, graphic=graphic.strip(), **float_fields(fig, refs, order))


def floats(article: etree._Element, refs: Sequence[str] = ()) -> tuple[tuple[Table, ...], tuple[Figure, ...]]:
    """Every ``<table-wrap>`` and ``<fig>`` of *article* (front, body, back, floats-group; not those of a
    ``<sub-article>``), in document order; a figure inside a table (or the reverse) is a row of its own too."""
    order = {rid: i for i, rid in enumerate(refs)}
    found = [el for el in article.iter("{*}table-wrap", "{*}fig")  # document order
             if not any(local_name(a.tag) in _ELSEWHERE for a in el.iterancestors())]
    wraps = [el for el in found if local_name(el.tag) == "table-wrap"]
    figs = [el for el in found if local_name(el.tag) == "fig"]
    table_ids = unique_ids([(el.get("id") or "").strip() for el in wraps], "t", 1)
    figure_ids = unique_ids([(el.get("id") or "").strip() for el in figs], "f", 1)
    return (tuple(parse_table(el, ident, refs, order) for el, ident in zip(wraps, table_ids)),
            tuple(parse_figure(el, ident, refs, order) for el, ident in zip(figs, figure_ids)))
