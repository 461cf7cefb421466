"""The mcqa server's own part of NeMo Gym's ``/aggregate_metrics``, reproduced bit for bit.

Rollouts are grouped into tasks; :meth:`TaskMetrics.pass_majority` computes what the mcqa server's
``compute_metrics`` computes over them (pass@k, pass@1[avg-of-k], majority@k, per-run aggregates
and their spread) with the same keys, the same order and the same floating-point summation order,
and :func:`key_metrics` is its ``get_key_metrics``. :meth:`TaskMetrics.means` are the streaming
means ``choicebox grade`` reports; the rest of Gym's reply (per-column statistics, per-task and
per-repeat profiles) is :mod:`._profile`'s, which needs every row's numbers.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Final, NamedTuple

from ._stats import _pass_ratio_complement

# Statistics that highest-k selection must skip, as NeMo Gym's ``highest_k_metrics`` does.
_STAT_SUFFIXES: Final = ("std_dev_across_runs", "std_err_across_runs", "avg_sample_std_dev")


# Integer-valued summands below this magnitude are summed as Python ints: exactly, in C.
_EXACT_INT_MAX: Final = float(2**53)


class _ExactSum:
    """Streaming correctly rounded sum (Shewchuk's partials, what ``math.fsum`` does inside).

    Reward components are nearly always 0.0 or 1.0: integer-valued summands are added up as an
    exact Python int instead of through the partials (one C addition instead of a Python loop
    per row). The exact total is the same either way, so the correctly rounded mean is too.
    """

    __slots__ = ("_count", "_integer", "_integers", "_partials", "_special")

    def __init__(self) -> None:
        self._partials: list[float] = []
        self._special = 0.0  # inf/nan would poison the partials; they are summed on the side
        self._count = 0
        self._integer = 0  # the exact sum of the integer-valued summands
        self._integers = False  # whether there were any (a lone -0.0 must stay -0.0)

    def add(self, x: float) -> None:
        self._count += 1
        # -0.0 takes the partials: only they keep the sign of a sum of negative zeros.
        if (x == 1.0 or (x == 0.0 and math.copysign(1.0, x) > 0)) and type(x) is float:
            self._integer += x == 1.0
            self._integers = True
            return
        if not math.isfinite(x):
            self._special += x
            return
        if (type(x) is float and x.is_integer() and abs(x) < _EXACT_INT_MAX and x != 0.0) or (
            type(x) is int and abs(x) < _EXACT_INT_MAX
        ):
            self._integer += int(x)
            self._integers = True
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

    def add_many(self, x: float, times: int) -> None:
        """``add(x)`` ``times`` times."""
        if (
            type(x) is float
            and x.is_integer()
            and abs(x) < _EXACT_INT_MAX
            and (x or math.copysign(1.0, x) > 0)
        ):
            self._count += times
            self._integer += int(x) * times
            self._integers = True
            return
        for _ in range(times):
            self.add(x)

    @property
    def count(self) -> int:
        return self._count

    def mean(self) -> float:
        terms = list(self._partials)
        if self._integers:
            # The int as exact floats (more than one only past 2**53): fsum then rounds once.
            rest = self._integer
            terms.append(float(rest))
            rest -= int(terms[-1])
            while rest:
                terms.append(float(rest))
                rest -= int(terms[-1])
        total = math.fsum(terms)
        if self._special:
            total += self._special
        return total / self._count


class _Task:
    """A task that left the packed form (see ``Task``): its rewards and answers as lists."""

    __slots__ = ("answers", "rewards")

    def __init__(self, rewards: list[float | int], answers: list[Hashable | None]) -> None:
        self.rewards = rewards
        self.answers = answers

    def __len__(self) -> int:
        return len(self.rewards)


# What one task keeps: its rewards and answers in arrival order. Memory is per task, and a run
# may hold hundreds of thousands of tasks, so the common task (0.0 or 1.0 rewards, one-letter or
# missing answers) is its packed form, one short string of two characters a rollout (a small
# object, which the garbage collector does not even track); anything else is a ``_Task``.
Task = str | _Task


def with_rollout(task: Task, reward: float | int, answer: Hashable | None) -> Task:
    """``task`` (``""``: a new one) with one more rollout: packed while it can be."""
    if isinstance(task, str):
        if (
            type(reward) is float
            and reward in (1.0, 0.0)
            and (answer is None or (type(answer) is str and len(answer) == 1 and answer != "\0"))
        ):
            return task + ("1" if reward else "0") + (answer or "\0")
        task = _Task(*_unpack(task))
    task.rewards.append(reward)
    task.answers.append(answer)
    return task


def _unpack(packed: str) -> tuple[list[float | int], list[Hashable | None]]:
    """A packed task's rewards and answers."""
    rewards: list[float | int] = [1.0 if c == "1" else 0.0 for c in packed[0::2]]
    answers: list[Hashable | None] = [None if c == "\0" else c for c in packed[1::2]]
    return rewards, answers


def _rollouts(task: Task) -> tuple[Sequence[float | int], Sequence[Hashable | None]]:
    return _unpack(task) if isinstance(task, str) else (task.rewards, task.answers)


def _size(task: Task) -> int:
    """How many rollouts ``task`` holds."""
    return len(task) // 2 if isinstance(task, str) else len(task)


def _all_packed(tasks: Iterable[Task]) -> list[str] | None:
    """Every task, when every one is packed; else ``None``."""
    forms = list(tasks)
    return forms if set(map(type, forms)) <= {str} else None  # type: ignore[return-value]


def _task_sort_key(key: int | str) -> tuple[int, int, str]:
    # Integer task indices sort numerically (as NeMo Gym sorts them), caller keys by name after.
    if isinstance(key, int):
        return (0, key, "")
    return (1, 0, key)


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


# Distinct component tuples counted before they are summed: memory stays flat in the rows.
_DISTINCT_COMPONENTS_MAX: Final = 4096


class TaskMetrics:
    """Rollouts grouped into tasks, kept as compactly as pass@k allows.

    Within a task, rollouts keep arrival order ("the first k rollouts" means the first k added),
    as in the reference; tasks are reported in sorted key order.
    """

    __slots__ = ("_component_names", "_component_rows", "_component_sums", "_tasks")

    def __init__(self, component_names: Sequence[str] = ()) -> None:
        self._component_names = tuple(component_names)
        self._component_sums = [_ExactSum() for _ in self._component_names]
        # Rows' components, counted by value: nearly every row's are one of a few tuples of 0.0
        # and 1.0, so a row costs one count; the exact sums are order-blind, so they take each
        # distinct tuple once with its count (when there are too many to keep, and at the end).
        self._component_rows: Counter[tuple[float | int | None, ...]] = Counter()
        self._tasks: dict[int | str, Task] = {}

    def add(
        self,
        key: int | str,
        reward: float | int,
        answer: Hashable | None,
        components: Sequence[float | int | None] = (),
    ) -> None:
        """One rollout of task ``key``; ``components`` follow the component names (``None``:
        the row does not report that component, which is then left out of its mean)."""
        tasks = self._tasks
        tasks[key] = with_rollout(tasks.get(key, ""), reward, answer)
        if components:
            rows = self._component_rows
            rows[tuple(components)] += 1
            if len(rows) > _DISTINCT_COMPONENTS_MAX:
                self._sum_components()

    def _sum_components(self) -> None:
        sums = self._component_sums
        for components, times in self._component_rows.items():
            for i, value in enumerate(components):
                if value is not None:
                    sums[i].add_many(value, times)
        self._component_rows.clear()

    @property
    def n_rows(self) -> int:
        packed = _all_packed(self._tasks.values())
        if packed is not None:
            return sum(map(len, packed)) // 2  # two characters a rollout
        return sum(map(_size, self._tasks.values()))

    @property
    def n_tasks(self) -> int:
        return len(self._tasks)

    def __contains__(self, key: object) -> bool:
        return key in self._tasks

    def means(self) -> dict[str, float]:
        """``mean/reward`` and ``mean/<component>``, correctly rounded (no rows are kept)."""
        if not self._tasks:
            return {}
        # A packed task's rewards are 0.0 and 1.0: its ones are counted, not unpacked (fsum of
        # the rest with that exact count is the fsum of all).
        ones = 0
        rest: list[float | int] = []
        every = _all_packed(self._tasks.values())
        if every is not None:
            # Packed forms have an even length: joined, the rewards stay on the even places.
            ones = "".join(every)[0::2].count("1")
        else:
            for task in self._tasks.values():
                if isinstance(task, str):
                    ones += task[0::2].count("1")
                else:
                    rest.extend(task.rewards)
        rest.append(float(ones))
        out = {"mean/reward": math.fsum(rest) / self.n_rows}
        self._sum_components()
        for name, total in zip(self._component_names, self._component_sums, strict=True):
            if total.count:
                out[f"mean/{name}"] = total.mean()
        return out

    def pass_majority(self) -> dict[str, Any]:
        """The mcqa server's ``compute_metrics``: pass@k, avg-of-k, majority@k and their spread."""
        if not self._tasks:
            return {}
        tasks = self._tasks

        def in_task_order() -> list[Task]:
            # Keys of one kind sort as their sort keys do (int indices numerically, names by name).
            kinds = set(map(type, tasks))
            keys = sorted(tasks) if kinds in ({str}, {int}) else sorted(tasks, key=_task_sort_key)
            return list(map(tasks.__getitem__, keys))

        return _pass_majority(list(tasks.values()), in_task_order)


def key_metrics(agent: Mapping[str, Any]) -> dict[str, Any]:
    """The mcqa server's headline selection (``get_key_metrics``); pass@K/accuracy is
    deliberately absent."""
    key: dict[str, Any] = {}
    if "mean/reward" in agent:
        key["mean/reward"] = agent["mean/reward"]
    key.update(_highest_k(agent, "pass@1[avg-of-{k}]", ("accuracy", "no_answer")))
    key.update(_highest_k(agent, "pass@{k}", ("no_answer",)))
    key.update(_highest_k(agent, "majority@{k}", ("accuracy",)))
    if "pass@1/accuracy" in agent:
        key["pass@1/accuracy"] = agent["pass@1/accuracy"]
    return key


class _Columns(NamedTuple):
    """One task's contributions to the sums of one score: per rollout k (1-based) its value (the
    per-run sums) and its pass@k value, and per k up to the largest task its avg-of-k and
    majority@k values."""

    run: list[float | int]
    passing: list[float | int]
    avg: list[float | int]
    majority: list[float | int]


def _task_columns(
    rewards: Sequence[float | int], answers: Sequence[Hashable | None], max_k: int
) -> tuple[_Columns, _Columns]:
    """A task's contributions for ``accuracy`` (its rewards) and ``no_answer``, as the reference
    computes them rollout by rollout."""
    n = len(rewards)
    no_answer: list[float | int] = [1 if a is None else 0 for a in answers]
    columns = []
    for vals in (rewards, no_answer):
        binary = all(v in (0, 1) for v in vals)
        n_wrong = sum(1 for v in vals if not v) if binary else 0
        # A sum of 0s and 1s is exact however it is added up: only other values need
        # CPython's compensated sum to come out as Gym's.
        prefix = None if binary else PySum()
        exact_prefix: float | int = 0
        running_max: float | int = -math.inf
        votes: Counter[tuple[Hashable, float | int]] = Counter()
        avg: float = 0.0
        majority: float | int = 0
        column = _Columns([], [], [], [])
        for k in range(1, max_k + 1):
            if k <= n:
                v = vals[k - 1]
                if prefix is None:
                    exact_prefix += v
                    avg = (0 + exact_prefix) / k
                else:
                    prefix.add(v)
                    avg = prefix.value() / k
                running_max = max(running_max, v)
                answer = answers[k - 1]
                if answer is not None:
                    votes[(answer, v)] += 1
                    majority = _majority_value(votes)
                column.run.append(v)
                # pass@k skips tasks with fewer than k rollouts.
                column.passing.append(
                    _pass_ratio_complement(n, n_wrong, k) if binary else running_max
                )
            # avg-of-k and majority@k use whatever of the first k rollouts exist, so past n
            # they repeat the task's last values.
            column.avg.append(avg)
            column.majority.append(majority)
        columns.append(column)
    return columns[0], columns[1]


# Distinct task forms worked out once each, at most: past this many (a run of many tasks with
# varied rewards and answers) the forms' values would cost more memory than the tasks
# themselves, and tasks are summed one by one instead.
_FORMS_MAX: Final = 1024

# What is summed over tasks: per rollout k (0-based here) its value and its pass@k value, per
# k its avg-of-k and majority@k values; for each of the two scores.
_Sums = dict[tuple[str, int, int], float | int]


def _pass_majority(
    tasks: Sequence[Task], in_task_order: Callable[[], Sequence[Task]] | None = None
) -> dict[str, Any]:
    """pass@k, pass@1[avg-of-k], majority@k, per-run aggregates and their spread.

    Mirrors NeMo Gym's ``compute_pass_majority_metrics`` with score names ``accuracy`` (the
    reward) and ``no_answer`` (extracted answer is null). Every ``sum()`` there is summed here as
    CPython 3.12+'s ``sum()`` (:func:`py_sum`, :class:`PySum`), of the same values in the same
    order (task by task in sorted task order), so the floats come out identical. Tasks of the
    same packed form contribute the same values, so each form is worked out once while there
    are few forms, and a sum of values that add up exactly in any order (0s and 1s, halves,
    quarters: a run's rewards, mostly) is taken by count, in no order.

    ``tasks`` are in task order, or in any order when ``in_task_order`` gives them in it: the
    tasks are sorted only if some sum needs the order.
    """
    tasks_in_order = functools.cache(in_task_order or (lambda: tasks))  # sorted once, if at all
    names = ("accuracy", "no_answer")
    packed = _all_packed(tasks)
    if packed is not None:
        sizes = Counter({n // 2: times for n, times in Counter(map(len, packed)).items()})
    else:
        sizes = Counter(map(_size, tasks))
    max_k = max(sizes)
    at_least = [0] * (max_k + 2)  # at_least[k]: tasks with k rollouts or more
    for size, times in sizes.items():
        at_least[size] += times
    for k in range(max_k, 0, -1):
        at_least[k] += at_least[k + 1]
    if packed is not None:
        # All packed: the tasks in order are their packed forms in order.
        sums = _sums_by_packed_form(packed, tasks_in_order, max_k)  # type: ignore[arg-type]
    else:
        sums = _sums_by_form(tasks_in_order(), max_k)
    if sums is None:
        sums = _sums_one_by_one(tasks_in_order(), max_k)

    n_tasks = len(tasks)
    out: dict[str, Any] = {}
    for k in range(1, max_k + 1):
        for j, name in enumerate(names):
            if at_least[k]:
                out[f"pass@{k}/{name}"] = 100.0 * sums["pass", j, k - 1] / at_least[k]
            out[f"pass@1[avg-of-{k}]/{name}"] = 100.0 * sums["avg", j, k - 1] / n_tasks
            out[f"majority@{k}/{name}"] = 100.0 * sums["majority", j, k - 1] / n_tasks
    per_run = {
        name: [100.0 * sums["run", j, i] / at_least[i + 1] for i in range(max_k)]
        for j, name in enumerate(names)
    }
    out["per_sample_aggregate"] = per_run
    out.update(_spread_across_runs(per_run, names, max_k))
    return out


def _sums_by_form(tasks: Sequence[Task], max_k: int) -> _Sums | None:
    """The sums, each form's values worked out once; ``None`` past ``_FORMS_MAX`` forms."""
    forms: list[tuple[_Columns, _Columns]] = []
    form_of: dict[str, int] = {}
    order: list[int] = []  # each task as the index of its form
    for task in tasks:
        packed = task if isinstance(task, str) else None
        index = form_of.get(packed) if packed is not None else None
        if index is None:
            if len(forms) == _FORMS_MAX:
                return None
            index = len(forms)
            forms.append(_task_columns(*_rollouts(task), max_k))
            if packed is not None:
                form_of[packed] = index
        order.append(index)
    tally = Counter(order)
    return _sums_of_forms(forms, [tally[i] for i in range(len(forms))], lambda: order, max_k)


def _sums_by_packed_form(
    packed: list[str], packed_in_order: Callable[[], Sequence[str]], max_k: int
) -> _Sums | None:
    """``_sums_by_form`` of tasks that are all packed, from their packed forms (``packed`` in
    any order, ``packed_in_order`` in task order), at C speed."""
    tally = Counter(packed)
    if len(tally) > _FORMS_MAX:
        return None
    form_of = {form: index for index, form in enumerate(tally)}
    forms = [_task_columns(*_unpack(form), max_k) for form in form_of]
    return _sums_of_forms(
        forms,
        list(tally.values()),
        lambda: list(map(form_of.__getitem__, packed_in_order())),
        max_k,
    )


def _sums_of_forms(
    forms: list[tuple[_Columns, _Columns]],
    counts: list[int],
    order: Callable[[], list[int]],
    max_k: int,
) -> _Sums:
    """The sums over tasks of their forms' values: ``counts[i]`` tasks are of form ``forms[i]``,
    and ``order()`` gives each task's form index in task order, for a sum that needs it."""
    order = functools.cache(order)  # worked out once, for the first sum that needs it

    def total(by_form: list[float | int | None]) -> float | int:
        """The sum over tasks, in task order, of their forms' values (``None``: not counted)."""
        present = [(v, counts[i]) for i, v in enumerate(by_form) if v is not None]
        exact = _exact_sum(present)
        if exact is not None:
            return exact
        return py_sum([v for v in map(by_form.__getitem__, order()) if v is not None])

    sums: _Sums = {}
    for j in range(2):
        for i in range(max_k):
            sums["run", j, i] = total([f[j].run[i] if len(f[j].run) > i else None for f in forms])
            sums["pass", j, i] = total(
                [f[j].passing[i] if len(f[j].run) > i else None for f in forms]
            )
            sums["avg", j, i] = total([f[j].avg[i] for f in forms])
            sums["majority", j, i] = total([f[j].majority[i] for f in forms])
    return sums


def _sums_one_by_one(tasks: Sequence[Task], max_k: int) -> _Sums:
    """The sums, every task's values added in task order (memory: one task's values)."""
    totals = {
        (kind, j, i): PySum()
        for kind in ("run", "pass", "avg", "majority")
        for j in range(2)
        for i in range(max_k)
    }
    for task in tasks:
        for j, column in enumerate(_task_columns(*_rollouts(task), max_k)):
            for i, value in enumerate(column.run):
                totals["run", j, i].add(value)
                totals["pass", j, i].add(column.passing[i])
            for i in range(max_k):
                totals["avg", j, i].add(column.avg[i])
                totals["majority", j, i].add(column.majority[i])
    return {key: total.value() for key, total in totals.items()}


# Values that are multiples of 2**-_DYADIC_BITS in [0, 1] add up exactly (no rounding at any
# step) while there are fewer than 2**(53 - _DYADIC_BITS) of them: their sum is then the same in
# any order, and is the sum of the distinct values times their counts.
_DYADIC_BITS: Final = 24
_DYADIC_SCALE: Final = float(2**_DYADIC_BITS)
_EXACT_COUNT_MAX: Final = 2 ** (53 - _DYADIC_BITS)


def _exact_sum(values: Sequence[tuple[float | int, int]]) -> float | int | None:
    """The sum of each value times its count, when adding them up one by one in any order is
    exact (so is what ``py_sum`` gives in task order); ``None`` when it may not be."""
    if sum(count for _, count in values) >= _EXACT_COUNT_MAX:
        return None
    if not all(0 <= v <= 1 and float(v * _DYADIC_SCALE).is_integer() for v, _ in values):
        return None
    # Each product is exact (a count below 2**29 times a multiple of 2**-24 in [0, 1]), and so
    # is their sum, which fsum then returns as is.
    return math.fsum(v * count for v, count in values) if values else 0


# Gym works out the spread of the first k runs afresh for every k, which is quadratic in the runs
# of a task (16,000 rollouts of one task: 78 s). Up to this many runs choicebox does the same, so
# its figures are Gym's bit for bit; past it each further k costs O(1) (Welford's running mean
# and sum of squared deviations), agreeing with Gym's to about 1e-15.
_EXACT_RUNS: Final = 256


def _spread_across_runs(
    per_run: Mapping[str, Sequence[float]], names: Sequence[str], max_k: int
) -> dict[str, float]:
    """Sample std (ddof=1) and standard error of the per-run pass@1 values of the first k runs."""
    out: dict[str, float] = {}
    for k in range(2, min(max_k, _EXACT_RUNS) + 1):
        for name in names:
            runs = per_run[name][:k]
            mean = py_sum(runs) / len(runs)
            std_dev = math.sqrt(py_sum([(x - mean) ** 2 for x in runs]) / (len(runs) - 1))
            out[f"pass@1[avg-of-{k}]/{name}/std_dev_across_runs"] = std_dev
            out[f"pass@1[avg-of-{k}]/{name}/std_err_across_runs"] = std_dev / math.sqrt(len(runs))
    if max_k <= _EXACT_RUNS:
        return out
    spreads = {name: _running_std(per_run[name][:max_k]) for name in names}
    for k in range(_EXACT_RUNS + 1, max_k + 1):
        for name in names:
            std_dev = spreads[name][k - 1]
            out[f"pass@1[avg-of-{k}]/{name}/std_dev_across_runs"] = std_dev
            out[f"pass@1[avg-of-{k}]/{name}/std_err_across_runs"] = std_dev / math.sqrt(k)
    return out


def _running_std(values: Sequence[float]) -> list[float]:
    """The sample std (ddof=1) of every prefix of ``values`` (0.0 for the first), in one pass."""
    out: list[float] = []
    mean = 0.0
    squares = 0.0  # the sum of squared deviations from the running mean
    for count, x in enumerate(values, start=1):
        delta = x - mean
        mean += delta / count
        squares += delta * (x - mean)
        out.append(math.sqrt(squares / (count - 1)) if count > 1 else 0.0)
    return out


def _majority_value(votes: Counter[tuple[Hashable, float | int]]) -> float:
    """Score of the majority vote; ties average the tied (answer, score) pairs; no votes -> 0."""
    if not votes:
        return 0.0
    top = max(votes.values())
    tied = [score for (_, score), count in votes.items() if count == top]
    if len(tied) == 1:
        return (0 + tied[0]) / 1  # sum([x]) / 1, as the reference computes it
    return py_sum(tied) / len(tied)


class PySum:
    """CPython 3.12+'s ``sum()`` of ints and floats from the start value 0, one value at a time.

    Gym 0.7.0 runs on Python 3.13, whose ``sum()`` of floats is compensated (Neumaier); the
    Python running choicebox may be older, so its ``sum()`` is not used where Gym's numbers must
    be met. As in CPython, ints are summed exactly until the first float, a float then joins the
    compensated sum, and a later int is added to the running sum without compensation
    (``Python/bltinmodule.c``, ``builtin_sum_impl``).
    """

    __slots__ = ("_floating", "_hi", "_int", "_lo")

    def __init__(self) -> None:
        self._int = 0
        self._floating = False
        self._hi = 0.0
        self._lo = 0.0

    def add(self, x: float | int) -> None:
        if not self._floating:
            if type(x) is int:
                self._int += x
                return
            self._hi = self._int + x
            self._floating = True
            return
        if type(x) is float:
            hi = self._hi
            t = hi + x
            if abs(hi) >= abs(x):
                self._lo += (hi - t) + x
            else:
                self._lo += (x - t) + hi
            self._hi = t
        else:
            self._hi += float(x)

    def value(self) -> float | int:
        if not self._floating:
            return self._int
        lo = self._lo
        # As CPython: keep the sign of a negative zero, and never turn inf into nan.
        return self._hi + lo if lo and math.isfinite(lo) else self._hi


def py_sum(values: Iterable[float | int]) -> float | int:
    """``sum(values)`` as CPython 3.12+ computes it: :class:`PySum`, inlined (a method call per
    value would cost more than the addition)."""
    items = iter(values)
    exact = 0
    for x in items:
        if type(x) is not int:
            hi: float | int = exact + x
            break
        exact += x
    else:
        return exact
    lo = 0.0
    for x in items:
        if type(x) is float:
            t = hi + x
            if abs(hi) >= abs(x):
                lo += (hi - t) + x
            else:
                lo += (x - t) + hi
            hi = t
        else:
            hi += float(x)
    return hi + lo if lo and math.isfinite(lo) else hi
