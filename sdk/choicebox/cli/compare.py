"""``choicebox compare``: where two gradings of one file differ, before switching between them."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from choicebox._errors import RuleFileError, UnknownModeError
from choicebox.cli._args import add_rules_dir, positive_int

__all__ = ["register"]


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "compare",
        help="compare two gradings of a file: recorded verdicts or a mode, against a mode",
        description=(
            "Grade every row of INPUT twice and show where the verdicts differ: a table of "
            "(before, after) verdict pairs with counts, the accuracy change with its 95% "
            "interval (a paired bootstrap over rows) and McNemar's exact test, and exemplars "
            "with the end of the model's output. A side is 'recorded' (the reward and "
            "extracted_answer already in the file, as Gym's mcqa server wrote them), 'row' "
            "(choicebox, each row's own grading_mode) or a mode name."
        ),
    )
    parser.add_argument("input", metavar="INPUT.jsonl", help="rollouts with responses")
    parser.add_argument(
        "--before",
        default="recorded",
        metavar="SIDE",
        help="recorded (default), row, or a grading mode",
    )
    parser.add_argument(
        "--after", default="row", metavar="SIDE", help="row (default), recorded, or a grading mode"
    )
    add_rules_dir(parser)
    parser.add_argument(
        "--exemplars",
        metavar="N",
        type=positive_int,
        default=3,
        help="rows shown for each kind of change (default 3)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="the bootstrap's seed (default 0)"
    )
    parser.add_argument("--html", metavar="PAGE.html", help="also write the comparison as a page")
    parser.set_defaults(handler=_compare)


def _compare(args: argparse.Namespace) -> int:
    from choicebox.compare import compare_file, render_html, render_text  # noqa: PLC0415  loaded when the command runs, so the CLI starts fast
    from choicebox.metrics.report import write_page  # noqa: PLC0415  same reason

    try:
        comparison = compare_file(
            args.input,
            before=args.before,
            after=args.after,
            rules_dirs=tuple(args.rules_dir),
            exemplars=args.exemplars,
            seed=args.seed,
        )
    except (UnknownModeError, RuleFileError, OSError) as exc:
        print(f"choicebox compare: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render_text(comparison))
    if args.html:
        try:
            write_page(render_html(comparison), args.html)
        except OSError as exc:
            print(f"choicebox compare: cannot write {args.html}: {exc}", file=sys.stderr)
            return 2
        print(f"page: {args.html}")
    return 0
