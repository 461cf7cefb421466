"""The ``other_questions`` step kind (``choicebox.find.scope``): where text about other questions
starts (a new "Question:" heading, a recap of other answers, another question's options, a section
break), so that the ``conclusion`` policy reads only the part about the sample's own question.

It finds no answer itself: each mode here pairs it with ``answer_statement`` under ``conclusion``
(robust's), and the same chain without it reads the output otherwise. What it marks, what it must
not mark (the word "question" in prose, the question's own heading), and what each of its
parameters changes, with ``robust``'s vocabularies unless a test changes one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from choicebox import Verdict, default_registry, grade_text
from rule_files import CONCLUSION, TEN, Built, chain, one_kind, robust_step

ANSWER = {"kind": "answer_statement", "id": "answer", **robust_step("answer")}
QUESTION = "Which gas makes up most of the atmosphere?"


def _scoped(tmp_path: Path, **changed: Any) -> Built:
    scope = {"kind": "other_questions", **robust_step("other_questions"), **changed}
    return chain(tmp_path, [scope, ANSWER], resolve=CONCLUSION)


@pytest.fixture(scope="module")
def scoped(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _scoped(tmp_path_factory.mktemp("other_questions"))


@pytest.fixture(scope="module")
def unscoped(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return chain(tmp_path_factory.mktemp("other_questions"), [ANSWER], resolve=CONCLUSION)


# output, its reading with other_questions, its reading without
MARKED = {
    "a question heading": ("The answer is (B).\n\nQuestion: What is 2 + 2?\nThe answer is (A).", ("B", None), ("A", None)),
    "a problem heading": ("The answer is (B).\nProblem 2: The answer is (A).", ("B", None), (None, "conflicting")),
    "a recap": (
        "The answer is (B).\n\nNow, combining all the answers:\nThe answer is (D) for question 2.",
        ("B", None),
        ("D", None),
    ),
    "an options line": ("The answer is (B).\nOptions:\nA. 3\nB. 4\nThe answer is (A).", ("B", None), (None, "conflicting")),
    "a section break": ("The answer is (B).\n\n===\n\nThe answer is (C).", ("B", None), (None, "conflicting")),
    "a named section": ("The answer is (B).\n\n== response ==\nThe answer is (A)", ("B", None), (None, "conflicting")),
    "a prompt echo": ("The answer is (B).\nYou are a knowledge expert. The answer is (A).", ("B", None), ("A", None)),
    # a base model's numbered follow-up question, its options the same as this question's
    "a numbered question": (
        "The answer is (B).\n\n2. Which gas do plants take in?\n   A. optA\n   B. optB\n   The answer is (A).",
        ("B", None),
        ("A", None),
    ),
}


@pytest.mark.parametrize("case", sorted(MARKED))
def test_it_marks_where_text_about_another_question_starts(scoped: Built, unscoped: Built, case: str) -> None:
    output, within, without = MARKED[case]
    assert scoped.outcome(output) == within
    assert unscoped.outcome(output) == without


@pytest.mark.parametrize(
    "output",
    [
        "The question asks about gases. The answer is (B).",  # the word in prose
        "The answer is (B). That answers the question.",
        "Question: Which gas makes up most of the atmosphere?\nThe answer is (B).",  # its own heading
        "Question: What is 2 + 2?\nThe answer is (A).\n\nQuestion: Which gas makes up most of the atmosphere?\nThe answer is (B).",
        # a numbered question before any answer: the response's own restatement, read whole
        "2. Which gas makes up most of the atmosphere?\nA. optA\nB. optB\nThe answer is (B).",
    ],
)
def test_it_keeps_the_text_about_the_samples_own_question(scoped: Built, output: str) -> None:
    assert scoped.outcome(output, question=QUESTION) == ("B", None)


def test_it_finds_no_answer_itself(tmp_path: Path) -> None:
    alone = one_kind(tmp_path, "other_questions", resolve=CONCLUSION, **robust_step("other_questions"))
    assert alone.outcome("The answer is (B).") == (None, "no_answer")


def _robust(text: str, options: dict[str, str] | None = None, question: str = "") -> Verdict:
    opts = options or TEN
    return grade_text(text, opts, next(iter(opts)), default_registry().get("robust"), question=question)


def test_text_about_another_question_is_outside() -> None:
    text = "The answer is (B).\n\nQuestion: Which is larger?\nOptions:\nA. 1\nB. 2\nAnswer: The answer is (D)."
    verdict = _robust(text, {"A": "optA", "B": "optB", "C": "optC", "D": "optD"})
    assert verdict.extracted_answer == "B"
    outcomes = {r.candidate.letters: r.outcome for r in verdict.candidates if r.candidate.letters}
    assert outcomes[("D",)] == "outside"


ROCKET = "A model rocket follows the trajectory (80t, 200t - 4.9t^2). Find the rocket's maximum height in meters."
HEIGHTS = {"A": "1000", "B": "2000", "C": "2041", "D": "3265"}


@pytest.mark.parametrize("heading", ["Q: How far does the rocket travel horizontally before it lands?", "Question: What is its speed at landing?"])
def test_the_text_before_a_heading_that_asks_another_question_is_this_questions(heading: str) -> None:
    # A base model answers (here with a value, rule 5), then asks and answers a question of its own.
    text = f"y = 200(20.41) - 4.9(20.41)^2 = 2041. The maximum height is 2041 meters.\n\n{heading}\nA: x = 3265 meters."
    verdict = _robust(text, HEIGHTS, question=ROCKET)
    assert verdict.extracted_answer == "C"
    assert verdict.step == "closing_value"


@pytest.mark.parametrize(
    "text",
    [
        # A heading that restates this question: its section is the one about it.
        "Some notes first.\n\nQ: Find the rocket's maximum height in meters for this trajectory?\nA: The answer is (C).",
        # A bullet that names a quantity is no question: the answer after it still counts.
        "We are given Q = f(t).\n\n* Q: the height, in meters\n* t: time\n\nSo the maximum height is 2041 meters. The answer is (C).",
    ],
)
def test_an_answer_after_a_heading_that_asks_nothing_else_still_counts(text: str) -> None:
    assert _robust(text, HEIGHTS, question=ROCKET).extracted_answer == "C"


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        # a question of the response's own, with its options and answer: after the answer to this one
        ("The height is 2041 m. The answer is (C).\n\n**Practice Question:** How far?\nA. 1\nB. 2\nAnswer: A", "C"),
        ("Let's test your understanding.\n\n**Practice Question:** How far?\nA. 1\nB. 2\nC. 3\nD. 4\n**Answer:** D", None),
        # without options of its own it is reasoning about this question
        ("Answer: (A)\n\nWait.\nFollow-up question: is there drag? The question says no.\nCorrection: the answer is (B).", "B"),
    ],
)
def test_a_question_of_the_responses_own_is_about_another_question(text: str, letter: str | None) -> None:
    assert _robust(text, HEIGHTS, question=ROCKET).extracted_answer == letter


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_headings_are_the_words_of_a_heading_line(tmp_path: Path, scoped: Built) -> None:
    output = "The answer is (B).\n\nQuestion: What is 2 + 2?\nThe answer is (A)."
    assert scoped.read(output) == "B"
    assert _scoped(tmp_path, headings=["problem"]).read(output) == "A"


def test_parameter_prompt_echoes_are_lines_that_restart_the_prompt(tmp_path: Path, scoped: Built) -> None:
    output = "The answer is (B).\nYou are a knowledge expert. The answer is (A)."
    assert scoped.read(output) == "B"
    assert _scoped(tmp_path, prompt_echoes=[]).read(output) == "A"


def test_parameter_recap_phrases_introduce_a_recap(tmp_path: Path, scoped: Built) -> None:
    output = "The answer is (B).\n\nNow, combining all the answers:\nThe answer is (D) for question 2."
    assert scoped.read(output) == "B"
    assert _scoped(tmp_path, recap_phrases=[]).read(output) == "D"


def test_parameter_section_names_name_a_section_header(tmp_path: Path, scoped: Built) -> None:
    output = "The answer is (B).\n\n== response ==\nThe answer is (A)"
    assert scoped.read(output) == "B"
    assert _scoped(tmp_path, section_names=[]).outcome(output) == (None, "conflicting")
    assert _scoped(tmp_path, section_names=[]).read("The answer is (B).\n\n===\n\nThe answer is (C).") == "B"


def test_parameter_new_questions_announce_a_question_of_the_responses_own(tmp_path: Path, scoped: Built) -> None:
    output = "Let's test your understanding.\n\n**Practice Question:** Which is a noble gas?\nA. Argon\nB. Oxygen\n**Answer:** (A)"
    assert scoped.outcome(output) == (None, "no_answer")
    assert _scoped(tmp_path, new_questions=[]).read(output) == "A"
    # Without its own lettered options, a question the response asks itself is reasoning.
    asked = "Answer: (A)\n\nWait.\nFollow-up question: is it inert? The question says so.\nCorrection: the answer is (B)."
    assert scoped.read(asked) == "B"
