"""Samples to and from their wire rows (JSON objects), with every problem reported at once.

One cattrs converter, built on the orjson preconf, does the type checking; its primitive hooks are
strict, so ``False`` never becomes ``"False"`` and ``"3"`` never becomes ``3``. Structuring errors
and the samples' own validator refusals are gathered into one ``WireFormatError`` whose problems
read ``message @ $.path``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar, get_origin

import cattrs
from cattrs.cols import list_structure_factory
from cattrs.preconf.orjson import OrjsonConverter, make_converter

from ._errors import SampleError, WireFormatError, describe_value
from ._samples import (
    DEFAULT_GRADING_MODE,
    MC_WIRE_KEYS,
    MCQA_WIRE_KEYS,
    STYLES,
    TEMPLATE_WIRE_KEYS,
    AnyMultipleChoiceSample,
    MCQASample,
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    Template,
    _require_text,
)

__all__ = [
    "converter",
    "decode_mcqa",
    "decode_multiple_choice",
    "encode_mcqa",
    "encode_multiple_choice",
    "question_from_prompt",
]

T = TypeVar("T")

TASK_TYPE: Final = "multiple_choice"
_MC_CORE: Final = MC_WIRE_KEYS
_MCQA_KEYS: Final = MCQA_WIRE_KEYS
_TEMPLATE_KEYS: Final = TEMPLATE_WIRE_KEYS


# --- the converter ---------------------------------------------------------------------------


def _strict(expected: type[T], *also: type) -> Callable[[Any, Any], T]:
    accepted = (expected, *also)

    def structure(value: Any, _: Any) -> T:
        # bool is an int subclass: refuse it where a number is wanted, and numbers where a bool is.
        if isinstance(value, bool) is not (expected is bool) or not isinstance(value, accepted):
            raise TypeError(f"expected {expected.__name__}, got {type(value).__name__}")
        return expected(value)  # type: ignore[call-arg]  # int -> float widening only

    return structure


def _is_list(type_: Any) -> bool:
    return get_origin(type_) is list


def _strict_list(type_: Any, conv: cattrs.BaseConverter) -> Callable[[Any, Any], Any]:
    # cattrs' own list hook iterates any iterable, so "abc" would become ["a", "b", "c"].
    items = list_structure_factory(type_, conv)

    def structure(value: Any, target: Any) -> Any:
        if not isinstance(value, list):
            raise TypeError(f"expected list, got {type(value).__name__}")
        return items(value, target)

    return structure


@functools.cache
def converter() -> OrjsonConverter:
    """The one converter for choicebox's wire types (strict primitives, detailed errors)."""
    conv = make_converter(detailed_validation=True, forbid_extra_keys=True)
    conv.register_structure_hook(str, _strict(str))
    conv.register_structure_hook(int, _strict(int))
    conv.register_structure_hook(float, _strict(float, int))
    conv.register_structure_hook(bool, _strict(bool))
    conv.register_structure_hook_factory(_is_list, _strict_list)
    conv.register_structure_hook_func(lambda t: t == tuple[str, ...], _one_or_many_strings)
    return conv


def _one_or_many_strings(value: Any, _: Any) -> tuple[str, ...]:
    """Rule-file parameters such as ``pattern`` or ``labels``: one string or a list of them.

    Without this hook a lone string would be split into a tuple of its characters.
    """
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise TypeError(f"expected a string or a list of strings, got {type(value).__name__}")


def _problems(exc: Exception, path: str = "$") -> list[str]:
    if isinstance(exc, cattrs.BaseValidationError):
        return list(cattrs.transform_error(exc, path=path, format_exception=_format_exception))
    return [f"{exc} @ {path}"]


def _format_exception(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        return f"extra fields found ({', '.join(sorted(exc.extra_fields))})"
    if isinstance(exc, TypeError | ValueError):
        return str(exc)
    return f"invalid value ({exc})"


def _sample_problem(exc: SampleError) -> str:
    return f"{str(exc).split(': ', 1)[-1]} @ $.{exc.field}"


# --- the context/choices family --------------------------------------------------------------


_CHOICES_FIELDS: Final[tuple[tuple[str, Any], ...]] = (
    ("context", str),
    ("choices", list[str]),
    ("answer_index", int),
)


def _choices_problems(fields: Mapping[str, Any]) -> list[str]:
    """The samples' own refusals for the fields that are well typed, each one, not only the first."""
    problems: list[str] = []
    if "context" in fields:
        try:
            _require_text("context", fields["context"])
        except SampleError as exc:
            problems.append(_sample_problem(exc))
    choices = fields.get("choices")
    if choices is not None and len(choices) < 2:
        problems.append(f"needs at least two choices, got {len(choices)} @ $.choices")
    index = fields.get("answer_index")
    if index is not None and choices is not None and not 0 <= index < len(choices):
        n = len(choices)
        problems.append(
            f"{index} is outside the {n} choices (0..{n - 1}) @ $.answer_index"
            if n
            else f"{index} is outside the choices: there are none @ $.answer_index"
        )
    return problems


def decode_multiple_choice(row: Mapping[str, Any]) -> AnyMultipleChoiceSample:
    """Decode a ``task_type: multiple_choice`` row into the class for its ``style``."""
    if not isinstance(row, Mapping):
        raise WireFormatError([f"expected a JSON object, got {type(row).__name__} @ $"])
    problems: list[str] = []
    task_type = row.get("task_type", TASK_TYPE)
    if task_type != TASK_TYPE:
        problems.append(
            f"task_type must be {TASK_TYPE!r}, got {describe_value(task_type)} @ $.task_type"
        )
    style = row.get("style")
    cls: type[MultipleChoiceQuestionAnswerSample] | type[MultipleChoiceCompletionSample] | None
    if "style" not in row:
        problems.append(f"required field missing (one of {', '.join(STYLES)}) @ $.style")
        cls = None
    elif style == "qa":
        cls = MultipleChoiceQuestionAnswerSample
    elif style == "continuation":
        cls = MultipleChoiceCompletionSample
    else:
        problems.append(
            f"unknown style {describe_value(style)}; expected one of {', '.join(STYLES)} @ $.style"
        )
        cls = None
    # Each core field is typed on its own, so one wrong field never hides the others' problems.
    typed: dict[str, Any] = {}
    for key, type_ in _CHOICES_FIELDS:
        if key not in row:
            problems.append(f"required field missing @ $.{key}")
            continue
        try:
            typed[key] = converter().structure(row[key], type_)
        except Exception as exc:  # cattrs raises its own validation groups
            problems.extend(_problems(exc, f"$.{key}"))
    problems.extend(_choices_problems(typed))
    if cls is not None and not problems:
        extra = {k: v for k, v in row.items() if k not in _MC_CORE}
        try:
            return cls(
                context=typed["context"],
                choices=typed["choices"],
                answer_index=typed["answer_index"],
                extra=extra,
            )
        except SampleError as exc:
            problems.append(_sample_problem(exc))
    raise WireFormatError(problems)


def encode_multiple_choice(sample: AnyMultipleChoiceSample) -> dict[str, Any]:
    row: dict[str, Any] = {
        "task_type": TASK_TYPE,
        "style": sample.style,
        "context": sample.context,
        "choices": list(sample.choices),
        "answer_index": sample.answer_index,
    }
    row.update(sample.extra)
    return row


# --- the lettered question family ------------------------------------------------------------


def question_from_prompt(params: Mapping[str, Any] | None) -> str | None:
    """The text of the last user message in ``responses_create_params.input``, if any."""
    if not isinstance(params, Mapping):
        return None
    messages = params.get("input")
    if isinstance(messages, str):
        return messages
    if not isinstance(messages, Sequence):
        return None
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role", "user") == "user":
            return _message_text(message.get("content"))
    return None


def _message_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = [
            p.get("text")
            for p in content
            if isinstance(p, Mapping) and p.get("type") in ("input_text", "text", "output_text")
        ]
        texts = [p for p in parts if isinstance(p, str)]
        return "".join(texts) if texts else None
    return None


def _decode_options(value: Any, problems: list[str]) -> list[tuple[str, str]]:
    if not isinstance(value, list):
        problems.append(
            f"expected a list of single-key objects, got {type(value).__name__} @ $.options"
        )
        return []
    pairs: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        # `type(...) is dict` first: decoded JSON is always a dict, and the Mapping ABC check
        # costs several times more on a path that runs once per option of every row.
        if not (type(item) is dict or isinstance(item, Mapping)) or not item:
            problems.append(f'expected an object like {{"A": "text"}} @ $.options[{i}]')
            continue
        for letter, text in item.items():
            if text is None:
                # Gym data pads option lists with nulls; a null is "no such choice", not a choice.
                continue
            if (
                type(letter) is str
                and len(letter) == 1
                and letter.isalpha()
                and letter not in seen
                and type(text) is str
                and text.strip()
            ):
                seen.add(letter)
                pairs.append((letter, text))
                continue
            where = f"$.options[{i}].{letter}"
            if not (isinstance(letter, str) and len(letter) == 1 and letter.isalpha()):
                shown = describe_value(letter)
                problems.append(f"option letter {shown} is not a single letter @ $.options[{i}]")
                continue
            if letter in seen:
                problems.append(
                    f"option letter {describe_value(letter)} appears twice @ $.options[{i}]"
                )
                continue
            seen.add(letter)
            if not isinstance(text, str):
                problems.append(f"expected option text, got {type(text).__name__} @ {where}")
                continue
            if not text.strip():
                problems.append(f"option text must not be empty @ {where}")
                continue
            pairs.append((letter, text))
    return pairs


def _decode_template(value: Any, problems: list[str]) -> Template | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        problems.append(f"expected an object, got {type(value).__name__} @ $.template_metadata")
        return None
    ok = True
    regex = value.get("output_regex")
    if not (
        regex is None
        or isinstance(regex, str)
        or (isinstance(regex, list) and all(isinstance(p, str) for p in regex))
    ):
        problems.append(
            "output_regex must be a pattern or a list of patterns, "
            f"got {type(regex).__name__} @ $.template_metadata.output_regex"
        )
        ok = False
    named: dict[str, Any] = {}
    for key in ("template_id", "prompt_type", "format_type", "answer_prefix"):
        item = value.get(key)
        if item is not None and not isinstance(item, str):
            problems.append(
                f"expected a string, got {type(item).__name__} @ $.template_metadata.{key}"
            )
            ok = False
        named[key] = item
    if not ok:
        return None
    return Template(
        output_regex=regex,
        extra={k: v for k, v in value.items() if k not in _TEMPLATE_KEYS},
        regex_as_list=isinstance(regex, list),
        wire_order=tuple(value),
        **named,
    )


def _decode_question(row: Mapping[str, Any], params: Any, problems: list[str]) -> str | None:
    """The row's ``question``, or the text of its user message when it has none."""
    question = row.get("question")
    if question is None:
        question = question_from_prompt(params)
        if question is None:
            problems.append(
                "no question: the row has neither `question` nor a user message "
                "@ $.responses_create_params.input"
            )
        elif not question.strip():
            problems.append(
                "the user message, read as the question, must not be empty "
                "@ $.responses_create_params.input"
            )
    elif not isinstance(question, str):
        problems.append(f"expected a string, got {type(question).__name__} @ $.question")
    elif not question.strip():
        problems.append("must not be empty @ $.question")
    return question if isinstance(question, str) else None


def decode_mcqa(
    row: Mapping[str, Any],
    *,
    options_fallback: Callable[[str], list[tuple[str, str]]] | None = None,
) -> MCQASample:
    """Decode a NeMo Gym ``mcqa`` row.

    ``options_fallback`` is used when the row has no ``options`` (Gym's rollout files drop them):
    it receives the question text and returns the (letter, text) pairs it finds there.
    """
    if not isinstance(row, Mapping):
        raise WireFormatError([f"expected a JSON object, got {type(row).__name__} @ $"])
    problems: list[str] = []

    params = row.get("responses_create_params")
    if params is not None and not isinstance(params, Mapping):
        problems.append(
            f"expected an object, got {type(params).__name__} @ $.responses_create_params"
        )
        params = None
    question = _decode_question(row, params, problems)

    before_options = len(problems)
    if "options" in row:
        options = _decode_options(row["options"], problems)
    elif options_fallback is not None and isinstance(question, str):
        options = options_fallback(question)
        if not options:
            problems.append(
                "required field missing, and the prompt lists no lettered options @ $.options"
            )
    else:
        options = []
        problems.append("required field missing @ $.options")
    option_problems = len(problems) - before_options
    if "options" in row and not option_problems and len(options) < 2:
        problems.append(f"needs at least two options, got {len(options)} @ $.options")

    expected = row.get("expected_answer")
    if expected is None:
        problems.append("required field missing @ $.expected_answer")
    elif not isinstance(expected, str):
        problems.append(f"expected a letter, got {type(expected).__name__} @ $.expected_answer")
    elif options and not option_problems and expected not in dict(options):
        letters = ", ".join(letter for letter, _ in options)
        shown = describe_value(expected)
        problems.append(f"{shown} is not one of the option letters {letters} @ $.expected_answer")

    grading_mode = row.get("grading_mode")
    if grading_mode is None:
        grading_mode = DEFAULT_GRADING_MODE
    elif not isinstance(grading_mode, str) or not grading_mode:
        shown = describe_value(grading_mode)
        problems.append(f"expected a mode name, got {shown} @ $.grading_mode")

    uuid = row.get("uuid")
    if uuid is not None and not isinstance(uuid, str):
        problems.append(f"expected a string, got {type(uuid).__name__} @ $.uuid")

    template = _decode_template(row.get("template_metadata"), problems)
    if problems:
        raise WireFormatError(problems)
    # Both were checked above, or a problem was recorded.
    assert isinstance(question, str)
    assert isinstance(expected, str)
    try:
        return MCQASample(
            question=question,
            options=options,
            expected_answer=expected,
            grading_mode=grading_mode,
            template=template,
            uuid=uuid,
            metadata=row.get("metadata"),
            responses_create_params=params,
            extra={k: v for k, v in row.items() if k not in _MCQA_KEYS},
            wire_order=tuple(row),
        )
    except SampleError as exc:
        raise WireFormatError([_sample_problem(exc)]) from None


def _encode_template(template: Template) -> dict[str, Any]:
    out: dict[str, Any] = {}
    # A key the source row spelled is written back even when empty (`[]`) or null.
    present = set(template.wire_order)
    if template.output_regex:
        if len(template.output_regex) == 1 and not template.regex_as_list:
            out["output_regex"] = template.output_regex[0]
        else:
            out["output_regex"] = list(template.output_regex)
    elif "output_regex" in present:
        out["output_regex"] = [] if template.regex_as_list else None
    for key in ("template_id", "prompt_type", "format_type", "answer_prefix"):
        value = getattr(template, key)
        if value is not None or key in present:
            out[key] = value
    out.update(template.extra)
    return _in_order(out, template.wire_order)


def _in_order(fields: dict[str, Any], order: Sequence[str]) -> dict[str, Any]:
    """``fields`` with the keys named in ``order`` first, in that order."""
    ordered = {key: fields[key] for key in order if key in fields}
    ordered.update((key, value) for key, value in fields.items() if key not in ordered)
    return ordered


def _plain(value: Any) -> Any:
    """Read-only mappings back to plain dicts, recursively, for JSON encoders."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def encode_mcqa(sample: MCQASample) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "question": sample.question,
        "responses_create_params": _plain(sample.responses_create_params),
        "options": [{letter: text} for letter, text in sample.options.items()],
        "expected_answer": sample.expected_answer,
        "grading_mode": sample.grading_mode,
        "template_metadata": None if sample.template is None else _encode_template(sample.template),
        "uuid": sample.uuid,
        "metadata": sample.metadata,
    }
    present = set(sample.wire_order)
    # A field is written when the source row had it, or when it carries information: the question
    # is implied by the prompt when there is one, and the default grading mode by its absence.
    if "question" not in present and (
        question_from_prompt(sample.responses_create_params) == sample.question
    ):
        del fields["question"]
    if "grading_mode" not in present and sample.grading_mode == DEFAULT_GRADING_MODE:
        del fields["grading_mode"]
    for key in ("responses_create_params", "template_metadata", "uuid", "metadata"):
        if key not in present and fields[key] is None:
            del fields[key]
    fields.update(_plain(sample.extra))
    return _in_order(fields, sample.wire_order)
