"""The ``choicebox`` command line: one module per command, each registering its subparser."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__

__all__ = ["main", "positive_int"]

Handler = Callable[[argparse.Namespace], int]


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (workers, sizes)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    from . import _cmd_audit, _cmd_grade, _cmd_report, _cmd_rules, _cmd_serve

    parser = argparse.ArgumentParser(
        prog="choicebox", description="Grade multiple-choice answers of language models."
    )
    parser.add_argument("--version", action="version", version=f"choicebox {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in (_cmd_grade, _cmd_report, _cmd_rules, _cmd_serve, _cmd_audit):
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Any = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    result: int = handler(args)
    return result
