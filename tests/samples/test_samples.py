"""Samples: the style picks the class, every invalid sample is refused with a ``SampleError`` that
names the field, and the two families convert into each other without losing the answer."""

from __future__ import annotations

import string
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from choicebox import (
    MCQASample,
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
    SampleError,
    Template,
    templates,
)

CHOICES = ["Paris", "Lyon", "Nice"]


def _refusal(build: Any, field: str) -> SampleError:
    """Call ``build`` and return the ``SampleError`` it must raise for ``field``."""
    with pytest.raises(SampleError) as caught:
        build()
    error = caught.value
    assert isinstance(error, ValueError)
    assert field == error.field
    assert str(error).startswith(f"{field}: ")
    return error


# --- the context/choices family ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("style", "expected_class"),
    [
        ("qa", MultipleChoiceQuestionAnswerSample),
        ("continuation", MultipleChoiceCompletionSample),
    ],
)
def test_style_picks_the_sample_class(style: Any, expected_class: type) -> None:
    sample = MultipleChoiceSample(context="Capital?", choices=CHOICES, answer_index=0, style=style)
    assert expected_class is type(sample)
    assert style == sample.style
    assert isinstance(sample, MultipleChoiceSample)


def test_continuation_is_the_default_style() -> None:
    sample = MultipleChoiceSample(
        context="The cat sat on the", choices=["mat", "sky"], answer_index=0
    )
    assert MultipleChoiceCompletionSample is type(sample)


def test_sample_exposes_the_answer_text_and_freezes_its_fields() -> None:
    extra = {"id": 1}
    sample = MultipleChoiceSample(
        context="Capital?", choices=CHOICES, answer_index=2, style="qa", extra=extra
    )
    extra["id"] = 2
    expected_answer = "Nice"
    assert expected_answer == sample.answer
    expected_choices = ("Paris", "Lyon", "Nice")
    assert expected_choices == sample.choices
    expected_extra = {"id": 1}
    assert expected_extra == dict(sample.extra)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        sample.answer_index = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        sample.extra["id"] = 3  # type: ignore[index]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"context": ""}, "context"),
        ({"context": "   \n\t"}, "context"),
        ({"context": 5}, "context"),
        ({"choices": ["only"]}, "choices"),
        ({"choices": []}, "choices"),
        ({"choices": "ab"}, "choices"),
        ({"choices": 5}, "choices"),
        ({"choices": ["a", 2]}, "choices[1]"),
        ({"answer_index": 3}, "answer_index"),
        ({"answer_index": -1}, "answer_index"),
        ({"answer_index": True}, "answer_index"),
        ({"answer_index": 1.0}, "answer_index"),
        ({"answer_index": "1"}, "answer_index"),
        ({"style": "quiz"}, "style"),
        ({"extra": {"style": "qa"}}, "extra.style"),
        ({"extra": {"task_type": "x"}}, "extra.task_type"),
    ],
)
@pytest.mark.parametrize("style", ["qa", "continuation"])
def test_invalid_multiple_choice_sample_is_refused_naming_the_field(
    kwargs: dict[str, Any], field: str, style: str
) -> None:
    arguments: dict[str, Any] = {
        "context": "Capital?",
        "choices": CHOICES,
        "answer_index": 0,
        "style": style,
    }
    arguments.update(kwargs)
    _refusal(lambda: MultipleChoiceSample(**arguments), field)


def test_answer_index_refusal_states_the_range() -> None:
    error = _refusal(
        lambda: MultipleChoiceSample(context="c", choices=CHOICES, answer_index=3), "answer_index"
    )
    assert "3 is outside the 3 choices (0..2)" in str(error)


def test_unknown_style_refusal_lists_the_styles() -> None:
    error = _refusal(
        lambda: MultipleChoiceSample(context="c", choices=CHOICES, answer_index=0, style="quiz"),  # type: ignore[call-overload]
        "style",
    )
    assert "'quiz'" in str(error)
    assert "continuation, qa" in str(error)


@pytest.mark.parametrize(
    ("cls", "wrong_style"),
    [
        (MultipleChoiceCompletionSample, "qa"),
        (MultipleChoiceQuestionAnswerSample, "continuation"),
    ],
)
def test_style_specific_class_refuses_the_other_style(cls: Any, wrong_style: str) -> None:
    error = _refusal(
        lambda: cls(context="c", choices=CHOICES, answer_index=0, style=wrong_style), "style"
    )
    assert cls.__name__ in str(error)


@pytest.mark.parametrize(
    "cls", [MultipleChoiceCompletionSample, MultipleChoiceQuestionAnswerSample]
)
def test_style_specific_class_fills_in_its_style(cls: Any) -> None:
    sample = cls(context="c", choices=CHOICES, answer_index=0)
    assert cls is type(sample)
    assert sample == MultipleChoiceSample(
        context="c", choices=CHOICES, answer_index=0, style=sample.style
    )


# --- the lettered question family --------------------------------------------------------------


def _mcqa(**overrides: Any) -> MCQASample:
    arguments: dict[str, Any] = {
        "question": "Which is a prime?",
        "options": {"A": "4", "B": "6", "C": "7"},
        "expected_answer": "C",
    }
    arguments.update(overrides)
    return MCQASample(**arguments)


def test_mcqa_sample_keeps_its_letters_in_order() -> None:
    sample = _mcqa(options=[("Z", "4"), ("b", "6"), ("Ж", "7")], expected_answer="Ж")
    expected_letters = ("Z", "b", "Ж")
    assert expected_letters == sample.letters
    expected_text = "7"
    assert expected_text == sample.answer_text
    expected_mode = "strict_single_letter_boxed"
    assert expected_mode == sample.grading_mode == MCQASample.DEFAULT_GRADING_MODE


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"question": ""}, "question"),
        ({"question": "  \n"}, "question"),
        ({"question": None}, "question"),
        ({"options": [("A", "4"), ("A", "6")], "expected_answer": "A"}, "options[1]"),
        ({"options": {"AB": "4", "C": "7"}}, "options[0]"),
        ({"options": {"1": "4", "C": "7"}}, "options[0]"),
        ({"options": {"": "4", "C": "7"}}, "options[0]"),
        ({"options": {"A": "4", "C": ""}}, "options.C"),
        ({"options": {"A": "4", "C": "   "}}, "options.C"),
        ({"options": {"A": "4", "C": 7}}, "options.C"),
        ({"options": ["4", "7"]}, "options[0]"),
        ({"options": {"C": "7"}}, "options"),
        ({"expected_answer": "E"}, "expected_answer"),
        ({"expected_answer": "c"}, "expected_answer"),
        ({"expected_answer": 2}, "expected_answer"),
        ({"grading_mode": ""}, "grading_mode"),
        ({"extra": {"options": []}}, "extra.options"),
        ({"extra": {"uuid": "x"}}, "extra.uuid"),
    ],
)
def test_invalid_mcqa_sample_is_refused_naming_the_field(
    overrides: dict[str, Any], field: str
) -> None:
    _refusal(lambda: _mcqa(**overrides), field)


def test_expected_answer_refusal_lists_the_letters() -> None:
    error = _refusal(lambda: _mcqa(expected_answer="E"), "expected_answer")
    assert "'E' is not one of the option letters A, B, C" in str(error)


@pytest.mark.parametrize(
    ("output_regex", "field"),
    [
        (5, "template.output_regex"),
        ({"x": 1}, "template.output_regex"),
        (["ok", 5], "template.output_regex[1]"),
    ],
)
def test_template_refuses_a_regex_that_is_not_text(output_regex: Any, field: str) -> None:
    _refusal(lambda: Template(output_regex=output_regex), field)


def test_template_refuses_extra_keys_named_like_its_fields() -> None:
    _refusal(lambda: Template(extra={"template_id": "x"}), "template.extra.template_id")


@pytest.mark.parametrize(
    ("output_regex", "expected"), [(None, ()), ("a", ("a",)), (["a", "b"], ("a", "b"))]
)
def test_template_takes_one_regex_or_several(output_regex: Any, expected: tuple[str, ...]) -> None:
    assert expected == Template(output_regex=output_regex).output_regex


# --- conversions between the families ----------------------------------------------------------


def test_mcqa_converts_to_a_question_answer_sample() -> None:
    sample = _mcqa(uuid="u-1", metadata={"src": "x"}, extra={"reward_profiles": []})
    converted = sample.to_multiple_choice()
    expected = MultipleChoiceQuestionAnswerSample(
        context="Which is a prime?",
        choices=["4", "6", "7"],
        answer_index=2,
        extra={"uuid": "u-1", "metadata": {"src": "x"}, "reward_profiles": []},
    )
    assert expected == converted
    assert MultipleChoiceQuestionAnswerSample is type(converted)


def test_mcqa_converts_to_a_completion_sample_when_asked() -> None:
    converted = _mcqa().to_multiple_choice(style="continuation")
    assert MultipleChoiceCompletionSample is type(converted)
    expected_extra: dict[str, Any] = {}
    assert expected_extra == dict(converted.extra)  # no uuid or metadata: nothing invented


def test_multiple_choice_converts_to_an_mcqa_sample_with_a_rendered_prompt() -> None:
    sample = MultipleChoiceSample(
        context="Capital of France?",
        choices=CHOICES,
        answer_index=0,
        style="qa",
        extra={"uuid": "u-2", "metadata": [1, 2], "source": "atlas"},
    )
    converted = MCQASample.from_multiple_choice(sample, template="answer_colon")
    expected_options = {"A": "Paris", "B": "Lyon", "C": "Nice"}
    assert expected_options == dict(converted.options)
    expected_answer = "A"
    assert expected_answer == converted.expected_answer
    expected_uuid = "u-2"
    assert expected_uuid == converted.uuid
    expected_metadata = [1, 2]
    assert expected_metadata == converted.metadata
    expected_extra = {"source": "atlas"}
    assert expected_extra == dict(converted.extra)
    spec = templates()["answer_colon"]
    assert spec.grading_mode == converted.grading_mode
    assert converted.template is not None
    assert spec.output_regex == converted.template.output_regex
    expected_prompt = spec.render("Capital of France?", expected_options)
    assert converted.responses_create_params is not None
    assert expected_prompt == converted.responses_create_params["input"][0]["content"]


def test_multiple_choice_converts_with_given_letters() -> None:
    sample = MultipleChoiceSample(context="c", choices=CHOICES, answer_index=1)
    converted = MCQASample.from_multiple_choice(sample, letters="wxyz")
    expected_letters = ("w", "x", "y")
    assert expected_letters == converted.letters
    expected_answer = "x"
    assert expected_answer == converted.expected_answer


@pytest.mark.parametrize(
    ("sample", "letters", "field"),
    [
        (
            MultipleChoiceSample(context="c", choices=[f"t{i}" for i in range(27)], answer_index=0),
            None,
            "choices",
        ),
        (MultipleChoiceSample(context="c", choices=CHOICES, answer_index=0), "AB", "choices"),
        (MultipleChoiceSample(context="c", choices=CHOICES, answer_index=0), "AAB", "letters"),
        (MultipleChoiceSample(context="c", choices=CHOICES, answer_index=0), "A1C", "options[1]"),
        (MultipleChoiceSample(context="c", choices=["a", " "], answer_index=0), None, "choices[1]"),
        (
            MultipleChoiceSample(context="c", choices=CHOICES, answer_index=0, extra={"uuid": 5}),
            None,
            "extra.uuid",
        ),
        (
            MultipleChoiceSample(
                context="c", choices=CHOICES, answer_index=0, extra={"options": "x"}
            ),
            None,
            "extra.options",
        ),
    ],
)
def test_conversion_to_mcqa_is_refused_when_it_cannot_be_lossless(
    sample: MultipleChoiceSample, letters: str | None, field: str
) -> None:
    _refusal(lambda: MCQASample.from_multiple_choice(sample, letters=letters), field)


def test_conversion_from_mcqa_is_refused_when_an_extra_key_would_collide() -> None:
    _refusal(lambda: _mcqa(extra={"style": "x"}).to_multiple_choice(), "extra.style")


def test_twenty_six_choices_get_the_letters_a_to_z() -> None:
    sample = MultipleChoiceSample(
        context="c", choices=[f"t{i}" for i in range(26)], answer_index=25
    )
    converted = MCQASample.from_multiple_choice(sample)
    expected_letters = tuple(string.ascii_uppercase)
    assert expected_letters == converted.letters
    expected_answer = "Z"
    assert expected_answer == converted.expected_answer


letter_sets = st.lists(
    st.characters(categories=["Lu", "Ll", "Lo"]).filter(str.isalpha),
    min_size=2,
    max_size=10,
    unique=True,
)
option_texts = st.text(min_size=1, max_size=20).filter(lambda s: s.strip() != "")


@given(st.data(), letter_sets)
def test_mcqa_there_and_back_keeps_question_options_order_and_answer(
    data: st.DataObject, letters: list[str]
) -> None:
    texts = data.draw(st.lists(option_texts, min_size=len(letters), max_size=len(letters)))
    sample = MCQASample.from_question(
        data.draw(option_texts),
        dict(zip(letters, texts, strict=True)),
        data.draw(st.sampled_from(letters)),
        template=data.draw(st.sampled_from(sorted(templates()))),
        uuid=data.draw(st.none() | st.text(max_size=8)),
        metadata=data.draw(st.none() | st.dictionaries(st.text(max_size=3), st.integers())),
    )
    template_id = sample.template.template_id if sample.template else "boxed_letter"
    assert template_id is not None
    back = MCQASample.from_multiple_choice(
        sample.to_multiple_choice(), letters=sample.letters, template=template_id
    )
    assert sample.question == back.question
    assert list(sample.options.items()) == list(back.options.items())
    assert sample.expected_answer == back.expected_answer
    assert sample.answer_text == back.answer_text
    assert sample == back  # the prompt, template, uuid and metadata are rebuilt identically


@given(
    st.data(),
    st.lists(option_texts, min_size=2, max_size=26),
    st.sampled_from(["qa", "continuation"]),
)
def test_multiple_choice_there_and_back_keeps_context_choices_and_answer(
    data: st.DataObject, choices: list[str], style: Any
) -> None:
    sample = MultipleChoiceSample(
        context=data.draw(option_texts),
        choices=choices,
        answer_index=data.draw(st.integers(0, len(choices) - 1)),
        style=style,
        extra=data.draw(
            st.fixed_dictionaries(
                {},
                optional={"uuid": st.text(max_size=5), "metadata": st.integers(), "id": st.text()},
            )
        ),
    )
    back = MCQASample.from_multiple_choice(sample).to_multiple_choice(style=style)
    assert sample == back
    assert sample.answer == back.answer
