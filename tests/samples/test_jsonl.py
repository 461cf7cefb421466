"""JSON Lines: a bad line is reported with its number and never stops the read; blank lines are
skipped; ``dumps`` writes orjson's compact layout or the layout of Python's ``json.dumps``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from choicebox import jsonl
from choicebox.cli import main
from choicebox.jsonl import BadLine, JsonlRow, dumps, iter_jsonl, loads

CONTENT = b'{"a": 1}\n\n{"a": 2\n   \n[3]\n{"a": "\xc3\xa9"}\r\nnot json\n{"a": 4}'


def _expected() -> list[JsonlRow | BadLine]:
    return [
        JsonlRow(line=1, value={"a": 1}),
        BadLine(line=3, message="", raw=b'{"a": 2'),
        JsonlRow(line=5, value=[3]),
        JsonlRow(line=6, value={"a": "é"}),
        BadLine(line=7, message="", raw=b"not json"),
        JsonlRow(line=8, value={"a": 4}),
    ]


def _without_messages(items: list[JsonlRow | BadLine]) -> list[JsonlRow | BadLine]:
    return [
        BadLine(line=i.line, message="", raw=i.raw) if isinstance(i, BadLine) else i
        for i in items
    ]


def test_bad_lines_are_reported_with_their_number_and_reading_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(CONTENT)
    items = list(iter_jsonl(path))
    assert _expected() == _without_messages(items)
    errors = [item for item in items if isinstance(item, BadLine)]
    assert [(e.path, e.line, e.column) for e in errors] == [(str(path), 3, 8), (str(path), 7, 1)]
    assert errors[0].message == "invalid JSON: unexpected end of data"
    # file:line:column, the line and a caret under the column: the format of every file error.
    assert str(errors[0]).splitlines() == [
        f"{path}:3:8: invalid JSON: unexpected end of data",
        '    {"a": 2',
        "           ^",
    ]
    assert str(errors[1]).startswith(f"{path}:7:1: invalid JSON: ")


def test_a_bad_line_of_a_stream_without_a_name_is_located_in_the_stream() -> None:
    (error,) = list(iter_jsonl(io.BytesIO(b'{"\xc3\xa9": x}\n')))
    assert isinstance(error, BadLine)
    assert (error.path, error.line, error.column) == (None, 1, 7)  # columns count characters
    assert str(error).splitlines()[0].startswith("<stream>:1:7: invalid JSON")


def test_a_long_bad_line_shows_a_window_around_the_column() -> None:
    raw = b'{"text": "' + b"x" * 5000 + b'", oops}'
    (error,) = list(iter_jsonl(io.BytesIO(raw)))
    assert isinstance(error, BadLine)
    assert error.raw == raw  # the whole line is kept
    head, shown, caret = str(error).splitlines()
    assert head.startswith(f"<stream>:1:{error.column}: ")
    assert len(shown) < 100
    assert shown.startswith("    …")
    assert shown[caret.index("^")] == "o"  # the caret sits under the first bad character


@pytest.mark.parametrize("kind", ["str", "path", "handle"])
def test_every_source_kind_reads_the_same(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(CONTENT)
    source: Any = {"str": str(path), "path": path, "handle": io.BytesIO(CONTENT)}[kind]
    assert _expected() == _without_messages(list(iter_jsonl(source)))


def test_a_file_of_blank_lines_yields_nothing() -> None:
    expected: list[JsonlRow | BadLine] = []
    assert expected == list(iter_jsonl(io.BytesIO(b"\n  \n\t\n")))


@pytest.mark.parametrize(
    "value",
    [
        {"b": 1, "a": [1.5, None, True], "t": "é → 🦉"},
        [],
        "x",
        {"nested": {"k": [{"z": 0}]}},
    ],
)
def test_python_style_matches_json_dumps(value: Any) -> None:
    expected = json.dumps(value).encode("ascii")
    assert expected == dumps(value, style="python")
    assert value == loads(dumps(value, style="python"))


def test_compact_style_is_utf8_without_spaces() -> None:
    expected = '{"b":1,"t":"é"}'.encode()
    assert expected == dumps({"b": 1, "t": "é"})
    assert expected == dumps({"b": 1, "t": "é"}, style="compact")


def test_the_former_name_of_a_bad_line_still_works() -> None:
    from choicebox.jsonl import JsonlError

    items = list(iter_jsonl(io.BytesIO(b"not json\n")))
    assert JsonlError is BadLine
    assert isinstance(items[0], JsonlError)


def test_a_line_longer_than_the_bound_is_a_bad_line_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A gzip bomb's 4 GiB line, scaled down: the bound is lowered so the test stays small.
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 4500)
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n' + b'{"x": "' + b"0" * 9000 + b'"}\n' + b'{"b": 2}\n')
    first, long, last = list(iter_jsonl(path))
    assert isinstance(first, JsonlRow)
    assert first.value == {"a": 1}
    assert isinstance(long, BadLine)
    assert long.line == 2
    assert "longer than 4,500 bytes" in long.message
    assert long.raw == (b'{"x": "' + b"0" * 9000)[: jsonl.RAW_FIELD_BYTES]
    assert isinstance(last, JsonlRow)
    assert (last.line, last.value) == (3, {"b": 2})


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_audit_and_explain_refuse_a_device_instead_of_reading_it_for_ever(
    capsys: pytest.CaptureFixture[str],
) -> None:

    assert main(["audit", "/dev/zero"]) == 2
    assert "/dev/zero: not a regular file" in capsys.readouterr().err
    assert main(["explain", "/dev/zero", "--line", "1"]) == 2
    assert "/dev/zero: not a regular file" in capsys.readouterr().err
