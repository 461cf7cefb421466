"""The ``run`` stage of the ``conclusion`` policy (``choicebox.resolve._stages``): the final run
(the last statement and those joined to it by filler words) must agree. Different letters, a hedge
beside another letter, or "no option" beside a letter commit to none (``conflicting``); the same
letter repeated is that letter.

Each case is read by ``robust`` as shipped, and by ``robust`` with this one stage taken out of its
``stages:`` list, every other rule as shipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from rule_files import ROBUST, TEN, robust_without

# (output, its letter, its failure) with every stage, graded with gold B; the verdict differs without it.
CASE = ("The answer is (A)\nThe answer is (I)\nThe answer is (C)", None, "conflicting")


def test_run_decides_its_case(tmp_path: Path) -> None:
    output, letter, failure = CASE
    verdict = ROBUST.grade(output, options=TEN, expected="B")
    assert (verdict.extracted_answer, verdict.failure) == (letter, failure)
    other = robust_without(tmp_path, "run").grade(output, options=TEN, expected="B")
    assert (other.extracted_answer, other.failure, other.detail) != (letter, failure, verdict.detail)
    assert other.extracted_answer == "C"  # without it, the last of the run


@pytest.mark.parametrize(
    ("output", "without"),
    [
        ("Answer: C\n答案：D", "D"),  # a label repeated in another language, another letter
        ("The answer is (A) or (B).\nThe answer is (C).", "C"),  # a hedge beside another letter
        ("Adding the forces gives 12 N. The answer is (D).\nThe answer is (E).\nThe answer is (A).", "A"),
    ],
)
def test_a_run_that_does_not_agree_is_conflicting(tmp_path: Path, output: str, without: str) -> None:
    assert ROBUST.outcome(output, options=TEN) == (None, "conflicting")
    assert robust_without(tmp_path, "run").read(output, options=TEN) == without


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        ("The answer is (B)\nThe answer is (B)", "B"),
        ("Answer: C\nAntwort: C", "C"),
        ("The answer is (B)\nThe answer is (B)\nThe answer is (", "B"),
    ],
)
def test_a_run_of_one_letter_is_that_letter(output: str, letter: str) -> None:
    assert ROBUST.outcome(output, options=TEN) == (letter, None)


def test_answers_with_reasoning_between_are_no_run() -> None:
    output = "The answer is (C).\nWait, I made a mistake in the sign. The answer is (E)."
    assert ROBUST.read(output, options=TEN) == "E"


ORGANELLES = {"A": "Golgi apparatus", "B": "Lysosome", "C": "Peroxisome", "D": "Ribosome"}


def test_a_run_of_values_that_name_different_options_is_conflicting(tmp_path: Path) -> None:
    # Each value that states one option's content is read as that option's letter, by the same stages.
    run = "The answer is the Golgi apparatus.\nThe answer is the lysosome.\nThe answer is the peroxisome."
    assert ROBUST.outcome(run, options=ORGANELLES) == (None, "conflicting")
    assert robust_without(tmp_path, "run").read(run, options=ORGANELLES) == "C"  # the last, without the stage
    assert ROBUST.read("The answer is the lysosome.\nThe answer is the lysosome.", options=ORGANELLES) == "B"
    revised = "The answer is the lysosome. Let me recompute it with the data given, step by step. The answer is the Golgi apparatus."
    assert ROBUST.read(revised, options=ORGANELLES) == "A"  # reasoning between: a revision
    assert ROBUST.read("The answer is 12 km. The answer is the lysosome.", options=ORGANELLES) == "B"  # no option's value first
