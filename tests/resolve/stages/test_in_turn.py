"""The ``in_turn`` stage of the ``conclusion`` policy (``choicebox.resolve._stages``): options
restated one a line, in their order, each called the answer, three or more, are a review of the
options (rules 2 and 6), not a chain of revisions ending at the last one; a correction cue between
two of them makes them revisions again, and answers that do not open their line with their option
are refinements.

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
        # in bold, each with its reason
        "**A) optA** is the answer: it is the first.\n**B) optB** is the answer: it is the second.\n"
        "**C) optC** is the answer: it is the third.",
        # starting past the first option, with blank lines between
        "D. optD is correct, as it fits the data given above.\n\nE. optE is correct, as it fits the "
        "data given above.\n\nF. optF is correct, as it fits the data given above.",
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
        # answers that do not open their line with their option: refinements, the last counts
        ("Rough estimate: the answer is (B). Refining with V2 = 0.6 V1: the answer is (C). "
         "Using the exact V2 = 0.5 V1: the answer is (D).", "D"),
        # options checked by asking, then the one affirmed
        ("A. optA is the correct answer? It names the capital of France.\nB. optB is the correct answer? "
         "It names the capital of Britain.\nC. optC is the correct answer. It names the capital of Italy.", "C"),
        # not in the options' order
        ("The answer is (C) because optC is large and well known in the world.\n"
         "The answer is (A) because optA is large and well known in the world.\n"
         "The answer is (B) because optB is large and well known in the world.", "B"),
    ],
)  # fmt: skip
def test_revisions_and_other_orders_are_not_a_review(output: str, letter: str) -> None:
    assert ROBUST.read(output, options=TEN) == letter
