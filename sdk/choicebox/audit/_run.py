"""Running the checks over a sample, a row, a stream of rows or a file."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from choicebox._problems import Problem, ProblemCode
from choicebox._reader import read_mcqa_row, read_multiple_choice_row
from choicebox._samples import (
    MCQASample,
    MultipleChoiceSample,
)
from choicebox.jsonl import BadLine, JsonlRow

from ._checks import _ROW_CHECKS
from ._compare import comparison_key
from ._config import AuditConfig, CheckSettings
from ._findings import Audit, Finding
from ._kinds import RolloutsWithoutGold, multiple_choice_row, not_multiple_choice
from ._prompt import _quote
from ._source import read_rows
from ._view import AnySample, _View, _view_of_row, _view_of_sample

# --- running the checks --------------------------------------------------------------------------


def _run(view: _View, config: AuditConfig) -> list[Finding]:
    findings: list[Finding] = []
    for check, fn in _ROW_CHECKS.items():
        settings = config.checks.get(check)
        if settings is None or not settings.enabled:
            continue
        findings.extend(
            Finding(check, settings.severity, field, message)
            for field, message in fn(view, settings.params)
        )
    return findings


def _uuid_of(sample: AnySample) -> str | None:
    if isinstance(sample, MCQASample):
        return sample.uuid
    uuid = sample.extra.get("uuid")
    return uuid if isinstance(uuid, str) else None


def audit(sample: AnySample, *, config: AuditConfig | None = None) -> Audit:
    """The findings for one decoded sample of either family; the sample is never changed."""
    if not isinstance(sample, MCQASample | MultipleChoiceSample):
        raise TypeError(f"expected a choicebox sample, got {type(sample).__name__}")
    config = config or AuditConfig.default()
    return Audit(findings=tuple(_run(_view_of_sample(sample), config)), uuid=_uuid_of(sample))


# Which check explains a reading problem, by its code; any other problem is `unreadable_row`.
_CHECK_OF_CODE: Final[dict[ProblemCode, str]] = {
    "answer_not_an_option": "gold_not_in_choices",
    "duplicate_option_letter": "duplicate_choice",
}
_GOLD_PATHS: Final = ("$.expected_answer", "$.answer_index")
_CHOICE_PATHS: Final = ("$.options", "$.choices")


def _check_for(problem: Problem) -> str:
    if problem.path in _GOLD_PATHS:  # no gold answer, or one of the wrong type
        return "gold_not_in_choices"
    if problem.code == "empty_text" and problem.path.startswith(_CHOICE_PATHS):
        return "empty_choice"
    return _CHECK_OF_CODE.get(problem.code, "unreadable_row")


def _reading_problems(row: Mapping[str, Any], family: str) -> list[Problem]:
    """What the reader every other path uses finds wrong with ``row`` (empty: it reads)."""
    reading = read_multiple_choice_row(row) if family == "mc" else read_mcqa_row(row)
    return reading if isinstance(reading, list) else []


def _finding_for_problem(problem: Problem, config: AuditConfig) -> Finding | None:
    check = _check_for(problem)
    settings = config.checks.get(check)
    if settings is None or not settings.enabled:
        return None
    path = problem.path
    field = path[2:] if path.startswith("$.") else path
    return Finding(check, settings.severity, field, f"the row does not decode: {problem.message}")


def _unreadable(config: AuditConfig, message: str) -> tuple[Finding, ...]:
    """An ``unreadable_row`` finding for the whole row, unless that check is switched off."""
    settings = config.checks["unreadable_row"]
    if not settings.enabled:
        return ()
    return (Finding("unreadable_row", settings.severity, "$", message),)


def audit_row(row: Any, *, config: AuditConfig | None = None, line: int | None = None) -> Audit:
    """The findings for one raw row (a decoded JSON value), of either family.

    Checks read the row as far as it can be read, so a row that would not decode (a gold letter
    that is no option, an empty option) is audited rather than refused. The row is also read by
    ``read_mcqa_row``, the reader of every other path: each of its problems (by code) that no check
    has already reported becomes a finding, ``unreadable_row`` when no check explains it.
    """
    config = config or AuditConfig.default()
    if not isinstance(row, Mapping):
        message = f"the row is a JSON {_json_kind(row)}, not an object: it cannot be a sample"
        return Audit(findings=_unreadable(config, message), line=line)
    view = _view_of_row(row)
    multiple_choice = multiple_choice_row(row, view)
    found_by_checks = _run(view, config) if multiple_choice else not_multiple_choice(config)
    found = {f.check for f in found_by_checks}
    for problem in _reading_problems(row, view.family) if multiple_choice else ():
        finding = _finding_for_problem(problem, config)
        if finding is not None and finding.check not in found - {"unreadable_row"}:
            found_by_checks.append(finding)
    uuid = row.get("uuid")
    if view.family == "mc" and not isinstance(uuid, str):
        extra_uuid = row.get("extra")
        uuid = extra_uuid.get("uuid") if isinstance(extra_uuid, Mapping) else None
    return Audit(
        findings=tuple(found_by_checks), line=line, uuid=uuid if isinstance(uuid, str) else None
    )


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "null" if value is None else type(value).__name__


class _DuplicateQuestions:
    """The file-level check: normalised question (hash) -> gold text (hash) -> first line."""

    def __init__(self, settings: CheckSettings) -> None:
        self._settings = settings
        self._seen: dict[bytes, dict[bytes, tuple[int | None, str]]] = {}

    def check(self, view: _View, line: int | None) -> Finding | None:
        gold = view.gold_text
        if view.question is None or gold is None or not view.question.strip():
            return None
        key = hashlib.blake2b(digest_size=16)
        key.update(comparison_key(view.question, punctuation=True, numeric=False).encode())
        if self._settings.params["same_choices"]:
            choices = sorted(comparison_key(t, punctuation=True) for t in view.texts.values())
            key.update(b"\x00" + "\x1f".join(choices).encode())
        gold_key = hashlib.blake2b(
            comparison_key(gold, punctuation=True).encode(), digest_size=16
        ).digest()
        golds = self._seen.setdefault(key.digest(), {})
        earlier = next(((ln, text) for g, (ln, text) in golds.items() if g != gold_key), None)
        golds.setdefault(gold_key, (line, _quote(gold, 30)))
        if earlier is None:
            return None
        where = f"line {earlier[0]}" if earlier[0] is not None else "an earlier row"
        return Finding(
            "conflicting_duplicate_question",
            self._settings.severity,
            view.gold_field,
            f"{where} has the same question with the gold answer {earlier[1]}, here it is "
            f"{_quote(gold, 30)}: keep one row, or make both golds agree",
        )


def audit_rows(
    rows: Iterable[JsonlRow | BadLine | Any], *, config: AuditConfig | None = None
) -> Iterator[Audit]:
    """One ``Audit`` per row, in order, with the file-level check; rows may be ``iter_jsonl``
    items (so line numbers and unreadable lines are reported) or plain decoded values."""
    config = config or AuditConfig.default()
    duplicates = (
        _DuplicateQuestions(config.checks["conflicting_duplicate_question"])
        if config.enabled("conflicting_duplicate_question")
        else None
    )
    rollouts = RolloutsWithoutGold()
    for number, item in enumerate(rows, start=1):
        if isinstance(item, BadLine):
            column = f" at column {item.column}" if item.column is not None else ""
            findings = _unreadable(config, f"the line is not JSON: {item.message}{column}")
            yield Audit(findings=findings, line=item.line)
            continue
        line, row = (item.line, item.value) if isinstance(item, JsonlRow) else (number, item)
        result = rollouts.once_per_file(row, audit_row(row, config=config, line=line))
        if duplicates is not None and isinstance(row, Mapping):
            found = duplicates.check(_view_of_row(row), line)
            if found is not None:
                result = attrs.evolve(result, findings=(*result.findings, found))
        yield result


def audit_file(path: str | Path, *, config: AuditConfig | None = None) -> Iterator[Audit]:
    """One ``Audit`` per non-blank line of a JSONL file (plain or gzip-compressed), streaming."""
    return audit_rows(read_rows(path), config=config)
