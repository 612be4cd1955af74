"""Part files (``.paperfetch-part-<name>`` beside the destination, held under ``flock``: one writer per file)
that a crash cannot leave behind for good: :func:`sweep_stale_parts` removes those no live process holds.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

__all__ = ["PART_PREFIX", "PartClaim", "part_file", "part_path", "sweep_stale_parts"]

logger = logging.getLogger("paperfetch.parts")

#: Every part file's name starts with this.
PART_PREFIX = ".paperfetch-part-"


@dataclass
class PartClaim:
    """An open, locked part file for one destination."""

    path: Path
    handle: BinaryIO
    waited: bool  #: another writer held this destination first; it has finished (or given up) since

    def commit(self, dest: Path) -> None:
        """Flush, sync and rename the part file onto *dest* (still under the lock)."""
        self.handle.flush()
        os.fsync(self.handle.fileno())
        os.replace(self.path, dest)


def part_path(dest: str | os.PathLike[str]) -> Path:
    dest = Path(dest)
    return dest.parent / f"{PART_PREFIX}{dest.name}"


@contextmanager
def part_file(dest: str | os.PathLike[str]) -> Iterator[PartClaim]:
    """Claim, open (truncated) and lock the part file of *dest*; removed on exit unless committed."""
    path = part_path(dest)
    waited = False
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                waited = True
                fcntl.flock(fd, fcntl.LOCK_EX)  # another writer: wait for it to finish
            if _same_file(fd, path):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # renamed onto its destination or swept while we waited: claim a fresh one
    os.ftruncate(fd, 0)
    handle = os.fdopen(fd, "w+b")
    claim = PartClaim(path, handle, waited)
    try:
        yield claim
    finally:
        try:
            if _same_file(handle.fileno(), path):
                path.unlink(missing_ok=True)  # not committed: a failure leaves nothing behind
        finally:
            handle.close()  # releases the lock


def sweep_stale_parts(out_dir: str | os.PathLike[str]) -> list[Path]:
    """Remove the part files in *out_dir* no live process holds (no other file); returns what was removed."""
    folder = Path(out_dir)
    try:
        names = [entry.name for entry in os.scandir(folder) if entry.name.startswith(PART_PREFIX)]
    except FileNotFoundError:
        return []
    removed = [folder / name for name in names if _remove_if_unlocked(folder / name)]
    if removed:
        logger.info("removed %d stale part file(s) in %s", len(removed), folder)
    return removed


def _remove_if_unlocked(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a live writer holds it
        if not _same_file(fd, path):
            return False
        path.unlink()
        return True
    finally:
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False
