"""Run every audit check over real row files; count the findings and sample them for reading.

Precision cannot be computed: it takes a person reading each finding against its row. This script
does the counting and the drawing. It prints, per check, how many findings each group of files
holds, and writes a seeded sample of up to ``--per-check`` findings per check (each with the row's
question and choices) to ``--out``, with a ``verdict:`` line to fill in by hand.

    python benchmarks/soundness/audit_precision.py \\
        --group mmlupro benchmarks/data/mmlupro/Yi-6b-Chat.jsonl.gz \\
        --group gym benchmarks/data/gym/*/*.jsonl --out /tmp/audit_samples.txt

Files given without ``--group`` form a group each, named after the file. ``.jsonl.gz`` files are
read as the audit reads them. A finding that several files share (the same row, by uuid, with the
same finding) is drawn at most once, so identical copies of a dataset do not fill the sample.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from choicebox.audit import AuditConfig, Finding, audit_checks, audit_rows
from choicebox.audit._source import read_rows
from choicebox.audit._view import _view_of_row
from choicebox.jsonl import JsonlRow


@attrs.frozen
class Found:
    group: str
    path: str
    line: int | None
    uuid: str | None
    finding: Finding
    row: Any

    @property
    def identity(self) -> tuple[Any, ...]:
        where = self.uuid if self.uuid is not None else (self.path, self.line)
        return (where, self.finding.check, self.finding.field, self.finding.message)


def _audit(group: str, path: str, config: AuditConfig) -> tuple[int, list[Found]]:
    """The number of rows of ``path`` and every finding in it."""
    items = list(read_rows(path))
    rows = {item.line: item.value for item in items if isinstance(item, JsonlRow)}
    found = [
        Found(group, path, result.line, result.uuid, finding, rows.get(result.line or 0))
        for result in audit_rows(items, config=config)
        for finding in result.findings
    ]
    return len(items), found


def _shown(text: Any, limit: int) -> str:
    flat = repr(text) if not isinstance(text, str) else repr(text)[1:-1]
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _describe(found: Found) -> list[str]:
    f = found.finding
    lines = [
        f"{found.path}:{found.line} uuid={found.uuid} [{f.field}] {f.severity}",
        f"  finding: {f.message}",
    ]
    row = found.row
    if isinstance(row, dict):
        view = _view_of_row(row)
        if view.question is not None:
            lines.append(f"  question: {_shown(view.question.strip(), 900)}")
        for option in view.options:
            lines.append(f"    {option.letter or option.field}: {_shown(option.text, 240)}")
        lines.append(f"  gold: {_shown(view.gold, 40)}")
    lines.append("  verdict: ")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="row files (.jsonl or .jsonl.gz), a group each")
    parser.add_argument(
        "--group",
        nargs="+",
        action="append",
        default=[],
        metavar=("NAME", "FILE"),
        help="a named group of files (repeatable)",
    )
    parser.add_argument("--checks", metavar="FILE", help="audit settings laid over the defaults")
    parser.add_argument("--per-check", type=int, default=50, help="findings drawn per check")
    parser.add_argument("--seed", type=int, default=12, help="seed of the draw")
    parser.add_argument(
        "--out", default="audit_precision_samples.txt", help="where to write the samples"
    )
    args = parser.parse_args(argv)
    groups: list[tuple[str, list[str]]] = [(Path(f).name, [f]) for f in args.files]
    for name, *files in args.group:
        if not files:
            parser.error(f"--group {name}: give at least one file")
        groups.append((name, files))
    if not groups:
        parser.error("give row files, or --group NAME FILE...")
    config = AuditConfig.load(args.checks) if args.checks else AuditConfig.default()

    found: list[Found] = []
    rows: Counter[str] = Counter()
    for name, files in groups:
        for path in files:
            count, in_file = _audit(name, path, config)
            rows[name] += count
            found.extend(in_file)

    names = [name for name, _ in groups]
    counts = Counter((f.finding.check, f.group) for f in found)
    width = max(len(info.id) for info in audit_checks())
    cell = {n: max(len(n), 7) for n in names}
    print(f"{'check':<{width}}  " + "  ".join(f"{n:>{cell[n]}}" for n in names) + "  sampled")
    print(f"{'(rows)':<{width}}  " + "  ".join(f"{rows[n]:>{cell[n]}}" for n in names))
    out: list[str] = []
    for info in audit_checks():
        distinct: dict[tuple[Any, ...], Found] = {}
        for f in found:
            if f.finding.check == info.id:
                distinct.setdefault(f.identity, f)
        pool = list(distinct.values())
        drawn = (
            pool
            if len(pool) <= args.per_check
            else random.Random(args.seed).sample(pool, args.per_check)
        )
        drawn.sort(key=lambda f: (f.path, f.line or 0, f.finding.field))
        cells = "  ".join(f"{counts[info.id, n]:>{cell[n]}}" for n in names)
        print(f"{info.id:<{width}}  {cells}  {len(drawn):>7}")
        if drawn:
            out.append(f"=== {info.id}: {len(drawn)} of {len(pool)} distinct findings")
            for f in drawn:
                out.extend(_describe(f))
            out.append("")
    Path(args.out).write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"samples: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
