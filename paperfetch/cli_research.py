"""Where ``paperfetch``'s research subcommands were importable before :mod:`paperfetch.cli` became a
package: a re-export of :func:`paperfetch.cli.research.add_subcommands` (``search``, ``references``,
``citations``, ``cache clear``). New code imports from :mod:`paperfetch.cli.research`.
"""

from __future__ import annotations

from paperfetch.cli.research import add_subcommands

__all__ = ["add_subcommands"]
