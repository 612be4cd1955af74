"""Streaming a response body to its file: a temporary file beside it, the SHA-256, validation,
the length checks, then an atomic rename. Nothing is left under the destination unless it is
complete, and no temporary file survives a failure (or an interruption)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import requests

from paperfetch.errors import DownloadTooLarge, Stopped, TruncatedDownload
from paperfetch.log import file_mode

__all__ = ["DownloadResult", "stream_to_file"]


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


def stream_to_file(
    response: requests.Response,
    dest: Path,
    *,
    shown: str,
    validate: Callable[[bytes, requests.Response], None] | None = None,
    max_bytes: int | None = None,
    chunk_size: int = 64 * 1024,
    validate_bytes: int = 2048,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[Path, int, str]:
    """Write *response*'s body to *dest* atomically; returns (path, size, sha256 hex).

    ``validate(first_bytes, response)`` may raise to reject the body (it sees the first
    *validate_bytes*, or the whole body if shorter). ``should_stop()`` is asked before each
    chunk; when it says so the download ends with :class:`~paperfetch.errors.Stopped` and no file.
    """
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
    digest = hashlib.sha256()
    size = 0
    head = bytearray()
    validated = validate is None
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    os.fchmod(fd, file_mode())  # mkstemp makes 0600; a saved PDF is readable as the umask allows
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in response.iter_content(chunk_size):
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
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, dest)  # the whole body is here: finishing it is quicker than throwing it away
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dest, size, digest.hexdigest()
