"""NeMo Gym's reward profile of verify responses: what ``/aggregate_metrics`` reports besides
pass@k.

Gym 0.7.0 (``nemo_gym/reward_profile.py``) turns every scored verify response into a row of
numbers (its numeric top-level fields merged with ``response.usage``, ``_``-prefixed keys left
out, booleans as 0/1) and describes them with pandas: per task (``group_level_metrics``), over
all rows (the ``mean/``, ``max/``, ``min/``, ``median/`` and ``std/`` keys of ``agent_metrics``),
per rollout index (``repeat_level_metrics``) and across rollout indices (the
``*_across_repeats/`` keys). :class:`GymProfile` computes the same numbers with numpy, in the
same order (rows sorted by task and rollout index, columns in the order they first appear), so
the values match the reference's; the t intervals use :mod:`._tdist` instead of scipy and agree
with it to about 1e-14 relative.

Unlike :class:`~choicebox.metrics._gym.TaskMetrics`, a profile keeps every row's numbers: it
serves ``/aggregate_metrics``, whose request holds them all anyway, not ``choicebox grade``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeAlias

from choicebox._errors import MetricsError

from ._fields import ROLLOUT_INDEX_KEY, TASK_INDEX_KEY
from ._tdist import t_interval

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats: TypeAlias = npt.NDArray[np.float64]


def _numpy() -> ModuleType:
    import numpy  # noqa: PLC0415  only a profile needs numpy, not every command that counts metrics

    return numpy

_STATS: Final = ("mean", "max", "min", "median", "std")
# What Gym's profiler puts in every group's "sample": the synthetic input row of
# ``compute_aggregate_metrics`` without its indices.
_SAMPLE: Final = {"agent_ref": {"name": "agent"}}

# nemo_gym/metrics_config.py: which repeat-level columns are point estimates worth summarizing
# across repeats.
_EXCLUDED_PREFIXES: Final = tuple(
    f"{s}/"
    for s in ("max", "min", "median", "std", "sem", "se", "p25", "p75", "ci_low_95",
              "ci_high_95", "histogram")
)  # fmt: skip
_EXCLUDED_SUFFIXES: Final = (
    "/max", "/min", "/median", "/p5", "/p25", "/p75", "/p95", "/ci_low_95", "/ci_high_95",
    "/ci_lower", "/ci_upper", "_ci_lower", "_ci_upper", "_ci95_lower", "_ci95_upper",
    "/_ng_attempt_index", "/std_dev_across_runs", "/std_err_across_runs", "/avg_sample_std_dev",
)  # fmt: skip
_EXCLUDED_NAMES: Final = frozenset(
    {TASK_INDEX_KEY, ROLLOUT_INDEX_KEY, "_ng_attempt_index", "sample_count", "missing_count",
     "num_repeats", "token_usage_version"}
)  # fmt: skip
_ACROSS: Final = "_across_repeats/"


def is_primary_metric(name: str) -> bool:
    """Whether Gym summarizes a repeat-level column across repeats (``is_primary_metric``)."""
    return (
        name not in _EXCLUDED_NAMES
        and not name.startswith(_EXCLUDED_PREFIXES)
        and not name.endswith(_EXCLUDED_SUFFIXES)
        and _ACROSS not in name
    )


Number = int | float


def _numeric(value: object) -> Number | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return value
    return None


def _usage(row: Mapping[str, Any]) -> Mapping[str, Any]:
    response = row.get("response")
    usage = response.get("usage") if isinstance(response, Mapping) else None
    return usage if isinstance(usage, Mapping) else {}


def row_numbers(row: Mapping[str, Any]) -> dict[str, Number]:
    """The numbers Gym's profiler takes from one verify response: ``row | response.usage``,
    numeric values only, keys starting with ``_`` left out (``mask_sample`` is dropped first)."""
    merged = {**row, **_usage(row)}
    out: dict[str, Number] = {}
    for key, value in merged.items():
        if not isinstance(key, str) or key.startswith("_") or key == "mask_sample":
            continue
        number = _numeric(value)
        if number is not None:
            out[key] = number
    return out


def _task_fields(task: int | str) -> dict[str, Any]:
    return {TASK_INDEX_KEY: task} if isinstance(task, int) else {"task_key": task}


def rollout_info(row: Mapping[str, Any], task: int | str, rollout: int) -> dict[str, Any]:
    """One entry of a group's ``rollout_infos`` (``RewardProfiler.rollout_info_from_result``)."""
    info: dict[str, Any] = {"rollout_id": f"{task}:{rollout}", **_task_fields(task)}
    info[ROLLOUT_INDEX_KEY] = rollout
    if "reward" in row:
        info["reward"] = row["reward"]
    for key, value in _usage(row).items():
        number = _numeric(value)
        if number is not None:
            info[str(key)] = number
    for key, value in row.items():
        if not isinstance(key, str) or key.startswith("_") or key in ("reward", "response"):
            continue
        if key == "mask_sample":
            continue
        number = _numeric(value)
        if number is not None:
            info[key] = number
    return info


class _Rollout(NamedTuple):
    task: int | str
    rollout: int
    numbers: dict[str, Number]
    info: dict[str, Any]


def _task_order(task: int | str) -> tuple[int, int, str]:
    return (0, task, "") if isinstance(task, int) else (1, 0, task)


# --- pandas' reductions, as numpy computes them ------------------------------------------------


def _floats(values: Sequence[Number]) -> Floats:
    floats: Floats = _numpy().asarray(values, dtype=_numpy().float64)
    return floats


# Where Gym's arithmetic overflows on finite values (two rewards of 1e308 sum to inf, so its mean
# and median are inf, null in JSON), the statistic is computed on the values scaled down by their
# largest magnitude and scaled back: the finite figure. Everywhere else it is Gym's, bit for bit.


def _overflowed(result: float, values: Floats) -> bool:
    return not math.isfinite(result) and bool(_numpy().isfinite(values).all())


def _scale(values: Floats) -> float:
    return float(_numpy().abs(values).max())


def _median(values: Floats) -> float:
    with _numpy().errstate(over="ignore", invalid="ignore"):  # an overflow is handled below
        median = float(_numpy().median(values))
    if _overflowed(median, values):
        scale = _scale(values)
        median = float(_numpy().median(values / scale)) * scale
    return median


def _mean(values: Floats) -> float:
    with _numpy().errstate(over="ignore", invalid="ignore"):
        mean = float(values.sum() / values.size)
    if _overflowed(mean, values):
        scale = _scale(values)
        mean = float((values / scale).sum() / values.size) * scale
    return mean


def _std(values: Floats) -> float:
    """Sample standard deviation (ddof=1) by pandas' two-pass ``nanvar``; NaN for one value."""
    n = values.size
    if n < 2:
        return math.nan
    with _numpy().errstate(over="ignore", invalid="ignore"):
        avg = values.sum() / n
        std = math.sqrt(float(((avg - values) ** 2).sum() / (n - 1)))
    if _overflowed(std, values):
        scale = _scale(values)
        scaled = values / scale
        std = math.sqrt(float(((scaled.sum() / n - scaled) ** 2).sum() / (n - 1))) * scale
    return std


def _quantile(values: Floats, q: float) -> float:
    """``Series.quantile(q)``: pandas hands numpy the percentage ``q * 100``, which numpy divides
    by 100 again; the round trip is kept because it can move ``q`` by an ulp (0.9 -> 0.9000...1)."""
    return float(_numpy().percentile(values, q * 100.0))


def _plain(value: float, as_int: bool) -> Number:
    return int(value) if as_int else float(value)


class _Column:
    """One column of a frame: its non-missing values as floats, and whether all are ints."""

    __slots__ = ("complete", "values")

    def __init__(self, present: Sequence[Number], rows: int) -> None:
        self.values = _floats(present)
        self.complete = len(present) == rows


def _present(rows: Sequence[_Rollout], order: Mapping[str, int]) -> dict[str, list[Number]]:
    """Each column that ``rows`` have, in frame order, with its values in row order: one pass
    over the rows, whatever the number of columns of the frame (a frame of many tasks, each
    with a column of its own, made every task read every column)."""
    present: dict[str, list[Number]] = {}
    for r in rows:
        for name, value in r.numbers.items():
            values = present.get(name)
            if values is None:
                present[name] = [value]
            else:
                values.append(value)
    return {name: present[name] for name in sorted(present, key=order.__getitem__)}


def _describe(rows: Sequence[_Rollout], order: Mapping[str, int], ints: bool) -> dict[str, Number]:
    """``RewardProfiler.describe_dataframe`` of ``rows``: mean/max/min/median/std per column,
    stat by stat; missing (NaN) results left out, as ``calculate_metrics_single_df`` does.
    ``order`` numbers the frame's columns; ``ints`` says whether all of them are int64 (then
    ``df.max()`` stays int64; one float column makes it float64). A column that ``rows`` lack
    gives nothing (its statistics are NaN), so only the ones they have are read."""
    data = {name: _Column(values, len(rows)) for name, values in _present(rows, order).items()}
    stds = {name: _std(col.values) for name, col in data.items()}
    if all(math.isnan(s) for s in stds.values()):
        # "Std is more interpretable using 0 rather than NaN": columns with no gaps get 0.
        stds = {name: 0.0 if data[name].complete else s for name, s in stds.items()}
    out: dict[str, Number] = {}
    for stat in _STATS:
        for name, col in data.items():
            values = col.values
            if stat == "std":
                value = stds[name]
                if not math.isnan(value):
                    out[f"std/{name}"] = value
                continue
            if not values.size:
                continue
            if stat == "mean":
                out[f"mean/{name}"] = _mean(values)
            elif stat == "max":
                out[f"max/{name}"] = _plain(values.max(), ints)
            elif stat == "min":
                out[f"min/{name}"] = _plain(values.min(), ints)
            else:
                out[f"median/{name}"] = _median(values)
    return out


def _summary(values: Floats, name: str) -> dict[str, float]:
    """A repeat-level column's statistics (``_compute_repeat_level_metrics``)."""
    n = values.size
    mean = _mean(values)
    std = _std(values) if n > 1 else 0.0
    sem = std / n**0.5
    out = {
        f"mean/{name}": mean,
        f"median/{name}": _median(values),
        f"std/{name}": std,
        f"sem/{name}": sem,
        f"min/{name}": float(values.min()),
        f"max/{name}": float(values.max()),
        f"p25/{name}": _quantile(values, 0.25),
        f"p75/{name}": _quantile(values, 0.75),
    }
    interval = _interval(mean, sem, n)
    if interval is not None:
        out[f"ci_low_95/{name}"], out[f"ci_high_95/{name}"] = interval
    return out


def _interval(mean: float, sem: float, n: int) -> tuple[float, float] | None:
    """The 95% t interval, ``None`` for a single value; collapsed when ``sem`` is 0."""
    if n <= 1:
        return None
    if sem == 0:
        return mean, mean
    return t_interval(0.95, n - 1, mean, sem)


class GymProfile:
    """Every scored verify response's numbers, described as Gym's reward profiler does.

    Rows are keyed by task (``_ng_task_index``, or the caller's key) and rollout index
    (``_ng_rollout_index``; rows without one are numbered in arrival order within their task).
    Two rows with the same task and rollout index are an error, as in Gym.
    """

    __slots__ = ("_next_rollout", "_rows", "_seen")

    def __init__(self) -> None:
        self._rows: list[_Rollout] = []
        self._seen: dict[tuple[int | str, int], int] = {}
        self._next_rollout: dict[int | str, int] = {}

    @staticmethod
    def rollout_of(row: Mapping[str, Any]) -> int | None:
        """The row's ``_ng_rollout_index``; raises for one that is not an int."""
        index = row.get(ROLLOUT_INDEX_KEY)
        if index is None:
            return None
        if isinstance(index, bool) or not isinstance(index, int):
            raise MetricsError(f"{ROLLOUT_INDEX_KEY} must be an int, got {type(index).__name__}")
        return index

    def key_of(self, row: Mapping[str, Any], task: int | str, position: int) -> int:
        """The rollout index of ``row`` in ``task``, checked for duplicates."""
        rollout = self.rollout_of(row)
        if rollout is None:
            rollout = self._next_rollout.get(task, 0)
        self._next_rollout[task] = max(self._next_rollout.get(task, 0), rollout + 1)
        first = self._seen.setdefault((task, rollout), position)
        if first != position:
            raise MetricsError(
                f"rollout {rollout} of task {task!r} was already given by row {first}"
            )
        return rollout

    def add(self, row: Mapping[str, Any], task: int | str, rollout: int) -> None:
        """One scored row (its ``mask_sample`` is false) of ``task``, rollout ``rollout``."""
        self._rows.append(
            _Rollout(task, rollout, row_numbers(row), rollout_info(row, task, rollout))
        )

    def __len__(self) -> int:
        return len(self._rows)

    # --- results --------------------------------------------------------------------------

    def _frame(self) -> tuple[list[_Rollout], dict[str, int], bool]:
        """The rows in order, the columns numbered in the order they first appear, and whether
        every column is int64 (an int in every row)."""
        rows = sorted(self._rows, key=lambda r: (_task_order(r.task), r.rollout))
        order: dict[str, int] = {}
        ints: dict[str, int] = {}  # rows with an int in the column
        for r in rows:
            for name, value in r.numbers.items():
                order.setdefault(name, len(order))
                if type(value) is int:
                    ints[name] = ints.get(name, 0) + 1
        all_ints = all(ints.get(name, 0) == len(rows) for name in order)
        return rows, order, all_ints

    def describe(self) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
        """``(group_level_metrics, agent statistics, repeat_level_metrics)``; the agent
        statistics include the ``*_across_repeats`` keys."""
        if not self._rows:
            return [], {}, []
        rows, order, ints = self._frame()
        groups = self._groups(rows, order, ints)
        agent: dict[str, Any] = _describe(rows, order, ints)
        repeats = self._repeats(rows)
        agent.update(_across_repeats(repeats))
        return groups, agent, repeats

    @staticmethod
    def _groups(
        rows: Sequence[_Rollout], order: Mapping[str, int], ints: bool
    ) -> list[dict[str, Any]]:
        by_task: dict[int | str, list[_Rollout]] = {}
        for r in rows:
            by_task.setdefault(r.task, []).append(r)
        out = []
        for task, members in by_task.items():
            entry: dict[str, Any] = _task_fields(task)
            entry.update(_describe(members, order, ints))
            n = len(members)
            entry["sample"] = dict(_SAMPLE)
            entry["num_rollouts"] = n
            entry["expected_num_rollouts"] = n
            entry["missing_num_rollouts"] = 0
            entry["reward_profile_completion_pct"] = 100.0
            entry["rollout_infos"] = [m.info for m in members]
            out.append(entry)
        return out

    @staticmethod
    def _repeats(rows: Sequence[_Rollout]) -> list[dict[str, Any]]:
        """Per rollout index, statistics over the tasks; only with more than one index."""
        by_rollout: dict[int, list[_Rollout]] = {}
        for r in rows:
            by_rollout.setdefault(r.rollout, []).append(r)
        if len(by_rollout) < 2:
            return []
        total_tasks = len({r.task for r in rows})
        out = []
        for rollout in sorted(by_rollout):
            members = by_rollout[rollout]
            present = len({r.task for r in members})
            entry: dict[str, Any] = {
                ROLLOUT_INDEX_KEY: rollout,
                "sample_count": present,
                "missing_count": total_tasks - present,
            }
            # pandas' Index.difference sorts the column names; a column no member has gives
            # nothing.
            columns: dict[str, list[Number]] = {}
            for r in members:
                for name, value in r.numbers.items():
                    columns.setdefault(name, []).append(value)
            for name in sorted(columns):
                entry.update(_summary(_floats(columns[name]), name))
            out.append(entry)
        return out


def _across_repeats(repeats: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """``_aggregate_repeat_level_metrics``: each primary repeat-level column summarized over
    the repeats, merged into ``agent_metrics``."""
    if not repeats:
        return {}
    columns = list(dict.fromkeys(name for entry in repeats for name in entry))
    out: dict[str, float] = {}
    for name in columns:
        if not is_primary_metric(name):
            continue
        raw = [entry.get(name) for entry in repeats]
        present = [v for v in raw if isinstance(v, int | float) and not isinstance(v, bool)]
        values = _floats(present)
        n = values.size
        if n == 0:
            continue
        mean = _mean(values)
        std = _std(values) if n > 1 else 0.0
        se = std / n**0.5
        out[f"mean{_ACROSS}{name}"] = mean
        out[f"median{_ACROSS}{name}"] = _median(values)
        out[f"std{_ACROSS}{name}"] = std
        out[f"min{_ACROSS}{name}"] = float(values.min())
        out[f"max{_ACROSS}{name}"] = float(values.max())
        out[f"se{_ACROSS}{name}"] = se
        interval = _interval(mean, se, n)
        if interval is not None:
            out[f"ci_low_95{_ACROSS}{name}"], out[f"ci_high_95{_ACROSS}{name}"] = interval
    return out


# --- perf_summary ------------------------------------------------------------------------------

_PERF_TOKEN_FIELDS: Final = (
    "prompt_tokens",
    "cached_prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
)


def _perf_stat(values: Sequence[float], stat: str) -> float:
    """``reward_profile._stat``: statistics module for the moments, linear quantiles."""
    import statistics  # noqa: PLC0415  3 ms (with fractions) that only a perf summary needs

    if stat == "mean":
        return statistics.fmean(values)
    if stat == "median":
        return statistics.median(values)
    if stat == "total":
        return sum(values)
    if stat == "std":
        return statistics.pstdev(values)
    if stat == "min":
        return min(values)
    if stat == "max":
        return max(values)
    return _quantile(_floats(values), int(stat[1:]) / 100)


def perf_summary(records: Iterable[Mapping[str, Any]], total: int) -> dict[str, Any] | None:
    """Gym's ``perf_summary`` of the rows' ``ng_perf`` records (``compute_perf_summary``);
    ``None`` without any."""
    perf = list(records)
    if total <= 0 or not perf:
        return None

    def values(key: str) -> list[float]:
        return [
            r[key]
            for r in perf
            if isinstance(r.get(key), int | float) and not isinstance(r.get(key), bool)
        ]

    observed = sum(
        1
        for r in perf
        if isinstance(r.get("token_observability_coverage"), int | float)
        and r["token_observability_coverage"] > 0
    )
    summary: dict[str, Any] = {
        "overall_observability_coverage": len(perf) / total,
        "token_observability_coverage": observed / total,
    }
    for field in _PERF_TOKEN_FIELDS:
        found = values(field)
        if found:
            for stat in ("mean", "median", "total"):
                summary[f"{stat}_{field}"] = _perf_stat(found, stat)
    turns = values("num_turns")
    if turns:
        for stat in ("mean", "median", "std", "min", "p90", "max"):
            summary[f"{stat}_num_turns"] = _perf_stat(turns, stat)
    per_turn = [
        r["completion_tokens"] / r["num_turns"]
        for r in perf
        if isinstance(r.get("completion_tokens"), int | float)
        and isinstance(r.get("num_turns"), int | float)
        and r["num_turns"] > 0
    ]
    if per_turn:
        summary["mean_tokens_per_turn"] = _perf_stat(per_turn, "mean")
        summary["median_tokens_per_turn"] = _perf_stat(per_turn, "median")
    latency = values("total_latency_ms")
    if latency:
        for stat in ("p50", "p90", "p99", "mean"):
            summary[f"total_latency_{stat}_ms"] = _perf_stat(latency, stat)
    return summary
