"""Statistics of finite values are finite: where Gym's arithmetic overflows (two rewards of 1e308
sum to inf, so its mean and median are inf, null in JSON), choicebox's ``/aggregate_metrics``
gives the finite figure, and everywhere else Gym's own (``tests/serve/test_gym_metrics.py``)."""

from __future__ import annotations

import math

import pytest

from choicebox.metrics import aggregate_metrics


def _rows(rewards: list[float]) -> list[dict[str, object]]:
    return [
        {"reward": reward, "_ng_task_index": 0, "_ng_rollout_index": i, "response": {"output": []}}
        for i, reward in enumerate(rewards)
    ]


@pytest.mark.filterwarnings("error")  # no numpy overflow warning reaches the caller
@pytest.mark.parametrize(
    ("rewards", "mean", "median", "std"),
    [
        ([1e308, 1e308], 1e308, 1e308, 0.0),
        ([1e308, 1e308, -1e308], 1e308 / 3, 1e308, math.sqrt(4 / 3) * 1e308),
        ([1.0, 2.0, 4.0], 7 / 3, 2.0, math.sqrt(7 / 3)),  # no overflow: the usual figures
    ],
)
def test_the_statistics_of_finite_rewards_are_finite(rewards: list[float], mean: float, median: float, std: float) -> None:
    metrics = aggregate_metrics(_rows(rewards))["agent_metrics"]
    assert metrics["mean/reward"] == pytest.approx(mean, rel=1e-12)
    assert metrics["median/reward"] == pytest.approx(median, rel=1e-12)
    assert metrics["std/reward"] == pytest.approx(std, rel=1e-12)
