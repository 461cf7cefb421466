"""Streaming JSON Lines: read rows one at a time, keep going past a bad line, write Gym's layout.

A bad line never stops a read: it is yielded as a ``JsonlError`` carrying its line and column, so
a batch job can report it in its output and grade the other rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal, TypeAlias

import attrs
import orjson

from ._errors import located

__all__ = ["JsonlError", "JsonlRow", "dumps", "iter_jsonl", "loads"]

JsonStyle: TypeAlias = Literal["compact", "python"]

loads = orjson.loads


def dumps(value: Any, *, style: JsonStyle = "compact") -> bytes:
    """One JSON document as bytes, without a trailing newline.

    ``compact`` is orjson's output (no spaces, UTF-8), the fast default. ``python`` reproduces
    ``json.dumps`` defaults (``", "``/``": "`` separators, ASCII escapes), the layout of NeMo
    Gym's data files, so rows read from them can be written back byte for byte.
    """
    if style == "python":
        return json.dumps(value).encode("ascii")
    return orjson.dumps(value)


@attrs.frozen(kw_only=True)
class JsonlRow:
    """A decoded line: its 1-based line number and its value."""

    line: int
    value: Any


@attrs.frozen(kw_only=True)
class JsonlError:
    """A line that is not valid JSON: where it is, the problem, and the raw text (never lost).

    ``column`` (1-based, in characters) is where the JSON went wrong; ``path`` is the file read,
    ``None`` for a stream without a name. ``str()`` gives ``path:line:column: message``, the
    line and a caret, as every choicebox error about a file does.
    """

    line: int
    message: str
    raw: bytes
    column: int | None = None
    path: str | None = None

    def __str__(self) -> str:
        return located(
            self.message,
            path=self.path or "<stream>",
            line=self.line,
            column=self.column,
            source_line=self.raw.decode("utf-8", "replace"),
        )


def iter_jsonl(source: str | Path | IO[bytes]) -> Iterator[JsonlRow | JsonlError]:
    """Yield each non-blank line of a JSONL file, decoded, or a ``JsonlError`` for a bad line."""
    if isinstance(source, str | Path):
        with open(source, "rb") as handle:
            yield from _iter_lines(handle, str(source))
    else:
        name = getattr(source, "name", None)
        yield from _iter_lines(source, name if isinstance(name, str) else None)


def _iter_lines(handle: IO[bytes], path: str | None) -> Iterator[JsonlRow | JsonlError]:
    for number, raw in enumerate(handle, start=1):
        if not raw.strip():
            continue
        try:
            yield JsonlRow(line=number, value=orjson.loads(raw))
        except orjson.JSONDecodeError as exc:
            line = raw.rstrip(b"\r\n")
            # orjson counts the line's own newline ("line 2") at the end of data: point past the
            # last character instead. Its position counts characters, as a caret does.
            column = min(exc.pos, len(line.decode("utf-8", "replace"))) + 1
            message = f"invalid JSON: {exc.msg}"
            yield JsonlError(line=number, message=message, raw=line, column=column, path=path)
