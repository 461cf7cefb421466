"""JSON Lines: a bad line is reported with its number and never stops the read; blank lines are
skipped; ``dumps`` writes orjson's compact layout or the layout of Python's ``json.dumps``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from choicebox.jsonl import JsonlError, JsonlRow, dumps, iter_jsonl, loads

CONTENT = b'{"a": 1}\n\n{"a": 2\n   \n[3]\n{"a": "\xc3\xa9"}\r\nnot json\n{"a": 4}'


def _expected() -> list[JsonlRow | JsonlError]:
    return [
        JsonlRow(line=1, value={"a": 1}),
        JsonlError(line=3, message="", raw=b'{"a": 2'),
        JsonlRow(line=5, value=[3]),
        JsonlRow(line=6, value={"a": "é"}),
        JsonlError(line=7, message="", raw=b"not json"),
        JsonlRow(line=8, value={"a": 4}),
    ]


def _without_messages(items: list[JsonlRow | JsonlError]) -> list[JsonlRow | JsonlError]:
    return [
        JsonlError(line=i.line, message="", raw=i.raw) if isinstance(i, JsonlError) else i
        for i in items
    ]


def test_bad_lines_are_reported_with_their_number_and_reading_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(CONTENT)
    items = list(iter_jsonl(path))
    assert _expected() == _without_messages(items)
    for item in items:
        if isinstance(item, JsonlError):
            assert item.message.startswith("invalid JSON")
            assert str(item).startswith(f"line {item.line}: invalid JSON")


@pytest.mark.parametrize("kind", ["str", "path", "handle"])
def test_every_source_kind_reads_the_same(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(CONTENT)
    source: Any = {"str": str(path), "path": path, "handle": io.BytesIO(CONTENT)}[kind]
    assert _expected() == _without_messages(list(iter_jsonl(source)))


def test_a_file_of_blank_lines_yields_nothing() -> None:
    expected: list[JsonlRow | JsonlError] = []
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
