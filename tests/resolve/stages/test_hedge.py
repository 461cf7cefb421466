"""The ``hedge`` stage of the ``conclusion`` policy (``choicebox.resolve._stages``): a concluding
hedge between letters ("A or B") is no commitment (``ambiguous``); an earlier hedge narrowed by a
later letter is not this stage's to decide.

Each case is read by ``robust`` as shipped, and by ``robust`` with this one stage taken out of its
``stages:`` list, every other rule as shipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from rule_files import ROBUST, TEN, robust_without

# (output, its letter, its failure) with every stage, graded with gold B; the verdict differs without it.
CASE = ("The answer is (A) or (B).", None, "ambiguous")


def test_hedge_decides_its_case(tmp_path: Path) -> None:
    output, letter, failure = CASE
    verdict = ROBUST.grade(output, options=TEN, expected="B")
    assert (verdict.extracted_answer, verdict.failure) == (letter, failure)
    assert verdict.detail == "answer statement: a hedge between A, B"
    other = robust_without(tmp_path, "hedge").grade(output, options=TEN, expected="B")
    assert (other.extracted_answer, other.failure, other.detail) != (letter, failure, verdict.detail)
    assert other.extracted_answer is None


@pytest.mark.parametrize(
    "output",
    [
        "The answer is (C). Thinking more, the answer is (A) or (B).",
        "\\boxed{A} or \\boxed{B}",
        "I'll go with A or B.",
        "Answer: A/B",
    ],
)
def test_a_concluding_hedge_in_any_statement_is_ambiguous(tmp_path: Path, output: str) -> None:
    verdict = ROBUST.grade(output, options=TEN)
    assert (verdict.extracted_answer, verdict.failure) == (None, "ambiguous")
    assert "a hedge between" in verdict.detail
    assert "a hedge between" not in robust_without(tmp_path, "hedge").grade(output, options=TEN).detail


def test_a_hedge_narrowed_by_a_later_letter_is_that_letter(tmp_path: Path) -> None:
    output = "Both fit: the answer is (B) or (F). Checking units, the answer is (F)."
    assert ROBUST.read(output, options=TEN) == "F"
    assert robust_without(tmp_path, "hedge").read(output, options=TEN) == "F"
