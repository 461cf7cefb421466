"""The ``boxed_option_text`` step kind (``choicebox.find.boxed``): an option's text inside the box
(``\\boxed{Square}``), mapped to its letter.

What it reads, what it must not read (a letter, an option's text outside a box, a text that is no
option's, several options), and what each of its parameters changes. A box is a commitment in itself:
the prose around it is not weighed. Every mode here is a rule file whose chain is this one step."""

from __future__ import annotations

from pathlib import Path

import pytest

from rule_files import Built, one_kind

SHAPES = {"A": "Square", "B": "Circle", "C": "Triangle", "D": "Reverse transcription PCR", "E": "PCR"}


@pytest.fixture(scope="module")
def exact(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return one_kind(tmp_path_factory.mktemp("boxed_option_text"), "boxed_option_text")


@pytest.mark.parametrize("output", ["\\boxed{optB}", "\\boxed{\\text{optB}}", "\\boxed{ OPTB }", "So $\\boxed{optB}$."])
def test_it_reads_an_options_text_in_a_box(exact: Built, output: str) -> None:
    assert exact.outcome(output) == ("B", None)


@pytest.mark.parametrize(
    "output",
    [
        "\\boxed{B}",  # a letter is boxed_letter's
        "\\boxed{optE}",  # no option's text
        "\\boxed{the optB one}",  # contains an option's text (see ``match``)
        "\\boxed{optA optB}",
        "optB",  # not in a box
    ],
)
def test_it_reads_no_answer_without_an_options_exact_text(exact: Built, output: str) -> None:
    assert exact.outcome(output) == (None, "no_answer")


def test_boxes_of_two_options_joined_as_a_hedge_are_ambiguous(exact: Built) -> None:
    assert exact.outcome("\\boxed{optA} or \\boxed{optB}") == (None, "ambiguous")


def test_the_last_box_counts_after_reasoning_between_boxes(exact: Built) -> None:
    assert exact.read("\\boxed{optA}. Having redone the sums, I now believe \\boxed{optC}") == "C"


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_which_picks_the_first_or_the_last_box(tmp_path: Path, exact: Built) -> None:
    output = "\\boxed{optA}. Having redone the sums, I now believe \\boxed{optC}"
    assert one_kind(tmp_path, "boxed_option_text", which="first").read(output) == "A"
    assert exact.read(output) == "C"


def test_parameter_match_contains_accepts_a_box_holding_one_options_text(tmp_path: Path, exact: Built) -> None:
    contains = one_kind(tmp_path, "boxed_option_text", match="contains")
    assert exact.read("\\boxed{a Square shape}", options=SHAPES) is None
    assert contains.read("\\boxed{a Square shape}", options=SHAPES) == "A"
    # An option whose text is part of a longer matching option's is no second candidate.
    assert contains.read("\\boxed{Reverse transcription PCR method}", options=SHAPES) == "D"
    # An exact text still beats containment.
    assert contains.read("\\boxed{PCR}", options=SHAPES) == "E"
    assert contains.outcome("\\boxed{Square or Circle}", options=SHAPES) == (None, "ambiguous")
