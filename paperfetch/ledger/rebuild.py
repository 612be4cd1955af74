"""Rebuild a lost ledger from the PDFs in the output folder (docs/state.md, "When a file fails")."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from paperfetch.ids import Identifier, filename_for
from paperfetch.ledger.base import ResumeLedger, sha256_of_file
from paperfetch.outcomes import Status
from paperfetch.validate import check_pdf_file

__all__ = ["rebuild_from_files"]

logger = logging.getLogger("paperfetch.ledger")


def rebuild_from_files(ledger: ResumeLedger, identifiers: Iterable[Identifier], out_dir: Path, template: str) -> int:
    """Record as ``downloaded`` each identifier with no row yet whose valid PDF is in *out_dir*; the number recorded."""
    recorded = 0
    for identifier in identifiers:
        if identifier.key in ledger:
            continue
        path = Path(out_dir) / filename_for(identifier, template)
        try:
            if not path.is_file() or not check_pdf_file(path).ok:
                continue
            size, sha256 = path.stat().st_size, sha256_of_file(path)
        except OSError:
            continue
        ledger.record(identifier.key, status=Status.DOWNLOADED.value, path=path, bytes=size, sha256=sha256,
                      source="rebuilt", extra={"rebuilt_from_file": True})
        recorded += 1
    if recorded:
        logger.warning("ledger: %d row(s) rebuilt from the PDFs in %s (size and SHA-256 recomputed)", recorded, out_dir)
    return recorded
