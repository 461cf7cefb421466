"""The metrics of a graded file, streamed from row records."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, Final

import attrs
import numpy as np

from choicebox._modes import COMPONENTS
from choicebox.metrics._aggregate import MetricsAccumulator
from choicebox.metrics._categories import CategoryStats
from choicebox.metrics._failures import FailureAccumulator
from choicebox.metrics._fields import TASK_INDEX_KEY
from choicebox.metrics._stats import bootstrap_ci

from ._records import RowRecord

# Input is graded in spans of about this many bytes (whole lines): a few hundred Gym rollouts.
CHUNK_BYTES: Final = 1 << 20
AGGREGATE_SUFFIX: Final = "_aggregate_metrics.json"
FAILURES_SUFFIX: Final = "_failure_analysis.json"
# Chunks handed to the pool but not yet written, per worker: enough to keep every worker busy,
# few enough that a fast reader never buffers the file in memory.
_IN_FLIGHT_PER_WORKER: Final = 4


# --- metrics ----------------------------------------------------------------------------------


def _ci_of(values: Counter[float]) -> dict[str, Any]:
    keys = list(values)
    scores = np.repeat(np.asarray(keys, dtype=np.float64), [values[k] for k in keys])
    return attrs.asdict(bootstrap_ci(scores))


class BatchMetrics:
    """Streams row records into the run's metrics; memory grows with tasks and categories only."""

    def __init__(self, by: Sequence[str] = ()) -> None:
        self.by = tuple(by)
        self.rows = 0
        self.errors = 0
        self.no_answer = 0
        # The component means are tallied here rather than by the accumulator: a Counter per
        # component is cheaper per row than its exact running sums, and as exact (see aggregate).
        self._acc = MetricsAccumulator(include_groups=False)
        self._components: list[Counter[float]] = [Counter() for _ in COMPONENTS]
        self._failures = FailureAccumulator(max_exemplars=3)
        self._rewards: Counter[float] = Counter()
        self._categories: list[dict[str, Counter[float]]] = [{} for _ in self.by]

    @property
    def graded(self) -> int:
        return self.rows - self.errors

    def add(self, record: RowRecord) -> None:
        index = self.rows
        self.rows += 1
        if record.error is not None:
            self.errors += 1
            self._failures.add(
                {"error": record.error, "uuid": record.uuid, "response_preview": record.preview},
                index,
            )
            return
        reward = record.reward
        row: dict[str, Any] = {"reward": reward, "extracted_answer": record.extracted}
        task = record.task
        if isinstance(task, int):
            row[TASK_INDEX_KEY] = task
            self._acc.add(row)
        else:
            self._acc.add(row, task_key="" if task is None else task)
            task = index
        for counts, value in zip(self._components, record.components, strict=False):
            if value is not None:
                counts[value] += 1
        if reward < 1.0 or record.failure is not None:
            row["failure"] = record.failure
            row["uuid"] = record.uuid
            row["response_preview"] = record.preview
        self._failures.add(row, task)
        self._rewards[reward] += 1
        if record.extracted is None:
            self.no_answer += 1
        for tally, category in zip(self._categories, record.categories, strict=True):
            per_category = tally.get(category)
            if per_category is None:
                per_category = tally[category] = Counter()
            per_category[reward] += 1

    def _agent_metrics(self, agent: Mapping[str, Any]) -> dict[str, Any]:
        """``agent`` with ``mean/<component>`` after ``mean/reward``, as NeMo Gym orders them."""
        out = {"mean/reward": agent["mean/reward"]}
        for name, counts in zip(COMPONENTS, self._components, strict=True):
            n = counts.total()
            if n:
                # The exact sum, rounded once, then divided: what math.fsum(values) / n gives.
                exact = sum(
                    (Fraction(value) * count for value, count in counts.items()), Fraction()
                )
                out[f"mean/{name}"] = float(exact) / n
        out.update((key, value) for key, value in agent.items() if key not in out)
        return out

    def categories(self) -> dict[str, list[dict[str, Any]]]:
        """Per ``--by`` field, mean reward and its 95% interval per category, sorted by name."""
        out: dict[str, list[dict[str, Any]]] = {}
        for field, tally in zip(self.by, self._categories, strict=True):
            stats = []
            for category in sorted(tally):
                ci = _ci_of(tally[category])
                stats.append(
                    attrs.asdict(
                        CategoryStats(
                            category=category,
                            n_samples=tally[category].total(),
                            mean_reward=ci["value"],
                            ci_lower=ci["ci_lower"],
                            ci_upper=ci["ci_upper"],
                        )
                    )
                )
            out[field] = stats
        return out

    def aggregate(self, summary: Mapping[str, Any]) -> dict[str, Any]:
        """The ``_aggregate_metrics.json`` document."""
        result = self._acc.result()
        return {
            "agent_metrics": self._agent_metrics(result["agent_metrics"]) if self.graded else {},
            "key_metrics": result["key_metrics"],
            "accuracy_ci": _ci_of(self._rewards) if self._rewards else None,
            "categories": self.categories(),
            "summary": {
                **summary,
                "rows": self.rows,
                "graded": self.graded,
                "errors": self.errors,
                "no_answer_rate": self.no_answer / self.graded if self.graded else None,
            },
        }

    def failure_analysis(self) -> dict[str, Any]:
        return self._failures.result()


