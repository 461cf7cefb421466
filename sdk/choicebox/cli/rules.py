"""``choicebox rules``: list the grading modes, check rule files, run their embedded examples.

* ``choicebox rules list [--rules-dir DIR] [--json]``: mode ids and descriptions.
* ``choicebox rules check DIR``: exit 0 when every rule file of DIR loads, else 1 with the error
  located at ``file:line:column``.
* ``choicebox rules test [DIR]``: run the embedded examples of the built-in modes (or of DIR's
  modes), print each failure, exit 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from choicebox._errors import ChoiceboxError
from choicebox._modes import GradingMode, ModeRegistry, default_registry
from choicebox.cli._args import add_rules_dir

if TYPE_CHECKING:
    from choicebox.testing import ExampleResult

__all__ = ["register"]


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "rules",
        help="list grading modes, check rule files, run their embedded examples",
        description="Grading modes and rule files.",
    )
    parser.set_defaults(handler=lambda args: _usage(parser))
    sub = parser.add_subparsers(dest="rules_command", metavar="SUBCOMMAND")

    listing = sub.add_parser("list", help="the grading modes, with their descriptions")
    add_rules_dir(listing)
    listing.add_argument("--json", action="store_true", help="print JSON instead of text")
    listing.set_defaults(handler=_list)

    check = sub.add_parser("check", help="check that every rule file of DIR loads")
    check.add_argument("directory", metavar="DIR")
    check.set_defaults(handler=_check)

    test = sub.add_parser(
        "test", help="run the embedded examples of the built-in modes, or of DIR's modes"
    )
    test.add_argument("directory", metavar="DIR", nargs="?")
    test.set_defaults(handler=_test)


# What loading a rule directory may raise on bad input: a located RuleFileError (the YAML reader
# wraps every YAML and decoding problem in one), or a directory that cannot be listed.
_LOAD_ERRORS = (ChoiceboxError, OSError)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _load_error(exc: Exception) -> int:
    print(f"error: {exc}", file=sys.stderr)
    return 1


def _list(args: argparse.Namespace) -> int:
    try:
        registry = default_registry(tuple(args.rules_dir))
    except _LOAD_ERRORS as exc:
        return _load_error(exc)
    modes = list(registry)
    if args.json:
        rows = [
            {
                "id": mode.id,
                "description": mode.description,
                "builtin": registry.is_builtin(mode.id),
                "source": mode.source,
                "extends": mode.extends,
                "resolve": mode.resolve,
                "steps": [entry.id for entry in mode.chain],
                "examples": len(mode.examples),
            }
            for mode in modes
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    width = max((len(mode.id) for mode in modes), default=0)
    for mode in modes:
        marker = "" if registry.is_builtin(mode.id) else f"  [{mode.source}]"
        print(f"{mode.id.ljust(width)}  {mode.description}{marker}")
    return 0


def _load_directory(directory: str) -> tuple[ModeRegistry, list[GradingMode]]:
    registry = ModeRegistry.with_builtins()
    added = registry.add_directory(directory)
    return registry, added


def _check(args: argparse.Namespace) -> int:
    try:
        _, added = _load_directory(args.directory)
    except _LOAD_ERRORS as exc:
        return _load_error(exc)
    names = ", ".join(mode.id for mode in added) or "(none)"
    print(f"ok: {len(added)} mode(s) in {args.directory}: {names}")
    return 0


def _report(results: Sequence[ExampleResult]) -> int:
    failed = [result for result in results if not result.passed]
    for result in failed:
        print(result.describe())
    modes = len({result.mode for result in results})
    print(f"{len(results)} example(s) in {modes} mode(s): {len(failed)} failed")
    return 1 if failed else 0


def _test(args: argparse.Namespace) -> int:
    if args.directory is None:
        registry = ModeRegistry.with_builtins()
        modes = [mode for mode in registry if registry.is_builtin(mode.id)]
    else:
        try:
            registry, modes = _load_directory(args.directory)
        except _LOAD_ERRORS as exc:
            return _load_error(exc)
    from choicebox.testing import run_mode_examples  # noqa: PLC0415  only `rules test` runs them

    results: list[ExampleResult] = []
    for mode in sorted(modes, key=lambda m: m.id):
        results.extend(run_mode_examples(mode, registry=registry))
    return _report(results)
