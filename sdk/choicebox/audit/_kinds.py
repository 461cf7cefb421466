"""Rows that are not what the checks judge: rows of another task, and rollouts without a gold.

Gym data directories mix multiple-choice servers with free-text, judge and format-checking ones,
and rollout files record a model's answers, sometimes without the gold. Judging such a row as a
broken multiple-choice row buries the real defects under errors that are not defects, so a row of
another task gets one ``not_multiple_choice`` note, and a file of rollouts without gold answers
one ``gold_not_in_choices`` finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from ._config import AuditConfig
from ._findings import Audit, Finding
from ._view import _View

_NOT_MULTIPLE_CHOICE: Final = (
    "not a multiple-choice row: no `options` of lettered choices, no `choices`, and no lettered "
    "options in the prompt; no other check judges it"
)
_ROLLOUT_WITHOUT_GOLD: Final = (
    "the row is a recorded rollout (it has `response` and `reward`) without expected_answer, so "
    "it cannot be graded again: add the gold answers (later such rows of the file are not "
    "reported again)"
)


def multiple_choice_row(row: Mapping[str, Any], view: _View) -> bool:
    """Whether a raw row is meant as a multiple-choice row, so that every check judges it.

    It is when it has ``choices``; or an ``options`` field that is not a list of plain texts (a
    list of lettered mappings, or something malformed, which is a defect of a multiple-choice
    row); or a prompt that lists two lettered options or more; or a gold answer that is a single
    letter, which names an option even when the options cannot be read (``choicebox grade``
    refuses such a row, so audit reports why). A list of plain texts (``["a small shape", ...]``)
    is another task's format, answered by copying a text.
    """
    if view.family == "mc" or "choices" in row:
        return True
    expected = row.get("expected_answer")
    if isinstance(expected, str) and len(expected) == 1 and expected.isalpha():
        return True
    if "options" in row:
        options = row["options"]
        plain_texts = (
            isinstance(options, list)
            and bool(options)
            and not any(isinstance(item, Mapping) for item in options)
        )
        return not plain_texts
    return len(view.options) >= 2


def not_multiple_choice(config: AuditConfig) -> list[Finding]:
    """The one finding of a row of another task (none if the check is off)."""
    settings = config.checks["not_multiple_choice"]
    if not settings.enabled:
        return []
    return [Finding("not_multiple_choice", settings.severity, "$", _NOT_MULTIPLE_CHOICE)]


class RolloutsWithoutGold:
    """Reports a file's recorded rollouts without a gold answer once, on the first such row."""

    def __init__(self) -> None:
        self._noted = False

    def once_per_file(self, row: Any, result: Audit) -> Audit:
        if not (
            isinstance(row, Mapping)
            and "response" in row
            and "reward" in row
            and row.get("expected_answer") is None
            and "gold_not_in_choices" in result.checks
        ):
            return result
        if self._noted:
            kept = tuple(f for f in result.findings if f.check != "gold_not_in_choices")
            return attrs.evolve(result, findings=kept)
        self._noted = True
        findings = tuple(
            attrs.evolve(f, message=_ROLLOUT_WITHOUT_GOLD)
            if f.check == "gold_not_in_choices"
            else f
            for f in result.findings
        )
        return attrs.evolve(result, findings=findings)
