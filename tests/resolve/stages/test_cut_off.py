"""The ``cut_off`` stage of the ``conclusion`` policy (``choicebox.resolve._stages``): a response cut
off while answering the other parts of a multi-part question, or while reviewing the options after
an evaluation, commits to none.

Each case is read by ``robust`` as shipped, and by ``robust`` with this one stage taken out of its
``stages:`` list, every other rule as shipped."""

from __future__ import annotations

from pathlib import Path

from rule_files import ROBUST, TEN, robust_without

# (output, its letter, its failure) with every stage, graded with gold B; the verdict differs without it.
CASE = ("(C) is the correct answer. Now checking the others: (A) fails and (B) gives", None, "no_answer")

MULTIPART_QUESTION = "Find (a) the current and (b) the voltage.\nA: 1 A, 2 V\nB: 2 A, 4 V\nC: 3 A, 6 V"
MULTIPART = {"A": "1 A, 2 V", "B": "2 A, 4 V", "C": "3 A, 6 V", "D": "4 A, 8 V"}
ONE_PART = (
    "The current is 2 A, so the answer is (B). Now for the voltage we need to multiply the current by "
    "the resistance of the circuit, which is given in the figure as the sum of the two resistors in "
    "series, each of which is"
)


def test_cut_off_decides_its_case(tmp_path: Path) -> None:
    output, letter, failure = CASE
    verdict = ROBUST.grade(output, options=TEN, expected="B")
    assert (verdict.extracted_answer, verdict.failure) == (letter, failure)
    assert verdict.detail == "cut off while reviewing the options"
    other = robust_without(tmp_path, "cut_off").grade(output, options=TEN, expected="B")
    assert (other.extracted_answer, other.failure, other.detail) != (letter, failure, verdict.detail)
    assert other.extracted_answer == "C"


def test_a_review_that_is_finished_commits() -> None:
    assert ROBUST.read(CASE[0] + " 5.", options=TEN) == "C"


def test_options_named_in_words_after_the_evaluation_are_a_review_too() -> None:
    output = "(C) is the correct answer. Now checking the others: Option A fails and Option B gives"
    verdict = ROBUST.grade(output, options=TEN)
    assert (verdict.extracted_answer, verdict.detail) == (None, "cut off while reviewing the options")
    assert ROBUST.read(output + " 5.", options=TEN) == "C"


def test_cut_off_while_answering_the_other_parts_commits_to_none(tmp_path: Path) -> None:
    verdict = ROBUST.grade(ONE_PART, options=MULTIPART, question=MULTIPART_QUESTION)
    assert (verdict.extracted_answer, verdict.failure) == (None, "no_answer")
    assert verdict.detail == "answers one part of a multi-part question, then is cut off"
    assert robust_without(tmp_path, "cut_off").read(ONE_PART, options=MULTIPART, question=MULTIPART_QUESTION) == "B"


def test_a_question_of_one_part_cut_off_after_its_answer_commits() -> None:
    single = {"A": "1 A", "B": "2 A", "C": "3 A", "D": "4 A"}
    assert ROBUST.read(ONE_PART, options=single, question="Find the current.") == "B"
    assert ROBUST.read(ONE_PART + " 1 ohm.", options=MULTIPART, question=MULTIPART_QUESTION) == "B"


def test_the_options_restated_after_the_answer_are_no_review() -> None:
    # "Here are the options again": each line its letter and own text, the last without a full
    # stop. A copy of the question is no review cut off (rule 6); a line that is not its option's
    # text makes the listing a review again.
    restated = "So the answer is A.\n\nHere are the options again for reference:\n" + "\n".join(
        f"({letter}) {text}" for letter, text in TEN.items()
    )
    assert ROBUST.read(restated, options=TEN) == "A"
    reviewed = restated.replace("(C) optC", "(C) optC fails because the units")
    assert ROBUST.grade(reviewed, options=TEN).detail == "cut off while reviewing the options"


def test_a_listing_that_the_answer_opens_is_a_review_cut_off() -> None:
    # "Answer: (A) optA\n(B) optB\n...": the options listed, the first behind a cue. Only a listing of
    # every option after the statement is a copy of the question; this one commits to none.
    listing = "Answer: " + "\n".join(f"({letter}) {text}" for letter, text in TEN.items())
    assert ROBUST.grade(listing, options=TEN).detail == "cut off while reviewing the options"
