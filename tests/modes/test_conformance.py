"""Conformance with NeMo Gym's ``mcqa`` verifier, case by case (``fixtures/conformance.jsonl``).

Each case is a Gym verify request (options as single-key objects, ``grading_mode``,
``template_metadata``), the model's text, an optional server-config grading mode, and the letter
and reward the reference gives. A case with a ``deviation`` note is one where choicebox differs
on purpose (NeMo Gym behaviour spec §10): its wanted values are choicebox's, and ``reference``
records what the reference gives.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from choicebox import MCQASample, WireFormatError, grade

FIXTURE = Path(__file__).parents[1] / "fixtures" / "conformance.jsonl"
_CASE_KEYS = {
    "id", "behaviour", "output", "options", "expected_answer", "grading_mode",
    "config_grading_mode", "template_metadata", "want_extracted", "want_reward", "want_failure",
    "deviation", "reference", "want_row_error",
}  # fmt: skip
# The §10 rows choicebox deviates from on purpose; each needs at least one case.
DEVIATION_ROWS = {6, 7, 11, 12, 13, 17, 18, 21, 22, 23, 25, 27, 28, 29, 30, 31, 32, 33}


def _load() -> list[dict[str, Any]]:
    with FIXTURE.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


CASES = _load()


def _request(case: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "question": "Which of the options is right?",
        "options": case["options"],
        "expected_answer": case["expected_answer"],
    }
    if "grading_mode" in case:
        row["grading_mode"] = case["grading_mode"]
    if case["template_metadata"] is not None:
        row["template_metadata"] = case["template_metadata"]
    return row


def _response(text: str) -> dict[str, Any]:
    """A Responses object with one assistant message, as Gym's tests build it."""
    return {
        "id": "resp_conformance",
        "object": "response",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
    }


def test_the_fixture_is_well_formed() -> None:
    ids = Counter(case["id"] for case in CASES)
    assert [i for i, n in ids.items() if n > 1] == []
    assert len(CASES) >= 90
    for case in CASES:
        assert set(case) <= _CASE_KEYS, case["id"]
        assert case["behaviour"], case["id"]
        assert case["want_reward"] in (0.0, 1.0), case["id"]
        assert ("deviation" in case) == ("reference" in case), case["id"]
        assert (case["want_reward"] == 1.0) == (case["want_extracted"] == case["expected_answer"])


def test_every_deliberate_deviation_has_a_case() -> None:
    rows = {int(case["id"].split(".")[1]) for case in CASES if "deviation" in case}
    assert rows == DEVIATION_ROWS


def test_every_group_of_behaviours_is_covered() -> None:
    groups = Counter(case["id"].split(".")[0] for case in CASES)
    assert groups["head"] >= 5
    assert groups["template"] >= 10
    assert groups["config"] >= 3
    assert groups["md"] >= 20
    assert groups["strict"] >= 10
    assert groups["v070"] >= 16
    assert groups["deviation"] >= 18


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_conformance(case: dict[str, Any]) -> None:
    request = _request(case)
    if case.get("want_row_error"):
        with pytest.raises(WireFormatError):
            MCQASample.from_wire(request)
        return
    sample = MCQASample.from_wire(request)
    verdict = grade(sample, _response(case["output"]), mode=case["config_grading_mode"])
    note = f"{case['behaviour']} | {verdict.failure}: {verdict.detail}"
    assert verdict.extracted_answer == case["want_extracted"], note
    assert verdict.reward == case["want_reward"], note
    if "want_failure" in case:
        assert verdict.failure == case["want_failure"], note
    expected_mode = case["config_grading_mode"] or case.get(
        "grading_mode", "strict_single_letter_boxed"
    )
    assert verdict.mode == expected_mode
    # The same case through the plain-text path gives the same verdict.
    assert grade(sample, case["output"], mode=case["config_grading_mode"]) == verdict


@pytest.mark.parametrize(
    "case",
    [case for case in CASES if "deviation" in case and not case.get("want_row_error")],
    ids=lambda case: case["id"],
)
def test_a_deviation_really_differs_from_the_reference(case: dict[str, Any]) -> None:
    reference = case["reference"]
    if "extracted" in reference:
        differs = (reference["extracted"], reference["reward"]) != (
            case["want_extracted"],
            case["want_reward"],
        )
        assert differs, "a deviation whose wanted result equals the reference's"
