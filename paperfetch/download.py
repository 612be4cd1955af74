"""An item's file: what to do about it (:func:`download_action`) before any request; the stream that writes
it is the transport's (:mod:`paperfetch.http.files`).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Callable

from paperfetch.http.files import write_error
from paperfetch.validate import check_pdf_file

__all__ = ["FileAction", "download_action", "existing_file_action", "write_error"]


class FileAction(str, Enum):
    """What to do about an item's file (:func:`download_action`)."""

    #: keep the PDF on disk; nothing is requested (the row says ``already_downloaded``)
    REUSE = "reuse"
    #: the ledger's recorded outcome stands (the services called the item absent); nothing is requested
    RECORDED = "recorded"
    #: ask the sources and download
    FETCH = "fetch"


def download_action(
    *,
    resume: bool,
    done: bool | Callable[[], bool] = False,
    final: bool = False,
    on_disk: bool | None = None,
    fresh: bool = False,
) -> FileAction:
    """Decide what to do about an item's file, before any request. *done*: the ledger vouches for the file
    (a callable, asked only when it matters); *final*: its outcome is not worth retrying; *on_disk*: a valid
    PDF lies under the destination (None: not looked at); *fresh*: written during this run (or we waited for its writer)."""
    if on_disk is False:
        return FileAction.FETCH
    if on_disk and fresh:
        return FileAction.REUSE
    if resume and (done() if callable(done) else done):
        return FileAction.REUSE
    if resume and final:
        return FileAction.RECORDED
    return FileAction.FETCH


def existing_file_action(
    dest: Path, *, waited: bool, run_started: float, resume: bool, done: bool | Callable[[], bool]
) -> FileAction:
    """:func:`download_action` for the file under *dest* once its part file is ours (*run_started* an epoch)."""
    try:
        recent = dest.stat().st_mtime >= run_started
    except OSError:
        recent = None  # no file
    on_disk = recent is not None and check_pdf_file(dest).ok
    return download_action(resume=resume, done=done, on_disk=on_disk, fresh=waited or bool(recent))
