"""The public-API loop per row, in every mode: ``MCQASample.from_wire(row)``, ``grade``, ``to_wire``.

This is what a user's own verifier loop costs (no file pipeline, no splice): the figure to set
beside NeMo Gym's own verifier (``benchmarks/versus_gym/gym_side_by_side.py`` prints Gym's per-row cost on
the same rows). Rows a sample cannot be made of (one option) are skipped and counted.

Usage::

    python benchmarks/speed/api_loop.py FILE.jsonl[.gz] [--rows 2000] [--repeat 3] [--modes m1,m2]
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path
from typing import Any

import choicebox


def _rows(path: Path, limit: int) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    rows = []
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            rows.append(json.loads(line))
            if len(rows) >= limit:
                break
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many passes")
    parser.add_argument("--modes", help="comma-separated modes (default: every built-in mode)")
    args = parser.parse_args()
    rows = _rows(args.file, args.rows)
    modes = args.modes.split(",") if args.modes else sorted(choicebox.default_registry().names())
    print(f"{args.file.name}: {len(rows)} rows, best of {args.repeat}")
    for mode in modes:
        best = float("inf")
        skipped = 0
        for _ in range(args.repeat):
            skipped = 0
            start = time.process_time()
            for row in rows:
                try:
                    sample = choicebox.MCQASample.from_wire(row)
                except choicebox.WireFormatError:
                    skipped += 1
                    continue
                choicebox.grade(sample, row["response"], mode=mode).to_wire(row)
            best = min(best, time.process_time() - start)
        graded = len(rows) - skipped
        print(f"  {mode:28s} {best / max(1, graded) * 1e6:7.1f} us/row  ({graded} graded, {skipped} skipped)")


if __name__ == "__main__":
    main()
