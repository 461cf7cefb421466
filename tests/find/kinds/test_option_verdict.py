"""The ``option_verdict`` step kind (``choicebox.find.verdicts``): an option judged to be the
answer, "(C) is the correct answer", "Option C is correct", ", making (C) the correct answer".

What it reads, what it must not read (a negated or conditional verdict, a bare English "A", an
explanation, several letters, a letter that is no option), and what each of its parameters changes.
The modes are rule files whose chain is this one step, with ``robust``'s vocabularies unless a test
changes one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rule_files import CONCLUSION, ROBUST, TEN, Built, one_kind, robust_step


def _step(tmp_path: Path, resolve: str = "first_step", **changed: Any) -> Built:
    return one_kind(tmp_path, "option_verdict", resolve=resolve, **{**robust_step("verdict"), **changed})


@pytest.fixture(scope="module")
def verdict(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _step(tmp_path_factory.mktemp("option_verdict"))


@pytest.mark.parametrize(
    "output",
    [
        "(C) is the correct answer.",
        "Option C is correct.",
        "C is the best choice.",
        "C seems to be correct",
        "Option (C) is therefore the most appropriate.",
        "Adding them up, making (C) the correct answer.",
        "Option C: optC is correct.",  # the option cited by letter and text, then judged
        "(A) is the correct answer. Then (C) is the correct answer.",  # the last
        "So 2^4 = 16.\nTherefore option c is correct.",  # a lowercase letter named as an option
        "So 2^4 = 16.\nHence option (c) is correct.",  # ... in brackets
        "**C** is the only option that correctly captures the framework.",
        "So C is the only choice that fits.",
        "Option C (optC) is the only one consistent with this.",  # its text in brackets after it
        "Option C (optC) is correct.",
        "Assault and battery do not fit.\n\nC is the one.",  # a closing verdict closing its sentence
        "(C) would be my answer.",  # a verdict that owns the answer
        "Option C is my final choice.",
    ],
)
def test_it_reads_an_option_judged_the_answer(verdict: Built, output: str) -> None:
    assert verdict.outcome(output) == ("C", None)


def test_a_bare_capital_a_is_english_unless_named_an_option(verdict: Built) -> None:
    assert verdict.read("A is the best way to start, then B.") is None
    assert verdict.read("Option A is the best way to start.") == "A"
    assert verdict.read("In one line, a value A is correct.") is None  # inside a sentence: a name


def test_a_bare_capital_a_judged_in_a_sentence_of_its_own_is_option_a(verdict: Built) -> None:
    # No article stands before a verb: "A is correct." as a whole sentence judges option A.
    assert verdict.read("A is correct. Under the rule, the statement is hearsay.") == "A"
    assert verdict.read("**A** is the correct answer.\nIt is inherited maternally.") == "A"
    assert verdict.read("A is the best choice.") == "A"
    # Nor is an article set in bold on its own.
    assert verdict.read("Paris hosts it.\n\n**A** is the most consistent with the evidence.") == "A"
    assert verdict.read("Paris hosts it.\n\nA is the most consistent with the evidence.") is None


def test_a_verdict_asked_or_under_a_later_only_if_is_none(verdict: Built) -> None:
    assert verdict.read("**C** is the most likely answer? No, it is wrong.") is None
    assert verdict.read("**C** is the most consistent with the data only if we ignore the grain size.") is None
    assert verdict.read("**C** is the most consistent with the data.") == "C"
    assert verdict.read("(C) is the only appropriate test here.") == "C"  # "only" with its article
    assert verdict.read("I is correct.") is None  # "I" stays English


@pytest.mark.parametrize(
    "output",
    [
        "(C) is not correct.",  # negated
        "(C) is incorrect.",
        "If (C) is correct, then x.",  # a condition
        "We check whether (C) is correct.",
        "If the patient were unstable, (C) would be correct.",
        "Option C is correct because it fits.",  # an explanation in a review
        "(C) is correct for part (a)",
        "(E) is the correct answer.",  # no option
        "The answer is C.",
        "C is the only option left to check, so let us look at it.",  # a description
        "A is the only one that mentions heat.",
        "C is the one that causes it.",  # a closing verdict that does not close the sentence
        "Option C (optD) is correct.",  # another option's text in the brackets
        "(C) is not my answer.",
        "If the patient were unstable, (C) would be my answer.",
        # "only" without its article restricts the verdict: a review, not a judgement
        "Imaging such as MIBG scintigraphy (C) is only appropriate once the diagnosis is established.",
        "(C) is only correct for small angles.",
    ],
)
def test_it_reads_no_answer_without_an_option_judged_the_answer(verdict: Built, output: str) -> None:
    assert verdict.outcome(output) == (None, "no_answer")


def test_an_option_judged_true_is_a_stray_letter_only_when_no_other_is_judged(tmp_path: Path) -> None:
    weighed = _step(tmp_path, resolve=CONCLUSION)
    assert weighed.read("Option H is true.", options=TEN) == "H"
    assert weighed.read("Option H is true. Option C is false.", options=TEN) is None
    [found] = weighed.found("Option H is true.", options=TEN)
    assert found.kind == "stray"


def test_an_option_concluded_true_answers_a_question_that_asks_what_is_true(tmp_path: Path) -> None:
    weighed = _step(tmp_path, resolve=CONCLUSION)
    asks = "Which one of the following must be true?"
    review = "(A) G is second. True in one order only.\n(D) K is last. True in both.\n\n"
    for output in (f"{review}Therefore (D) must be true.", f"{review}So, **D** is true.", "(A) is false.\nThus, (D) is true."):
        assert weighed.read(output, options=TEN, question=asks) == "D", output
    # not where the question asks what is not so, nor without a conclusion word, nor supposed
    assert weighed.read(f"{review}Therefore (D) must be true.", options=TEN, question="Which CANNOT be true?") is None
    assert weighed.read(f"{review}(D) must be true.", options=TEN, question=asks) is None
    assert weighed.read(f"{review}If so, (D) must be true.", options=TEN, question=asks) is None
    assert weighed.read(f"{review}Therefore (D) must be true, if the order holds.", options=TEN, question=asks) is None
    assert weighed.read(f"{review}Therefore (D) must be true.", options=TEN, question="Which is largest?") is None
    # "if true" supposes; "fails to be true" asks what is not so; two options said true are no one
    weakens = "Which of the following, if true, most seriously weakens the argument?"
    assert weighed.read(f"{review}So, **D** is true.", options=TEN, question=weakens) is None
    assert weighed.read(f"{review}Therefore (D) must be true.", options=TEN, question="Which fails to be true?") is None
    assert weighed.read("Thus (D) must be true. (E) must be true as well.", options=TEN, question=asks) is None
    assert _step(tmp_path, resolve=CONCLUSION, openers=[]).read(f"{review}Therefore (D) must be true.", options=TEN, question=asks) is None


@pytest.mark.parametrize(
    "output", ["(A) or (B) is correct.", "Either (A) or (B) is correct.", "A or B is the best choice.", "Option A or option B is correct."]
)
def test_several_letters_judged_together_are_no_answer(verdict: Built, output: str) -> None:
    assert verdict.read(output) is None


def test_in_robust_several_letters_judged_together_earn_nothing() -> None:
    assert [ROBUST.grade("(A) or (B) is correct.", expected=gold).reward for gold in "ABCD"] == [0.0] * 4


def test_a_letter_that_is_not_an_option_is_not_an_answer(verdict: Built) -> None:
    assert verdict.outcome("B was close, but (E) is the correct answer.") == (None, "not_an_option")


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_verdicts_are_the_words_that_judge(tmp_path: Path, verdict: Built) -> None:
    assert verdict.read("B is the best choice.") == "B"
    correct_only = _step(tmp_path, verdicts=["correct"])
    assert correct_only.read("B is the best choice.") is None
    assert correct_only.read("B is correct.") == "B"


def test_parameter_verbs_link_the_letter_to_the_verdict(tmp_path: Path, verdict: Built) -> None:
    assert verdict.read("C seems to be correct") == "C"
    is_only = _step(tmp_path, verbs=["is"])
    assert is_only.read("C seems to be correct") is None
    assert is_only.read("C is correct") == "C"


@pytest.mark.parametrize(
    "output",
    [
        "If (C) is correct, then x.",
        "If the patient were unstable, (C) would be correct.",
        # a condition right after the verdict
        "C would be correct only if the rate were fixed.",
        "(C) is the best choice only if we ignore friction.",
        "C would be the best choice if we ignored friction.",
    ],
)
def test_parameter_conditions_make_a_verdict_hypothetical(tmp_path: Path, verdict: Built, output: str) -> None:
    assert verdict.read(output) is None
    assert _step(tmp_path, conditions=[]).read(output) == "C"


def test_parameter_which_picks_the_first_or_the_last_verdict(tmp_path: Path, verdict: Built) -> None:
    output = "(A) is the correct answer. Then (C) is the correct answer."
    assert verdict.read(output) == "C"
    assert _step(tmp_path, which="first").read(output) == "A"


def test_parameter_closing_verdicts_judge_only_where_they_close_the_sentence(tmp_path: Path, verdict: Built) -> None:
    assert verdict.read("So C is the one.") == "C"
    without = _step(tmp_path, closing_verdicts=[])
    assert without.read("So C is the one.") is None
    assert without.read("C is the best choice.") == "C"


def test_a_condition_that_restates_the_question_keeps_the_verdict(verdict: Built) -> None:
    # "when air resistance is neglected" is the question's own premise, not a supposition.
    assert verdict.read("Thus (C) is the correct answer when air resistance is neglected.") == "C"


# --- an option named by its text alone -----------------------------------------------------------

_CAUSES: dict[str, str] = {
    "A": "Folate deficiency",
    "B": "Vitamin B12 deficiency",
    "C": "Deficiency",  # the last word of B's text: B's sentence must not read as C
    "D": "0.0871",
}


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Hence, vitamin B12 deficiency is the correct answer.", "B"),
        ("Vitamin B12 deficiency is correct.", "B"),
        ('So "Vitamin B12 deficiency" is the best choice.', "B"),
        ("**Therefore**, **vitamin B12 deficiency** is the right answer, given the findings.", "B"),
        ("Thus, the option folate deficiency is the correct answer.", "A"),
        ("Deficiency is the correct answer.", "C"),
        ("It grows by 8.71% a year.\nSo 0.0871 is the correct answer.", "D"),  # a value's own "."
    ],
)
def test_an_options_whole_text_as_the_subject_is_judged_like_its_letter(
    verdict: Built, output: str, expected: str
) -> None:
    assert verdict.read(output, options=_CAUSES) == expected


@pytest.mark.parametrize(
    "output",
    [
        "Folate deficiency or vitamin B12 deficiency is the correct answer.",  # two texts
        "Folate deficiency is not the correct answer.",
        "If the smear were microcytic, folate deficiency would be the correct answer.",
        "Folate deficiency would be correct only if the dose were doubled.",
        "Folate deficiency is the best studied of these.",  # a description, not a verdict
        "The cause of vitamin B12 deficiency is correct diet.",  # the text is not the subject
        "We now know vitamin B12 deficiency is correct.",  # words before it that open no conclusion
        "Folate deficiency is correct because the smear is normal.",
    ],
)
def test_an_options_text_judged_with_others_denied_or_supposed_is_no_answer(verdict: Built, output: str) -> None:
    assert verdict.read(output, options=_CAUSES) is None


def test_parameter_openers_turn_on_the_text_subject_and_list_its_opening_words(tmp_path: Path, verdict: Built) -> None:
    assert verdict.read("Hence, vitamin B12 deficiency is the correct answer.", options=_CAUSES) == "B"
    without = _step(tmp_path, openers=[])
    assert without.read("Hence, vitamin B12 deficiency is the correct answer.", options=_CAUSES) is None
    assert without.read("Vitamin B12 deficiency is the correct answer.", options=_CAUSES) is None
    assert without.read("(B) is the correct answer.", options=_CAUSES) == "B"  # letters as before
    only_so = _step(tmp_path, openers=["so"])
    assert only_so.read("So vitamin B12 deficiency is correct.", options=_CAUSES) == "B"
    assert only_so.read("Hence, vitamin B12 deficiency is correct.", options=_CAUSES) is None


def test_a_text_judged_the_answer_says_how_it_was_composed(verdict: Built) -> None:
    (found,) = verdict.found("Hence, vitamin B12 deficiency is the correct answer.", options=_CAUSES)
    assert (found.letters, found.layout, found.payload) == (("B",), "before the verdict", "option's text")
    assert found.cue == "is the correct answer"
