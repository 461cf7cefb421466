"""The ``tagged_answer`` step kind (``choicebox.find.text``): the content of an
``<answer>...</answer>``-style tag pair, read as a payload.

What it reads, what it must not read (an unclosed tag, another tag, a negated or unreadable content,
several letters, a letter that is no option), and what each of its parameters changes. Every mode
here is a rule file whose chain is this one step."""

from __future__ import annotations

from pathlib import Path

import pytest

from rule_files import Built, one_kind


@pytest.fixture(scope="module")
def tagged(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return one_kind(tmp_path_factory.mktemp("tagged_answer"), "tagged_answer")


@pytest.mark.parametrize(
    "output",
    [
        "<answer>B</answer>",
        "<ANSWER>(B)</ANSWER>",
        "<answer>b</answer>",
        "<answer>optB</answer>",
        "<answer>option B</answer>",
        "</think>\n<answer> B </answer>",
        "<answer>A</answer> Redoing it. <answer>B</answer>",  # the last pair
    ],
)
def test_it_reads_the_content_of_the_last_tag_pair(tagged: Built, output: str) -> None:
    assert tagged.outcome(output) == ("B", None)


@pytest.mark.parametrize(
    "output",
    [
        "<answer>B",  # never closed
        "<solution>B</solution>",  # a tag it is not told to read
        "<answer>not B</answer>",
        "<answer>I am not sure</answer>",
        "The answer is B.",
    ],
)
def test_it_reads_no_answer_without_a_readable_tag(tagged: Built, output: str) -> None:
    assert tagged.outcome(output) == (None, "no_answer")


def test_several_letters_are_ambiguous(tagged: Built) -> None:
    assert tagged.outcome("<answer>A or B</answer>") == (None, "ambiguous")


def test_a_letter_that_is_not_an_option_is_not_an_answer(tagged: Built) -> None:
    assert tagged.outcome("<answer>E</answer>") == (None, "not_an_option")


def test_it_reports_every_tag_pair_to_a_policy_that_weighs_them(tmp_path: Path) -> None:
    verdict = one_kind(tmp_path, "tagged_answer", resolve="last_position").grade(
        "<answer>A</answer> then <answer>zzz</answer> <answer>C</answer>"
    )
    assert [(r.candidate.kind, r.candidate.letters) for r in verdict.candidates] == [
        ("commitment", ("A",)),
        ("commitment", ("C",)),
    ]


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_tags_names_the_elements_read(tmp_path: Path, tagged: Built) -> None:
    others = one_kind(tmp_path, "tagged_answer", tags=["solution", "choice"])
    assert tagged.read("<solution>B</solution>") is None
    assert others.read("<solution>B</solution>") == "B"
    assert others.read("<answer>B</answer>") is None
    assert others.read("<choice>C</choice><solution>B</solution>") == "B"  # the last pair of any


@pytest.mark.parametrize(
    ("output", "lenient_reads", "strict_reads"),
    [("<answer>B</answer>", "B", "B"), ("<answer>(B)</answer>", "B", None), ("<answer>optC</answer>", "C", None)],
)
def test_parameter_payload_strict_reads_a_lone_letter_only(
    tmp_path: Path, tagged: Built, output: str, lenient_reads: str, strict_reads: str | None
) -> None:
    assert tagged.read(output) == lenient_reads
    assert one_kind(tmp_path, "tagged_answer", payload="strict").read(output) == strict_reads


def test_a_closer_cut_short_of_its_bracket_closes_the_output() -> None:
    from rule_files import ROBUST

    options = {"A": "0", "B": "1", "C": "1/3", "D": "3"}
    assert ROBUST.read("<think>\nSo the limit is 3.\n</think>\n<answer>D</answer", options=options) == "D"
    assert ROBUST.read("<answer>D</answer\n", options=options) == "D"
    # only at the very end: elsewhere it is no closer, and a shorter stub is none
    assert ROBUST.read("<answer>D</answer and then more text about it", options=options) is None
    assert ROBUST.read("<answer>D</ans", options=options) is None
