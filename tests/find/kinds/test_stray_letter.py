"""The ``stray_letter`` step kind (``choicebox.find.fallbacks``): a letter of last resort, closing a
sentence as a choice would ("..., or (C).", "This supports (H).", "option B.").

What it reads, what it must not read (a negated letter, a listing, a symbol, letters of several
options), and what each of its parameters changes. A stray letter is no statement: only the
``conclusion`` policy weighs it, when nothing stronger was found, so its modes resolve by
``conclusion`` (robust's), with ``robust``'s vocabularies unless a test changes one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rule_files import CONCLUSION, ROBUST, TEN, Built, chain, one_kind, robust_step


def _step(tmp_path: Path, resolve: str = CONCLUSION, **changed: Any) -> Built:
    return one_kind(tmp_path, "stray_letter", resolve=resolve, **{**robust_step("stray"), **changed})


@pytest.fixture(scope="module")
def stray(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _step(tmp_path_factory.mktemp("stray_letter"))


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        ("The total is 20,914 J, or (G).", "G"),
        ("This supports (B).", "B"),
        ("The value matches (B).", "B"),
        ("The best fit is option B.", "B"),
        ("It was left to (B).", "B"),
        ("It is 14.5 GHz, which corresponds to option **B**.", "B"),  # a letter in bold
        # A premise restated ("if ... has"), past the points of its numbers, supposes nothing.
        ("So, if one strand has a ratio of 0.2, the other has 0.8, which is (B).", "B"),
    ],
)
def test_it_reads_a_letter_closing_a_sentence_as_a_choice(stray: Built, output: str, letter: str) -> None:
    assert stray.outcome(output, options=TEN) == (letter, None)


@pytest.mark.parametrize(
    "output",
    [
        "Option (B) is not right here.",
        "The best option is not (B).",  # negated: a mention
        "We rule out (B).",  # an elimination
        "If (B), then x.",  # a condition
        "Between (A), (B) and (C).",  # a listing
        "one letter: A, B, C or D",
        "homozygous for the normal gene (D).",  # a symbol, not a choice
        "This supports (K).",  # no option
        "Part one is answered by option D and part two by option G.",  # several options named
        # A conditional letter under a condition the sentence opens with, past its numbers.
        "If the prevalence were 1%: PPV = 0.009 / 0.0585 = 15.4%, which would be option B.",
    ],
)
def test_it_reads_no_answer_from_a_letter_that_is_no_choice(stray: Built, output: str) -> None:
    assert stray.outcome(output, options=TEN) == (None, "no_answer")


def test_a_letter_that_is_no_option_after_prose_is_no_choice() -> None:
    # The text before it is compared with the letter's option's text, which it has not (this
    # raised KeyError once, found by the statement grammar's walk).
    output = "Option A is wrong. It is about optJ (J)."
    assert ROBUST.outcome(output, options={"A": "optA", "B": "optB"}) == (None, "no_answer")


def test_a_letter_with_others_listed_after_it_is_no_choice(stray: Built) -> None:
    # What follows "(A) " was read as its option's text when it shared a word with it ("than").
    options = {"A": "Light travels slower in glass than in air", "B": "Operant conditioning", "C": "Sound", "D": "x"}
    assert stray.read("Answer - (A) or (B) rather than (C).", options=options) is None
    assert stray.read("Answer - (A) travels slower in glass than in air.", options=options) == "A"


def test_a_letter_in_a_list_whose_other_items_name_other_options_is_a_review(stray: Built) -> None:
    # Each item explains why one option fails: "(A)." closing one of them is no choice.
    review = (
        "Under the rule it is excluded from hearsay.\n\n"
        "- The declarant need not be the party personally (so C is wrong).\n"
        "- No exception such as a present sense impression is needed (A).\n"
        "- Availability of the declarant is irrelevant (D)."
    )
    assert stray.outcome(review, options=TEN) == (None, "no_answer")
    # A list that names one option only is no review: its item may close on the choice.
    alone = "Under the rule it is excluded.\n\n- The declarant is an employee.\n- This supports (B)."
    assert stray.outcome(alone, options=TEN) == ("B", None)


def test_a_negated_letter_is_reported_as_a_mention(stray: Built) -> None:
    [found] = stray.found("The best option is not (B).")
    assert (found.kind, found.letters) == ("mention", ("B",))


def test_stray_letters_of_three_options_are_a_review_not_a_choice(stray: Built) -> None:
    output = "In celsius it is 1 (option A). In kelvin, 2 (option B). In fahrenheit, 3 (option C)."
    verdict = stray.grade(output)
    assert (verdict.extracted_answer, verdict.failure) == (None, "no_answer")
    assert "several options" in verdict.detail


def test_two_different_stray_letters_conflict(stray: Built) -> None:
    assert stray.outcome("This supports (B). This supports (D).") == (None, "conflicting")


def test_a_stray_letter_then_no_option_is_right_is_no_answer(stray: Built) -> None:
    assert stray.outcome("This supports (B). None of the options is right.") == (None, "no_answer")


def test_as_a_fallback_it_runs_only_when_no_statement_names_a_letter(tmp_path: Path) -> None:
    fallback = chain(
        tmp_path,
        [{"kind": "answer_statement", **robust_step("answer")}, {"kind": "stray_letter", **robust_step("stray"), "when": "no_commitment"}],
        resolve=CONCLUSION,
    )
    assert fallback.read("This supports (B).") == "B"
    assert fallback.read("This supports (B). The answer is (C).") == "C"
    assert fallback.outcome("The answer is 42. This supports (B).") == (None, "no_answer")  # a value was stated


def test_a_stray_letter_counts_only_without_a_statement() -> None:
    assert ROBUST.read("The total is 20,914 J, or (G).", options=TEN) == "G"
    assert ROBUST.read("The total is 20,914 J, or (G). The answer is (C).", options=TEN) == "C"
    assert ROBUST.read("Option (G) is not right here.", options=TEN) is None


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_negations_make_a_letter_a_mention(tmp_path: Path, stray: Built) -> None:
    assert stray.read("The best option is not (B).") is None
    assert _step(tmp_path, negations=["incorrect"]).read("The best option is not (B).") == "B"


def test_parameter_links_before_the_letter_make_it_a_choice(tmp_path: Path, stray: Built) -> None:
    assert stray.read("This supports (B).") == "B"
    is_only = _step(tmp_path, links=["is"])
    assert is_only.read("This supports (B).") is None
    assert is_only.read("It is (B).") == "B"


def test_parameter_cues_in_the_sentence_make_it_a_choice(tmp_path: Path, stray: Built) -> None:
    assert stray.read("The correct reading here (B).") == "B"
    best_only = _step(tmp_path, cues=["best"])
    assert best_only.read("The correct reading here (B).") is None
    assert best_only.read("The best reading here (B).") == "B"


def test_parameter_which_picks_the_first_or_the_last_stray_letter(tmp_path: Path) -> None:
    output = "This supports (B). This supports (D)."
    assert _step(tmp_path, resolve="first_step").read(output) == "D"
    assert _step(tmp_path, resolve="first_step", which="first").read(output) == "B"


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        # a comparison's "than" elsewhere in the sentence compares something else
        ("So the electrical force is about 4.16 × 10^42 times stronger than gravity, which is option (D).", "D"),
        ("The best estimate of how many more books Mills has than Springvale is (G).", "G"),
        # right before the letter it rules the letter out
        ("So it is C rather than option (D).", None),
        ("It is more likely than (D).", None),
    ],
)
def test_a_than_rules_out_only_the_letter_it_compares(stray: Built, output: str, letter: str | None) -> None:
    assert stray.read(f"Work it out.\n\n{output}", options=TEN) == letter
