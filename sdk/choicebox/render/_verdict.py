"""The verdict and its wire schema: the one table of the fields every output path writes.

``WIRE_SCHEMA`` lists the verdict's wire fields in their order, each with the verdict attributes it
is made of and how it is rendered; ``Verdict.wire_fields``, ``VERDICT_KEYS``, the batch splice's
cache key (``verdict_key``), the server's masked replies and the metrics records all derive from
it, so a new verdict field is added here (and in the tests) and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import Any, Final, Literal, NamedTuple, TypeAlias

import attrs

from choicebox._modes import COMPONENTS
from choicebox.find import FAILURE_KINDS, FailureKind
from choicebox.resolve import Ruling

__all__ = [
    "JUDGE_FAILURES",
    "VERDICT_KEYS",
    "WIRE_SCHEMA",
    "JudgeFailure",
    "Verdict",
    "WireField",
    "verdict_key",
    "verdict_of_row",
]

# Why a model judge gave no reading of a row (``Verdict.judge_failure``); the row then keeps its
# rule verdict. Here, beside the verdict that carries them, so that ``choicebox.judge`` imports the
# verdict and never the other way round.
JudgeFailure: TypeAlias = Literal[
    "unreachable",  # no connection (after the retries), or the judge was found down earlier in the run
    "timeout",  # the judge did not answer in time (after the retries)
    "rate_limited",  # 429 on every attempt
    "http_error",  # another error status (a 5xx on every attempt, a 4xx at once)
    "bad_response",  # a reply that is no Chat Completions or Responses object with text
    "not_a_letter",  # a reply that is neither one option letter nor NONE: never guessed at
    "not_an_option",  # a letter that is not one of the row's options
    "too_long",  # a response longer than a judge is sent (``choicebox.judge.MAX_RESPONSE_CHARS``)
]
JUDGE_FAILURES: Final[tuple[str, ...]] = JudgeFailure.__args__  # type: ignore[attr-defined]


class WireField(NamedTuple):
    """One field of a verdict's wire row: its name there, the verdict attributes it is made of,
    and how it is made of them."""

    name: str
    sources: tuple[str, ...]
    render: Callable[[Verdict], Any]


# The verdict's wire fields, in their order: the one table ``Verdict.wire_fields``, the batch
# splice and its cache key (``verdict_key``), the server's masked replies and the metrics'
# readers render from (``VERDICT_KEYS`` is its names). The reward components follow
# ``reward_components``, one top-level field each (NeMo Gym's multi-reward contract). Not Gym's
# failure_kind/failure_reason: those name failures where the reward is not a valid measurement
# (a lost session, a dead judge); a wrong answer is a measurement.
WIRE_SCHEMA: Final[tuple[WireField, ...]] = (
    WireField("reward", ("reward",), attrgetter("reward")),
    WireField("expected_answer", ("expected_answer",), attrgetter("expected_answer")),
    WireField("extracted_answer", ("extracted_answer",), attrgetter("extracted_answer")),
    WireField("reward_components", ("reward_components",), lambda v: dict(v.reward_components)),
    WireField("grading_failure", ("failure",), attrgetter("failure")),
    WireField("grading_detail", ("failure", "detail"), lambda v: v.detail if v.failure else None),
    WireField("extraction_step", ("step",), attrgetter("step")),
    WireField("grading_mode", ("mode",), attrgetter("mode")),
    # The judge's reading, kept apart from the rules' (``extracted_answer`` and ``grading_failure``
    # stay what the rules said): which rows the mode sends to a judge, and what the judge said.
    WireField("needs_judge", ("needs_judge",), attrgetter("needs_judge")),
    WireField("judge_letter", ("judge_letter",), attrgetter("judge_letter")),
    WireField("judge_model", ("judge_model",), attrgetter("judge_model")),
    WireField("judge_failure", ("judge_failure",), attrgetter("judge_failure")),
)
_COMPONENTS_FIELD: Final = "reward_components"
VERDICT_KEYS: Final = tuple(
    name
    for field in WIRE_SCHEMA
    for name in ((field.name, *COMPONENTS) if field.name == _COMPONENTS_FIELD else (field.name,))
)
# What a verdict's wire fields are made of, read in one C call: two verdicts with equal values
# write the same fields (the batch splice caches the encoded fields by it).
_SOURCES: Final = attrgetter(
    *dict.fromkeys(source for field in WIRE_SCHEMA for source in field.sources if source != _COMPONENTS_FIELD)
)


# The schema split where the components go, as (name, render) pairs: ``wire_fields`` runs per row.
_SPLIT: Final = next(i for i, field in enumerate(WIRE_SCHEMA) if field.name == _COMPONENTS_FIELD) + 1
_BEFORE_COMPONENTS: Final = tuple((field.name, field.render) for field in WIRE_SCHEMA[:_SPLIT])
_AFTER_COMPONENTS: Final = tuple((field.name, field.render) for field in WIRE_SCHEMA[_SPLIT:])


def verdict_key(verdict: Verdict) -> tuple[Any, ...]:
    """A hashable key of everything ``verdict.wire_fields()`` is made of, from ``WIRE_SCHEMA``."""
    return (_SOURCES(verdict), tuple(verdict.reward_components.items()))


@attrs.frozen(kw_only=True)
class Verdict:
    """What a model's output earns on a sample, and why.

    ``reward`` is the weighted sum of ``reward_components`` (by default ``correctness`` alone, so
    rewards equal NeMo Gym's); each component is also a property and a top-level wire field.
    ``failure`` is ``None`` for a correct answer, else why it is not. ``candidates`` are the
    statements the mode's steps found and what its resolution policy did with each (``Ruling``):
    the account ``choicebox explain`` prints. They are not part of the wire row, and verdicts
    compare equal whatever their candidates.

    ``needs_judge`` marks a verdict whose failure kind the mode sends to a model judge (its
    ``judge:`` list). Once a judge has read the row, ``judge_model`` names it and ``judge_letter``
    is the option it read (``None``: it read none, or it failed, and ``judge_failure`` says why);
    the rules' own reading stays in ``extracted_answer``, ``failure`` and ``detail``. Only a
    flagged verdict's reward follows the judge (``choicebox.judge.apply_judgement``).
    """

    reward: float
    reward_components: Mapping[str, float]
    extracted_answer: str | None
    expected_answer: str
    mode: str
    step: str | None = None
    failure: FailureKind | None = None
    detail: str = ""
    errors: tuple[str, ...] = ()
    needs_judge: bool = False
    judge_letter: str | None = None
    judge_model: str | None = None
    judge_failure: JudgeFailure | None = None
    candidates: tuple[Ruling, ...] = attrs.field(default=(), eq=False, repr=False)

    @property
    def correctness(self) -> float:
        return self.reward_components["correctness"]

    @property
    def format(self) -> float:
        return self.reward_components["format"]

    @property
    def unambiguous(self) -> float:
        return self.reward_components["unambiguous"]

    @property
    def correct(self) -> bool:
        return self.reward_components["correctness"] == 1.0

    def to_wire(self, request: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """NeMo Gym's verify-response JSON: the request's fields plus the verdict's.

        Verdict fields already in ``request`` (a row graded before) are replaced.
        """
        row = dict(request) if request else {}
        row.update(self.wire_fields())
        return row

    def wire_fields(self) -> dict[str, Any]:
        """Only the verdict's own fields of ``to_wire``, in the same order (``WIRE_SCHEMA``)."""
        fields = {name: render(self) for name, render in _BEFORE_COMPONENTS}
        fields.update(self.reward_components)
        for name, render in _AFTER_COMPONENTS:
            fields[name] = render(self)
        return fields


def verdict_of_row(row: Mapping[str, Any]) -> Verdict | None:
    """The verdict a graded row was written from (``to_wire``'s inverse on ``WIRE_SCHEMA``'s
    fields), or ``None`` when the row holds no well-formed verdict: an error row, a row of
    another tool. What the wire leaves out (``errors``, ``candidates``, a correct verdict's
    ``detail``) is left out here too, so the verdict writes the row's fields back as they were.
    ``choicebox.batch.judge_file`` reads the rows it post-processes this way, without grading
    them again."""
    components = row.get("reward_components")
    reward = row.get("reward")
    if not isinstance(components, Mapping) or set(components) != set(COMPONENTS) or not _number(reward):
        return None
    if not all(_number(value) for value in components.values()):
        return None
    strings = {name: row.get(name) for name in ("extracted_answer", "extraction_step", "grading_detail", "judge_letter", "judge_model")}
    if not all(value is None or isinstance(value, str) for value in strings.values()):
        return None
    expected, mode = row.get("expected_answer"), row.get("grading_mode")
    failure, judge_failure = row.get("grading_failure"), row.get("judge_failure")
    needs_judge = row.get("needs_judge", False)
    if (
        not isinstance(expected, str)
        or not isinstance(mode, str)
        or not (failure is None or failure in FAILURE_KINDS)
        or not (judge_failure is None or judge_failure in JUDGE_FAILURES)
        or not isinstance(needs_judge, bool)
    ):
        return None
    return Verdict(
        reward=float(reward),  # type: ignore[arg-type]  # _number checked it
        reward_components={name: float(components[name]) for name in COMPONENTS},
        extracted_answer=strings["extracted_answer"],
        expected_answer=expected,
        mode=mode,
        step=strings["extraction_step"],
        failure=failure,
        detail=strings["grading_detail"] or "",
        needs_judge=needs_judge,
        judge_letter=strings["judge_letter"],
        judge_model=strings["judge_model"],
        judge_failure=judge_failure,
    )


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
