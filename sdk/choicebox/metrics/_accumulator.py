"""The metrics accumulator: rows (or their records) in, one metrics document out.

``choicebox grade`` (fed records by its runners), the server's ``/aggregate_metrics`` and the
one-shot functions :func:`aggregate_metrics`, :func:`category_breakdown` and
:func:`failure_analysis` all count with :class:`MetricsAccumulator`, so a number means the same
wherever it is reported. Memory is per task (a few bytes per rollout, for pass@k), one byte per
row for each reward tally (overall and per category: the bootstrap resamples them in arrival
order), and a few exemplars per failure kind; rows themselves are never kept.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from choicebox._errors import MetricsError

from ._document import (
    CategoryEntry,
    FailureAnalysis,
    FailureCount,
    FailureExemplar,
    MetricsDocument,
    RunSummary,
)
from ._fields import _MISSING, TASK_INDEX_KEY, _lookup
from ._gym import TaskMetrics
from ._records import RowRecord, failed, library_task, read_row
from ._stats import CategoryStats, ConfidenceInterval, bootstrap_ci


class _Scores:
    """Rewards in arrival order: a byte each while they are all 0 or 1, else a double each."""

    __slots__ = ("_bits", "_values")

    def __init__(self) -> None:
        self._bits = bytearray()
        self._values: array[float] | None = None

    def add(self, reward: float) -> None:
        values = self._values
        if values is None:
            # -0.0 is kept as 0.0, as `_number` reads it from a row.
            if reward in (0.0, 1.0):
                self._bits.append(1 if reward else 0)
                return
            values = self._values = array("d", iter(self._bits))
            self._bits = bytearray()
        values.append(reward)

    def __len__(self) -> int:
        return len(self._bits) if self._values is None else len(self._values)

    def floats(self) -> array[float]:
        return array("d", iter(self._bits)) if self._values is None else self._values


class MetricsAccumulator:
    """Streams graded rows into their metrics: NeMo Gym's aggregates, intervals, categories and
    failures.

    * ``component_names``: reward components (row fields) whose means ``agent_metrics`` reports.
    * ``include_groups``: also report per-task statistics (``group_level_metrics``).
    * ``by``: dotted fields to report accuracy per category of (``categories``).
    * ``tasks``: group rows into tasks for pass@k; rows then need ``_ng_task_index`` or a
      ``task_key``. Without tasks (and without ``by``), rows need no reward either: what is
      left is the failure analysis.
    * ``max_exemplars`` failed rows are kept per failure kind; ``resamples`` and ``seed`` are the
      bootstrap's.

    Rows are grouped into tasks by ``_ng_task_index``, else by the ``task_key`` given to
    :meth:`add`; within a task, rollouts keep arrival order, as in the reference. A row with an
    ``error`` and no numeric reward is an error row: counted, and failed, but not graded.
    """

    __slots__ = (
        "_by",
        "_component_names",
        "_errors",
        "_exemplar_counts",
        "_exemplars",
        "_failures",
        "_graded",
        "_max_exemplars",
        "_need_reward",
        "_no_answer",
        "_resamples",
        "_reward_key",
        "_rewards",
        "_rows",
        "_seed",
        "_tallies",
        "_tasks",
    )

    def __init__(
        self,
        *,
        component_names: Sequence[str] = (),
        include_groups: bool = True,
        by: Sequence[str] = (),
        tasks: bool = True,
        reward_key: str = "reward",
        max_exemplars: int = 3,
        resamples: int = 10_000,
        seed: int = 0,
    ) -> None:
        if isinstance(component_names, str):  # a lone name would be iterated letter by letter
            raise MetricsError("component_names must be a sequence of names, not a string")
        if isinstance(by, str):
            raise MetricsError("by must be a sequence of field names, not a string")
        if isinstance(max_exemplars, bool) or not isinstance(max_exemplars, int):
            raise MetricsError("max_exemplars must be an int")
        if max_exemplars < 0:
            raise MetricsError(f"max_exemplars must be >= 0, got {max_exemplars}")
        self._component_names: tuple[str, ...] = tuple(dict.fromkeys(component_names))
        if "reward" in self._component_names:
            raise MetricsError("'reward' is always reported; do not list it as a component")
        self._by = tuple(by)
        self._tasks = (
            TaskMetrics(self._component_names, include_groups=include_groups) if tasks else None
        )
        self._need_reward = tasks or bool(self._by)
        self._reward_key = reward_key
        self._max_exemplars = max_exemplars
        self._resamples = resamples
        self._seed = seed
        self._rows = self._graded = self._errors = self._no_answer = 0
        self._rewards = _Scores()
        self._tallies: tuple[dict[str, _Scores], ...] = tuple({} for _ in self._by)
        self._failures: Counter[str] = Counter()
        self._exemplar_counts: Counter[str] = Counter()
        self._exemplars: list[FailureExemplar] = []

    # --- feeding ----------------------------------------------------------------------------

    def add(self, row: Mapping[str, Any], *, task_key: str | None = None) -> None:
        """Record one row: a graded row (``reward``, ``extracted_answer``, components...) or an
        error row; ``task_key`` groups a row without ``_ng_task_index``."""
        grouped = self._tasks is not None
        task = library_task(row, task_key, strict=grouped)
        if grouped and task is None and row.get("error") is None:
            raise MetricsError(_NO_TASK)
        self.add_record(
            read_row(
                row,
                task=task,
                component_names=self._component_names,
                by=self._by,
                reward_key=self._reward_key,
                need_reward=self._need_reward,
            )
        )

    def add_rows(
        self, rows: Iterable[Mapping[str, Any]], *, task_key_field: str | None = None
    ) -> None:
        """:meth:`add` each row; errors name the row's position.

        Rows without ``_ng_task_index`` are grouped by the (dotted) ``task_key_field``, e.g.
        ``"uuid"``; a graded row with neither is rejected rather than silently lumped together.
        """
        for row in rows:
            index = self._rows
            task_key = None
            if (
                task_key_field is not None
                and row.get(TASK_INDEX_KEY) is None
                and row.get("error") is None
            ):
                raw = _lookup(row, task_key_field)
                if raw is _MISSING or raw is None:
                    raise MetricsError(
                        f"row {index} has neither {TASK_INDEX_KEY} nor {task_key_field!r}"
                    )
                if isinstance(raw, Mapping | list):  # str() of a deep one raises RecursionError
                    raise MetricsError(
                        f"row {index}: {task_key_field!r} must be a string or a number to group "
                        f"rollouts by, got {'an object' if isinstance(raw, Mapping) else 'an array'}"
                    )
                task_key = str(raw)
            try:
                self.add(row, task_key=task_key)
            except MetricsError as exc:
                raise MetricsError(f"row {index}: {exc}") from None

    def add_record(self, record: RowRecord) -> None:
        """Record one row as its record (what ``choicebox grade``'s workers send back)."""
        reward = record.reward
        tasks = self._tasks
        if reward is None:
            if record.error is None and self._need_reward:
                raise MetricsError(f"row has no numeric {self._reward_key!r}")
        elif tasks is not None and record.task is None:
            raise MetricsError(_NO_TASK)
        index = self._rows
        self._rows = index + 1
        if record.error is not None:
            self._errors += 1
        if reward is not None:
            self._graded += 1
            if tasks is not None:
                assert record.task is not None  # checked above, before anything was counted
                tasks.add(record.task, reward, record.extracted, record.components)
            self._rewards.add(reward)
            if record.extracted is None:
                self._no_answer += 1
            for tally, category in zip(self._tallies, record.categories, strict=True):
                scores = tally.get(category)
                if scores is None:
                    scores = tally[category] = _Scores()
                scores.add(reward)
        if failed(record):
            self._add_failure(record, index)

    def add_records(self, records: Iterable[RowRecord]) -> None:
        for record in records:
            self.add_record(record)

    def _add_failure(self, record: RowRecord, index: int) -> None:
        kind = record.failure or (
            "error"
            if record.error is not None
            else "no_answer"
            if record.extracted is None
            else "wrong_answer"
        )
        self._failures[kind] += 1
        if self._exemplar_counts[kind] < self._max_exemplars:
            self._exemplar_counts[kind] += 1
            task = record.task
            self._exemplars.append(
                FailureExemplar(
                    category=kind,
                    problem_idx=task if type(task) is int else index,
                    uuid=record.uuid,
                    response_preview=record.preview,
                )
            )

    # --- counts -----------------------------------------------------------------------------

    @property
    def n_rows(self) -> int:
        """Rows added, error rows included."""
        return self._rows

    @property
    def n_graded(self) -> int:
        """Rows with a reward."""
        return self._graded

    @property
    def n_errors(self) -> int:
        return self._errors

    @property
    def n_tasks(self) -> int:
        return 0 if self._tasks is None else self._tasks.n_tasks

    # --- results ----------------------------------------------------------------------------

    def result(self) -> dict[str, Any]:
        """``{"agent_metrics", "key_metrics", "group_level_metrics"}`` like NeMo Gym's
        ``/aggregate_metrics`` (empty without tasks)."""
        if self._tasks is None:
            return {"agent_metrics": {}, "key_metrics": {}, "group_level_metrics": []}
        return self._tasks.result()

    def accuracy_ci(self) -> ConfidenceInterval | None:
        """Mean reward of the graded rows with its bootstrap interval; ``None`` without any."""
        if not len(self._rewards):
            return None
        return bootstrap_ci(self._rewards.floats(), resamples=self._resamples, seed=self._seed)

    def categories(self) -> dict[str, list[CategoryStats]]:
        """Per ``by`` field, mean reward and its interval per category, sorted by name."""
        out: dict[str, list[CategoryStats]] = {}
        for field, tally in zip(self._by, self._tallies, strict=True):
            stats = []
            for category in sorted(tally):
                scores = tally[category]
                ci = bootstrap_ci(scores.floats(), resamples=self._resamples, seed=self._seed)
                stats.append(
                    CategoryStats(
                        category=category,
                        n_samples=len(scores),
                        mean_reward=ci.value,
                        ci_lower=ci.ci_lower,
                        ci_upper=ci.ci_upper,
                    )
                )
            out[field] = stats
        return out

    def failure_analysis(self) -> FailureAnalysis:
        total = self._rows
        failures = sum(self._failures.values())
        # Most frequent first, ties by name, so the file reads as a ranking.
        ranked = sorted(self._failures.items(), key=lambda item: (-item[1], item[0]))
        return FailureAnalysis(
            total_failures=failures,
            failure_rate=failures / total if total else 0.0,
            categories={name: FailureCount(count=n, rate=n / total) for name, n in ranked},
            exemplars=tuple(self._exemplars),
        )

    def document(
        self, *, summary: RunSummary | None = None, accuracy_ci: bool = True
    ) -> MetricsDocument:
        """Everything counted so far. ``summary`` (files and mode) gets the row counts filled in;
        ``accuracy_ci=False`` skips the bootstrap when only NeMo Gym's metrics are wanted."""
        gym = self.result()
        if summary is not None:
            graded = self._graded
            summary = attrs.evolve(
                summary,
                rows=self._rows,
                graded=graded,
                errors=self._errors,
                no_answer_rate=self._no_answer / graded if graded else None,
            )
        return MetricsDocument(
            agent_metrics=gym["agent_metrics"],
            key_metrics=gym["key_metrics"],
            group_level_metrics=tuple(gym["group_level_metrics"]),
            accuracy_ci=self.accuracy_ci() if accuracy_ci else None,
            categories={
                field: tuple(CategoryEntry.of(stats) for stats in entries)
                for field, entries in self.categories().items()
            },
            summary=summary,
            failure_analysis=self.failure_analysis(),
        )


_NO_TASK = f"row has no {TASK_INDEX_KEY}; pass task_key=... to group it into a task"


# --- one-shot functions -------------------------------------------------------------------------


def aggregate_metrics(
    rows: Iterable[Mapping[str, Any]],
    *,
    component_names: Sequence[str] = (),
    include_groups: bool = True,
    task_key_field: str | None = None,
) -> dict[str, Any]:
    """NeMo Gym's ``/aggregate_metrics`` of ``rows`` (see :meth:`MetricsAccumulator.add_rows`)."""
    acc = MetricsAccumulator(component_names=component_names, include_groups=include_groups)
    acc.add_rows(rows, task_key_field=task_key_field)
    return acc.result()


def category_breakdown(
    results: Iterable[Mapping[str, Any]],
    field: str,
    *,
    reward_key: str = "reward",
    resamples: int = 10_000,
    seed: int = 0,
) -> list[CategoryStats]:
    """Mean reward per value of ``field`` (a dotted path), sorted by category name.

    Rows lacking the field (or holding null there) fall into ``"(missing)"``; other values are
    ``str()``-ed so ``3`` and ``"3"`` share a category.
    """
    acc = MetricsAccumulator(
        tasks=False, by=(field,), reward_key=reward_key, resamples=resamples, seed=seed
    )
    try:
        acc.add_rows(results)
    except MetricsError as exc:
        raise MetricsError(f"category_breakdown: {exc}") from None
    return acc.categories()[field]


def failure_analysis(
    rows: Iterable[Mapping[str, Any]], *, max_exemplars: int = 3
) -> dict[str, Any]:
    """``failure_analysis.json`` of ``rows``; ``problem_idx`` is ``_ng_task_index`` or position."""
    acc = MetricsAccumulator(tasks=False, max_exemplars=max_exemplars)
    acc.add_rows(rows)
    return acc.failure_analysis().to_json()
