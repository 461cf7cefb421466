"""``choicebox grade``: grade a JSONL file of rollouts, streaming, and write metrics beside it."""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
import time
from pathlib import Path
from typing import IO, Any, Final

from choicebox._errors import BatchError, RuleFileError, UnknownModeError
from choicebox.batch import BatchResult, Progress, default_output, grade_file
from choicebox.cli._args import add_rules_dir, positive_int
from choicebox.cli._judging import (
    JudgeSettings,
    add_judge_arguments,
    judge_settings,
    print_judge_summary,
    run_judge_pass,
)
from choicebox.metrics import MetricsDocument

__all__ = ["register"]

# Seconds between plain progress lines when stderr is not a terminal (tests lower it).
PLAIN_INTERVAL: float = 5.0
_WORST_CATEGORIES: Final = 3
_TOP_FAILURES: Final = 5


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "grade",
        help="grade a JSONL file of rollouts",
        description=(
            "Grade every row of INPUT (NeMo Gym mcqa rows with a `response`) into OUTPUT, one "
            "output row per input row and in input order, and write "
            "<OUTPUT stem>_aggregate_metrics.json and <OUTPUT stem>_failure_analysis.json "
            "beside it. Rows that cannot be graded become error rows; the exit status is then 1. "
            "With --judge-url, the rows the mode flags for a judge are then judged in place (exit "
            "status 1 too when the judge could not be reached: every rule verdict is kept)."
        ),
    )
    parser.add_argument("input", metavar="INPUT.jsonl", help="rollouts to grade")
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUTPUT.jsonl",
        help="where to write graded rows (default: <INPUT stem>_graded.jsonl beside the input)",
    )
    parser.add_argument("--mode", metavar="M", help="grading mode for every row (default: per row)")
    add_rules_dir(parser)
    parser.add_argument(
        "--workers",
        metavar="N",
        type=positive_int,
        default=None,
        help="grading processes: this one and N-1 workers (default: the number of CPUs)",
    )
    parser.add_argument(
        "--by",
        metavar="FIELD",
        action="append",
        default=[],
        help="report accuracy per value of this dotted field, e.g. metadata.category (repeatable)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run from OUTPUT.partial",
    )
    parser.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help=(
            "local: this process, alone or with a pool of processes (default); ray: a Ray "
            "cluster, local or the one RAY_ADDRESS names (pip install 'choicebox[ray]'); "
            "--workers is then the number of grader actors"
        ),
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    parser.add_argument("--report", metavar="R.html", help="also write an HTML report")
    add_judge_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    err = sys.stderr
    progress: Progress | None = None
    if not args.quiet:
        progress = _BarProgress(err) if err.isatty() else _PlainProgress(err)
    output = args.output or default_output(args.input)
    # Checked before grading, so that a misspelt option fails now and not after an hour's work.
    judging = judge_settings(args, output)
    if isinstance(judging, str):
        print(f"choicebox grade: {judging}", file=err)
        return 2
    try:
        return _grade_and_judge(args, output, judging, progress, err)
    finally:
        if judging is not None:
            judging.cache.close()  # the judge closes it too; here for the runs that stop before it


def _grade_and_judge(
    args: argparse.Namespace,
    output: str | Path,
    judging: JudgeSettings | None,
    progress: Progress | None,
    err: IO[str],
) -> int:
    engine = grade_file
    if args.engine == "ray":
        try:
            import ray.data  # noqa: F401, PLC0415  the optional ray extra: Ray Data and its pyarrow, not only Ray core
        except ImportError as exc:
            print(
                f"choicebox grade: --engine ray needs Ray Data ({exc}): "
                "pip install 'choicebox[ray]'",
                file=err,
            )
            return 2
        from choicebox.batch.ray import grade_file_ray  # noqa: PLC0415  only for --engine ray

        engine = grade_file_ray
    # What is loaded now (modules, modes, compiled patterns) stays out of the collector's way
    # while grading, so the full collections of a long run stay short (about 0.05 s of 6 on 200k
    # rows), as in `choicebox serve`; it is handed back after, for a caller that goes on (unless
    # that caller froze objects of its own: freezing does not nest).
    freezing = gc.get_freeze_count() == 0
    if freezing:
        gc.freeze()
    try:
        result = engine(
            args.input,
            output,
            mode=args.mode,
            rules_dirs=args.rules_dir,
            workers=args.workers,
            by=args.by,
            resume=args.resume,
            progress=progress,
        )
    except (BatchError, UnknownModeError, RuleFileError, OSError) as exc:
        print(f"choicebox grade: {exc}", file=err)
        return 2
    except KeyboardInterrupt:
        print(
            f"\nchoicebox grade: interrupted; the rows graded so far are in {output}.partial: "
            "run again with --resume to continue",
            file=err,
        )
        return 130
    finally:
        if freezing:
            gc.unfreeze()
    _print_summary(result, err)
    judge_status = 0
    metrics = result.metrics
    if judging is not None:
        judged = run_judge_pass(args, result.output, judging, err)
        if isinstance(judged, int):
            return judged
        judge_status = print_judge_summary(judged, err)
        metrics = judged.metrics
    if args.report:
        status = _write_report(metrics, args.report, err)
        if status:
            return status
    return 1 if result.errors or judge_status else 0


def _write_report(metrics: MetricsDocument, path: str, err: IO[str]) -> int:
    from choicebox.metrics.report import write_report  # noqa: PLC0415  only --report needs it (~40 ms)

    try:
        write_report(metrics, path)
    except (OSError, ValueError) as exc:
        print(f"choicebox grade: cannot write the report: {exc}", file=err)
        return 2
    print(f"report: {path}", file=err)
    return 0


# --- progress -----------------------------------------------------------------------------------


def _clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class _PlainProgress:
    """One line every ``PLAIN_INTERVAL`` seconds (for logs), and one at the end."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._total = 0
        self._bytes = 0
        self._rows = 0
        self._start_bytes = 0
        self._start_rows = 0
        self._began = self._last = time.monotonic()

    def start(self, total_bytes: int, done_bytes: int, done_rows: int) -> None:
        self._total, self._bytes, self._rows = total_bytes, done_bytes, done_rows
        self._start_bytes, self._start_rows = done_bytes, done_rows
        self._began = self._last = time.monotonic()
        if done_rows:
            self._line("resumed")

    def update(self, rows: int, nbytes: int) -> None:
        self._rows += rows
        self._bytes += nbytes
        now = time.monotonic()
        if now - self._last >= PLAIN_INTERVAL:
            self._last = now
            self._line("grading")

    def close(self) -> None:
        self._line("done" if self._bytes >= self._total else "stopped")

    def _line(self, state: str) -> None:
        elapsed = time.monotonic() - self._began
        new_rows = self._rows - self._start_rows
        rate = new_rows / elapsed if elapsed > 0 else 0.0
        share = self._bytes / self._total if self._total else 1.0
        text = f"choicebox grade: {state} {self._rows:,} rows ({share:.0%}), {rate:,.0f} rows/s"
        byte_rate = (self._bytes - self._start_bytes) / elapsed if elapsed > 0 else 0.0
        if state == "grading" and byte_rate > 0:
            text += f", ETA {_clock((self._total - self._bytes) / byte_rate)}"
        print(text, file=self._stream, flush=True)


class _BarProgress:
    """A tqdm bar driven by bytes (for the ETA) that shows rows and rows/s."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._bar: Any = None
        self._rows = 0
        self._start_rows = 0
        self._began = time.monotonic()

    def start(self, total_bytes: int, done_bytes: int, done_rows: int) -> None:
        from tqdm import tqdm  # noqa: PLC0415  only a terminal shows the bar

        self._rows = self._start_rows = done_rows
        self._began = time.monotonic()
        size = shutil.get_terminal_size((100, 24))
        self._bar = tqdm(
            total=total_bytes,
            initial=done_bytes,
            file=self._stream,
            unit="B",
            unit_scale=True,
            desc="grading",
            # tqdm prefixes the postfix with ", ": "12.3M/40.0MB, 2,345 rows, 1,234 rows/s".
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}{postfix} [{elapsed}<{remaining}]",
            # A terminal that reports a size of 0x0 (some ptys) would hide the bar entirely.
            ncols=size.columns,
            nrows=size.lines,
        )
        self._bar.set_postfix_str(f"{done_rows:,} rows", refresh=False)

    def update(self, rows: int, nbytes: int) -> None:
        self._rows += rows
        elapsed = time.monotonic() - self._began
        rate = (self._rows - self._start_rows) / elapsed if elapsed > 0 else 0.0
        self._bar.set_postfix_str(f"{self._rows:,} rows, {rate:,.0f} rows/s", refresh=False)
        self._bar.update(nbytes)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


# --- summary --------------------------------------------------------------------------------------


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _print_summary(result: BatchResult, err: IO[str]) -> None:
    metrics = result.metrics
    lines = [
        f"graded {_count(result.rows, 'row')} into {result.output} "
        f"({_count(result.errors, 'error')})"
    ]
    if result.resumed_rows:
        lines[0] += f"; {result.resumed_rows:,} of them from the earlier run"
    ci = metrics.accuracy_ci
    if ci is not None:
        no_answer = None if metrics.summary is None else metrics.summary.no_answer_rate
        lines.append(
            f"accuracy {_percent(ci.value)} "
            f"({ci.confidence:.0%} CI {_percent(ci.ci_lower)} to {_percent(ci.ci_upper)}); "
            f"no answer {_percent(no_answer)}"
        )
    for field, entries in metrics.categories.items():
        worst = sorted(entries, key=lambda entry: (entry.mean_reward, entry.category))
        shown = ", ".join(
            f"{_printable(entry.category)} {_percent(entry.mean_reward)} (n={entry.n_samples or 0:,})"
            for entry in worst[:_WORST_CATEGORIES]
        )
        lines.append(f"worst {_printable(field)}: {shown}" if shown else f"worst {_printable(field)}: none")
    failures = metrics.failure_analysis
    if failures is not None and failures.categories:
        shown = ", ".join(
            f"{name} {kind.count:,}"
            for name, kind in list(failures.categories.items())[:_TOP_FAILURES]
        )
        lines.append(f"failures: {shown}")
    lines.append(f"metrics: {result.aggregate_path}, {result.failures_path}")
    if result.errors:
        lines.append(f'error rows carry an "error" field: grep \'"error"\' {result.output}')
    err.write("".join(line + os.linesep for line in lines))


def _printable(text: str) -> str:
    """``text`` with control and other unprintable characters escaped: a category comes from the
    data, and an ANSI escape sequence in it must not drive the user's terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
