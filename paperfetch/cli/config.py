"""``paperfetch config``: the effective settings (secrets masked), every one a run uses, the transport's too, and
where each came from (:func:`paperfetch.settings.load_settings` reads them; this module only shows them).
"""

from __future__ import annotations

import argparse
import warnings
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Mapping

from paperfetch.cli.common import EXIT_OK, common_options, configuration_is_usage, identity_options, say, settings_from

if TYPE_CHECKING:  # pragma: no cover
    from paperfetch.http.pools import Pool
    from paperfetch.settings import Settings

__all__ = ["add_subcommands", "run"]


def add_subcommands(sub: Any) -> None:
    cfg = sub.add_parser("config", parents=[common_options()], help="show the effective settings and where each came from",
                         description="Show the effective settings (secrets masked) and where each came from: "
                                     "argument > environment > config file > default.")
    identity_options(cfg)
    cfg.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """The ``config`` handler: the settings, one a line, and what is skipped without an e-mail."""
    from paperfetch.http.status import shown_hosts
    from paperfetch.settings import TRANSPORT_SETTING_NAMES
    from paperfetch.sources import SOURCES

    headers = {TRANSPORT_SETTING_NAMES[0]: "transport (every request of a run):",
               "hosts.": "hosts (one rule each; a pool is host#pool):"}

    settings = settings_from(args)
    path = settings.config_path
    state = "found" if path is not None and path.is_file() else "not found"
    say(f"config file: {path} ({state})")
    rows, pools = _rows(settings)
    hosts = [name[6:] for name, _, _ in rows if name.startswith("hosts.")]
    # a pool by the label its declaration gave: api.crossref.org (list queries)
    shown = dict(zip(hosts, shown_hosts(hosts, pools)))
    rows = [(f"hosts.{shown[name[6:]]}" if name.startswith("hosts.") else name, value, origin) for name, value, origin in rows]
    width = max(len(name) for name, _, _ in rows)
    value_width = min(max(len(value) for _, value, _ in rows), 40)
    for name, value, origin in rows:
        header = headers.pop(name if name in headers else name[:6], None)
        if header is not None:
            say(header)
        say(f"  {name:<{width}}  {value:<{value_width}}  {origin}")
    if not settings.email:
        skipped = [name for name, cls in SOURCES.items() if cls.requires_email]
        say(f"no contact e-mail: {', '.join(skipped)} will be skipped (set --email, PAPERFETCH_EMAIL or email in the file)")
    return EXIT_OK


def _rows(settings: Settings) -> tuple[list[tuple[str, str, str]], Mapping[str, tuple[Pool, ...]]]:
    """The rows a run uses: the run options as given, the transport as the Retriever makes it from them and its
    sources (each service's interval, pools and windows, ``the sources``), built without a request or a file
    (the host state in memory, no cache); ``verbosity`` is the command's own (it logs by -v and -q). With them,
    that transport's pools (whose labels name a pool's rows)."""
    import logging

    from paperfetch.retriever import Retriever
    from paperfetch.settings import OPTION_NAMES

    package = logging.getLogger("paperfetch")
    level = package.level
    package.setLevel(logging.ERROR)  # the missing e-mail is said below, once
    try:
        with warnings.catch_warnings(), configuration_is_usage():
            warnings.simplefilter("ignore")
            with Retriever(settings=replace(settings, state="memory"), cache=False, progress=False) as retriever:
                run = retriever.settings.rows()
                pools = retriever.settings.transport.pools
    finally:
        package.setLevel(level)
    own = {name: (name, value, origin) for name, value, origin in settings.rows() if name in OPTION_NAMES}
    return [own.get(name, (name, value, "the command (-v, -q)" if name == "verbosity" else origin))
            for name, value, origin in run], pools
