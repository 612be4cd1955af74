"""The research subcommands' old address; new code imports from :mod:`paperfetch.cli.research`."""

from __future__ import annotations

from paperfetch.cli.research import add_subcommands

__all__ = ["add_subcommands"]
