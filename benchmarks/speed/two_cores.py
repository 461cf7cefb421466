"""What two processes can get out of this machine: the ceiling of a two-worker speed-up.

A "2 workers at least 1.8x one" figure means nothing on a machine where two CPU-bound processes
do not run at full speed side by side (two vCPUs that share a physical core, or a neighbour on
the host). This times a pure-Python loop alone, then two copies at once, alternately for
``--rounds`` rounds, and prints the best of each and the speed-up two processes get:
``2 * alone / together``, at most 2.0. Run it next to ``real_rows.py --big`` or
``compare_versions.py --workers 2``: a grading run with two workers cannot scale past it.

    python benchmarks/speed/two_cores.py [--rounds 3] [--loops 20000000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

_LOOP = "x = 0\nfor i in range({loops}): x += i\n"


def _run(copies: int, loops: int) -> float:
    """Wall seconds for ``copies`` loops started together to all finish."""
    code = _LOOP.format(loops=loops)
    start = time.perf_counter()
    running = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(copies)]
    for process in running:
        if process.wait() != 0:
            raise SystemExit("the timing loop failed")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--loops", type=int, default=20_000_000)
    args = parser.parse_args()
    alone = together = float("inf")
    for _ in range(args.rounds):
        alone = min(alone, _run(1, args.loops))
        together = min(together, _run(2, args.loops))
    print(f"one loop alone: {alone:.2f} s; two at once: {together:.2f} s")
    print(f"two processes get {2 * alone / together:.2f}x one (2.00x: two full cores)")


if __name__ == "__main__":
    main()
