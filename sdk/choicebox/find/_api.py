"""The step-kind extension API: what a step reads (``Context``), what it finds (``Extraction``,
``Candidate``), the ``Step`` and ``Finder`` protocols and the registry of kinds that rule files name.

A step kind is called in one of two ways, depending on the mode's resolution policy:

* ``step(context) -> Extraction | None``: the step picks its own answer (``first_step``, the NeMo
  Gym semantics: the first step in chain order that answers wins);
* ``step.find(context) -> Sequence[Candidate]``: the step reports every statement it recognises,
  in text order, and the policy decides (``conclusion``, ``last_position``). A kind without
  ``find`` takes part through its ``__call__``: its one extraction becomes one candidate.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Final, Literal, NamedTuple, Protocol, TypeAlias, TypeVar, runtime_checkable

import attrs

from choicebox._errors import StepKindError
from choicebox._letters import OptionTexts, fold_letters
from choicebox._regex import DEFAULT_TIMEOUT
from choicebox.find._boxed import Box, BoxReading, find_boxes, read_box
from choicebox.find._features import SampleFeatures, features_of
from choicebox.find._payload import Payload
from choicebox.find._readable import has_readable_letter

# How many per-pattern timeouts one row's patterns may spend together (``Context.regex_left``).
REGEX_BUDGET_TIMEOUTS: Final = 4

FailureKind: TypeAlias = Literal[
    "empty",
    "no_answer",
    "ambiguous",
    "conflicting",
    "not_an_option",
    "refusal",
    "invalid_regex",
    "regex_timeout",
    "invalid_output",
    "unfinished_reasoning",
    "too_long",
    "wrong_answer",
]
FAILURE_KINDS: tuple[str, ...] = FailureKind.__args__  # type: ignore[attr-defined]
Which: TypeAlias = Literal["first", "last"]
Leniency: TypeAlias = Literal["strict", "lenient"]

# What a statement found in the text is. The resolution policy decides what each one counts for.
StatementKind: TypeAlias = Literal[
    "commitment",  # one letter given as the answer: "The answer is (B)", "\\boxed{B}", "I'd go with B"
    "hedge",  # several letters given as the answer: "A or B", "(A) and (C)", "(BFIJ)"
    "retraction",  # a letter withdrawn: "The answer is (D) is incorrect", "not (B)"
    "no_option",  # the answer is that no option is right: "The answer is none of the above"
    "value",  # the answer given as content only: "The answer is 30%", "\\boxed{27}"
    "stray",  # a letter closing a sentence with a choice word near it: a last resort
    "mention",  # a letter discussed or eliminated: "Option A is wrong"
    "unreadable",  # a labelled statement whose payload is no usable letter (see ``failure``)
    "other_question",  # where text about another question starts: a new "Question:", a recap
]
# Where a candidate comes from: a labelled statement, a first-person pick, an evaluation of an
# option ("(C) is correct", "So, C."), which the policy treats more warily, or a first-person
# withdrawal of a letter ("So I withdraw (B).").
Origin: TypeAlias = Literal["labelled", "pick", "evaluation", "withdrawal"]


class Candidate(NamedTuple):
    """A statement a finder recognised: where it is, what it says, and what kind of statement it is.

    ``start``/``end`` span the statement (label to payload end). ``letters`` are the letters it
    names. ``final`` marks an explicit final marker ("Final answer:"); ``part`` an answer scoped
    to one part of a multi-part question ("the answer to (a) is"). ``value`` is a value
    statement's content, or the option-like text after a letter ("B. Bent"). ``foreign`` marks an
    answer line whose text belongs to another question. ``settles`` marks a finding that decides
    the verdict alone (a fast path): later steps are not run. ``failure`` says why an
    ``unreadable`` statement names no option. ``how`` describes the reading, ``step`` is the id
    of the chain entry that found it, ``score`` a finder's measure (for an ``other_question``
    heading: how many of the question's words its section shares). ``cue``, ``layout`` and
    ``payload`` say how an answer statement was composed: the words that announced it ("the
    correct answer is:"), where its payload stood ("next line", "under a heading"), and what the
    payload was ("letter", "letter with its option's text"); ``choicebox explain`` prints them.
    """

    kind: StatementKind
    start: int
    end: int
    letters: tuple[str, ...] = ()
    final: bool = False
    part: bool = False
    value: str = ""
    origin: Origin = "labelled"
    foreign: bool = False
    settles: bool = False
    clean: bool = False
    failure: FailureKind | None = None
    how: str = ""
    step: str = ""
    score: int = 0
    cue: str = ""
    layout: str = ""
    payload: str = ""

    @property
    def letter(self) -> str | None:
        """The one letter of a commitment (or of any one-letter statement), else ``None``."""
        return self.letters[0] if len(self.letters) == 1 else None


class Context:
    """What a step sees: the text to grade, the options (letter to text) it may name, and the
    question when the caller knows it.

    Derived views are computed once, on first use, whichever steps ask: ``lowered()``,
    ``folded`` (the text with end-of-text tokens blanked and letters of other scripts mapped to
    Latin ones, of the same length, so positions agree with ``text``), ``low`` (``folded``
    lowercased, or ``None`` when lowercasing would change its length), the boxes, and the
    sample's ``features`` (cached per sample). ``window`` is the part of the text a policy
    asks fallback finders to read; ``step_id`` the id of the chain entry being run.
    """

    __slots__ = (
        "_boxes",
        "_features",
        "_folded",
        "_low",
        "_lowered",
        "_present",
        "_readable",
        "_readings",
        "answer_prefix",
        "options",
        "question",
        "regex_left",
        "regex_timeout",
        "step_id",
        "text",
        "window",
    )

    def __init__(
        self,
        text: str,
        options: Mapping[str, str],
        *,
        regex_timeout: float = DEFAULT_TIMEOUT,
        answer_prefix: str | None = None,
        question: str = "",
    ) -> None:
        self.text = text
        # Each option's text is normalised once for this output, however many boxes, lines and
        # payloads are compared with it.
        self.options = options if isinstance(options, OptionTexts) else OptionTexts(options)
        self.regex_timeout = regex_timeout
        # The row's regex budget: every pattern of the row (a mode's regex steps and the sample's
        # own) draws on it, so a rule file of many catastrophic patterns costs a row at most
        # ``REGEX_BUDGET_TIMEOUTS`` timeouts, not one per pattern.
        self.regex_left = regex_timeout * REGEX_BUDGET_TIMEOUTS
        # A sample's own closing phrase ("Die Antwort ist"), from template_metadata.answer_prefix.
        self.answer_prefix = answer_prefix
        self.question = question
        self.window = (0, len(text))
        self.step_id = ""
        self._boxes: list[Box] | None = None
        self._readings: list[tuple[Box, BoxReading]] | None = None
        self._lowered: str | None = None
        self._folded: str | None = None
        self._low: str | bool | None = False  # False: not computed yet
        self._features: SampleFeatures | None = None
        self._present: dict[str, bool] = {}
        self._readable: dict[int | None, bool] = {}

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

    @property
    def folded(self) -> str:
        """The text as the finders read it (see the class docstring); same length as ``text``."""
        if self._folded is None:
            self._folded = fold_letters(self.text)
        return self._folded

    @property
    def low(self) -> str | None:
        """``folded`` lowercased ("İ" as "i"), or ``None`` when that would change its length."""
        if self._low is False:
            folded = self.folded
            low = self.lowered() if folded is self.text else folded.lower()
            if len(low) != len(folded):
                # "İ" (Turkish) lowercases to two characters, the one letter that does: as "i",
                # the text keeps its length ("İstanbul'un Fethi ... Doğru cevap **C**").
                low = folded.replace("İ", "i").lower()
            self._low = low if len(low) == len(folded) else None
        return self._low  # type: ignore[return-value]

    @property
    def features(self) -> SampleFeatures:
        """What the sample's question and options say (cached per sample)."""
        if self._features is None:
            self._features = features_of(self.options, self.question)
        return self._features

    def has_letter(self, stop: int | None = None) -> bool:
        """Whether ``folded[:stop]`` holds an option letter a finder could read
        (``choicebox.find._readable.has_readable_letter``), remembered: a finder whose statements all
        name letters finds nothing in a text without one."""
        known = self._readable.get(stop)
        if known is None:
            whole = self._readable.get(None)
            known = self._readable[stop] = False if whole is False else has_readable_letter(self.folded, self.options, stop)
            if known and stop is not None:
                self._readable[None] = True
        return known

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

    def candidate(self, kind: StatementKind, start: int, end: int, letters: tuple[str, ...] = (), **fields: Any) -> Candidate:
        """A candidate found by the step being run (its ``step`` is this context's ``step_id``)."""
        return Candidate(kind, start, end, letters, step=self.step_id, **fields)


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


@runtime_checkable
class Finder(Protocol):
    """A step that reports every statement it recognises, in text order (see the module docstring)."""

    def find(self, context: Context, /) -> Sequence[Candidate]: ...


# Bound to the protocol, so a type checker rejects a class whose instances are no ``Step``; the
# runtime checks below catch the same mistakes (and a class that is not attrs) for untyped callers.
StepT = TypeVar("StepT", bound=type[Step])
_KINDS: dict[str, type[Any]] = {}
# The modules of the built-in kinds are this package's public modules (no list to keep: a new
# kind's module is found by being here). Those a Gym-compatible mode does not name are imported
# the first time a kind is looked up that no imported module has registered, all kinds are asked
# for, or a kind is registered from outside the package (so that a clash with a built-in name is
# refused as before): about 15 ms of start-up that a Gym-compatible mode does not pay.
# ``answer_line``, ``boxed`` and ``regex`` are imported with the package.
_later = {"imported": False}


@functools.cache
def kind_modules() -> tuple[str, ...]:
    """The names of the modules that hold the built-in step kinds: every public module here."""
    modules = pkgutil.iter_modules(sys.modules[__package__].__path__)
    return tuple(sorted(info.name for info in modules if not info.name.startswith("_")))


def _import_later_kinds() -> None:
    if _later["imported"]:
        return
    # Marked only once every module is in: another thread that asks meanwhile imports them too
    # (the import system makes it wait for a module another thread is importing), and an
    # import that fails is tried again by the next lookup.
    for module in kind_modules():
        importlib.import_module(f"{__package__}.{module}")
    _later["imported"] = True


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
        if not cls.__module__.startswith(f"{__package__}."):
            _import_later_kinds()  # a user's kind: built-in names must be known to clash
        if name in _KINDS and not replace and _KINDS[name] is not cls:
            raise StepKindError(f"step kind {name!r} is already registered; pass replace=True")
        _KINDS[name] = cls
        return cls

    return register


def step_kinds() -> Mapping[str, type[Any]]:
    """The registered step kinds by name."""
    _import_later_kinds()
    return dict(_KINDS)


# Kinds whose name changed, so that a rule file naming the old one is told the new one. The
# sentence finder ``conclusion`` became ``concluding_sentence``: ``conclusion`` is the policy.
RENAMED_KINDS: Final[Mapping[str, str]] = {"conclusion": "concluding_sentence"}


def step_kind(name: str) -> type[Any] | None:
    """The step kind registered as ``name``, importing the later built-in kinds only if needed."""
    kind = _KINDS.get(name)
    if kind is None and not _later["imported"]:
        _import_later_kinds()
        kind = _KINDS.get(name)
    return kind


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
    if payload.kind == "hedge":
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




def candidate_of(found: Extraction, step: str) -> Candidate:
    """The candidate an extraction stands for: how a step without ``find`` takes part in a
    policy that weighs candidates."""
    if found.letter is not None:
        return Candidate(
            "commitment", found.position, found.position, (found.letter,), clean=found.clean,
            how=found.detail, step=step,
        )  # fmt: skip
    if found.failure == "ambiguous":
        return Candidate("hedge", found.position, found.position, how=found.detail, step=step)
    return Candidate(
        "unreadable", found.position, found.position, failure=found.failure or "no_answer",
        how=found.detail, step=step,
    )  # fmt: skip


def picked(found: Sequence[Candidate], which: Which) -> Candidate | None:
    """The candidate a finder answers with under ``first_step``: its first or last that says
    something (one that ``extraction_of`` turns into a finding)."""
    for candidate in found if which == "first" else reversed(found):
        kind = candidate.kind
        if (
            (kind in ("commitment", "stray") and candidate.letter is not None)
            or kind == "hedge"
            or (kind == "unreadable" and candidate.failure is not None)
        ):
            return candidate
    return None


class PicksOne:
    """For a finder whose one answer under ``first_step`` is one of its own candidates, picked by
    ``which``. ``pick`` hands the policy that candidate itself, so a statement is converted once:
    into the finding of the verdict, never back into a candidate."""

    __slots__ = ()
    which: Which

    def find(self, context: Context, /) -> Sequence[Candidate]:
        raise NotImplementedError  # every step kind that picks defines it

    def pick(self, context: Context) -> Candidate | None:
        return picked(self.find(context), self.which)

    def __call__(self, context: Context) -> Extraction | None:
        candidate = self.pick(context)
        return None if candidate is None else extraction_of(candidate, context.options)


def extraction_of(candidate: Candidate, options: Collection[str] | None = None) -> Extraction | None:
    """The finding a candidate stands for, when it says something: a commitment or a stray
    letter is its letter (or, when ``options`` are given and it is none of them,
    ``not_an_option``, which lets the chain go on), a hedge is ``ambiguous``, an unreadable
    statement its failure. The one conversion from what a finder found to what a verdict is
    built from (the policies add "no answer" for the rest)."""
    letter = candidate.letter
    # A stray letter is a finding of its own step (under ``conclusion`` a fallback the policy
    # weighs before it reads it as a commitment).
    if candidate.kind in ("commitment", "stray") and letter is not None:
        if options is not None and letter not in options:
            return Extraction(
                None, failure="not_an_option", position=candidate.start, final=False,
                detail=f"{candidate.how}: {letter!r} is not one of the options {', '.join(options)}",
            )  # fmt: skip
        return Extraction(letter, position=candidate.start, clean=candidate.clean, detail=candidate.how)
    if candidate.kind == "hedge":
        listed = ", ".join(candidate.letters)
        return Extraction(
            None,
            failure="ambiguous",
            detail=f"{candidate.how} lists several letters: {listed}" if listed else candidate.how,
            position=candidate.start,
        )
    if candidate.kind == "unreadable" and candidate.failure is not None:
        return Extraction(
            None, failure=candidate.failure, detail=candidate.how, position=candidate.start,
            final=False,
        )  # fmt: skip
    return None


def payload_candidate(
    context: Context, payload: Payload, *, start: int, end: int, clean: bool, detail: str
) -> Candidate | None:
    """The candidate a string payload reading stands for (``None`` when it names nothing)."""
    if payload.kind == "letter":
        assert payload.letter is not None
        return context.candidate(
            "commitment", start, end, (payload.letter,), clean=clean, how=f"{detail} ({payload.how})"
        )
    if payload.kind == "hedge":
        return context.candidate("hedge", start, end, payload.letters, how=detail)
    if payload.kind == "not_an_option":
        return context.candidate(
            "unreadable", start, end, (payload.letter or "",), failure="not_an_option",
            how=f"{detail} names {payload.letter!r}, which is not an option",
        )  # fmt: skip
    return None
