"""The ``paperfetch`` parser and :func:`main`, which turns errors into exit statuses (docs/cli.md, "Other subcommands")."""

from __future__ import annotations

import argparse
import logging
import re
import sys
from typing import Any, Callable, Sequence

from paperfetch._version import __version__
from paperfetch.cli import config, demo, download, research, text
from paperfetch.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    HostWarnings,
    UsageError,
    interrupted_exit,
    interrupted_word,
    say,
    sigterm_as_interrupt,
    stdout_gone,
)
from paperfetch.suggest import did_you_mean

__all__ = ["COMMANDS", "build_parser", "main"]

#: The exit status of a command whose reader closed its stdout: 128 + SIGPIPE, as a Unix tool's.
_EXIT_SIGPIPE = 141

#: The registration of each command group, in the order ``paperfetch --help`` lists them.
COMMANDS: tuple[Callable[[Any], None], ...] = (
    download.add_subcommands,  # download
    config.add_subcommands,  # config
    demo.add_subcommands,  # demo
    research.add_subcommands,  # search, references, citations, cache clear
    text.add_subcommands,  # text
)


class _Parser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are one line, as the commands' own are (``paperfetch download:
    argument --workers: invalid int value: 'abc' (paperfetch download --help)``); exit status 2."""

    def error(self, message: str) -> Any:
        say(f"{self.prog}: {message}{self._suggestion(message)} ({self.prog} --help)", err=True)
        raise SystemExit(EXIT_USAGE)

    def _suggestion(self, message: str) -> str:
        """``" (did you mean 'download'?)"`` for a mistyped subcommand, choice or flag (the flags of every
        subcommand: an unknown one is found by the top parser); ``""`` when nothing is near."""
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if choice is not None:
            return did_you_mean(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
        unknown = re.search(r"unrecognized arguments: (\S+)", message)
        if unknown is None or not unknown.group(1).startswith("--"):
            return ""
        children = getattr(self, "subcommands", None)  # the top parser's (one level: no subcommand has its own)
        parsers = [self, *(children.choices.values() if children is not None else [])]
        flags = {flag for parser in parsers for flag in re.findall(r"--[\w-]+", parser.format_usage())}
        return did_you_mean(unknown.group(1).split("=", 1)[0], sorted(flags))

    def add_subparsers(self, **options: Any) -> Any:
        self.subcommands = super().add_subparsers(**options)
        return self.subcommands


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="paperfetch", description="Polite retrieval of legal open-access full texts.",
        epilog="exit status: 0 all papers finished well, 1 some did not, 2 usage error, 130 interrupted (Ctrl-C), "
               "143 terminated (SIGTERM)",
    )
    parser.add_argument("--version", action="version", version=f"paperfetch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in COMMANDS:
        register(sub)
    return parser


def _setup_logging(args: argparse.Namespace) -> None:
    """The command is an application: it configures logging (the library never does)."""
    from paperfetch.log import enable_logging

    if args.quiet:
        enable_logging(logging.ERROR)
    else:
        enable_logging({0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG))


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``paperfetch`` with *argv* (default ``sys.argv[1:]``); the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help / --version
        return int(exc.code or 0)
    handler = getattr(args, "handler", None)
    if handler is None:  # bare ``paperfetch``
        parser.print_help()
        return EXIT_OK
    from tqdm.contrib.logging import logging_redirect_tqdm

    package = logging.getLogger("paperfetch")
    saved = (package.level, list(package.handlers))
    _setup_logging(args)
    # -v shows every warning; without it, those of hosts that could not be reached end as one line
    held = HostWarnings(hold_unreachable=not args.verbose)
    try:
        with sigterm_as_interrupt(), logging_redirect_tqdm(loggers=[package]):
            for h in package.handlers:  # the handlers the redirect put in place
                h.addFilter(held)
            try:
                return int(handler(args))
            finally:
                for line in held.summary():
                    say(f"paperfetch: {line}", err=True)
    except UsageError as exc:
        say(f"paperfetch: {exc}", err=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        say(f"paperfetch: {interrupted_word()}", err=True)
        return interrupted_exit()
    except BrokenPipeError:  # stdout closed by its reader (``| head``): end quietly, as Unix tools do
        stdout_gone()
        return _EXIT_SIGPIPE
    finally:  # main() called in-process (tests, a wrapper script) leaves logging as it found it
        package.setLevel(saved[0])
        for extra in [h for h in package.handlers if h not in saved[1]]:
            package.removeHandler(extra)
        for kept in package.handlers:
            kept.removeFilter(held)
