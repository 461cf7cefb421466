"""Inputs for comparing choicebox's ``/aggregate_metrics`` with NeMo Gym 0.7.0's.

Deterministic (seeded) lists of verify responses in the shapes Gym's collection posts: indices,
``reward``, ``extracted_answer``, other numeric fields, ``response.usage``, masked rows. Used by
``tests/serve/test_gym_metrics.py`` and by ``record.py``, which records Gym's replies to them.
"""

from __future__ import annotations

import random
from typing import Any

import choicebox


def _usage(prompt: int, output: int) -> dict[str, Any]:
    return {
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + output,
        }
    }


def _row(task: int, rollout: int, reward: float, answer: str | None, **extra: Any) -> dict[str, Any]:
    return {
        "_ng_task_index": task,
        "_ng_rollout_index": rollout,
        "reward": reward,
        "extracted_answer": answer,
        **extra,
    }


def _choicebox_responses(rng: random.Random) -> list[dict[str, Any]]:
    """What choicebox's /verify returns, stripped as Gym's collection strips it (``response``
    reduced to its usage), for 6 tasks x 4 rollouts of outputs of several kinds."""
    sample = choicebox.MCQASample.from_question(
        "Which gas makes up most of Earth's atmosphere?",
        ["Oxygen", "Nitrogen", "Argon", "Carbon dioxide"],
        "B",
    )
    outputs = [
        r"The answer is \boxed{B}.",
        r"\boxed{A}",
        r"\boxed{B} or \boxed{C}",
        "I think nitrogen.",
        r"\boxed{\text{B}}",
        "",
    ]
    rows = []
    for task in range(6):
        for rollout in range(4):
            text = rng.choice(outputs)
            verdict = choicebox.grade(sample, text).to_wire({"uuid": f"q{task}"})
            verdict.update(mask_sample=False, failure_kind=None, failure_reason=None)
            verdict.update(_ng_task_index=task, _ng_rollout_index=rollout)
            verdict["response"] = _usage(rng.randint(80, 400), len(text) // 3 + 1)
            rows.append(verdict)
    rows[5]["mask_sample"] = True
    rows[5]["failure_kind"] = "choicebox:invalid_row"
    return rows


def metrics_cases() -> list[dict[str, Any]]:
    """``[{"name", "verify_responses"}]``: every shape the comparison should cover."""
    rng = random.Random(20260801)
    cases: list[dict[str, Any]] = []

    def case(name: str, rows: list[dict[str, Any]]) -> None:
        cases.append({"name": name, "verify_responses": rows})

    case("empty", [])
    case("one row, no indices", [{"reward": 1.0, "extracted_answer": "A"}])
    case(
        "gym test 2x2",
        [_row(0, 0, 1.0, "A"), _row(0, 1, 1.0, "A"), _row(1, 0, 0.0, "B"), _row(1, 1, 1.0, "C")],
    )
    rows = [
        _row(t, r, float((t + r) % 2), "A" if r else None, response=_usage(10 + t, 3 * r))
        for t in range(3)
        for r in range(3)
    ]
    rows[4]["mask_sample"] = True
    rows[4]["failure_kind"] = "verifier_error"
    case("3x3 with usage, one masked", rows)
    case("all masked", [{**row, "mask_sample": True} for row in rows])
    case(
        "one rollout per task (std is 0, not NaN)",
        [_row(t, 0, float(t % 2), "B") for t in range(5)],
    )
    case(
        "integer rewards, a missing repeat",
        [
            _row(t, r, rng.choice([0, 1]), "A")
            for t in range(4)
            for r in range(3)
            if (t, r) != (2, 1)
        ],
    )
    case(
        "fractional rewards and fields, 7 tasks x 11 rollouts",
        [
            _row(
                t,
                r,
                rng.choice([0.1, 0.7, 0.35, 0.2, 0.9]),
                rng.choice(["A", "B", None]),
                correctness=rng.random(),
                flag=rng.random() < 0.5,
                response=_usage(rng.randint(50, 900), rng.randint(1, 400)),
            )
            for t in range(7)
            for r in range(11)
        ],
    )
    case(
        "a field some rows lack, 60 tasks x 4 rollouts",
        [
            _row(
                t,
                r,
                float(rng.random() < 0.4),
                rng.choice("ABCD"),
                **({"extra": rng.random()} if rng.random() < 0.5 else {}),
                response=_usage(rng.randint(50, 900), rng.randint(1, 400)),
            )
            for t in range(60)
            for r in range(4)
        ],
    )
    case(
        "observability records",
        [
            _row(
                t,
                r,
                float(r == 0),
                "C",
                ng_perf={
                    "prompt_tokens": 100 + t,
                    "completion_tokens": 10 * (r + 1),
                    "num_turns": 1 + r,
                    "total_latency_ms": 250.0 + 17 * t + r,
                    "token_observability_coverage": 1.0,
                },
            )
            for t in range(3)
            for r in range(2)
        ],
    )
    case("choicebox verify responses", _choicebox_responses(rng))
    return cases
