"""The ``no_option`` stage of the ``conclusion`` policy (``choicebox.resolve._stages``): a response
that concludes that no option is right ("the answer is none of the options") commits to none.

Each case is read by ``robust`` as shipped, and by ``robust`` with this one stage taken out of its
``stages:`` list, every other rule as shipped."""

from __future__ import annotations

from pathlib import Path

from rule_files import ROBUST, TEN, robust_without

# (output, its letter, its failure) with every stage, graded with gold B; the verdict differs without it.
CASE = ("The answer is (C). On reflection, the answer is none of the options.", None, "no_answer")


def test_no_option_decides_its_case(tmp_path: Path) -> None:
    output, letter, failure = CASE
    verdict = ROBUST.grade(output, options=TEN, expected="B")
    assert (verdict.extracted_answer, verdict.failure) == (letter, failure)
    assert verdict.detail == "the response concludes that no option is right"
    other = robust_without(tmp_path, "no_option").grade(output, options=TEN, expected="B")
    assert (other.extracted_answer, other.failure, other.detail) != (letter, failure, verdict.detail)
    # Without it the run stage reads "no option" next to a letter.
    assert (other.extracted_answer, other.failure) == (None, "conflicting")


def test_the_earlier_letter_is_superseded() -> None:
    verdict = ROBUST.grade(CASE[0], options=TEN)
    assert [(r.candidate.kind, r.outcome) for r in verdict.candidates] == [("commitment", "superseded"), ("no_option", "chosen")]


def test_no_option_alone_is_read_without_the_stage_too(tmp_path: Path) -> None:
    # Nothing names a letter: the policy reads "no option" before any stage runs.
    output = "The answer is none of the options."
    assert ROBUST.outcome(output, options=TEN) == (None, "no_answer")
    assert robust_without(tmp_path, "no_option").outcome(output, options=TEN) == (None, "no_answer")

