"""Tests of choicebox.metrics: pass@k, bootstrap intervals, Gym-compatible aggregates, failures."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox._errors import ChoiceboxError
from choicebox.metrics import (
    CategoryStats,
    ConfidenceInterval,
    MetricsAccumulator,
    MetricsError,
    _profile,
    aggregate_metrics,
    bootstrap_ci,
    category_breakdown,
    failure_analysis,
    pass_at_k,
)
from choicebox.metrics._records import read_row
from choicebox.metrics._stats import _binomial_interval, _bootstrap_means

# ----------------------------------------------------------------------------------- pass@k


def _brute_force_pass_at_k(n: int, c: int, k: int) -> Fraction:
    """Share of k-subsets of n attempts (the first c correct) holding at least one correct."""
    subsets = list(itertools.combinations(range(n), k))
    hits = sum(1 for s in subsets if any(i < c for i in s))
    return Fraction(hits, len(subsets))


@st.composite
def _nck(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 9))
    return n, draw(st.integers(0, n)), draw(st.integers(1, n))


@given(_nck())
@settings(max_examples=300, deadline=None)
def test_pass_at_k_matches_subset_enumeration(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    exact = _brute_force_pass_at_k(n, c, k)
    # Small n divides exact binomials, so the result is 1 minus the correctly rounded miss rate.
    assert pass_at_k(n, c, k) == 1.0 - float(1 - exact)
    assert pass_at_k(n, c, k) == pytest.approx(float(exact), abs=1e-15)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (8, 3, 1, 0.375),
        (8, 3, 4, 1 - 5 / 70),
        (10, 0, 5, 0.0),
        (10, 10, 1, 1.0),
        (5, 1, 5, 1.0),  # k = n always includes the correct one
        (4, 2, 3, 1.0),  # only 2 wrong, cannot fill 3 slots
        (1, 0, 1, 0.0),
        (1, 1, 1, 1.0),
    ],
)
def test_pass_at_k_known_values(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(("n", "c", "k"), [(5000, 37, 100), (2000, 1, 1), (100_000, 5, 3)])
def test_pass_at_k_product_form_for_large_n(n: int, c: int, k: int) -> None:
    miss = Fraction(math.comb(n - c, k), math.comb(n, k))
    assert pass_at_k(n, c, k) == pytest.approx(float(1 - miss), rel=1e-12)


def test_pass_at_k_huge_n_is_finite() -> None:
    value = pass_at_k(10**6, 10, 10**5)
    assert 0.0 < value <= 1.0
    assert math.isfinite(value)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ((0, 0, 1), "n must be >= 1"),
        ((5, -1, 1), "c must be between 0 and n=5"),
        ((5, 6, 1), "c must be between 0 and n=5"),
        ((5, 2, 0), "k must be between 1 and n=5"),
        ((5, 2, 6), "k must be between 1 and n=5"),
        ((5.0, 2, 1), "n must be an int"),
        ((5, True, 1), "c must be an int"),
    ],
)
def test_pass_at_k_rejects_bad_arguments(args: tuple[Any, Any, Any], fragment: str) -> None:
    with pytest.raises(MetricsError, match=fragment) as info:
        pass_at_k(*args)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, ChoiceboxError)


# -------------------------------------------------------------------------------- bootstrap


def test_bootstrap_is_deterministic_per_seed() -> None:
    scores = [0.0, 0.25, 1.0, 0.5, 0.75, 1.0, 0.0, 0.5]
    first = bootstrap_ci(scores, resamples=2000, seed=7)
    assert first == bootstrap_ci(scores, resamples=2000, seed=7)
    assert first != bootstrap_ci(scores, resamples=2000, seed=8)
    assert isinstance(first, ConfidenceInterval)
    assert first.resamples == 2000
    assert first.confidence == 0.95


@pytest.mark.parametrize("binary", [True, False])
def test_bootstrap_contains_mean_and_narrows(binary: bool) -> None:
    rng = np.random.default_rng(3)
    widths = []
    for n in (50, 500, 5000):
        scores = rng.integers(0, 2, n).astype(float) if binary else rng.random(n)
        ci = bootstrap_ci(scores, resamples=2000)
        assert ci.value == pytest.approx(float(np.mean(scores)))
        assert ci.ci_lower <= ci.value <= ci.ci_upper
        widths.append(ci.ci_upper - ci.ci_lower)
    assert widths[0] > widths[1] > widths[2] > 0


def test_bootstrap_width_grows_with_confidence() -> None:
    scores = [1.0, 0.0] * 50
    narrow = bootstrap_ci(scores, confidence=0.5)
    wide = bootstrap_ci(scores, confidence=0.99)
    assert wide.ci_lower < narrow.ci_lower < narrow.ci_upper < wide.ci_upper


def test_bootstrap_degenerate_inputs() -> None:
    single = bootstrap_ci([0.7])
    assert (single.value, single.ci_lower, single.ci_upper) == (0.7, 0.7, 0.7)
    constant = bootstrap_ci([1.0] * 10)
    assert (constant.value, constant.ci_lower, constant.ci_upper) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    ("scores", "kwargs", "fragment"),
    [
        ([], {}, "needs at least one score"),
        ([0.5, float("nan")], {}, "finite"),
        ([[0.5, 1.0]], {}, "one-dimensional"),
        (["a"], {}, "must be numbers"),
        ([0.5, 1.0], {"confidence": 1.0}, "confidence"),
        ([0.5, 1.0], {"resamples": 0}, "resamples"),
    ],
)
def test_bootstrap_rejects_bad_input(scores: Any, kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(MetricsError, match=fragment):
        bootstrap_ci(scores, **kwargs)


def test_binary_fast_path_matches_generic_paths_in_distribution() -> None:
    arr = np.array([1.0] * 300 + [0.0] * 700)
    means = {
        method: _bootstrap_means(arr, 20_000, np.random.default_rng(11), method)
        for method in ("binomial", "multinomial", "indices")
    }
    for draws in means.values():
        assert draws.shape == (20_000,)
        assert float(draws.mean()) == pytest.approx(0.3, abs=2e-3)
        # Standard error of the mean: sqrt(p(1-p)/n) = 0.01449
        assert float(draws.std()) == pytest.approx(math.sqrt(0.3 * 0.7 / 1000), rel=0.05)
    q = {m: np.quantile(d, [0.025, 0.975]) for m, d in means.items()}
    assert np.allclose(q["binomial"], q["multinomial"], atol=3e-3)
    assert np.allclose(q["binomial"], q["indices"], atol=3e-3)


def _binomial_quantiles_by_fractions(n: int, ones: int, confidence: float) -> tuple[float, float]:
    """The smallest k with P(X <= k) >= q for X ~ Binomial(n, ones/n), in exact arithmetic."""
    p = Fraction(ones, n)
    alpha = (1 - Fraction(confidence)) / 2
    targets = [alpha, 1 - alpha]
    found: list[int] = []
    cumulative = Fraction(0)
    for k in range(n + 1):
        cumulative += math.comb(n, k) * p**k * (1 - p) ** (n - k)
        while targets and cumulative >= targets[0]:
            targets.pop(0)
            found.append(k)
    return found[0] / n, found[1] / n


@pytest.mark.parametrize("confidence", [0.5, 0.95, 0.99])
def test_binary_interval_is_the_exact_binomial_quantiles(confidence: float) -> None:
    for n in range(2, 41):
        for ones in range(1, n):
            expected = _binomial_quantiles_by_fractions(n, ones, confidence)
            assert _binomial_interval(n, ones, confidence) == expected, (n, ones)
            scores = [1.0] * ones + [0.0] * (n - ones)
            ci = bootstrap_ci(scores, confidence=confidence)
            assert (ci.ci_lower, ci.ci_upper) == expected
            assert bootstrap_ci(np.array(scores), confidence=confidence) == ci


@pytest.mark.parametrize(("n", "ones"), [(1000, 300), (12_032, 4_892), (1_000_000, 620_000), (100_000, 3)])
def test_binary_interval_is_the_limit_of_resampling(n: int, ones: int) -> None:
    """A million binomial resamples give the same quantiles, to one step of 1/n."""
    draws = np.random.default_rng(1).binomial(n, ones / n, size=1_000_000) / n
    sampled = np.quantile(draws, [0.025, 0.975])
    lower, upper = _binomial_interval(n, ones, 0.95)
    assert abs(lower - sampled[0]) <= 1 / n + 1e-12
    assert abs(upper - sampled[1]) <= 1 / n + 1e-12


def test_binary_interval_does_not_depend_on_seed_or_resamples() -> None:
    scores = [1.0, 0.0, 1.0, 1.0, 0.0] * 30
    assert bootstrap_ci(scores, seed=1, resamples=10) == bootstrap_ci(scores, seed=2, resamples=10)


def test_binomial_path_rejects_non_binary_scores() -> None:
    with pytest.raises(MetricsError, match="all 0 or 1"):
        _bootstrap_means(np.array([0.0, 0.5]), 10, np.random.default_rng(0), "binomial")


def test_bootstrap_of_a_million_scores_completes() -> None:
    rng = np.random.default_rng(5)
    binary = (rng.random(1_000_000) < 0.62).astype(np.float64)
    ci = bootstrap_ci(binary)
    assert ci.value == pytest.approx(0.62, abs=2e-3)
    assert ci.ci_lower < ci.value < ci.ci_upper
    assert ci.ci_upper - ci.ci_lower < 0.005
    # A few distinct values take the multinomial path, also independent of n.
    graded = rng.choice([0.0, 0.5, 1.0], 1_000_000)
    ci = bootstrap_ci(graded, resamples=2000)
    assert ci.ci_lower < ci.value < ci.ci_upper


# ---------------------------------------------------------------------- category breakdown


def test_category_breakdown_dotted_paths_and_missing() -> None:
    rows: list[dict[str, Any]] = [
        {"metadata": {"category": "physics"}, "reward": 1.0},
        {"metadata": {"category": "physics"}, "reward": 0.0},
        {"metadata": {"category": "biology"}, "reward": 1.0},
        {"metadata": {"category": 3}, "reward": True},
        {"metadata": {"category": "3"}, "reward": 0},
        {"metadata": {"category": None}, "reward": 0.0},
        {"metadata": {}, "reward": 1.0},
        {"reward": 0.0},
    ]
    stats = category_breakdown(rows, "metadata.category")
    assert [s.category for s in stats] == ["(missing)", "3", "biology", "physics"]
    by_name = {s.category: s for s in stats}
    missing = by_name["(missing)"]
    assert (missing.n_samples, missing.ci_lower, missing.ci_upper) == (3, 0.0, 1.0)
    assert missing.mean_reward == pytest.approx(1 / 3)
    assert by_name["3"].n_samples == 2
    assert by_name["3"].mean_reward == 0.5
    assert by_name["biology"] == CategoryStats(
        category="biology", n_samples=1, mean_reward=1.0, ci_lower=1.0, ci_upper=1.0
    )
    assert by_name["physics"].ci_lower <= 0.5 <= by_name["physics"].ci_upper


def test_category_breakdown_top_level_field_and_reward_key() -> None:
    rows = [{"subject": "law", "score": 1.0}, {"subject": "law", "score": 0.5}]
    (law,) = category_breakdown(rows, "subject", reward_key="score")
    assert (law.category, law.n_samples, law.mean_reward) == ("law", 2, 0.75)


def test_category_breakdown_needs_rewards() -> None:
    with pytest.raises(MetricsError, match="row 1: row has no numeric 'reward'"):
        category_breakdown([{"subject": "a", "reward": 1}, {"subject": "a"}], "subject")


# ------------------------------------------------------------------------ aggregate metrics


def _rollout(task: int, rollout: int, reward: float, answer: str | None) -> dict[str, Any]:
    return {
        "_ng_task_index": task,
        "_ng_rollout_index": rollout,
        "reward": reward,
        "extracted_answer": answer,
    }


# NeMo Gym's own test: task 0 = [A right, A right], task 1 = [B wrong, C right].
TWO_BY_TWO = [
    _rollout(0, 0, 1.0, "A"),
    _rollout(0, 1, 1.0, "A"),
    _rollout(1, 0, 0.0, "B"),
    _rollout(1, 1, 1.0, "C"),
]
TWO_BY_TWO_AGENT = {
    "mean/reward": 0.75,
    "pass@1/accuracy": 75.0,
    "pass@1[avg-of-1]/accuracy": 50.0,
    "majority@1/accuracy": 50.0,
    "pass@1/no_answer": 0.0,
    "pass@1[avg-of-1]/no_answer": 0.0,
    "majority@1/no_answer": 0.0,
    "pass@2/accuracy": 100.0,
    "pass@1[avg-of-2]/accuracy": 75.0,
    "majority@2/accuracy": 75.0,
    "pass@2/no_answer": 0.0,
    "pass@1[avg-of-2]/no_answer": 0.0,
    "majority@2/no_answer": 0.0,
    "per_sample_aggregate": {"accuracy": [50.0, 100.0], "no_answer": [0.0, 0.0]},
    "pass@1[avg-of-2]/accuracy/std_dev_across_runs": 35.35533905932738,
    "pass@1[avg-of-2]/accuracy/std_err_across_runs": 25.0,
    "pass@1[avg-of-2]/no_answer/std_dev_across_runs": 0.0,
    "pass@1[avg-of-2]/no_answer/std_err_across_runs": 0.0,
}
TWO_BY_TWO_KEY = {
    "mean/reward": 0.75,
    "pass@1[avg-of-2]/accuracy": 75.0,
    "pass@1[avg-of-2]/no_answer": 0.0,
    "pass@2/no_answer": 0.0,
    "majority@2/accuracy": 75.0,
    "pass@1/accuracy": 75.0,
}

# Three tasks of three rollouts with null extractions (reward 0 whenever the answer is null).
NO_ANSWER_3X3 = [
    _rollout(0, 0, 0.0, None),
    _rollout(0, 1, 1.0, "B"),
    _rollout(0, 2, 0.0, "C"),
    _rollout(1, 0, 0.0, None),
    _rollout(1, 1, 0.0, None),
    _rollout(1, 2, 0.0, None),
    _rollout(2, 0, 1.0, "D"),
    _rollout(2, 1, 0.0, "A"),
    _rollout(2, 2, 1.0, "D"),
]
NO_ANSWER_3X3_AGENT = {
    "mean/reward": 0.3333333333333333,
    "pass@1/accuracy": 33.333333333333336,
    "pass@1[avg-of-1]/accuracy": 33.333333333333336,
    "majority@1/accuracy": 33.333333333333336,
    "pass@1/no_answer": 44.44444444444445,
    "pass@1[avg-of-1]/no_answer": 66.66666666666667,
    "majority@1/no_answer": 0.0,
    "pass@2/accuracy": 55.555555555555564,
    "pass@1[avg-of-2]/accuracy": 33.333333333333336,
    "majority@2/accuracy": 50.0,
    "pass@2/no_answer": 55.555555555555564,
    "pass@1[avg-of-2]/no_answer": 50.0,
    "majority@2/no_answer": 0.0,
    "pass@3/accuracy": 66.66666666666667,
    "pass@1[avg-of-3]/accuracy": 33.333333333333336,
    "majority@3/accuracy": 50.0,
    "pass@3/no_answer": 66.66666666666667,
    "pass@1[avg-of-3]/no_answer": 44.444444444444436,
    "majority@3/no_answer": 0.0,
    "per_sample_aggregate": {
        "accuracy": [33.333333333333336, 33.333333333333336, 33.333333333333336],
        "no_answer": [66.66666666666667, 33.333333333333336, 33.333333333333336],
    },
    "pass@1[avg-of-2]/accuracy/std_dev_across_runs": 0.0,
    "pass@1[avg-of-2]/accuracy/std_err_across_runs": 0.0,
    "pass@1[avg-of-2]/no_answer/std_dev_across_runs": 23.570226039551585,
    "pass@1[avg-of-2]/no_answer/std_err_across_runs": 16.666666666666668,
    "pass@1[avg-of-3]/accuracy/std_dev_across_runs": 0.0,
    "pass@1[avg-of-3]/accuracy/std_err_across_runs": 0.0,
    "pass@1[avg-of-3]/no_answer/std_dev_across_runs": 19.245008972987527,
    "pass@1[avg-of-3]/no_answer/std_err_across_runs": 11.111111111111112,
}
NO_ANSWER_3X3_KEY = {
    "mean/reward": 0.3333333333333333,
    "pass@1[avg-of-3]/accuracy": 33.333333333333336,
    "pass@1[avg-of-3]/no_answer": 44.444444444444436,
    "pass@3/no_answer": 66.66666666666667,
    "majority@3/accuracy": 50.0,
    "pass@1/accuracy": 33.333333333333336,
}


@pytest.mark.parametrize(
    ("rows", "agent", "key"),
    [
        (TWO_BY_TWO, TWO_BY_TWO_AGENT, TWO_BY_TWO_KEY),
        (NO_ANSWER_3X3, NO_ANSWER_3X3_AGENT, NO_ANSWER_3X3_KEY),
    ],
    ids=["gym-test-2x2", "no-answer-3x3"],
)
def test_worked_examples_reproduced_key_by_key(
    rows: list[dict[str, Any]], agent: dict[str, Any], key: dict[str, Any]
) -> None:
    # What choicebox grade streams: the means and the mcqa server's own metrics (the profile
    # statistics of Gym 0.7.0 are tests/serve/test_gym_metrics.py's).
    result = aggregate_metrics(rows, profile=False)
    # Exact float equality and the same key order as the reference's JSON.
    assert list(result["agent_metrics"].items()) == list(agent.items())
    assert list(result["key_metrics"].items()) == list(key.items())


def test_arrival_order_across_tasks_does_not_matter() -> None:
    shuffled = NO_ANSWER_3X3[3:6] + NO_ANSWER_3X3[6:] + NO_ANSWER_3X3[:3]
    assert aggregate_metrics(shuffled, profile=False)["agent_metrics"] == NO_ANSWER_3X3_AGENT
    assert aggregate_metrics(shuffled) == aggregate_metrics(NO_ANSWER_3X3)


def test_group_level_metrics_per_task() -> None:
    groups = aggregate_metrics(TWO_BY_TWO)["group_level_metrics"]
    sample = {"agent_ref": {"name": "agent"}}
    assert groups == [
        {
            "_ng_task_index": 0,
            "mean/reward": 1.0,
            "max/reward": 1.0,
            "min/reward": 1.0,
            "median/reward": 1.0,
            "std/reward": 0.0,
            "sample": sample,
            "num_rollouts": 2,
            "expected_num_rollouts": 2,
            "missing_num_rollouts": 0,
            "reward_profile_completion_pct": 100.0,
            "rollout_infos": [
                {"rollout_id": "0:0", "_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0},
                {"rollout_id": "0:1", "_ng_task_index": 0, "_ng_rollout_index": 1, "reward": 1.0},
            ],
        },
        {
            "_ng_task_index": 1,
            "mean/reward": 0.5,
            "max/reward": 1.0,
            "min/reward": 0.0,
            "median/reward": 0.5,
            "std/reward": math.sqrt(0.5),
            "sample": sample,
            "num_rollouts": 2,
            "expected_num_rollouts": 2,
            "missing_num_rollouts": 0,
            "reward_profile_completion_pct": 100.0,
            "rollout_infos": [
                {"rollout_id": "1:0", "_ng_task_index": 1, "_ng_rollout_index": 0, "reward": 0.0},
                {"rollout_id": "1:1", "_ng_task_index": 1, "_ng_rollout_index": 1, "reward": 1.0},
            ],
        },
    ]
    assert aggregate_metrics(TWO_BY_TWO, include_groups=False)["group_level_metrics"] == []
    # Streaming (choicebox grade) keeps no rows, so it has no per-task statistics.
    assert aggregate_metrics(TWO_BY_TWO, profile=False)["group_level_metrics"] == []


def test_masked_rows_are_coverage_not_scores() -> None:
    """Gym 0.7.0's semantics: a masked row's reward is no measurement. One masked row of five:
    mean/reward over the other four, and coverage/* in agent_metrics and key_metrics."""
    rows = [*TWO_BY_TWO, {**_rollout(2, 0, 1.0, "A"), "mask_sample": True}]
    for profile in (True, False):
        result = aggregate_metrics(rows, profile=profile)
        agent, key = result["agent_metrics"], result["key_metrics"]
        assert agent["mean/reward"] == 0.75
        coverage = {
            "coverage/measured_rollouts": 4,
            "coverage/masked_rollouts": 1,
            "coverage/measured_tasks": 2,
            "coverage/fully_masked_tasks": 1,
        }
        assert {k: v for k, v in agent.items() if k.startswith("coverage/")} == coverage
        assert {k: v for k, v in key.items() if k.startswith("coverage/")} == coverage
        # The masked task is in no score: pass@1 is over tasks 0 and 1 only.
        assert agent["pass@1[avg-of-1]/accuracy"] == 50.0
    assert aggregate_metrics(rows)["agent_metrics"]["num_repeats"] == 2
    everything_masked = [{**row, "mask_sample": True} for row in TWO_BY_TWO]
    masked_only = aggregate_metrics(everything_masked)
    assert masked_only["agent_metrics"] == masked_only["key_metrics"] == {
        "coverage/measured_rollouts": 0,
        "coverage/masked_rollouts": 4,
        "coverage/measured_tasks": 0,
        "coverage/fully_masked_tasks": 2,
    }
    assert masked_only["group_level_metrics"] == masked_only["repeat_level_metrics"] == []
    # The failure analysis names a masked row by its failure_kind.
    named = [{**TWO_BY_TWO[0], "mask_sample": True, "failure_kind": "judge_failed"}]
    assert failure_analysis(named)["categories"] == {"judge_failed": {"count": 1, "rate": 1.0}}


def test_duplicate_rollouts_and_bad_rollout_indices_are_errors() -> None:
    with pytest.raises(MetricsError, match=r"row 1: rollout 0 of task 0 was already given by row 0"):
        aggregate_metrics([TWO_BY_TWO[0], TWO_BY_TWO[0]])
    with pytest.raises(MetricsError, match="_ng_rollout_index must be an int"):
        aggregate_metrics([{**TWO_BY_TWO[0], "_ng_rollout_index": "0"}])
    # Without rollout indices the rows of a task are numbered in arrival order.
    unnumbered = [{k: v for k, v in row.items() if k != "_ng_rollout_index"} for row in TWO_BY_TWO]
    assert aggregate_metrics(unnumbered) == aggregate_metrics(TWO_BY_TWO)


def test_streaming_accumulator_with_task_keys_and_components() -> None:
    acc = MetricsAccumulator(component_names=("correctness", "format"))
    rows: list[tuple[str, dict[str, Any]]] = [
        ("q2", {"reward": 1.0, "extracted_answer": "A", "correctness": 1.0, "format": True}),
        ("q1", {"reward": 0.0, "extracted_answer": None, "correctness": 0.0, "format": False}),
        ("q1", {"reward": 1.0, "extracted_answer": "B", "correctness": 1.0}),
        ("q2", {"reward": 1.0, "extracted_answer": "A", "correctness": 1.0, "format": "n/a"}),
    ]
    for task_key, row in rows:
        acc.add(row, task_key=task_key)
    assert (acc.n_rows, acc.n_tasks) == (4, 2)
    result = acc.result()
    agent = result["agent_metrics"]
    assert agent["mean/reward"] == 0.75
    assert agent["mean/correctness"] == 0.75
    assert agent["mean/format"] == 0.5  # two numeric values; the string is skipped
    assert agent["pass@2/accuracy"] == 100.0
    assert agent["pass@1/no_answer"] == 25.0
    assert agent["majority@2/accuracy"] == 100.0
    assert list(agent)[:3] == ["mean/reward", "mean/correctness", "mean/format"]
    assert "mean/correctness" not in result["key_metrics"]
    assert result["group_level_metrics"] == []
    with pytest.raises(MetricsError, match="takes rows"):
        MetricsAccumulator(profile=True).add_record(read_row(rows[0][1], task="q2"))
    with pytest.raises(MetricsError, match="component_names"):
        MetricsAccumulator(profile=True, component_names=("correctness",))


def test_majority_ties_average_and_all_null_scores_zero() -> None:
    rows = [
        _rollout(0, 0, 1.0, "A"),
        _rollout(0, 1, 0.0, "B"),  # a 1-1 tie between A (right) and B (wrong): 0.5
        _rollout(1, 0, 0.0, None),
        _rollout(1, 1, 0.0, None),  # no answer at all: 0
    ]
    agent = aggregate_metrics(rows)["agent_metrics"]
    assert agent["majority@2/accuracy"] == 25.0
    assert agent["majority@2/no_answer"] == 0.0
    assert agent["pass@2/no_answer"] == 50.0


def test_continuous_rewards_use_max_of_first_k() -> None:
    rows = [_rollout(0, i, r, "A") for i, r in enumerate([0.25, 0.75, 0.5])]
    agent = aggregate_metrics(rows)["agent_metrics"]
    assert agent["pass@1/accuracy"] == 25.0
    assert agent["pass@2/accuracy"] == 75.0
    assert agent["pass@1[avg-of-3]/accuracy"] == 50.0


def test_uneven_rollout_counts() -> None:
    rows = [_rollout(0, 0, 1.0, "A"), _rollout(0, 1, 0.0, "B"), _rollout(1, 0, 0.0, "C")]
    agent = aggregate_metrics(rows)["agent_metrics"]
    # pass@2 only counts task 0; avg-of-2 reuses task 1's single rollout.
    assert agent["pass@2/accuracy"] == 100.0
    assert agent["pass@1[avg-of-2]/accuracy"] == 25.0
    assert agent["per_sample_aggregate"]["accuracy"] == [50.0, 0.0]


@given(st.lists(st.booleans(), min_size=1, max_size=8))
@settings(max_examples=60, deadline=None)
def test_single_task_pass_at_k_agrees_with_estimator(outcomes: list[bool]) -> None:
    rows = [_rollout(0, i, float(ok), "A" if ok else "B") for i, ok in enumerate(outcomes)]
    agent = aggregate_metrics(rows)["agent_metrics"]
    n, c = len(outcomes), sum(outcomes)
    for k in range(1, n + 1):
        assert agent[f"pass@{k}/accuracy"] == 100.0 * pass_at_k(n, c, k)


def test_aggregate_edge_cases_and_errors() -> None:
    assert aggregate_metrics([]) == {
        "group_level_metrics": [],
        "agent_metrics": {},
        "key_metrics": {},
        "perf_summary": None,
        "repeat_level_metrics": [],
    }
    with pytest.raises(MetricsError, match="row 0: row has no _ng_task_index"):
        aggregate_metrics([{"reward": 1.0, "extracted_answer": "A"}], profile=False)
    # Gym's default task is 0.
    (lone,) = aggregate_metrics([{"reward": 1.0, "extracted_answer": "A"}])["group_level_metrics"]
    assert lone["_ng_task_index"] == 0
    with pytest.raises(MetricsError, match="row 1: row has no numeric 'reward'"):
        aggregate_metrics([_rollout(0, 0, 1.0, "A"), {"_ng_task_index": 0}])
    with pytest.raises(MetricsError, match="must be an int"):
        aggregate_metrics([{"_ng_task_index": "0", "reward": 1.0}])
    with pytest.raises(MetricsError, match="component"):
        MetricsAccumulator(component_names="correctness")
    by_uuid = aggregate_metrics(
        [
            {"uuid": "x", "reward": 1.0, "extracted_answer": "A"},
            {"uuid": "y", "reward": 0.0, "extracted_answer": "B"},
        ],
        task_key_field="uuid",
    )
    assert by_uuid["agent_metrics"]["pass@1/accuracy"] == 50.0
    assert [g["task_key"] for g in by_uuid["group_level_metrics"]] == ["x", "y"]
    assert by_uuid["group_level_metrics"][0]["rollout_infos"][0]["rollout_id"] == "x:0"


# ------------------------------------------------------------------------- failure analysis


def test_failure_categories_and_rates() -> None:
    rows: list[dict[str, Any]] = [
        {"reward": 1.0, "extracted_answer": "A"},
        {"reward": 0.0, "extracted_answer": "B", "failure": "wrong_answer"},
        {"reward": 0.0, "extracted_answer": None, "failure": "refusal", "uuid": "u-3"},
        {"reward": 0.0, "extracted_answer": None},  # derived: no_answer
        {"reward": 0.0, "extracted_answer": "C"},  # derived: wrong_answer
        {"reward": 1.0, "error": "boom"},  # an error key fails even a rewarded row
        {"reward": 0.0, "response": {"error": "Read timeout after 60s"}},
        {"reward": 0.0, "response": {"error": "HTTP 500"}},
        {"reward": 0.0, "infra_error": True},
        {"reward": 0.0, "scoring_details": {"error_category": "solve_timeout"}},
        {"extracted_answer": "A"},  # no reward at all is not a success
    ]
    report = failure_analysis(rows)
    assert report["total_failures"] == 10
    assert report["failure_rate"] == 10 / 11
    counts = {name: c["count"] for name, c in report["categories"].items()}
    assert counts == {
        "wrong_answer": 3,
        "infra_error": 2,
        "error": 1,
        "no_answer": 1,
        "refusal": 1,
        "solve_timeout": 1,
        "timeout": 1,
    }
    assert list(report["categories"])[:2] == ["wrong_answer", "infra_error"]  # most frequent first
    assert report["categories"]["refusal"]["rate"] == 1 / 11
    refusal = next(e for e in report["exemplars"] if e["category"] == "refusal")
    assert refusal == {
        "category": "refusal",
        "problem_idx": 2,
        "uuid": "u-3",
        "response_preview": "",
    }


def test_failure_exemplars_are_capped_and_previewed() -> None:
    rows = [
        {
            "_ng_task_index": 40 + i,
            "reward": 0.0,
            "extracted_answer": None,
            "output_text": "x" * 500,
        }
        for i in range(5)
    ]
    rows.append({"reward": 0.0, "extracted_answer": "B", "response_preview": "short", "text": "no"})
    rows.append({"reward": 0.5, "extracted_answer": "B", "text": "graded text"})
    report = failure_analysis(rows, max_exemplars=2)
    assert report["total_failures"] == 7
    assert report["failure_rate"] == 1.0
    no_answer = [e for e in report["exemplars"] if e["category"] == "no_answer"]
    assert [e["problem_idx"] for e in no_answer] == [40, 41]  # the task index, in stream order
    assert all(e["response_preview"] == "x" * 200 for e in no_answer)
    wrong = [e for e in report["exemplars"] if e["category"] == "wrong_answer"]
    assert [(e["problem_idx"], e["response_preview"]) for e in wrong] == [
        (5, "short"),
        (6, "graded text"),
    ]
    assert failure_analysis(rows, max_exemplars=0)["exemplars"] == []


def test_the_accumulator_streams_the_failure_analysis_like_the_function() -> None:
    rows = [
        {"reward": float(i % 3 == 0), "extracted_answer": None if i % 5 else "A"} for i in range(50)
    ]
    acc = MetricsAccumulator(tasks=False, max_exemplars=1)
    for row in rows:
        acc.add(row)
    assert acc.failure_analysis().to_json() == failure_analysis(rows, max_exemplars=1)
    empty = MetricsAccumulator().failure_analysis().to_json()
    assert empty == {"total_failures": 0, "failure_rate": 0.0, "categories": {}, "exemplars": []}
    with pytest.raises(MetricsError, match="max_exemplars"):
        MetricsAccumulator(max_exemplars=-1)


def test_tasks_kept_compactly_give_the_same_metrics_as_tasks_kept_in_lists() -> None:
    """A task starts packed (0/1 rewards, one-letter answers) and switches to lists on the first
    row that does not fit; the metrics must not depend on which form held the rows."""

    def rows(first_reward: float | int) -> list[dict[str, Any]]:
        return [
            {"_ng_task_index": 0, "reward": first_reward, "extracted_answer": "A"},
            {"_ng_task_index": 0, "reward": 0.0, "extracted_answer": None},
            {"_ng_task_index": 0, "reward": 0.5, "extracted_answer": "B"},  # leaves the packed form
            {"_ng_task_index": 0, "reward": 1.0, "extracted_answer": "AB"},
            {"_ng_task_index": 1, "reward": 1.0, "extracted_answer": "C"},
            {"_ng_task_index": 1, "reward": 0.0, "extracted_answer": "D"},
            {"_ng_task_index": 1, "reward": 1.0, "extracted_answer": "C"},
            {"_ng_task_index": 1, "reward": 1.0, "extracted_answer": None},
        ]

    packed_first = aggregate_metrics(rows(1.0))["agent_metrics"]
    lists_only = aggregate_metrics(rows(1))["agent_metrics"]  # an int reward is never packed
    assert packed_first == lists_only
    assert packed_first["mean/reward"] == 5.5 / 8


# ----------------------------------------------------------------------- one accumulator


def test_error_rows_are_counted_but_not_graded() -> None:
    """A row with an ``error`` and no reward (what ``choicebox grade`` writes for a row it could
    not grade) is left out of the rewards, wherever the rows are counted."""
    rows = [*TWO_BY_TWO, {"error": "line 9: invalid JSON", "line": 9}]
    assert aggregate_metrics(rows) == aggregate_metrics(TWO_BY_TWO)
    acc = MetricsAccumulator(by=("subject",))
    acc.add_rows(rows)
    assert (acc.n_rows, acc.n_graded, acc.n_errors) == (5, 4, 1)
    report = acc.failure_analysis().to_json()
    assert report["categories"]["error"] == {"count": 1, "rate": 0.2}
    error = next(e for e in report["exemplars"] if e["category"] == "error")
    assert error == {
        "category": "error",
        "problem_idx": 4,
        "uuid": None,
        "response_preview": "line 9: invalid JSON",
    }
    # Without an error, a row without a reward is still refused.
    with pytest.raises(MetricsError, match="row 1: row has no numeric 'reward'"):
        aggregate_metrics([TWO_BY_TWO[0], {"_ng_task_index": 0, "reward": "high"}])


def test_a_verdict_row_is_judged_by_its_verdict() -> None:
    """Rows with choicebox's ``grading_failure`` (or ``failure_kind``, in files written before
    it) fail the way their verdict says, and an ``error`` field they carried in from their input
    does not make them error rows."""
    rows: list[dict[str, Any]] = [
        {"reward": 0.0, "extracted_answer": None, "grading_failure": "refusal", "timeout": True},
        {"reward": 0.0, "extracted_answer": "C", "grading_failure": "ambiguous"},
        {"reward": 1.0, "extracted_answer": "B", "grading_failure": None, "error": "late"},
        {"reward": 0.75, "extracted_answer": "B", "grading_failure": None},  # weighted: right
        {"reward": 0.0, "extracted_answer": None, "timeout": True},  # no verdict: Gym's fields
        {"reward": 0.0, "extracted_answer": "D", "failure_kind": "not_an_option"},  # older file
        # Gym's own failure_kind on a valid measurement does not hide the verdict.
        {"reward": 0.0, "extracted_answer": "C", "grading_failure": None, "failure_kind": None},
    ]
    report = failure_analysis(rows)
    counts = {name: kind["count"] for name, kind in report["categories"].items()}
    assert counts == {
        "ambiguous": 1,
        "not_an_option": 1,
        "refusal": 1,
        "timeout": 1,
        "wrong_answer": 2,
    }
    acc = MetricsAccumulator(tasks=False)
    acc.add_rows(rows)
    assert (acc.n_errors, acc.n_graded) == (0, 7)


def test_category_intervals_resample_the_rewards_in_arrival_order() -> None:
    """Past a few thousand distinct rewards the bootstrap resamples by index, so the order of
    the rewards matters: a category's interval is the one of its rewards as they arrived."""
    rng = np.random.default_rng(9)
    rewards = rng.random(5000).tolist()
    rows = [{"reward": r, "subject": "all"} for r in rewards]
    (stats,) = category_breakdown(rows, "subject", resamples=200)
    ci = bootstrap_ci(rewards, resamples=200)
    assert (stats.mean_reward, stats.ci_lower, stats.ci_upper) == (
        ci.value,
        ci.ci_lower,
        ci.ci_upper,
    )


def test_the_reward_profile_reads_each_value_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tasks that each have a column of their own: every task's statistics used to read every
    column of the frame (2,000 such rows of a 78 KB /aggregate_metrics body took 9.5 s)."""
    read: list[int] = []
    column = _profile._Column

    def counted(present: Any, rows: int) -> Any:
        read.append(len(present))
        return column(present, rows)

    monkeypatch.setattr(_profile, "_Column", counted)
    tasks = 300
    rows = [
        {"reward": 1.0, "uuid": f"t{i}", f"c{i}": 1, "_ng_rollout_index": i % 3}
        for i in range(tasks)
    ]
    metrics = MetricsAccumulator(profile=True)
    metrics.add_rows(rows, task_key_field="uuid")
    metrics.document(accuracy_ci=False)
    # Each row's two numbers, once per task group and once over all rows (and never a column
    # a group lacks).
    assert len(read) <= 4 * tasks + 10
    assert all(read)
