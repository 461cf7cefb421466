"""The ``withdrawal`` stage of the ``conclusion`` policy (``choicebox.resolve._stages``): a
concluding answer the response then withdraws without naming another option ("Actually, no, that is
not right") leaves it committed to none, and no earlier letter is fallen back on.

Each case is read by ``robust`` as shipped, and by ``robust`` with this one stage taken out of its
``stages:`` list, every other rule as shipped."""

from __future__ import annotations

from pathlib import Path

import pytest

import choicebox
from choicebox import MCQASample
from rule_files import ROBUST, TEN, robust_without

# (output, its letter, its failure) with every stage, graded with gold B; the verdict differs without it.
CASE = ("The answer is (A). Actually, no, that is not right, and I am not sure which one is.", None, "no_answer")


def test_withdrawal_decides_its_case(tmp_path: Path) -> None:
    output, letter, failure = CASE
    verdict = ROBUST.grade(output, options=TEN, expected="B")
    assert (verdict.extracted_answer, verdict.failure) == (letter, failure)
    other = robust_without(tmp_path, "withdrawal").grade(output, options=TEN, expected="B")
    assert (other.extracted_answer, other.failure, other.detail) != (letter, failure, verdict.detail)
    assert other.extracted_answer == "A"  # without it, the withdrawn letter is the answer


def test_an_earlier_letter_is_no_fallback_with_or_without_the_stage(tmp_path: Path) -> None:
    output = "The answer is (D). Let me redo it. The answer is (B). Scratch that."
    assert ROBUST.outcome(output, options=TEN) == (None, "no_answer")
    assert robust_without(tmp_path, "withdrawal").read(output, options=TEN) == "B"


TEN_SAMPLE = MCQASample.from_question("Which one?", [f"option {x}" for x in "abcdefghij"], "B")

# Withdrawn, in the words the mode lists, after any way of stating the answer; and the same words
# that are about another option (named before them) or that stand too far away withdraw nothing.
WITHDRAWN = [
    "Actually, no, that is not right.",
    "Scratch that.",
    "Hmm, no, that's wrong.",
    "I'm not sure any more.",
    "Wait, no. I take that back.",
    "Never mind, I am not sure which one is.",
    "Actually, none of the options is correct.",  # rule 8: it ends saying no option is right
    "None of the options is right.",
]
STATED = ["The answer is (B).", "Answer: B", "\\boxed{B}", "I'd go with B.", "**Final Answer:** (B)", "So, B."]


@pytest.mark.parametrize("stated", STATED)
@pytest.mark.parametrize("withdrawn", WITHDRAWN)
def test_a_commitment_withdrawn_without_another_option_earns_nothing(stated: str, withdrawn: str) -> None:
    output = f"Working through it, the numbers point one way. {stated} {withdrawn}"
    verdict = choicebox.grade(TEN_SAMPLE, output, mode="robust")
    assert (verdict.extracted_answer, verdict.failure, verdict.reward) == (None, "no_answer", 0.0)
    assert "withdrawn" in verdict.detail
    # An earlier answer is no fallback either: the response ends committed to nothing.
    earlier = choicebox.grade(TEN_SAMPLE, f"The answer is (D). Let me redo it. {stated} {withdrawn}", mode="robust")
    assert earlier.extracted_answer is None


@pytest.mark.parametrize(
    "output",
    [
        "The answer is (B). Option A says the opposite; no, that is wrong.",  # about option A
        "The answer is (B). " + "It fits every clause of the definition given. " * 6 + "Scratch that idea for A.",
        "The answer is (B). I take it back: the answer is (B).",  # restated: committed again
        "The answer is (B). None of the other options is right.",  # about the others
        "The answer is (B). None of the options is exactly right, but B is the closest.",  # rule 3
        "None of the options is right. The answer is (B).",  # the answer comes after (rule 3)
        "The answer is (B). Wait, no need to double-check the units.",  # "no" of "no need"
        "The answer is (B). Actually, no doubt about it.",
        "The answer is (B). Could (B) be wrong? Actually, no.",  # the "no" answers a question
        "The answer is (B). Some would argue (B) is too easy; I take that back, it is simply right.",
    ],
)
def test_a_withdrawal_about_something_else_withdraws_nothing(output: str) -> None:
    assert choicebox.grade(TEN_SAMPLE, output, mode="robust").extracted_answer == "B"


REASONS = "The fort was built of red sandstone, and two forts of the era look alike in photographs. " * 4


@pytest.mark.parametrize(
    "withdrawn",
    [
        f"{REASONS}So I'll retract my answer rather than risk a wrong one.",  # it names the answer: any distance
        f"{REASONS}I withdraw my answer.",
        "I'm not confident, so I'll retract my answer.",  # after a conjunction
        "Never mind, I am not sure which one is.",
    ],
)
def test_a_withdrawal_that_names_the_answer_withdraws_it_at_any_distance(withdrawn: str) -> None:
    verdict = choicebox.grade(TEN_SAMPLE, f"The answer is (B). {withdrawn}", mode="robust")
    assert (verdict.extracted_answer, verdict.failure) == (None, "no_answer"), withdrawn


@pytest.mark.parametrize(
    "withdrawn",
    [
        "Whether or not the examiner agrees, I withdraw my answer: the wording is ambiguous.",  # no condition
        "If anything, I withdraw my answer: the data are too ambiguous.",
        "Even if the examiner disagrees, I withdraw my answer.",
        "I could be wrong about g, so I withdraw my answer.",  # a conclusion from the doubt
        "So I have to withdraw my initial answer of (B); it is wrong.",  # it names this answer's letter
        "I withdraw my answer of (b).",  # in any case
    ],
)
def test_a_withdrawal_after_words_that_suppose_nothing_withdraws(withdrawn: str) -> None:
    verdict = choicebox.grade(TEN_SAMPLE, f"The answer is (B). {withdrawn}", mode="robust")
    assert (verdict.extracted_answer, verdict.failure) == (None, "no_answer"), withdrawn


@pytest.mark.parametrize(
    "kept",
    [
        "If I'm wrong, I withdraw my answer.",  # supposed
        "I withdraw my answer if the data are wrong.",
        "I'll retract my answer the moment someone shows me friction, but I don't expect that.",
        "I retract my answer when, and only when, the ramp has friction.",
        "Should I withdraw my answer? No.",
        "Should I withdraw my answer?",  # asked
        "I withdraw my answer of (D) from the first paragraph.",  # another letter's
        "I withdraw my answer of (d).",
        "And I withdraw my answer to the previous question, which I got wrong.",  # another question's
        "Never mind the units, they cancel.",  # "never mind" with an object withdraws nothing
        f"{REASONS}Scratch that idea about the photographs.",  # a plain withdrawal, out of reach
    ],
)
def test_a_supposed_or_distant_withdrawal_withdraws_nothing(kept: str) -> None:
    assert choicebox.grade(TEN_SAMPLE, f"The answer is (B). {kept}", mode="robust").extracted_answer == "B", kept
