"""Wire rows: lossless round trips of both sample families, byte-identical Gym rows, and
``WireFormatError`` reports that list every problem of a bad row as ``message @ $.path``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from choicebox import (
    MCQASample,
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
    Template,
    WireFormatError,
)
from choicebox._wire import MC_WIRE_KEYS, MCQA_WIRE_KEYS, TEMPLATE_WIRE_KEYS
from choicebox.jsonl import dumps, loads

FIXTURES = Path(__file__).parents[1] / "fixtures"

# --- strategies --------------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
some_text = st.text(min_size=1, max_size=40).filter(lambda s: s.strip() != "")


def extras(reserved: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    """Arbitrary JSON columns whose names do not collide with the row's own fields."""
    return st.dictionaries(
        st.text(max_size=10).filter(lambda k: k not in reserved), json_values, max_size=4
    )


@st.composite
def multiple_choice_samples(
    draw: st.DrawFn,
) -> MultipleChoiceQuestionAnswerSample | MultipleChoiceCompletionSample:
    choices = draw(st.lists(st.text(max_size=20), min_size=2, max_size=8))
    return MultipleChoiceSample(
        context=draw(some_text),
        choices=choices,
        answer_index=draw(st.integers(min_value=0, max_value=len(choices) - 1)),
        style=draw(st.sampled_from(["qa", "continuation"])),
        extra=draw(extras(MC_WIRE_KEYS)),
    )


letters = st.characters(categories=["Lu", "Ll", "Lt", "Lm", "Lo"]).filter(str.isalpha)


@st.composite
def templates(draw: st.DrawFn) -> Template:
    return Template(
        output_regex=draw(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=3)),
        regex_as_list=draw(st.booleans()),
        template_id=draw(st.none() | st.text(max_size=10)),
        prompt_type=draw(st.none() | st.text(max_size=10)),
        format_type=draw(st.none() | st.text(max_size=10)),
        answer_prefix=draw(st.none() | st.text(max_size=10)),
        extra=draw(extras(TEMPLATE_WIRE_KEYS)),
    )


@st.composite
def mcqa_samples(draw: st.DrawFn) -> MCQASample:
    keys = draw(st.lists(letters, min_size=2, max_size=8, unique=True))
    texts = draw(st.lists(some_text, min_size=len(keys), max_size=len(keys)))
    question = draw(some_text)
    prompt_text = draw(st.sampled_from([question, f"Pick one. {question}"]))
    params = draw(
        st.none()
        | st.fixed_dictionaries(
            {"input": st.just([{"role": "user", "content": prompt_text}])},
            optional={"temperature": st.floats(0, 2), "model": st.text(max_size=8)},
        )
    )
    return MCQASample(
        question=question,
        options=dict(zip(keys, texts, strict=True)),
        expected_answer=draw(st.sampled_from(keys)),
        grading_mode=draw(st.sampled_from(["strict_single_letter_boxed", "template_regex"])),
        template=draw(st.none() | templates()),
        uuid=draw(st.none() | st.uuids().map(str)),
        metadata=draw(json_values),
        responses_create_params=params,
        extra=draw(extras(MCQA_WIRE_KEYS)),
    )


# --- round trips -------------------------------------------------------------------------------


@given(multiple_choice_samples())
def test_multiple_choice_sample_survives_encode_then_decode(
    sample: MultipleChoiceQuestionAnswerSample | MultipleChoiceCompletionSample,
) -> None:
    decoded = MultipleChoiceSample.from_wire(sample.to_wire())
    assert sample == decoded
    assert type(sample) is type(decoded)


@given(multiple_choice_samples())
def test_multiple_choice_sample_survives_json_bytes(
    sample: MultipleChoiceQuestionAnswerSample | MultipleChoiceCompletionSample,
) -> None:
    for style in ("compact", "python"):
        decoded = MultipleChoiceSample.from_wire(loads(dumps(sample.to_wire(), style=style)))
        assert sample == decoded
        assert type(sample) is type(decoded)


@given(mcqa_samples())
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_mcqa_sample_survives_encode_then_decode(sample: MCQASample) -> None:
    decoded = MCQASample.from_wire(sample.to_wire())
    assert sample == decoded
    assert sample.letters == decoded.letters  # equality of mappings ignores order; order matters
    assert sample.to_wire() == decoded.to_wire()


@given(mcqa_samples())
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_mcqa_sample_survives_json_bytes(sample: MCQASample) -> None:
    for style in ("compact", "python"):
        encoded = dumps(sample.to_wire(), style=style)
        decoded = MCQASample.from_wire(loads(encoded))
        assert sample == decoded
        assert sample.letters == decoded.letters
        assert encoded == dumps(decoded.to_wire(), style=style)


def test_template_regex_spelling_survives_round_trip() -> None:
    one_as_list = Template(output_regex=["x"], regex_as_list=True)
    one_as_string = Template(output_regex="x")
    for template, expected in ((one_as_list, ["x"]), (one_as_string, "x")):
        sample = MCQASample(
            question="q?", options={"A": "a", "B": "b"}, expected_answer="A", template=template
        )
        row = sample.to_wire()
        assert expected == row["template_metadata"]["output_regex"]
        assert expected == MCQASample.from_wire(row).to_wire()["template_metadata"]["output_regex"]


def test_question_is_read_from_the_user_message_when_the_row_has_none() -> None:
    row = {
        "responses_create_params": {
            "input": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "input_text", "text": "Which? A: x B: y"}]},
            ]
        },
        "options": [{"A": "x"}, {"B": "y"}],
        "expected_answer": "B",
    }
    sample = MCQASample.from_wire(row)
    expected = "Which? A: x B: y"
    assert expected == sample.question
    assert row == sample.to_wire()


def test_unknown_mcqa_keys_are_kept_in_extra_and_written_in_their_place() -> None:
    row = {
        "agent_ref": {"name": "mcqa"},
        "question": "q?",
        "options": [{"A": "a"}, {"B": "b"}],
        "reward_profiles": [{"pass_rate": 0.5}],
        "expected_answer": "A",
    }
    sample = MCQASample.from_wire(row)
    expected = {"agent_ref": {"name": "mcqa"}, "reward_profiles": [{"pass_rate": 0.5}]}
    assert expected == dict(sample.extra)
    assert list(row) == list(sample.to_wire())


def test_unknown_multiple_choice_keys_are_kept_in_extra() -> None:
    row = {"style": "qa", "context": "c?", "choices": ["a", "b"], "answer_index": 1, "id": 7}
    sample = MultipleChoiceSample.from_wire(row)
    expected = {"id": 7}
    assert expected == dict(sample.extra)
    assert {"task_type": "multiple_choice", **row} == sample.to_wire()


# --- byte-identical Gym rows -------------------------------------------------------------------


def _lines(name: str) -> list[bytes]:
    lines = (FIXTURES / name).read_bytes().splitlines()
    assert lines, f"fixture {name} is empty"
    return lines


@pytest.mark.parametrize(
    ("fixture", "style"), [("gym_rows.jsonl", "python"), ("gym_rows_compact.jsonl", "compact")]
)
def test_gym_rows_are_written_back_byte_for_byte(
    fixture: str, style: Literal["compact", "python"]
) -> None:
    for number, line in enumerate(_lines(fixture), start=1):
        sample = MCQASample.from_wire(orjson.loads(line))
        assert line == dumps(sample.to_wire(), style=style), f"{fixture}:{number}"


def test_gym_fixture_covers_the_row_shapes_it_claims() -> None:
    rows = [orjson.loads(line) for line in _lines("gym_rows.jsonl")]
    templates_ = [r["template_metadata"] for r in rows if "template_metadata" in r]
    assert any(isinstance(t.get("output_regex"), str) for t in templates_)
    assert any(isinstance(t.get("output_regex"), list) and t["output_regex"] for t in templates_)
    assert any("weight" in t for t in templates_)
    assert any(next(iter(t)) not in TEMPLATE_WIRE_KEYS for t in templates_)  # non-canonical order
    assert any("reward_profiles" in r and "agent_ref" in r for r in rows)
    assert any(isinstance(r.get("metadata"), dict) for r in rows)
    assert any(b"\\u" in line for line in _lines("gym_rows.jsonl"))  # escaped non-ASCII text
    assert any(not line.isascii() for line in _lines("gym_rows_compact.jsonl"))


def test_gym_fixture_template_metadata_is_decoded_into_template() -> None:
    rows = [orjson.loads(line) for line in _lines("gym_rows.jsonl")]
    with_list = next(
        r
        for r in rows
        if isinstance(r.get("template_metadata", {}).get("output_regex"), list)
        and r["template_metadata"]["output_regex"]
    )
    template = MCQASample.from_wire(with_list).template
    assert template is not None
    assert tuple(with_list["template_metadata"]["output_regex"]) == template.output_regex
    assert with_list["template_metadata"]["weight"] == template.extra["weight"]


# --- WireFormatError ---------------------------------------------------------------------------


def _problems(decode: Any, row: Any) -> tuple[str, ...]:
    with pytest.raises(WireFormatError) as caught:
        decode(row)
    assert isinstance(caught.value, ValueError)
    for problem in caught.value.problems:
        assert problem in str(caught.value)
    return caught.value.problems


def test_bad_multiple_choice_row_lists_every_type_problem() -> None:
    row = {"context": False, "choices": "abc", "answer_index": "1"}
    problems = _problems(MultipleChoiceSample.from_wire, row)
    expected_count = 4
    assert expected_count == len(problems)
    assert any(p.endswith("@ $.style") and "required" in p for p in problems)
    assert "expected str, got bool @ $.context" in problems  # False is not coerced to "False"
    assert "expected list, got str @ $.choices" in problems  # "abc" is not three choices
    assert "expected int, got str @ $.answer_index" in problems  # "1" is not coerced to 1


def test_bad_multiple_choice_row_lists_validator_refusals_with_other_problems() -> None:
    row = {"style": "quiz", "context": "  ", "choices": ["only"], "answer_index": 3}
    problems = _problems(MultipleChoiceSample.from_wire, row)
    expected = [
        "unknown style 'quiz'; expected one of continuation, qa @ $.style",
        "must not be empty @ $.context",
        "needs at least two choices, got 1 @ $.choices",
        "3 is outside the 1 choices (0..0) @ $.answer_index",
    ]
    assert expected == list(problems)


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (
            {"style": "qa", "context": "c", "choices": ["a", 2], "answer_index": 0},
            "expected str, got int @ $.choices[1]",
        ),
        (
            {"style": "qa", "context": "c", "choices": ["a", "b"], "answer_index": True},
            "expected int, got bool @ $.answer_index",
        ),
        (
            {"style": "qa", "context": "c", "choices": ["a", "b"], "answer_index": 1.0},
            "expected int, got float @ $.answer_index",
        ),
        (
            {"style": "qa", "context": "c", "choices": ["a", "b"], "answer_index": -1},
            "-1 is outside the 2 choices (0..1) @ $.answer_index",
        ),
        (
            {"style": "qa", "choices": ["a", "b"], "answer_index": 0},
            "required field missing @ $.context",
        ),
        (
            {
                "task_type": "ranking",
                "style": "qa",
                "context": "c",
                "choices": ["a", "b"],
                "answer_index": 0,
            },
            "task_type must be 'multiple_choice', got 'ranking' @ $.task_type",
        ),
        ([1, 2], "expected a JSON object, got list @ $"),
    ],
)
def test_bad_multiple_choice_row_names_the_path(row: Any, expected: str) -> None:
    assert (expected,) == _problems(MultipleChoiceSample.from_wire, row)


def test_style_specific_class_refuses_a_row_of_the_other_style() -> None:
    row = {"style": "continuation", "context": "c", "choices": ["a", "b"], "answer_index": 0}
    (problem,) = _problems(MultipleChoiceQuestionAnswerSample.from_wire, row)
    assert problem.endswith("@ $.style")
    assert "continuation" in problem


def test_bad_mcqa_row_lists_every_problem() -> None:
    row = {
        "question": False,
        "options": [{"A": "a"}, {"BB": "b"}, {"C": 3}, {"A": "again"}],
        "grading_mode": 7,
        "uuid": 12,
        "template_metadata": {"output_regex": 5, "template_id": ["x"]},
    }
    problems = _problems(MCQASample.from_wire, row)
    expected = [
        "expected a string, got bool @ $.question",
        "option letter 'BB' is not a single letter @ $.options[1]",
        "expected option text, got int @ $.options[2].C",
        "option letter 'A' appears twice @ $.options[3]",
        "required field missing @ $.expected_answer",
        "expected a mode name, got 7 @ $.grading_mode",
        "expected a string, got int @ $.uuid",
        "output_regex must be a pattern or a list of patterns, got int @ $.template_metadata.output_regex",
        "expected a string, got list @ $.template_metadata.template_id",
    ]
    assert expected == list(problems)


def test_bad_mcqa_row_lists_validator_refusals_together() -> None:
    row = {"question": " ", "options": [{"A": "a"}, {"B": ""}, {"C": "c"}], "expected_answer": "Z"}
    problems = _problems(MCQASample.from_wire, row)
    expected = [
        "must not be empty @ $.question",
        "option text must not be empty @ $.options[1].B",
    ]
    assert expected == list(problems)
    row["options"] = [{"A": "a"}, {"B": "b"}, {"C": "c"}]
    problems = _problems(MCQASample.from_wire, row)
    expected = [
        "must not be empty @ $.question",
        "'Z' is not one of the option letters A, B, C @ $.expected_answer",
    ]
    assert expected == list(problems)


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (
            {"question": "q", "expected_answer": "A"},
            ["required field missing, and the prompt lists no lettered options @ $.options"],
        ),
        (
            {"question": 5, "expected_answer": "A"},
            ["expected a string, got int @ $.question", "required field missing @ $.options"],
        ),
        (
            {"question": "q", "options": [{"A": "a"}, {"B": "b"}]},
            ["required field missing @ $.expected_answer"],
        ),
        (
            {"options": [{"A": "a"}, {"B": "b"}], "expected_answer": "A"},
            [
                "no question: the row has neither `question` nor a user message "
                "@ $.responses_create_params.input"
            ],
        ),
        (
            {"question": "q", "options": {"A": "a"}, "expected_answer": "A"},
            ["expected a list of single-key objects, got dict @ $.options"],
        ),
        (
            {"question": "q", "options": [{"A": "a"}], "expected_answer": "A"},
            ["needs at least two options, got 1 @ $.options"],
        ),
        (
            {"question": "q", "options": [{"A": "a"}, {"B": "b"}], "expected_answer": 1},
            ["expected a letter, got int @ $.expected_answer"],
        ),
        (
            {
                "question": "q",
                "options": [{"A": "a"}, {"B": "b"}],
                "expected_answer": "A",
                "grading_mode": "",
            },
            ["expected a mode name, got '' @ $.grading_mode"],
        ),
        (
            {
                "question": "q",
                "options": [{"A": "a"}, {"B": "b"}],
                "expected_answer": "A",
                "template_metadata": {"output_regex": ["ok", 5]},
            },
            [
                "output_regex must be a pattern or a list of patterns, got list "
                "@ $.template_metadata.output_regex"
            ],
        ),
        (
            {
                "question": "q",
                "options": [{"A": "a"}, {"B": "b"}],
                "expected_answer": "A",
                "template_metadata": "x",
            },
            ["expected an object, got str @ $.template_metadata"],
        ),
        (
            {
                "question": "q",
                "options": [{"A": "a"}, {"B": "b"}],
                "expected_answer": "A",
                "responses_create_params": [],
            },
            ["expected an object, got list @ $.responses_create_params"],
        ),
        ("not a row", ["expected a JSON object, got str @ $"]),
    ],
)
def test_bad_mcqa_row_names_the_path(row: Any, expected: list[str]) -> None:
    assert expected == list(_problems(MCQASample.from_wire, row))


def test_wire_format_error_message_lists_each_problem_on_its_own_line() -> None:
    error = WireFormatError(["a @ $.x", "b @ $.y"], where="rows.jsonl:3")
    expected = "rows.jsonl:3: invalid row (2 problems):\n  - a @ $.x\n  - b @ $.y"
    assert expected == str(error)
    expected = "invalid row: a @ $.x"
    assert expected == str(WireFormatError(["a @ $.x"]))
