"""Tests of choicebox.scoring: the documented examples, the fixed faults, and never raising."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox.scoring import (
    Score,
    ScorerInput,
    answer_line,
    exact_match,
    fuzzy_match,
    multichoice_regex,
    numeric_match,
)


def _in(response: str, target: str, **metadata: Any) -> ScorerInput:
    return ScorerInput(response=response, target=target, metadata=metadata)


# ------------------------------------------------------------------------------ the types


def test_score_reads_like_the_evaluators_dict() -> None:
    score = Score(correct=True, extracted="B")
    assert score["correct"] is True
    assert score["extracted"] == "B"
    assert dict(score) == {"correct": True, "extracted": "B"}
    assert list(score) == ["correct", "extracted"]
    with pytest.raises(KeyError):
        score["needs_judge"]


def test_scorer_input_is_frozen_with_a_frozen_copy_of_metadata() -> None:
    metadata: dict[str, Any] = {"correct_answers": ["x"]}
    sample = ScorerInput(response="r", target="t", metadata=metadata)
    metadata["correct_answers"] = ["changed"]
    assert sample.metadata["correct_answers"] == ["x"]
    with pytest.raises(TypeError):
        sample.metadata["new"] = 1  # type: ignore[index]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        sample.response = "other"  # type: ignore[misc]
    assert ScorerInput(response="r", target="t").metadata == {}
    # Hashable although metadata is a mapping, and consistent with equality.
    assert hash(sample) == hash(ScorerInput(response="r", target="t", metadata={"a": [1]}))


def test_scorer_input_rejects_non_strings() -> None:
    with pytest.raises(TypeError):
        ScorerInput(response=None, target="A")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ScorerInput(response="A", target="A", metadata=["not", "a", "mapping"])  # type: ignore[arg-type]


# ------------------------------------------------------------------- the documented examples


def test_doc_exact_match() -> None:
    assert exact_match(_in("  Paris.  ", "paris"))["correct"] is True


def test_doc_multichoice_regex() -> None:
    sample = _in("The answer is B because...\nAnswer: B", "B")
    assert dict(multichoice_regex(sample)) == {"correct": True, "extracted": "B"}
    assert multichoice_regex(sample, pattern=r"(?i)Answer\s*:\s*([A-J])") == Score(
        correct=True, extracted="B"
    )


def test_doc_answer_line() -> None:
    sample = _in("Step 1: ...\nAnswer: 42", "42")
    assert dict(answer_line(sample)) == {"correct": True, "extracted": "42"}


def test_doc_numeric_match() -> None:
    sample = _in("The total is 20 + 22 = 42", "42")
    assert dict(numeric_match(sample)) == {"correct": True, "extracted": "42"}


def test_doc_fuzzy_match() -> None:
    sample = _in("The capital is Canberra.", "Canberra", correct_answers=["Canberra", "canberra"])
    assert dict(fuzzy_match(sample)) == {
        "correct": True,
        "extracted": "The capital is Canberra.",
    }


# ---------------------------------------------------------------------- the faults, fixed


def test_fixed_answer_because_is_not_b() -> None:
    assert multichoice_regex(_in("Answer: Because the sky is blue.", "B")) == Score(
        correct=False, extracted=None
    )
    # Nor a letter running into a number, nor "Answer: Dog" into D.
    assert multichoice_regex(_in("Answer: C4 is an explosive", "C"))["extracted"] is None
    assert multichoice_regex(_in("Answer: Dog", "D"))["extracted"] is None
    # The letter still reads when it stands alone, however punctuated.
    for text in ("Answer: B", "Answer: (B)", "Answer: B.", "Answer:B) because", "answer : b"):
        assert multichoice_regex(_in(text, "B"))["correct"] is True, text


def test_fixed_numeric_match_compares_whole_numbers_by_value() -> None:
    assert numeric_match(_in("The answer is 100", "10")) == Score(correct=False, extracted="100")
    assert numeric_match(_in("The answer is 10", "100"))["correct"] is False
    assert numeric_match(_in("x = 42.0", "42")) == Score(correct=True, extracted="42.0")
    assert numeric_match(_in("x = 42", "42.000"))["correct"] is True
    assert numeric_match(_in("It costs $1,000.", "1000")) == Score(correct=True, extracted="1,000")
    assert numeric_match(_in("so y = -3", "-3"))["correct"] is True
    assert numeric_match(_in("so y = −3", "-3"))["correct"] is True  # Unicode minus
    assert numeric_match(_in("1e3 in total", "1000"))["correct"] is True
    assert numeric_match(_in("between 3 and 4.5", "4.5"))["correct"] is True
    assert numeric_match(_in("42", "forty-two"))["correct"] is False


@pytest.mark.parametrize("scorer", [exact_match, fuzzy_match, answer_line, numeric_match])
@pytest.mark.parametrize("response", ["", "   ", "\n\t "])
@pytest.mark.parametrize("target", ["", " ", "42"])
def test_fixed_empty_response_never_matches(scorer: Any, response: str, target: str) -> None:
    assert scorer(_in(response, target)) == Score(correct=False, extracted=None)


@pytest.mark.parametrize("response", ["", "   "])
@pytest.mark.parametrize("target", ["", " "])
def test_fixed_empty_response_never_matches_multichoice(response: str, target: str) -> None:
    empty = Score(correct=False, extracted=None)
    assert multichoice_regex(_in(response, target)) == empty
    assert multichoice_regex(_in(response, target), pattern=r"^\s*$") == empty
    assert multichoice_regex(_in(response, target), pattern=r"(.*)") == empty


def test_empty_target_matches_nothing() -> None:
    assert exact_match(_in("Paris", ""))["correct"] is False
    assert exact_match(_in("...", "!!"))["correct"] is False  # both normalise to nothing
    assert fuzzy_match(_in("Paris", ""))["correct"] is False
    assert answer_line(_in("Answer: x", ""))["correct"] is False
    assert multichoice_regex(_in("Answer: B", ""))["correct"] is False


# -------------------------------------------------------------------------------- details


def test_exact_match_normalisation() -> None:
    assert exact_match(_in("The  Eiffel   Tower!", "eiffel tower"))["correct"] is True
    assert exact_match(_in("an apple", "Apple."))["correct"] is True
    assert exact_match(_in("Paris, France", "paris"))["correct"] is False
    # A lone article is an answer in its own right: option "A" must equal "A".
    assert exact_match(_in("A", "a"))["correct"] is True
    assert exact_match(_in("A", "B"))["correct"] is False


def test_fuzzy_match_is_word_bounded() -> None:
    assert fuzzy_match(_in("I like concatenation", "cat"))["correct"] is False
    assert fuzzy_match(_in("The cat sat.", "Cat"))["correct"] is True
    assert fuzzy_match(_in("It is Sydney.", "Canberra", correct_answers=["Sydney"]))["correct"]
    assert fuzzy_match(_in("It is Sydney.", "Canberra", correct_answers="Sydney"))["correct"]
    assert fuzzy_match(_in("Roughly 42 of them", "x", correct_answers=[42, None]))["correct"]
    assert not fuzzy_match(_in("It is Perth.", "Canberra", correct_answers=["Sydney"]))["correct"]


def test_multichoice_regex_last_match_wins_and_letters() -> None:
    text = "Answer: A\nWait, no.\nAnswer: C"
    assert multichoice_regex(_in(text, "C")) == Score(correct=True, extracted="C")
    assert multichoice_regex(_in("Answer: F", "F"))["extracted"] is None  # not in A-D
    assert multichoice_regex(_in("Answer: F", "F"), letters="ABCDEF")["correct"] is True
    assert multichoice_regex(_in("Answer: B", "B"), letters="")["extracted"] is None
    # Compared case-insensitively; fullwidth and Arabic letters read as the rule steps read them.
    assert multichoice_regex(_in("answer: b", "B"))["correct"] is True
    assert multichoice_regex(_in("Ａｎｓｗｅｒ：Ｂ", "B"))["correct"] is True
    assert multichoice_regex(_in("Answer: ب", "B"))["correct"] is True


def test_multichoice_regex_custom_patterns_never_raise() -> None:
    sample = _in("Answer: B", "B")
    assert multichoice_regex(sample, pattern="([") == Score(correct=False, extracted=None)
    # Without a group the whole match is the answer.
    assert multichoice_regex(sample, pattern=r"(?<=Answer: )\w") == Score(
        correct=True, extracted="B"
    )
    # An optional group that did not take part is skipped, not read as None.
    assert multichoice_regex(sample, pattern=r"Answer: (X)?") == Score(
        correct=False, extracted=None
    )
    # A catastrophic pattern ends within its time bound instead of hanging.
    slow = _in("a" * 40 + "!", "a")
    assert multichoice_regex(slow, pattern=r"(a+)+$") == Score(correct=False, extracted=None)


def test_answer_line_math_normalisation() -> None:
    cases = [
        ("Answer: $\\frac{1}{2}$", "1/2"),
        ("Answer: \\frac12", "0.5"),
        ("**Answer:** $42$.", "42"),
        ("Answer: 42.0", "42"),
        ("Answer: \\text{Paris}", "paris"),
        ("Answer: \\dfrac{3}{4}", "\\frac{3}{4}"),
        ("Answer: 1,000", "1000"),
        ("Answer: x + 1", "x+1"),
        ("Final Answer: 7", "7"),
    ]
    for response, target in cases:
        assert answer_line(_in(response, target))["correct"] is True, (response, target)
    assert answer_line(_in("Answer: 0.51", "1/2"))["correct"] is False
    assert answer_line(_in("Answer: 7", "17"))["correct"] is False


def test_answer_line_reads_the_last_non_empty_answer_line() -> None:
    text = "Answer: 3\nHmm, let me redo that.\nAnswer: 4\nDone."
    assert answer_line(_in(text, "4")) == Score(correct=True, extracted="4")
    assert answer_line(_in("Answer: 5\nAnswer:", "5"))["extracted"] == "5"
    assert answer_line(_in("no marker here: 42", "42")) == Score(correct=False, extracted=None)


# --------------------------------------------------------------------------- never raising

_SCORERS = [exact_match, fuzzy_match, multichoice_regex, answer_line, numeric_match]
_TEXT_WITH_ANSWERS = st.one_of(
    st.text(),
    st.lists(
        st.sampled_from(["Answer:", " ", "\n", "$", "\\frac{", "}", "{", "1", ",", ".", "e9",
                         "-", "B", "(", ")", "the", "**", "\\text{", "/", "0"]),
    ).map("".join),
)  # fmt: skip


@pytest.mark.parametrize("scorer", _SCORERS)
@settings(max_examples=300, deadline=None)
@given(response=_TEXT_WITH_ANSWERS, target=_TEXT_WITH_ANSWERS)
def test_scorers_never_raise(scorer: Any, response: str, target: str) -> None:
    score = scorer(_in(response, target, correct_answers=[target, response[:3]]))
    assert isinstance(score, Score)
    assert isinstance(score.correct, bool)
    assert score.extracted is None or isinstance(score.extracted, str)
    if not response.strip():
        assert score == Score(correct=False, extracted=None)


@settings(max_examples=200, deadline=None)
@given(response=st.text(), pattern=st.text(max_size=20))
def test_multichoice_regex_never_raises_on_any_pattern(response: str, pattern: str) -> None:
    assert isinstance(multichoice_regex(_in(response, "A"), pattern=pattern), Score)


@settings(max_examples=200, deadline=None)
@given(value=st.integers(min_value=-(10**12), max_value=10**12), text=st.text(max_size=30))
def test_numeric_match_finds_the_last_whole_number(value: int, text: str) -> None:
    response = f"{text} so the result is {value}"
    assert numeric_match(_in(response, str(value)))["correct"] is True
    assert numeric_match(_in(response, f"{value}.0"))["correct"] is True
    # Never a prefix of the number: a number with a digit dropped is not a match.
    if abs(value) >= 10:
        assert numeric_match(_in(response, str(value)[:-1]))["correct"] is False


def test_multichoice_regex_does_not_read_an_article_as_a_letter() -> None:
    """The default pattern is caseless on its label only: "a combination" is no answer A."""
    score = multichoice_regex(ScorerInput(response="Answer: a combination of B and C", target="A"))
    assert score == Score(correct=False, extracted=None)
