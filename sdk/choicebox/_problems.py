"""What can be wrong with a row: one small vocabulary of problem codes, each problem at a path.

Every reader of a row (``MCQASample.from_wire``, ``choicebox grade``, ``choicebox serve``,
``choicebox audit``) reports the same ``Problem`` for the same defect, so a caller can act on the
``code`` and the ``path`` and never has to parse the ``message``, which is for people.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

import attrs

__all__ = ["PROBLEM_CODES", "Problem", "ProblemCode"]

ProblemCode: TypeAlias = Literal[
    "missing_field",
    "wrong_type",
    "wrong_value",
    "empty_text",
    "bad_option_letter",
    "duplicate_option_letter",
    "too_few_options",
    "answer_not_an_option",
    "no_question",
    "no_listed_options",
    "unknown_mode",
    "other",
]

PROBLEM_CODES: Final[dict[ProblemCode, str]] = {
    "missing_field": "a required field is absent or null: options, expected_answer, response",
    "wrong_type": "a value has the wrong JSON type: the row, a field, an option, a template key",
    "wrong_value": "a value of the right type that the field does not allow (task_type, style)",
    "empty_text": "a text is empty or only whitespace: the question, an option, the context",
    "bad_option_letter": "an option's key is not a single letter",
    "duplicate_option_letter": "two options share a letter",
    "too_few_options": "fewer than two options (or choices)",
    "answer_not_an_option": "the gold answer names no option (a letter not listed, an index out)",
    "no_question": "neither a `question` nor a user message in the prompt to read it from",
    "no_listed_options": "no `options`, and the prompt lists no lettered options to read them from",
    "unknown_mode": "the grading mode is not registered (reported by graders, which know modes)",
    "other": "a problem given as text, without a code (a WireFormatError built by hand)",
}


@attrs.frozen
class Problem:
    """One thing wrong with a row: its ``code``, a ``message`` for people, and the JSON ``path``
    (``$.options[1].B``) of the value at fault. ``str()`` gives ``message @ path``."""

    code: ProblemCode
    message: str
    path: str = "$"

    def __str__(self) -> str:
        return f"{self.message} @ {self.path}"

    @classmethod
    def from_text(cls, text: str) -> Problem:
        """A problem written as ``message @ path`` (code ``other``)."""
        message, sep, path = text.rpartition(" @ ")
        return cls("other", message, path) if sep else cls("other", text, "$")
