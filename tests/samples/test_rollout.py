"""The text to grade: a plain string, a Responses object (last assistant message, reasoning and
refusals ignored) or a Chat Completions object; unreadable shapes name the path that failed."""

from __future__ import annotations

from typing import Any

import pytest

from choicebox import MCQASample, Rollout, WireFormatError, response_text


def _message(*parts: dict[str, Any], role: str = "assistant") -> dict[str, Any]:
    return {"type": "message", "role": role, "status": "completed", "content": list(parts)}


def _text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": []}


def _responses(*items: dict[str, Any]) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "status": "completed", "output": list(items)}


REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "The answer is \\boxed{A}"}],
    "content": [{"type": "reasoning_text", "text": "\\boxed{A}"}],
}


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("The answer is \\boxed{C}", "The answer is \\boxed{C}"),
        ("", ""),
        (
            _responses(
                REASONING, _message(_text("draft \\boxed{A}")), _message(_text("\\boxed{B}"))
            ),
            "\\boxed{B}",
        ),
        (
            _responses(_message(_text("Thinking... "), _text("so \\boxed{D}"))),
            "Thinking... so \\boxed{D}",
        ),
        (
            _responses(
                _message(
                    _text("I pick "),
                    {"type": "refusal", "refusal": "I cannot answer \\boxed{A}"},
                    _text("\\boxed{C}"),
                )
            ),
            "I pick \\boxed{C}",
        ),
        (
            _responses(
                _message(
                    {"type": "refusal", "refusal": "no", "text": "\\boxed{A}"}, _text("\\boxed{D}")
                )
            ),
            "\\boxed{D}",
        ),
        (_responses(_message(_text("\\boxed{B}")), REASONING), "\\boxed{B}"),
        (
            _responses(_message(_text("\\boxed{B}")), _message(_text("\\boxed{A}"), role="user")),
            "\\boxed{B}",
        ),
        (
            _responses(
                _message(_text("\\boxed{B}")),
                {"type": "function_call", "name": "f", "arguments": "{}"},
            ),
            "\\boxed{B}",
        ),
        (_responses(REASONING), ""),
        (_responses(), ""),
        (
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": "\\boxed{E}"}}
                ],
            },
            "\\boxed{E}",
        ),
        (
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "content": [
                                {"type": "text", "text": "a"},
                                {"type": "text", "text": "b"},
                            ],
                        }
                    }
                ]
            },
            "ab",
        ),
        ({"choices": [{"message": {"role": "assistant", "content": None, "refusal": "no"}}]}, ""),
        ({"output_text": "\\boxed{A}"}, "\\boxed{A}"),
    ],
)
def test_response_text_finds_the_text_to_grade(output: Any, expected: str) -> None:
    assert expected == response_text(output)


@pytest.mark.parametrize(
    ("output", "path"),
    [
        (None, "$.response"),
        (42, "$.response"),
        (["\\boxed{A}"], "$.response"),
        ({"text": "\\boxed{A}"}, "$.response"),
        ({"output": "\\boxed{A}"}, "$.response.output"),
        ({"output": None}, "$.response.output"),
        ({"choices": []}, "$.response.choices"),
        ({"choices": "\\boxed{A}"}, "$.response.choices"),
        ({"choices": [{"text": "\\boxed{A}"}]}, "$.response.choices[0].message"),
        ({"choices": ["\\boxed{A}"]}, "$.response.choices[0].message"),
        ({"choices": [{"message": {"content": 5}}]}, "$.response.choices[0].message.content"),
    ],
)
def test_unreadable_response_names_the_path(output: Any, path: str) -> None:
    with pytest.raises(WireFormatError) as caught:
        response_text(output)
    (problem,) = caught.value.problems
    assert problem.endswith(f" @ {path}")


def test_rollout_text_is_the_graded_response_text() -> None:
    sample = MCQASample(question="q?", options={"A": "a", "B": "b"}, expected_answer="B")
    rollout = Rollout(sample=sample, response=_responses(REASONING, _message(_text("\\boxed{B}"))))
    expected = "\\boxed{B}"
    assert expected == rollout.text
