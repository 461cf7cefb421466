"""Two checkouts of choicebox timed alternately on the same real rows, in one run.

On a machine whose speed drifts by a tenth from one minute to the next, figures taken at
different times cannot tell a 5% change; runs of the two versions interleaved can. Each round
times version A then version B (their ``sdk`` folders put first on ``PYTHONPATH``), and the best
of the rounds is kept:

* ``--in-process``: ``Grader.grade_lines`` per row (CPU time of this process, best of two passes
  per round), for each mode;
* ``--process``: the whole ``choicebox grade FILE --workers N`` process (wall time);
* ``--instructions``: the machine instructions ``Grader.grade_lines`` executes per row, counted
  by valgrind's callgrind (one run per version and mode, less a run that only builds the mode
  and grades the first 50 rows). The count does not drift with the machine: on a shared virtual
  machine whose timings of one version vary by a fifth from run to run, it tells a 1% change.
  It needs ``valgrind`` (a Debian package); a run costs about 50x the grading time.

Usage::

    git worktree add /tmp/before <commit>
    python benchmarks/speed/compare_versions.py /tmp/before/sdk sdk FILE.jsonl[.gz] \\
        [--modes m1,m2] [--rounds 4] [--in-process] [--process --workers 1] [--instructions]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Run in a fresh interpreter with the version's sdk first on the path.
_IN_PROCESS = r"""
import gzip, json, sys, time
from choicebox.batch import Grader
path, modes = sys.argv[1], sys.argv[2].split(",")
opener = gzip.open if path.endswith(".gz") else open
with opener(path, "rb") as handle:
    lines = [line.rstrip(b"\n") for line in handle if line.strip()]
numbered = list(enumerate(lines, start=1))
out = {}
for mode in modes:
    grader = Grader(mode=mode)
    grader.grade_lines(numbered[:50])  # build the mode and any parser first
    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        for at in range(0, len(numbered), 256):
            grader.grade_lines(numbered[at : at + 256])
        best = min(best, time.process_time() - start)
    out[mode] = best / len(lines) * 1e6
print(json.dumps(out))
"""


# Run under callgrind: build the mode and grade the first 50 rows, then (unless told to stop
# there) every row, as the runners hand them out.
_COUNTED = r"""
import gzip, sys
from choicebox.batch import Grader
path, mode, setup_only = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
opener = gzip.open if path.endswith(".gz") else open
with opener(path, "rb") as handle:
    lines = [line.rstrip(b"\n") for line in handle if line.strip()]
numbered = list(enumerate(lines, start=1))
grader = Grader(mode=mode)
grader.grade_lines(numbered[:50])
if not setup_only:
    for at in range(0, len(numbered), 256):
        grader.grade_lines(numbered[at : at + 256])
print(len(lines))
"""
_COLLECTED = re.compile(r"Collected : (\d+)")


def _counted(sdk: str, path: Path, mode: str, *, setup_only: bool) -> tuple[int, int]:
    """(instructions, rows) of one callgrind run."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         sys.executable, "-c", _COUNTED, str(path), mode, "1" if setup_only else "0"],
        # One hash seed: string hashes order sets and dicts, and so which paths the code takes.
        env={**_env(sdk), "PYTHONHASHSEED": "0"}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    found = _COLLECTED.search(done.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(found.group(1)), int(done.stdout.split()[-1])


def instructions(a: str, b: str, path: Path, modes: list[str]) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    for mode in modes:
        per_row = {}
        for sdk in (a, b):
            # A plain run first, so that no count includes compiling a changed module's bytecode.
            subprocess.run(
                [sys.executable, "-c", _COUNTED, str(path), mode, "0"], env=_env(sdk), capture_output=True, check=True
            )
            total, rows = _counted(sdk, path, mode, setup_only=False)
            setup, _ = _counted(sdk, path, mode, setup_only=True)
            per_row[sdk] = (total - setup) / rows
        before, after = per_row[a], per_row[b]
        print(f"  {mode:28} A {before:10,.0f}  B {after:10,.0f} instructions/row  B is {before / after:4.2f}x A")


def _env(sdk: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = sdk
    return env


def in_process(a: str, b: str, path: Path, modes: list[str], rounds: int) -> None:
    best: dict[str, dict[str, float]] = {a: {}, b: {}}
    for _ in range(rounds):
        for sdk in (a, b):
            done = subprocess.run(
                [sys.executable, "-c", _IN_PROCESS, str(path), ",".join(modes)],
                env=_env(sdk), capture_output=True, text=True, check=True,
            )  # fmt: skip
            for mode, value in json.loads(done.stdout).items():
                best[sdk][mode] = min(best[sdk].get(mode, float("inf")), value)
    for mode in modes:
        before, after = best[a][mode], best[b][mode]
        print(f"  {mode:28} A {before:6.1f}  B {after:6.1f} us/row  B is {before / after:4.2f}x A")


def whole_process(
    a: str, b: str, path: Path, modes: list[str], *, rounds: int, workers: int
) -> None:
    opener = gzip.open if path.suffix == ".gz" else open
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "rows.jsonl"
        with opener(path, "rb") as handle:  # type: ignore[operator]
            source.write_bytes(handle.read())
        rows = sum(1 for line in source.read_bytes().splitlines() if line.strip())
        for mode in modes:
            walls: dict[str, list[float]] = {a: [], b: []}
            for _ in range(rounds):
                for sdk in (a, b):
                    command = [sys.executable, "-m", "choicebox", "grade", str(source)]
                    command += ["-o", f"{scratch}/out.jsonl", "--mode", mode]
                    command += ["--workers", str(workers), "-q"]
                    start = time.perf_counter()
                    done = subprocess.run(command, env=_env(sdk), capture_output=True, check=False)
                    walls[sdk].append(time.perf_counter() - start)
                    if done.returncode not in (0, 1):  # 1: some rows are error rows
                        raise SystemExit(done.stderr.decode(errors="replace")[-2000:])
            before, after = min(walls[a]), min(walls[b])
            print(
                f"  {mode:28} workers {workers}: A {before:5.2f} s ({rows / before:7,.0f} rows/s, "
                f"median {statistics.median(walls[a]):.2f})  B {after:5.2f} s "
                f"({rows / after:7,.0f} rows/s, median {statistics.median(walls[b]):.2f})  "
                f"B is {before / after:4.2f}x A"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("a", help="version A's sdk folder (the one with choicebox/ in it)")
    parser.add_argument("b", help="version B's sdk folder")
    parser.add_argument("file", type=Path, help="a JSONL(.gz) file of rows")
    parser.add_argument("--modes", default="strict_single_letter_boxed,lenient_boxed,robust")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--in-process", action="store_true")
    parser.add_argument("--process", action="store_true")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--instructions", action="store_true", help="count instructions (valgrind)")
    args = parser.parse_args()
    modes = args.modes.split(",")
    print(f"A = {args.a}, B = {args.b}, {args.file.name}, best of {args.rounds} alternate rounds")
    if args.instructions:
        instructions(args.a, args.b, args.file, modes)
    if args.in_process or not (args.process or args.instructions):
        in_process(args.a, args.b, args.file, modes, args.rounds)
    if args.process:
        whole_process(args.a, args.b, args.file, modes, rounds=args.rounds, workers=args.workers)


if __name__ == "__main__":
    main()
