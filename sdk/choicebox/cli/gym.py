"""``choicebox gym``: serve as the NeMo Gym resources server Gym itself starts.

Gym runs a resources server's ``app.py`` with its config in ``$NEMO_GYM_CONFIG_DICT`` and
``$NEMO_GYM_CONFIG_PATH``; ``examples/nemo_gym/resources_servers/choicebox_mcqa/app.py`` runs
this command (through ``python -m choicebox.gym``), which reads them (``host``, ``port``,
``grading_mode``, ...) and runs ``choicebox serve`` with them.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from choicebox._errors import ChoiceboxError
from choicebox.cli.serve import register as register_serve

__all__ = ["register"]


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "gym",
        help="serve as a NeMo Gym resources server (run by Gym, which passes its config)",
        description=(
            "Read this server's settings from NeMo Gym's $NEMO_GYM_CONFIG_DICT and "
            "$NEMO_GYM_CONFIG_PATH (host, port, grading_mode, rules_dirs, regex_timeout, "
            "max_body_bytes, num_workers) and serve there, as `choicebox serve` does."
        ),
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="check the config (and the grading mode and rule files it names), serve nothing",
    )
    parser.set_defaults(handler=_gym)


def _gym(args: argparse.Namespace) -> int:
    from choicebox.server import create_app, load_gym_config  # noqa: PLC0415  loaded when the command runs, so the CLI starts fast

    try:
        config = load_gym_config(os.environ)
        if args.check or config.dry_run:
            create_app(mode=config.grading_mode, rules_dirs=config.rules_dirs)
            print(f"choicebox gym: {config.name} would serve on {config.host}:{config.port}")
            return 0
    except (ChoiceboxError, OSError) as exc:
        print(f"choicebox gym: {exc}", file=sys.stderr)
        return 2
    # `choicebox serve` itself, so Gym gets the same server, checks and limits.
    parser = argparse.ArgumentParser(prog="choicebox")
    register_serve(parser.add_subparsers())
    serve_args = parser.parse_args(["serve", *config.serve_arguments()])
    result: int = serve_args.handler(serve_args)
    return result
