"""The ``option_text`` step kind (``choicebox.find.text``): the whole output, or its last line, is
exactly one option's text.

What it reads, what it must not read (a letter, a text with more words, a negated text, a list of
texts), and what each of its parameters changes. Every mode here is a rule file whose chain is this
one step."""

from __future__ import annotations

from pathlib import Path

import pytest

from rule_files import Built, one_kind

CITIES = {"A": "12.0", "B": "Paris, France", "C": "optC", "D": "optD"}


@pytest.fixture(scope="module")
def last_line(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return one_kind(tmp_path_factory.mktemp("option_text"), "option_text")


@pytest.mark.parametrize("output", ["optC", " OPTC ", "optC.", "Thinking it over.\noptC", "Thinking...\n OPTC. "])
def test_it_reads_an_options_text_as_the_last_line(last_line: Built, output: str) -> None:
    assert last_line.outcome(output) == ("C", None)


@pytest.mark.parametrize(
    "output",
    [
        "C",  # a letter is standalone_letter's
        "optE",
        "optC is wrong",  # an elimination
        "not optC",
        "optC or optD",  # several texts on one line
        "optC\nthinking on",  # not the last line
    ],
)
def test_it_reads_no_answer_unless_the_line_is_one_options_text(last_line: Built, output: str) -> None:
    assert last_line.outcome(output) == (None, "no_answer")


def test_the_last_lines_listing_several_texts_are_ambiguous(last_line: Built) -> None:
    assert last_line.outcome("optC\noptD") == (None, "ambiguous")


def test_two_options_with_one_text_match_nothing(last_line: Built) -> None:
    assert last_line.read("same", options={"A": "same", "B": "Same", "C": "other"}) is None


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_scope_whole_reads_only_an_output_that_is_the_text(tmp_path: Path, last_line: Built) -> None:
    whole = one_kind(tmp_path, "option_text", scope="whole")
    assert last_line.read("Thinking...\noptC") == "C"
    assert whole.read("Thinking...\noptC") is None
    assert whole.read(" optC ") == "C"


def test_parameter_punctuation_ignores_punctuation(tmp_path: Path, last_line: Built) -> None:
    assert last_line.read("Thinking\nParis France", options=CITIES) == "B"
    exact = one_kind(tmp_path, "option_text", punctuation=False)
    assert exact.read("Thinking\nParis France", options=CITIES) is None
    assert exact.read("Thinking\nParis, France", options=CITIES) == "B"


def test_parameter_numeric_compares_numbers_by_value(tmp_path: Path, last_line: Built) -> None:
    assert last_line.read("Thinking\n12", options=CITIES) == "A"
    assert last_line.read("Thinking\n120", options=CITIES) is None
    assert one_kind(tmp_path, "option_text", numeric=False).read("Thinking\n12", options=CITIES) is None
