"""Every error about a file names the place one way: ``file:line:column: message``, then the
line and a caret under the column; the location survives pickling (errors cross processes)."""

from __future__ import annotations

import pickle

import pytest

from choicebox import (
    AuditConfigError,
    BatchError,
    ChoiceboxError,
    FixFileError,
    RuleFileError,
    TemplateError,
)
from choicebox._errors import describe_value, located, location

FILE_ERRORS = [AuditConfigError, BatchError, FixFileError, RuleFileError, TemplateError]


def test_location_says_as_much_as_is_known() -> None:
    assert location("a.yaml") == "a.yaml"
    assert location("a.yaml", 3) == "a.yaml:3"
    assert location("a.yaml", 3, 7) == "a.yaml:3:7"
    assert location("a.yaml", None, 7) == "a.yaml"  # a column without a line means nothing


def test_located_shows_the_line_and_a_caret_under_the_column() -> None:
    text = located("bad value", path="a.yaml", line=2, column=8, source_line="  key:\tvalue")
    # A tab is shown as one space, so the caret stays under the character it counts.
    assert text.splitlines() == ["a.yaml:2:8: bad value", "      key: value", "           ^"]
    assert located("gone", path="a.yaml", line=2, source_line="x: 1").splitlines() == [
        "a.yaml:2: gone",
        "    x: 1",
    ]


@pytest.mark.parametrize("column", [1, 2, 40, 41, 500, 999, 1000, 1001])
def test_a_long_line_is_cut_to_a_window_that_keeps_the_caret_under_its_character(
    column: int,
) -> None:
    source = "".join(chr(ord("a") + i % 26) for i in range(1000))
    _, shown, caret = located("m", path="f", line=1, column=column, source_line=source).splitlines()
    assert len(shown) <= 4 + 80 + 2
    at = caret.index("^")
    if column <= len(source):
        assert shown[at] == source[column - 1]
    else:  # just past the end, where "unexpected end of data" points
        assert at == len(shown)
    assert shown.startswith("    …") == (column > 41)
    assert shown.endswith("…") == (column < 1000 - 40 + 1)


@pytest.mark.parametrize("error_class", FILE_ERRORS)
def test_every_file_error_uses_the_one_format(error_class: type[RuleFileError]) -> None:
    error = error_class("bad", path="f.yaml", line=2, column=3, source_line="a: b")
    assert str(error) == "f.yaml:2:3: bad\n    a: b\n      ^"
    assert (error.path, error.line, error.column, error.reason) == ("f.yaml", 2, 3, "bad")
    assert isinstance(error, ChoiceboxError)


@pytest.mark.parametrize("error_class", FILE_ERRORS)
def test_a_file_error_survives_pickling(error_class: type[RuleFileError]) -> None:
    error = error_class("bad", path="f.yaml", line=2, column=3, source_line="a: b")
    clone = pickle.loads(pickle.dumps(error))
    assert type(clone) is error_class
    assert str(clone) == str(error)
    assert (clone.path, clone.line, clone.column, clone.reason) == ("f.yaml", 2, 3, "bad")


@pytest.mark.parametrize("error_class", [AuditConfigError, BatchError, TemplateError])
def test_an_error_about_no_file_is_its_message(error_class: type[TemplateError]) -> None:
    error = error_class("unknown template 'x'")
    assert str(error) == "unknown template 'x'"
    assert error.path is None


def test_fix_file_error_is_an_os_error_naming_the_file() -> None:
    error = FixFileError("No such file or directory", path="in.jsonl")
    assert isinstance(error, OSError)
    assert str(error) == "in.jsonl: No such file or directory"


# --- describe_value: row data shown in a message, shortened --------------------------------------


def test_describe_value_reads_as_repr_for_small_values() -> None:
    for value in ("B", 3, 2.5, None, True, ["a", 1], {"k": [None]}, (1,), ()):
        assert describe_value(value) == repr(value)


def test_describe_value_never_recurses_into_a_deep_value() -> None:
    deep: object = "x"
    for _ in range(100_000):
        deep = [deep]
    assert describe_value(deep) == "[" * 10 + "[…]" + "]" * 10


def test_describe_value_cuts_a_huge_value_to_the_limit() -> None:
    shown = describe_value("x" * 6_000_000, 40)
    assert len(shown) == 40
    assert shown.startswith("'xxx")
    assert shown.endswith("…")
    assert len(describe_value(list(range(100_000)))) <= 80
    assert describe_value(10**5000) == "<an integer of 16610 bits>"  # repr() would refuse it


def test_describe_value_names_a_foreign_object_by_its_type() -> None:
    class Loud:
        def __repr__(self) -> str:  # pragma: no cover - must not be called
            raise AssertionError("repr() of a caller's object was called")

    assert describe_value(Loud()) == "<Loud>"
    assert describe_value({"k": Loud()}) == "{'k': <Loud>}"
