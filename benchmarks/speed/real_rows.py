"""Grading cost on real rows, next to the cost of merely parsing them.

For each row file (``.jsonl`` or ``.jsonl.gz``, NeMo Gym verify rows such as the MMLU-Pro outputs
in ``benchmarks/data/mmlupro/`` and Gym's rollouts in ``benchmarks/data/gym/``) it prints, on one
core and in this process:

* ``orjson.loads`` of every line, streaming (the result dropped): the floor any verifier pays;
* per built-in mode, ``choicebox.batch.Grader.grade_lines`` (decode + grade + encode the output
  row): microseconds per row and the ratio to ``orjson.loads``;

and, unless ``--no-process``, the whole ``choicebox grade`` process (start-up, imports, parser,
output and metrics files) on the file, with one worker and with two: wall seconds, rows/s and the
largest peak RSS of its processes (best of ``--repeat`` runs). ``--big N`` also grades a file of N rows made by
repeating the given files' rows, with one worker and with two, and prints the ratio.

Usage::

    python benchmarks/speed/real_rows.py FILE [FILE ...] [--modes m1,m2] [--repeat 3] [--no-process]
        [--big 200000]
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

import orjson

from choicebox import default_registry
from choicebox.batch import Grader


def read_lines(path: Path) -> list[bytes]:
    opener: Callable[..., object] = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:  # type: ignore[operator]
        return [line.rstrip(b"\n") for line in handle if line.strip()]  # type: ignore[attr-defined]


def best_of(repeat: int, run: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def in_process(lines: list[bytes], modes: list[str], repeat: int) -> None:
    def parse() -> None:
        loads = orjson.loads
        for line in lines:
            loads(line)

    n = len(lines)
    floor = best_of(repeat, parse) / n
    print(f"  {'orjson.loads (streaming)':<34} {floor * 1e6:8.1f} us/row")
    numbered = list(enumerate(lines, start=1))
    for mode in modes:
        grader = Grader(mode=mode)
        grader.grade_lines(numbered[:50])  # build the mode and any parser before timing

        def grade(grader: Grader = grader) -> None:
            for start in range(0, n, 256):  # spans of about CHUNK_BYTES, as the runners hand out
                grader.grade_lines(numbered[start : start + 256])

        per_row = best_of(repeat, grade) / n
        print(
            f"  {'grade_lines, ' + mode:<34} {per_row * 1e6:8.1f} us/row"
            f"   {per_row / floor:5.1f}x orjson.loads"
        )


# A run times the process as its users run it, from compiled modules: with
# PYTHONDONTWRITEBYTECODE set (some containers set it), a fresh checkout would compile every
# module of choicebox on every run, about 0.1 s of each.
_BYTECODE_WRITTEN: Final = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def whole_process(source: Path, mode: str, workers: int, repeat: int) -> tuple[float, int]:
    """Best wall seconds of ``choicebox grade`` on ``source`` and the largest peak RSS (KB)."""
    best, peak = float("inf"), 0
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "graded.jsonl"
        command = [sys.executable, "-m", "choicebox", "grade", str(source), "-o", str(out)]
        command += ["--mode", mode, "--workers", str(workers), "-q"]
        for _ in range(repeat):
            # A process of its own per run, so that its children's peak RSS is this run's.
            probe = (
                "import resource, subprocess, sys, time\n"
                "start = time.perf_counter()\n"
                "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
                "wall = time.perf_counter() - start\n"
                "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
                "print(done.returncode, wall, rss)\n"
                "sys.stderr.write(done.stderr)\n"
            )
            done = subprocess.run(
                [sys.executable, "-c", probe, *command],
                env=_BYTECODE_WRITTEN, capture_output=True, text=True, check=True,
            )  # fmt: skip
            status, wall, rss = done.stdout.split()
            if int(status) not in (0, 1):  # 1: some rows are error rows (one-option questions)
                raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
            best, peak = min(best, float(wall)), max(peak, int(rss))
    return best, peak


def write_rows(lines: list[bytes], path: Path) -> None:
    path.write_bytes(b"\n".join(lines) + b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--modes", help="comma-separated modes (default: every built-in mode)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--limit", type=int, default=0, help="first N rows of each file only")
    parser.add_argument("--no-process", action="store_true", help="skip the `choicebox grade` runs")
    parser.add_argument("--no-in-process", action="store_true", help="skip the per-row timings")
    parser.add_argument("--big", type=int, default=0, help="also grade a file of this many rows")
    args = parser.parse_args()
    modes = args.modes.split(",") if args.modes else sorted(default_registry().names())
    everything: list[bytes] = []
    with tempfile.TemporaryDirectory() as scratch:
        for path in args.files:
            lines = read_lines(path)
            if args.limit:
                lines = lines[: args.limit]
            everything += lines
            size = sum(map(len, lines)) / max(1, len(lines))
            print(f"{path.name}: {len(lines)} rows, {size / 1000:.1f} KB/row")
            if not args.no_in_process:
                in_process(lines, modes, args.repeat)
            if not args.no_process:
                source = Path(scratch) / "rows.jsonl"
                write_rows(lines, source)
                for mode in modes:
                    for workers in (1, 2):
                        seconds, rss = whole_process(source, mode, workers, args.repeat)
                        print(
                            f"  choicebox grade --mode {mode} --workers {workers}: "
                            f"{seconds:6.2f} s  {len(lines) / seconds:9,.0f} rows/s"
                            f"  peak RSS {rss / 1024:5.0f} MB"
                        )
        if args.big:
            big = Path(scratch) / "big.jsonl"
            write_rows(list(itertools.islice(itertools.cycle(everything), args.big)), big)
            print(f"{args.big:,} rows of the files above, repeated ({big.stat().st_size / 1e6:.0f} MB)")
            for mode in modes:
                one, rss_one = whole_process(big, mode, 1, args.repeat)
                two, rss_two = whole_process(big, mode, 2, args.repeat)
                print(
                    f"  {mode}: 1 worker {one:6.2f} s ({args.big / one:7,.0f} rows/s, "
                    f"{rss_one / 1024:.0f} MB), 2 workers {two:6.2f} s "
                    f"({args.big / two:7,.0f} rows/s, {rss_two / 1024:.0f} MB): {one / two:.2f}x"
                )


if __name__ == "__main__":
    main()
