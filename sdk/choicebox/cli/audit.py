"""``choicebox audit`` and ``choicebox fix``: find defects in a data file, and repair the safe ones."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import IO, Any, Final

__all__ = ["register", "run_audit", "run_fix"]

_SHOWN_CHARS: Final = 60  # before/after texts in a change line are cut to this length


def register(commands: Any) -> None:
    audit: argparse.ArgumentParser = commands.add_parser(
        "audit",
        help="find defects in a JSONL file of multiple-choice samples",
        description=(
            "Check every row of DATA (NeMo Gym mcqa rows or context/choices rows) for defects: "
            "empty or duplicate choices, a gold answer that names no choice, a truncated question, "
            "a prompt whose options differ from `options`, a template regex that does not read "
            "its own answer format, and more (see --list-checks). Nothing is changed. With -o, "
            "one JSON report row per input row; without, one line per finding on stdout. A "
            "summary goes to stderr. Exit status 1 when any finding is an error, else 0."
        ),
    )
    audit.add_argument("data", metavar="DATA.jsonl", nargs="?", help="the samples to audit")
    audit.add_argument("-o", "--output", metavar="REPORT.jsonl", help="write the JSONL report here")
    audit.add_argument(
        "--checks",
        metavar="FILE",
        help="a YAML file of check settings laid over the defaults (see --list-checks)",
    )
    audit.add_argument(
        "--select",
        metavar="ID,ID",
        action="append",
        default=[],
        help="run only these checks (comma-separated, repeatable)",
    )
    audit.add_argument(
        "--ignore",
        metavar="ID,ID",
        action="append",
        default=[],
        help="do not run these checks (comma-separated, repeatable)",
    )
    audit.add_argument("--list-checks", action="store_true", help="describe every check and exit")
    audit.set_defaults(handler=run_audit)

    fix: argparse.ArgumentParser = commands.add_parser(
        "fix",
        help="repair the safe defects of a JSONL file of multiple-choice samples",
        description=(
            "Write DATA to FIXED with safe, deterministic repairs: text tidied (Unicode NFC, "
            "whitespace), a choice's copy of its own letter label stripped, a prompt whose "
            "options drifted from `options` re-rendered from its shipped template. Choices are "
            "never reordered, the gold answer keeps its text, no row is dropped and "
            "extra/metadata are never touched. Rows that cannot be decoded or fixed safely are "
            "written unchanged and reported on stderr. Exit status 0 once FIXED is written."
        ),
    )
    fix.add_argument("data", metavar="DATA.jsonl", help="the samples to fix")
    fix.add_argument(
        "-o", "--output", metavar="FIXED.jsonl", required=True, help="where to write the rows"
    )
    fix.add_argument("-q", "--quiet", action="store_true", help="do not list each change")
    fix.set_defaults(handler=run_fix)


def _ids(values: list[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def run_audit(args: argparse.Namespace) -> int:
    from choicebox.audit import AuditConfig, AuditConfigError, AuditSummary, audit_file  # noqa: PLC0415  loaded when the command runs, so the CLI starts fast

    err = sys.stderr
    try:
        config = AuditConfig.load(args.checks) if args.checks else AuditConfig.default()
        if args.select:
            config = config.select(_ids(args.select))
        if args.ignore:
            config = config.ignore(_ids(args.ignore))
    except AuditConfigError as exc:
        print(f"choicebox audit: {exc}", file=err)
        return 2
    if args.list_checks:
        _list_checks(config, sys.stdout)
        return 0
    if not args.data:
        print("choicebox audit: DATA.jsonl is required (or --list-checks)", file=err)
        return 2
    summary = AuditSummary()
    output = Path(args.output) if args.output else None
    partial = output.with_name(output.name + ".partial") if output is not None else None
    try:
        with (
            open(partial, "w", encoding="utf-8")
            if partial is not None
            else open(os.devnull, "w", encoding="utf-8")
        ) as report:
            for result in audit_file(args.data, config=config):
                summary.add(result)
                if output is not None:
                    report.write(json.dumps(result.to_json(), ensure_ascii=False) + "\n")
                else:
                    for finding in result.findings:
                        print(
                            f"line {result.line}: {finding.severity} {finding.check} "
                            f"[{finding.field}] {finding.message}",
                            file=sys.stdout,
                        )
        if output is not None and partial is not None:
            os.replace(partial, output)
    except OSError as exc:
        print(f"choicebox audit: {exc.filename or args.data}: {exc.strerror or exc}", file=err)
        return 2
    print(summary.render(), file=err)
    if output is not None:
        print(f"report: {output}", file=err)
    return 1 if summary.errors else 0


def _list_checks(config: Any, out: IO[str]) -> None:
    from choicebox.audit import audit_checks  # noqa: PLC0415  loaded when the command runs, so the CLI starts fast

    for info in audit_checks():
        settings = config.checks[info.id]
        state = "enabled" if settings.enabled else "disabled"
        scope = ", file-level" if info.scope == "file" else ""
        out.write(f"{info.id}  ({settings.severity}, {state}{scope})\n")
        for line in info.doc.splitlines():
            out.write(f"    {line}\n" if line else "\n")
        if settings.params:
            out.write("    parameters:\n")
        for name, value in settings.params.items():
            shown = json.dumps(value, ensure_ascii=False)
            if len(shown) > 100:
                shown = shown[:99] + "…"
            out.write(f"      {name}: {shown}\n")
        out.write("\n")
    out.write(f"settings from {config.source}; override them with --checks FILE\n")


def _short(text: str | None) -> str:
    if text is None:
        return "-"
    flat = " ".join(text.split())
    if len(flat) > _SHOWN_CHARS:
        flat = flat[: _SHOWN_CHARS - 1] + "…"
    return repr(flat)


def run_fix(args: argparse.Namespace) -> int:
    from choicebox.audit import FixFileError, RowFix, fix_file  # noqa: PLC0415  loaded when the command runs, so the CLI starts fast

    err = sys.stderr

    def report(line: int, result: RowFix) -> None:
        if result.changed and not args.quiet:
            for change in result.changes:
                err.write(
                    f"line {line}: {change.field}: {change.description} "
                    f"({_short(change.before)} -> {_short(change.after)})\n"
                )
        if result.problem is not None:
            err.write(f"line {line}: left unchanged: {result.problem}\n")

    if Path(args.output).resolve() == Path(args.data).resolve():
        print("choicebox fix: FIXED.jsonl must not be DATA.jsonl", file=err)
        return 2
    try:
        summary = fix_file(args.data, args.output, on_row=report)
    except FixFileError as exc:
        print(f"choicebox fix: {exc}", file=err)
        return 2
    left = len(summary.left_unchanged)
    err.write(
        f"fixed {summary.changed_rows} of {summary.rows} rows ({summary.changes} changes) "
        f"into {args.output}"
        + (
            f"; {left} row needs attention and was written unchanged"
            if left == 1
            else f"; {left} rows need attention and were written unchanged"
            if left
            else ""
        )
        + "\n"
    )
    return 0
