"""The ``correction`` stage of the ``conclusion`` policy (``choicebox.resolve._stages``): a
correction ("the answer is (B) is incorrect") withdraws the earlier commitments to its letter; with
every commitment withdrawn, none is left.

Each case is read by ``robust`` as shipped, and by ``robust`` with this one stage taken out of its
``stages:`` list, every other rule as shipped."""

from __future__ import annotations

from pathlib import Path

from rule_files import ROBUST, TEN, robust_without

# (output, its letter, its failure) with every stage, graded with gold B; the verdict differs without it.
CASE = ("The answer is (D). Hmm, the answer is (B) is incorrect.", "D", "wrong_answer")


def test_correction_decides_its_case(tmp_path: Path) -> None:
    output, letter, failure = CASE
    verdict = ROBUST.grade(output, options=TEN, expected="B")
    assert (verdict.extracted_answer, verdict.failure) == (letter, failure)
    other = robust_without(tmp_path, "correction").grade(output, options=TEN, expected="B")
    assert (other.extracted_answer, other.failure, other.detail) != (letter, failure, verdict.detail)
    # Without it the correction is the concluding statement, and it names no option.
    assert (other.extracted_answer, other.failure) == (None, "no_answer")


def test_a_correction_of_the_only_commitment_leaves_none(tmp_path: Path) -> None:
    output = "The answer is (C). The answer is (C) is incorrect."
    verdict = ROBUST.grade(output, options=TEN)
    assert (verdict.extracted_answer, verdict.failure, verdict.detail) == (None, "no_answer", "every commitment is withdrawn")
    assert [r.outcome for r in verdict.candidates] == ["retracted", "ignored"]
    other = robust_without(tmp_path, "correction").grade(output, options=TEN)
    assert (other.extracted_answer, other.failure) == (None, "no_answer")
    assert other.detail != verdict.detail


def test_a_correction_withdraws_only_its_own_letter() -> None:
    assert ROBUST.read("The answer is (D). Later: the answer is (C) is incorrect.", options=TEN) == "D"
    assert ROBUST.read("The answer is (D) is incorrect. The correct answer is (I).", options=TEN) == "I"


def test_a_correction_cue_in_a_script_without_spaces_is_read_inside_its_words() -> None:
    # "不对" (not right) opens the correction; in Chinese no blank marks where a word starts.
    output = "所以 a₁₀ = 32。\n答案：C\n\n不对，重新检查一下。a₁₀ = 29。\n\n因此正确答案是 D。"
    assert ROBUST.read(output, options={"A": "27", "B": "30", "C": "32", "D": "29"}) == "D"
    restated = "答案：C\n这是对的。答案：D"  # "对" (right) is no correction
    assert ROBUST.outcome(restated, options={"A": "27", "B": "30", "C": "32", "D": "29"}) == (None, "conflicting")
