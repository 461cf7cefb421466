"""The ``boxed_letter`` step kind (``choicebox.find.boxed``): the letter in a ``\\boxed{}`` or
``\\fbox{}``, in any wrapper.

What it reads (the box forms, several boxes), what it must not read (a value, an empty or
unclosed box, a letter that is no option, several letters, boxes joined as a hedge), and what each
of its parameters changes. A box is a commitment in itself: the prose around it is not weighed. Every
mode here is a rule file whose chain is this one step."""

from __future__ import annotations

from pathlib import Path

import pytest

from rule_files import CONCLUSION, Built, one_kind


@pytest.fixture(scope="module")
def boxed(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return one_kind(tmp_path_factory.mktemp("boxed_letter"), "boxed_letter")


@pytest.mark.parametrize(
    "output",
    [
        "\\boxed{B}",
        "\\fbox{B}",
        "\\boxed{\\text{B}}",
        "\\boxed{\\textbf{B}}",
        "\\boxed{(B)}",
        "\\boxed{[B]}",
        "\\boxed{b}",
        "\\boxed{B: optB}",  # a labelled choice
        "$\\boxed{B}$",
        "**Final Answer:** $\\boxed{\\text{B}}$",
        "So \\boxed{B}.",
    ],
)
def test_it_reads_the_letter_in_a_box(boxed: Built, output: str) -> None:
    assert boxed.outcome(output) == ("B", None)


def test_the_last_box_counts_after_reasoning_between_boxes(boxed: Built) -> None:
    output = "\\boxed{A}. On reflection, having redone the sums, I now believe \\boxed{C}"
    assert boxed.read(output) == "C"


@pytest.mark.parametrize(
    "output",
    [
        "\\boxed{27}",  # a value
        "\\boxed{}",
        "\\boxed{B",  # never closed
        "\\boxed{AB}",
        "\\boxed{optB}",  # an option's text is boxed_option_text's
        "\\boxed B",  # no braces (see ``bare``)
        "The answer is (B).",
    ],
)
def test_it_reads_no_answer_without_a_boxed_letter(boxed: Built, output: str) -> None:
    assert boxed.outcome(output) == (None, "no_answer")


@pytest.mark.parametrize(
    "output",
    [
        "\\boxed{A, B}",
        "\\boxed{A} or \\boxed{B}",
        "\\boxed{A} \\boxed{B} \\boxed{C} \\boxed{D}",
        "\\boxed{A} then \\boxed{C}",  # joined by hedge words only
        "\\boxed{A} \\text{ or } \\boxed{B}",  # ... also inside LaTeX's text wrappers
        "\\[\n\\boxed{A} \\quad\\text{or}\\quad \\boxed{B}\n\\]",
    ],
)
def test_several_letters_are_ambiguous(boxed: Built, output: str) -> None:
    assert boxed.outcome(output) == (None, "ambiguous")


def test_a_letter_that_is_not_an_option_is_not_an_answer(boxed: Built) -> None:
    assert boxed.outcome("\\boxed{E}") == (None, "not_an_option")


def test_only_a_lone_box_of_a_bare_letter_is_clean(tmp_path: Path) -> None:
    primary = one_kind(tmp_path, "boxed_letter", primary=True)
    assert primary.grade("\\boxed{B}", expected="B").reward_components["format"] == 1.0
    assert primary.grade("\\boxed{B: optB}", expected="B").reward_components["format"] == 0.0
    assert primary.grade("\\boxed{A}. Redoing it with care, \\boxed{B}", expected="B").reward_components["format"] == 0.0


def test_it_reports_every_box_to_a_policy_that_weighs_them(tmp_path: Path) -> None:
    verdict = one_kind(tmp_path, "boxed_letter", resolve="last_position").grade(
        "\\boxed{A}. Redoing the sums with care, \\boxed{27}. Finally \\boxed{C}"
    )
    found = [(r.candidate.kind, r.candidate.letters, r.candidate.value) for r in verdict.candidates]
    assert found == [("commitment", ("A",), ""), ("value", (), "27"), ("commitment", ("C",), "")]
    assert verdict.extracted_answer == "C"


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_which_picks_the_first_or_the_last_box(tmp_path: Path, boxed: Built) -> None:
    output = "\\boxed{A}. On reflection, having redone the sums, I now believe \\boxed{C}"
    assert boxed.read(output) == "C"
    assert one_kind(tmp_path, "boxed_letter", which="first").read(output) == "A"


def test_parameter_payload_strict_refuses_a_labelled_choice(tmp_path: Path, boxed: Built) -> None:
    assert boxed.read("\\boxed{C: optC}") == "C"
    strict = one_kind(tmp_path, "boxed_letter", payload="strict")
    assert strict.outcome("\\boxed{C: optC}") == (None, "no_answer")
    assert strict.read("\\boxed{C}") == "C"


def test_parameter_lowercase_accepts_a_lowercase_letter(tmp_path: Path, boxed: Built) -> None:
    assert boxed.read("\\boxed{b}") == "B"
    assert one_kind(tmp_path, "boxed_letter", lowercase=False).outcome("\\boxed{b}") == (None, "no_answer")


def test_parameter_bare_reads_a_box_command_before_a_bare_letter(tmp_path: Path) -> None:
    output = "The final choice is \\boxed B"
    assert one_kind(tmp_path, "boxed_letter", resolve=CONCLUSION).read(output) is None
    assert one_kind(tmp_path, "boxed_letter", resolve=CONCLUSION, bare=True).read(output) == "B"


def test_parameter_bare_reads_a_bare_letter_under_first_step_too(tmp_path: Path) -> None:
    assert one_kind(tmp_path, "boxed_letter", bare=True).read("The final choice is \\boxed B") == "B"
