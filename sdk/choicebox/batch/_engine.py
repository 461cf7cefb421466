"""Grading rows: decode a row, grade it in its mode, encode the verdict row; one engine for files,
workers, Ray and the server."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

import orjson

from choicebox._errors import UnknownModeError
from choicebox._grading import VERDICT_KEYS, Verdict, grade_output, verdict_key
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

from ._records import RowRecord, record_of, record_of_verdict

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
        # The appended bytes of spliced output lines, by verdict (see `_append_spliced`).
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
                if _append_spliced(parts, raw, row, verdict, suffixes):
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


def output_row(row: Mapping[str, Any], verdict: Verdict) -> dict[str, Any]:
    """The verify-response row: the input row with the verdict's fields, and ``options_source``
    when the options were read from the prompt."""
    out = verdict.to_wire(row)
    if "options" not in row:
        out["options_source"] = "prompt"
    else:
        out.pop("options_source", None)
    return out


# The fields a verdict writes (``Verdict.wire_fields`` and ``options_source``): a row that has
# any of them was graded before, or is a verify response, and is spliced only if they agree.
_WRITTEN: Final = frozenset({*VERDICT_KEYS, "options_source"})
# Of those, the ones a data row has (its gold answer and its mode), whose values grading keeps.
_DATA_FIELDS: Final = frozenset({"expected_answer", "grading_mode"})
_MAX_SUFFIXES: Final = 4096


def _append_spliced(
    parts: list[bytes | memoryview],
    raw: bytes,
    row: dict[str, Any],
    verdict: Verdict,
    suffixes: dict[tuple[Any, ...], bytes],
) -> bool:
    """Append the output line as the input's own bytes with the verdict's fields appended;
    ``False`` (nothing appended) when that would not be the output row.

    Re-encoding a 5 KB rollout costs more than grading it. The output row is the input row with
    the verdict's fields set: fields the row lacks go at its end, and fields it already has with
    the same value (a data row's ``expected_answer`` and ``grading_mode``) stay where they are,
    so the input's bytes can be kept. Not when that does not hold: a re-graded row with a
    different verdict, ``options_source`` on a row with options (the output drops it), a line
    that does not end with its object.

    The appended bytes depend on the verdict's fields and on which of them the row has, and few
    verdicts differ in those (a mode's verdicts on a file are mostly "no answer", "correct" and
    "answered X, expected Y"), so they are encoded once per such verdict, in ``suffixes``.
    """
    shared = row.keys() & _WRITTEN
    from_prompt = "options" not in row
    if not shared <= _DATA_FIELDS:  # graded before, or a verify response
        fields = _unshared_fields(row, verdict, shared, from_prompt)
        if fields is None:
            return False
        suffix = _suffix(fields)
    else:
        if "grading_mode" in shared and row["grading_mode"] != verdict.mode:
            return False  # the row's own mode, overridden: its field changes in place
        if "expected_answer" in shared and row["expected_answer"] != verdict.expected_answer:
            return False
        # Everything the appended fields are made of: the verdict's (from its wire schema, so a
        # new verdict field is in the key by construction) and which fields the row shares.
        key = (verdict_key(verdict), from_prompt, "expected_answer" in shared, "grading_mode" in shared)
        cached = suffixes.get(key)
        if cached is None:
            fields = _unshared_fields(row, verdict, shared, from_prompt)
            assert fields is not None  # the shared fields were compared above
            cached = _suffix(fields)
            if len(suffixes) >= _MAX_SUFFIXES:
                suffixes.clear()  # details that quote the output (a value) make many of them
            suffixes[key] = cached
        suffix = cached
    end = len(raw)
    while end and raw[end - 1] in _BLANK_BYTES:
        end -= 1
    if not end or raw[end - 1] != _CLOSE_BRACE:
        return False
    if suffix == b"}\n":
        parts.append(memoryview(raw)[:end])
        parts.append(b"\n")
        return True
    parts.append(memoryview(raw)[: end - 1])
    parts.append(b"," + suffix if row else suffix)
    return True


def _suffix(fields: dict[str, Any]) -> bytes:
    """What follows the input's bytes, less its closing brace: the verdict's ``fields`` encoded
    without their opening brace (the input object's own one stands for it), and the newline."""
    return orjson.dumps(fields)[1:] + b"\n" if fields else b"}\n"


_BLANK_BYTES: Final = frozenset(b" \t\r\n\x0b\x0c")
_CLOSE_BRACE: Final = ord("}")


def _unshared_fields(
    row: dict[str, Any], verdict: Verdict, shared: set[str], from_prompt: bool
) -> dict[str, Any] | None:
    """The verdict's fields the row does not have with the same value; ``None`` when the row has
    one with another value (or ``options_source`` beside its options), which splicing cannot
    write."""
    if "options_source" in shared and not from_prompt:
        return None  # the output drops it: a key removed is no append
    fields = verdict.wire_fields()
    if from_prompt:
        fields["options_source"] = "prompt"
    for key in shared:
        value = row[key]
        if type(value) is not type(fields[key]) or value != fields[key]:
            return None
        del fields[key]
    return fields


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
