"""The metrics accumulator: rows (or their records) in, one metrics document out.

``choicebox grade`` (fed records by its runners), the server's ``/aggregate_metrics`` and the
one-shot functions :func:`aggregate_metrics`, :func:`category_breakdown` and
:func:`failure_analysis` all count with :class:`MetricsAccumulator`, so a number means the same
wherever it is reported. Streaming, memory is per task (a few bytes per rollout, for pass@k), one
byte per row for each reward tally (overall and per category: the bootstrap resamples them in
arrival order), and a few exemplars per failure kind; rows themselves are never kept. With
``profile=True`` (``/aggregate_metrics``) every scored row's numbers are kept as well, for
Gym's per-column, per-task and per-repeat statistics.

Masked rows (``mask_sample`` set: the reward is no valid measurement, in Gym's sense) are left out
of every score and reported as ``coverage/*``, as Gym 0.7.0 does.
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
from ._gym import TaskMetrics, key_metrics
from ._profile import GymProfile, perf_summary
from ._records import (
    EXEMPLARS_PER_KIND,
    RowRecord,
    failure_kind,
    full_reward,
    library_task,
    read_row,
)
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

    * ``component_names``: reward components (row fields) whose means ``agent_metrics`` reports
      (streaming; a profile reports every numeric field anyway).
    * ``profile``: keep every scored row's numbers and report all of Gym 0.7.0's
      ``/aggregate_metrics`` (statistics of every numeric field and of ``response.usage``, per
      task, per rollout index and across them, ``num_repeats``, ``perf_summary``). Rows are then
      added with :meth:`add` (a record carries too little).
    * ``include_groups``: with ``profile``, also report per-task statistics
      (``group_level_metrics``).
    * ``by``: dotted fields to report accuracy per category of (``categories``).
    * ``tasks``: group rows into tasks for pass@k; rows then need ``_ng_task_index`` or a
      ``task_key``. Without tasks (and without ``by``), rows need no reward either: what is
      left is the failure analysis.
    * ``max_exemplars`` failed rows are kept per failure kind; ``resamples`` and ``seed`` are the
      bootstrap's.

    Rows are grouped into tasks by ``_ng_task_index``, else by the ``task_key`` given to
    :meth:`add`; within a task, rollouts keep arrival order, as in the reference. A row with an
    ``error`` and no numeric reward is an error row: counted, and failed, but not graded. A
    masked row is counted and failed (as its ``failure_kind``) but scores nothing.
    """

    __slots__ = (
        "_by",
        "_component_names",
        "_errors",
        "_exemplar_counts",
        "_exemplars",
        "_failures",
        "_graded",
        "_include_groups",
        "_masked",
        "_masked_tasks",
        "_max_exemplars",
        "_need_reward",
        "_no_answer",
        "_perf",
        "_profile",
        "_resamples",
        "_reward_key",
        "_rewards",
        "_rollouts",
        "_rows",
        "_seed",
        "_tallies",
        "_tasks",
    )

    def __init__(
        self,
        *,
        component_names: Sequence[str] = (),
        profile: bool = False,
        include_groups: bool = True,
        by: Sequence[str] = (),
        tasks: bool = True,
        reward_key: str = "reward",
        max_exemplars: int = EXEMPLARS_PER_KIND,
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
        if profile and (self._component_names or not tasks):
            raise MetricsError(
                "profile reports every numeric field of tasks' rows: it takes no component_names "
                "and needs tasks"
            )
        self._by = tuple(by)
        self._tasks = TaskMetrics(self._component_names) if tasks else None
        self._profile = GymProfile() if profile else None
        self._include_groups = include_groups
        self._perf: list[Mapping[str, Any]] = []
        self._rollouts: set[int] = set()
        self._masked = 0
        self._masked_tasks: set[int | str] = set()
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
        error row; ``task_key`` groups a row without ``_ng_task_index``. A profile puts a row with
        neither in task 0 and numbers rows without ``_ng_rollout_index`` in arrival order, as
        Gym's defaults would (Gym itself rejects the duplicate indices that follow)."""
        grouped = self._tasks is not None
        task = library_task(row, task_key, strict=grouped)
        if task is None and self._profile is not None:
            task = 0
        if grouped and task is None and row.get("error") is None:
            raise MetricsError(_NO_TASK)
        record = read_row(
            row,
            task=task,
            component_names=self._component_names,
            by=self._by,
            reward_key=self._reward_key,
            need_reward=self._need_reward,
        )
        profile = self._profile
        if profile is not None:
            perf = row.get("ng_perf")
            if isinstance(perf, Mapping):
                self._perf.append(perf)
            if record.task is not None and (record.reward is not None or record.masked):
                rollout = profile.key_of(row, record.task, self._rows)
                self._rollouts.add(rollout)
                if not record.masked:
                    profile.add(row, record.task, rollout)
        self._add(record)

    def add_rows(
        self, rows: Iterable[Mapping[str, Any]], *, task_key_field: str | None = None
    ) -> None:
        """:meth:`add` each row; errors name the row's position.

        Rows without ``_ng_task_index`` are grouped by the (dotted) ``task_key_field``, e.g.
        ``"uuid"``; a graded row with neither is rejected rather than silently lumped together
        (a profile puts it in task 0, as Gym does).
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
                if (raw is _MISSING or raw is None) and self._profile is None:
                    raise MetricsError(
                        f"row {index} has neither {TASK_INDEX_KEY} nor {task_key_field!r}"
                    )
                if isinstance(raw, Mapping | list):  # str() of a deep one raises RecursionError
                    raise MetricsError(
                        f"row {index}: {task_key_field!r} must be a string or a number to group "
                        f"rollouts by, got {'an object' if isinstance(raw, Mapping) else 'an array'}"
                    )
                task_key = None if raw is _MISSING or raw is None else str(raw)
            try:
                self.add(row, task_key=task_key)
            except MetricsError as exc:
                raise MetricsError(f"row {index}: {exc}") from None

    def add_record(self, record: RowRecord) -> None:
        """Record one row as its record (what ``choicebox grade``'s workers send back)."""
        if self._profile is not None:
            raise MetricsError("a profiling accumulator takes rows (add), not records")
        self._add(record)

    def _add(self, record: RowRecord) -> None:
        # Once per row of every run: the record's fields read once, `failed` inlined.
        error, _, task, reward, extracted, components, _, _, categories, masked = record
        tasks = self._tasks
        if masked:
            self._rows += 1
            self._masked += 1
            if error is not None:
                self._errors += 1
            if task is not None:
                self._masked_tasks.add(task)
            self._add_failure(record, self._rows - 1)
            return
        if reward is None:
            if error is None and self._need_reward:
                raise MetricsError(f"row has no numeric {self._reward_key!r}")
        elif tasks is not None and task is None:
            raise MetricsError(_NO_TASK)
        index = self._rows
        self._rows = index + 1
        if error is not None:
            self._errors += 1
        if reward is not None:
            self._graded += 1
            if tasks is not None:
                assert task is not None  # checked above, before anything was counted
                tasks.add(task, reward, extracted, components)
            self._rewards.add(reward)
            if extracted is None:
                self._no_answer += 1
            if self._tallies:
                for tally, category in zip(self._tallies, categories, strict=True):
                    scores = tally.get(category)
                    if scores is None:
                        scores = tally[category] = _Scores()
                    scores.add(reward)
            if error is None and full_reward(reward):
                return
        self._add_failure(record, index)  # failed (``_records.failed``)

    def add_records(self, records: Iterable[RowRecord]) -> None:
        if self._profile is not None:
            raise MetricsError("a profiling accumulator takes rows (add), not records")
        add = self._add
        for record in records:
            add(record)

    def _add_failure(self, record: RowRecord, index: int) -> None:
        kind = failure_kind(record)
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
        """Tasks with at least one scored rollout."""
        return 0 if self._tasks is None else self._tasks.n_tasks

    @property
    def n_masked(self) -> int:
        """Rows whose ``mask_sample`` is set."""
        return self._masked

    # --- results ----------------------------------------------------------------------------

    def coverage(self) -> dict[str, int]:
        """Gym's ``coverage/*`` keys: how many rollouts and tasks the scores come from; empty
        when nothing was masked."""
        if not self._masked:
            return {}
        scored_tasks = 0 if self._tasks is None else self._tasks.n_tasks
        tasks = self._tasks
        fully_masked = sum(1 for task in self._masked_tasks if tasks is None or task not in tasks)
        return {
            "coverage/measured_rollouts": self._graded,
            "coverage/masked_rollouts": self._masked,
            "coverage/measured_tasks": scored_tasks,
            "coverage/fully_masked_tasks": fully_masked,
        }

    def result(self) -> dict[str, Any]:
        """NeMo Gym's ``/aggregate_metrics`` reply: ``group_level_metrics``, ``agent_metrics``,
        ``key_metrics``, ``perf_summary`` and ``repeat_level_metrics`` (the last two and the
        per-column statistics only with ``profile``; all empty without tasks)."""
        out: dict[str, Any] = {
            "group_level_metrics": [],
            "agent_metrics": {},
            "key_metrics": {},
            "perf_summary": perf_summary(self._perf, self._graded + self._masked),
            "repeat_level_metrics": [],
        }
        tasks = self._tasks
        if tasks is None or not (self._graded or self._masked):
            return out
        coverage = self.coverage()
        if not self._graded:
            # Every rollout was masked: Gym reports what happened rather than means of nothing.
            out["agent_metrics"] = dict(coverage)
            out["key_metrics"] = dict(coverage)
            return out
        profile = self._profile
        if profile is None:
            agent: dict[str, Any] = tasks.means()
            agent.update(coverage)
            agent.update(tasks.pass_majority())
        else:
            groups, agent, repeats = profile.describe()
            agent.update(coverage)
            agent.update(tasks.pass_majority())
            agent["num_repeats"] = len(self._rollouts)
            out["group_level_metrics"] = groups if self._include_groups else []
            out["repeat_level_metrics"] = repeats
        key = key_metrics(agent)
        key.update(coverage)
        out["agent_metrics"] = agent
        out["key_metrics"] = key
        return out

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
            repeat_level_metrics=tuple(gym["repeat_level_metrics"]),
            perf_summary=gym["perf_summary"],
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
    profile: bool = True,
    component_names: Sequence[str] = (),
    include_groups: bool = True,
    task_key_field: str | None = None,
) -> dict[str, Any]:
    """NeMo Gym 0.7.0's ``/aggregate_metrics`` of ``rows`` (see
    :meth:`MetricsAccumulator.add_rows`); ``profile=False`` gives what ``choicebox grade``
    streams: the means of the reward and of ``component_names``, pass@k and its kin."""
    acc = MetricsAccumulator(
        component_names=component_names, profile=profile, include_groups=include_groups
    )
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
    rows: Iterable[Mapping[str, Any]], *, max_exemplars: int = EXEMPLARS_PER_KIND
) -> dict[str, Any]:
    """``failure_analysis.json`` of ``rows``; ``problem_idx`` is ``_ng_task_index`` or position."""
    acc = MetricsAccumulator(tasks=False, max_exemplars=max_exemplars)
    acc.add_rows(rows)
    return acc.failure_analysis().to_json()
