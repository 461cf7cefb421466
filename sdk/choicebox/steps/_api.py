"""The step-kind extension API: what a step reads (``Context``), what it finds (``Extraction``),
the ``Step`` protocol and the registry of kinds that rule files name."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, TypeAlias, TypeVar, runtime_checkable

import attrs

from choicebox._boxed import Box, BoxReading, find_boxes, read_box
from choicebox._errors import StepKindError
from choicebox._letters import (
    Payload,
)
from choicebox._regex import DEFAULT_TIMEOUT

FailureKind: TypeAlias = Literal[
    "empty",
    "no_answer",
    "ambiguous",
    "not_an_option",
    "refusal",
    "invalid_regex",
    "regex_timeout",
    "invalid_output",
    "unfinished_reasoning",
    "wrong_answer",
]
Which: TypeAlias = Literal["first", "last"]


class Context:
    """What a step sees: the text to grade and the options (letter to text) it may name."""

    __slots__ = (
        "_boxes",
        "_lowered",
        "_present",
        "_readings",
        "answer_prefix",
        "options",
        "regex_timeout",
        "text",
    )

    def __init__(
        self,
        text: str,
        options: Mapping[str, str],
        *,
        regex_timeout: float = DEFAULT_TIMEOUT,
        answer_prefix: str | None = None,
    ) -> None:
        self.text = text
        self.options = options
        self.regex_timeout = regex_timeout
        # A sample's own closing phrase ("Die Antwort ist"), from template_metadata.answer_prefix.
        self.answer_prefix = answer_prefix
        self._boxes: list[Box] | None = None
        self._readings: list[tuple[Box, BoxReading]] | None = None
        self._lowered: str | None = None
        self._present: dict[str, bool] = {}

    def lowered(self) -> str:
        """The text lowercased, computed once."""
        if self._lowered is None:
            self._lowered = self.text.lower()
        return self._lowered

    def contains(self, word: str) -> bool:
        """Whether the lowercased text contains ``word``, remembered across steps."""
        present = self._present.get(word)
        if present is None:
            present = self._present[word] = word in self.lowered()
        return present

    def box_readings(self) -> list[tuple[Box, BoxReading]]:
        """The closed, non-empty boxes with what each says, in text order, computed once."""
        if self._readings is None:
            self._readings = [
                (box, reading)
                for box in self.boxes()
                if box.closed and (reading := read_box(box.content)).kind != "empty"
            ]
        return self._readings

    def boxes(self) -> list[Box]:
        """Every ``\\boxed{}``/``\\fbox{}`` of the text, scanned once however many steps ask."""
        if self._boxes is None:
            self._boxes = find_boxes(self.text)
        return self._boxes


@attrs.frozen
class Extraction:
    """A step's finding.

    With ``letter`` set it is an answer. Without, ``failure`` says what went wrong; ``final`` stops
    the chain (an ambiguous answer must not be rescued by a laxer step), otherwise the chain goes
    on and the failure is kept in case nothing better turns up. ``clean`` marks an answer given
    in the step's own strict format, which the ``format`` reward component reads.
    """

    letter: str | None
    failure: FailureKind | None = None
    detail: str = ""
    position: int = 0
    clean: bool = False
    final: bool = True


@runtime_checkable
class Step(Protocol):
    """A configured extraction step: called with the context, returns a finding or ``None``."""

    def __call__(self, context: Context, /) -> Extraction | None: ...


# Bound to the protocol, so a type checker rejects a class whose instances are no ``Step``. The
# runtime checks below (an attrs class, callable instances) still guard callers that are not typed.
StepT = TypeVar("StepT", bound=type[Step])
_KINDS: dict[str, type[Any]] = {}


def register_step_kind(name: str, *, replace: bool = False) -> Callable[[StepT], StepT]:
    """Class decorator registering an attrs class as the step kind ``name``.

    The class's attrs fields are the parameters a rule file may give (checked when the file
    loads); its instances must satisfy the ``Step`` protocol. ``replace`` allows taking over an
    existing name; without it a clash is an error, so nothing is shadowed silently.
    """

    def register(cls: StepT) -> StepT:
        is_attrs_class = attrs.has(cls)  # a plain bool: attrs.has would narrow cls's type
        if not is_attrs_class:
            raise StepKindError(f"step kind {name!r}: {cls.__name__} must be an attrs class")
        if "__call__" not in dir(cls):
            raise StepKindError(f"step kind {name!r}: {cls.__name__} instances must be callable")
        if name in _KINDS and not replace and _KINDS[name] is not cls:
            raise StepKindError(f"step kind {name!r} is already registered; pass replace=True")
        _KINDS[name] = cls
        return cls

    return register


def step_kinds() -> Mapping[str, type[Any]]:
    """The registered step kinds by name."""
    return dict(_KINDS)


def _answer(
    context: Context, letter: str, *, position: int, clean: bool, detail: str
) -> Extraction:
    if letter in context.options:
        return Extraction(letter, position=position, clean=clean, detail=detail)
    return Extraction(
        None,
        failure="not_an_option",
        detail=f"{detail}: {letter!r} is not one of the options {', '.join(context.options)}",
        position=position,
        final=False,
    )


def _from_payload(
    payload: Payload, *, position: int, clean: bool, detail: str
) -> Extraction | None:
    if payload.kind == "letter":
        assert payload.letter is not None
        return Extraction(
            payload.letter, position=position, clean=clean, detail=f"{detail} ({payload.how})"
        )
    if payload.kind == "ambiguous":
        return Extraction(
            None,
            failure="ambiguous",
            detail=f"{detail} lists several letters: {', '.join(payload.letters)}",
            position=position,
        )
    if payload.kind == "not_an_option":
        return Extraction(
            None,
            failure="not_an_option",
            detail=f"{detail} names {payload.letter!r}, which is not an option",
            position=position,
            final=False,
        )
    return None


