"""A payload, then what it excludes ("(B), not (D)", "Operant conditioning rather than vitamin B12
deficiency"): the payload commits, the excluded option is a mention (``CONTRAST`` in
``choicebox.find._payload``, read by every statement kind). The grammar composes contrasts with every
cue, layout and payload (``tests/statement_grammar.py``); these are the rules it rests on."""

from __future__ import annotations

import pytest

import choicebox
from choicebox import MCQASample
from choicebox.find._citation import option_words
from choicebox.find._payload import read_at

OPTIONS = {
    "A": "Folate deficiency",
    "B": "Operant conditioning",
    "C": "Fiscal rather than monetary policy",
    "D": "Vitamin B12 deficiency",
}
SAMPLE = MCQASample.from_question("Which one?", list(OPTIONS.values()), "B")


def _read(text: str) -> str | None:
    return choicebox.grade(SAMPLE, text, mode="robust").extracted_answer


@pytest.mark.parametrize(
    "text",
    [
        "The answer is Operant conditioning, not (D).",  # the letter after a contrast is excluded
        "My answer: Operant conditioning instead of (D).",
        "I'd go with Operant conditioning, not (D).",
        "The answer is operant conditioning, not vitamin B12 deficiency.",
        "The answer is\n(B) rather than (D).",  # a lettered line that contrasts is no listing line
        "The correct answer is:\n\nB. Operant conditioning, and not D. Vitamin B12 deficiency.",
        "Therefore,\n\n- **B** instead of (D).",
    ],
)
def test_the_payload_before_a_contrast_commits(text: str) -> None:
    assert _read(text) == "B"


def test_a_letter_after_a_value_still_names_the_value_when_no_contrast_stands_between() -> None:
    assert _read("The answer is 23,500 yards, which is (D).") == "D"


def test_an_options_own_text_that_holds_a_contrast_is_read_whole() -> None:
    citations = option_words(tuple(OPTIONS.items()))
    text = "The answer is Fiscal rather than monetary policy."
    reading = read_at(text, len("The answer is"), citations=citations)
    assert (reading.kind, reading.value) == ("value", "Fiscal rather than monetary policy")
    assert _read(text) == "C"
    cut = read_at("The answer is Folate deficiency rather than anaemia.", len("The answer is"), citations=citations)
    assert (cut.kind, cut.value) == ("value", "Folate deficiency")


@pytest.mark.parametrize(
    "text",
    [
        "The answer is (A) or (B), not (D).",  # two letters stay a hedge
        "The answer is not (B), rather than (D).",  # a retraction stays one
        "The answer is (K) rather than (D).",  # no option
    ],
)
def test_a_contrast_does_not_make_a_commitment_of_what_was_none(text: str) -> None:
    assert _read(text) is None
