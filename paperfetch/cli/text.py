"""``paperfetch text``: the full text of papers as one row per paragraph (docs/fulltext.md, "paperfetch text")."""

from __future__ import annotations

import argparse
import functools
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from paperfetch.cells import is_missing
from paperfetch.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    check_out_dir,
    common_options,
    counted,
    identity_options,
    jsonl_records,
    results_table,
    retriever_for,
    say,
    setting_option,
    settings_from,
    summary,
    tell,
    terminal_width,
    wrapped,
    write_lines,
    write_private_safe,
    write_report,
)
from paperfetch.cli.download import gathered_inputs, input_option, inputs_of, stopped, unfinished

if TYPE_CHECKING:  # pragma: no cover
    from paperfetch.fulltext import FullText

__all__ = ["add_subcommands", "run"]

#: The per-paper columns printed (and written as JSON Lines).
TEXT_COLUMNS = ["input", "status", "text_source", "paragraphs", "text_path", "reason", "error"]


def add_subcommands(sub: Any) -> None:
    text = sub.add_parser("text", parents=[common_options()],
                          help="full text as one row per paragraph (JATS, else the open-access PDF's text)",
                          description="The full text of DOIs, PMIDs, PMCIDs or arXiv IDs, one row per paragraph: "
                                      "input, doi, pmid, pmcid, text_source, license, section, paragraph, text.")
    input_option(text)  # as download's: a CSV (its doi/DOI column, or --column) or a .txt
    identity_options(text)
    setting_option(text, "out_dir", "--out", "--dwn-dir",
                   help="folder for the JATS files and PDFs (default: PDFs; env PAPERFETCH_OUT)")
    text.add_argument("--report", type=Path, help="write the paragraphs (with --format chunks: the chunks): FILE.csv, "
                                                  "FILE.parquet or FILE.jsonl")
    text.add_argument("--outcomes", type=Path, help="write the per-paper outcomes: FILE.csv, FILE.parquet or FILE.jsonl")
    text.add_argument("--failed", type=Path, metavar="FILE",
                      help="write the identifiers that gave no text, one per line (feed back with --input)")
    text.add_argument("--format", choices=("table", "jsonl", "md", "md-plain", "chunks"), default="table",
                      help="stdout: a compact per-paper table (default), per-paper JSON Lines, the table and one "
                           "Markdown file per paper in --out (md; md-plain: for a language model, no anchors or "
                           "links), or one JSON line per chunk (chunks)")
    text.add_argument("--max-tokens", type=int, default=512, help="with --format chunks: the tokens of a chunk at "
                                                                  "most (default 512, the default tokenizer's)")
    text.add_argument("--overlap", type=int, default=0,
                      help="with --format chunks: tokens of the chunk before that lead each chunk (default 0)")
    setting_option(text, "pdf_engine")
    setting_option(text, "state", help="host-state store shared with other runs (as for download; env PAPERFETCH_STATE)")
    text.add_argument("--no-progress", action="store_true", help="no progress bar")
    text.add_argument("--no-cache", action="store_true", help="do not use or fill the metadata cache")
    text.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    ids, frame, column = gathered_inputs(args)
    if args.max_tokens < 1 or not 0 <= args.overlap <= args.max_tokens // 2:
        raise UsageError("--max-tokens must be at least 1 and --overlap between 0 and half of it")
    if settings.pdf_engine == "pypdfium2":
        try:
            import pypdfium2  # noqa: F401
        except ImportError:
            raise UsageError("--pdf-engine pypdfium2 needs pypdfium2: pip install pypdfium2") from None
    out = check_out_dir(settings.out_dir)
    inputs = inputs_of(ids, frame, column)

    with retriever_for(settings, args, jsonl=_jsonl(args)) as retriever:
        started = time.time()
        try:
            bundle = retriever.fulltext(inputs)  # the pdf_engine setting
            written = _write_markdown(bundle, args.format) if args.format.startswith("md") else None
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the texts of the papers finished, read from their files
            from paperfetch.fulltext.bundle import texts_of

            partial = unfinished(exc, inputs, out, started)
            finished = texts_of(partial, engine=settings.pdf_engine)
            _finish(finished.paragraphs, finished.outcomes, args, interrupted=True)
            return stopped(partial)
        offline = retriever.run_snapshot().offline_line()
    code = _finish(bundle.paragraphs, bundle.outcomes, args)
    if written is not None and not args.quiet:
        say(f"{written} Markdown files written to {out}")
    if offline:
        say(f"paperfetch: {offline}", err=True)
    return code


def _jsonl(args: argparse.Namespace) -> bool:
    """Whether stdout is JSON Lines (then every other line goes to stderr)."""
    return args.format in ("jsonl", "chunks")


def _write_markdown(bundle: FullText, form: str) -> int:
    """One ``.md`` per paper with text, beside its JATS file or PDF in --out (named like it), from the bundle
    of the run (no request more): its front matter carries the paper's bibliographic record."""
    from paperfetch.fulltext.markdown import to_markdown

    outcomes = bundle.outcomes
    with_text = outcomes[outcomes["text_source"].notna()]
    documents = to_markdown(bundle, papers=with_text, flavor="plain" if form == "md-plain" else "full")
    paths = {str(value): Path(str(path)).with_suffix(".md")
             for value, path in zip(with_text["input"], with_text["text_path"]) if not is_missing(path)}
    written = [(paths[str(key)], document) for key, document in documents.items() if str(key) in paths]
    for dest, document in written:
        write_private_safe(dest, functools.partial(Path.write_text, data=document, encoding="utf-8"))
    return len(written)


def _per_paper(paragraphs: pd.DataFrame, outcomes: pd.DataFrame) -> pd.DataFrame:
    counts = paragraphs.groupby(paragraphs["input"].astype(str), sort=False).size()
    table = outcomes.reindex(columns=TEXT_COLUMNS)
    table["paragraphs"] = [0 if is_missing(source) else int(counts.get(str(value), 0))
                           for value, source in zip(outcomes["input"], outcomes["text_source"])]
    return table


def _finish(paragraphs: pd.DataFrame, outcomes: pd.DataFrame, args: argparse.Namespace, interrupted: bool = False) -> int:
    table = _per_paper(paragraphs, outcomes)
    rows = paragraphs
    if args.format == "chunks":  # stdout and --report: the chunks
        from paperfetch.fulltext import chunks

        rows = chunks(paragraphs, max_tokens=args.max_tokens, overlap=args.overlap)
    if not interrupted:
        _print(rows, table, args)
    for frame, path, what in ((rows, args.report, "report"), (outcomes, args.outcomes, "outcomes")):
        if path is not None:
            write_report(frame, path)
            tell(args, f"{what} written to {path}", err=_jsonl(args))
    if args.failed is not None:  # worth another run: no text, and an identifier at all
        failed = [str(value).strip() for value, source, status in
                  zip(outcomes["input"], outcomes["text_source"], outcomes["status"].astype(str))
                  if is_missing(source) and status != "invalid_identifier" and not is_missing(value) and str(value).strip()]
        write_lines(args.failed, dict.fromkeys(failed))
    if not args.quiet:
        line = f"{counted(len(table), 'paper')}: {summary(outcomes)}; {_texts_line(table, len(paragraphs))}"
        say(wrapped(line, terminal_width()), err=_jsonl(args))
    return EXIT_FAILED if int(outcomes["text_source"].isna().sum()) else EXIT_OK


def _texts_line(table: pd.DataFrame, paragraphs: int) -> str:
    """``"text of 2 (1 from JATS, 1 from a PDF), none of 1: 35 paragraphs"``."""
    sources = table["text_source"].dropna().astype(str).value_counts()
    named = ", ".join(f"{count} from {'JATS' if name == 'jats' else 'a PDF' if name == 'pdf' else name}"
                      for name, count in sources.items())
    with_text = int(sources.sum())
    without = len(table) - with_text
    return (f"text of {with_text}{f' ({named})' if named else ''}{f', none of {without}' if without else ''}: "
            f"{counted(paragraphs, 'paragraph')}")


def _print(rows: pd.DataFrame, table: pd.DataFrame, args: argparse.Namespace) -> None:
    """stdout: the chunks *rows* (``--format chunks``), the per-paper JSON Lines, or the per-paper table."""
    if args.format == "chunks":
        for line in jsonl_records(rows):
            say(line)
    elif args.quiet:
        return
    elif args.format == "jsonl":
        for line in jsonl_records(table):
            say(line)
    else:
        say(results_table(table, columns=("input", "status", "text_source", "paragraphs"),
                          details=("text_path", "reason", "error")))
