"""The ``criterion_statement`` step kind (``choicebox.find.criteria``): the answer named by what the
question asks for ("The statement that is false is (F)." to "Which statement is false?").

What it reads (the question's own noun, the answer nouns, any clause), what it must not read (a
letter that does not close its sentence, a hedge, a supposition, a noun the question does not ask
about, no clause), what each parameter changes, and how ``robust`` reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rule_files import CONCLUSION, ROBUST, TEN, Built, one_kind, robust_step

FALSE = "Which statement is false?"


def _step(tmp_path: Path, **changed: Any) -> Built:
    return one_kind(tmp_path, "criterion_statement", resolve=CONCLUSION, **{**robust_step("criterion"), **changed})


@pytest.fixture(scope="module")
def criterion(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _step(tmp_path_factory.mktemp("criterion_statement"))


@pytest.mark.parametrize(
    ("question", "output"),
    [
        (FALSE, "Checking each.\n\nThe statement that is false is (F)."),
        ("Which of the following statements is not true?", "The statement that is not true is (F). It says so."),
        ("Which point does not satisfy the inequality?", "So the point that does not satisfy this inequality is (F)."),
        ("Which of these does not belong?", "The answer that does not belong to the list is (F)."),
        ("Which could NOT be the acceleration?", "The option which cannot be reached is **F**."),
        (FALSE, "The statement that is false is: F"),
    ],
)
def test_it_reads_the_answer_named_by_the_criterion(criterion: Built, question: str, output: str) -> None:
    assert criterion.outcome(output, options=TEN, question=question) == ("F", None)


@pytest.mark.parametrize(
    "output",
    [
        "The statement that is false is F because it says so.",  # the letter does not close its sentence
        "The statement that is false is (F) or (G).",  # a hedge
        "If the statement that is false is (F), then G holds.",  # a supposition
        "The rock that is igneous is (F).",  # a noun the question does not ask about
        "The statement is (F).",  # no clause: the answer statement's to read
        "The statement that is false is (K).",  # no option
    ],
)
def test_it_reads_nothing_else(criterion: Built, output: str) -> None:
    assert criterion.read(output, options=TEN, question=FALSE) is None


def test_in_robust_it_is_one_statement_among_the_others() -> None:
    output = "The statement that is false is (F).\n\nWait, F is true. The answer is (G)."
    assert ROBUST.read(output, options=TEN, question=FALSE) == "G"
    assert ROBUST.read("The statement that is false is (F).", options=TEN, question=FALSE) == "F"


def test_parameter_nouns_open_it_besides_the_questions_own(tmp_path: Path, criterion: Built) -> None:
    output = "The entry that is false is (F)."
    assert criterion.read(output, options=TEN, question="Which is wrong?") is None
    assert _step(tmp_path, nouns=["entry"]).read(output, options=TEN, question="Which is wrong?") == "F"


def test_parameter_links_join_the_clause_to_the_letter(tmp_path: Path, criterion: Built) -> None:
    output = "The statement that is false remains (F)."
    assert criterion.read(output, options=TEN, question=FALSE) is None
    assert _step(tmp_path, links=["remains"]).read(output, options=TEN, question=FALSE) == "F"


def test_parameter_conditions_make_it_a_supposition(tmp_path: Path, criterion: Built) -> None:
    output = "Were we wrong, the statement that is false is (F)."
    assert criterion.read(output, options=TEN, question=FALSE) == "F"
    assert _step(tmp_path, conditions=["were"]).read(output, options=TEN, question=FALSE) is None


def test_parameter_max_clause_bounds_the_clause(tmp_path: Path, criterion: Built) -> None:
    output = "The statement that is false under the usual reading of the terms is (F)."
    assert criterion.read(output, options=TEN, question=FALSE) == "F"
    assert _step(tmp_path, max_clause=10).read(output, options=TEN, question=FALSE) is None


def test_parameter_which_picks_the_first_or_the_last(tmp_path: Path, criterion: Built) -> None:
    output = "The statement that is false is (F).\nThe statement that is false is (G)."
    first = one_kind(tmp_path, "criterion_statement", **{**robust_step("criterion"), "which": "first"})
    last = one_kind(tmp_path, "criterion_statement", **{**robust_step("criterion"), "which": "last"})
    assert first.read(output, options=TEN, question=FALSE) == "F"
    assert last.read(output, options=TEN, question=FALSE) == "G"
