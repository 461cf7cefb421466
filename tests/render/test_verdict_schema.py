"""The verdict's wire schema (``choicebox.render.WIRE_SCHEMA``) is the one table every output
path renders from: ``to_wire``, the batch splice and its cache key, the metrics record. For any
verdict, the paths agree (Hypothesis draws the verdicts)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox import Verdict
from choicebox._modes import COMPONENTS
from choicebox.render import (
    VERDICT_KEYS,
    WIRE_SCHEMA,
    append_spliced,
    output_row,
    verdict_key,
    verdict_of_row,
)
from choicebox.render._records import record_of, record_of_verdict

_FAILURES = st.sampled_from([None, "no_answer", "wrong_answer", "ambiguous", "conflicting", "refusal"])
_NUMBERS = st.sampled_from([0.0, 0.5, 1.0])


@st.composite
def verdicts(draw: st.DrawFn) -> Verdict:
    components = {name: draw(_NUMBERS) for name in COMPONENTS}
    return Verdict(
        reward=draw(_NUMBERS),
        reward_components=components,
        extracted_answer=draw(st.sampled_from([None, "A", "B", "C"])),
        expected_answer=draw(st.sampled_from(["A", "B"])),
        mode=draw(st.sampled_from(["robust", "lenient_boxed"])),
        step=draw(st.sampled_from([None, "answer", "boxed"])),
        failure=draw(_FAILURES),
        detail=draw(st.text(max_size=20)),
        needs_judge=draw(st.booleans()),
        judge_letter=draw(st.sampled_from([None, "A", "C"])),
        judge_model=draw(st.sampled_from([None, "judge-1"])),
        judge_failure=draw(st.sampled_from([None, "timeout", "not_a_letter"])),
    )


@st.composite
def rows(draw: st.DrawFn) -> dict[str, Any]:
    row: dict[str, Any] = {
        "uuid": draw(st.sampled_from(["u1", "u2"])),
        "options": [{"A": "x"}, {"B": "y"}, {"C": "z"}],
        "responses_create_params": {"input": [{"role": "user", "content": "Q?"}]},
        "response": "The answer is (A).",
    }
    if draw(st.booleans()):
        row["expected_answer"] = "A"
    if draw(st.booleans()):
        row["grading_mode"] = "robust"
    return row


def test_the_judge_s_fields_follow_the_rules_fields() -> None:
    """The judge's reading is written beside the rules' own, never in place of it."""
    assert list(VERDICT_KEYS)[-4:] == ["needs_judge", "judge_letter", "judge_model", "judge_failure"]
    assert Verdict(
        reward=0.0, reward_components=dict.fromkeys(COMPONENTS, 0.0), extracted_answer=None,
        expected_answer="A", mode="robust",
    ).wire_fields()["needs_judge"] is False  # fmt: skip


def test_the_wire_keys_are_the_schemas() -> None:
    names = [field.name for field in WIRE_SCHEMA]
    components = names.index("reward_components") + 1
    assert list(VERDICT_KEYS) == [*names[:components], *COMPONENTS, *names[components:]]


@settings(max_examples=300, deadline=None)
@given(verdicts())
def test_every_path_writes_the_schemas_keys(verdict: Verdict) -> None:
    assert list(verdict.wire_fields()) == list(VERDICT_KEYS)
    assert list(verdict.to_wire({"uuid": "u"}))[1:] == list(VERDICT_KEYS)


@settings(max_examples=300, deadline=None)
@given(verdicts(), verdicts())
def test_verdicts_with_one_key_write_the_same_fields(a: Verdict, b: Verdict) -> None:
    if verdict_key(a) == verdict_key(b):
        assert a.wire_fields() == b.wire_fields()


@settings(max_examples=300, deadline=None)
@given(rows(), verdicts())
def test_the_splice_writes_the_output_row(row: dict[str, Any], verdict: Verdict) -> None:
    row = {**row, "expected_answer": verdict.expected_answer} if "expected_answer" in row else row
    row = {**row, "grading_mode": verdict.mode} if "grading_mode" in row else row
    raw = orjson.dumps(row)
    parts: list[bytes | memoryview] = []
    assert append_spliced(parts, raw, row, verdict, {})
    assert orjson.loads(b"".join(bytes(p) for p in parts)) == output_row(row, verdict)


@settings(max_examples=300, deadline=None)
@given(rows(), verdicts(), st.sampled_from([(), ("uuid",), ("grading_failure",), ("extraction_step",), ("judge_failure",)]))
def test_the_record_of_a_verdict_is_the_record_of_its_output_row(
    row: dict[str, Any], verdict: Verdict, by: tuple[str, ...]
) -> None:
    written = output_row(row, verdict)
    from_verdict = record_of_verdict(row, verdict, by, lambda: written)
    assert from_verdict == record_of(written, by)


@settings(max_examples=300, deadline=None)
@given(rows(), verdicts())
def test_a_row_s_verdict_read_back_writes_the_same_fields(row: dict[str, Any], verdict: Verdict) -> None:
    """``verdict_of_row`` is ``to_wire``'s inverse on the wire fields: what the judge pass reads."""
    written = orjson.loads(orjson.dumps(output_row(row, verdict)))
    read = verdict_of_row(written)
    assert read is not None
    assert read.wire_fields() == verdict.wire_fields()


@pytest.mark.parametrize(
    "broken",
    [
        {"error": "line 3: invalid JSON"},
        {"reward": True},
        {"reward_components": {"correctness": 1.0}},
        {"grading_failure": "lost"},
        {"judge_failure": "gone"},
        {"needs_judge": "yes"},
        {"extracted_answer": 3},
    ],
)
def test_a_row_without_a_well_formed_verdict_reads_as_none(broken: dict[str, Any]) -> None:
    verdict = Verdict(
        reward=0.0, reward_components=dict.fromkeys(COMPONENTS, 0.0), extracted_answer=None,
        expected_answer="A", mode="robust",
    )  # fmt: skip
    row = {**verdict.wire_fields(), **broken} if "error" not in broken else broken
    assert verdict_of_row(row) is None
