"""Throughput and memory of ``choicebox grade`` against the cost of merely parsing the file.

Generates N rollout rows shaped like NeMo Gym's (a Responses object with a reasoning item,
1-4 KB of reasoning text, answers as ``\\boxed{X}``, ``Answer: X`` under a template regex,
``\\boxed{\\text{X}}``, hedges and non-answers, plus a few bad rows), then reports in one run:

* the time to ``json.loads`` every line with the standard library (the baseline);
* ``choicebox grade`` end to end (a subprocess, output and metrics written) with one worker
  and with every core: rows/s and the ratio to the baseline;
* peak RSS of the grading process for 10k rows, and with ``--big`` for 1M rows.

Usage::

    python benchmarks/speed/grade_throughput.py [--rows 10000] [--big] [--profile]

``--profile`` also runs the one-worker grading in this process under cProfile and prints the
functions where the time goes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LETTERS = "ABCDEFGHIJ"
_FILLER = (
    "the option states that energy is conserved so we compare each claim against the definition "
    "and eliminate those which contradict known results while keeping in mind the units involved "
    "a careful reading shows the distractor confuses cause and effect which is a common mistake"
)
WORDS = tuple(_FILLER.split())
INSTRUCTION = (
    "You should output your final response letter inside \\boxed{} and nothing else "
    "You can first think step-by-step. "
)
TEMPLATE_INSTRUCTION = (
    "Answer the following multiple choice question. The last line of your response should be "
    "of the form 'Answer: X' where X is one of the letters.\n\n"
)


def _prose(rng: random.Random, size: int) -> str:
    out: list[str] = []
    length = 0
    while length < size:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))).capitalize()
        out.append(sentence + ".")
        length += len(sentence) + 2
    return " ".join(out)


REPEATS = 4  # rollouts per prompt, next to each other, as NeMo Gym writes them


def _task(rng: random.Random, task: int) -> tuple[str, str, int, bool]:
    n_options = rng.choice((4, 4, 4, 5, 10))
    expected = LETTERS[rng.randrange(n_options)]
    options = [f"{_prose(rng, 30)[:60].rstrip('.')}" for _ in range(n_options)]
    template = task % 4 == 1
    question = f"Question {task}: {_prose(rng, 120)}?"
    listing = "\n".join(f"{LETTERS[j]}: {t}" for j, t in enumerate(options))
    prompt = (TEMPLATE_INSTRUCTION if template else INSTRUCTION) + question + "\n" + listing
    return prompt, expected, n_options, template


def _row(rng: random.Random, i: int, task: tuple[str, str, int, bool]) -> dict[str, Any] | str:
    if i % 400 == 199:
        return '{"responses_create_params": {"input": [{"role": "user", "content": "trunc'
    prompt, expected, n_options, template = task
    correct = rng.random() < 0.7
    letter = expected if correct else LETTERS[(LETTERS.index(expected) + 1) % n_options]
    reasoning = _prose(rng, rng.randint(1024, 4096))
    kind = rng.random()
    if template:
        final = f"Answer: {letter}"
    elif kind < 0.75:
        final = f"\\boxed{{{letter}}}"
    elif kind < 0.85:
        final = f"\\[\n\\boxed{{\\text{{{letter}}}}}\n\\]"
    elif kind < 0.93:
        final = f"It is {letter}. \\boxed{{{letter}}} or maybe \\boxed{{{LETTERS[0]}}}"
    else:
        final = "I cannot tell which of these is right."
    text = _prose(rng, 300) + "\n\n" + final
    row: dict[str, Any] = {
        "responses_create_params": {
            "background": None,
            "input": [{"content": prompt, "role": "user", "type": "message"}],
            "instructions": None,
            "max_output_tokens": None,
            "metadata": None,
            "model": None,
            "temperature": None,
            "tools": [],
            "top_p": None,
            "user": "",
        },
        "response": {
            "id": f"resp_{i:032x}",
            "created_at": 1767225600.0 + i,
            "error": None,
            "incomplete_details": None,
            "model": "example-org/reasoner-8b",
            "object": "response",
            "output": [
                {
                    "id": f"rs_{i:032x}",
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": reasoning}],
                },
                {
                    "id": f"msg_{i:032x}",
                    "content": [
                        {"annotations": [], "text": text, "type": "output_text", "logprobs": []}
                    ],
                    "role": "assistant",
                    "status": "completed",
                    "type": "message",
                },
            ],
            "parallel_tool_calls": True,
            "temperature": 1.0,
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "usage": {"input_tokens": 300, "output_tokens": 900, "total_tokens": 1200},
        },
        "reward": 1.0 if correct else 0.0,
        "expected_answer": expected,
        "extracted_answer": letter,
        "_ng_task_index": i // REPEATS,
        "_ng_rollout_index": i % REPEATS,
    }
    if template:
        row["template_metadata"] = {
            "template_id": "answer_colon_v1",
            "output_regex": "Answer:\\s*([A-J])\\s*$",
        }
    if i % 400 == 77:
        del row["expected_answer"]
    return row


def generate(path: Path, n: int, seed: int = 0) -> None:
    """Write ``n`` rows to ``path``.

    Rows repeat after 2,000 (so 1M rows are quick to make), each repeat as new tasks: the
    ``_ng_task_index`` goes on counting.
    """
    rng = random.Random(seed)
    lines: list[tuple[str, str]] = []
    task = _task(rng, 0)
    for i in range(min(n, 2000)):
        if i % REPEATS == 0:
            task = _task(rng, i // REPEATS)
        row = _row(rng, i, task)
        line = (row if isinstance(row, str) else json.dumps(row)) + "\n"
        head, _, tail = line.partition(f'"_ng_task_index": {i // REPEATS},')
        lines.append((head, tail))
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            head, tail = lines[i % len(lines)]
            handle.write(f'{head}"_ng_task_index": {i // REPEATS},{tail}' if tail else head)


def time_json_loads(path: Path) -> float:
    start = time.perf_counter()
    with open(path, "rb") as handle:
        for line in handle:
            with contextlib.suppress(json.JSONDecodeError):
                json.loads(line)
    return time.perf_counter() - start


def run_grade(path: Path, workers: int) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB, largest process) of one ``choicebox grade`` run."""
    out = path.with_name(path.stem + f"_w{workers}.jsonl")
    command = [sys.executable, "-m", "choicebox", "grade", str(path), "-o", str(out), "-q"]
    command += ["--workers", str(workers)]
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    stderr = child.stderr.read().decode() if child.stderr else ""
    if child.returncode not in (0, 1):
        raise SystemExit(f"choicebox grade failed ({child.returncode}):\n{stderr}")
    return elapsed, usage.ru_maxrss / 1024  # Linux reports KiB


def startup_seconds(tmp: Path) -> float:
    empty = tmp / "empty.jsonl"
    empty.write_text("")
    return run_grade(empty, 1)[0]


def profile(path: Path, limit: int = 25) -> None:
    import cProfile
    import pstats

    from choicebox.batch import grade_file

    profiler = cProfile.Profile()
    profiler.enable()
    grade_file(path, path.with_name("profiled.jsonl"), workers=1)
    profiler.disable()
    stats = pstats.Stats(profiler).strip_dirs().sort_stats("tottime")
    stats.print_stats(limit)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--big", action="store_true", help="also measure 1,000,000 rows")
    parser.add_argument("--profile", action="store_true", help="cProfile the 1-worker run")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="choicebox-bench-") as tmp_name:
        tmp = Path(tmp_name)
        startup = startup_seconds(tmp)
        sizes = [args.rows] + ([1_000_000] if args.big else [])
        print(f"cores: {cores}; `choicebox grade` start-up on an empty file: {startup:.2f} s")
        header = (
            f"{'rows':>9} {'MB':>7} {'json.loads':>11} {'workers':>7} {'grade s':>8} "
            f"{'rows/s':>9} {'x loads':>8} {'x loads*':>8} {'peak RSS':>9}"
        )
        print(header)
        print("-" * len(header))
        for n in sizes:
            path = tmp / f"rollouts_{n}.jsonl"
            generate(path, n)
            size_mb = path.stat().st_size / 1e6
            baseline = time_json_loads(path)
            for workers in sorted({1, cores}):
                seconds, rss = run_grade(path, workers)
                print(
                    f"{n:>9,} {size_mb:>7.1f} {baseline:>10.2f}s {workers:>7} {seconds:>8.2f} "
                    f"{n / seconds:>9,.0f} {seconds / baseline:>8.2f} "
                    f"{max(seconds - startup, 1e-9) / baseline:>8.2f} {rss:>7.0f}MB"
                )
        print("x loads* = (grade time - start-up) / json.loads time; goal: <= 1.25 with 1 worker")
        if args.profile:
            path = tmp / f"rollouts_{args.rows}.jsonl"
            profile(path)


if __name__ == "__main__":
    main()
