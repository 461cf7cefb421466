"""The ``closing_answer`` step kind (``choicebox.find.fallbacks``): the fast path. An output that
ends in "... answer is (X)." and holds no other letter a finder could read settles the verdict alone,
and the rest of the chain does not run.

What it settles, what it must leave to the whole chain (another letter, another answer, text about
other questions, a close that is no option or several letters), that it decides as the whole chain
would, and what each of its parameters changes. The modes are rule files whose chain is this one
step (and ``answer_statement`` after it, where a test says so), with ``robust``'s parameters unless a
test changes one, and ``robust`` itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from choicebox import GradingMode, Verdict, default_registry, grade_text
from choicebox._modes import parse_mode
from choicebox._resources import builtin_rule_files
from rule_files import CONCLUSION, TEN, Built, chain, one_kind, robust_step


def _step(tmp_path: Path, **changed: Any) -> Built:
    return one_kind(tmp_path, "closing_answer", **{**robust_step("closing_answer"), **changed})


@pytest.fixture(scope="module")
def closing(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _step(tmp_path_factory.mktemp("closing_answer"))


@pytest.mark.parametrize(
    "output",
    [
        "Adding 2 and 3 gives 5.\nThe answer is (C).",
        "The answer is (C)",
        "the answer is (c).",
        "So the answer is (C).  \n",
        "A car moves 5 m. The answer is (C).",  # "A car" is no letter
    ],
)
def test_it_settles_a_plain_closing_answer(closing: Built, output: str) -> None:
    verdict = closing.grade(output)
    assert (verdict.extracted_answer, verdict.step) == ("C", "closing_answer")


def test_under_conclusion_what_it_settles_stops_the_chain(tmp_path: Path) -> None:
    steps = [{"kind": "closing_answer", **robust_step("closing_answer")}, {"kind": "answer_statement", **robust_step("answer")}]
    verdict = chain(tmp_path, steps, resolve=CONCLUSION).grade("Adding 2 and 3 gives 5.\nThe answer is (C).")
    assert verdict.extracted_answer == "C"
    assert [(r.candidate.step, r.candidate.settles, r.outcome) for r in verdict.candidates] == [("closing_answer", True, "chosen")]


@pytest.mark.parametrize(
    "output",
    [
        "B is wrong. The answer is (C).",  # another letter
        "The answer is (A). The answer is (C).",  # another answer
        "Question 2: The answer is (C).",  # text about other questions
        "The answer is (C). And more text after it that goes on.",  # not the close
        "The answer is C.",  # no brackets
        "The answer is (A) or (C).",
        "The answer is (E).",  # no option: the long way
    ],
)
def test_it_leaves_any_other_output_to_the_whole_chain(closing: Built, output: str) -> None:
    assert closing.outcome(output) == (None, "no_answer")


def _robust(text: str) -> Verdict:
    return grade_text(text, TEN, "A", default_registry().get("robust"))


def _without_fast_path() -> GradingMode:
    # The fast path switched off by a noun no output holds (its entry stays: it anchors
    # vocabulary the later entries share).
    source = next(f for f in builtin_rule_files() if f.name == "robust.yaml").read_text(encoding="utf-8")
    start = source.index("  - id: closing_answer")
    end = source.index("  - id: other_questions")
    entry = source[start:end].replace("    noun: answer\n", "    noun: zzzzqqq\n", 1)
    assert "zzzzqqq" in entry
    text = source[:start] + entry + source[end:]
    return parse_mode(text.replace("id: robust", "id: robust_slow", 1), path="<test>")[0]


_FAST_OUTPUTS = st.lists(
    st.sampled_from(
        [
            "Let's think step by step. ", "The mass is 2 kg. ", "Option (A) is wrong. ", "so ",
            "The answer is (C).", "The answer is (B).", "the answer is (x). ", "(D) ", "B or C. ",
            "Final answer: ", "\n", "Question 2: ", "\\boxed{A} ", "I choose A. ", "The answer is (Q).",
        ]
    ),
    max_size=8,
).map("".join)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_FAST_OUTPUTS)
def test_the_fast_path_decides_as_the_whole_chain_would(text: str) -> None:
    fast = default_registry().get("robust")
    slow = _without_fast_path()
    options = {"A": "optA", "B": "optB", "C": "optC", "D": "optD"}
    a = grade_text(text, options, "A", fast)
    b = grade_text(text, options, "A", slow)
    assert (a.extracted_answer, a.failure) == (b.extracted_answer, b.failure)


def test_the_fast_path_settles_a_plain_closing_answer() -> None:
    verdict = _robust("Adding 2 and 3 gives 5.\nThe answer is (E).")
    assert verdict.extracted_answer == "E"
    assert verdict.step == "closing_answer"
    # Another letter a finder could read sends the output through the whole chain.
    assert _robust("B is wrong. The answer is (E).").step == "answer"
    assert _robust("I choose A. The answer is (C).").failure == "conflicting"
    assert _robust("A car moves 5 m. The answer is (C).").step == "closing_answer"


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_noun_must_stand_in_the_text_once(tmp_path: Path, closing: Built) -> None:
    output = "My answer follows. The answer is (C)."
    assert closing.read(output) is None  # "answer" twice
    assert _step(tmp_path, noun="answer is").read(output) == "C"


def test_parameter_unless_names_what_marks_text_about_other_questions(tmp_path: Path, closing: Built) -> None:
    assert closing.read("Question 2: The answer is (C).") is None
    assert _step(tmp_path, unless=[]).read("Question 2: The answer is (C).") == "C"


def test_parameter_window_is_how_far_from_the_end_the_close_is_looked_for(tmp_path: Path, closing: Built) -> None:
    output = "Adding 2 and 3 gives 5.\nThe answer is (C)."
    assert closing.read(output) == "C"
    assert _step(tmp_path, window=10).read(output) is None


def test_parameter_mentions_send_an_answer_named_not_given_the_long_way(tmp_path: Path, closing: Built) -> None:
    assert closing.read("The wrong answer is (C).") is None
    assert _step(tmp_path, mentions=[]).read("The wrong answer is (C).") == "C"
    assert robust_step("closing_answer")["mentions"] == robust_step("answer")["mentions"]  # one list, anchored
