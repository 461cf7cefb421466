"""Grading rows: decode a row, grade it in its mode, encode the verdict row; one engine for files,
workers, Ray and the server."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import orjson

from choicebox._errors import UnknownModeError
from choicebox._grading import grade_output
from choicebox._modes import GradingMode, ModeRegistry, default_registry
from choicebox._problems import Problem
from choicebox._reader import RowReading, read_mcqa_row
from choicebox._regex import DEFAULT_TIMEOUT
from choicebox.jsonl import raw_fields
from choicebox.metrics._records import (
    EXEMPLARS_PER_KIND,
    failed,
    failure_kind,
    response_preview,
)
from choicebox.render import Verdict, append_spliced, output_row
from choicebox.render._records import RowRecord, record_of, record_of_verdict

# --- grading rows ---------------------------------------------------------------------------


class Grader:
    """Reads, grades and encodes rollout rows with one registry (one per worker process).

    Every row is read by ``read_mcqa_row`` and graded from that reading as ``grade`` grades a
    sample (the response's text, then ``grade_text`` with the reading's fields), so the verdict is
    ``grade(MCQASample.from_wire(row), row["response"])``'s; no sample is built, since building
    one costs as much as grading. ``mode`` overrides every row's ``grading_mode``; ``registry``
    (else one loaded from ``rules_dirs``) resolves the rows' own modes. The server grades with
    this class too, so ``choicebox grade`` and ``choicebox serve`` accept the same rows.
    """

    def __init__(
        self,
        *,
        mode: str | None = None,
        rules_dirs: Sequence[str] = (),
        by: Sequence[str] = (),
        registry: ModeRegistry | None = None,
        regex_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.registry = registry if registry is not None else default_registry(tuple(rules_dirs))
        self._override: GradingMode | None = self.registry.get(mode) if mode else None
        self._modes: dict[str, GradingMode] = {}
        self._by = tuple(by)
        self._regex_timeout = regex_timeout
        # The appended bytes of spliced output lines, by verdict (see `append_spliced`).
        self._suffixes: dict[tuple[Any, ...], bytes] = {}

    def _mode(self, name: str) -> GradingMode:
        mode = self._override or self._modes.get(name)
        if mode is None:
            mode = self._modes[name] = self.registry.get(name)
        return mode

    def read(self, row: object) -> RowReading | list[Problem]:
        """``row`` read as a rollout to grade, or its problems; an unknown mode is one of them."""
        prepared = self._prepare(row)
        return prepared if isinstance(prepared, list) else prepared[0]

    def grade_reading(self, reading: RowReading, response: object) -> Verdict:
        """The verdict on ``response`` for a row ``read`` accepted."""
        return self._verdict(reading, self._mode(reading.grading_mode), response)

    def _prepare(self, row: object) -> tuple[RowReading, GradingMode] | list[Problem]:
        reading = read_mcqa_row(row, rollout=True)
        if isinstance(reading, list):
            return reading
        try:
            return reading, self._mode(reading.grading_mode)
        except UnknownModeError as exc:
            return [Problem("unknown_mode", str(exc), "$.grading_mode")]

    def _verdict(self, reading: RowReading, mode: GradingMode, response: object) -> Verdict:
        """The verdict, as ``grade`` gives it on the sample the reading would build."""
        return grade_output(
            response,
            reading.options,
            reading.expected_answer,
            mode,
            output_regex=reading.output_regex,
            answer_prefix=reading.answer_prefix,
            regex_timeout=self._regex_timeout,
            question=reading.question,
        )

    def grade_row(self, line: int, raw: bytes) -> dict[str, Any]:
        """The output row for one input line: graded, or an error row naming the line."""
        graded = self._grade(line, raw)
        if isinstance(graded, dict):
            return graded
        row, verdict = graded
        return output_row(row, verdict)

    def _grade(self, line: int, raw: bytes) -> tuple[dict[str, Any], Verdict] | dict[str, Any]:
        """(row, verdict) for a graded line, else the line's error row."""
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            error = {"error": f"line {line}: invalid JSON: {exc}", "line": line}
            error.update(raw_fields(raw.rstrip(b"\r\n")))
            return error
        try:
            prepared = self._prepare(row)
            if isinstance(prepared, list):
                return _error_row(line, "; ".join(map(str, prepared)), _uuid(row))
            verdict = self._verdict(*prepared, row["response"])
        except Exception as exc:  # a bug must not sink a million-row run; the row says what
            problem = f"internal error: {type(exc).__name__}: {exc}"
            return _error_row(line, problem, _uuid(row))
        return row, verdict

    def grade_lines(self, lines: Iterable[tuple[int, bytes]]) -> tuple[bytes, list[RowRecord]]:
        """The output lines (each newline-terminated) for numbered input lines, and their records.

        A failed row's record carries its response preview only while it is among the first
        ``EXEMPLARS_PER_KIND`` failures of its kind in ``lines``: the metrics keep no other
        preview (the first exemplars of a run are the first of some span), and reading the
        response again and shipping it back from a worker would cost more than the row's grading.
        """
        parts: list[bytes | memoryview] = []
        records: list[RowRecord] = []
        by = self._by
        suffixes = self._suffixes
        shown: Counter[str] = Counter()  # failures per kind whose record keeps its preview
        for line, raw in lines:
            graded = self._grade(line, raw)
            if isinstance(graded, dict):
                out = graded
            else:
                row, verdict = graded
                if append_spliced(parts, raw, row, verdict, suffixes):
                    build = functools.partial(output_row, row, verdict) if by else _no_output_row
                    record = record_of_verdict(row, verdict, by, build, preview=False)
                    if failed(record):
                        kind = failure_kind(record)
                        if shown[kind] < EXEMPLARS_PER_KIND:
                            shown[kind] += 1
                            if not record.masked:  # a masked row's record has its preview
                                record = record._replace(preview=response_preview(row))
                        elif record.preview:
                            record = record._replace(preview="")
                    records.append(record)
                    continue
                out = output_row(row, verdict)
            try:
                encoded = orjson.dumps(out, option=orjson.OPT_APPEND_NEWLINE)
            except (orjson.JSONEncodeError, TypeError) as exc:
                out = _error_row(line, f"cannot encode the graded row: {exc}", out.get("uuid"))
                encoded = orjson.dumps(out, option=orjson.OPT_APPEND_NEWLINE)
            parts.append(encoded)
            record = record_of(out, by)
            if failed(record):
                kind = failure_kind(record)
                if shown[kind] < EXEMPLARS_PER_KIND:
                    shown[kind] += 1
                elif record.preview:
                    record = record._replace(preview="")
            records.append(record)
        return b"".join(parts), records


def _no_output_row() -> dict[str, Any]:
    raise AssertionError("a record without categories never reads the output row")


def _uuid(row: object) -> object:
    return row.get("uuid") if isinstance(row, dict) else None


def _error_row(line: int, problem: str, uuid: object) -> dict[str, Any]:
    row: dict[str, Any] = {"error": f"line {line}: {problem}"}
    if isinstance(uuid, str | int | float):  # a list or an object may be what cannot be encoded
        row["uuid"] = uuid
    row["line"] = line
    return row


def _numbered_lines(span: bytes, first_line: int) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of ``span`` with their numbers (the span starts at ``first_line``)."""
    for number, raw in enumerate(span.split(b"\n"), start=first_line):
        if raw and not raw.isspace():  # `raw.strip()` without copying the line
            yield number, raw
