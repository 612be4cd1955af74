"""The ``paperfetch`` command's import face (docs/cli.md); everything printed or written is redacted."""

from __future__ import annotations

from paperfetch.cli.app import main
from paperfetch.cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
    INTERRUPTED,
    REPORT_FORMATS,
    RESULT_COLUMNS,
    UsageError,
    common_options,
    write_report,
)
from paperfetch.outcomes import FINISHED_WELL_STATUSES as OK_STATUSES  # the statuses that make the exit status 0

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "INTERRUPTED",
    "OK_STATUSES",
    "REPORT_FORMATS",
    "RESULT_COLUMNS",
    "UsageError",
    "common_options",
    "main",
    "write_report",
]
