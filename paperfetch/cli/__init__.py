"""The ``paperfetch`` command: ``download`` for scripts and cron jobs, ``config`` to see the settings,
``demo`` for a first look, and the research commands ``search``, ``references``, ``citations`` and
``cache clear``. Also ``python -m paperfetch``; the console script is ``paperfetch.cli:main``.

Exit status (docs/cli.md):

* 0 — every paper finished well (``downloaded`` or ``already_downloaded``); also ``--help``, ``--version``, bare ``paperfetch``;
* 1 — the run completed but some papers did not (any other status);
* 2 — a usage error, always found before any request is sent;
* 130 — interrupted (Ctrl-C), after the partial report and failed list are written;
* 143 — terminated (SIGTERM: ``timeout``, systemd, SLURM, ``kill``), handled as Ctrl-C.

Every line printed and every file written passes through :func:`paperfetch.redact.redact_text`.

The package, one room per job:

* :mod:`~paperfetch.cli.app` — the parser and :func:`main`;
* :mod:`~paperfetch.cli.common` — what the commands share (exit statuses, :class:`UsageError` and the
  one ``ConfigurationError`` → ``UsageError`` mapping, options, output, checks, report files);
* one module per command group: :mod:`~paperfetch.cli.download`, :mod:`~paperfetch.cli.config`,
  :mod:`~paperfetch.cli.demo`, :mod:`~paperfetch.cli.research` (``search``, ``references``,
  ``citations``, ``cache``).

This module is the import face only: what ``paperfetch.cli`` exported before it became a package.
"""

from __future__ import annotations

from paperfetch.cli.app import main
from paperfetch.cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
    INTERRUPTED,
    OK_STATUSES,
    REPORT_FORMATS,
    RESULT_COLUMNS,
    UsageError,
    common_options,
    write_report,
)

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
