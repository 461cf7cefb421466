"""Two verdicts per row, counted: where two ways of grading one file differ, and by how much.

Each side is either the verdicts already recorded in the file (``reward`` and
``extracted_answer``, as Gym's mcqa server or an earlier ``choicebox grade`` wrote them) or
choicebox grading every row, in one mode or in each row's own ``grading_mode``. A row's verdict
is *correct*, *wrong* (a letter that is not the expected one), *no answer* or *ungraded* (an
error row, no recorded verdict, or ``mask_sample`` set: its reward is no measurement).

The accuracy change is over the rows graded on both sides. Its interval is a paired percentile
bootstrap: rows are resampled, each carrying both of its verdicts, so the interval is that of
the mean per-row difference (seeded: the same file gives the same interval). For 0/1 outcomes
McNemar's exact test asks whether the rows that turned correct and the rows that turned wrong
could be a fair coin's split.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

import attrs
import orjson

from choicebox._rollout import response_excerpt
from choicebox.batch import Grader
from choicebox.metrics import ConfidenceInterval, bootstrap_ci

__all__ = [
    "CLASSES",
    "RECORDED",
    "ROW_MODE",
    "Comparison",
    "Exemplar",
    "Outcome",
    "compare_file",
    "mcnemar_exact",
]

RECORDED: Final = "recorded"  # a side that is the verdicts already in the file
ROW_MODE: Final = "row"  # a side that grades each row in its own grading_mode

VerdictClass: TypeAlias = Literal["correct", "wrong", "no answer", "ungraded"]
CLASSES: Final[tuple[VerdictClass, ...]] = ("correct", "wrong", "no answer", "ungraded")
TAIL_CHARS: Final = 240


@attrs.frozen
class Outcome:
    """One side's verdict on a row: its class, the letter it read, and why (if it says)."""

    kind: VerdictClass
    letter: str | None = None
    detail: str | None = None


@attrs.frozen(kw_only=True)
class Exemplar:
    """A row whose two verdicts differ, shown with the end of what the model wrote."""

    line: int
    uuid: str | None
    expected: str | None
    before: Outcome
    after: Outcome
    tail: str


@attrs.frozen(kw_only=True)
class Comparison:
    """Where two gradings of one file agree and differ.

    ``pairs`` counts rows per (before class, after class); ``letters_changed`` counts rows whose
    extracted letters differ, whatever their classes. Accuracies, the change (a fraction, with
    its paired bootstrap interval) and McNemar's p-value are over the ``paired`` rows, graded
    on both sides; they are ``None`` without any.
    """

    path: str
    before: str
    after: str
    rows: int
    pairs: Mapping[tuple[VerdictClass, VerdictClass], int]
    letters_changed: int
    paired: int
    before_accuracy: float | None
    after_accuracy: float | None
    change: ConfidenceInterval | None
    gained: int
    lost: int
    mcnemar_p: float | None
    exemplars: Mapping[tuple[VerdictClass, VerdictClass], tuple[Exemplar, ...]]


def side_label(side: str) -> str:
    if side == RECORDED:
        return "the verdicts recorded in the file"
    if side == ROW_MODE:
        return "choicebox, each row's grading_mode"
    return f"choicebox, mode {side}"


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return float(value)


def read_verdict(row: Mapping[str, Any]) -> Outcome:
    """The verdict a row carries (a Gym verify response, a ``choicebox grade`` output row)."""
    reward = _number(row.get("reward"))
    if row.get("error") is not None and reward is None:
        return Outcome("ungraded", detail=str(row["error"]))
    if reward is None:
        return Outcome("ungraded", detail="no numeric reward")
    if row.get("mask_sample"):
        kind = row.get("failure_kind")
        return Outcome("ungraded", detail=f"masked ({kind})" if kind else "masked")
    letter = row.get("extracted_answer")
    letter = None if letter is None else str(letter)
    detail = row.get("grading_detail")
    detail = None if detail is None else str(detail)
    if letter is None:
        return Outcome("no answer", None, detail)
    # choicebox's correctness says it even under a weighted reward; Gym's reward is 1 or 0.
    correctness = _number(row.get("correctness"))
    correct = (correctness if correctness is not None else reward) >= 1
    return Outcome("correct" if correct else "wrong", letter, detail)


def _tail(row: Mapping[str, Any]) -> str:
    return response_excerpt(row.get("response"), TAIL_CHARS, end=True) or ""


class _Side:
    """One way of getting a row's verdict."""

    def __init__(self, side: str, rules_dirs: tuple[str, ...]) -> None:
        self.grader = (
            None
            if side == RECORDED
            else Grader(mode=None if side == ROW_MODE else side, rules_dirs=rules_dirs)
        )

    def verdict(self, line: int, raw: bytes, row: Mapping[str, Any] | None) -> Outcome:
        if self.grader is None:
            return Outcome("ungraded", detail="invalid JSON") if row is None else read_verdict(row)
        return read_verdict(self.grader.grade_row(line, raw))


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                yield number, raw


def compare_file(
    path: str | Path,
    *,
    before: str = RECORDED,
    after: str = ROW_MODE,
    rules_dirs: tuple[str, ...] = (),
    exemplars: int = 3,
    resamples: int = 10_000,
    seed: int = 0,
) -> Comparison:
    """Compare two gradings of the rows of ``path`` (a JSONL file of rollouts).

    ``before`` and ``after`` are :data:`RECORDED`, :data:`ROW_MODE` or a mode name. Raises
    ``UnknownModeError`` for a mode no registry knows and ``OSError`` for a file that cannot be
    read; rows that cannot be graded are counted as ungraded.
    """
    source = Path(path)
    sides = (_Side(before, rules_dirs), _Side(after, rules_dirs))
    pairs: Counter[tuple[VerdictClass, VerdictClass]] = Counter()
    shown: dict[tuple[VerdictClass, VerdictClass], list[Exemplar]] = {}
    differences: list[float] = []
    rows = letters_changed = gained = lost = before_correct = after_correct = 0
    for line, raw in _lines(source):
        rows += 1
        try:
            row: dict[str, Any] | None = orjson.loads(raw)
        except orjson.JSONDecodeError:
            row = None
        if row is not None and not isinstance(row, dict):
            row = None
        first, second = (side.verdict(line, raw, row) for side in sides)
        key = (first.kind, second.kind)
        pairs[key] += 1
        if first.letter != second.letter:
            letters_changed += 1
        if "ungraded" not in key:
            was, now = first.kind == "correct", second.kind == "correct"
            before_correct += was
            after_correct += now
            differences.append(float(now) - float(was))
            gained += now and not was
            lost += was and not now
        if (first.kind, first.letter) != (second.kind, second.letter) and row is not None:
            kept = shown.setdefault(key, [])
            if len(kept) < exemplars:
                expected = row.get("expected_answer")
                uuid = row.get("uuid")
                kept.append(
                    Exemplar(
                        line=line,
                        uuid=None if uuid is None else str(uuid),
                        expected=None if expected is None else str(expected),
                        before=first,
                        after=second,
                        tail=_tail(row),
                    )
                )
    paired = len(differences)
    change = bootstrap_ci(differences, resamples=resamples, seed=seed) if paired else None
    return Comparison(
        path=str(source),
        before=side_label(before),
        after=side_label(after),
        rows=rows,
        pairs=dict(pairs),
        letters_changed=letters_changed,
        paired=paired,
        before_accuracy=before_correct / paired if paired else None,
        after_accuracy=after_correct / paired if paired else None,
        change=change,
        gained=gained,
        lost=lost,
        mcnemar_p=mcnemar_exact(gained, lost) if paired else None,
        exemplars={key: tuple(found) for key, found in shown.items()},
    )


def mcnemar_exact(gained: int, lost: int) -> float:
    """Two-sided exact McNemar p-value: 2·P(X <= min) for X ~ Binomial(gained + lost, 1/2),
    at most 1. Summed in log space, so a million discordant rows neither overflow nor take long."""
    n = gained + lost
    if n == 0:
        return 1.0
    low = min(gained, lost)
    log_half = n * math.log(0.5)
    log_norm = math.lgamma(n + 1)
    logs = [log_norm - math.lgamma(k + 1) - math.lgamma(n - k + 1) + log_half for k in range(low + 1)]
    top = max(logs)
    tail = math.exp(top) * math.fsum(math.exp(x - top) for x in logs)
    return min(1.0, 2.0 * tail)
