"""choicebox's ``/aggregate_metrics`` against NeMo Gym 0.7.0's on the same verify responses.

The inputs are ``gym_side/cases.py``'s; Gym's replies to them are recorded in
``fixtures/gym_metrics_expected.json`` by ``gym_side/record.py``, which runs Gym's own mcqa
server. Every key must be there, in Gym's order, with Gym's value bit for bit, except the bounds
of t intervals (``ci_low_95``/``ci_high_95``): Gym takes the t quantile from scipy, choicebox
computes it (``metrics/_tdist.py``), and the two agree to about 1e-14 relative.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from choicebox.metrics import aggregate_metrics
from choicebox.metrics._gym import _EXACT_RUNS, _spread_across_runs, py_sum
from choicebox.metrics._tdist import t_interval, t_quantile
from gym_side.cases import metrics_cases
from gym_side.compare import assert_same_as_gym
from gym_side.env import gym_venv, run_gym_python
from gym_side.record import FIXTURE, inputs_digest

HERE = Path(__file__).parents[1]  # the tests folder
CASES = metrics_cases()
RECORDED = json.loads(FIXTURE.read_text(encoding="utf-8"))


def _ours(case: dict[str, Any]) -> Any:
    # Through JSON, as the server sends it.
    return json.loads(json.dumps(aggregate_metrics(case["verify_responses"])))


def test_the_recording_is_of_these_inputs() -> None:
    assert RECORDED["inputs_sha256"] == inputs_digest(CASES), (
        "gym_side/cases.py changed: re-record with python tests/gym_side/record.py"
    )


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c["name"] for c in CASES])
def test_aggregate_metrics_are_gyms(index: int) -> None:
    recorded = RECORDED["replies"][index]
    assert recorded["name"] == CASES[index]["name"]
    assert_same_as_gym(recorded["reply"], _ours(CASES[index]))


def test_the_cases_cover_every_part_of_gyms_reply() -> None:
    """The comparison is only as good as what the cases exercise."""
    replies = [entry["reply"] for entry in RECORDED["replies"]]
    agent_keys = {key for reply in replies for key in reply["agent_metrics"]}
    for expected in (
        "mean/reward", "max/reward", "min/reward", "median/reward", "std/reward",
        "mean/input_tokens", "mean/output_tokens", "mean/total_tokens", "mean/correctness",
        "num_repeats", "mean_across_repeats/mean/reward", "ci_low_95_across_repeats/mean/reward",
        "coverage/masked_rollouts", "coverage/fully_masked_tasks", "per_sample_aggregate",
    ):  # fmt: skip
        assert expected in agent_keys, expected
    group = next(g for reply in replies for g in reply["group_level_metrics"])
    for expected in (
        "rollout_infos", "sample", "expected_num_rollouts", "missing_num_rollouts",
        "reward_profile_completion_pct",
    ):  # fmt: skip
        assert expected in group
    repeat_keys = {key for reply in replies for r in reply["repeat_level_metrics"] for key in r}
    assert {"sample_count", "missing_count", "p25/reward", "sem/reward"} <= repeat_keys
    assert any(r["missing_count"] for reply in replies for r in reply["repeat_level_metrics"])
    assert any(reply["perf_summary"] for reply in replies)


# scipy.stats.t.ppf(p, df) as recorded from scipy 1.18.1 (Gym 0.7.0's venv).
SCIPY_T = [
    (0.975, 1, 12.706204736174694),
    (0.975, 2, 4.302652729749462),
    (0.975, 5, 2.5705818356363146),
    (0.975, 10, 2.228138851986274),
    (0.975, 30, 2.0422724563012378),
    (0.975, 120, 1.9799304050824402),
    (0.975, 999, 1.9623414611334493),
    (0.975, 100_000, 1.9599877075346095),
    (0.025, 4, -2.7764451051977943),
    (0.995, 7, 3.4994832973504924),
]


@pytest.mark.parametrize(("p", "df", "expected"), SCIPY_T)
def test_t_quantiles_agree_with_scipy(p: float, df: float, expected: float) -> None:
    assert math.isclose(t_quantile(p, df), expected, rel_tol=1e-14)


def test_t_interval_is_symmetric_and_rejects_nonsense() -> None:
    low, high = t_interval(0.95, 9, 0.5, 0.1)
    assert math.isclose(0.5 - low, high - 0.5, rel_tol=1e-15)
    with pytest.raises(ValueError, match="p must be"):
        t_quantile(1.0, 3)
    with pytest.raises(ValueError, match="df must be"):
        t_quantile(0.9, 0)


@pytest.mark.gym
def test_live_gym_gives_the_recorded_replies() -> None:
    """Gym itself, now: its replies to the cases are still the recorded ones (so the recording
    is current) and still choicebox's."""
    venv = gym_venv()
    replies = json.loads(run_gym_python(venv, HERE / "gym_side" / "aggregate.py", json.dumps(CASES)))
    for case, recorded, live in zip(CASES, RECORDED["replies"], replies, strict=True):
        assert live == recorded["reply"], case["name"]
        assert_same_as_gym(live, _ours(case))


def _spread_as_gym_computes_it(runs: list[float], k: int) -> float:
    """Gym's std across the first k runs: the whole computation again for each k."""
    first = runs[:k]
    mean = py_sum(first) / k
    return math.sqrt(py_sum([(x - mean) ** 2 for x in first]) / (k - 1))


def test_the_spread_across_many_runs_is_gym_s_exactly_then_to_1e_12_in_linear_time() -> None:
    # Gym's spread is quadratic in the runs of a task (16,000 rollouts of one task: 78 s); past
    # _EXACT_RUNS choicebox keeps running sums instead, within 1e-12 of Gym's figures.
    n = _EXACT_RUNS + 120
    runs = [((i * 7919) % 101) / 100 for i in range(n)]
    out = _spread_across_runs({"reward": runs}, ["reward"], n)
    keys = [key for key in out if key.endswith("std_dev_across_runs")]
    assert keys == [f"pass@1[avg-of-{k}]/reward/std_dev_across_runs" for k in range(2, n + 1)]
    for k in range(2, n + 1):
        expected = _spread_as_gym_computes_it(runs, k)
        got = out[f"pass@1[avg-of-{k}]/reward/std_dev_across_runs"]
        if k <= _EXACT_RUNS:
            assert got == expected, k  # bit for bit
        else:
            assert math.isclose(got, expected, rel_tol=1e-12), k
        assert out[f"pass@1[avg-of-{k}]/reward/std_err_across_runs"] == got / math.sqrt(k)
