""":func:`read`: full text from files already on disk (JATS ``.xml``/``.nxml``, ``.pdf``), with no request at all
(docs/fulltext.md, "Local files")."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from paperfetch import defaults
from paperfetch.fulltext.base import FullTextError, FullTextTooLarge
from paperfetch.fulltext.bundle import FullText, errors_frame
from paperfetch.fulltext.frame import (
    article_rows,
    figure_rows,
    figures_frame,
    paragraphs_frame,
    pdf_rows,
    reference_rows,
    references_frame,
    table_rows,
    tables_frame,
)
from paperfetch.fulltext.jats import parse_jats_set
from paperfetch.fulltext.pdflines import DEFAULT_ENGINE, PdfEngine
from paperfetch.fulltext.pdftext import pdf_paragraphs

__all__ = ["READERS", "read"]

@dataclass
class _Frames:
    paragraphs: list[dict[str, Any]] = field(default_factory=list)
    references: list[dict[str, Any]] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    parts: list[FullText] = field(default_factory=list)  # bundles read whole (Markdown)
    errors: list[dict[str, Any]] = field(default_factory=list)


def _jats(body: bytes, name: str, out: _Frames, options: Mapping[str, Any]) -> None:
    articles = parse_jats_set(body, max_bytes=options["max_xml_bytes"])
    if not articles:
        raise FullTextError("no JATS <article> in the file")
    for article in articles:
        out.paragraphs += article_rows(article, input=name)
        out.references += reference_rows(article, input=name)
        out.tables += table_rows(article, input=name)
        out.figures += figure_rows(article, input=name)


def _pdf(body: bytes, name: str, out: _Frames, options: Mapping[str, Any]) -> None:
    paragraphs = pdf_paragraphs(body, engine=options["pdf_engine"], max_bytes=options["max_pdf_bytes"])
    if not paragraphs:
        raise FullTextError("the PDF has no text layer (scanned pages are not read: no OCR)")
    out.paragraphs += pdf_rows(paragraphs, input=name)


def _markdown(body: bytes, name: str, out: _Frames, options: Mapping[str, Any]) -> None:
    try:
        module = importlib.import_module("paperfetch.fulltext.markdown")
        read_markdown = module.read_markdown
    except (ImportError, AttributeError):
        raise FullTextError("reading Markdown is not available in this paperfetch") from None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FullTextError(f"the Markdown file is not UTF-8: {exc}") from None
    out.parts.append(read_markdown(text, input=name))


#: What reads each kind of file, by its suffix (lower case). Every reader raises FullTextError for a bad file.
READERS: dict[str, Callable[[bytes, str, _Frames, Mapping[str, Any]], None]] = {
    ".xml": _jats, ".nxml": _jats, ".pdf": _pdf, ".md": _markdown,
}
_PREFERENCE = (".xml", ".nxml", ".md", ".pdf")  # one paper in several forms is read from the first of these


def _suffix_of(body: bytes) -> str:
    start = body.lstrip()[:5]
    return ".pdf" if start == b"%PDF-" else ".md" if start.startswith(b"---") else ".xml"


def _notes(path: Path) -> bool:
    """A Markdown file without YAML front matter (a README, notes): in a folder, not a paper."""
    if path.suffix.lower() != ".md":
        return False
    try:
        with open(path, "rb") as handle:
            return handle.read(4).rstrip(b"\r\n") != b"---"
    except OSError:
        return False


def _files(folder: Path, recursive: bool) -> list[Path]:
    """The readable files in *folder* (and its subfolders when *recursive*), sorted; of files sharing a folder
    and a stem, only the one of the preferred kind (JATS over Markdown over PDF, as ``r.fulltext`` prefers
    JATS). A Markdown file without front matter is not a paper (a README) and is left out."""
    chosen: dict[tuple[Path, str], Path] = {}
    found = folder.rglob("*") if recursive else folder.glob("*")
    for path in sorted(p for p in found if p.is_file() and p.suffix.lower() in READERS and not _notes(p)):
        key = (path.parent, path.stem)
        held = chosen.get(key)
        if held is None or _PREFERENCE.index(path.suffix.lower()) < _PREFERENCE.index(held.suffix.lower()):
            chosen[key] = path
    return sorted(chosen.values())


def read(source: str | Path | bytes, *, name: str | None = None, recursive: bool = True,
         pdf_engine: PdfEngine | str = DEFAULT_ENGINE, max_xml_bytes: int = defaults.MAX_XML_BYTES,
         max_pdf_bytes: int = defaults.MAX_PDF_BYTES) -> FullText:
    """The full text of files already on disk, as the frames ``r.fulltext`` gives, sending no request.

    *source* is a file (JATS ``.xml``/``.nxml``, ``.pdf``, ``.md``), the bytes of one (``input`` is then
    *name*, by default ``"<bytes>"``), or a folder (with its subfolders unless ``recursive=False``); a JATS
    file may hold a ``<pmc-articleset>`` of many articles. ``input`` is the file's name (its path under the
    folder). A file that cannot be read is one row of ``errors`` (``error`` the FullTextError's class), never
    an exception; a missing path is FileNotFoundError.
    """
    options = {"pdf_engine": pdf_engine, "max_xml_bytes": max_xml_bytes, "max_pdf_bytes": max_pdf_bytes}
    out = _Frames()
    if isinstance(source, (bytes, bytearray, memoryview)):
        body = bytes(source)
        _read_one(body, name or "<bytes>", READERS[_suffix_of(body)], out, options)
        return _bundle(out)
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"no such file or folder: {path}")
    if path.is_dir():
        for file in _files(path, recursive):
            _read_file(file, file.relative_to(path).as_posix(), out, options)
    else:
        _read_file(path, name or path.name, out, options)
    return _bundle(out)


def _read_file(path: Path, name: str, out: _Frames, options: Mapping[str, Any]) -> None:
    reader = READERS.get(path.suffix.lower())
    try:
        if reader is None:
            raise FullTextError(f"not a kind of file read here (one of {', '.join(sorted(READERS))})")
        cap = options["max_pdf_bytes"] if reader is _pdf else options["max_xml_bytes"]
        if (size := path.stat().st_size) > cap:  # refused before it is read into memory
            raise FullTextTooLarge(f"the file is {size:,} bytes, over the cap of {cap:,}")
        body = path.read_bytes()
    except (OSError, FullTextError) as exc:
        out.errors.append({"input": name, "error": type(exc).__name__, "message": str(exc)})
        return
    _read_one(body, name, reader, out, options)


def _read_one(body: bytes, name: str, reader: Callable[..., None], out: _Frames, options: Mapping[str, Any]) -> None:
    part = _Frames()
    try:
        reader(body, name, part, options)
    except FullTextError as exc:
        out.errors.append({"input": name, "error": type(exc).__name__, "message": str(exc)})
        return
    except Exception as exc:  # noqa: BLE001 - a file of a shape nobody foresaw is that file's failure only
        out.errors.append({"input": name, "error": "FullTextError", "message": f"internal error: {type(exc).__name__}: {exc}"})
        return
    for attr in ("paragraphs", "references", "tables", "figures", "parts"):
        getattr(out, attr).extend(getattr(part, attr))


def _bundle(out: _Frames) -> FullText:
    frames = FullText(paragraphs=paragraphs_frame(out.paragraphs), references=references_frame(out.references),
                      tables=tables_frame(out.tables), figures=figures_frame(out.figures),
                      errors=errors_frame(out.errors))
    if not out.parts:
        return frames
    bundles = [frames, *out.parts]

    def joined(attr: str) -> pd.DataFrame:
        pieces = [getattr(b, attr) for b in bundles if len(getattr(b, attr))]
        return pd.concat(pieces, ignore_index=True) if len(pieces) > 1 else (pieces[0] if pieces else getattr(frames, attr))

    return FullText(paragraphs=joined("paragraphs"), references=joined("references"), tables=joined("tables"),
                    figures=joined("figures"), errors=joined("errors"))
