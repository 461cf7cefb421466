"""The files of a grading run: the input read in spans, ``OUTPUT.partial`` written and resumed,
and the names of the output and its metrics files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple

import orjson

from choicebox._errors import BatchError
from choicebox.metrics import AGGREGATE_SUFFIX, FAILURES_SUFFIX, MetricsAccumulator

from ._records import record_of

# --- names --------------------------------------------------------------------------------------


def default_output(input_path: str | Path) -> Path:
    """``<INPUT stem>_graded.jsonl`` beside the input."""
    path = Path(input_path)
    return path.with_name(f"{path.stem}_graded.jsonl")


def partial_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(output.name + ".partial")


def sidecar_paths(output: str | Path) -> tuple[Path, Path]:
    """``<OUTPUT stem>_aggregate_metrics.json`` and ``<OUTPUT stem>_failure_analysis.json``."""
    output = Path(output)
    return (
        output.with_name(output.stem + AGGREGATE_SUFFIX),
        output.with_name(output.stem + FAILURES_SUFFIX),
    )


def write_json(path: Path, value: Any) -> None:
    """``value`` as indented JSON at ``path``, replacing it atomically."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")
    os.replace(tmp, path)


# --- the input ----------------------------------------------------------------------------------


class Span(NamedTuple):
    """A span of whole lines of the input.

    ``data`` holds its bytes, or is ``b""`` when a worker reads them itself from ``offset``;
    ``first_line`` is the 1-based number of its first line.
    """

    seq: int
    data: bytes
    offset: int
    nbytes: int
    first_line: int


def input_spans(handle: IO[bytes], *, offset: int, first_line: int, size: int) -> Iterator[Span]:
    """The rest of ``handle`` (now at ``offset``) in spans of about ``size`` bytes, each ending at
    a line end."""
    index = 0
    while True:
        data = handle.read(size)
        if not data:
            return
        if not data.endswith(b"\n"):
            data += handle.readline()  # finish the line the block cut through
        yield Span(index, data, offset, len(data), first_line)
        index += 1
        offset += len(data)
        first_line += data.count(b"\n")


def skip_rows(handle: IO[bytes], rows: int) -> tuple[int, int]:
    """Read past ``rows`` non-blank lines; the bytes and the lines (blank ones too) passed."""
    skipped_bytes = lines = 0
    remaining = rows
    while remaining:
        raw = handle.readline()
        if not raw:
            raise BatchError(
                f"the .partial file holds more rows than the input has ({rows}); "
                "it belongs to another input: delete it or run without --resume"
            )
        lines += 1
        skipped_bytes += len(raw)
        if raw.strip():
            remaining -= 1
    return skipped_bytes, lines


# --- the output ---------------------------------------------------------------------------------


def read_partial(path: Path, metrics: MetricsAccumulator, by: tuple[str, ...]) -> int:
    """Count the complete rows of ``path``, feed them to ``metrics``, cut off a torn tail.

    A row is complete when its line ends in a newline and holds a JSON object; the first line
    that is not (a write cut short by a kill) and everything after it is truncated, to be redone.
    """
    count = 0
    good = 0
    with open(path, "rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                break
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError:
                break
            if not isinstance(row, dict):
                break
            metrics.add_record(record_of(row, by))
            count += 1
            good += len(raw)
    if good != path.stat().st_size:
        os.truncate(path, good)
    return count


class PartialOutput:
    """``OUTPUT.partial``, appended to in whole lines.

    Unbuffered: each graded span is one write (or one in-kernel copy), so a kill leaves at most
    one torn line for resume to cut off.
    """

    def __init__(self, path: Path, *, resume: bool) -> None:
        # No O_APPEND on resume: sendfile refuses such files; seek to the end instead.
        flags = os.O_WRONLY | os.O_CREAT | (0 if resume else os.O_TRUNC)
        self._fd = os.open(path, flags, 0o666)
        os.lseek(self._fd, 0, os.SEEK_END)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def move_in(self, path: str) -> None:
        """Append the file at ``path`` (in the kernel where it can), then delete it."""
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            sent = 0
            try:
                while sent < size:
                    done = os.sendfile(self._fd, handle.fileno(), sent, size - sent)
                    if done == 0:
                        break
                    sent += done
            except OSError:
                pass  # no sendfile for these files: copy the rest through user space
            if sent < size:
                handle.seek(sent)
                while block := handle.read(1 << 20):
                    self.write(block)
        os.unlink(path)

    def sync(self) -> None:
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> PartialOutput:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
