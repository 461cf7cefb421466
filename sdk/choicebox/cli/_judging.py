"""The judge's options and summary, shared by the commands that can call a model judge
(``choicebox grade --judge-url``): parsing them into a judge, running the judge pass, printing
what it did. A leaf of the CLI: the judge package is imported only when a judge is asked for.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, NamedTuple

from choicebox.cli._args import nonnegative_int, positive_float, positive_int

if TYPE_CHECKING:
    from choicebox.batch import JudgeResult
    from choicebox.judge import JudgeCache, JudgeEndpoint, JudgePrompt, JudgeReport

__all__ = [
    "API_KEY_ENV",
    "JUDGE_OPTIONS",
    "JudgeSettings",
    "add_judge_arguments",
    "cache_path",
    "judge_settings",
    "print_judge_summary",
    "run_judge_pass",
]

# ``choicebox.judge.API_KEY_ENV``, named here for the help text without importing the judge (a
# test keeps the two equal).
API_KEY_ENV: Final = "CHOICEBOX_JUDGE_API_KEY"
# Seconds between progress lines of the judge pass (tests lower it).
PROGRESS_INTERVAL: float = 5.0
JUDGE_OPTIONS: Final = (
    "judge_model", "judge_api", "judge_sample", "judge_seed", "judge_concurrency", "judge_timeout",
    "judge_retries", "judge_max_tokens", "judge_prompt", "judge_cache",
)  # fmt: skip
_EXIT_JUDGE_DOWN: Final = 1


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "model judge",
        "After grading, show the rows the mode flags (needs_judge, e.g. robust's no_answer rows) to "
        "a model at an OpenAI-compatible endpoint; the reward of a flagged row follows the judge's "
        f"letter. ${API_KEY_ENV} holds a bearer token if the endpoint needs one.",
    )
    group.add_argument("--judge-url", metavar="URL", help="the endpoint's base URL, e.g. http://localhost:8000/v1")
    group.add_argument("--judge-model", metavar="M", help="the judge model's name (required with --judge-url)")
    group.add_argument(
        "--judge-api", choices=("chat", "responses"), default=None,
        help="chat: /chat/completions (default); responses: /responses",
    )  # fmt: skip
    group.add_argument(
        "--judge-sample", metavar="N", type=nonnegative_int, default=None,
        help="also send N rows the rules decided, and report how often the judge agrees (calibration)",
    )  # fmt: skip
    group.add_argument("--judge-seed", metavar="S", type=int, default=None, help="the seed that draws the sample (default 0)")
    group.add_argument(
        "--judge-concurrency", metavar="N", type=positive_int, default=None, help="requests in flight at once (default 8)"
    )
    group.add_argument(
        "--judge-timeout", metavar="S", type=positive_float, default=None,
        help="seconds to wait for a reply (default 60)",
    )  # fmt: skip
    group.add_argument(
        "--judge-retries", metavar="N", type=nonnegative_int, default=None,
        help="times a request is sent again after a 429, a 5xx, a timeout or a lost connection (default 3)",
    )  # fmt: skip
    group.add_argument(
        "--judge-max-tokens", metavar="N", type=positive_int, default=None,
        help="the longest reply (default 16: a letter; more for a judge that reasons first)",
    )  # fmt: skip
    group.add_argument(
        "--judge-prompt", metavar="FILE",
        help="a prompt template of your own ($question, $options, $response, $letters)",
    )  # fmt: skip
    group.add_argument(
        "--judge-cache", metavar="FILE",
        help="where replies are kept, so a rerun asks nothing twice (default: <OUTPUT stem>_judge_cache.jsonl)",
    )  # fmt: skip


class JudgeSettings(NamedTuple):
    """The judge the options describe: where it is, its prompt, its cache (open already)."""

    endpoint: JudgeEndpoint
    prompt: JudgePrompt
    cache: JudgeCache


def judge_settings(args: argparse.Namespace, output: str | Path) -> JudgeSettings | str | None:
    """The judge the options describe, ``None`` when none is asked for, or what is wrong (words).
    Everything is checked, and the cache opened, before any grading: a misspelt option or a
    cache that cannot be written fails now, not after an hour's work."""
    given = [name for name in JUDGE_OPTIONS if getattr(args, name) is not None]
    if args.judge_url is None:
        if given:
            return f"--{given[0].replace('_', '-')} needs --judge-url"
        return None
    if args.judge_model is None:
        return "--judge-url needs --judge-model"
    from choicebox._errors import JudgeError  # noqa: PLC0415  only a run with a judge reads these
    from choicebox.judge import JudgeCache, JudgeEndpoint, JudgePrompt, api_key_from_env  # noqa: PLC0415  the same

    chosen: dict[str, Any] = {
        "api": args.judge_api, "concurrency": args.judge_concurrency, "timeout": args.judge_timeout,
        "retries": args.judge_retries, "max_tokens": args.judge_max_tokens,
    }  # fmt: skip
    try:
        endpoint = JudgeEndpoint(
            url=args.judge_url,
            model=args.judge_model,
            api_key=api_key_from_env(),
            **{name: value for name, value in chosen.items() if value is not None},
        )
        prompt = JudgePrompt.from_file(args.judge_prompt) if args.judge_prompt else JudgePrompt.default()
        cache = JudgeCache(cache_path(args, output))
    except JudgeError as exc:
        return str(exc)
    return JudgeSettings(endpoint, prompt, cache)


def cache_path(args: argparse.Namespace, output: str | Path) -> Path:
    """``--judge-cache``, else ``<OUTPUT stem>_judge_cache.jsonl`` beside the output."""
    if args.judge_cache:
        return Path(args.judge_cache)
    output = Path(output)
    return output.with_name(f"{output.stem}_judge_cache.jsonl")


def run_judge_pass(args: argparse.Namespace, output: Path, settings: JudgeSettings, err: IO[str]) -> JudgeResult | int:
    """The judge pass over the graded ``output``; an exit status when it could not run."""
    from choicebox._errors import BatchError  # noqa: PLC0415  see judge_settings
    from choicebox.batch import judge_file  # noqa: PLC0415  the same
    from choicebox.judge import Judge  # noqa: PLC0415  the same

    progress = None if args.quiet else _Progress(err)
    try:
        with Judge(settings.endpoint, prompt=settings.prompt, cache=settings.cache) as judge:
            return judge_file(
                output,
                judge,
                rules_dirs=args.rules_dir,
                by=args.by,
                sample=args.judge_sample or 0,
                seed=args.judge_seed or 0,
                input_path=args.input,
                mode=args.mode,
                progress=progress,
            )
    except (BatchError, OSError) as exc:
        print(f"choicebox grade: the judge pass stopped: {exc}; {output} holds the rule verdicts", file=err)
        return 2
    except KeyboardInterrupt:
        print(
            f"\nchoicebox grade: interrupted in the judge pass; {output} holds the rule verdicts, and "
            f"the judge's replies so far are kept in {settings.cache.path}: run again to judge the rest",
            file=err,
        )
        return 130


class _Progress:
    """A line every ``PROGRESS_INTERVAL`` seconds while the judge works, and one at the end."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._last = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - self._last >= PROGRESS_INTERVAL:
            self._last = now
            print(f"choicebox grade: judged {done:,} of {total:,} rows", file=self._stream, flush=True)


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{kind} {n:,}" for kind, n in counts.items())


def print_judge_summary(result: JudgeResult, err: IO[str]) -> int:
    """The judge's lines of the summary; the exit status they call for (1: the judge was down)."""
    report: JudgeReport = result.report
    cost = report.cost
    sampled = report.calibration.sampled if report.calibration else 0
    lines = [
        f"judge: {report.model} at {report.url} ({report.api}): {report.sent:,} rows sent "
        f"({report.flagged:,} flagged, {sampled:,} for calibration)",
        f"judge: on the flagged rows: decided {report.decided:,}, none {report.none:,}, failed {report.failed:,}"
        + (f" ({_counts(dict(report.failures))})" if report.failures else "")
        + f"; {report.rewards_changed:,} rewards changed",
        f"judge: cost {cost.calls:,} calls ({cost.retries:,} retries), {cost.cached:,} replies from the cache, "
        f"{cost.tokens:,} tokens ({cost.prompt_tokens:,} prompt, {cost.completion_tokens:,} completion), "
        f"{cost.seconds:.1f} s",
    ]
    calibration = report.calibration
    if calibration is not None:
        if calibration.answered:
            lines.append(
                f"judge: calibration on {calibration.sampled:,} rows the rules decided: agreement "
                f"{_percent(calibration.agreement)} ({calibration.confidence:.0%} Wilson CI "
                f"{_percent(calibration.ci_lower)} to {_percent(calibration.ci_upper)}): the rules' "
                f"letter on {calibration.agreed:,} of the {calibration.answered:,} it answered; NONE on "
                f"{calibration.judge_none:,}, failed on {calibration.failed:,}"
            )
        else:
            lines.append(f"judge: calibration on {calibration.sampled:,} rows: the judge answered none of them")
    if report.unreachable is not None:
        lines.append(
            f"judge: UNREACHABLE ({report.unreachable}): every row it did not judge keeps its rule "
            "verdict; no row is lost. Run again once it is up: its replies so far are cached"
        )
    ci = result.metrics.accuracy_ci
    if ci is not None:
        lines.append(
            f"accuracy after the judge {_percent(ci.value)} "
            f"({ci.confidence:.0%} CI {_percent(ci.ci_lower)} to {_percent(ci.ci_upper)})"
        )
    lines.append(f"judged rows: {result.output}; metrics: {result.aggregate_path}")
    err.write("".join(line + os.linesep for line in lines))
    return _EXIT_JUDGE_DOWN if report.unreachable is not None else 0
