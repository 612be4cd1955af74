"""The research subcommands of ``paperfetch``: ``search``, ``references``, ``citations`` and ``cache clear``.

    paperfetch search "crispr AND 2020[pdat]" --max 200 --report hits.csv [--download]
    paperfetch references 10.1073/pnas.1414271111 [--report refs.csv] [--download]
    paperfetch citations PMID:25114263 [--download]
    paperfetch cache clear

Each prints its table; ``--report`` writes it as CSV, and ``--download`` fetches
the PDFs in the same run (the report then carries the outcome columns too).
Exit status: 0 when the command ran, 2 on a usage error (a bad identifier or
setting), 1 when a service failed the request.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["add_subcommands"]


def add_subcommands(sub: Any) -> None:
    """Register the subcommands on ``paperfetch``'s subparsers; each sets ``run``."""
    search = sub.add_parser("search", help="search PubMed; one row per hit (pmid, doi, title, …)")
    search.add_argument("query", help='a PubMed query, e.g. "breast cancer AND 2008[pdat]"')
    search.add_argument("--max", dest="max_results", type=int, default=200, help="at most this many hits (default 200)")
    search.add_argument("--mindate", help="earliest publication date (YYYY, YYYY/MM or YYYY/MM/DD)")
    search.add_argument("--maxdate", help="latest publication date")
    _common(search)
    search.set_defaults(handler=_run_search)

    for name, what in (("references", "works the given paper cites"), ("citations", "works that cite the given paper")):
        links = sub.add_parser(name, help=f"{what} (OpenAlex, Crossref); one row per work")
        links.add_argument("id", help="a DOI, PMID:… or PMC…")
        _common(links)
        links.set_defaults(handler=_run_links, links=name)

    cache = sub.add_parser("cache", help="the metadata cache")
    cache.add_argument("action", choices=["clear"], help="clear: forget every stored answer")
    cache.add_argument("--path", type=Path, help="the cache file (default: the user cache directory)")
    cache.set_defaults(handler=_run_cache)

    download = sub.choices.get("download")  # `download --no-cache` as well
    if download is not None and not any("--no-cache" in a.option_strings for a in download._actions):
        download.add_argument("--no-cache", action="store_true", help="do not use or fill the metadata cache")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--report", type=Path, help="write the table to this CSV")
    parser.add_argument("--download", action="store_true", help="download the PDFs of the rows in the same run")
    parser.add_argument("--email", help="contact e-mail (sent to NCBI, OpenAlex, Crossref; never logged)")
    parser.add_argument("--ncbi-api-key", help="NCBI API key (10 requests/s instead of 3)")
    parser.add_argument("--out", default="PDFs", help="output folder for --download (default: PDFs)")
    parser.add_argument("--no-cache", action="store_true", help="do not use or fill the metadata cache")
    parser.add_argument("--no-progress", action="store_true")


def _retriever(args: argparse.Namespace) -> Any:
    from paperfetch.retriever import Retriever

    return Retriever(email=args.email, ncbi_api_key=args.ncbi_api_key, out_dir=args.out, cache=not args.no_cache,
                     progress=not args.no_progress, verbosity=0)


def _guarded(run: Any, args: argparse.Namespace) -> int:
    from paperfetch.errors import ConfigurationError, InvalidIdentifier, ServiceError

    try:
        return run(args)
    except (ConfigurationError, InvalidIdentifier) as exc:
        print(f"paperfetch: {exc}", file=sys.stderr)
        return 2
    except ServiceError as exc:
        print(f"paperfetch: {exc}", file=sys.stderr)
        return 1


def _finish(retriever: Any, frame: pd.DataFrame, args: argparse.Namespace, shown: list[str]) -> int:
    with pd.option_context("display.width", 160, "display.max_colwidth", 60):
        print(frame[shown].to_string() if len(frame) else "(no rows)")
    if args.download and len(frame):
        frame = retriever.download_frame(frame, column="doi")
        counts = frame["status"].value_counts()
        print("\nOutcomes by status:")
        for status, count in counts[counts > 0].items():
            print(f"  {status:<22} {count}")
    if args.report:
        frame.to_csv(args.report, index=False)
        print(f"{len(frame)} rows written to {args.report}")
    return 0


def _run_search(args: argparse.Namespace) -> int:
    def run(args: argparse.Namespace) -> int:
        with _retriever(args) as retriever:
            hits = retriever.search_pubmed(args.query, max_results=args.max_results, mindate=args.mindate, maxdate=args.maxdate)
            print(f"{len(hits)} PubMed hit(s) for {args.query!r}")
            return _finish(retriever, hits, args, ["pmid", "doi", "year", "title"])

    return _guarded(run, args)


def _run_links(args: argparse.Namespace) -> int:
    def run(args: argparse.Namespace) -> int:
        with _retriever(args) as retriever:
            links = getattr(retriever, args.links)(args.id)
            print(f"{len(links)} {args.links} of {args.id}")
            return _finish(retriever, links, args, ["doi", "year", "title", "source_of_link"])

    return _guarded(run, args)


def _run_cache(args: argparse.Namespace) -> int:
    from paperfetch.cache import MetadataCache

    cache = MetadataCache(args.path)
    try:
        removed = cache.clear()
    finally:
        cache.close()
    print(f"metadata cache cleared: {removed} answer(s) removed from {cache.path}")
    return 0
