"""Paragraph rows → section-bounded chunks of at most ``max_tokens`` tokens (docs/fulltext.md, "Chunks").

A chunk never spans two papers nor two top-level sections; paragraphs stay whole and in order, and small
neighbours merge; a paragraph over the budget is cut at sentence ends, a sentence over it at word boundaries,
and only a single word over it (a long URL or sequence) inside the word. Every paragraph is in exactly one
chunk, or its pieces in consecutive chunks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from os.path import commonprefix
from typing import Any

import pandas as pd

from paperfetch.cells import is_missing
from paperfetch.fulltext.base import SECTION_SEPARATOR
from paperfetch.fulltext.bundle import FullText
from paperfetch.fulltext.frame import RECORD_FIELDS, by_input, typed_frame

__all__ = ["CHUNK_COLUMNS", "CHUNK_DTYPES", "Tokenizer", "chunks", "count_tokens", "default_tokenizer"]

#: Any callable from a text to a sequence of tokens: a Hugging Face tokenizer's ``encode``, tiktoken's ``encode``.
Tokenizer = Callable[[str], Sequence[Any]]

#: The columns of the chunks frame, in order, and their types.
CHUNK_DTYPES: Mapping[str, Any] = {
    "input": "object", **dict.fromkeys(("doi", "pmid", "pmcid", "text_source", "license", "chunk_id", "section"), "string"),
    "paragraph_ids": "object", "text": "string", "tokens": "Int64", "license_id": "string", "title": "string",
    "year": "Int64", "journal": "string", "authors": "object", "retracted": "boolean",
}
CHUNK_COLUMNS: tuple[str, ...] = tuple(CHUNK_DTYPES)
#: The paper's columns a chunk carries from its paragraphs: its ids, licence and bibliographic record.
_PAPER_COLUMNS = ("text_source", *RECORD_FIELDS)

#: A letter run counts one token for every this many letters (or part of it).
LETTERS_PER_TOKEN = 6
# Up to six letters, one to three digits, or any other visible character: roughly what a byte-level BPE makes
# of English scientific prose, where a common word is one token and a long or rare one several.
_TOKEN = re.compile(r"[^\W\d_]{1,%d}|\d{1,3}|\S" % LETTERS_PER_TOKEN)
# A sentence ends at . ! or ? (and any closing quote or bracket) before a space and a capital, digit or bracket.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]])|(?<=[.!?][\"')\]]{2}))\s+(?=[\"'(\[A-Z0-9])")
_SPACE = re.compile(r"\s+")


def default_tokenizer(text: str) -> list[str]:
    """The default token list: a letter run in pieces of up to six letters, up to three digits, or any other
    visible character; whitespace is not a token.

    Dependency-free and about as long as a byte-level BPE's list on English scientific prose (docs/fulltext.md,
    "Chunks", gives the measured ratio against ``cl100k_base``).

    >>> default_tokenizer("Immunohistochemistry in 2021.")
    ['Immuno', 'histoc', 'hemist', 'ry', 'in', '202', '1', '.']
    """
    return _TOKEN.findall(text)


def count_tokens(text: str, tokenizer: Tokenizer | None = None) -> int:
    """How many tokens *tokenizer* (the default one when ``None``) makes of *text*."""
    return len((tokenizer or default_tokenizer)(text))


@dataclass(frozen=True)
class _Unit:
    """One paragraph, or one piece of a paragraph cut to fit."""

    paragraph_id: str
    section: str
    text: str
    whole: bool
    tokens: int = 0  #: about what the text adds to a chunk (its count with its section path, less the path's)


class _Budget:
    """Renders a chunk's text and says whether it fits in *max_tokens* tokens."""

    def __init__(self, max_tokens: int, overlap: int, tokenizer: Tokenizer, contextualize: bool) -> None:
        self.max_tokens, self.tokenizer, self.contextualize = max_tokens, tokenizer, contextualize
        self.room = max_tokens - overlap  # what a chunk's own paragraphs may take, its section path included
        self._prefixes: dict[str, tuple[str, int]] = {}

    def count(self, text: str) -> int:
        return len(self.tokenizer(text))

    def prefix(self, section: str) -> tuple[str, int]:
        """The text heading a chunk of *section* and its tokens: the section path, unless it would take more
        than half of the room."""
        if section not in self._prefixes:
            keep = self.contextualize and section and self.count(section) <= self.room // 2
            text = section + "\n\n" if keep else ""
            self._prefixes[section] = (text, self.count(text))
        return self._prefixes[section]

    def render(self, section: str, bodies: Sequence[str]) -> str:
        return self.prefix(section)[0] + "\n\n".join(bodies)

    def fits(self, section: str, bodies: Sequence[str], budget: int) -> bool:
        return self.count(self.render(section, bodies)) <= budget


def _common_section(sections: Sequence[str]) -> str:
    return SECTION_SEPARATOR.join(commonprefix([s.split(SECTION_SEPARATOR) if s else [] for s in sections]))


def _greedy(items: Sequence[str], fits: Callable[[str], bool], join: str) -> list[str]:
    """Consecutive *items* joined while the joined text fits; an item that does not fit alone comes on its own."""
    groups: list[list[str]] = []
    for item in items:
        if groups and fits(join.join([*groups[-1], item])):
            groups[-1].append(item)
        else:
            groups.append([item])
    return [join.join(group) for group in groups]


def _cut_word(word: str, fits: Callable[[str], bool]) -> Iterator[str]:
    """*word* in the longest leading pieces that fit, at character positions (the only cut inside a word)."""
    while word:
        low, high = 1, len(word)
        if not fits(word[:1]):
            raise ValueError(f"max_tokens is too small for a single character of {word[:20]!r}")
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if fits(word[:middle]) else (low, middle - 1)
        yield word[:low]
        word = word[low:]


def _pieces(text: str, fits: Callable[[str], bool]) -> list[str]:
    """*text* cut at sentence ends into pieces that fit; a sentence over the budget cut at word boundaries."""
    out: list[str] = []
    for sentence in _greedy(_SENTENCE_END.split(text), fits, " "):
        if fits(sentence):
            out.append(sentence)
            continue
        words: list[str] = []
        for word in _SPACE.split(sentence):
            words += [word] if fits(word) else list(_cut_word(word, fits))
        out += _greedy(words, fits, " ")
    return out


def _group_chunks(units: Sequence[_Unit], budget: _Budget, room: int) -> list[tuple[str, list[_Unit]]]:
    """The chunks of one top-level section: (common section, units), each fitting in *room* tokens."""
    groups: list[list[_Unit]] = []
    for unit in units:
        candidate = [*groups[-1], unit] if groups else [unit]
        section = _common_section([u.section for u in candidate])
        # the sum of the parts' counts rules out most candidates without counting them whole
        estimate = budget.prefix(section)[1] + sum(u.tokens for u in candidate)
        if (groups and unit.whole and groups[-1][-1].whole and estimate <= room
                and budget.fits(section, [u.text for u in candidate], room)):
            groups[-1] = candidate
        else:
            groups.append([unit])
    return [(_common_section([u.section for u in group]), group) for group in groups]


def _units(rows: Sequence[tuple[str, str, str]], budget: _Budget, room: int) -> list[_Unit]:
    units: list[_Unit] = []
    for paragraph_id, section, text in rows:
        whole = budget.count(budget.render(section, [text]))
        if whole <= room:
            units.append(_Unit(paragraph_id, section, text, True, whole - budget.prefix(section)[1]))
        else:
            fits = lambda piece, s=section: budget.fits(s, [piece], room)  # noqa: E731
            units += [_Unit(paragraph_id, section, piece, False) for piece in _pieces(text, fits)]
    return units


def _with_overlap(previous: str, section: str, body: str, budget: _Budget, overlap: int) -> str:
    """*body* led by the whole words of up to *overlap* tokens from the end of *previous*, within the budget."""
    words = _SPACE.split(previous.strip())
    taken: list[str] = []
    used = 0
    while words and (used + budget.count(words[-1])) <= overlap:
        used += budget.count(words[-1])
        taken.insert(0, words.pop())
    while taken and not budget.fits(section, [" ".join(taken) + " " + body], budget.max_tokens):
        taken.pop(0)
    return (" ".join(taken) + " " + body) if taken else body


def _paper_chunks(rows: list[tuple[str, str, str]], budget: _Budget, overlap: int) -> list[tuple[str, list[str], str]]:
    """(section, paragraph ids, text) of each chunk of one paper, in order."""
    out: list[tuple[str, list[str], str]] = []
    room = budget.room
    for _, top_section in groupby(rows, key=lambda row: row[1].split(SECTION_SEPARATOR)[0]):
        previous = ""
        for section, units in _group_chunks(_units(list(top_section), budget, room), budget, room):
            body = "\n\n".join(u.text for u in units)
            if overlap and previous:
                body = _with_overlap(previous, section, body, budget, overlap)
            previous = body
            out.append((section, list(dict.fromkeys(u.paragraph_id for u in units)),
                        budget.render(section, [body])))
    return out


def _value(value: Any) -> Any:
    return None if is_missing(value) else value


def _text_of(value: Any) -> str:
    return "" if is_missing(value) else str(value)


def chunks(paragraphs: Any, max_tokens: int = 512, overlap: int = 0, tokenizer: Tokenizer | None = None,
           contextualize: bool = True) -> pd.DataFrame:
    """The chunks of a paragraphs frame (``r.fulltext(ids).paragraphs``), or of a :class:`FullText` bundle.

    One row per chunk, columns :data:`CHUNK_COLUMNS`: the paper's ``input``, ids, ``text_source`` and
    ``license``; ``chunk_id`` (``c0``, ``c1`` … within the paper); ``section`` (the section path the chunk's
    paragraphs share); ``paragraph_ids``; ``text``; ``tokens`` (``len(tokenizer(text))``, at most *max_tokens*);
    then the paper's ``license_id`` and bibliographic record (``title``, ``year``, ``journal``, ``authors``,
    ``retracted``), so a chunk can be cited on its own.

    With *contextualize* (the default) ``text`` starts with the section path and a blank line, as docling's
    ``contextualize`` does, and the path counts towards the budget; a path taking more than half of
    ``max_tokens - overlap`` tokens is left out of that chunk's text. With ``contextualize=False`` ``text`` is the
    paragraphs alone. Paragraphs are joined by a blank line. *overlap* > 0 leads every chunk after the first of a
    top-level section with the whole words of up to *overlap* tokens from the end of the chunk before
    (0 ≤ overlap ≤ max_tokens // 2); ``paragraph_ids`` names only the paragraphs the chunk holds beyond that
    lead. *tokenizer* is any callable
    returning a sequence; ``None`` is :func:`default_tokenizer`.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
    if not 0 <= overlap <= max_tokens // 2:
        raise ValueError(f"overlap must be between 0 and max_tokens // 2 ({max_tokens // 2}), not {overlap}")
    frame = paragraphs.paragraphs if isinstance(paragraphs, FullText) else paragraphs
    budget = _Budget(max_tokens, overlap, tokenizer or default_tokenizer, contextualize)
    records: list[dict[str, Any]] = []
    for paper in by_input(frame).values():
        first = paper.iloc[0]
        ids = paper["paragraph_id"] if "paragraph_id" in paper.columns else pd.Series([None] * len(paper))
        rows = [(_text_of(pid) or f"p{int(n)}", _text_of(section), _text_of(text))
                for pid, n, section, text in zip(ids, paper["paragraph"], paper["section"], paper["text"])]
        meta = {column: _value(first.get(column)) for column in _PAPER_COLUMNS}
        for n, (section, paragraph_ids, text) in enumerate(_paper_chunks(rows, budget, overlap)):
            records.append({"input": first["input"], **meta, "chunk_id": f"c{n}", "section": section,
                            "paragraph_ids": paragraph_ids, "text": text, "tokens": budget.count(text)})
    return typed_frame(records, CHUNK_DTYPES, "chunk")


