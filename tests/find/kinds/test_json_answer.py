"""The ``json_answer`` step kind: a mode reads ``{"answer": "B"}`` once the object is valid under
the schema the mode names; the schema is checked when the rule file loads."""

from __future__ import annotations

import pytest

from choicebox import RuleFileError, grade_text
from choicebox._modes import GradingMode, parse_mode
from choicebox.testing import run_mode_examples

OPTIONS = {"A": "Granite", "B": "Basalt", "C": "Marble", "D": "Pumice"}
MODE = """\
version: 1
id: structured
description: An answer as JSON, then a boxed letter.
chain:
  - kind: json_answer
    primary: true
    schema:
      type: object
      required: [answer]
      properties:
        answer: {type: string, enum: [A, B, C, D]}
        reason: {type: string}
      additionalProperties: false
  - kind: boxed_letter
examples:
  - output: '{"answer": "B", "reason": "basalt is volcanic"}'
    expected: B
  - output: '{"answer": "b"}'
    expected: null
    failure: no_answer
"""


@pytest.fixture(scope="module")
def mode() -> GradingMode:
    return parse_mode(MODE, path="structured.yaml")[0]


def test_the_mode_s_examples_pass(mode: GradingMode) -> None:
    assert all(result.passed for result in run_mode_examples(mode))


@pytest.mark.parametrize(
    ("text", "letter", "failure", "detail"),
    [
        ('{"answer": "D"}', "D", None, "the JSON object's 'answer'"),
        ('Thinking...\n```json\n{"answer": "D", "reason": "it floats"}\n```', "D", None, ""),
        ('{"answer": "A"} on second thought {"answer": "C"}', "C", "wrong_answer", ""),
        ('{"answer": "E"}', None, "no_answer", "'E' is not one of ['A', 'B', 'C', 'D'] @ $.answer"),
        ('{"answer": "B", "confidence": 0.9}', None, "no_answer", "Additional properties are not allowed"),
        ('{"reply": "B"}', None, "no_answer", "'answer' is a required property @ $"),
    ],
)
def test_the_last_object_is_read_once_the_schema_accepts_it(
    mode: GradingMode, text: str, letter: str | None, failure: str | None, detail: str
) -> None:
    verdict = grade_text(text, OPTIONS, "D", mode)
    assert (verdict.extracted_answer, verdict.failure) == (letter, failure)
    assert detail in verdict.detail
    if letter is not None:
        assert verdict.step == "json_answer"
        assert verdict.format == 1.0  # the mode's own strict format: the primary step


def test_a_rejected_object_lets_the_chain_go_on(mode: GradingMode) -> None:
    verdict = grade_text('{"answer": "b"}\n\\boxed{B}', OPTIONS, "B", mode)
    assert (verdict.extracted_answer, verdict.step) == ("B", "boxed_letter")


def test_lenient_reads_the_value_as_a_payload_and_a_list_is_a_hedge() -> None:
    lenient, _ = parse_mode(
        "version: 1\nid: j\ndescription: d\nchain:\n  - kind: json_answer\n    payload: lenient\n"
        "    key: choice\n    schema: {type: object, required: [choice]}\n",
        path="j.yaml",
    )
    assert grade_text('{"choice": "(C) Marble"}', OPTIONS, "C", lenient).extracted_answer == "C"
    hedge = grade_text('{"choice": "A or B"}', OPTIONS, "C", lenient)
    assert hedge.failure == "ambiguous"


def test_strict_takes_an_option_s_exact_text(mode: GradingMode) -> None:
    text_mode, _ = parse_mode(
        "version: 1\nid: j\ndescription: d\nchain:\n  - kind: json_answer\n"
        "    schema: {type: object}\n",
        path="j.yaml",
    )
    assert grade_text('{"answer": "Pumice"}', OPTIONS, "D", text_mode).extracted_answer == "D"
    assert grade_text('{"answer": 3}', OPTIONS, "D", text_mode).detail == "the JSON object's 'answer' is no string"


@pytest.mark.parametrize(
    ("params", "reason", "line"),
    [
        ("    schema: {type: objekt}\n", "bad parameter 'schema' for step kind 'json_answer': not a valid JSON Schema", 6),
        ("    schema: [answer]\n", "bad parameter for step kind 'json_answer': expected a mapping", 6),
        ("    key: answer\n", "bad parameter", 5),  # no schema: the mode must name one
    ],
)
def test_a_bad_schema_is_a_located_rule_file_error(params: str, reason: str, line: int) -> None:
    with pytest.raises(RuleFileError) as info:
        parse_mode("version: 1\nid: j\ndescription: d\nchain:\n  - kind: json_answer\n" + params, path="j.yaml")
    assert info.value.reason.startswith(reason), info.value.reason
    assert info.value.line == line


# --- parameters ----------------------------------------------------------------------------------


def _mode(params: str) -> GradingMode:
    return parse_mode("version: 1\nid: j\ndescription: d\nchain:\n  - kind: json_answer\n" + params, path="j.yaml")[0]


def test_parameter_schema_decides_which_objects_are_read() -> None:
    loose = _mode("    schema: {type: object}\n")
    strict = _mode("    schema: {type: object, properties: {answer: {enum: [A, B]}}}\n")
    assert grade_text('{"answer": "C"}', OPTIONS, "C", loose).extracted_answer == "C"
    assert grade_text('{"answer": "C"}', OPTIONS, "C", strict).extracted_answer is None


def test_parameter_key_names_the_field_that_holds_the_answer() -> None:
    answer = _mode("    schema: {type: object}\n")
    choice = _mode("    key: choice\n    schema: {type: object}\n")
    text = '{"answer": "A", "choice": "C"}'
    assert grade_text(text, OPTIONS, "C", answer).extracted_answer == "A"
    assert grade_text(text, OPTIONS, "C", choice).extracted_answer == "C"


def test_parameter_payload_lenient_reads_a_decorated_letter_strict_does_not() -> None:
    strict = _mode("    schema: {type: object}\n")
    lenient = _mode("    payload: lenient\n    schema: {type: object}\n")
    text = '{"answer": "(C) Marble"}'
    assert grade_text(text, OPTIONS, "C", lenient).extracted_answer == "C"
    assert grade_text(text, OPTIONS, "C", strict).extracted_answer is None
