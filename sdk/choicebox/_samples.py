"""Immutable multiple-choice samples, validated on construction.

Two families share this module:

* the context/choices family (``MultipleChoiceSample`` and its two styles), where the answer is an
  index into ``choices``;
* the lettered question family (``MCQASample``), the shape of a NeMo Gym ``mcqa`` row, where the
  answer is an option letter.

An invalid sample cannot exist: every refusal raises ``SampleError`` naming the field. A sample
decoded from a row (``from_wire``) is built from the reading of ``_reader``, which has made every
check already, so its fields are set without running the validators a second time; the encoders
and the row reader live in ``_wire`` and ``_reader``, which know nothing of these classes.
"""

from __future__ import annotations

import string
import types
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Final, Literal, TypeAlias, TypeVar, overload

import attrs

from ._errors import SampleError, WireFormatError, describe_value
from ._problems import Problem
from ._reader import (
    MultipleChoiceReading,
    RowReading,
    blank,
    is_option_letter,
    mcqa_extra,
    read_mcqa_row,
    read_multiple_choice_row,
    template_extra,
)
from ._templates import lettered_options, prompt_template
from ._wire import (
    DEFAULT_GRADING_MODE,
    MC_WIRE_KEYS,
    MCQA_WIRE_KEYS,
    STYLES,
    TEMPLATE_WIRE_KEYS,
    Style,
    encode_mcqa,
    encode_multiple_choice,
)

__all__ = [
    "DEFAULT_GRADING_MODE",
    "MCQASample",
    "MultipleChoiceCompletionSample",
    "MultipleChoiceQuestionAnswerSample",
    "MultipleChoiceSample",
    "Style",
    "Template",
]

_EMPTY: Final[Mapping[str, Any]] = types.MappingProxyType({})
_A = TypeVar("_A")


def _unchecked(cls: type[_A], **fields: Any) -> _A:
    """An instance of the frozen attrs class ``cls`` from values a reader has already validated
    and converted: building a sample from a ``RowReading`` checks nothing twice. Every field of
    ``cls`` must be given."""
    instance = object.__new__(cls)
    for name, value in fields.items():
        object.__setattr__(instance, name, value)
    return instance


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A read-only copy, so a sample's mappings cannot change behind its back."""
    if not value:
        return _EMPTY
    if not isinstance(value, Mapping):
        raise TypeError(f"expected a mapping, got {type(value).__name__}")
    return types.MappingProxyType(dict(value))


def _extra_validator(field: str, reserved: Sequence[str]) -> Any:
    def check(instance: Any, attribute: attrs.Attribute[Any], value: Mapping[str, Any]) -> None:
        for key in value:
            if not isinstance(key, str):
                raise SampleError(field, f"keys must be strings, got {type(key).__name__}")
            if key in reserved:
                raise SampleError(
                    f"{field}.{key}",
                    f"{describe_value(key)} is a field of the row, not an extra column",
                )

    return check


def _require_text(field: str, value: object) -> str:
    if not isinstance(value, str):
        raise SampleError(field, f"expected a string, got {type(value).__name__}")
    if blank(value):
        raise SampleError(field, "must not be empty")
    return value


# --- the context/choices family ------------------------------------------------------------------


class MultipleChoiceSample:
    """A context, its choices and the index of the correct one.

    Calling ``MultipleChoiceSample(..., style=...)`` builds the specific class for the style:
    ``MultipleChoiceQuestionAnswerSample`` for ``"qa"``, ``MultipleChoiceCompletionSample`` for
    ``"continuation"`` (the default). The distinct classes make the guarantee visible in the type:
    only question-style contexts are judged for completeness.
    """

    __slots__ = ()

    context: str
    choices: tuple[str, ...]
    answer_index: int
    style: Style
    extra: Mapping[str, Any]

    @overload
    def __new__(
        cls,
        *,
        context: str,
        choices: Sequence[str],
        answer_index: int,
        style: Literal["qa"],
        extra: Mapping[str, Any] | None = ...,
    ) -> MultipleChoiceQuestionAnswerSample: ...

    @overload
    def __new__(
        cls,
        *,
        context: str,
        choices: Sequence[str],
        answer_index: int,
        style: Literal["continuation"] = ...,
        extra: Mapping[str, Any] | None = ...,
    ) -> MultipleChoiceCompletionSample: ...

    def __new__(cls, **kwargs: Any) -> Any:
        if cls is not MultipleChoiceSample:
            return object.__new__(cls)
        # Returning an uninitialised instance of the style's class lets Python run that class's
        # own __init__ (and so its validators) exactly once with the caller's arguments.
        return object.__new__(_class_for_style(kwargs.get("style", "continuation")))

    @property
    def answer(self) -> str:
        """The text of the correct choice."""
        return self.choices[self.answer_index]

    @classmethod
    def from_wire(cls, row: Mapping[str, Any]) -> AnyMultipleChoiceSample:
        """Decode a wire row; the result is the specific class for the row's ``style``."""
        reading = read_multiple_choice_row(row)
        if isinstance(reading, list):
            raise WireFormatError(reading)
        sample: AnyMultipleChoiceSample = (
            _unchecked(MultipleChoiceQuestionAnswerSample, **_mc_fields(reading))
            if reading.style == "qa"
            else _unchecked(MultipleChoiceCompletionSample, **_mc_fields(reading))
        )
        if cls is not MultipleChoiceSample and not isinstance(sample, cls):
            raise WireFormatError(
                [
                    Problem(
                        "wrong_value",
                        f"style {reading.style!r} does not match {cls.__name__}",
                        "$.style",
                    )
                ]
            )
        return sample

    def to_wire(self) -> dict[str, Any]:
        """Encode to the wire row: core fields, then the ``extra`` columns unchanged."""
        return encode_multiple_choice(self)


def _mc_fields(reading: MultipleChoiceReading) -> dict[str, Any]:
    return {
        "context": reading.context,
        "choices": reading.choices,
        "answer_index": reading.answer_index,
        "style": reading.style,
        "extra": _frozen_mapping(reading.extra),
    }


def _class_for_style(style: object) -> type[MultipleChoiceSample]:
    if style == "qa":
        return MultipleChoiceQuestionAnswerSample
    if style == "continuation":
        return MultipleChoiceCompletionSample
    raise SampleError(
        "style", f"unknown style {describe_value(style)}; expected one of {', '.join(STYLES)}"
    )


def _validate_choices(
    instance: Any, attribute: attrs.Attribute[Any], value: tuple[str, ...]
) -> None:
    if len(value) < 2:
        raise SampleError("choices", f"needs at least two choices, got {len(value)}")
    for i, choice in enumerate(value):
        if not isinstance(choice, str):
            raise SampleError(f"choices[{i}]", f"expected a string, got {type(choice).__name__}")


def _validate_context(instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    _require_text("context", value)


def _validate_answer_index(instance: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise SampleError("answer_index", f"expected an integer, got {type(value).__name__}")
    n = len(instance.choices)
    if not 0 <= value < n:
        raise SampleError("answer_index", f"{value} is outside the {n} choices (0..{n - 1})")


def _style_validator(expected: Style) -> Any:
    def check(instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
        if value != expected:
            raise SampleError(
                "style",
                f"{type(instance).__name__} has style {expected!r}, not {describe_value(value)}; "
                "use MultipleChoiceSample(style=...) to pick the class by style",
            )

    return check


def _choices_tuple(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str):  # a lone string would become a tuple of characters
        raise SampleError("choices", "expected a list of strings, got a single string")
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise SampleError("choices", f"expected a list of strings, got {type(value).__name__}")
    return tuple(value)


@attrs.frozen(kw_only=True)
class MultipleChoiceQuestionAnswerSample(MultipleChoiceSample):
    """A complete question the correct choice answers, as in MMLU (style ``"qa"``)."""

    context: str = attrs.field(validator=_validate_context)
    choices: tuple[str, ...] = attrs.field(converter=_choices_tuple, validator=_validate_choices)
    answer_index: int = attrs.field(validator=_validate_answer_index)
    style: Literal["qa"] = attrs.field(default="qa", validator=_style_validator("qa"))
    extra: Mapping[str, Any] = attrs.field(
        default=_EMPTY, converter=_frozen_mapping, validator=_extra_validator("extra", MC_WIRE_KEYS)
    )


@attrs.frozen(kw_only=True)
class MultipleChoiceCompletionSample(MultipleChoiceSample):
    """A sentence stem the correct choice continues, as in HellaSwag (style ``"continuation"``).

    The stem ends mid-sentence by design, so it is never judged for completeness.
    """

    context: str = attrs.field(validator=_validate_context)
    choices: tuple[str, ...] = attrs.field(converter=_choices_tuple, validator=_validate_choices)
    answer_index: int = attrs.field(validator=_validate_answer_index)
    style: Literal["continuation"] = attrs.field(
        default="continuation", validator=_style_validator("continuation")
    )
    extra: Mapping[str, Any] = attrs.field(
        default=_EMPTY, converter=_frozen_mapping, validator=_extra_validator("extra", MC_WIRE_KEYS)
    )


AnyMultipleChoiceSample: TypeAlias = (
    MultipleChoiceQuestionAnswerSample | MultipleChoiceCompletionSample
)


# --- the lettered question family ----------------------------------------------------------------


def _regex_tuple(value: str | Sequence[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, Sequence):
        raise SampleError(
            "template.output_regex",
            f"expected a pattern or a list of patterns, got {type(value).__name__}",
        )
    for i, pattern in enumerate(value):
        if not isinstance(pattern, str):
            raise SampleError(
                f"template.output_regex[{i}]", f"expected a string, got {type(pattern).__name__}"
            )
    return tuple(value)


@attrs.frozen(kw_only=True)
class Template:
    """A sample's prompt-template metadata (NeMo Gym's ``template_metadata``).

    ``output_regex`` is one pattern or several, tried in order; the other named keys describe the
    template, and any further keys are kept unchanged in ``extra``.
    """

    output_regex: tuple[str, ...] = attrs.field(default=(), converter=_regex_tuple)
    template_id: str | None = None
    prompt_type: str | None = None
    format_type: str | None = None
    answer_prefix: str | None = None
    extra: Mapping[str, Any] = attrs.field(
        default=_EMPTY,
        converter=_frozen_mapping,
        validator=_extra_validator("template.extra", TEMPLATE_WIRE_KEYS),
    )
    # How the wire row spelled it (output_regex as a list or not, key order), for a faithful
    # re-encode. Not part of equality.
    regex_as_list: bool = attrs.field(default=False, eq=False, repr=False)
    wire_order: tuple[str, ...] = attrs.field(default=(), eq=False, repr=False)

    @classmethod
    def _from_metadata(cls, meta: Mapping[str, Any], output_regex: tuple[str, ...]) -> Template:
        """The template of a ``template_metadata`` the reader accepted, not checked again."""
        return _unchecked(
            cls,
            output_regex=output_regex,
            template_id=meta.get("template_id"),
            prompt_type=meta.get("prompt_type"),
            format_type=meta.get("format_type"),
            answer_prefix=meta.get("answer_prefix"),
            extra=_frozen_mapping(template_extra(meta)),
            regex_as_list=isinstance(meta.get("output_regex"), list),
            wire_order=tuple(meta),
        )


def _options_mapping(value: Mapping[str, str] | Iterable[tuple[str, str]]) -> Mapping[str, str]:
    items = list(value.items()) if isinstance(value, Mapping) else list(value)
    seen: dict[str, str] = {}
    for letter, text in (i for i in items if type(i) is tuple and len(i) == 2):
        # The common, valid case in one pass; anything odd falls through to the checks below.
        if not is_option_letter(letter) or letter in seen or type(text) is not str or blank(text):
            seen.clear()
            break
        seen[letter] = text
    if len(seen) == len(items):
        return types.MappingProxyType(seen)
    seen = {}
    for i, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise SampleError(f"options[{i}]", "expected a (letter, text) pair")
        letter, text = item
        if not is_option_letter(letter):
            raise SampleError(
                f"options[{i}]", f"option letter {describe_value(letter)} is not a single letter"
            )
        if letter in seen:
            raise SampleError(
                f"options[{i}]", f"option letter {describe_value(letter)} appears twice"
            )
        if not isinstance(text, str):
            raise SampleError(
                f"options.{letter}", f"expected option text, got {type(text).__name__}"
            )
        if blank(text):
            raise SampleError(f"options.{letter}", "option text must not be empty")
        seen[letter] = text
    return types.MappingProxyType(seen)


def _validate_options(
    instance: Any, attribute: attrs.Attribute[Any], value: Mapping[str, str]
) -> None:
    if len(value) < 2:
        raise SampleError("options", f"needs at least two options, got {len(value)}")


def _validate_expected(instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not isinstance(value, str):
        raise SampleError("expected_answer", f"expected a letter, got {type(value).__name__}")
    letters = instance.options
    if value not in letters:
        raise SampleError(
            "expected_answer",
            f"{describe_value(value)} is not one of the option letters {', '.join(letters)}",
        )


def _validate_mode(instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not isinstance(value, str) or not value:
        raise SampleError("grading_mode", f"expected a mode name, got {describe_value(value)}")


@attrs.frozen(kw_only=True)
class MCQASample:
    """A lettered multiple-choice question: the shape of a NeMo Gym ``mcqa`` row.

    ``options`` maps each letter to its text, in order (any single letters, not only A-D).
    ``responses_create_params`` is the prompt as sent to the model, kept whole and untouched;
    ``metadata`` is arbitrary JSON that is never interpreted; ``extra`` keeps unknown row keys.
    """

    question: str = attrs.field(validator=lambda i, a, v: _require_text("question", v))
    options: Mapping[str, str] = attrs.field(
        converter=_options_mapping, validator=_validate_options
    )
    expected_answer: str = attrs.field(validator=_validate_expected)
    grading_mode: str = attrs.field(default=DEFAULT_GRADING_MODE, validator=_validate_mode)
    template: Template | None = None
    uuid: str | None = None
    metadata: Any = None
    responses_create_params: Mapping[str, Any] | None = attrs.field(
        default=None, converter=attrs.converters.optional(_frozen_mapping)
    )
    extra: Mapping[str, Any] = attrs.field(
        default=_EMPTY,
        converter=_frozen_mapping,
        validator=_extra_validator("extra", MCQA_WIRE_KEYS),
    )
    # The order of the keys of the row this sample was decoded from, so that encoding writes them
    # back in the same order (byte-identical rows). Not part of equality.
    wire_order: tuple[str, ...] = attrs.field(default=(), eq=False, repr=False)

    DEFAULT_GRADING_MODE: ClassVar[str] = DEFAULT_GRADING_MODE

    @property
    def letters(self) -> tuple[str, ...]:
        """The option letters in order."""
        return tuple(self.options)

    @property
    def answer_text(self) -> str:
        """The text of the correct option."""
        return self.options[self.expected_answer]

    @classmethod
    def from_wire(cls, row: Mapping[str, Any]) -> MCQASample:
        """Decode a NeMo Gym JSONL row (unknown keys are kept in ``extra``).

        A row without ``options`` (a Gym rollout) takes them from the options its prompt lists.
        Raises ``WireFormatError`` listing every problem of the row.
        """
        reading = read_mcqa_row(row)
        if isinstance(reading, list):
            raise WireFormatError(reading)
        return cls._from_reading(reading)

    @classmethod
    def _from_reading(cls, reading: RowReading) -> MCQASample:
        """The sample of a row ``read_mcqa_row`` accepted, without checking its fields again."""
        row = reading.row
        meta = reading.template
        params = reading.responses_create_params
        return _unchecked(
            cls,
            question=reading.question,
            options=types.MappingProxyType(dict(reading.options)),
            expected_answer=reading.expected_answer,
            grading_mode=reading.grading_mode,
            template=None if meta is None else Template._from_metadata(meta, reading.output_regex),
            uuid=reading.uuid,
            metadata=row.get("metadata"),
            responses_create_params=None if params is None else _frozen_mapping(params),
            extra=_frozen_mapping(mcqa_extra(row)),
            wire_order=tuple(row),
        )

    def to_wire(self) -> dict[str, Any]:
        """Encode to a NeMo Gym JSONL row, keys in the order they were read."""
        return encode_mcqa(self)

    @overload
    def to_multiple_choice(
        self, style: Literal["qa"] = ...
    ) -> MultipleChoiceQuestionAnswerSample: ...

    @overload
    def to_multiple_choice(
        self, style: Literal["continuation"]
    ) -> MultipleChoiceCompletionSample: ...

    def to_multiple_choice(self, style: Style = "qa") -> AnyMultipleChoiceSample:
        """This question as a context/choices sample of ``style``: the answer letter becomes an index.

        ``context`` is the question, ``choices`` the option texts in order and ``answer_index`` the
        position of ``expected_answer``. ``uuid`` and ``metadata`` (when set) and the unknown row
        keys travel in ``extra``. The letters, the prompt, the template and the grading mode do not
        fit the context/choices shape and are left behind; ``from_multiple_choice`` re-renders them.
        """
        extra: dict[str, Any] = {}
        if self.uuid is not None:
            extra["uuid"] = self.uuid
        if self.metadata is not None:
            extra["metadata"] = self.metadata
        for key, value in self.extra.items():
            if key in MC_WIRE_KEYS or key in extra:
                raise SampleError(
                    f"extra.{key}",
                    f"the row key {describe_value(key)} would collide with a field of a context/choices row",
                )
            extra[key] = value
        return MultipleChoiceSample(
            context=self.question,
            choices=tuple(self.options.values()),
            answer_index=self.letters.index(self.expected_answer),
            style=style,
            extra=extra,
        )

    @classmethod
    def from_multiple_choice(
        cls,
        sample: MultipleChoiceSample,
        *,
        letters: Sequence[str] | None = None,
        template: str = "boxed_letter",
    ) -> MCQASample:
        """A lettered question from a context/choices sample; the index becomes the answer letter.

        The choices are lettered with ``letters`` in order (A, B, C, ... by default; more letters
        than choices are fine, the first ones are used) and the prompt is rendered with
        ``template`` (see ``templates()``). ``extra["uuid"]`` and ``extra["metadata"]`` become the
        row's ``uuid`` and ``metadata``; the other extra columns are kept in ``extra``.

        Raises ``SampleError`` when no lossless lettered question exists: more choices than
        letters, an empty choice (options must have text) or an extra column named like a row field.
        """
        if not isinstance(sample, MultipleChoiceSample):
            raise SampleError(
                "sample", f"expected a MultipleChoiceSample, got {type(sample).__name__}"
            )
        pool = tuple(string.ascii_uppercase if letters is None else letters)
        if len(sample.choices) > len(pool):
            raise SampleError(
                "choices",
                f"{len(sample.choices)} choices do not fit the {len(pool)} letters {''.join(pool)}",
            )
        for i, choice in enumerate(sample.choices):
            if not choice.strip():
                raise SampleError(
                    f"choices[{i}]", "an empty choice cannot become a lettered option"
                )
        options = dict(zip(pool, sample.choices, strict=False))
        if len(options) != len(sample.choices):  # a repeated letter collapsed two choices
            raise SampleError("letters", f"letters must be unique, got {''.join(pool)}")
        extra = dict(sample.extra)
        uuid = extra.pop("uuid", None)
        if uuid is not None and not isinstance(uuid, str):
            raise SampleError("extra.uuid", f"expected a string, got {type(uuid).__name__}")
        metadata = extra.pop("metadata", None)
        return cls._rendered(
            sample.context,
            options,
            pool[sample.answer_index],
            template=template,
            grading_mode=None,
            uuid=uuid,
            metadata=metadata,
            extra=extra,
        )

    @classmethod
    def from_question(
        cls,
        question: str,
        options: Mapping[str, str] | Sequence[str],
        expected_answer: str,
        *,
        template: str = "boxed_letter",
        grading_mode: str | None = None,
        uuid: str | None = None,
        metadata: Any = None,
    ) -> MCQASample:
        """Build a sample and render its prompt from a shipped template (see ``templates()``).

        ``options`` may be a mapping of letters to texts or a plain list (lettered A, B, C, ...).
        The template supplies the prompt, the matching ``output_regex`` and the grading mode.
        """
        return cls._rendered(
            question,
            options,
            expected_answer,
            template=template,
            grading_mode=grading_mode,
            uuid=uuid,
            metadata=metadata,
        )

    @classmethod
    def _rendered(
        cls,
        question: str,
        options: Mapping[str, str] | Sequence[str],
        expected_answer: str,
        *,
        template: str,
        grading_mode: str | None,
        uuid: str | None,
        metadata: Any,
        extra: Mapping[str, Any] | None = None,
    ) -> MCQASample:
        """A sample whose prompt, ``output_regex`` and default mode come from a shipped template."""
        spec = prompt_template(template)
        lettered = lettered_options(options)
        meta = (
            Template(output_regex=spec.output_regex, template_id=spec.id, regex_as_list=True)
            if spec.output_regex
            else None
        )
        params = {"input": [{"role": "user", "content": spec.render(question, lettered)}]}
        return cls(
            question=question,
            options=lettered,
            expected_answer=expected_answer,
            grading_mode=grading_mode or spec.grading_mode,
            template=meta,
            uuid=uuid,
            metadata=metadata,
            responses_create_params=params,
            extra=extra,
        )
