"""The ``conclusion`` policy's stages (``choicebox.resolve._stages``), one at a time: each stage decides the
case it is written for, and a mode without it reads that case otherwise (another letter, another
failure, or the same failure for another reason). The modes are the built-in
``robust`` with its ``stages:`` list edited, so every other rule stays as shipped."""

from __future__ import annotations

from pathlib import Path

import pytest

import choicebox
from choicebox import MCQASample, ModeRegistry
from choicebox._resources import builtin_rule_files
from choicebox.resolve._stages import DEFAULT_STAGES, STAGES

TEN = MCQASample.from_question("Which one?", [f"option {x}" for x in "abcdefghij"], "B")

# stage: (output, its letter, its failure) with every stage; without the stage the verdict differs.
CASES = {
    "final_marker": ("The answer is (D).\nFinal Answer: (B)", "B", None),
    "correction": ("The answer is (D). Hmm, the answer is (B) is incorrect.", "D", "wrong_answer"),
    "withdrawal": ("The answer is (A). Actually, no, that is not right, and I am not sure which one is.", None, "no_answer"),
    "no_option": ("The answer is (C). On reflection, the answer is none of the options.", None, "no_answer"),
    "hedge": ("The answer is (A) or (B).", None, "ambiguous"),
    "run": ("The answer is (A)\nThe answer is (I)\nThe answer is (C)", None, "conflicting"),
    "part_scoped": ("The answer to (a) is (C).", None, "no_answer"),
    "revision": (
        "(a) The first current is 2 A. The answer is (A).\n(b) The second current is 5 A. The answer is (F).",
        None,
        "conflicting",
    ),
    "cut_off": ("(C) is the correct answer. Now checking the others: (A) fails and (B) gives", None, "no_answer"),
}


def _registry(tmp_path: Path, stages: tuple[str, ...]) -> ModeRegistry:
    robust = next(f for f in builtin_rule_files() if f.name == "robust.yaml").read_text(encoding="utf-8")
    text = robust.replace("id: robust", "id: edited", 1)
    listed = f"stages: [{', '.join(DEFAULT_STAGES)}]"
    assert listed in text
    (tmp_path / "edited.yaml").write_text(text.replace(listed, f"stages: [{', '.join(stages)}]"), encoding="utf-8")
    return ModeRegistry.with_builtins([tmp_path])


def test_every_stage_has_a_case() -> None:
    assert set(CASES) == set(STAGES) == set(DEFAULT_STAGES)


@pytest.mark.parametrize("stage", sorted(CASES))
def test_each_stage_decides_its_case(stage: str, tmp_path: Path) -> None:
    output, letter, failure = CASES[stage]
    verdict = choicebox.grade(TEN, output, mode="robust")
    assert (verdict.extracted_answer, verdict.failure) == (letter, failure)
    without = tuple(name for name in DEFAULT_STAGES if name != stage)
    other = choicebox.grade(TEN, output, mode="edited", registry=_registry(tmp_path, without))
    assert (other.extracted_answer, other.failure, other.detail) != (letter, failure, verdict.detail)


def test_an_unknown_stage_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(choicebox.RuleFileError, match="unknown stage 'finale'") as raised:
        _registry(tmp_path, ("finale",)).get("edited")
    assert "edited.yaml:" in str(raised.value)


# Withdrawn, in the words the mode lists, after any way of stating the answer; and the same words
# that are about another option (named before them) or that stand too far away withdraw nothing.
WITHDRAWN = [
    "Actually, no, that is not right.",
    "Scratch that.",
    "Hmm, no, that's wrong.",
    "I'm not sure any more.",
    "Wait, no. I take that back.",
    "Never mind, I am not sure which one is.",
]
STATED = ["The answer is (B).", "Answer: B", "\\boxed{B}", "I'd go with B.", "**Final Answer:** (B)", "So, B."]


@pytest.mark.parametrize("stated", STATED)
@pytest.mark.parametrize("withdrawn", WITHDRAWN)
def test_a_commitment_withdrawn_without_another_option_earns_nothing(stated: str, withdrawn: str) -> None:
    output = f"Working through it, the numbers point one way. {stated} {withdrawn}"
    verdict = choicebox.grade(TEN, output, mode="robust")
    assert (verdict.extracted_answer, verdict.failure, verdict.reward) == (None, "no_answer", 0.0)
    assert "withdrawn" in verdict.detail
    # An earlier answer is no fallback either: the response ends committed to nothing.
    earlier = choicebox.grade(TEN, f"The answer is (D). Let me redo it. {stated} {withdrawn}", mode="robust")
    assert earlier.extracted_answer is None


@pytest.mark.parametrize(
    "output",
    [
        "The answer is (B). Option A says the opposite; no, that is wrong.",  # about option A
        "The answer is (B). " + "It fits every clause of the definition given. " * 6 + "Scratch that idea for A.",
        "The answer is (B). I take it back: the answer is (B).",  # restated: committed again
    ],
)
def test_a_withdrawal_about_something_else_withdraws_nothing(output: str) -> None:
    assert choicebox.grade(TEN, output, mode="robust").extracted_answer == "B"
