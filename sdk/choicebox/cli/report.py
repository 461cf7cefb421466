"""``choicebox report``: the HTML report of a metrics file that ``choicebox grade`` wrote."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from choicebox._errors import ReportError, located
from choicebox.metrics import AGGREGATE_SUFFIX, FAILURES_SUFFIX

__all__ = ["register"]


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "report",
        help="write the HTML report of a metrics file",
        description=(
            "Render <stem>_aggregate_metrics.json (and the <stem>_failure_analysis.json beside "
            "it, when present) as a self-contained HTML page."
        ),
    )
    parser.add_argument("metrics", metavar="METRICS.json", help="an aggregate metrics file")
    parser.add_argument("-o", "--output", metavar="REPORT.html", help="default: METRICS.html")
    parser.add_argument("--title", default="choicebox report")
    parser.set_defaults(handler=_run)


def _read(path: Path) -> Any:
    return orjson.loads(path.read_bytes())


def _not_json(path: Path, exc: orjson.JSONDecodeError) -> str:
    lines = exc.doc.splitlines() if isinstance(exc.doc, str) else []
    shown = lines[exc.lineno - 1] if 0 < exc.lineno <= len(lines) else None
    message = f"invalid JSON: {exc.msg}"
    return located(message, path=str(path), line=exc.lineno, column=exc.colno, source_line=shown)


def _run(args: argparse.Namespace) -> int:
    source = Path(args.metrics)
    try:
        document = _read(source)
    except OSError as exc:
        print(f"choicebox report: {source}: cannot read: {exc.strerror}", file=sys.stderr)
        return 2
    except orjson.JSONDecodeError as exc:
        print(f"choicebox report: {_not_json(source, exc)}", file=sys.stderr)
        return 2
    if not isinstance(document, dict):
        print(f"choicebox report: {source}: not a metrics object", file=sys.stderr)
        return 2
    if "failure_analysis" not in document and source.name.endswith(AGGREGATE_SUFFIX):
        failures = source.with_name(source.name[: -len(AGGREGATE_SUFFIX)] + FAILURES_SUFFIX)
        if failures.exists():
            try:
                document["failure_analysis"] = _read(failures)
            except OSError as exc:
                print(f"choicebox report: skipping {failures}: {exc.strerror}", file=sys.stderr)
            except orjson.JSONDecodeError as exc:
                print(f"choicebox report: skipping {_not_json(failures, exc)}", file=sys.stderr)
    output = Path(args.output) if args.output else source.with_suffix(".html")
    from choicebox.metrics.report import write_report  # noqa: PLC0415  the CLI's other commands need not load it (~40 ms)

    try:
        write_report(document, output, title=args.title)
    except ReportError as exc:  # the document, not the output, is at fault
        print(f"choicebox report: {source}: {exc}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"choicebox report: cannot write {output}: {exc}", file=sys.stderr)
        return 2
    print(f"report: {output}", file=sys.stderr)
    return 0
