"""Properties that hold for any input at all: rule loading raises only ``RuleFileError``, row
decoding only ``WireFormatError`` or ``SampleError``, on whatever text, bytes or JSON they meet.

Example counts are bounded so the module runs in seconds; ``benchmarks/hostile/fuzz.py`` runs the long
campaigns.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from choicebox import (
    MCQASample,
    MultipleChoiceSample,
    RuleFileError,
    SampleError,
    WireFormatError,
)
from choicebox._errors import describe_value
from choicebox._modes import ModeRegistry, parse_mode
from choicebox._resources import builtin_rule_files

_FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- rule files ----------------------------------------------------------------------------------

_SHIPPED = [f.read_text(encoding="utf-8") for f in builtin_rule_files()]
# Pieces of YAML syntax and of the rule-file vocabulary, so random texts reach past the parser.
_TOKENS = [
    "[", "]", "{", "}", ": ", ":", "- ", "-", ",", "\n", "\n  ", "\n    ", "  ", "#", "'", '"',
    "|", ">", "---", "...", "? ", "&a ", "*a", "&b ", "*b", "!!python/object:os.system ", "!!str ",
    "!!binary ", "!!set ", "<<: ", "%YAML 1.1\n", ".nan", ".inf", "-.inf", "1e400", "0x1F", "~",
    "null", "true", "no", "2024-13-45", "9" * 50, "version: 1", "id: m", "description: d",
    "chain:", "kind: ", "boxed_letter", "regex", "answer_line", "pattern: ", "(a+)+$", "a{99999}",
    "weights:", "correctness: ", "strategy: ", "last_position", "extends: ", "robust",
    "examples:", "output: ", "expected: ", "options: ", "primary: ", "when: ", "overrides: true",
    "\t", "\x00", "\ufeff", "\u2028", "é", "\U0001f600",
]  # fmt: skip


@st.composite
def _yamlish(draw: st.DrawFn) -> str:
    """A shipped rule file with random edits, a soup of YAML tokens, or any text."""
    kind = draw(st.sampled_from(["mutated", "tokens", "text"]))
    if kind == "text":
        return draw(st.text(max_size=300))
    if kind == "tokens":
        return "".join(draw(st.lists(st.sampled_from(_TOKENS), max_size=60)))
    text = draw(st.sampled_from(_SHIPPED))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["insert", "delete", "replace"]))
        piece = draw(st.sampled_from(_TOKENS) | st.text(max_size=8))
        if edit == "insert":
            text = text[:at] + piece + text[at:]
        elif edit == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)) :]
        else:
            text = text[:at] + piece + text[at + len(piece) :]
    return text


_PARENTS = {mode.id: mode for mode in ModeRegistry.with_builtins()}


def _raised(call: Callable[[], object], *allowed: type[Exception]) -> Exception | None:
    """The allowed error ``call`` raised, or ``None``; any other exception fails the test."""
    try:
        call()
    except allowed as error:
        return error
    return None


def _parse(text: str) -> None:
    error = _raised(lambda: parse_mode(text, path="fuzz.yaml", parents=_PARENTS), RuleFileError)
    if error is not None:
        assert isinstance(error, RuleFileError)
        assert error.path == "fuzz.yaml"
        assert str(error)  # the message renders


@_FAST
@given(_yamlish())
def test_parsing_any_text_raises_only_a_rule_file_error(text: str) -> None:
    _parse(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.binary(max_size=300),
        _yamlish().map(lambda t: t.encode("utf-8", errors="surrogatepass")),
        _yamlish().map(lambda t: t.encode("utf-16")),
    )
)
def test_loading_a_directory_of_any_bytes_raises_only_a_rule_file_error(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "fuzz.yaml").write_bytes(data)
        # No built-ins in the registry: each example stays cheap.
        error = _raised(lambda: ModeRegistry().add_directory(directory), RuleFileError)
    if error is not None:
        assert isinstance(error, RuleFileError)
        assert Path(error.path).name == "fuzz.yaml"


# --- rows ----------------------------------------------------------------------------------------

_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()  # NaN and infinities too: orjson never makes them, Python callers can
    | st.text(max_size=20)
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_MCQA_KEYS = [
    "question", "options", "expected_answer", "grading_mode", "template_metadata", "uuid",
    "metadata", "responses_create_params", "response", "task_type", "style", "context", "choices",
    "answer_index",
]  # fmt: skip
_VALID_ROW: dict[str, Any] = {
    "question": "Which one?",
    "options": [{"A": "red"}, {"B": "green"}],
    "expected_answer": "A",
    "responses_create_params": {"input": [{"role": "user", "content": "Which one? A: red B: green"}]},
    "template_metadata": {"output_regex": r"Answer:\s*([A-B])"},
}


@st.composite
def _rows(draw: st.DrawFn) -> Any:
    """Any JSON value, a row of the known keys with any values, or a valid row with some broken."""
    kind = draw(st.sampled_from(["any", "keys", "broken"]))
    if kind == "any":
        return draw(_json_values)
    if kind == "keys":
        keys = draw(st.lists(st.sampled_from(_MCQA_KEYS), max_size=8, unique=True))
        return {key: draw(_json_values) for key in keys}
    row = dict(_VALID_ROW)
    for key in draw(st.lists(st.sampled_from(_MCQA_KEYS), min_size=1, max_size=3, unique=True)):
        row[key] = draw(_json_values)
    return row


@_FAST
@given(_rows())
def test_decoding_any_json_value_raises_only_wire_or_sample_errors(row: Any) -> None:
    for decode in (MCQASample.from_wire, MultipleChoiceSample.from_wire):
        error = _raised(lambda: decode(row), WireFormatError, SampleError)  # noqa: B023
        assert len(str(error)) < 5000  # bounded, whatever the row held


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [1_000, 20_000])
@pytest.mark.parametrize(
    "field", ["grading_mode", "expected_answer", "question", "options", "uuid", "template_metadata"]
)
def test_a_deeply_nested_mcqa_field_is_a_wire_format_error(field: str, depth: int) -> None:
    with pytest.raises(WireFormatError) as info:
        MCQASample.from_wire({**_VALID_ROW, field: _nested(depth)})
    assert len(str(info.value)) < 500


@pytest.mark.parametrize("depth", [1_000, 20_000])
@pytest.mark.parametrize("field", ["task_type", "style", "context", "choices", "answer_index"])
def test_a_deeply_nested_multiple_choice_field_is_a_wire_format_error(
    field: str, depth: int
) -> None:
    row = {"task_type": "multiple_choice", "style": "qa", "context": "Q?", "choices": ["a", "b"]}
    with pytest.raises(WireFormatError) as info:
        MultipleChoiceSample.from_wire({**row, "answer_index": 0, field: _nested(depth)})
    assert len(str(info.value)) < 500


def test_a_huge_bad_value_is_shown_shortened() -> None:
    with pytest.raises(WireFormatError) as info:
        MCQASample.from_wire({**_VALID_ROW, "grading_mode": ["x" * 6_000_000]})
    assert len(str(info.value)) < 300
    assert "grading_mode" in str(info.value)


@_FAST
@given(_json_values, st.integers(1, 200))
def test_describe_value_is_short_and_repr_for_small_values(value: Any, limit: int) -> None:
    shown = describe_value(value, limit)
    assert len(shown) <= limit
    if len(repr(value)) <= limit and _depth(value) <= 10:
        assert shown == repr(value)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        value = list(value.values())
    return 1 + max(map(_depth, value), default=0) if isinstance(value, list) else 0
