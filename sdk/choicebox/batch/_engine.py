"""Grading rows: decode a row, grade it in its mode, encode the verdict row; one engine for files,
workers, Ray and the server."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final

import orjson

from choicebox._errors import (
    UnknownModeError,
    WireFormatError,
)
from choicebox._fastpath import grade_row_fast
from choicebox._grading import Verdict, grade
from choicebox._modes import GradingMode, default_registry
from choicebox._wire import decode_mcqa, question_from_prompt
from choicebox.jsonl import raw_fields

from ._records import RowRecord, record_of, record_of_verdict

# --- options from the prompt ------------------------------------------------------------------

# One lettered option per line: `A: text`, `A) text`, `(A) text` or `A. text` (a period needs a
# space after it, so `A.B.` or `U.S.` never reads as an option). Matched line by line: a
# MULTILINE scan of the whole prompt costs four times as much on Gym's long one-line questions.
_OPTION_LINE: Final = re.compile(
    r"[ \t]*(?:\((?P<paren>[A-Z])\)|(?P<letter>[A-Z])(?P<sep>[:)])|(?P<dot>[A-Z])\.(?=[ \t]))"
    r"[ \t]*(?P<text>.*\S)"
)


def options_from_prompt(text: str) -> list[tuple[str, str]]:
    """The lettered options listed in ``text``: the last run of lines ``A``, ``B``, ``C``...

    A run starts at a line lettered ``A`` and continues while the next lettered line, in the same
    style, has the next letter; other lines in between (blank lines, wrapped text) are passed
    over. Fewer than two options is no list: ``[]``.
    """
    return list(_options_from_prompt(text))


# Rollout files hold several rollouts of each prompt, usually next to each other.
@functools.lru_cache(maxsize=256)
def _options_from_prompt(text: str) -> tuple[tuple[str, str], ...]:
    best: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []
    style = ""
    match_line = _OPTION_LINE.match
    for line in text.split("\n"):
        match = match_line(line)
        if match is None:
            continue
        if match["paren"]:
            letter, this_style = match["paren"], "()"
        elif match["letter"]:
            letter, this_style = match["letter"], match["sep"]
        else:
            letter, this_style = match["dot"], "."
        if run and this_style == style and ord(letter) == ord(run[-1][0]) + 1:
            run.append((letter, match["text"]))
            continue
        if len(run) >= 2:
            best = run
        if letter == "A":
            run, style = [(letter, match["text"])], this_style
        else:
            run, style = [], ""
    return tuple(run if len(run) >= 2 else best)


# --- grading rows ---------------------------------------------------------------------------


_ABSENT: Final = object()


class _NoResponse(Exception):
    """The row has nothing to grade."""


class Grader:
    """Decodes, grades and encodes raw JSONL lines with one registry (one per worker process).

    ``lean`` (the default) grades well-formed rows without building an ``MCQASample``, which
    costs as much as grading itself; ``lean=False`` decodes every row (the tests compare both).
    """

    def __init__(
        self,
        *,
        mode: str | None = None,
        rules_dirs: Sequence[str] = (),
        by: Sequence[str] = (),
        lean: bool = True,
    ) -> None:
        self._registry = default_registry(tuple(rules_dirs))
        self._override: GradingMode | None = self._registry.get(mode) if mode else None
        self._modes: dict[str, GradingMode] = {}
        self._by = tuple(by)
        self._lean_path = lean

    def _mode(self, name: str) -> GradingMode:
        mode = self._modes.get(name)
        if mode is None:
            mode = self._modes[name] = self._registry.get(name)
        return mode

    def grade_row(self, line: int, raw: bytes) -> dict[str, Any]:
        """The output row for one input line: graded, or an error row naming the line."""
        row, verdict, error = self._grade(line, raw)
        if error is not None:
            return error
        assert row is not None
        assert verdict is not None
        return _output_row(row, verdict)

    def _grade(
        self, line: int, raw: bytes
    ) -> tuple[dict[str, Any] | None, Verdict | None, dict[str, Any] | None]:
        """(row, verdict, None) for a graded line, or (None, None, error row)."""
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            error = {"error": f"line {line}: invalid JSON: {exc}", "line": line}
            error.update(raw_fields(raw.rstrip(b"\r\n")))
            return None, None, error
        if not isinstance(row, dict):
            problem = f"expected a JSON object, got {type(row).__name__} @ $"
            return None, None, _error_row(line, problem, None)
        uuid = row.get("uuid")
        try:
            verdict = self._lean(row) if self._lean_path else None
            if verdict is None:
                verdict = self._full(row)
        except _NoResponse:
            return None, None, _error_row(line, "no response to grade @ $.response", uuid)
        except WireFormatError as exc:
            return None, None, _error_row(line, "; ".join(exc.problems), uuid)
        except UnknownModeError as exc:
            return None, None, _error_row(line, f"{exc} @ $.grading_mode", uuid)
        except Exception as exc:  # a bug must not sink a million-row run; the row says what
            problem = f"internal error: {type(exc).__name__}: {exc}"
            return None, None, _error_row(line, problem, uuid)
        return row, verdict, None

    def _full(self, row: dict[str, Any]) -> Verdict:
        """Decode the row into a sample (every problem reported) and grade it."""

        def fallback(question: str) -> list[tuple[str, str]]:
            found = options_from_prompt(question)
            if not found:  # a `question` field without the options: look at the prompt too
                prompt = question_from_prompt(row.get("responses_create_params"))
                if prompt is not None and prompt != question:
                    found = options_from_prompt(prompt)
            return found

        sample = decode_mcqa(row, options_fallback=fallback)
        response = row.get("response")
        if response is None:
            raise _NoResponse
        return grade(sample, response, mode=self._override or self._mode(sample.grading_mode))

    def _lean(self, row: dict[str, Any]) -> Verdict | None:
        """Grade a well-formed row without building a sample; ``None`` if it needs ``_full``."""
        return grade_row_fast(row, self._mode_for, options_from_prompt=self._prompt_options)

    def _mode_for(self, name: str) -> GradingMode:
        return self._override or self._mode(name)

    @staticmethod
    def _prompt_options(row: dict[str, Any], question: str) -> Sequence[tuple[str, str]]:
        found = _options_from_prompt(question)
        if not found and "question" in row:  # a `question` field without the options
            prompt = question_from_prompt(row.get("responses_create_params"))
            if prompt is not None and prompt != question:
                found = _options_from_prompt(prompt)
        return found

    def grade_lines(self, lines: Iterable[tuple[int, bytes]]) -> tuple[bytes, list[RowRecord]]:
        """The output lines (each newline-terminated) for numbered input lines, and their records."""
        parts: list[bytes] = []
        records: list[RowRecord] = []
        by = self._by
        for line, raw in lines:
            row, verdict, out = self._grade(line, raw)
            if out is None:
                assert row is not None
                assert verdict is not None
                spliced = _spliced(raw, row, verdict)
                if spliced is not None:
                    parts.append(spliced)
                    build = functools.partial(_output_row, row, verdict)
                    records.append(record_of_verdict(row, verdict, by, build))
                    continue
                out = _output_row(row, verdict)
            try:
                encoded = orjson.dumps(out)
            except (orjson.JSONEncodeError, TypeError) as exc:
                out = _error_row(line, f"cannot encode the graded row: {exc}", out.get("uuid"))
                encoded = orjson.dumps(out)
            parts.append(encoded)
            records.append(record_of(out, by))
        parts.append(b"")
        return b"\n".join(parts), records


def _output_row(row: dict[str, Any], verdict: Verdict) -> dict[str, Any]:
    out = verdict.to_wire(row)
    if "options" not in row:
        out["options_source"] = "prompt"
    else:
        out.pop("options_source", None)
    return out


def _spliced(raw: bytes, row: dict[str, Any], verdict: Verdict) -> bytes | None:
    """The output line as the input's own bytes with the verdict's fields appended.

    Re-encoding a 5 KB rollout costs more than grading it. The output row is the input row with
    the verdict's fields set: fields the row lacks go at its end, and fields it already has with
    the same value (a data row's ``expected_answer`` and ``grading_mode``) stay where they are,
    so the input's bytes can be kept. ``None`` when that does not hold (a re-graded row with a
    different verdict, or a line that does not end with its object).
    """
    if "options_source" in row and "options" in row:
        return None  # the output drops it: a key removed is no append
    fields = verdict.wire_fields()
    if "options" not in row:
        fields["options_source"] = "prompt"
    for key in fields.keys() & row.keys():
        value = row[key]
        if type(value) is not type(fields[key]) or value != fields[key]:
            return None
        del fields[key]
    body = raw.rstrip()
    if not body.endswith(b"}"):
        return None
    if not fields:
        return body
    return body[:-1] + (b"," if row else b"") + orjson.dumps(fields)[1:]


def _error_row(line: int, problem: str, uuid: object) -> dict[str, Any]:
    row: dict[str, Any] = {"error": f"line {line}: {problem}"}
    if isinstance(uuid, str | int | float):  # a list or an object may be what cannot be encoded
        row["uuid"] = uuid
    row["line"] = line
    return row


def _numbered_lines(span: bytes, first_line: int) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of ``span`` with their numbers (the span starts at ``first_line``)."""
    for number, raw in enumerate(span.split(b"\n"), start=first_line):
        if raw.strip():
            yield number, raw


