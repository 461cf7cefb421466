"""Tests of choicebox._grading: verdicts, reward components, failure kinds, response shapes."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from choicebox import (
    GradingMode,
    MCQASample,
    UnknownModeError,
    Verdict,
    default_registry,
    grade,
    grade_many,
    grade_text,
)
from choicebox._grading import MAX_OUTPUT_CHARS
from choicebox._modes import parse_mode
from choicebox.render import VERDICT_KEYS
from choicebox.testing import mcqa_sample

BUILTIN_MODES = (
    "strict_single_letter_boxed",
    "lenient_boxed",
    "lenient_answer_colon",
    "lenient_answer_colon_md",
    "mmlu_pro",
    "robust",
)


def _mode(text: str) -> GradingMode:
    return parse_mode(text, path="<test>", parents={m.id: m for m in default_registry()})[0]


# ------------------------------------------------------------------------------ the verdict


def test_a_correct_boxed_answer_fills_every_field() -> None:
    verdict = grade(mcqa_sample(), "So the answer is \\boxed{B}.")
    assert verdict.reward == 1.0
    assert verdict.correct is True
    assert verdict.extracted_answer == "B"
    assert verdict.expected_answer == "B"
    assert verdict.mode == "strict_single_letter_boxed"
    assert verdict.step == "boxed_letter"
    assert verdict.failure is None
    assert verdict.errors == ()
    assert dict(verdict.reward_components) == {
        "correctness": 1.0,
        "format": 1.0,
        "unambiguous": 1.0,
    }
    assert (verdict.correctness, verdict.format, verdict.unambiguous) == (1.0, 1.0, 1.0)


def test_a_wrong_answer_is_answered_but_not_correct() -> None:
    verdict = grade(mcqa_sample(expected="C"), "\\boxed{B}")
    assert verdict.extracted_answer == "B"
    assert verdict.reward == 0.0
    assert verdict.correct is False
    assert verdict.failure == "wrong_answer"
    assert "answered B, expected C" in verdict.detail
    assert dict(verdict.reward_components) == {
        "correctness": 0.0,
        "format": 1.0,
        "unambiguous": 1.0,
    }


def test_verdicts_are_frozen() -> None:
    verdict = grade(mcqa_sample(), "\\boxed{B}")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        verdict.reward = 0.0  # type: ignore[misc]


def test_to_wire_keeps_the_request_and_adds_the_verdict() -> None:
    request: dict[str, Any] = {
        "responses_create_params": {"input": [{"role": "user", "content": "Q?"}]},
        "response": {"output": []},
        "options": [{"A": "optA"}, {"B": "optB"}],
        "uuid": "u-1",
        "metadata": {"split": "dev"},
    }
    verdict = grade(mcqa_sample(expected="C"), "\\boxed{B}")
    row = verdict.to_wire(request)
    for key, value in request.items():
        assert row[key] == value
    assert set(VERDICT_KEYS) <= set(row)
    assert row["reward"] == 0.0
    assert row["expected_answer"] == "C"
    assert row["extracted_answer"] == "B"
    assert row["grading_failure"] == "wrong_answer"
    assert row["grading_detail"] == verdict.detail
    # A wrong answer is a valid measurement: Gym's failure fields are not the verdict's.
    assert "failure_kind" not in row
    assert "failure_reason" not in row
    assert row["extraction_step"] == "boxed_letter"
    assert row["grading_mode"] == "strict_single_letter_boxed"
    # The components travel both as a dict and as top-level fields.
    assert row["reward_components"] == {"correctness": 0.0, "format": 1.0, "unambiguous": 1.0}
    assert isinstance(row["reward_components"], dict)
    assert (row["correctness"], row["format"], row["unambiguous"]) == (0.0, 1.0, 1.0)
    # The request itself is not modified.
    assert "reward" not in request


def test_to_wire_without_request_and_for_a_correct_answer() -> None:
    row = grade(mcqa_sample(), "\\boxed{B}").to_wire()
    assert row["reward"] == 1.0
    assert row["grading_failure"] is None
    assert row["grading_detail"] is None
    assert set(row) == set(VERDICT_KEYS)


def test_to_wire_replaces_the_fields_of_an_earlier_grading() -> None:
    first = grade(mcqa_sample(), "\\boxed{C}").to_wire({"uuid": "u-2"})
    assert first["grading_failure"] == "wrong_answer"
    second = grade(mcqa_sample(), "\\boxed{B}").to_wire(first)
    assert second["uuid"] == "u-2"
    assert second["reward"] == 1.0
    assert second["extracted_answer"] == "B"
    assert second["grading_failure"] is None
    assert second["grading_detail"] is None
    assert second["correctness"] == 1.0
    assert second["reward_components"]["correctness"] == 1.0
    again = grade(mcqa_sample(), "nothing here").to_wire(second)
    assert again["extracted_answer"] is None
    assert again["extraction_step"] is None
    assert again["grading_failure"] == "no_answer"
    assert again["reward_components"] == {"correctness": 0.0, "format": 0.0, "unambiguous": 0.0}


# ------------------------------------------------------------------------------ components


@pytest.mark.parametrize(
    ("output", "components"),
    [
        # One boxed letter: the primary format exactly.
        ("\\boxed{B}", (1.0, 1.0, 1.0)),
        # Two boxes with the same letter: answered, but not one box.
        ("\\boxed{B}, again \\boxed{B}", (1.0, 0.0, 1.0)),
        # A labelled box is read but is not a bare letter.
        ("\\boxed{B: optB}", (1.0, 0.0, 1.0)),
        # Wrong letter in the right format.
        ("\\boxed{C}", (0.0, 1.0, 1.0)),
        # Ambiguous: nothing at all.
        ("\\boxed{A} or \\boxed{B}", (0.0, 0.0, 0.0)),
        ("no answer", (0.0, 0.0, 0.0)),
    ],
)
def test_components_of_the_strict_mode(output: str, components: tuple[float, float, float]) -> None:
    verdict = grade(mcqa_sample(), output)
    assert (verdict.correctness, verdict.format, verdict.unambiguous) == components


@pytest.mark.parametrize(
    ("output", "step", "format_"),
    [
        ("\\boxed{B}", "boxed", 1.0),
        ("Answer: B", "answer", 0.0),
        ("The answer is (B).", "closing_answer", 0.0),
        ("Reasoning first.\nB", "lone_letter", 0.0),
        ("B", "whole_output", 0.0),
        ("optB", "option_text", 0.0),
    ],
)
def test_format_is_only_earned_in_the_primary_format_of_robust(
    output: str, step: str, format_: float
) -> None:
    verdict = grade(mcqa_sample(), output, mode="robust")
    assert verdict.extracted_answer == "B"
    assert verdict.step == step
    assert verdict.correctness == 1.0
    assert verdict.unambiguous == 1.0
    assert verdict.format == format_
    assert verdict.reward == 1.0  # the default weights reward correctness alone


def test_format_in_the_answer_colon_mode_is_the_answer_line() -> None:
    verdict = grade(mcqa_sample(), "Answer: B", mode="lenient_answer_colon")
    assert verdict.format == 1.0
    assert grade(mcqa_sample(), "Answer: b", mode="lenient_answer_colon").correct


def test_the_template_regex_counts_as_the_primary_format() -> None:
    sample = mcqa_sample(output_regex=r"Final Choice:\s*([A-Za-z])")
    verdict = grade(sample, "Final Choice: B")
    assert verdict.step == "template_regex"
    assert (verdict.correctness, verdict.format, verdict.unambiguous) == (1.0, 1.0, 1.0)


_WEIGHTED = """\
version: 1
id: weighted_boxed
description: Boxed letters, rewarding the format a little.
extends: strict_single_letter_boxed
weights: {correctness: 0.75, format: 0.25}
"""


def test_weights_change_the_reward() -> None:
    mode = _mode(_WEIGHTED)
    assert dict(mode.weights) == {"correctness": 0.75, "format": 0.25}
    right = grade(mcqa_sample(), "\\boxed{B}", mode=mode)
    assert right.reward == pytest.approx(1.0)
    wrong_but_clean = grade(mcqa_sample(), "\\boxed{C}", mode=mode)
    assert wrong_but_clean.reward == pytest.approx(0.25)
    assert wrong_but_clean.correctness == 0.0
    right_but_doubled = grade(mcqa_sample(), "\\boxed{B} \\boxed{B}", mode=mode)
    assert right_but_doubled.reward == pytest.approx(0.75)
    nothing = grade(mcqa_sample(), "no idea", mode=mode)
    assert nothing.reward == 0.0
    # The default weights: reward equals correctness, as in NeMo Gym.
    assert grade(mcqa_sample(), "\\boxed{C}").reward == 0.0


def test_weights_can_reward_unambiguous_answers() -> None:
    mode = _mode(_WEIGHTED.replace("weighted_boxed", "w2").replace(
        "{correctness: 0.75, format: 0.25}", "{correctness: 1, unambiguous: 0.5}"
    ))  # fmt: skip
    assert grade(mcqa_sample(), "\\boxed{C}", mode=mode).reward == pytest.approx(0.5)
    assert grade(mcqa_sample(), "\\boxed{B}", mode=mode).reward == pytest.approx(1.5)


# ------------------------------------------------------------------------------ mode selection


def test_the_sample_grading_mode_is_used_by_default() -> None:
    sample = mcqa_sample(grading_mode="lenient_answer_colon")
    verdict = grade(sample, "Answer: B")
    assert verdict.mode == "lenient_answer_colon"
    assert verdict.extracted_answer == "B"


def test_mode_overrides_the_sample_grading_mode() -> None:
    sample = mcqa_sample(grading_mode="lenient_answer_colon")
    verdict = grade(sample, "Answer: B", mode="strict_single_letter_boxed")
    assert verdict.mode == "strict_single_letter_boxed"
    assert verdict.extracted_answer is None
    boxed = mcqa_sample()  # strict by default
    assert grade(boxed, "Answer: B", mode="lenient_answer_colon").extracted_answer == "B"
    assert grade(boxed, "Answer: B").extracted_answer is None


def test_mode_may_be_a_mode_object() -> None:
    mode = default_registry().get("robust")
    assert grade(mcqa_sample(), "Answer: B", mode=mode).mode == "robust"


def test_an_unknown_mode_is_the_callers_error() -> None:
    with pytest.raises(UnknownModeError, match="no_such_mode"):
        grade(mcqa_sample(), "\\boxed{B}", mode="no_such_mode")
    with pytest.raises(UnknownModeError):
        grade(mcqa_sample(grading_mode="no_such_mode"), "\\boxed{B}")


# ------------------------------------------------------------------------------ failure kinds


@pytest.mark.parametrize("mode", BUILTIN_MODES)
@pytest.mark.parametrize("output", ["", "   ", "\n\t \n"])
def test_empty_output(mode: str, output: str) -> None:
    verdict = grade(mcqa_sample(), output, mode=mode)
    assert verdict.failure == "empty"
    assert verdict.extracted_answer is None
    assert verdict.reward == 0.0


@pytest.mark.parametrize("mode", BUILTIN_MODES)
def test_no_answer(mode: str) -> None:
    verdict = grade(mcqa_sample(), "Let me think about this carefully for a while.", mode=mode)
    assert verdict.failure == "no_answer"
    assert verdict.extracted_answer is None
    assert verdict.step is None
    assert verdict.reward == 0.0


@pytest.mark.parametrize(
    ("mode", "output"),
    [
        ("strict_single_letter_boxed", "\\boxed{A} or \\boxed{B}"),
        ("strict_single_letter_boxed", "\\boxed{A, B}"),
        ("lenient_boxed", "\\boxed{optA or optB}"),
        ("lenient_answer_colon_md", "Answer: A or B"),
        ("robust", "The answer is A or B."),
        ("robust", "Answer: A/B"),
    ],
)
def test_ambiguous(mode: str, output: str) -> None:
    verdict = grade(mcqa_sample(), output, mode=mode)
    assert verdict.failure == "ambiguous"
    assert verdict.extracted_answer is None
    assert verdict.reward == 0.0
    assert verdict.unambiguous == 0.0


@pytest.mark.parametrize(
    ("mode", "output"),
    [
        ("strict_single_letter_boxed", "\\boxed{Z}"),
        ("lenient_boxed", "\\boxed{Z}"),
        ("lenient_answer_colon", "Answer: Z"),
        ("lenient_answer_colon_md", "Answer: Z"),
        ("robust", "\\boxed{Z}"),
    ],
)
def test_not_an_option(mode: str, output: str) -> None:
    verdict = grade(mcqa_sample(), output, mode=mode)
    assert verdict.failure == "not_an_option"
    assert verdict.extracted_answer is None
    assert "Z" in verdict.detail


def test_a_template_regex_letter_outside_the_options_is_not_trusted() -> None:
    sample = mcqa_sample(output_regex=r"Final Choice:\s*([A-Za-z])")
    verdict = grade(sample, "Final Choice: Z")
    assert verdict.extracted_answer is None
    assert verdict.failure == "not_an_option"


@pytest.mark.parametrize("mode", BUILTIN_MODES)
@pytest.mark.parametrize(
    "output",
    [
        "I'm sorry, but I can't help with that.",
        "I cannot answer this question.",
        "As an AI, I do not take sides on this.",
    ],
)
def test_refusal(mode: str, output: str) -> None:
    verdict = grade(mcqa_sample(), output, mode=mode)
    assert verdict.failure == "refusal"
    assert verdict.extracted_answer is None
    assert verdict.reward == 0.0


def test_a_long_answer_mentioning_a_limit_is_not_a_refusal() -> None:
    output = "Option A is wrong since the enzyme can't bind there. So \\boxed{B}."
    assert grade(mcqa_sample(), output).failure is None


def test_unfinished_reasoning() -> None:
    verdict = grade(mcqa_sample(), "<think>It is \\boxed{B} surely", mode="robust")
    assert verdict.failure == "unfinished_reasoning"
    assert verdict.extracted_answer is None


@pytest.mark.parametrize(
    "output",
    [
        # gpt-oss's harmony format: reasoning on the analysis channel, the answer on final
        "<|channel|>analysis<|message|>Maybe \\boxed{A}? No.<|end|><|start|>assistant<|channel|>final<|message|>**B**\n\nWhy.",
        "<|channel|>analysis<|message|>So it's A.<|end|><|start|>assistant<|channel|>final<|message|>Answer: B<|return|>",
        # ... decoded without its special tokens
        "analysisMaybe \\boxed{A}? No.assistantfinal**B**\n\nWhy.",
        # s1's sections
        "<|im_start|>think\nMaybe \\boxed{A}? No.\n<|im_start|>answer\nAnswer: B",
    ],
)
def test_robust_reads_the_answer_part_of_a_reasoning_format(output: str) -> None:
    assert grade(mcqa_sample(), output, mode="robust").extracted_answer == "B"


def test_an_output_cut_off_in_its_reasoning_part_is_unfinished_reasoning() -> None:
    verdict = grade(mcqa_sample(), "<|channel|>analysis<|message|>So it's \\boxed{B}, let me", mode="robust")
    assert (verdict.extracted_answer, verdict.failure) == (None, "unfinished_reasoning")
    verdict = grade(mcqa_sample(), "<|im_start|>think\nSo it's \\boxed{B}, let me", mode="robust")
    assert (verdict.extracted_answer, verdict.failure) == (None, "unfinished_reasoning")
    # text that only names the word "assistantfinal" is read as written
    assert grade(mcqa_sample(), "The answer is B. (assistantfinal)", mode="robust").extracted_answer == "B"


def test_an_invalid_template_regex_is_recorded_and_the_mode_still_runs() -> None:
    sample = mcqa_sample(output_regex="([")
    verdict = grade(sample, "\\boxed{B}")
    assert verdict.extracted_answer == "B"
    assert verdict.reward == 1.0
    assert verdict.step == "boxed_letter"
    assert len(verdict.errors) == 1
    assert "([" in verdict.errors[0]


def test_an_invalid_template_regex_with_nothing_else_is_the_failure() -> None:
    verdict = grade(mcqa_sample(output_regex="(["), "no box here")
    assert verdict.failure == "invalid_regex"
    assert verdict.extracted_answer is None
    assert len(verdict.errors) == 1
    assert "([" in verdict.errors[0]


def test_an_invalid_regex_in_a_list_does_not_stop_the_next_one() -> None:
    sample = mcqa_sample(output_regex=["([", r"Pick:\s*([A-D])"])
    verdict = grade(sample, "Pick: B")
    assert verdict.extracted_answer == "B"
    assert verdict.step == "template_regex"


_RUNAWAY = "a" * 100_000 + "!"


def test_a_runaway_template_regex_times_out_and_is_recorded() -> None:
    sample = mcqa_sample(output_regex="(a+)+$")
    verdict = grade(sample, _RUNAWAY)
    assert verdict.extracted_answer is None
    assert verdict.failure == "regex_timeout"
    assert any("timed out" in error for error in verdict.errors)
    assert "(a+)+$" in verdict.detail


def test_after_a_runaway_template_regex_the_mode_still_runs() -> None:
    sample = mcqa_sample(output_regex="(a+)+$")
    verdict = grade(sample, _RUNAWAY + " so \\boxed{B}", regex_timeout=0.05)
    assert verdict.extracted_answer == "B"
    assert verdict.step == "boxed_letter"
    assert any("timed out after 0.05s" in error for error in verdict.errors)


@pytest.mark.parametrize(
    "output",
    [
        12345,
        None,
        ["\\boxed{B}"],
        {"foo": "\\boxed{B}"},
        {"output": "\\boxed{B}"},
        {"choices": []},
        {"choices": [{"message": "\\boxed{B}"}]},
        {"choices": [{"message": {"content": 7}}]},
    ],
)
def test_an_unreadable_response_object_is_invalid_output(output: Any) -> None:
    verdict = grade(mcqa_sample(), output)
    assert verdict.failure == "invalid_output"
    assert verdict.extracted_answer is None
    assert verdict.reward == 0.0
    assert verdict.detail  # names the problem
    assert verdict.to_wire()["grading_failure"] == "invalid_output"


# ------------------------------------------------------------------------------ response shapes


def _message(text: str, role: str = "assistant") -> dict[str, Any]:
    return {
        "type": "message",
        "role": role,
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def test_a_responses_object_grades_the_last_assistant_message() -> None:
    response = {
        "id": "resp_1",
        "object": "response",
        "output": [
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "maybe \\boxed{D}"}],
            },
            _message("First thoughts: \\boxed{C}"),
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "\\boxed{A}"}]},
            _message("Final: \\boxed{B}"),
        ],
    }
    verdict = grade(mcqa_sample(), response)
    assert verdict.extracted_answer == "B"
    assert verdict.reward == 1.0


def test_reasoning_items_never_supply_the_answer() -> None:
    response = {
        "output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "\\boxed{B}"}]},
            _message("I will not commit."),
        ]
    }
    verdict = grade(mcqa_sample(), response)
    assert verdict.extracted_answer is None
    assert verdict.failure == "no_answer"


def test_a_responses_object_joins_the_parts_of_its_last_message() -> None:
    response = {
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": "So \\boxed{"},
                    {"type": "output_text", "text": "B}"},
                ],
            }
        ]
    }
    assert grade(mcqa_sample(), response).extracted_answer == "B"


def test_a_responses_object_with_no_message_is_empty() -> None:
    response = {"output": [{"type": "reasoning", "summary": []}]}
    assert grade(mcqa_sample(), response).failure == "empty"


def test_a_chat_completions_object() -> None:
    response = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "It is \\boxed{B}."}},
            {"index": 1, "message": {"role": "assistant", "content": "It is \\boxed{C}."}},
        ],
    }
    verdict = grade(mcqa_sample(), response)
    assert verdict.extracted_answer == "B"
    assert verdict.reward == 1.0


def test_a_chat_completions_object_with_null_content_is_empty() -> None:
    response = {"choices": [{"message": {"role": "assistant", "content": None}}]}
    assert grade(mcqa_sample(), response).failure == "empty"


# ------------------------------------------------------------------------------ grade_many, grade_text


def test_grade_many_keeps_the_input_order() -> None:
    rollouts: list[tuple[MCQASample, Any]] = [
        (mcqa_sample(), "\\boxed{B}"),
        (mcqa_sample(expected="A"), "\\boxed{B}"),
        (mcqa_sample(), "nothing"),
        (mcqa_sample(grading_mode="lenient_answer_colon"), "Answer: B"),
        (mcqa_sample(), {"choices": [{"message": {"content": "\\boxed{B}"}}]}),
    ]
    verdicts = grade_many(rollouts)
    assert [v.reward for v in verdicts] == [1.0, 0.0, 0.0, 1.0, 1.0]
    assert [v.failure for v in verdicts] == [None, "wrong_answer", "no_answer", None, None]
    assert verdicts[3].mode == "lenient_answer_colon"


def test_grade_many_with_a_mode_override() -> None:
    rollouts = [(mcqa_sample(), "Answer: B"), (mcqa_sample(), "\\boxed{B}")]
    verdicts = grade_many(rollouts, mode="lenient_answer_colon")
    assert [v.extracted_answer for v in verdicts] == ["B", None]
    assert {v.mode for v in verdicts} == {"lenient_answer_colon"}
    assert grade_many([]) == []


def test_grade_text_is_the_engine_under_grade() -> None:
    mode = default_registry().get("strict_single_letter_boxed")
    options = {"A": "optA", "B": "optB"}
    verdict = grade_text("\\boxed{B}", options, "B", mode)
    assert isinstance(verdict, Verdict)
    assert verdict.extracted_answer == "B"
    via_regex = grade_text("Pick B", options, "B", mode, output_regex=(r"Pick\s+([AB])",))
    assert via_regex.step == "template_regex"


# ------------------------------------------------------------------------------ never raising

_FRAGMENTS = st.sampled_from(
    [
        "\\boxed{", "\\fbox{", "{", "}", "\\text{", "A", "B", "b", "Z", "Answer:", "**Answer:**",
        "Final answer:", " or ", "/", ", ", "\n", " ", "(", ")", "$", "<think>", "</think>",
        "optA", "optB", "The answer is", "答えは", "ب", "Ｂ", "\\", ":",
    ]
)  # fmt: skip
_ANSWERISH = st.lists(_FRAGMENTS, max_size=40).map("".join)


def _check_verdict(verdict: Verdict) -> None:
    assert verdict.reward in (0.0, 1.0)
    assert verdict.extracted_answer in (None, "A", "B", "C", "D")
    assert (verdict.reward == 1.0) == (verdict.extracted_answer == "B")
    assert (verdict.failure is None) == (verdict.reward == 1.0)
    verdict.to_wire()


@pytest.mark.parametrize("mode", BUILTIN_MODES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text())
def test_grade_never_raises_on_any_text(mode: str, text: str) -> None:
    _check_verdict(grade(mcqa_sample(), text, mode=mode))


@pytest.mark.parametrize("mode", BUILTIN_MODES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_ANSWERISH)
def test_grade_never_raises_on_answer_like_text(mode: str, text: str) -> None:
    _check_verdict(grade(mcqa_sample(), text, mode=mode))


@pytest.mark.parametrize("mode", BUILTIN_MODES)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_ANSWERISH, prefix=st.sampled_from(["答えは", "answer is", "Die Antwort ist", "("]))
def test_grade_never_raises_with_an_answer_prefix(mode: str, text: str, prefix: str) -> None:
    sample = mcqa_sample(output_regex=[r"NEVER_([A-D])", "(["], answer_prefix=prefix)
    _check_verdict(grade(sample, text, mode=mode))


@pytest.mark.parametrize("mode", sorted(m.id for m in default_registry()))
def test_an_output_past_the_budget_is_not_read_in_any_mode(mode: str) -> None:
    # The per-row budget: past MAX_OUTPUT_CHARS nothing is read, whatever the output says.
    sample = mcqa_sample("ABCD", "B")
    at_the_limit = "x" * (MAX_OUTPUT_CHARS - len("\\boxed{B} Answer: B")) + "\\boxed{B} Answer: B"
    assert grade(sample, at_the_limit, mode=mode).failure != "too_long"
    past = at_the_limit + " "
    verdict = grade(sample, past, mode=mode)
    assert (verdict.failure, verdict.reward, verdict.extracted_answer) == ("too_long", 0.0, None)
    assert f"{len(past):,} characters" in verdict.detail
