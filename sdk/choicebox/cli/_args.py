"""Argument types shared by several commands (a leaf module: it imports nothing of choicebox)."""

from __future__ import annotations

import argparse
import math

__all__ = ["add_rules_dir", "nonnegative_int", "positive_float", "positive_int"]


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (workers, sizes)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def nonnegative_int(text: str) -> int:
    """An argparse type: a whole number of at least 0 (retries, a sample size)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number above 0 (seconds)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def add_rules_dir(parser: argparse.ArgumentParser) -> None:
    """``--rules-dir D`` (repeatable, into ``args.rules_dir``): the commands that grade all load
    extra rule files the same way."""
    parser.add_argument(
        "--rules-dir",
        metavar="D",
        action="append",
        default=[],
        help="a directory of extra rule files (repeatable)",
    )
