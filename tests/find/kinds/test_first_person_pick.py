"""The ``first_person_pick`` step kind (``choicebox.find.statements``): a first-person pick, "I'd go
with B", "we select (C)", "I think it's B", a superlative one, "the best one is C", or an opening
with no subject, "Going with D."

What it reads, what it must not read (a negated pick, a superlative in prose, an option's text with
no letter, several letters, a letter that is no option), and what each of its parameters changes.
The modes are rule files whose chain is this one step, with ``robust``'s vocabularies unless a test
changes one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rule_files import ROBUST, Built, one_kind, robust_step


def _step(tmp_path: Path, resolve: str = "first_step", **changed: Any) -> Built:
    return one_kind(tmp_path, "first_person_pick", resolve=resolve, **{**robust_step("pick"), **changed})


@pytest.fixture(scope="module")
def pick(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _step(tmp_path_factory.mktemp("first_person_pick"))


@pytest.mark.parametrize(
    "output",
    [
        "I'd go with B",
        "I choose option B.",
        "We select (B).",
        "After thinking, I will select (B).",
        "I think it's B",
        "I'm fairly confident it's B, though D is tempting.",
        "I'll change my answer to B.",
        "I chose B because it fits.",
        "I will go with\nB",  # the payload on the next line
        "I choose B. optB",  # the letter and its option's text
        "the best one is B.",
        "The closest would be (B).",
        "The most appropriate next step is (B), obtaining more data.",
        "None is exactly 15.2 g, but the closest is B (15 g).",  # an apposition in brackets
        "Checking the units once more.\n\nGoing with **B**.",
        "I'd go with A. Later, I'd go with B.",  # the last
        "I choose optB.",  # an option's whole text, no letter (rule 5)
        "Not A. Not C. It's B.",  # an opening with no subject
        "The circuit is in series.\n\nGo with B.",
        "If I had to pick one, B.",  # a forced choice picks
        "If I have to commit to one: B",
        "If forced to choose: (B)",
        # five words of what the superlative names
        "Therefore, the most appropriate next step in the diagnosis is (B).",
        # an option's text, then its abbreviation
        "Therefore, the most appropriate next step in diagnosis is optB (OB), which is the modality of choice.",
    ],
)
def test_it_reads_a_first_person_pick(pick: Built, output: str) -> None:
    assert pick.outcome(output) == ("B", None)


@pytest.mark.parametrize(
    "output",
    [
        "I would not choose B.",  # negated
        "the best is A good idea",  # a superlative in prose: the letter does not close its clause
        "I choose the second approach.",  # no letter, and no option's text
        "It's a good idea to check. It is A good start.",  # "it's" opening prose, "A" an article
        "I choose E.",  # no option
        "We are going with the flow of the argument here.",
        "The answer is B.",
        "If I had to choose between B and D, I would need more data.",
    ],
)
def test_it_reads_no_answer_without_a_pick_of_one_letter(pick: Built, output: str) -> None:
    assert pick.outcome(output) == (None, "no_answer")


@pytest.mark.parametrize(
    "output",
    ["If the question meant kelvin, I would choose C. Which scale is meant?", "If the gas were ideal, I would go with C."],
)
def test_a_supposed_pick_is_no_answer(pick: Built, output: str) -> None:
    assert pick.read(output) is None
    assert ROBUST.read(output) is None


def test_one_letter_per_condition_is_ambiguous_after_a_pick_too(pick: Built) -> None:
    # The same reading as after an answer cue (``statements._statement``, shared by every cue).
    assert pick.outcome("I'd choose (B) if the volume is fixed, but (D) if the pressure is.") == (None, "ambiguous")
    assert pick.outcome("I'd choose (B) if forced.") == ("B", None)


def test_several_letters_are_ambiguous(pick: Built) -> None:
    assert pick.outcome("I'll go with A or B.") == (None, "ambiguous")


def test_a_letter_that_is_not_an_option_is_not_an_answer_under_a_weighing_policy(tmp_path: Path) -> None:
    assert _step(tmp_path, resolve="last_position").outcome("B was close, but I choose E.") == (None, "not_an_option")


def test_a_letter_that_is_not_an_option_is_not_an_answer(pick: Built) -> None:
    assert pick.outcome("B was close, but I choose E.") == (None, "not_an_option")


@pytest.mark.parametrize(
    "output",
    [
        "At first I'd say the answer is (B).\n\nWait — that's not right. So I withdraw (B).\n\nv = sqrt(g",
        "**Answer: B**\n\nThe factor is 4.355.\n\n*Edit:* Rethinking it, I withdraw B.",
        "The answer is (C).\n\nI'm no longer confident in (C); it depends on the state.",
        "The answer is (B). I take back B.",
    ],
)
def test_a_letter_withdrawn_in_the_first_person_leaves_no_answer(output: str) -> None:
    assert ROBUST.outcome(output) == (None, "no_answer")


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        ("I withdraw (B). The answer is (C).", "C"),  # a later commitment still counts
        ("The answer is (B). I take back B, the answer is C.", "C"),
        ("The answer is (C). Earlier I said B; I withdraw B.", "C"),  # it withdraws B, not C
        ("If I were wrong, I would withdraw (B). The answer is (B).", "B"),  # supposed
        ("The answer is (B). If I'm wrong, I retract (B).", "B"),  # a condition, no modal
        ("The answer is (B). Unless it means Paris, Texas, I stand by it; otherwise I retract (B).", "B"),
        ("Suppose I withdraw (B); then nothing fits, which is absurd. The answer is (B).", "B"),
        ("A student might say 'I take back B.' The answer is (B).", "B"),  # quoted
        ("The answer is (B).\n\n> I take back B.\n\nThat reply was wrong.", "B"),  # a quoted line
    ],
)
def test_a_first_person_withdrawal_withdraws_only_its_letter_before_it(output: str, letter: str) -> None:
    assert ROBUST.read(output) == letter


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_verbs_follow_i_or_we(tmp_path: Path, pick: Built) -> None:
    assert pick.read("I'd go with B") == "B"
    choose_only = _step(tmp_path, verbs=["choose"])
    assert choose_only.read("I'd go with B") is None
    assert choose_only.read("I choose B") == "B"


def test_parameter_superlatives_follow_the(tmp_path: Path, pick: Built) -> None:
    assert pick.read("the best one is C.") == "C"
    assert _step(tmp_path, superlatives=[]).read("the best one is C.") is None
    assert _step(tmp_path, superlatives=["closest"]).read("the best one is C.") is None


def test_parameter_openings_pick_with_no_subject_where_they_open_a_sentence(tmp_path: Path, pick: Built) -> None:
    assert pick.read("Going with D.") == "D"
    assert pick.read("Now: going with D.") == "D"
    assert pick.read("They were going with D.") is None  # inside its sentence
    assert _step(tmp_path, openings=[]).read("Going with D.") is None


def test_a_pick_between_letters_is_a_hedge() -> None:
    from rule_files import ROBUST

    assert ROBUST.outcome("So the answer is A. But D fails too. I'm torn between A and D; I can't pick one.") == (None, "ambiguous")
    assert ROBUST.read("I was torn between A and D at first. After checking, the answer is D.") == "D"


@pytest.mark.parametrize(
    "output",
    [
        "Well, going with D would require h = 1.28 m, which contradicts the data.",  # a subject
        "Still, going with D means ignoring the height.",
        "But it's C only if the height is vertical, and it is not.",  # a supposition
        "So it's C? No wait, that assumed g = 10.",  # a question
    ],
)
def test_an_opening_whose_letter_is_a_subject_a_supposition_or_asked_picks_nothing(pick: Built, output: str) -> None:
    assert pick.read(output) is None
    assert pick.read("It's C if we ignore friction.") == "C"  # a letter under a condition alone stays (rule 4)


def test_parameter_leading_words_may_stand_before_an_opening(tmp_path: Path, pick: Built) -> None:
    assert pick.read("Both B and D fit. But if I have to pick one, D, because it explains more.") == "D"
    assert pick.read("Both fit. Well, going with D.") == "D"
    assert pick.read("Both fit. Nobut going with D.") is None  # a word, not a leading word
    assert _step(tmp_path, leading_words=[]).read("Both fit. Well, going with D.") is None
    assert _step(tmp_path, leading_words=[]).read("Both fit. Going with D.") == "D"


def test_parameter_conditions_make_a_conditional_pick_hypothetical(tmp_path: Path, pick: Built) -> None:
    supposed = "If the gas were ideal, I would go with B."
    assert pick.read(supposed) is None
    assert pick.read("Assuming the gas is ideal, I would choose B.") is None
    # the condition is the choice itself: a pick
    assert pick.read("If I had to choose, I would pick B.") == "B"
    assert pick.read("If forced to choose, I would go with B.") == "B"
    # not conditional: "I'd go with" in a sentence that opens with "if" still picks
    assert pick.read("If we look at all the options, I'd go with B.") == "B"
    assert _step(tmp_path, conditions=[]).read(supposed) == "B"


def test_parameter_withdrawals_retract_the_letter_after_them(tmp_path: Path) -> None:
    found = _step(tmp_path, resolve="conclusion").found("I withdraw (B).")
    assert [(c.kind, c.letters) for c in found] == [("retraction", ("B",))]
    assert _step(tmp_path, resolve="conclusion", withdrawals=[]).found("I withdraw (B).") == []


def test_parameter_which_picks_the_first_or_the_last_pick(tmp_path: Path, pick: Built) -> None:
    output = "I'd go with A. Later, I'd go with C."
    assert pick.read(output) == "C"
    assert _step(tmp_path, which="first").read(output) == "A"
