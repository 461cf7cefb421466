"""The ``revision`` stage of the ``conclusion`` policy (``choicebox.resolve._stages``): an earlier
different commitment, with reasoning between, is revised by the concluding one, unless the two
answer different parts of a multi-part question (``conflicting``); a hedge in the run is narrowed by
the concluding letter.

Each case is read by ``robust`` as shipped, and by ``robust`` with this one stage taken out of its
``stages:`` list, every other rule as shipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from choicebox import Verdict, default_registry, grade_text
from rule_files import ROBUST, TEN, robust_with_stages, robust_without

# (output, its letter, its failure) with every stage, graded with gold B; the verdict differs without it.
CASE = (
    "(a) The first current is 2 A. The answer is (A).\n(b) The second current is 5 A. The answer is (F).",
    None,
    "conflicting",
)


def test_revision_decides_its_case(tmp_path: Path) -> None:
    output, letter, failure = CASE
    verdict = ROBUST.grade(output, options=TEN, expected="B")
    assert (verdict.extracted_answer, verdict.failure) == (letter, failure)
    other = robust_without(tmp_path, "revision").grade(output, options=TEN, expected="B")
    assert (other.extracted_answer, other.failure, other.detail) != (letter, failure, verdict.detail)
    assert other.extracted_answer == "F"  # without it, the concluding letter


def test_marked_later_parts_make_one_answer_per_part(tmp_path: Path) -> None:
    # (A part named right before the noun, "For part (i), the answer is C", scopes the statement
    # itself: stage part_scoped. Here the parts are marked only in the reasoning between.)
    output = "For part (i), adding the forces, the answer is C.\nFor part (ii), adding them again, the answer is D."
    verdict = ROBUST.grade(output, options=TEN)
    assert (verdict.extracted_answer, verdict.failure) == (None, "conflicting")
    assert verdict.detail.startswith("one answer per part")
    assert robust_without(tmp_path, "revision").read(output, options=TEN) == "D"


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        ("The answer is (C).\nWait, I made a mistake in the sign. The answer is (E).", "E"),
        ("The answer is (H).\n\nHere is how to solve it: the force is 12 N, which matches the closest option.\nThe closest option is A.", "A"),
    ],
)
def test_a_reasoned_revision_reads_the_concluding_letter(output: str, letter: str) -> None:
    verdict = ROBUST.grade(output, options=TEN)
    assert verdict.extracted_answer == letter
    assert "revised" in verdict.detail
    assert [r.outcome for r in verdict.candidates if r.candidate.letters != (letter,)] == ["superseded"]


def _robust(text: str, options: dict[str, str] | None = None, question: str = "") -> Verdict:
    opts = options or TEN
    return grade_text(text, opts, next(iter(opts)), default_registry().get("robust"), question=question)


def test_a_multi_part_question_gives_one_letter_per_part_no_answer() -> None:
    question = "Find (a) the current and (b) the voltage.\nA: 1 A, 2 V\nB: 2 A, 4 V\nC: 3 A, 6 V"
    options = {"A": "1 A, 2 V", "B": "2 A, 4 V", "C": "3 A, 6 V", "D": "4 A, 8 V"}
    text = "The current is 2 A, so the answer is (B). For the voltage we multiply by 2 ohms, and the answer is (C)."
    verdict = _robust(text, options, question)
    assert (verdict.extracted_answer, verdict.failure) == (None, "conflicting")
    revised = "The current is 2 A, so the answer is (B). However, I made a mistake: the answer is (C)."
    assert _robust(revised, options, question).extracted_answer == "C"
    # The revision cues in the languages of the answer labels: "sorry, I was wrong".
    for sorry in ("Eh, maaf, saya keliru:", "Perdón, me equivoqué:", "Entschuldigung, ich habe mich geirrt:", "Xin lỗi, tôi nhầm:"):
        revised = f"The current is 2 A, so the answer is (B). {sorry} the answer is (C)."
        assert _robust(revised, options, question).extracted_answer == "C", sorry


def test_a_concluding_no_option_never_makes_it_raise(tmp_path: Path) -> None:
    mode = robust_with_stages(tmp_path, ["hedge", "revision"])
    output = "The answer is (C). Let me think about it much more carefully now. The answer is none of the options."
    assert mode.outcome(output, options=TEN) == (None, "no_answer")


@pytest.mark.parametrize(
    "output",
    [
        "Case 1: removing playing time is negative punishment. The answer is (G).\n\n"
        "Case 2: adding an embarrassment is positive punishment. The answer is (E).",
        "- **Reading 1:** the promise merges into the deed. **The answer is (D).**\n\n"
        "- **Reading 2:** the promise is collateral. **The answer is (E).**\n\nIt depends on the court.",
        "Scenario 1 reads it one way, so the answer is (B).\nScenario 2 reads it the other way, so the answer is (F).",
    ],
)
def test_one_answer_per_case_or_reading_is_conflicting(output: str) -> None:
    # Answers to the cases or readings a response works through one by one, with nothing that
    # chooses between them, are unreconciled letters (rule 2), not a revision.
    assert ROBUST.outcome(output, options=TEN) == (None, "conflicting")


def test_a_case_analysis_that_concludes_has_its_conclusion() -> None:
    output = (
        "Case 1: x > 0 gives the answer (A), which is impossible.\n"
        "Case 2: x < 0 gives (E).\n\nFinal answer: (E)"
    )
    assert ROBUST.read(output, options=TEN) == "E"
