"""The ``option_citation`` step kind (``choicebox.find.citation``): a sentence that ends by citing
one option by its letter and its own text, whatever predicate leads to it ("The most likely cause is
D. Vitamin B12 deficiency.").

What it reads (every citation form), what it must not read (a restated option, a negated or supposed
citation, a letter with another option's text, several options cited, a letter that is no option), and
what each of its parameters changes. It weighs in only under a policy that reads every statement, so
its modes resolve by ``conclusion`` (robust's), with ``robust``'s vocabularies unless a test changes
one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rule_files import CONCLUSION, Built, one_kind, robust_step

CAUSES = {
    "A": "Light travels slower in glass than in air",
    "B": "Operant conditioning",
    "C": "Sound travels faster in a vacuum",
    "D": "Vitamin B12 deficiency",
}


def _step(tmp_path: Path, resolve: str = CONCLUSION, **changed: Any) -> Built:
    return one_kind(tmp_path, "option_citation", resolve=resolve, **{**robust_step("citation"), **changed})


@pytest.fixture(scope="module")
def citation(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _step(tmp_path_factory.mktemp("option_citation"))


@pytest.mark.parametrize(
    "output",
    [
        "The most likely cause is D. Vitamin B12 deficiency.",
        "The cause is (D) Vitamin B12 deficiency.",
        "The cause is D - Vitamin B12 deficiency.",
        "The cause is D: Vitamin B12 deficiency.",
        "The cause is **D. Vitamin B12 deficiency**.",
        "The cause is option D. Vitamin B12 deficiency.",
        "The cause is\nD. Vitamin B12 deficiency",
        "Everything points to Vitamin B12 deficiency (D).",  # the text, then its letter
        "It is best described as D. vitamin b12 deficiency.",
    ],
)
def test_it_reads_an_option_cited_by_letter_and_text_closing_a_sentence(citation: Built, output: str) -> None:
    assert citation.outcome(output, options=CAUSES) == ("D", None)


@pytest.mark.parametrize(
    "output",
    [
        "D. Vitamin B12 deficiency.",  # a sentence that opens with it restates the option
        "It cannot be D. Vitamin B12 deficiency.",  # negated
        "If the cause is D. Vitamin B12 deficiency, then x.",  # supposed
        "Let us consider whether it is D. Vitamin B12 deficiency.",
        "The cause is D. Operant conditioning.",  # another option's text
        "The cause is E. Something else.",  # no option
        "The cause is D. Vitamin B12 deficiency, probably",  # it does not close its sentence
        "Vitamin B12 deficiency (D) is the cause.",
    ],
)
def test_it_reads_no_answer_from_a_mention(citation: Built, output: str) -> None:
    assert citation.outcome(output, options=CAUSES) == (None, "no_answer")


@pytest.mark.parametrize(
    "output",
    [
        "The causes are B. Operant conditioning and D. Vitamin B12 deficiency.",  # one sentence
        "The cause is\nB. Operant conditioning\nD. Vitamin B12 deficiency",  # a listing
        "The example of positive feedback is (B). Operant conditioning. "
        "The example of negative feedback is (D). Vitamin B12 deficiency.",  # describing options
        "The cause is D. Vitamin B12 deficiency.\nThe other is B. Operant conditioning.",
    ],
)
def test_several_options_cited_commit_to_none(citation: Built, output: str) -> None:
    assert citation.outcome(output, options=CAUSES) == (None, "no_answer")


def test_it_finds_nothing_under_first_step(tmp_path: Path) -> None:
    output = "The most likely cause is D. Vitamin B12 deficiency."
    assert _step(tmp_path, resolve="first_step").read(output, options=CAUSES) is None


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_links_lead_into_the_citation(tmp_path: Path, citation: Built) -> None:
    assert citation.read("The most likely cause is D. Vitamin B12 deficiency.", options=CAUSES) == "D"
    as_only = _step(tmp_path, links=["as"])
    assert as_only.read("The most likely cause is D. Vitamin B12 deficiency.", options=CAUSES) is None
    assert as_only.read("It is best described as D. Vitamin B12 deficiency.", options=CAUSES) == "D"


def test_parameter_negations_before_the_link_make_a_mention(tmp_path: Path, citation: Built) -> None:
    output = "It cannot be D. Vitamin B12 deficiency."
    assert citation.read(output, options=CAUSES) is None
    assert _step(tmp_path, negations=[]).read(output, options=CAUSES) == "D"


def test_parameter_conditions_in_the_sentence_make_a_mention(tmp_path: Path, citation: Built) -> None:
    output = "Let us consider whether it is D. Vitamin B12 deficiency."
    assert citation.read(output, options=CAUSES) is None
    assert _step(tmp_path, conditions=[]).read(output, options=CAUSES) == "D"


def test_parameter_window_is_how_far_from_the_end_it_reads(tmp_path: Path, citation: Built) -> None:
    output = "The most likely cause is D. Vitamin B12 deficiency. " + "More words follow here and go on. " * 3
    assert citation.read(output, options=CAUSES) == "D"
    assert _step(tmp_path, window=40).read(output, options=CAUSES) is None
