"""The ``choicebox`` command line: one module per command, each registering its subparser.

The command modules import their engines inside their handlers, so ``choicebox rules list`` does
not pay for what ``choicebox grade`` needs.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from . import audit, compare, explain, grade, gym, report, rules, serve

__all__ = ["build_parser", "main", "run"]


class _Version(argparse.Action):
    """``--version``, reading the version only when asked (``choicebox.__version__`` is lazy)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        import choicebox  # noqa: PLC0415  the root is imported already; this reads its version

        sys.stdout.write(f"choicebox {choicebox.__version__}\n")  # stdout, as argparse's own
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="choicebox", description="Grade multiple-choice answers of language models."
    )
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in (grade, compare, report, rules, serve, gym, audit, explain):
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        try:
            status = _dispatch(argv)
        finally:
            sys.stdout.flush()  # a reader that went away shows here, not at interpreter exit
    except BrokenPipeError:
        # `choicebox rules list --json | head`: the reader has all it wants. End quietly, with the
        # status of a command killed by SIGPIPE; whatever is still buffered goes nowhere.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.dup2(devnull, sys.stderr.fileno())
        return 128 + signal.SIGPIPE
    return status


def run() -> NoReturn:
    """The ``choicebox`` executable and ``python -m choicebox``: ``main``, then the exit.

    At exit the interpreter's last collection looks at every object still alive (the modules'
    classes, patterns and functions: 12-15 ms after ``choicebox grade`` here, for a process
    that is ending). Frozen first, they are left out of it; the exit is otherwise the usual one
    (``atexit`` handlers, threads, modules torn down). ``main`` itself freezes nothing, for the
    programs that call it in process.
    """
    status = main()
    gc.freeze()
    sys.exit(status)


def _dispatch(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Any = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    result: int = handler(args)
    return result
