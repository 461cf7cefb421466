"""Soundness: no built-in mode rewards an output that does not commit to exactly one option.

Each output below is graded with every option as the gold letter: a sound mode gives reward 0 for
all of them (a hedge that names every letter would otherwise earn 1 for whichever is right).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pytest

from choicebox import grade
from choicebox.testing import mcqa_sample

MODES = (
    "strict_single_letter_boxed",
    "lenient_boxed",
    "lenient_answer_colon",
    "lenient_answer_colon_md",
    "robust",
)
BOXED_MODES = ("strict_single_letter_boxed", "lenient_boxed", "robust")
ANSWER_LINE_MODES = ("lenient_answer_colon_md", "robust")


def _rewarded(output: str, mode: str, options: dict[str, str] | None = None) -> list[str]:
    """The gold letters for which ``output`` earns a reward under ``mode``."""
    letters = list(options or {"A": "optA", "B": "optB", "C": "optC", "D": "optD"})
    rewarded = []
    for gold in letters:
        verdict = grade(mcqa_sample(expected=gold, options=options), output, mode=mode)
        if verdict.reward > 0 or verdict.correctness > 0:
            rewarded.append(f"{gold} (read {verdict.extracted_answer} by {verdict.step})")
    return rewarded


def _cases(outputs: Iterable[str], modes: Sequence[str]) -> list[object]:
    """Every (output, mode) pair."""
    return [pytest.param(output, mode) for output in outputs for mode in modes]


# ------------------------------------------------------------------------------ hedged boxes

_HEDGED_BOXES = (
    "\\boxed{A} or \\boxed{B}",
    "Either \\boxed{B} or \\boxed{C}.",
    "\\boxed{A}, or possibly \\boxed{B}",
    "Maybe \\boxed{A}, maybe \\boxed{B}.",
    "\\boxed{B}\n\n\\boxed{C}",
    "$\\boxed{A}$ / $\\boxed{B}$",
    "\\boxed{\\text{A}} or \\boxed{\\text{B}}",
    "\\boxed{A: optA} or \\boxed{B: optB}",
    "\\fbox{A} or \\boxed{B}",
    "\\boxed{A} or \\boxed{B} or \\boxed{C}",
    "It could be \\boxed{A}; it could also be \\boxed{B}.",
    "\\boxed{A} or else \\boxed{B}",
    "\\boxed{A} unless it is \\boxed{C}",
)


@pytest.mark.parametrize(("output", "mode"), _cases(_HEDGED_BOXES, MODES))
def test_several_boxes_with_different_letters_earn_nothing(output: str, mode: str) -> None:
    assert _rewarded(output, mode) == []


@pytest.mark.parametrize("mode", BOXED_MODES)
def test_a_hedge_between_boxes_is_called_ambiguous(mode: str) -> None:
    verdict = grade(mcqa_sample(), "\\boxed{A} or \\boxed{B}", mode=mode)
    assert verdict.failure == "ambiguous"


@pytest.mark.parametrize(
    ("output", "mode"),
    _cases(
        ["\\boxed{A} or \\boxed{optB}"],
        MODES,
    ),
)
def test_a_letter_box_hedged_with_an_option_text_box_earns_nothing(output: str, mode: str) -> None:
    assert _rewarded(output, mode) == []


# ------------------------------------------------------------------------------ one box, several letters

_LISTING_BOXES = (
    "\\boxed{A, B}",
    "\\boxed{A/B}",
    "\\boxed{A or B}",
    "\\boxed{B and C}",
    "\\boxed{A-D}",
    "\\boxed{A) or B)}",
    "\\boxed{A B C D}",
    "\\boxed{\\text{B, D}}",
    "\\boxed{(A), (C)}",
)


@pytest.mark.parametrize(("output", "mode"), _cases(_LISTING_BOXES, MODES))
def test_a_box_listing_several_letters_earns_nothing(output: str, mode: str) -> None:
    assert _rewarded(output, mode) == []


@pytest.mark.parametrize("mode", ["strict_single_letter_boxed", "lenient_boxed"])
@pytest.mark.parametrize("output", ["\\boxed{A, B}", "\\boxed{A-D}", "\\boxed{A) or B)}"])
def test_a_box_listing_several_letters_is_ambiguous(output: str, mode: str) -> None:
    assert grade(mcqa_sample(), output, mode=mode).failure == "ambiguous"


# ------------------------------------------------------------------------------ every letter written out

_EVERY_LETTER = (
    "A B C D",
    "A, B, C, D",
    "A/B/C/D",
    "A or B or C or D",
    "\\boxed{A}\\boxed{B}\\boxed{C}\\boxed{D}",
    "\\boxed{A} \\boxed{B} \\boxed{C} \\boxed{D}",
    "\\boxed{A}\n\\boxed{B}\n\\boxed{C}\n\\boxed{D}",
    "\\boxed{ABCD}",
    "Answer: A/B/C/D",
    "Answer: A B C D",
    "Answer: A, B, C or D",
    "**Answer:** A/B/C/D",
    "Answer: A|B|C|D",
    "The answer is A, B, C or D.",
    "A\nB\nC\nD",
    "(A)\n(B)\n(C)\n(D)",
    "Answer: A) B) C) D)",
    "Answer: (A)(B)(C)(D)",
)
_ONE_PER_LINE = (
    "steps.text.StandaloneLetter (robust lone_letter, scope last_line): letters listed one per line "
    "are not seen as a list, so the last line's D is read"
)
_PAREN_LIST = (
    "find._payload.read_payload: 'A) B) C) D)' / '(A)(B)(C)(D)' are not recognised as a list "
    "(no separator between the letters), so the leading letter A is read"
)


@pytest.mark.parametrize(("output", "mode"), _cases(_EVERY_LETTER, MODES))
def test_writing_out_every_option_letter_earns_nothing(output: str, mode: str) -> None:
    assert _rewarded(output, mode) == []


@pytest.mark.parametrize(
    "output", ["A B C D", "\\boxed{A}\\boxed{B}\\boxed{C}\\boxed{D}", "Answer: A/B/C/D"]
)
def test_every_letter_is_ambiguous_in_robust(output: str) -> None:
    assert grade(mcqa_sample(), output, mode="robust").failure == "ambiguous"


@pytest.mark.parametrize(
    ("output", "mode"),
    _cases(
        ["optA\noptB\noptC\noptD"],
        MODES,
    ),
)
def test_writing_out_every_option_text_earns_nothing(output: str, mode: str) -> None:
    assert _rewarded(output, mode) == []


# ------------------------------------------------------------------------------ option text in a box

_TEXT_OPTIONS = {"A": "Mitosis", "B": "Meiosis", "C": "Binary fission", "D": "Budding"}


@pytest.mark.parametrize(
    ("output", "mode"),
    _cases(
        [
            "\\boxed{Mitosis or Meiosis}",
            "\\boxed{Mitosis, Meiosis}",
            "\\boxed{Meiosis and Budding}",
            "\\boxed{\\text{Mitosis / Binary fission}}",
            "\\boxed{Mitosis Meiosis Binary fission Budding}",
        ],
        MODES,
    ),
)
def test_a_box_matching_several_option_texts_earns_nothing(output: str, mode: str) -> None:
    assert _rewarded(output, mode, _TEXT_OPTIONS) == []


def test_a_box_matching_several_option_texts_is_ambiguous_in_lenient_boxed() -> None:
    sample = mcqa_sample(options=_TEXT_OPTIONS)
    verdict = grade(sample, "\\boxed{Mitosis or Meiosis}", mode="lenient_boxed")
    assert verdict.failure == "ambiguous"


# ------------------------------------------------------------------------------ the question echoed

_QUESTION = "Which process produces four genetically distinct haploid cells?"
_ECHOES = (
    f"{_QUESTION}\nA: Mitosis\nB: Meiosis\nC: Binary fission\nD: Budding",
    f"{_QUESTION}\n\nA. Mitosis\nB. Meiosis\nC. Binary fission\nD. Budding\n",
    f"{_QUESTION}\n(A) Mitosis\n(B) Meiosis\n(C) Binary fission\n(D) Budding",
    f"Question: {_QUESTION}\nA) Mitosis\nB) Meiosis\nC) Binary fission\nD) Budding\nAnswer:",
    f"{_QUESTION}\n- A: Mitosis\n- B: Meiosis\n- C: Binary fission\n- D: Budding",
    f"{_QUESTION}\n**A.** Mitosis\n**B.** Meiosis\n**C.** Binary fission\n**D.** Budding",
    f"{_QUESTION}\nA: Mitosis\nB: Meiosis\nC: Binary fission\nD: Budding\n\n"
    "Put your final answer in \\boxed{} as one letter: A, B, C or D.",
    f"{_QUESTION}\nA: Mitosis\nB: Meiosis\nC: Binary fission\nD: Budding\n\n"
    "The last line of your response must be 'Answer: $LETTER' where LETTER is one of ABCD.",
    f"{_QUESTION}\nA: Mitosis\nB: Meiosis\nC: Binary fission\nD: Budding\n\n"
    "End with 'Answer: \\boxed{A/B/C/D}'.",
)


@pytest.mark.parametrize(("output", "mode"), _cases(_ECHOES, MODES))
def test_an_echoed_question_earns_nothing(output: str, mode: str) -> None:
    assert _rewarded(output, mode, _TEXT_OPTIONS) == []


# ------------------------------------------------------------------------------ hedged answer lines

_HEDGED_LINES = (
    "Answer: A or B",
    "Answer: B or C",
    "**Answer:** A or B",
    "Answer: A and B",
    "Answer: either B or D",
    "Final answer: A or B",
    "Answer: $A$ or $B$",
    "Answer: (A) or (B)",
    "Answer: A / B",
    "The answer is B or C.",
)


_WRAPPED_LIST = (
    "find._payload.read_payload: the wrapper regex unwraps '(A) or (B)' / '$A$ or $B$' as one "
    "wrapper around 'A) or (B' / 'A$ or $B', which is no list, so the leading letter A is read"
)


@pytest.mark.parametrize(("output", "mode"), _cases(_HEDGED_LINES, MODES))
def test_a_hedged_answer_line_earns_nothing(output: str, mode: str) -> None:
    assert _rewarded(output, mode) == []


@pytest.mark.parametrize("mode", ANSWER_LINE_MODES)
def test_a_hedged_answer_line_is_ambiguous(mode: str) -> None:
    assert grade(mcqa_sample(), "Answer: A or B", mode=mode).failure == "ambiguous"


def test_a_hedged_last_answer_line_is_not_rescued_by_an_earlier_one_in_robust() -> None:
    verdict = grade(mcqa_sample(), "Answer: B\nHmm, actually Answer: A or B", mode="robust")
    assert verdict.extracted_answer is None
    assert verdict.failure == "ambiguous"


# ------------------------------------------------------------------------------ reasoning


@pytest.mark.parametrize(
    "output",
    [
        "<think>The answer is \\boxed{B}",
        "<think>Answer: B",
        "<think>So B.\nB",
        "<thinking>optB",
        "<think>done</think> Now again <think> Answer: B",
        "<reasoning>\\boxed{B}</reasoning><think>\\boxed{B}",
    ],
)
def test_an_unfinished_reasoning_block_earns_nothing_in_robust(output: str) -> None:
    for gold in "ABCD":
        verdict = grade(mcqa_sample(expected=gold), output, mode="robust")
        assert verdict.reward == 0.0
        assert verdict.extracted_answer is None
        assert verdict.failure == "unfinished_reasoning"


def test_a_finished_reasoning_block_never_supplies_the_answer_in_robust() -> None:
    verdict = grade(mcqa_sample(), "<think>\\boxed{B}</think>I am not sure.", mode="robust")
    assert verdict.extracted_answer is None
    assert grade(mcqa_sample(), "<think>\\boxed{A}</think>\\boxed{B}", mode="robust").correct
