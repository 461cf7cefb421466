"""One error hierarchy for the whole SDK.

Every concrete error also subclasses the builtin that fits, so callers that only know the standard
library (``except ValueError``) still catch it, the way lark's ``ConfigurationError`` does.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ._problems import Problem

__all__ = [
    "AuditConfigError",
    "BatchError",
    "ChoiceboxError",
    "FixFileError",
    "GymConfigError",
    "JudgeError",
    "MetricsError",
    "ParameterError",
    "ReportError",
    "RuleFileError",
    "SampleError",
    "StepKindError",
    "TemplateError",
    "UnknownModeError",
    "WireFormatError",
    "describe_value",
    "located",
    "location",
]

# A source line longer than this is shown as a window of this many characters around the column.
_EXCERPT_CHARS: Final = 80


def location(path: str, line: int | None = None, column: int | None = None) -> str:
    """``path:line:column``, as much of it as is known: how every error names a place in a file."""
    where = path
    if line is not None:
        where += f":{line}"
        if column is not None:
            where += f":{column}"
    return where


def located(
    message: str,
    *,
    path: str,
    line: int | None = None,
    column: int | None = None,
    source_line: str | None = None,
) -> str:
    """``path:line:column: message``, then the source line and a caret under the column.

    ``line`` and ``column`` are 1-based. A long line (a JSONL row) is cut to a window around the
    column, marked with ``…`` at the cut ends, so the caret stays on screen.
    """
    text = f"{location(path, line, column)}: {message}"
    if source_line is None:
        return text
    shown, caret = _excerpt(source_line.replace("\t", " "), column)
    text += f"\n    {shown}"
    if caret is not None:
        text += "\n    " + " " * (caret - 1) + "^"
    return text


def _excerpt(source_line: str, column: int | None) -> tuple[str, int | None]:
    if len(source_line) <= _EXCERPT_CHARS:
        return source_line, column
    at = (column or 1) - 1
    start = max(0, min(at - _EXCERPT_CHARS // 2, len(source_line) - _EXCERPT_CHARS))
    end = start + _EXCERPT_CHARS
    head = "…" if start else ""
    tail = "…" if end < len(source_line) else ""
    caret = None if column is None else at - start + len(head) + 1
    return head + source_line[start:end] + tail, caret


# How deep describe_value looks into nested lists and mappings before it writes "[…]".
_DESCRIBE_DEPTH: Final = 10


def describe_value(value: object, limit: int = 80) -> str:
    """A short ``repr`` of ``value`` for an error message: at most ``limit`` characters or so.

    Row data can be anything JSON holds: a 6 MB string, a list nested 1,000 deep. ``repr()`` of
    those is as long as the value, or raises ``RecursionError``; this looks at most
    ``_DESCRIBE_DEPTH`` (10) levels deep and stops once ``limit`` characters are written, marking
    every cut with ``…``. A value that is short and at most that deep reads as ``repr()`` writes
    it; an object that is no JSON type is named by its type alone.
    """
    text = _describe(value, limit, _DESCRIBE_DEPTH)
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _describe(value: object, budget: int, depth: int) -> str:
    if isinstance(value, str | bytes):
        return repr(value) if len(value) <= budget else repr(value[:budget]) + "…"
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        # repr() of an int with thousands of digits is slow, or refused (sys.int_info limits it);
        # one that fits the budget (about 3.3 bits a digit) is written out.
        bits = value.bit_length()
        return repr(value) if bits <= 4 * budget + 8 else f"<an integer of {bits} bits>"
    if isinstance(value, Mapping):
        opening, closing = "{", "}"
        items: Any = value.items()
    elif isinstance(value, list | tuple):
        opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
        items = value
    else:  # an object of the caller's: its repr() may be anything, so only its type is named
        return f"<{type(value).__name__}>"
    if depth == 0 and value:
        return f"{opening}…{closing}"
    parts: list[str] = []
    used = 1
    for item in items:
        if used >= budget:
            parts.append("…")
            break
        if isinstance(value, Mapping):
            key, inner = item
            room = budget - used
            shown = f"{_describe(key, room, depth - 1)}: {_describe(inner, room, depth - 1)}"
        else:
            shown = _describe(item, budget - used, depth - 1)
        parts.append(shown)
        used += len(shown) + 2
    # A one-element tuple keeps its comma, as repr() writes it: (1,).
    comma = "," if isinstance(value, tuple) and len(value) == 1 else ""
    return opening + ", ".join(parts) + comma + closing


class ChoiceboxError(Exception):
    """Root of every error choicebox raises on purpose."""


class _FileError(ChoiceboxError):
    """Base of the errors about a file: with a ``path`` the message is ``located`` there.

    ``reason`` is the message without the location; ``path``, ``line`` and ``column`` are ``None``
    when unknown (an error raised about no file at all is its message alone).
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        source_line: str | None = None,
    ) -> None:
        self.reason = message
        self.path = path
        self.line = line
        self.column = column
        self.source_line = source_line
        super().__init__(
            message
            if path is None
            else located(message, path=path, line=line, column=column, source_line=source_line)
        )

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # Keep the keyword-only location when the error crosses processes (a pool, a Ray task).
        rebuild = functools.partial(
            type(self),
            path=self.path,
            line=self.line,
            column=self.column,
            source_line=self.source_line,
        )
        return rebuild, (self.reason,)


class SampleError(ChoiceboxError, ValueError):
    """A sample cannot be built: the message names the offending field."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


class WireFormatError(ChoiceboxError, ValueError):
    """A wire row could not be read. ``issues`` lists each problem as a coded ``Problem``
    (``code``, ``message``, ``path``); ``problems`` lists the same ones as ``message @ $.path``."""

    def __init__(self, problems: Sequence[Problem | str], *, where: str | None = None) -> None:
        self.issues = tuple(p if isinstance(p, Problem) else Problem.from_text(p) for p in problems)
        self.problems = tuple(str(p) for p in problems)  # text given by hand is kept as written
        self.where = where
        head = f"{where}: " if where else ""
        if len(self.problems) == 1:
            text = f"{head}invalid row: {self.problems[0]}"
        else:
            text = f"{head}invalid row ({len(self.problems)} problems):\n" + "\n".join(
                f"  - {p}" for p in self.problems
            )
        super().__init__(text)


class TemplateError(_FileError, ValueError):
    """A prompt template is unknown, cannot be rendered, or its file is invalid (then located)."""


class UnknownModeError(ChoiceboxError, LookupError):
    """A grading mode name is not registered; the message lists the known ones."""

    def __init__(self, mode: str, known: Sequence[str]) -> None:
        self.mode = mode
        self.known = tuple(sorted(known))
        super().__init__(f"unknown grading mode {mode!r}; known modes: {', '.join(self.known)}")

    def __str__(self) -> str:  # LookupError would repr() the message; keep it readable
        return str(self.args[0])


class RuleFileError(_FileError, ValueError):
    """A rule file is invalid. The message points at ``file:line:column`` and shows the line."""

    path: str

    def __init__(
        self,
        message: str,
        *,
        path: str,
        line: int | None = None,
        column: int | None = None,
        source_line: str | None = None,
    ) -> None:
        super().__init__(message, path=path, line=line, column=column, source_line=source_line)


class StepKindError(ChoiceboxError, ValueError):
    """A step kind cannot be registered."""


class ParameterError(ChoiceboxError, ValueError):
    """A parameter is invalid; ``name`` is the parameter, so a rule file error can point at it.
    Step kinds raise it from their validators, and scorers for a bad argument (a schema that is
    no JSON Schema)."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        super().__init__(message)


class AuditConfigError(_FileError, ValueError):
    """An audit configuration is invalid; from a file, the message points at ``file:line:column``
    and shows the line."""


class FixFileError(_FileError, OSError):
    """The input cannot be read or the output cannot be written; ``path`` names the file."""


class GymConfigError(ChoiceboxError, ValueError):
    """NeMo Gym's config for this server is missing or unusable; the message names the
    environment variable or the config key (``instance.type.implementation.key``)."""


class MetricsError(ChoiceboxError, ValueError):
    """Invalid input to a metric: bad pass@k arguments, empty scores, a row without a reward."""


class ReportError(ChoiceboxError, ValueError):
    """The metrics document cannot be reported: it is no mapping or has no ``agent_metrics``."""


class BatchError(_FileError, ValueError):
    """The run cannot start or continue: a missing input, a ``.partial`` that does not fit it."""


class JudgeError(_FileError, ValueError):
    """The model judge cannot be used as configured: a URL that is no http(s) URL, a prompt
    template without its placeholders, a cache file that is not a judge cache (then located).
    A judge that fails while running raises nothing: each row records its ``judge_failure``."""
