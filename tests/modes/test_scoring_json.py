"""``choicebox.scoring``'s judge flag and JSON-schema scorers: the evaluator's documented examples
and return shapes, which object counts as the last, bad schemas, and bounded time on hostile text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox import ParameterError
from choicebox.scoring import (
    JudgeFlag,
    SchemaScore,
    ScorerInput,
    extract_json,
    needs_judge,
    validate_json_schema,
)

# ------------------------------------------------------------------- the documented examples


def test_doc_needs_judge() -> None:
    """The evaluator: ``needs_judge(sample)`` returns ``{"correct": False, "needs_judge": True}``."""
    flag = needs_judge(ScorerInput(response="Canberra, I believe.", target="Canberra"))
    assert dict(flag) == {"correct": False, "needs_judge": True}
    assert flag["needs_judge"] is True
    assert flag["correct"] is False
    assert flag == JudgeFlag()


def test_doc_validate_json_schema() -> None:
    """The evaluator's example, verbatim: a response holding ``{"answer": "42"}``."""
    response_text = 'The result, as JSON:\n```json\n{"answer": "42"}\n```'
    result = validate_json_schema(response_text, schema={"type": "object", "required": ["answer"]})
    assert dict(result) == {"valid": True, "extracted": {"answer": "42"}, "score": 1.0}


def test_an_invalid_object_scores_zero_and_says_why() -> None:
    result = validate_json_schema('{"reply": "42"}', schema={"type": "object", "required": ["answer"]})
    assert dict(result) == {"valid": False, "extracted": {"reply": "42"}, "score": 0.0}
    assert result.problems == ("'answer' is a required property @ $",)


def test_no_object_scores_zero_with_nothing_extracted() -> None:
    result = validate_json_schema("The answer is 42.", schema={"type": "object"})
    assert dict(result) == {"valid": False, "extracted": None, "score": 0.0}
    assert isinstance(result, SchemaScore)


def test_a_schema_that_is_no_schema_is_the_caller_s_error() -> None:
    with pytest.raises(ParameterError, match="not a valid JSON Schema"):
        validate_json_schema('{"a": 1}', schema={"type": "objekt"})
    with pytest.raises(ParameterError, match="is an object"):
        validate_json_schema('{"a": 1}', schema=["type"])  # type: ignore[arg-type]  # the runtime check


def test_the_schema_s_own_draft_is_used() -> None:
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
              "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}}}  # fmt: skip
    assert not validate_json_schema('{"n": 0}', schema=draft4).valid
    assert validate_json_schema('{"n": 1}', schema=draft4).valid


# ------------------------------------------------------------------------- the last object


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ('{"answer": "B"}', {"answer": "B"}),
        ('First {"answer": "A"}, then on reflection {"answer": "C"}.', {"answer": "C"}),
        ('```json\n{"answer": "D", "why": {"short": "x"}}\n```', {"answer": "D", "why": {"short": "x"}}),
        ('```json\n{"answer": "D"}\n```\nand a bare {"answer": "E"} after it', {"answer": "E"}),
        ('[{"answer": "F"}]', {"answer": "F"}),  # an object inside an array is an object
        (r'\frac{1}{2} and {"answer": "G"} and {not json}', {"answer": "G"}),
        ('{"answer": "H"} {"broken": ', {"answer": "H"}),
        ('{"a": NaN}', None),  # not JSON
        ('{"a": Infinity} {"b": 1}', {"b": 1}),
        ("{}", {}),
        ("no braces at all", None),
        ("", None),
    ],
)
def test_extract_json_finds_the_object_that_ends_last(response: str, expected: object) -> None:
    assert extract_json(response) == expected


def test_an_object_longer_than_the_decode_window_is_found_whole() -> None:
    value = "x" * 200_000
    assert extract_json('prose {"k": "' + value + '"}') == {"k": value}


@pytest.mark.parametrize(
    "hostile",
    [
        '{"a":"' * 200_000,  # 1.2 MB of unterminated strings
        "{" * 1_000_000,
        '{"a": ' * 150_000 + '{"a": 1}',
        '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}",  # nesting past the decoder's recursion
        '{"n": ' + "9" * 5000 + "}",  # past Python's integer digit limit
    ],
)
def test_hostile_text_is_no_error_and_no_hang(hostile: str) -> None:
    # No clock: the scan is bounded by construction (a budget of failed-decode characters), and
    # a quadratic scan of these inputs took minutes, which the suite's faulthandler would catch.
    found = extract_json(hostile)
    assert found is None or isinstance(found, dict)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='{}[]":,ab 1\n', max_size=60))
def test_extract_json_never_raises_and_returns_an_object_or_none(text: str) -> None:
    found = extract_json(text)
    assert found is None or isinstance(found, dict)
