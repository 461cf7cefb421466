"""One error hierarchy for the whole SDK.

Every concrete error also subclasses the builtin that fits, so callers that only know the standard
library (``except ValueError``) still catch it, the way lark's ``ConfigurationError`` does.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "AuditConfigError",
    "BatchError",
    "ChoiceboxError",
    "FixFileError",
    "MetricsError",
    "ParameterError",
    "ReportError",
    "RuleFileError",
    "SampleError",
    "StepKindError",
    "TemplateError",
    "UnknownModeError",
    "WireFormatError",
]


class ChoiceboxError(Exception):
    """Root of every error choicebox raises on purpose."""


class SampleError(ChoiceboxError, ValueError):
    """A sample cannot be built: the message names the offending field."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


class WireFormatError(ChoiceboxError, ValueError):
    """A wire row could not be decoded; ``problems`` lists each one as ``message @ $.path``."""

    def __init__(self, problems: Sequence[str], *, where: str | None = None) -> None:
        self.problems = tuple(problems)
        self.where = where
        head = f"{where}: " if where else ""
        if len(self.problems) == 1:
            text = f"{head}invalid row: {self.problems[0]}"
        else:
            text = f"{head}invalid row ({len(self.problems)} problems):\n" + "\n".join(
                f"  - {p}" for p in self.problems
            )
        super().__init__(text)


class TemplateError(ChoiceboxError, ValueError):
    """A prompt template is unknown or cannot be rendered."""


class UnknownModeError(ChoiceboxError, LookupError):
    """A grading mode name is not registered; the message lists the known ones."""

    def __init__(self, mode: str, known: Sequence[str]) -> None:
        self.mode = mode
        self.known = tuple(sorted(known))
        super().__init__(f"unknown grading mode {mode!r}; known modes: {', '.join(self.known)}")

    def __str__(self) -> str:  # LookupError would repr() the message; keep it readable
        return str(self.args[0])


class RuleFileError(ChoiceboxError, ValueError):
    """A rule file is invalid. The message points at ``file:line:column`` and shows the line."""

    def __init__(
        self,
        message: str,
        *,
        path: str,
        line: int | None = None,
        column: int | None = None,
        source_line: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.reason = message
        where = path
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column}"
        text = f"{where}: {message}"
        if source_line is not None:
            text += f"\n    {source_line}"
            if column is not None:
                text += "\n    " + " " * (column - 1) + "^"
        super().__init__(text)


class StepKindError(ChoiceboxError, ValueError):
    """A step kind cannot be registered."""


class ParameterError(ChoiceboxError, ValueError):
    """A step parameter is invalid; ``name`` is the parameter, so a rule file error can point
    at it. Step kinds raise it from their validators."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        super().__init__(message)


class AuditConfigError(ChoiceboxError, ValueError):
    """An audit configuration is invalid; the message starts with ``file:line``."""


class FixFileError(ChoiceboxError, OSError):
    """The input cannot be read or the output cannot be written."""


class MetricsError(ChoiceboxError, ValueError):
    """Invalid input to a metric: bad pass@k arguments, empty scores, a row without a reward."""


class ReportError(ChoiceboxError, ValueError):
    """The metrics document cannot be reported: it is no mapping or has no ``agent_metrics``."""


class BatchError(ChoiceboxError, ValueError):
    """The run cannot start or continue: a missing input, a ``.partial`` that does not fit it."""
