"""Metrics over graded rows: pass@k, bootstrap intervals, category and failure breakdowns.

Two audiences share this module:

* The CLI, which streams millions of graded rows and must not keep them. Hence the accumulators
  (:class:`MetricsAccumulator`, :class:`FailureAccumulator`) that keep only what each metric needs:
  per task a short list of rewards and extracted answers, per failure category a count and a few
  exemplars.
* Users of NeMo Gym, who compare our numbers with the ``mcqa`` server's ``/aggregate_metrics``.
  :meth:`MetricsAccumulator.result` reproduces that endpoint's ``agent_metrics`` and
  ``key_metrics`` bit for bit: same keys, same order, same floating-point summation order.

numpy is used for the bootstrap only; everything else is plain Python so the arithmetic is easy to
audit against the reference.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal

import attrs
import numpy as np
import numpy.typing as npt

from choicebox._errors import ChoiceboxError

__all__ = [
    "CategoryStats",
    "ConfidenceInterval",
    "FailureAccumulator",
    "MetricsAccumulator",
    "MetricsError",
    "aggregate_metrics",
    "bootstrap_ci",
    "category_breakdown",
    "failure_analysis",
    "pass_at_k",
]

TASK_INDEX_KEY: Final = "_ng_task_index"
MISSING_CATEGORY: Final = "(missing)"
PREVIEW_CHARS: Final = 200

# Below this many attempts pass_at_k divides exact integer binomials: Python's int / int is
# correctly rounded, so the result is the best float there is and equals NeMo Gym's
# ``1 - comb(..)/comb(..)`` bit for bit. Above it the binomials grow to thousands of digits and
# the product form is both faster and accurate to a few ulps.
_EXACT_PASS_AT_K_MAX_N: Final = 1024

# Bootstrap memory budget: at most this many elements per resampling chunk (8 MiB of int64).
_CHUNK_ELEMENTS: Final = 1 << 20
# Multinomial resampling costs O(unique values) per resample; past this many unique values the
# chunked index draws are cheaper.
_MULTINOMIAL_MAX_UNIQUE: Final = 4096

# Statistics that highest-k selection must skip, as NeMo Gym's ``highest_k_metrics`` does.
_STAT_SUFFIXES: Final = ("std_dev_across_runs", "std_err_across_runs", "avg_sample_std_dev")


class MetricsError(ChoiceboxError, ValueError):
    """Invalid input to a metric: bad pass@k arguments, empty scores, a row without a reward."""


# --------------------------------------------------------------------------------------- pass@k


def _check_int(name: str, value: object) -> int:
    # bool is an int subclass; pass_at_k(True, ...) is always a caller bug.
    if isinstance(value, bool) or not isinstance(value, int):
        raise MetricsError(f"pass_at_k: {name} must be an int, got {type(value).__name__}")
    return value


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k estimate ``1 - C(n-c, k) / C(n, k)`` for ``c`` correct of ``n`` attempts.

    The chance that at least one of ``k`` attempts drawn without replacement is correct
    (Chen et al., 2021). Requires ``n >= 1``, ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    n = _check_int("n", n)
    c = _check_int("c", c)
    k = _check_int("k", k)
    if n < 1:
        raise MetricsError(f"pass_at_k: n must be >= 1 attempts, got n={n}")
    if not 0 <= c <= n:
        raise MetricsError(f"pass_at_k: c must be between 0 and n={n}, got c={c}")
    if not 1 <= k <= n:
        raise MetricsError(f"pass_at_k: k must be between 1 and n={n}, got k={k}")
    return _pass_ratio_complement(n, n - c, k)


def _pass_ratio_complement(n: int, wrong: int, k: int) -> float:
    """``1 - C(wrong, k) / C(n, k)`` for already validated arguments (the hot path)."""
    if wrong < k:  # every k-subset contains a correct attempt
        return 1.0
    if n <= _EXACT_PASS_AT_K_MAX_N:
        return 1.0 - math.comb(wrong, k) / math.comb(n, k)
    # C(n-c, k) / C(n, k) = prod_{i=n-c+1}^{n} (1 - k/i): c factors in [0, 1], no overflow.
    ratio = 1.0
    for i in range(wrong + 1, n + 1):
        ratio *= 1.0 - k / i
    return 1.0 - ratio


# ------------------------------------------------------------------------------------ bootstrap


@attrs.frozen(kw_only=True)
class ConfidenceInterval:
    """A point estimate with a percentile-bootstrap interval around it."""

    value: float
    ci_lower: float
    ci_upper: float
    confidence: float
    resamples: int


BootstrapMethod = Literal["auto", "binomial", "multinomial", "indices"]


def _bootstrap_means(
    arr: npt.NDArray[np.float64],
    resamples: int,
    rng: np.random.Generator,
    method: BootstrapMethod = "auto",
) -> npt.NDArray[np.float64]:
    """``resamples`` bootstrap means of ``arr``, in O(chunk) memory whatever ``arr.size`` is."""
    n = int(arr.size)
    uniq, counts = np.unique(arr, return_counts=True)
    if method == "auto":
        if np.isin(uniq, (0.0, 1.0)).all():
            method = "binomial"
        elif uniq.size <= _MULTINOMIAL_MAX_UNIQUE:
            method = "multinomial"
        else:
            method = "indices"

    if method == "binomial":
        # With 0/1 scores the sum of n resampled values is exactly Binomial(n, p): O(resamples).
        if not np.isin(uniq, (0.0, 1.0)).all():
            raise MetricsError("the binomial bootstrap needs scores that are all 0 or 1")
        ones = int(counts[uniq == 1.0].sum())
        draws = rng.binomial(n, ones / n, size=resamples)
        return draws.astype(np.float64) / n

    out = np.empty(resamples, dtype=np.float64)
    if method == "multinomial":
        # A resample is fully described by how often each unique value was drawn.
        pvals = counts / n
        step = max(1, _CHUNK_ELEMENTS // int(uniq.size))
        for start in range(0, resamples, step):
            stop = min(resamples, start + step)
            tallies = rng.multinomial(n, pvals, size=stop - start)
            out[start:stop] = (tallies @ uniq) / n
        return out

    # Plain index resampling, a few rows of n indices at a time.
    step = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = arr[idx].mean(axis=1)
    return out


def bootstrap_ci(
    scores: Sequence[float] | npt.NDArray[Any],
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> ConfidenceInterval:
    """Percentile-bootstrap interval of the mean of ``scores``; deterministic for a given seed.

    0/1 scores take an exact binomial shortcut, so a million scores cost no more than ten.
    Other scores are resampled in bounded-memory chunks.
    """
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise MetricsError(f"bootstrap_ci: resamples must be a positive int, got {resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise MetricsError(f"bootstrap_ci: confidence must be in (0, 1), got {confidence!r}")
    try:
        arr = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise MetricsError(f"bootstrap_ci: scores must be numbers ({exc})") from exc
    if arr.ndim != 1:
        raise MetricsError(f"bootstrap_ci: scores must be one-dimensional, got shape {arr.shape}")
    n = int(arr.size)
    if n == 0:
        raise MetricsError("bootstrap_ci needs at least one score")
    if not np.isfinite(arr).all():
        raise MetricsError("bootstrap_ci: scores must be finite (found NaN or infinity)")

    # fsum: the point estimate should not depend on summation order or drift for large n.
    value = math.fsum(arr.tolist()) / n
    if n == 1 or bool((arr == arr[0]).all()):
        # Every resample is the same: the interval collapses onto the value.
        return ConfidenceInterval(
            value=value, ci_lower=value, ci_upper=value, confidence=confidence, resamples=resamples
        )
    means = _bootstrap_means(arr, resamples, np.random.default_rng(seed))
    alpha = (1.0 - confidence) / 2.0
    lower, upper = np.quantile(means, [alpha, 1.0 - alpha])
    return ConfidenceInterval(
        value=value,
        ci_lower=float(lower),
        ci_upper=float(upper),
        confidence=confidence,
        resamples=resamples,
    )


# ---------------------------------------------------------------------------- row field helpers

_MISSING: Final = object()


def _lookup(row: Mapping[str, Any], path: str) -> Any:
    """Follow a dotted path (``metadata.category``) through nested mappings; ``_MISSING`` if absent."""
    if path in row:  # a literal key with a dot in its name wins over the nested reading
        return row[path]
    node: Any = row
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _number(value: object) -> float | int | None:
    """The value as a number if it is one (bools count as 0/1, like NeMo Gym's profiler)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        # Rewards are nearly always 0.0 or 1.0: sharing those two objects instead of keeping
        # one float per row keeps per-task memory small over millions of rows.
        return _SHARED_NUMBERS.get(value, value)
    return None


_SHARED_NUMBERS: Final[dict[float, float]] = {0.0: 0.0, 1.0: 1.0}


def _reward_of(row: Mapping[str, Any], key: str = "reward") -> float | int:
    value = _lookup(row, key)
    number = _number(value)
    if number is None:
        shown = "missing" if value is _MISSING else f"{type(value).__name__} {value!r}"
        raise MetricsError(f"row has no numeric {key!r} (it is {shown})")
    return number


# ----------------------------------------------------------------------- category breakdown


@attrs.frozen(kw_only=True)
class CategoryStats:
    """Mean reward of one category with its bootstrap interval."""

    category: str
    n_samples: int
    mean_reward: float
    ci_lower: float
    ci_upper: float


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
    groups: dict[str, list[float]] = {}
    for i, row in enumerate(results):
        raw = _lookup(row, field)
        category = MISSING_CATEGORY if raw is _MISSING or raw is None else str(raw)
        try:
            reward = _reward_of(row, reward_key)
        except MetricsError as exc:
            raise MetricsError(f"category_breakdown: row {i}: {exc}") from None
        groups.setdefault(category, []).append(float(reward))
    stats = []
    for category in sorted(groups):
        ci = bootstrap_ci(groups[category], resamples=resamples, seed=seed)
        stats.append(
            CategoryStats(
                category=category,
                n_samples=len(groups[category]),
                mean_reward=ci.value,
                ci_lower=ci.ci_lower,
                ci_upper=ci.ci_upper,
            )
        )
    return stats


# ------------------------------------------------------------------------ aggregate metrics


class _ExactSum:
    """Streaming correctly rounded sum (Shewchuk's partials, what ``math.fsum`` does inside)."""

    __slots__ = ("_count", "_partials", "_special")

    def __init__(self) -> None:
        self._partials: list[float] = []
        self._special = 0.0  # inf/nan would poison the partials; they are summed on the side
        self._count = 0

    def add(self, x: float) -> None:
        self._count += 1
        if not math.isfinite(x):
            self._special += x
            return
        i = 0
        partials = self._partials
        for partial in partials:
            y = partial
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]

    @property
    def count(self) -> int:
        return self._count

    def mean(self) -> float:
        total = math.fsum(self._partials)
        if self._special:
            total += self._special
        return total / self._count


_NO_COMPONENTS: Final[tuple[list[float | int], ...]] = ()


# Placeholders never appended to: a packed task replaces them with its own lists on unpacking.
_UNUSED_REWARDS: Final[list[float | int]] = []
_UNUSED_ANSWERS: Final[list[Hashable | None]] = []


class _Task:
    """What one task keeps: its rewards and answers in arrival order (plus components if grouped).

    Memory is per task, and a run may hold hundreds of thousands of tasks. The common task (0.0
    or 1.0 rewards, one-letter or missing answers) is kept as one short string, two characters
    a rollout, instead of two lists of objects; anything else switches the task to lists.
    """

    __slots__ = ("_answers", "_packed", "_rewards", "components")

    def __init__(self, n_components: int) -> None:
        self._packed: str | None = ""
        # The lists exist only once a task leaves the packed form.
        self._rewards: list[float | int] = _UNUSED_REWARDS
        self._answers: list[Hashable | None] = _UNUSED_ANSWERS
        # Without group statistics there is nothing to keep: one shared empty tuple, not a list
        # per task.
        self.components: Sequence[list[float | int]] = (
            [[] for _ in range(n_components)] if n_components else _NO_COMPONENTS
        )

    def add(self, reward: float | int, answer: Hashable | None) -> None:
        packed = self._packed
        if packed is not None:
            if (
                type(reward) is float
                and reward in (1.0, 0.0)
                and (answer is None or (type(answer) is str and len(answer) == 1 and answer != "\0"))
            ):
                self._packed = packed + ("1" if reward else "0") + (answer or "\0")
                return
            self._rewards, self._answers = self._unpacked()
            self._packed = None
        self._rewards.append(reward)
        self._answers.append(answer)

    def _unpacked(self) -> tuple[list[float | int], list[Hashable | None]]:
        packed = self._packed or ""
        rewards: list[float | int] = [1.0 if c == "1" else 0.0 for c in packed[0::2]]
        answers: list[Hashable | None] = [None if c == "\0" else c for c in packed[1::2]]
        return rewards, answers

    @property
    def rewards(self) -> list[float | int]:
        return self._rewards if self._packed is None else self._unpacked()[0]

    @property
    def answers(self) -> list[Hashable | None]:
        return self._answers if self._packed is None else self._unpacked()[1]

    def __len__(self) -> int:
        return len(self._rewards) if self._packed is None else len(self._packed) // 2


def _task_sort_key(key: int | str) -> tuple[int, int, str]:
    # Integer task indices sort numerically (as NeMo Gym sorts them), caller keys by name after.
    if isinstance(key, int):
        return (0, key, "")
    return (1, 0, key)


def _describe(values: Sequence[float | int], name: str, into: dict[str, Any]) -> None:
    """mean/max/min/median/std of one column, the statistics NeMo Gym's profiler reports."""
    n = len(values)
    if n == 0:
        return
    mean = math.fsum(values) / n
    ordered = sorted(values)
    mid = n // 2
    median = ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    # Sample std (ddof=1) like pandas; a single value reports 0 rather than NaN, as Gym does.
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    into[f"mean/{name}"] = mean
    into[f"max/{name}"] = ordered[-1]
    into[f"min/{name}"] = ordered[0]
    into[f"median/{name}"] = median
    into[f"std/{name}"] = std


def _highest_k(metrics: Mapping[str, Any], pattern: str, names: Sequence[str]) -> dict[str, Any]:
    """Entries of ``pattern`` (with ``{k}``) at the largest k, for the given score names."""
    regex = re.compile("^" + re.escape(pattern).replace(r"\{k\}", r"(\d+)") + "/(.+)$")
    found: list[tuple[int, str]] = []
    for key in metrics:
        m = regex.match(key)
        if m is None:
            continue
        name = m.group(2)
        if name.endswith(_STAT_SUFFIXES) or name not in names:
            continue
        found.append((int(m.group(1)), key))
    if not found:
        return {}
    top = max(k for k, _ in found)
    return {key: metrics[key] for k, key in found if k == top}


class MetricsAccumulator:
    """Streams graded rows into NeMo Gym's ``/aggregate_metrics`` result for the mcqa server.

    Rows are grouped into tasks by ``_ng_task_index`` when the row has one, else by the
    ``task_key`` given to :meth:`add`. Within a task, rollouts keep arrival order ("the first k
    rollouts" means the first k added), as in the reference.
    """

    __slots__ = ("_component_names", "_component_sums", "_include_groups", "_tasks")

    def __init__(self, *, component_names: Sequence[str] = (), include_groups: bool = True) -> None:
        if isinstance(component_names, str):  # a lone name would be iterated letter by letter
            raise MetricsError("component_names must be a sequence of names, not a string")
        self._component_names: tuple[str, ...] = tuple(dict.fromkeys(component_names))
        for name in self._component_names:
            if name == "reward":
                raise MetricsError("'reward' is always reported; do not list it as a component")
        self._include_groups = include_groups
        self._component_sums = [_ExactSum() for _ in self._component_names]
        self._tasks: dict[int | str, _Task] = {}

    def add(self, row: Mapping[str, Any], *, task_key: str | None = None) -> None:
        """Record one graded row (``reward``, ``extracted_answer``, optional components)."""
        raw_index = row.get(TASK_INDEX_KEY)
        key: int | str
        if raw_index is not None:
            if isinstance(raw_index, bool) or not isinstance(raw_index, int):
                raise MetricsError(
                    f"{TASK_INDEX_KEY} must be an int, got {type(raw_index).__name__}"
                )
            key = raw_index
        elif task_key is not None:
            key = task_key
        else:
            raise MetricsError(
                f"row has no {TASK_INDEX_KEY}; pass task_key=... to group it into a task"
            )
        reward = _reward_of(row)
        answer = row.get("extracted_answer")
        if answer is not None and not isinstance(answer, Hashable):
            answer = repr(answer)  # majority voting needs hashable answers

        task = self._tasks.get(key)
        if task is None:
            task = self._tasks[key] = _Task(
                len(self._component_names) if self._include_groups else 0
            )
        task.add(reward, answer)
        for i, name in enumerate(self._component_names):
            value = _number(row.get(name))
            if value is None:
                continue  # a component a row does not report is left out of its mean
            self._component_sums[i].add(value)
            if self._include_groups:
                task.components[i].append(value)

    @property
    def n_rows(self) -> int:
        return sum(len(t) for t in self._tasks.values())

    @property
    def n_tasks(self) -> int:
        return len(self._tasks)

    def result(self) -> dict[str, Any]:
        """``{"agent_metrics", "key_metrics", "group_level_metrics"}`` like ``/aggregate_metrics``."""
        if not self._tasks:
            return {"agent_metrics": {}, "key_metrics": {}, "group_level_metrics": []}
        keys = sorted(self._tasks, key=_task_sort_key)
        tasks = [self._tasks[k] for k in keys]

        agent: dict[str, Any] = {}
        agent["mean/reward"] = math.fsum(r for t in tasks for r in t.rewards) / self.n_rows
        for name, total in zip(self._component_names, self._component_sums, strict=True):
            if total.count:
                agent[f"mean/{name}"] = total.mean()
        agent.update(self._pass_majority(tasks))
        key_metrics = self._key_metrics(agent)
        groups = self._group_metrics(keys, tasks) if self._include_groups else []
        return {"agent_metrics": agent, "key_metrics": key_metrics, "group_level_metrics": groups}

    @staticmethod
    def _pass_majority(tasks: Sequence[_Task]) -> dict[str, Any]:
        """pass@k, pass@1[avg-of-k], majority@k, per-run aggregates and their spread.

        Mirrors NeMo Gym's ``compute_pass_majority_metrics`` with score names ``accuracy`` (the
        reward) and ``no_answer`` (extracted answer is null). Sums run task by task in sorted
        task order, exactly as the reference adds them, so the floats come out identical.
        """
        names = ("accuracy", "no_answer")
        max_k = max(len(t) for t in tasks)
        # One (sum, count) per (k, name, aggregate); filled task by task so each sum is the same
        # left-to-right fold the reference computes over its per-task lists.
        pass_sum = [[0.0, 0.0] for _ in range(max_k + 1)]
        pass_cnt = [[0, 0] for _ in range(max_k + 1)]
        avg_sum = [[0.0, 0.0] for _ in range(max_k + 1)]
        maj_sum = [[0.0, 0.0] for _ in range(max_k + 1)]
        run_sum = [[0.0, 0.0] for _ in range(max_k)]
        run_cnt = [0] * max_k

        for task in tasks:
            n = len(task.rewards)
            answers = task.answers
            no_answer: list[float | int] = [1 if a is None else 0 for a in answers]
            scores: tuple[Sequence[float | int], ...] = (task.rewards, no_answer)
            for j, vals in enumerate(scores):
                binary = all(v in (0, 1) for v in vals)
                n_wrong = sum(1 for v in vals if not v) if binary else 0
                prefix = 0.0
                running_max = -math.inf
                votes: Counter[tuple[Hashable, float | int]] = Counter()
                avg = majority = 0.0
                for k in range(1, max_k + 1):
                    if k <= n:
                        v = vals[k - 1]
                        prefix += v
                        avg = prefix / k
                        running_max = max(running_max, v)
                        answer = answers[k - 1]
                        if answer is not None:
                            votes[(answer, v)] += 1
                            majority = _majority_value(votes)
                        run_sum[k - 1][j] += v
                        if j == 0:
                            run_cnt[k - 1] += 1
                        # pass@k skips tasks with fewer than k rollouts.
                        if binary:
                            pass_value = _pass_ratio_complement(n, n_wrong, k)
                        else:
                            pass_value = running_max
                        pass_sum[k][j] += pass_value
                        pass_cnt[k][j] += 1
                    # avg-of-k and majority@k use whatever of the first k rollouts exist, so
                    # past n they repeat the task's last values.
                    avg_sum[k][j] += avg
                    maj_sum[k][j] += majority

        n_tasks = len(tasks)
        out: dict[str, Any] = {}
        for k in range(1, max_k + 1):
            for j, name in enumerate(names):
                if pass_cnt[k][j]:
                    out[f"pass@{k}/{name}"] = 100.0 * pass_sum[k][j] / pass_cnt[k][j]
                out[f"pass@1[avg-of-{k}]/{name}"] = 100.0 * avg_sum[k][j] / n_tasks
                out[f"majority@{k}/{name}"] = 100.0 * maj_sum[k][j] / n_tasks

        per_run = {
            name: [100.0 * run_sum[i][j] / run_cnt[i] for i in range(max_k)]
            for j, name in enumerate(names)
        }
        out["per_sample_aggregate"] = per_run
        out.update(_spread_across_runs(per_run, names, max_k))
        return out

    @staticmethod
    def _key_metrics(agent: Mapping[str, Any]) -> dict[str, Any]:
        # The mcqa server's headline selection; note pass@K/accuracy is deliberately absent.
        key: dict[str, Any] = {"mean/reward": agent["mean/reward"]}
        key.update(_highest_k(agent, "pass@1[avg-of-{k}]", ("accuracy", "no_answer")))
        key.update(_highest_k(agent, "pass@{k}", ("no_answer",)))
        key.update(_highest_k(agent, "majority@{k}", ("accuracy",)))
        if "pass@1/accuracy" in agent:
            key["pass@1/accuracy"] = agent["pass@1/accuracy"]
        return key

    def _group_metrics(
        self, keys: Sequence[int | str], tasks: Sequence[_Task]
    ) -> list[dict[str, Any]]:
        groups = []
        for key, task in zip(keys, tasks, strict=True):
            entry: dict[str, Any] = (
                {TASK_INDEX_KEY: key} if isinstance(key, int) else {"task_key": key}
            )
            entry["num_rollouts"] = len(task.rewards)
            _describe(task.rewards, "reward", entry)
            for name, values in zip(self._component_names, task.components, strict=True):
                _describe(values, name, entry)
            groups.append(entry)
        return groups


def _spread_across_runs(
    per_run: Mapping[str, Sequence[float]], names: Sequence[str], max_k: int
) -> dict[str, float]:
    """Sample std (ddof=1) and standard error of the per-run pass@1 values of the first k runs."""
    out: dict[str, float] = {}
    for k in range(2, max_k + 1):
        for name in names:
            runs = per_run[name][:k]
            mean = sum(runs) / len(runs)
            std_dev = math.sqrt(sum((x - mean) ** 2 for x in runs) / (len(runs) - 1))
            out[f"pass@1[avg-of-{k}]/{name}/std_dev_across_runs"] = std_dev
            out[f"pass@1[avg-of-{k}]/{name}/std_err_across_runs"] = std_dev / math.sqrt(len(runs))
    return out


def _majority_value(votes: Counter[tuple[Hashable, float | int]]) -> float:
    """Score of the majority vote; ties average the tied (answer, score) pairs; no votes -> 0."""
    if not votes:
        return 0.0
    top = max(votes.values())
    tied = [score for (_, score), count in votes.items() if count == top]
    return sum(tied) / len(tied)


def aggregate_metrics(
    rows: Iterable[Mapping[str, Any]],
    *,
    component_names: Sequence[str] = (),
    include_groups: bool = True,
    task_key_field: str | None = None,
) -> dict[str, Any]:
    """One-shot :class:`MetricsAccumulator` over ``rows``.

    Rows without ``_ng_task_index`` are grouped by the (dotted) ``task_key_field`` instead,
    e.g. ``"uuid"``; without either the row is rejected rather than silently lumped together.
    """
    acc = MetricsAccumulator(component_names=component_names, include_groups=include_groups)
    for i, row in enumerate(rows):
        task_key = None
        if task_key_field is not None and row.get(TASK_INDEX_KEY) is None:
            raw = _lookup(row, task_key_field)
            if raw is _MISSING or raw is None:
                raise MetricsError(f"row {i} has neither {TASK_INDEX_KEY} nor {task_key_field!r}")
            task_key = str(raw)
        try:
            acc.add(row, task_key=task_key)
        except MetricsError as exc:
            raise MetricsError(f"row {i}: {exc}") from None
    return acc.result()


# ------------------------------------------------------------------------- failure analysis


def _failure_category(row: Mapping[str, Any]) -> str:
    failure = row.get("failure")
    if isinstance(failure, str) and failure:
        return failure  # choicebox verdicts name their own failure
    if row.get("error") is not None:
        return "error"
    for holder in (row, row.get("scoring_details")):
        if isinstance(holder, Mapping):
            category = holder.get("error_category")
            if isinstance(category, str) and category:
                return category
    if row.get("infra_error"):
        return "infra_error"
    if row.get("timeout"):
        return "timeout"
    response = row.get("response")
    if isinstance(response, Mapping) and response.get("error") is not None:
        return "timeout" if "timeout" in str(response["error"]).lower() else "infra_error"
    if row.get("extracted_answer") is None:
        return "no_answer"
    return "wrong_answer"


def _preview(row: Mapping[str, Any]) -> str:
    for key in ("response_preview", "output_text", "text"):
        value = row.get(key)
        if isinstance(value, str):
            return value[:PREVIEW_CHARS]
    return ""


def _is_failure(row: Mapping[str, Any]) -> bool:
    if row.get("error") is not None:
        return True
    reward = _number(row.get("reward"))
    # A row without a usable reward never earned one: count it as failed, not skipped.
    return reward is None or reward < 1 or math.isnan(reward)


class FailureAccumulator:
    """Streams rows into ``failure_analysis.json``: counts per category plus a few exemplars.

    Memory is bounded by the number of categories times ``max_exemplars``.
    """

    __slots__ = ("_counts", "_exemplar_counts", "_exemplars", "_max_exemplars", "_total")

    def __init__(self, *, max_exemplars: int = 3) -> None:
        if isinstance(max_exemplars, bool) or not isinstance(max_exemplars, int):
            raise MetricsError("max_exemplars must be an int")
        if max_exemplars < 0:
            raise MetricsError(f"max_exemplars must be >= 0, got {max_exemplars}")
        self._max_exemplars = max_exemplars
        self._total = 0
        self._counts: Counter[str] = Counter()
        self._exemplar_counts: Counter[str] = Counter()
        self._exemplars: list[dict[str, Any]] = []

    def add(self, row: Mapping[str, Any], index: int) -> None:
        """Record one row; ``index`` is reported as the exemplar's ``problem_idx``."""
        self._total += 1
        if not _is_failure(row):
            return
        category = _failure_category(row)
        self._counts[category] += 1
        if self._exemplar_counts[category] < self._max_exemplars:
            self._exemplar_counts[category] += 1
            uuid = row.get("uuid")
            self._exemplars.append(
                {
                    "category": category,
                    "problem_idx": index,
                    "uuid": None if uuid is None else str(uuid),
                    "response_preview": _preview(row),
                }
            )

    def result(self) -> dict[str, Any]:
        total = self._total
        failures = sum(self._counts.values())
        # Most frequent first, ties by name, so the file reads as a ranking.
        ranked = sorted(self._counts.items(), key=lambda item: (-item[1], item[0]))
        return {
            "total_failures": failures,
            "failure_rate": failures / total if total else 0.0,
            "categories": {name: {"count": count, "rate": count / total} for name, count in ranked},
            "exemplars": [dict(e) for e in self._exemplars],
        }


def failure_analysis(
    rows: Iterable[Mapping[str, Any]], *, max_exemplars: int = 3
) -> dict[str, Any]:
    """One-shot :class:`FailureAccumulator`; ``problem_idx`` is ``_ng_task_index`` or position."""
    acc = FailureAccumulator(max_exemplars=max_exemplars)
    for i, row in enumerate(rows):
        task_index = row.get(TASK_INDEX_KEY)
        if isinstance(task_index, bool) or not isinstance(task_index, int):
            task_index = i
        acc.add(row, task_index)
    return acc.result()
