"""Logging the way a library should (docs/politeness.md, "Events and logging"), and the mode of files written."""

from __future__ import annotations

import logging
import os
import sys
from typing import IO

from paperfetch.redact import install_log_filter

__all__ = ["disable_logging", "enable_logging", "file_mode"]

_HANDLER_NAME = "paperfetch.enable_logging"


def enable_logging(level: int | str = logging.INFO, stream: IO[str] | None = None) -> logging.Handler:
    """Show paperfetch's records of *level* and above on *stream* (stderr); the handler, replaced on a second call."""
    install_log_filter()
    package = _without_our_handler()
    handler = logging.StreamHandler(stream) if stream is not None else _StderrHandler()
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(logging.Formatter("[paperfetch] %(levelname)s %(name)s: %(message)s"))
    package.addHandler(handler)
    package.setLevel(level)
    return handler


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time of each record (pytest's capture, a redirect …)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr  # under the handler's lock
        super().emit(record)


def disable_logging() -> None:
    """Undo :func:`enable_logging`: remove its handler and give the level back to the logging config."""
    _without_our_handler().setLevel(logging.NOTSET)


def _without_our_handler() -> logging.Logger:
    package = logging.getLogger("paperfetch")
    for handler in list(package.handlers):
        if handler.get_name() == _HANDLER_NAME:
            package.removeHandler(handler)
    return package


def file_mode(base: int = 0o666) -> int:
    """*base* with the process umask applied: the mode ``open()`` would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return base & ~mask
