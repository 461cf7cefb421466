"""The ``final_marker`` stage of the ``conclusion`` policy (``choicebox.resolve._stages``): an
explicit final marker ("Final answer:") wins over everything before it, except the final answers
joined to it, which are a run for the ``run`` stage to read.

Each case is read by ``robust`` as shipped, and by ``robust`` with this one stage taken out of its
``stages:`` list, every other rule as shipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from rule_files import ROBUST, TEN, robust_without

# (output, its letter, its failure) with every stage, graded with gold B; the verdict differs without it.
CASE = ("The answer is (D).\nFinal Answer: (B)", "B", None)


def test_final_marker_decides_its_case(tmp_path: Path) -> None:
    output, letter, failure = CASE
    verdict = ROBUST.grade(output, options=TEN, expected="B")
    assert (verdict.extracted_answer, verdict.failure) == (letter, failure)
    other = robust_without(tmp_path, "final_marker").grade(output, options=TEN, expected="B")
    assert (other.extracted_answer, other.failure, other.detail) != (letter, failure, verdict.detail)
    assert (other.extracted_answer, other.failure) == (None, "conflicting")  # a run of D and B


@pytest.mark.parametrize(
    "output",
    [
        "The answer is (A). Hmm.\n**Final Answer:** (B)",
        "The answer is (A)\nThe final answer is (B)",
        "The answer is (D).\nLet me double-check: 3 x 4 = 12, not 14.\nFinal Answer: The answer is (B)",
    ],
)
def test_a_final_answer_supersedes_what_came_before(tmp_path: Path, output: str) -> None:
    verdict = ROBUST.grade(output, options=TEN)
    assert verdict.extracted_answer == "B"
    assert [r.outcome for r in verdict.candidates if r.candidate.letters != ("B",)] == ["superseded"]
    assert "stage final_marker" in next(r.note for r in verdict.candidates if r.outcome == "superseded")


def test_without_it_a_final_answer_after_a_bare_one_is_a_run(tmp_path: Path) -> None:
    without = robust_without(tmp_path, "final_marker")
    assert without.outcome("The answer is (A)\nThe final answer is (B)", options=TEN) == (None, "conflicting")


def test_a_run_of_final_answers_is_a_run_with_the_stage_too(tmp_path: Path) -> None:
    output = "Final answer: A\nFinal answer: B"
    assert ROBUST.outcome(output, options=TEN) == (None, "conflicting")
    assert robust_without(tmp_path, "final_marker").outcome(output, options=TEN) == (None, "conflicting")


@pytest.mark.parametrize("marker", ["Corrected answer:", "Revised answer:", "Updated answer:"])
def test_a_corrected_answer_is_a_final_marker(marker: str) -> None:
    # A two-part question whose first answer the response corrects: the marked answer is final.
    output = (
        "Statement 1 is False. Statement 2 is False as well. Answer: (A) False, False.\n\n"
        f"Wait, statement 2 assumes a basis, so it is True.\n\n{marker} (C) False, True."
    )
    options = {"A": "False, False", "B": "True, True", "C": "False, True", "D": "True, False"}
    assert ROBUST.read(output, options=options) == "C"
