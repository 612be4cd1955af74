"""JATS ``<fig>`` and ``<table-wrap>`` of an article → :class:`~paperfetch.fulltext.base.Figure` and
:class:`~paperfetch.fulltext.base.Table` records, in document order (docs/fulltext.md, "Tables and figures")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from lxml import etree

from paperfetch.fulltext.base import SECTION_SEPARATOR, Figure, Table, unique_ids
from paperfetch.fulltext.tables import parse_table
from paperfetch.fulltext.xmltext import XLINK_HREF, first_child, flatten, local_name, section_path, xrefs

__all__ = ["floats", "parse_figure"]

#: Where a figure or table is never the article's own: peer reviews and decision letters, translated abstracts.
_ELSEWHERE = frozenset({"sub-article", "response", "trans-abstract"})
_NOTHING_DROPPED: frozenset[str] = frozenset()


def parse_figure(fig: etree._Element, number: int, refs: Sequence[str] = (),
                 order: Mapping[str, int] | None = None) -> Figure:
    """The figure of one ``<fig>``; *number* (1-based, in document order) names one without an ``id``."""
    graphic = next((el.get(XLINK_HREF) or "" for el in fig.iter("{*}graphic")), "")
    return Figure(
        figure_id=fig.get("id") or f"f{number}",
        label=flatten(first_child(fig, "label")),
        caption=flatten(first_child(fig, "caption")),
        section=section_path(fig, SECTION_SEPARATOR),
        graphic=graphic.strip(),
        **xrefs(fig, refs, dropped=_NOTHING_DROPPED, order=order),
    )


def floats(article: etree._Element, refs: Sequence[str] = ()) -> tuple[tuple[Table, ...], tuple[Figure, ...]]:
    """Every ``<table-wrap>`` and ``<fig>`` of *article* (front, body, back, floats-group; not those of a
    ``<sub-article>``), in document order; a figure inside a table (or the reverse) is a row of its own too."""
    order = {rid: i for i, rid in enumerate(refs)}
    tables: list[Table] = []
    figures: list[Figure] = []
    found = [el for el in article.iter("{*}table-wrap", "{*}fig")  # document order
             if not any(local_name(a.tag) in _ELSEWHERE for a in el.iterancestors())]
    for element in found:
        if local_name(element.tag) == "fig":
            figures.append(parse_figure(element, len(figures) + 1, refs, order))
        else:
            tables.append(parse_table(element, len(tables) + 1, refs, order))
    table_ids = unique_ids([(el.get("id") or "").strip() for el in found if local_name(el.tag) == "table-wrap"], "t", 1)
    figure_ids = unique_ids([(el.get("id") or "").strip() for el in found if local_name(el.tag) == "fig"], "f", 1)
    return (tuple(replace(t, table_id=i) for t, i in zip(tables, table_ids)),
            tuple(replace(f, figure_id=i) for f, i in zip(figures, figure_ids)))
