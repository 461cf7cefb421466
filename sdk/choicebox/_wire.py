"""The NeMo Gym row format: its field names and defaults, the converter, and writing rows.

Reading a row (and every problem it has) is ``_reader``'s job; this module holds what both
directions share: the keys each family spells its fields with, the user message a prompt's
question is read from, and the encoders that write samples back as rows, keys in the order they
were read. One cattrs converter, built on the orjson preconf, does the type checking of rule-file
parameters and context/choices fields; its primitive hooks are strict, so ``False`` never becomes
``"False"`` and ``"3"`` never becomes ``3``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal, Protocol, TypeAlias, TypeVar, get_origin

import cattrs
from cattrs.cols import list_structure_factory
from cattrs.preconf.orjson import OrjsonConverter, make_converter

from ._prompt_options import options_listed

__all__ = [
    "DEFAULT_GRADING_MODE",
    "MCQA_WIRE_KEYS",
    "MC_WIRE_KEYS",
    "STYLES",
    "TASK_TYPE",
    "TEMPLATE_WIRE_KEYS",
    "Style",
    "converter",
    "encode_mcqa",
    "encode_multiple_choice",
    "question_from_prompt",
]

T = TypeVar("T")

Style: TypeAlias = Literal["qa", "continuation"]
STYLES: Final[tuple[Style, ...]] = ("continuation", "qa")
TASK_TYPE: Final = "multiple_choice"
DEFAULT_GRADING_MODE: Final = "strict_single_letter_boxed"

# The keys each wire row spells its own fields with: ``extra`` may not reuse them, since an extra
# column of that name would overwrite (or be read back as) the field on the wire.
MC_WIRE_KEYS: Final = ("task_type", "style", "context", "choices", "answer_index")
MCQA_WIRE_KEYS: Final = (
    "question",
    "responses_create_params",
    "options",
    "expected_answer",
    "grading_mode",
    "template_metadata",
    "uuid",
    "metadata",
)
TEMPLATE_WIRE_KEYS: Final = (
    "output_regex",
    "template_id",
    "prompt_type",
    "format_type",
    "answer_prefix",
)


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


# --- the prompt ------------------------------------------------------------------------------


def question_from_prompt(params: Mapping[str, Any] | None) -> str | None:
    """The text of the last user message in ``responses_create_params.input``, if any."""
    # `type(...) is dict` / `list` first: decoded JSON always is one, and an ABC isinstance check
    # costs several times more on a path that runs for every row read.
    if not (type(params) is dict or isinstance(params, Mapping)):
        return None
    messages = params.get("input")
    if type(messages) is not list:
        if isinstance(messages, str):
            return messages
        if not isinstance(messages, Sequence):
            return None
    for message in reversed(messages):
        if (type(message) is dict or isinstance(message, Mapping)) and message.get(
            "role", "user"
        ) == "user":
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


# --- writing rows ----------------------------------------------------------------------------
# The encoders take samples by their shape: the sample classes (``_samples``) call them, so they
# cannot be imported here without a circle (values import their codec, never the reverse).


class _MultipleChoiceShape(Protocol):
    @property
    def style(self) -> str: ...
    @property
    def context(self) -> str: ...
    @property
    def choices(self) -> tuple[str, ...]: ...
    @property
    def answer_index(self) -> int: ...
    @property
    def extra(self) -> Mapping[str, Any]: ...


class _TemplateShape(Protocol):
    @property
    def output_regex(self) -> tuple[str, ...]: ...
    @property
    def regex_as_list(self) -> bool: ...
    @property
    def template_id(self) -> str | None: ...
    @property
    def prompt_type(self) -> str | None: ...
    @property
    def format_type(self) -> str | None: ...
    @property
    def answer_prefix(self) -> str | None: ...
    @property
    def extra(self) -> Mapping[str, Any]: ...
    @property
    def wire_order(self) -> tuple[str, ...]: ...


class _MCQAShape(Protocol):
    @property
    def question(self) -> str: ...
    @property
    def options(self) -> Mapping[str, str]: ...
    @property
    def expected_answer(self) -> str: ...
    @property
    def grading_mode(self) -> str: ...
    @property
    def template(self) -> _TemplateShape | None: ...
    @property
    def uuid(self) -> str | None: ...
    @property
    def metadata(self) -> Any: ...
    @property
    def responses_create_params(self) -> Mapping[str, Any] | None: ...
    @property
    def extra(self) -> Mapping[str, Any]: ...
    @property
    def wire_order(self) -> tuple[str, ...]: ...


def encode_multiple_choice(sample: _MultipleChoiceShape) -> dict[str, Any]:
    """The ``task_type: multiple_choice`` row of ``sample``: core fields, then ``extra``."""
    row: dict[str, Any] = {
        "task_type": TASK_TYPE,
        "style": sample.style,
        "context": sample.context,
        "choices": list(sample.choices),
        "answer_index": sample.answer_index,
    }
    row.update(sample.extra)
    return row


def _encode_template(template: _TemplateShape) -> dict[str, Any]:
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


def encode_mcqa(sample: _MCQAShape) -> dict[str, Any]:
    """The NeMo Gym row of ``sample``, keys in the order of the row it was read from."""
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
    # is implied by the prompt when there is one, the default grading mode by its absence, and the
    # options of a row read without them (a Gym rollout) by the prompt that still lists them.
    prompt = question_from_prompt(sample.responses_create_params)
    if "question" not in present and prompt == sample.question:
        del fields["question"]
    if present and "options" not in present:
        listed = options_listed(sample.question, prompt)
        if listed is not None and listed.pairs == tuple(sample.options.items()):
            del fields["options"]
    if "grading_mode" not in present and sample.grading_mode == DEFAULT_GRADING_MODE:
        del fields["grading_mode"]
    for key in ("responses_create_params", "template_metadata", "uuid", "metadata"):
        if key not in present and fields[key] is None:
            del fields[key]
    fields.update(_plain(sample.extra))
    return _in_order(fields, sample.wire_order)
