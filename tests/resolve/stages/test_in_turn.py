"""The ``in_turn`` stage of the ``conclusion`` policy (``choicebox.resolve._stages``): options called
the answer one after another, in their order, three or more, are a review of the options (rules 2
and 6), not a chain of revisions ending at the last one; a correction cue between two of them makes
them revisions again.

Each case is read by ``robust`` as shipped, and by ``robust`` with this one stage taken out of its
``stages:`` list, every other rule as shipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from rule_files import ROBUST, TEN, robust_without

# (output, its letter, its failure) with every stage; the verdict differs without it.
CASE = (
    "A. optA is the correct answer. The optA is the unit of magnetic field.\n"
    "B. optB is the correct answer. The optB is the unit of magnetic flux.\n"
    "C. optC is the correct answer. The optC is the unit of inductance.",
    None,
    "conflicting",
)


def test_in_turn_decides_its_case(tmp_path: Path) -> None:
    output, letter, failure = CASE
    verdict = ROBUST.grade(output, options=TEN, expected="C")
    assert (verdict.extracted_answer, verdict.failure) == (letter, failure)
    assert "one after another (A, B, C)" in verdict.detail
    other = robust_without(tmp_path, "in_turn").grade(output, options=TEN, expected="C")
    assert other.extracted_answer == "C"  # without it, the last one revises the others


@pytest.mark.parametrize(
    "output",
    [
        # each with its reason, one a line, under an answer cue
        "The answer is (A) because optA is large and well known in the world.\n"
        "The answer is (B) because optB is large and well known in the world.\n"
        "The answer is (C) because optC is large and well known in the world.",
        # starting past the first option, in sentences
        "Option D is the correct answer, as optD fits the data given above. "
        "Option E is the correct answer, as optE fits the data given above. "
        "Option F is the correct answer, as optF fits the data given above.",
    ],
)
def test_options_called_the_answer_in_their_order_commit_to_none(output: str) -> None:
    assert ROBUST.outcome(output, options=TEN) == (None, "conflicting")


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        # a correction cue between them: revisions, the last one counts
        ("The answer is (B). Hmm, let me reconsider the whole question again carefully. The answer is (C). "
         "Wait, let me reconsider the whole question again carefully. The answer is (D).", "D"),
        # two in their order are no review: the later revises the earlier
        ("The answer is (A) because optA is large and well known in the world.\n"
         "On reflection the answer is (B) because optB is larger than optA.", "B"),
        # not in the options' order
        ("The answer is (C) because optC is large and well known in the world.\n"
         "The answer is (A) because optA is large and well known in the world.\n"
         "The answer is (B) because optB is large and well known in the world.", "B"),
    ],
)  # fmt: skip
def test_revisions_and_other_orders_are_not_a_review(output: str, letter: str) -> None:
    assert ROBUST.read(output, options=TEN) == letter
