"""The transport's file writing: a response's body streamed atomically into its destination
(:func:`stream_to_file`), its digest, the typed error of a failed local write. No ledger, no decision about
whether to fetch (that is :func:`paperfetch.download.download_action`).
"""

from __future__ import annotations

import errno
import hashlib
import os
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import requests

from paperfetch import defaults
from paperfetch.errors import DiskFull, DownloadTooLarge, Stopped, TruncatedDownload, WriteError
from paperfetch.http.limits import iter_limited
from paperfetch.log import file_mode
from paperfetch.parts import PartClaim, part_file

__all__ = ["DownloadResult", "file_digest", "stream_to_file", "write_error"]

#: errno values of a full disk (or quota) ...
_FULL_ERRNOS = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG})
#: ... and of any other local write that cannot succeed (never a network fault)
_WRITE_ERRNOS = _FULL_ERRNOS | frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO, errno.EISDIR,
                                          errno.ENOTDIR, errno.ENAMETOOLONG})


def write_error(exc: BaseException, dest: Path, *, url: str | None = None) -> WriteError | None:
    """The typed error of a failed local write to *dest*, or None (``requests`` errors are never write errors)."""
    if isinstance(exc, WriteError):
        return exc
    if not isinstance(exc, OSError) or isinstance(exc, requests.RequestException) or exc.errno not in _WRITE_ERRNOS:
        return None
    folder = dest.parent
    reason = exc.strerror or str(exc)
    if exc.errno in _FULL_ERRNOS:
        return DiskFull(f"cannot write {dest.name} to {folder}: the disk is full ({reason})", path=str(dest),
                        errno=exc.errno, url=url)
    return WriteError(f"cannot write {dest.name} to {folder}: {reason}", path=str(dest), errno=exc.errno, url=url)



@dataclass(frozen=True)
class DownloadResult:
    """A body saved under its final name."""

    path: Path
    bytes: int
    sha256: str
    url: str            #: the final URL after redirects, redacted
    status_code: int
    content_type: str | None
    attempts: int
    waited_s: float
    reused: bool = False  #: another process wrote this file while we waited for it; nothing was requested


def file_digest(path: Path) -> tuple[int, str]:
    """(size, sha256 hex) of the file at *path*, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            size += len(block)
            digest.update(block)
    return size, digest.hexdigest()


def stream_to_file(
    response: requests.Response,
    dest: Path,
    *,
    shown: str,
    validate: Callable[[bytes, requests.Response], None] | None = None,
    max_bytes: int | None = None,
    chunk_size: int = defaults.DOWNLOAD_CHUNK_BYTES,
    validate_bytes: int = defaults.DOWNLOAD_VALIDATE_BYTES,
    should_stop: Callable[[], bool] | None = None,
    part: PartClaim | None = None,
) -> tuple[Path, int, str]:
    """Write *response*'s body to *dest* atomically; returns (path, size, sha256 hex). ``validate(first_bytes,
    response)`` may reject it; ``should_stop()``, asked each chunk, ends it with Stopped and no file. *part*
    is the caller's claim on the part file; *max_bytes* counts decoded bytes."""
    expected = None
    if (response.headers.get("Content-Encoding") or "identity").lower() == "identity":
        try:
            expected = int(response.headers["Content-Length"])
        except (KeyError, ValueError):
            expected = None
    if max_bytes is not None and expected is not None and expected > max_bytes:
        raise DownloadTooLarge(
            f"{shown} announces {expected:,} bytes, over the limit of {max_bytes:,}",
            status_code=response.status_code, url=shown, response=response,
        )
    try:
        return _stream(response, dest, shown=shown, validate=validate, max_bytes=max_bytes, chunk_size=chunk_size,
                       validate_bytes=validate_bytes, should_stop=should_stop, part=part, expected=expected)
    except OSError as exc:
        mapped = write_error(exc, dest, url=shown)
        if mapped is None or mapped is exc:
            raise
        raise mapped from None  # the OS error's text is in the message; no chained traceback of our internals


def _stream(
    response: requests.Response,
    dest: Path,
    *,
    shown: str,
    validate: Callable[[bytes, requests.Response], None] | None,
    max_bytes: int | None,
    chunk_size: int,
    validate_bytes: int,
    should_stop: Callable[[], bool] | None,
    part: PartClaim | None,
    expected: int | None,
) -> tuple[Path, int, str]:
    with ExitStack() as stack:
        claim = part if part is not None else stack.enter_context(part_file(dest))
        handle = claim.handle
        handle.seek(0)
        handle.truncate()  # an earlier attempt's bytes are not this body's
        os.fchmod(handle.fileno(), file_mode())  # a saved PDF is readable as the umask allows
        digest = hashlib.sha256()
        size = 0
        head = bytearray()
        validated = validate is None
        limit = max_bytes + 1 if max_bytes is not None else 1 << 62  # the size message below stays ours
        deadline = getattr(response, "paperfetch_deadline", None)
        for chunk in iter_limited(response, max_bytes=limit, deadline=deadline, chunk_size=chunk_size, url=shown):
            if should_stop is not None and should_stop():
                raise Stopped(f"stopped while downloading {shown}")
            if not chunk:
                continue
            size += len(chunk)
            if max_bytes is not None and size > max_bytes:
                raise DownloadTooLarge(
                    f"{shown} is larger than the limit of {max_bytes:,} bytes",
                    status_code=response.status_code, url=shown, response=response,
                )
            if not validated:
                head.extend(chunk)
                if len(head) >= validate_bytes:
                    validate(bytes(head), response)  # type: ignore[misc]
                    validated = True
            digest.update(chunk)
            handle.write(chunk)
        if not validated:
            validate(bytes(head), response)  # type: ignore[misc]
        if expected is not None and size != expected:
            raise TruncatedDownload(
                f"{shown} ended after {size:,} of {expected:,} bytes",
                status_code=response.status_code, url=shown, response=response,
            )
        claim.commit(dest)  # the whole body is here: flushed, synced, renamed onto dest
    return dest, size, digest.hexdigest()
