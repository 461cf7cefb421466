"""Safe, deterministic repairs of multiple-choice samples, each one listed as a ``Change``.

``fix`` tidies text (Unicode NFC, trimmed, carriage returns and stray spaces, by the rules of
``_tidy`` that ``untidy_text`` reports with), strips a choice's copy of its own letter label
(``A) Paris`` -> ``Paris``) and re-renders a prompt whose option list drifted from ``options``,
when the sample's template is a shipped one and the prompt provably follows it. What it never
does: reorder choices, change which text the gold answer points to, drop a sample, touch
``extra``/``metadata``, merge table columns, strip part markers or stale labels, or tidy away the
control characters of LaTeX residue (the only trace of the lost command). Every result is checked
for exactly that, and re-audited: a repair that would break a guarantee or raise a new finding is
refused, and the sample is returned unchanged with the refusal listed (``Change.applied`` false).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

import attrs
import orjson

from choicebox._errors import FixFileError, WireFormatError
from choicebox._prompt_options import locate_options
from choicebox._samples import (
    MCQASample,
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
)
from choicebox._templates import templates
from choicebox._wire import question_from_prompt
from choicebox.jsonl import dumps, is_gzip

from ._checks import choice_labels
from ._config import AuditConfig
from ._prompt import prompt_option_problems
from ._run import audit
from ._tidy import column_layout, tidy
from ._view import _view_of_sample

__all__ = ["Change", "FixSummary", "RowFix", "fix", "fix_file", "fix_row"]

S = TypeVar("S", MCQASample, MultipleChoiceQuestionAnswerSample, MultipleChoiceCompletionSample)

_SENTINEL: Final = "\x00choicebox-question\x00"
_PYTHON_STYLE: Final = re.compile(rb'^\{"(?:[^"\\]|\\.)*": ')


@attrs.frozen(kw_only=True)
class Change:
    """One repair of one field: the check it answers, the text before and after, and why.

    ``applied`` is false for a repair that was needed but refused as unsafe; the sample is then
    returned unchanged.
    """

    check: str
    field: str
    before: str | None
    after: str | None
    description: str
    applied: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "field": self.field,
            "before": self.before,
            "after": self.after,
            "description": self.description,
            "applied": self.applied,
        }


# --- text ----------------------------------------------------------------------------------------


def _canon(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


def _unlabelled(letter: str, text: str) -> str:
    """``text`` without a leading copy of its own label ``letter`` (any label form)."""
    match = re.match(
        rf"\s*(?:\({letter}\)|\[{letter}\]|{letter}[):\].])\s*(?=\S)", text, re.IGNORECASE
    )
    return text[match.end() :] if match else text


def _same_gold(letter: str, before: str, after: str) -> bool:
    """The gold text is unchanged up to NFC, whitespace and a stripped copy of its own label."""
    wanted = _canon(after)
    return wanted in (_canon(before), _canon(_unlabelled(letter, before)))


def _choice_changes(
    letters: Sequence[str | None],
    texts: Sequence[str],
    fields: Sequence[str],
    question: str | None,
) -> tuple[list[str], list[Change]]:
    """Tidied and unlabelled choice texts, in the same order, and the changes made."""
    changes: list[Change] = []
    columns = column_layout(texts)
    tidied: list[str] = []
    for i, (field, text) in enumerate(zip(fields, texts, strict=True)):
        clean = tidy(text, choice=True, columns=i in columns)
        if clean != text:
            changes.append(
                Change(
                    check="untidy_text",
                    field=field,
                    before=text,
                    after=clean,
                    description="tidied the text (Unicode NFC, trimmed, whitespace)",
                )
            )
        tidied.append(clean)
    out = list(tidied)
    for _ in range(4):  # a label may be doubled ("B) B) Lyon"); strip copies until none is left
        labels = choice_labels(list(zip(letters, out, strict=True)), question)
        if labels.stale:
            stale = ", ".join(f"({letter})" for letter in labels.stale.values())
            changes.append(
                Change(
                    check="choice_repeats_label",
                    field=re.split(r"[.\[]", fields[0])[0],  # "options" or "choices"
                    before=None,
                    after=None,
                    description=f"cannot strip the labels {stale}: the choices were lettered "
                    "again after the labels were written, and which text each label meant needs "
                    "a person",
                    applied=False,
                )
            )
        labelled = labels.own
        if not labelled:
            break
        for i, end in sorted(labelled.items()):
            stripped = tidy(out[i][end:], choice=True, columns=i in columns)
            changes.append(
                Change(
                    check="choice_repeats_label",
                    field=fields[i],
                    before=out[i],
                    after=stripped,
                    description=f"stripped the copy of its own label {out[i][:end].strip()!r}",
                )
            )
            out[i] = stripped
    # Stripping a label can end a column layout ("A)  x" shared its gap count with "B) y\u00a0z"):
    # tidy again until the texts are what the audit accepts.
    for _ in range(len(out)):
        columns = column_layout(out)
        again = {i: tidy(t, choice=True, columns=i in columns) for i, t in enumerate(out)}
        changed = {i: t for i, t in again.items() if t != out[i]}
        if not changed:
            break
        for i, clean in sorted(changed.items()):
            changes.append(
                Change(
                    check="untidy_text",
                    field=fields[i],
                    before=out[i],
                    after=clean,
                    description="tidied the text (whitespace no longer laid out in columns)",
                )
            )
            out[i] = clean
    return out, changes


# --- prompts -------------------------------------------------------------------------------------


def _rerender(prompt: str, template_id: str, options: Mapping[str, str]) -> str | None:
    """``prompt`` rendered again from its shipped template with ``options``, or None when the
    prompt cannot be shown to be exactly that template around its current option list."""
    spec = templates().get(template_id)
    if spec is None:
        return None
    block = locate_options(prompt, list(options))
    if block is None:
        return None
    old = {o.letter: o.text for o in block.options}
    framed = spec.render(_SENTINEL, old)
    if framed.count(_SENTINEL) != 1:
        return None
    prefix, suffix = framed.split(_SENTINEL)
    if not (
        prompt.startswith(prefix)
        and prompt.endswith(suffix)
        and len(prompt) > len(prefix) + len(suffix)
    ):
        return None
    question = prompt[len(prefix) : len(prompt) - len(suffix)]
    if spec.render(question, old) != prompt:  # the decomposition must be exact
        return None
    rendered = spec.render(question, options)
    return None if prompt_option_problems(rendered, options) else rendered


def _replace_prompt(params: Mapping[str, Any], text: str) -> dict[str, Any] | None:
    """A copy of ``params`` whose last user message reads ``text`` (None: no single place)."""
    plain: dict[str, Any] = orjson.loads(orjson.dumps(_plain(params)))
    messages = plain.get("input")
    if isinstance(messages, str):
        plain["input"] = text
        return plain
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if not (isinstance(message, dict) and message.get("role", "user") == "user"):
            continue
        content = message.get("content")
        if isinstance(content, str):
            message["content"] = text
            return plain
        if isinstance(content, list):
            parts = [
                p
                for p in content
                if isinstance(p, dict)
                and p.get("type") in ("input_text", "text", "output_text")
                and isinstance(p.get("text"), str)
            ]
            if len(parts) != 1:
                return None
            parts[0]["text"] = text
            return plain
        return None
    return None


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# --- fix -----------------------------------------------------------------------------------------


def fix(sample: S) -> tuple[S, tuple[Change, ...]]:
    """The sample with safe repairs applied, and each change made.

    When a repair is needed but cannot be made safely, the sample is returned unchanged and the
    refused repairs are listed with ``applied=False``.
    """
    if isinstance(sample, MCQASample):
        fixed, changes = _fix_mcqa(sample)
    elif isinstance(sample, MultipleChoiceSample):
        fixed, changes = _fix_mc(sample)
    else:
        raise TypeError(f"expected a choicebox sample, got {type(sample).__name__}")
    refused = [c for c in changes if not c.applied]
    if not refused and fixed is not sample:
        refused = _verify(sample, fixed)
    if refused:
        return sample, tuple(refused)
    return fixed, tuple(changes)


def _fix_mcqa(sample: MCQASample) -> tuple[MCQASample, list[Change]]:
    changes: list[Change] = []
    prompt = question_from_prompt(sample.responses_create_params)
    question = sample.question
    derived = prompt is not None and question == prompt  # the question is the prompt: keep it
    if not derived:
        clean = tidy(question, choice=False)
        if clean != question:
            changes.append(
                Change(
                    check="untidy_text",
                    field="question",
                    before=question,
                    after=clean,
                    description="tidied the text (Unicode NFC, trimmed, line ends)",
                )
            )
            question = clean
    letters = sample.letters
    texts, option_changes = _choice_changes(
        letters,
        list(sample.options.values()),
        [f"options.{letter}" for letter in letters],
        _view_of_sample(sample).question,  # the stem, as the audit reads it, not the whole prompt
    )
    changes.extend(option_changes)
    options = dict(zip(letters, texts, strict=True))
    params = sample.responses_create_params
    if prompt is not None and params is not None:
        problems = prompt_option_problems(prompt, options)
        if problems:
            template_id = sample.template.template_id if sample.template is not None else None
            rendered = _rerender(prompt, template_id, options) if template_id else None
            new_params = _replace_prompt(params, rendered) if rendered is not None else None
            if rendered is None or new_params is None:
                if not template_id:
                    why = "the row names no template (template_metadata.template_id)"
                elif template_id not in templates():
                    why = f"{template_id!r} is not a shipped template"
                else:
                    why = f"the prompt does not provably follow the template {template_id!r}"
                changes.append(
                    Change(
                        check="prompt_options_mismatch",
                        field="responses_create_params.input",
                        before=prompt,
                        after=None,
                        description=f"cannot re-render the prompt ({_first(problems)}): {why}",
                        applied=False,
                    )
                )
            else:
                changes.append(
                    Change(
                        check="prompt_options_mismatch",
                        field="responses_create_params.input",
                        before=prompt,
                        after=rendered,
                        description=f"re-rendered the prompt from the template {template_id!r}: "
                        + _first(problems),
                    )
                )
                params = new_params
                if derived:
                    question = rendered
    if not changes:
        return sample, changes
    return (
        attrs.evolve(sample, question=question, options=options, responses_create_params=params),
        changes,
    )


def _first(problems: Sequence[str]) -> str:
    more = len(problems) - 1
    return problems[0] + (f" (and {more} more)" if more else "")


def _fix_mc(sample: S) -> tuple[S, list[Change]]:
    assert isinstance(sample, MultipleChoiceSample)
    changes: list[Change] = []
    context = tidy(sample.context, choice=False)
    if context != sample.context:
        changes.append(
            Change(
                check="untidy_text",
                field="context",
                before=sample.context,
                after=context,
                description="tidied the text (Unicode NFC, trimmed, line ends)",
            )
        )
    letters = [chr(ord("A") + i) if i < 26 else None for i in range(len(sample.choices))]
    texts, choice_changes = _choice_changes(
        letters,
        list(sample.choices),
        [f"choices[{i}]" for i in range(len(sample.choices))],
        sample.context,
    )
    changes.extend(choice_changes)
    if not changes:
        return sample, changes
    return attrs.evolve(sample, context=context, choices=tuple(texts)), changes


def _verify(before: Any, after: Any) -> list[Change]:
    """Refusals for a fixed sample that breaks a guarantee or raises a new finding."""
    problems: list[str] = []
    if isinstance(before, MCQASample):
        assert isinstance(after, MCQASample)
        if after.letters != before.letters:
            problems.append("the option letters or their order would change")
        if after.expected_answer != before.expected_answer:
            problems.append("the gold letter would change")
        elif not _same_gold(before.expected_answer, before.answer_text, after.answer_text):
            problems.append("the gold text would change")
        if after.metadata is not before.metadata or after.extra != before.extra:
            problems.append("metadata or extra would change")
        gold_field = "expected_answer"
    else:
        assert isinstance(after, MultipleChoiceSample)
        if len(after.choices) != len(before.choices) or after.answer_index != before.answer_index:
            problems.append("the choices or the gold index would change")
        elif not _same_gold(chr(ord("A") + before.answer_index), before.answer, after.answer):
            problems.append("the gold text would change")
        if after.extra != before.extra:
            problems.append("extra would change")
        gold_field = "answer_index"
    config = AuditConfig.default()
    had = {(f.check, f.field) for f in audit(before, config=config).findings}
    new = [f for f in audit(after, config=config).findings if (f.check, f.field) not in had]
    problems.extend(f"it would raise {f.check} on {f.field}: {f.message}" for f in new)
    return [
        Change(
            check="fix",
            field=gold_field if "gold" in p else "$",
            before=None,
            after=None,
            description=f"left unchanged: {p}",
            applied=False,
        )
        for p in problems
    ]


# --- rows and files ------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class RowFix:
    """What ``fix_row`` made of one row: the row to write, the changes, or why it was left alone."""

    row: Any
    changes: tuple[Change, ...] = ()
    problem: str | None = None  # set when the row is written unchanged although it needs attention

    @property
    def changed(self) -> bool:
        return any(c.applied for c in self.changes)


def fix_row(row: Any) -> RowFix:
    """Fix one raw row; only the fields a repair touched differ from ``row`` (null option padding,
    key order and every other field stay as they were)."""
    if not isinstance(row, Mapping):
        return RowFix(row=row, problem="not a JSON object")
    is_mc = row.get("task_type") == "multiple_choice" or ("context" in row and "choices" in row)
    try:
        sample: Any = MultipleChoiceSample.from_wire(row) if is_mc else MCQASample.from_wire(row)
    except WireFormatError as exc:
        return RowFix(row=row, problem="cannot be decoded: " + "; ".join(exc.problems))
    fixed, changes = fix(sample)
    refused = [c for c in changes if not c.applied]
    if refused:
        return RowFix(
            row=row,
            changes=changes,
            problem="; ".join(c.description for c in refused),
        )
    if fixed is sample:
        return RowFix(row=row)
    return RowFix(row=_patch(row, sample.to_wire(), fixed.to_wire()), changes=changes)


def _patch(raw: Mapping[str, Any], before: Mapping[str, Any], after: Mapping[str, Any]) -> Any:
    out = dict(raw)
    for key, value in after.items():
        if key not in raw or before.get(key) == value:
            continue
        if key == "options" and isinstance(raw[key], list):
            texts = {k: v for item in value for k, v in item.items()}
            out[key] = [
                {k: (texts.get(k, v) if v is not None else v) for k, v in item.items()}
                if isinstance(item, Mapping)
                else item
                for item in raw[key]
            ]
        else:
            out[key] = value
    return out


@attrs.define
class FixSummary:
    """Counts of a ``fix_file`` run."""

    rows: int = 0
    changed_rows: int = 0
    changes: int = 0
    left_unchanged: list[tuple[int, str]] = attrs.field(factory=list)  # (line, why)


def fix_file(
    source: str | Path,
    output: str | Path,
    *,
    on_row: Callable[[int, RowFix], None] | None = None,
) -> FixSummary:
    """Fix every row of ``source`` into ``output``: one line per input line, in order.

    Rows that are not JSON, do not decode or cannot be fixed safely are written unchanged (and
    counted in ``left_unchanged``). The output is written to ``<output>.partial`` and renamed.
    """
    output = Path(output)
    partial = output.with_name(output.name + ".partial")
    summary = FixSummary()
    try:
        if is_gzip(source):
            raise FixFileError(
                f"{source}: the file is gzip-compressed: decompress it first "
                "(fix writes plain JSONL, one line per input line)"
            )
        with open(source, "rb") as reader, open(partial, "wb") as writer:
            for number, raw in enumerate(reader, start=1):
                if not raw.strip():
                    writer.write(raw)
                    continue
                body = raw.rstrip(b"\r\n")
                ending = raw[len(body) :] or b"\n"
                summary.rows += 1
                try:
                    value = orjson.loads(body)
                except orjson.JSONDecodeError as exc:
                    problem = f"invalid JSON: {exc.msg} at column {exc.colno}"
                    result = RowFix(row=None, problem=problem)
                else:
                    result = fix_row(value)
                if result.changed:
                    line = (
                        dumps(result.row, style="python")
                        if _PYTHON_STYLE.match(body)
                        else dumps(result.row)
                    )
                    writer.write(line + ending)
                    summary.changed_rows += 1
                    summary.changes += sum(1 for c in result.changes if c.applied)
                else:
                    writer.write(body + ending)
                if result.problem is not None:
                    summary.left_unchanged.append((number, result.problem))
                if on_row is not None:
                    on_row(number, result)
        os.replace(partial, output)
    except FixFileError:
        raise
    except OSError as exc:
        where = str(exc.filename or source)
        raise FixFileError(exc.strerror or str(exc), path=where) from None
    return summary
