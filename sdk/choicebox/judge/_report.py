"""What a judge pass did, counted: the rows sent, what the judge made of them, how far it agrees
with the rules on rows they decided (calibration, with a Wilson interval), and what it cost.

``JudgeTally`` is fed one row at a time; ``JudgeReport`` is what it adds up to, written into the
aggregate metrics file's ``summary`` (``judge``) and printed by ``choicebox grade``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, Final

import attrs

from choicebox.metrics import wilson_interval
from choicebox.render import Verdict

from ._client import JudgeEndpoint
from ._judge import JudgeCost, Judgement

__all__ = ["Calibration", "JudgeReport", "JudgeTally", "KindTally"]

CONFIDENCE: Final = 0.95
_EXEMPLARS: Final = 5


@attrs.frozen(kw_only=True)
class KindTally:
    """The flagged rows of one failure kind: how many, and what the judge made of them."""

    flagged: int = 0
    decided: int = 0
    none: int = 0
    failed: int = 0


@attrs.frozen(kw_only=True)
class Calibration:
    """The judge on rows the rules decided (``--judge-sample``): of ``answered`` rows (the judge
    gave a letter or NONE), ``agreed`` gave the rules' letter. ``ci_lower``/``ci_upper`` bound the
    agreement (Wilson, at ``confidence``); ``None`` when the judge answered none of them."""

    sampled: int
    answered: int
    agreed: int
    judge_none: int
    failed: int
    confidence: float = CONFIDENCE
    ci_lower: float | None = None
    ci_upper: float | None = None

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.answered if self.answered else None

    def to_json(self) -> dict[str, Any]:
        return {
            "sampled": self.sampled, "answered": self.answered, "agreed": self.agreed,
            "agreement": self.agreement, "ci_lower": self.ci_lower, "ci_upper": self.ci_upper,
            "confidence": self.confidence, "interval": "wilson", "judge_none": self.judge_none,
            "failed": self.failed,
        }  # fmt: skip


@attrs.frozen(kw_only=True)
class JudgeReport:
    """A judge pass, counted (see the module docstring). ``unreachable`` says why the judge was
    found down, when it was: every row it could not judge kept its rule verdict."""

    url: str
    model: str
    api: str
    flagged: int
    decided: int
    none: int
    failed: int
    rewards_changed: int
    by_kind: Mapping[str, KindTally]
    failures: Mapping[str, int]
    calibration: Calibration | None
    cost: JudgeCost
    unreachable: str | None
    exemplars: tuple[str, ...] = ()

    @property
    def sent(self) -> int:
        """Rows that went to the judge: the flagged ones and the calibration sample."""
        return self.flagged + (self.calibration.sampled if self.calibration else 0)

    def to_json(self) -> dict[str, Any]:
        cost = self.cost
        return {
            "url": self.url, "model": self.model, "api": self.api,
            "rows_sent": self.sent, "flagged": self.flagged, "decided": self.decided, "none": self.none,
            "failed": self.failed, "rewards_changed": self.rewards_changed,
            "by_failure_kind": {kind: attrs.asdict(tally) for kind, tally in self.by_kind.items()},
            "judge_failures": dict(self.failures),
            "calibration": None if self.calibration is None else self.calibration.to_json(),
            "cost": {
                "prompts": cost.prompts, "calls": cost.calls, "retries": cost.retries,
                "cached": cost.cached, "prompt_tokens": cost.prompt_tokens,
                "completion_tokens": cost.completion_tokens, "tokens": cost.tokens,
                "seconds": round(cost.seconds, 3),
            },
            "unreachable": self.unreachable,
            "exemplars": list(self.exemplars),
        }  # fmt: skip


class JudgeTally:
    """Counts a judge pass row by row (``flagged`` and ``sampled`` rows), into a ``JudgeReport``."""

    def __init__(self) -> None:
        self._kinds: dict[str, Counter[str]] = {}
        self._failures: Counter[str] = Counter()
        self._calibration: Counter[str] = Counter()
        self._changed = 0
        self._exemplars: list[str] = []

    def flagged(self, line: int, before: Verdict, after: Verdict, judgement: Judgement) -> None:
        """A flagged row: its rule verdict, the verdict with the judgement, and the judgement."""
        kind = self._kinds.setdefault(before.failure or "none", Counter())
        kind["flagged"] += 1
        kind[_outcome(judgement)] += 1
        self._failed(line, judgement)
        if after.reward != before.reward:
            self._changed += 1

    def sampled(self, line: int, verdict: Verdict, judgement: Judgement) -> None:
        """A calibration row: decided by the rules (``verdict.extracted_answer``), read by the judge."""
        counts = self._calibration
        counts["sampled"] += 1
        outcome = _outcome(judgement)
        counts[outcome] += 1
        if outcome == "decided" and judgement.letter == verdict.extracted_answer:
            counts["agreed"] += 1
        self._failed(line, judgement)

    def _failed(self, line: int, judgement: Judgement) -> None:
        if judgement.failure is None:
            return
        self._failures[judgement.failure] += 1
        if len(self._exemplars) < _EXEMPLARS:
            self._exemplars.append(f"line {line}: {judgement.failure}: {judgement.detail}")

    def report(self, endpoint: JudgeEndpoint, cost: JudgeCost, unreachable: str | None, *, sample: bool) -> JudgeReport:
        """The pass counted; ``sample`` says whether calibration rows were asked for."""
        kinds = {kind: KindTally(**dict(counts)) for kind, counts in sorted(self._kinds.items())}
        return JudgeReport(
            url=endpoint.url, model=endpoint.model, api=endpoint.api,
            flagged=sum(t.flagged for t in kinds.values()), decided=sum(t.decided for t in kinds.values()),
            none=sum(t.none for t in kinds.values()), failed=sum(t.failed for t in kinds.values()),
            rewards_changed=self._changed, by_kind=kinds, failures=dict(sorted(self._failures.items())),
            calibration=self._calibrated() if sample else None, cost=cost, unreachable=unreachable,
            exemplars=tuple(self._exemplars),
        )  # fmt: skip

    def _calibrated(self) -> Calibration:
        counts = self._calibration
        answered = counts["decided"] + counts["none"]
        interval = wilson_interval(counts["agreed"], answered, CONFIDENCE) if answered else (None, None)
        return Calibration(
            sampled=counts["sampled"], answered=answered, agreed=counts["agreed"],
            judge_none=counts["none"], failed=counts["failed"], ci_lower=interval[0], ci_upper=interval[1],
        )  # fmt: skip


def _outcome(judgement: Judgement) -> str:
    if judgement.failure is not None:
        return "failed"
    return "none" if judgement.letter is None else "decided"
