"""The ``part_scoped`` stage of the ``conclusion`` policy (``choicebox.resolve._stages``): a
concluding answer scoped to one part of the question ("the answer to (a) is C") answers the question
only in part, and commits to none.

Each case is read by ``robust`` as shipped, and by ``robust`` with this one stage taken out of its
``stages:`` list, every other rule as shipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from rule_files import ROBUST, TEN, robust_with_stages, robust_without

# (output, its letter, its failure) with every stage, graded with gold B; the verdict differs without it.
CASE = ("The answer to (a) is (C).", None, "no_answer")


def test_part_scoped_decides_its_case(tmp_path: Path) -> None:
    output, letter, failure = CASE
    verdict = ROBUST.grade(output, options=TEN, expected="B")
    assert (verdict.extracted_answer, verdict.failure) == (letter, failure)
    assert verdict.detail == "an answer scoped to one part only"
    other = robust_without(tmp_path, "part_scoped").grade(output, options=TEN, expected="B")
    assert (other.extracted_answer, other.failure, other.detail) != (letter, failure, verdict.detail)
    assert other.extracted_answer == "C"


@pytest.mark.parametrize("output", ["The answer for part (b) is (C).", "The answer to question (ii) is (C)."])
def test_any_part_scoped_answer_alone_commits_to_none(tmp_path: Path, output: str) -> None:
    assert ROBUST.outcome(output, options=TEN) == (None, "no_answer")
    assert robust_without(tmp_path, "part_scoped").read(output, options=TEN) == "C"


def test_an_overall_answer_after_a_scoped_one_counts() -> None:
    assert ROBUST.read("The answer to (a) is (C). Overall, the answer is (C).", options=TEN) == "C"


def test_a_run_without_a_commitment_is_not_scoped_to_a_part(tmp_path: Path) -> None:
    verdict = robust_with_stages(tmp_path, ["part_scoped"]).grade("The answer is (A) or (B).", options=TEN)
    assert (verdict.extracted_answer, verdict.failure) == (None, "ambiguous")


@pytest.mark.parametrize(
    "output",
    [
        "So for part (a) the answer is E, for part (b) the answer is D, and for part (c) the answer is J.",
        "The answer to (a) is (E).\nThe answer to (b) is (D).",
    ],
)
def test_different_letters_one_per_part_conflict(output: str) -> None:
    # One letter per part and no overall answer: unreconciled letters (rule 2), said as such.
    verdict = ROBUST.grade(output, options=TEN)
    assert (verdict.extracted_answer, verdict.failure) == (None, "conflicting")


@pytest.mark.parametrize(
    "output",
    [
        "The answer to (a) is (C).\nThe answer to (b) is (C).",
        "For part (a), the answer is C. For part (b), the answer is C.",
        "So the answer to part (i) is (C), and the answer to part (ii) is (C).",
    ],
)
def test_the_same_letter_for_every_part_commits_to_it(output: str) -> None:
    # The option answers each part (its text combines them: "$4.15, surplus of 300 units"): the
    # same letter repeated is that letter (rule 2).
    verdict = ROBUST.grade(output, options=TEN)
    assert (verdict.extracted_answer, verdict.failure) == ("C", "wrong_answer")
    assert "the same answer for each part" in verdict.detail


def test_the_same_letter_for_the_parts_answered_before_a_cut_off_is_no_answer() -> None:
    output = "For part (a), the answer is (C). For part (b), the answer is (C). For part (c),"
    assert ROBUST.outcome(output, options=TEN) == (None, "no_answer")


def test_one_part_answered_twice_is_still_only_a_part() -> None:
    assert ROBUST.outcome("The answer to (a) is (C).\nThe answer to (a) is (C).", options=TEN) == (None, "no_answer")
