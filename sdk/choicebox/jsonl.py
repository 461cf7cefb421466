"""Streaming JSON Lines: read rows one at a time, keep going past a bad line, write Gym's layout.

A bad line never stops a read: it is yielded as a ``BadLine`` carrying its line and column, so a
batch job can report it in its output and grade the other rows. (``JsonlError`` is its former
name, kept as an alias: it is a value yielded, not an exception raised.)
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Final, Literal, TypeAlias

import attrs
import orjson

from ._errors import located

__all__ = [
    "MAX_LINE_BYTES",
    "RAW_FIELD_BYTES",
    "UTF8_BOM",
    "BadLine",
    "JsonlError",
    "JsonlRow",
    "dumps",
    "is_gzip",
    "iter_jsonl",
    "loads",
    "raw_fields",
]

# Some editors and exporters start a UTF-8 file with a byte order mark; JSON Lines has none, and
# orjson refuses it, so readers skip it at the start of the first line.
UTF8_BOM: Final = b"\xef\xbb\xbf"
# An error row copies at most this many bytes of its bad line: a 20 MB line is not copied whole.
RAW_FIELD_BYTES: Final = 4096
# The longest line read whole: a longer one (a 4 GiB line out of a gzip bomb) is a bad line, its
# first bytes kept and the rest read past without holding it, so no input exhausts memory.
MAX_LINE_BYTES: Final = 64 * 2**20
_GZIP_MAGIC: Final = b"\x1f\x8b"


def is_gzip(path: str | Path) -> bool:
    """Whether the file starts with the gzip magic bytes (sniffed, not guessed from its name)."""
    with open(path, "rb") as handle:
        return handle.read(2) == _GZIP_MAGIC

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
class BadLine:
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


def raw_fields(raw: bytes, limit: int = RAW_FIELD_BYTES) -> dict[str, Any]:
    """The fields that keep a bad line's bytes in an error row, recoverably and bounded.

    ``raw`` holds its first ``limit`` bytes (``RAW_FIELD_BYTES``), as text when they are UTF-8
    (cut at a character boundary) or else in base64; ``raw_encoding`` says which (``"utf-8"`` or
    ``"base64"``); ``raw_bytes`` is the whole line's length, so a cut copy shows as one.
    """
    head = raw[:limit]
    text: str | None
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A cut through the last character is no encoding error: keep the whole characters.
        cut_mid_character = len(raw) > limit and exc.reason == "unexpected end of data"
        text = head[: exc.start].decode("utf-8") if cut_mid_character else None
    if text is None:
        return {
            "raw": base64.b64encode(head).decode("ascii"),
            "raw_encoding": "base64",
            "raw_bytes": len(raw),
        }
    return {"raw": text, "raw_encoding": "utf-8", "raw_bytes": len(raw)}


# The former name of ``BadLine``, kept so that code written against it goes on working.
JsonlError = BadLine


def iter_jsonl(source: str | Path | IO[bytes]) -> Iterator[JsonlRow | BadLine]:
    """Yield each non-blank line of a JSONL file, decoded, or a ``BadLine`` for a bad line.

    A UTF-8 byte order mark at the start of the file is skipped."""
    if isinstance(source, str | Path):
        with open(source, "rb") as handle:
            yield from _iter_lines(handle, str(source))
    else:
        name = getattr(source, "name", None)
        yield from _iter_lines(source, name if isinstance(name, str) else None)


def numbered_lines(handle: IO[bytes]) -> Iterator[tuple[int, bytes, bool]]:
    """``(number, line, whole)`` for each line of ``handle``: a line longer than
    ``MAX_LINE_BYTES`` comes as its first ``RAW_FIELD_BYTES`` with ``whole`` false, the rest of
    it read past in bounded pieces."""
    number = 0
    while read := handle.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(read) <= MAX_LINE_BYTES or read.endswith(b"\n"):
            yield number, read, True
            continue
        head = read[:RAW_FIELD_BYTES]
        del read  # the piece read so far is not kept while the rest goes by
        while (piece := handle.readline(MAX_LINE_BYTES)) and not piece.endswith(b"\n"):
            pass
        yield number, head, False


def _iter_lines(handle: IO[bytes], path: str | None) -> Iterator[JsonlRow | BadLine]:
    for number, read, whole in numbered_lines(handle):
        if not whole:
            message = f"the line is longer than {MAX_LINE_BYTES:,} bytes: not read"
            yield BadLine(line=number, message=message, raw=read, path=path)
            continue
        raw = read[len(UTF8_BOM) :] if number == 1 and read.startswith(UTF8_BOM) else read
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
            yield BadLine(line=number, message=message, raw=line, column=column, path=path)
