""":func:`read`: full text from files already on disk (JATS ``.xml``/``.nxml``, ``.pdf``), with no request at all
(docs/fulltext.md, "Local files"). A paper's files are one paper: a JATS file and a PDF of the same work (the same
DOI or PMCID as the files or the folder's ledger state it, or the same file name stem) are read from the JATS."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paperfetch import defaults
from paperfetch.fulltext.article import parse_pdf
from paperfetch.fulltext.base import Article, FullTextError, FullTextTooLarge
from paperfetch.fulltext.bundle import FullText
from paperfetch.fulltext.endpoints import TEXT_KEY_PREFIX
from paperfetch.fulltext.jats import parse_jats_set
from paperfetch.fulltext.pdflines import DEFAULT_ENGINE, PdfEngine
from paperfetch.ledger.sqlite import DEFAULT_LEDGER_NAME, SqliteLedger
from paperfetch.outcomes import outcomes_frame

__all__ = ["READERS", "read"]

#: What parses each kind of file, by its suffix (lower case), into its articles; each raises FullTextError.
READERS: dict[str, Callable[[bytes, Mapping[str, Any]], list[Article]]] = {
    **dict.fromkeys((".xml", ".nxml"), lambda body, o: parse_jats_set(body, max_bytes=o["max_xml_bytes"])),
    ".pdf": lambda body, o: [parse_pdf(body, engine=o["pdf_engine"], max_bytes=o["max_pdf_bytes"])],
}


@dataclass
class _Document:
    name: str                      #: the file's name under the folder (the rows' ``input``)
    article: Article
    record: dict[str, Any]         #: what the folder's ledger holds of its paper
    keys: set[str] = field(default_factory=set)  #: what names its paper: ids, the ledger's key, the file's stem
    file: dict[str, str | None] = field(default_factory=dict)  #: its outcome row's ``text_path`` and ``sha256``


def read(source: str | Path | bytes, *, name: str | None = None, recursive: bool = True,
         pdf_engine: PdfEngine | str = DEFAULT_ENGINE, max_xml_bytes: int = defaults.MAX_XML_BYTES,
         max_pdf_bytes: int = defaults.MAX_PDF_BYTES) -> FullText:
    """The full text of files already on disk, as the frames ``r.fulltext`` gives, sending no request.

    *source* is a file (JATS ``.xml``/``.nxml``, ``.pdf``), the bytes of one (``input`` is then *name*, by
    default ``"<bytes>"``), or a folder (with its subfolders unless ``recursive=False``); a JATS file may hold a
    ``<pmc-articleset>`` of many articles. ``input`` is the file's name (its path under the folder). One paper
    in several files is read once, from its JATS; its ids and licence are what the files state, its
    bibliographic record what the folder's ledger (``r.fulltext``'s) holds; ``outcomes`` has a row per paper with
    the file it was read from (``text_source``, ``text_path``) and that file's ``sha256``. A file that cannot be read is one row
    of ``errors`` (``error`` the FullTextError's class), never an exception; a missing path is FileNotFoundError.
    """
    options = {"pdf_engine": pdf_engine, "max_xml_bytes": max_xml_bytes, "max_pdf_bytes": max_pdf_bytes}
    errors: list[dict[str, object]] = []
    if isinstance(source, (bytes, bytearray, memoryview)):
        body = bytes(source)
        suffix = ".pdf" if body.lstrip()[:5] == b"%PDF-" else ".xml"
        documents = _parse(body, name or "<bytes>", suffix, options, errors)
    elif not (path := Path(source)).exists():
        raise FileNotFoundError(f"no such file or folder: {path}")
    elif not path.is_dir():
        documents = list(_read_file(path, name or path.name, options, errors, {}))
    else:
        records = _ledger_records(path)
        found = path.rglob("*") if recursive else path.glob("*")
        documents = _one_per_paper([document for file in sorted(p for p in found if p.is_file() and p.suffix.lower() in READERS)
                                    for document in _read_file(file, file.relative_to(path).as_posix(), options, errors,
                                                               records)])
    outcomes = outcomes_frame({"input": d.name, "text_source": d.article.text_source, **d.file} for d in documents)
    return FullText.of(((d.name, d.article, d.record) for d in documents), outcomes=outcomes, errors=errors)


def _read_file(path: Path, name: str, options: Mapping[str, Any], errors: list[dict[str, object]],
               records: Mapping[Path, tuple[str, dict[str, Any]]]) -> Iterator[_Document]:
    suffix = path.suffix.lower()
    try:
        if suffix not in READERS:
            raise FullTextError(f"not a kind of file read here (one of {', '.join(sorted(READERS))})")
        cap = options["max_pdf_bytes"] if suffix == ".pdf" else options["max_xml_bytes"]
        if (size := path.stat().st_size) > cap:  # refused before it is read into memory
            raise FullTextTooLarge(f"the file is {size:,} bytes, over the cap of {cap:,}")
        body = path.read_bytes()
    except (OSError, FullTextError) as exc:
        errors.append({"input": name, "error": type(exc).__name__, "message": str(exc)})
        return
    key, record = records.get(path.resolve(), ("", {}))
    for document in _parse(body, name, suffix, options, errors, record):
        document.keys |= {key.lower()} - {""}
        document.file["text_path"] = str(path)
        yield document


def _parse(body: bytes, name: str, suffix: str, options: Mapping[str, Any], errors: list[dict[str, object]],
           record: Mapping[str, Any] | None = None) -> list[_Document]:
    try:
        articles = READERS[suffix](body, options)
        if not articles:
            raise FullTextError("no JATS <article> in the file")
    except FullTextError as exc:
        errors.append({"input": name, "error": type(exc).__name__, "message": str(exc)})
        return []
    except Exception as exc:  # noqa: BLE001 - a file of a shape nobody foresaw is that file's failure only
        errors.append({"input": name, "error": "FullTextError", "message": f"internal error: {type(exc).__name__}: {exc}"})
        return []
    stem = [f"stem:{name.rsplit('.', 1)[0]}"] if len(articles) == 1 else []  # a set's articles share one file
    sha256 = hashlib.sha256(body).hexdigest()
    return [_Document(name, article, dict(record or {}), {*stem, *_stated(article), *_stated(record or {})},
                      {"sha256": sha256}) for article in articles]


def _stated(ids: Any) -> set[str]:
    """The ``doi:…``/``pmid:…``/``pmcid:…`` keys an article or a record states (lower case)."""
    get = ids.get if isinstance(ids, Mapping) else lambda k: getattr(ids, k, "")
    return {f"{kind}:{str(value).lower()}" for kind in ("doi", "pmid", "pmcid") if (value := get(kind))}


def _one_per_paper(documents: list[_Document]) -> list[_Document]:
    """One document a paper, in the files' order: of a JATS file and a PDF sharing a key, the JATS, with the
    record both give; a PDF's ids and licence (its first page's) fill only what the JATS lacks."""
    kept: list[_Document] = []
    by_key: dict[str, _Document] = {}
    for document in sorted(documents, key=lambda d: d.article.text_source != "jats"):  # JATS first, stable
        same = next((by_key[k] for k in sorted(document.keys) if k in by_key), None)
        if same is None:
            kept.append(document)
            same = document
        else:
            same.record = {**document.record, **{k: v for k, v in same.record.items() if v not in (None, "")}}
        by_key.update(dict.fromkeys(document.keys, same))
    order = {id(d): n for n, d in enumerate(documents)}
    return sorted(kept, key=lambda d: order[id(d)])


def _ledger_records(folder: Path) -> dict[Path, tuple[str, dict[str, Any]]]:
    """What the folder's ledger (``r.fulltext``'s, ``download``'s) says of each file it kept: the paper's key
    and record; empty without a ledger (none is made)."""
    if not (folder / DEFAULT_LEDGER_NAME).is_file():
        return {}
    with SqliteLedger.in_folder(folder) as ledger:
        entries = ledger.entries()
    out: dict[Path, tuple[str, dict[str, Any]]] = {}
    for key, path, extra in zip(entries["key"], entries["path"], entries["extra"]):
        if isinstance(path, str) and path:
            file = (folder / path).resolve()  # an absolute path stays itself
            paper = key.removeprefix(TEXT_KEY_PREFIX)
            out[file] = (paper, {**out.get(file, ("", {}))[1], **(extra or {})})
    return out
