"""``choicebox grade``."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser("grade", help="(not yet available)")
    parser.set_defaults(handler=lambda args: 2)
