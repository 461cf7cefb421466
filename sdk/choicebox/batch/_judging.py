"""The judge pass over a graded file: what ``choicebox grade --judge-url`` runs after grading.

The rows the mode flagged (``needs_judge``), and with ``sample`` as many rows the rules decided
(drawn with ``seed``, for calibration), are shown to the judge; their verdicts are read back from
the rows as written (``choicebox.render.verdict_of_row``: nothing is graded twice), the judgement
applied (``choicebox.judge.apply_judgement``: the reward follows the judge on flagged rows only)
and the file rewritten with the metrics beside it, the judge's report in the aggregate metrics'
``summary``. Every other row is copied byte for byte.

The file is read twice (once to count and draw the sample, once to rewrite it) and judged in
windows of a few times the judge's concurrency, in input order, so memory stays small however
large the file is. The rewrite goes to ``OUTPUT.judging`` and is renamed over ``OUTPUT`` once
complete: a pass that is stopped leaves ``OUTPUT`` as it was (every rule verdict in place), and
the judge's cache keeps every reply it got, so running it again asks only for the rest. A judge
that fails or cannot be reached loses no row: each keeps its rule verdict and records why.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import attrs
import orjson

from choicebox._errors import BatchError
from choicebox._modes import COMPONENTS, GradingMode, ModeRegistry, default_registry
from choicebox.metrics import MetricsAccumulator, MetricsDocument, RunSummary
from choicebox.render import Verdict
from choicebox.render._records import record_of

from ._files import check_target, create_new, sidecar_paths, write_json

if TYPE_CHECKING:
    from choicebox.judge import Judge, Judgement, JudgeReport, JudgeRequest, JudgeTally

__all__ = ["JudgeResult", "judge_file", "judging_path"]

# Rows judged per window, per request the judge has in flight: enough that its workers never
# wait for the next window, few enough that a window's rows stay small in memory.
_WINDOW_PER_WORKER: Final = 4
# A window is also written once it holds this many bytes of lines, so that sparse flagged rows
# (one in a thousand) do not hold thousands of rows in memory while a window fills.
_WINDOW_BYTES: Final = 8 << 20


def judging_path(output: str | Path) -> Path:
    """``OUTPUT.judging``: the rewrite in progress."""
    output = Path(output)
    return output.with_name(output.name + ".judging")


@attrs.frozen(kw_only=True)
class JudgeResult:
    """What a judge pass wrote and counted."""

    output: Path
    aggregate_path: Path
    failures_path: Path
    rows: int
    errors: int
    report: JudgeReport
    metrics: MetricsDocument


class _Line(NamedTuple):
    """A line of the graded file: its number, its bytes, its object, and what to judge in it."""

    number: int
    raw: bytes
    row: dict[str, Any]
    target: _Target | None


class _Target(NamedTuple):
    """A row to judge: its line, its row, its verdict, its mode and the request for the judge."""

    line: int
    row: dict[str, Any]
    verdict: Verdict
    mode: GradingMode
    request: JudgeRequest
    sampled: bool


def judge_file(
    output_path: str | Path,
    judge: Judge,
    *,
    rules_dirs: Sequence[str | Path] = (),
    by: Sequence[str] = (),
    sample: int = 0,
    seed: int = 0,
    input_path: str | Path | None = None,
    mode: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> JudgeResult:
    """Judge the flagged rows of the graded file ``output_path`` (and ``sample`` rows the rules
    decided), rewrite it and its metrics files (see the module docstring).

    ``rules_dirs`` must hold the modes the rows were graded in, when they are not built in (the
    mode's weights make a judged row's reward); ``by`` is the grading's ``--by``; ``input_path``
    and ``mode`` name the grading's input and ``--mode`` in the metrics' summary. ``progress`` is
    called with (rows judged, rows to judge) after each window. Raises ``BatchError`` when the
    file cannot be read or rewritten; nothing the judge does raises.
    """
    from choicebox.judge import JudgeTally  # noqa: PLC0415  ~20 ms that `choicebox grade` without a judge does not pay

    output = Path(output_path)
    if not output.is_file():
        raise BatchError("no graded file to judge", path=str(output))
    for path in (output, judging_path(output), *sidecar_paths(output)):
        check_target(path)
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
        raise BatchError(f"the calibration sample is a number of rows, not {sample!r}")
    flagged, decided = _count(output)
    sampled = frozenset(random.Random(seed).sample(decided, min(sample, len(decided))))
    total = flagged + len(sampled)
    registry = default_registry(tuple(str(d) for d in rules_dirs))
    tally = JudgeTally()
    metrics = MetricsAccumulator(component_names=COMPONENTS, include_groups=False, by=tuple(by))
    window = judge.endpoint.concurrency * _WINDOW_PER_WORKER
    partial = judging_path(output)
    done = 0
    try:
        with os.fdopen(create_new(partial), "wb") as out, open(output, "rb") as source:
            pending: list[_Line] = []
            waiting = held = 0
            for number, raw in _lines(source):
                row = _object(number, raw, output)
                target = _target(number, row, registry, sampled)
                pending.append(_Line(number, raw, row, target))
                waiting += target is not None
                held += len(raw)
                if waiting >= window or held >= _WINDOW_BYTES:
                    done += _flush(pending, judge=judge, tally=tally, metrics=metrics, out=out, by=by)
                    pending, waiting, held = [], 0, 0
                    if progress is not None:
                        progress(done, total)
            done += _flush(pending, judge=judge, tally=tally, metrics=metrics, out=out, by=by)
            if progress is not None:
                progress(done, total)
            out.flush()
            os.fsync(out.fileno())
        report = tally.report(judge.endpoint, judge.cost, judge.down, sample=sample > 0)
        summary = RunSummary(
            input=None if input_path is None else str(input_path),
            output=str(output),
            mode=mode,
            extra={"judge": report.to_json()},
        )
        document = metrics.document(summary=summary)
        aggregate_path, failures_path = sidecar_paths(output)
        write_json(aggregate_path, document.aggregate_json())
        write_json(failures_path, document.failure_json())
        check_target(output)
        os.replace(partial, output)  # last: OUTPUT is the judged file only once all of it is
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return JudgeResult(
        output=output, aggregate_path=aggregate_path, failures_path=failures_path,
        rows=metrics.n_rows, errors=metrics.n_errors, report=report, metrics=document,
    )  # fmt: skip


def _lines(handle: Any) -> Iterator[tuple[int, bytes]]:
    for number, raw in enumerate(handle, start=1):
        if raw.strip():
            yield number, raw


def _count(output: Path) -> tuple[int, list[int]]:
    """How many rows are flagged, and the lines of the rows the rules decided (the sample's pool)."""
    flagged = 0
    decided: list[int] = []
    with open(output, "rb") as handle:
        for number, raw in _lines(handle):
            row = _row(raw)
            if row is None:
                continue
            if row.get("needs_judge") is True:
                flagged += 1
            elif isinstance(row.get("extracted_answer"), str) and not row.get("mask_sample"):
                decided.append(number)
    return flagged, decided


def _row(raw: bytes) -> dict[str, Any] | None:
    """A graded row, or ``None`` for an error row or a line that is no object."""
    try:
        row = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return row if isinstance(row, dict) and "error" not in row else None


def _object(number: int, raw: bytes, output: Path) -> dict[str, Any]:
    """The line's object (a graded row or an error row): a graded file holds nothing else."""
    try:
        row = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BatchError(f"line {number} is not JSON ({exc}): not a file choicebox grade wrote", path=str(output)) from None
    if not isinstance(row, dict):
        raise BatchError(f"line {number} is no JSON object: not a file choicebox grade wrote", path=str(output))
    return row


def _target(number: int, row: dict[str, Any], registry: ModeRegistry, sampled: frozenset[int]) -> _Target | None:
    """The row at ``number`` as something to judge, or ``None`` when it is not one (or cannot be:
    a row whose verdict, mode or text cannot be read keeps its line as it is)."""
    flagged = row.get("needs_judge") is True
    if not flagged and number not in sampled:
        return None
    from choicebox.judge import judged_row  # noqa: PLC0415  see judge_file; imported by then

    seen = judged_row(row, registry)
    if seen is None:
        return None
    return _Target(number, row, seen.verdict, seen.mode, seen.request, not flagged)


def _flush(
    pending: list[_Line],
    *,
    judge: Judge,
    tally: JudgeTally,
    metrics: MetricsAccumulator,
    out: Any,
    by: Sequence[str],
) -> int:
    """Judge the window's targets, write its lines in order and count them (in input order, as
    grading counted them: the metrics sum in that order); the rows judged."""
    from choicebox.judge import apply_judgement  # noqa: PLC0415  see judge_file; imported by then

    targets = [line.target for line in pending if line.target is not None]
    judgements: dict[int, Judgement] = dict(
        zip((t.line for t in targets), judge.judge_all([t.request for t in targets]), strict=True)
    )
    parts: list[bytes] = []
    for number, raw, row, target in pending:
        if target is None:
            parts.append(raw if raw.endswith(b"\n") else raw + b"\n")
        else:
            judgement = judgements[number]
            judged = apply_judgement(target.verdict, judgement, target.mode)
            if target.sampled:
                tally.sampled(number, target.verdict, judgement)
            else:
                tally.flagged(number, target.verdict, judged, judgement)
            row.update(judged.wire_fields())
            parts.append(orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE))
        metrics.add_record(record_of(row, by))
    out.write(b"".join(parts))
    return len(targets)
