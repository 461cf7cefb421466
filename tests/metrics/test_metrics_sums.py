"""The metrics' summation shortcuts give the floats of adding every value one by one, in order.

``_pass_majority`` works each packed task form out once and sums exactly-summable columns by
count, ``py_sum`` inlines :class:`PySum`, and the component means count rows by value: each is
checked here against the plain computation it replaces, bit for bit.
"""

from __future__ import annotations

import contextlib
import math
import sys
import unittest.mock
from collections import Counter
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox.metrics import _gym
from choicebox.metrics._gym import (
    _DISTINCT_COMPONENTS_MAX,
    PySum,
    Task,
    TaskMetrics,
    _ExactSum,
    _majority_value,
    _pass_majority,
    _rollouts,
    _size,
    _spread_across_runs,
    py_sum,
    with_rollout,
)
from choicebox.metrics._stats import _pass_ratio_complement


def _reference(tasks: Sequence[Task]) -> dict[str, Any]:
    """pass@k, avg-of-k and majority@k as Gym's loop computes them: every value added to its
    sum one at a time, task by task (a :class:`PySum` per sum, as before the shortcuts)."""
    names = ("accuracy", "no_answer")
    max_k = max(_size(t) for t in tasks)
    pass_sum = [[PySum(), PySum()] for _ in range(max_k + 1)]
    pass_cnt = [[0, 0] for _ in range(max_k + 1)]
    avg_sum = [[PySum(), PySum()] for _ in range(max_k + 1)]
    maj_sum = [[PySum(), PySum()] for _ in range(max_k + 1)]
    run_sum = [[PySum(), PySum()] for _ in range(max_k)]
    run_cnt = [0] * max_k
    for task in tasks:
        n = _size(task)
        rewards, answers = _rollouts(task)
        no_answer: list[float | int] = [1 if a is None else 0 for a in answers]
        for j, vals in enumerate((rewards, no_answer)):
            binary = all(v in (0, 1) for v in vals)
            n_wrong = sum(1 for v in vals if not v) if binary else 0
            prefix = PySum()
            running_max: float | int = -math.inf
            votes: Counter[tuple[Hashable, float | int]] = Counter()
            avg: float = 0.0
            majority: float | int = 0
            for k in range(1, max_k + 1):
                if k <= n:
                    v = vals[k - 1]
                    prefix.add(v)
                    avg = prefix.value() / k
                    running_max = max(running_max, v)
                    if answers[k - 1] is not None:
                        votes[(answers[k - 1], v)] += 1
                        majority = _majority_value(votes)
                    run_sum[k - 1][j].add(v)
                    if j == 0:
                        run_cnt[k - 1] += 1
                    pass_sum[k][j].add(
                        _pass_ratio_complement(n, n_wrong, k) if binary else running_max
                    )
                    pass_cnt[k][j] += 1
                avg_sum[k][j].add(avg)
                maj_sum[k][j].add(majority)
    out: dict[str, Any] = {}
    for k in range(1, max_k + 1):
        for j, name in enumerate(names):
            if pass_cnt[k][j]:
                out[f"pass@{k}/{name}"] = 100.0 * pass_sum[k][j].value() / pass_cnt[k][j]
            out[f"pass@1[avg-of-{k}]/{name}"] = 100.0 * avg_sum[k][j].value() / len(tasks)
            out[f"majority@{k}/{name}"] = 100.0 * maj_sum[k][j].value() / len(tasks)
    per_run = {
        name: [100.0 * run_sum[i][j].value() / run_cnt[i] for i in range(max_k)]
        for j, name in enumerate(names)
    }
    out["per_sample_aggregate"] = per_run
    out.update(_spread_across_runs(per_run, names, max_k))
    return out


def _tasks(rollouts: Sequence[Sequence[tuple[float | int, Hashable | None]]]) -> list[Task]:
    tasks = []
    for task_rollouts in rollouts:
        task: Task = ""
        for reward, answer in task_rollouts:
            task = with_rollout(task, reward, answer)
        tasks.append(task)
    return tasks


def _same(a: Any, b: Any) -> bool:
    """Equal, float for float (NaN equal to NaN, 0.0 unequal to -0.0)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return bool(a == b)


_BINARY = st.tuples(st.sampled_from([0.0, 1.0]), st.sampled_from([None, "A", "B", "C"]))
_ANY = st.tuples(
    st.sampled_from([0.0, 1.0, 0.5, 0.25, 1 / 3, 0.7, 2.0, 1, 0, -0.0, 1e-17]),
    st.sampled_from([None, "A", "B", "AB", 3]),
)


@given(st.lists(st.lists(_BINARY, min_size=1, max_size=7), min_size=1, max_size=40))
@settings(max_examples=150, deadline=None)
def test_packed_tasks_give_the_floats_of_the_one_by_one_loop(
    rollouts: list[list[tuple[float, str | None]]],
) -> None:
    tasks = _tasks(rollouts)
    assert _same(_pass_majority(tasks), _reference(tasks))


@given(
    st.lists(st.lists(st.one_of(_BINARY, _ANY), min_size=1, max_size=6), min_size=1, max_size=30)
)
@settings(max_examples=150, deadline=None)
def test_any_tasks_give_the_floats_of_the_one_by_one_loop(
    rollouts: list[list[tuple[float | int, Hashable | None]]],
) -> None:
    tasks = _tasks(rollouts)
    assert _same(_pass_majority(tasks), _reference(tasks))


@given(
    st.lists(st.lists(st.one_of(_BINARY, _ANY), min_size=1, max_size=5), min_size=1, max_size=30)
)
@settings(max_examples=100, deadline=None)
def test_past_the_forms_kept_tasks_are_summed_one_by_one_to_the_same_floats(
    rollouts: list[list[tuple[float | int, Hashable | None]]],
) -> None:
    tasks = _tasks(rollouts)
    by_form = _pass_majority(tasks)
    with unittest.mock.patch.object(_gym, "_FORMS_MAX", 0):  # every task is one too many
        one_by_one = _pass_majority(tasks)
    assert _same(one_by_one, by_form)
    assert _same(one_by_one, _reference(tasks))


def test_many_tasks_of_few_forms_sum_by_count_exactly_as_in_order() -> None:
    # Thousands of tasks of three rollouts: avg-of-3 sums thirds (not exact), pass@k sums
    # 1 - C(w, k)/C(3, k); the mix of forms is irregular so order matters to the last bit.
    forms = [
        [(1.0, "A"), (0.0, None), (1.0, "B")],
        [(0.0, "C"), (0.0, "C"), (1.0, "A")],
        [(1.0, "A")],
    ]
    rollouts = [forms[(i * i + 3 * i) % 7 % 3] for i in range(3000)]
    tasks = _tasks(rollouts)
    assert _same(_pass_majority(tasks), _reference(tasks))


@given(st.lists(st.one_of(st.integers(-5, 5), st.floats(allow_nan=True), st.booleans())))
@settings(max_examples=300, deadline=None)
def test_py_sum_is_pysum(values: list[float | int]) -> None:
    total = PySum()
    for value in values:
        total.add(value)
    assert _same(py_sum(values), total.value())
    if sys.version_info >= (3, 12):  # the sum() PySum reproduces
        assert _same(py_sum(values), sum(values))


_COMPONENT = st.one_of(
    st.sampled_from([0.0, 1.0, -0.0, 0.5, 3.0, 1, 0, 2**60, None]),
    # Below overflow: summing two floats near the largest one overflows the partials (as fsum's
    # own intermediate sums would).
    st.floats(min_value=-1e300, max_value=1e300),
    st.sampled_from([math.inf, -math.inf]),
)


@given(st.lists(st.lists(_COMPONENT, min_size=2, max_size=2), min_size=1, max_size=60))
@settings(max_examples=300, deadline=None)
def test_component_means_are_the_correctly_rounded_means(rows: list[list[Any]]) -> None:
    metrics = TaskMetrics(("a", "b"))
    for i, components in enumerate(rows):
        metrics.add(i, 1.0, "A", components)
    means = metrics.means()
    for j, name in enumerate(("a", "b")):
        values = [row[j] for row in rows if row[j] is not None]
        if not values:
            assert f"mean/{name}" not in means
            continue
        finite = [v for v in values if math.isfinite(v)]
        special = sum(v for v in values if not math.isfinite(v))
        expected = math.fsum(finite) if finite else 0.0
        if special:
            expected += special
        expected /= len(values)
        assert _same(means[f"mean/{name}"], expected), (name, values)


def test_component_counts_are_summed_when_too_many_kinds_are_kept() -> None:
    metrics = TaskMetrics(("a",))
    n = _DISTINCT_COMPONENTS_MAX * 2 + 5
    for i in range(n):
        metrics.add(i, 1.0, "A", (i / 7,))
    assert len(metrics._component_rows) <= _DISTINCT_COMPONENTS_MAX + 1  # memory stays flat
    assert metrics.means()["mean/a"] == math.fsum(i / 7 for i in range(n)) / n


@pytest.mark.parametrize("value", [0.0, 1.0, 2.0, 0.5, -0.0, math.inf])
def test_add_many_is_adding_one_at_a_time(value: float) -> None:
    one_by_one, at_once = _ExactSum(), _ExactSum()
    for _ in range(5):
        one_by_one.add(value)
    at_once.add_many(value, 5)
    assert _same(at_once.mean(), one_by_one.mean())


@given(
    st.lists(
        st.tuples(
            st.one_of(st.integers(-3, 30), st.text("ab1", min_size=1, max_size=3), st.booleans()),
            _BINARY,
        ),
        min_size=1,
        max_size=40,
    )
)
@settings(max_examples=200, deadline=None)
def test_tasks_are_reported_in_sort_key_order_whatever_their_keys(
    rows: list[tuple[int | str, tuple[float, str | None]]],
) -> None:
    metrics = TaskMetrics()
    for key, (reward, answer) in rows:
        metrics.add(key, reward, answer)
    tasks = metrics._tasks
    ordered = [tasks[k] for k in sorted(tasks, key=_gym._task_sort_key)]
    assert _same(metrics.pass_majority(), _pass_majority(ordered))
    assert _same(metrics.pass_majority(), _reference(ordered))
    assert metrics.n_rows == len(rows)


@contextlib.contextmanager
def _sorts() -> Iterator[list[int]]:
    """How many tasks each putting in task order took, while the block runs."""
    sorted_tasks: list[int] = []
    real = _gym._pass_majority

    def spy(tasks: Any, in_task_order: Any = None) -> Any:
        def counted() -> Any:
            ordered = in_task_order()
            sorted_tasks.append(len(ordered))
            return ordered

        return real(tasks, counted)

    with unittest.mock.patch.object(_gym, "_pass_majority", spy):
        yield sorted_tasks


def test_sums_that_need_the_task_order_get_it_whatever_the_insertion_order() -> None:
    # Thirds (avg-of-3) do not add up exactly, so those sums are taken task by task, over the
    # tasks sorted then (they arrive in another order), each through its form's index.
    forms = [
        [(1.0, "A"), (0.0, None), (1.0, "B")],
        [(0.0, "C"), (0.0, "C"), (1.0, "A")],
        [(1.0, "A")],
    ]
    metrics = TaskMetrics()
    keys = [f"uuid:{i:05d}" for i in range(3000)]
    for i in sorted(range(3000), key=lambda i: (i * 7919) % 3001):  # arrival order, not sorted
        for reward, answer in forms[(i * i + 3 * i) % 7 % 3]:
            metrics.add(keys[i], reward, answer)
    in_order = [metrics._tasks[k] for k in sorted(keys)]
    with _sorts() as sorted_tasks:
        reported = metrics.pass_majority()
    assert sorted_tasks == [3000]  # put in task order once, for the sums that need it
    assert _same(reported, _reference(in_order))


def test_sums_of_zeros_and_ones_are_taken_by_count_without_sorting_the_tasks() -> None:
    metrics = TaskMetrics()
    for i in range(500):
        metrics.add(f"uuid:{(i * 7919) % 501:05d}", float(i % 3 == 0), "A" if i % 5 else None)
    with _sorts() as sorted_tasks:
        reported = metrics.pass_majority()
    assert sorted_tasks == []  # never put in task order: every sum was exact
    in_order = [metrics._tasks[k] for k in sorted(metrics._tasks)]
    assert _same(reported, _reference(in_order))
