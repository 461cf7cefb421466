"""Resolution policies: how a mode turns what its steps found into one verdict.

A mode's YAML names its policy under ``resolve:`` with the policy's parameters:

* ``first_step`` (the default; NeMo Gym's semantics): the steps run in chain order and the first
  that answers wins, each step picking its own answer (``which``, ``fallback``);
* ``last_position``: every step reports every statement it finds and the one stated last wins;
* ``conclusion`` (``robust``): every step reports every statement and the policy applies
  LABELLING-style rules to the ordered statements (``choicebox.resolve._conclusion``): the concluding
  commitment wins over hedges, retracted and revised letters; different unreconciled commitments
  give no answer (``conflicting``); a hedge inside one statement is ``ambiguous``.

Every policy returns a ``Resolution``: the extraction the verdict is built from, the chain entry
that gave it, and each candidate with what the policy did with it (``Ruling``), which
``choicebox explain`` prints.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal, NamedTuple, Protocol, TypeAlias, TypeVar

import attrs

from choicebox.find import Candidate, Context, Extraction, Step
from choicebox.find._api import candidate_of, extraction_of

__all__ = [
    "ChainEntry",
    "Outcome",
    "Policy",
    "Resolution",
    "Ruling",
    "policy_kinds",
    "register_policy",
    "run_step",
]

# What a policy did with a candidate.
Outcome: TypeAlias = Literal[
    "chosen",  # the verdict's letter comes from it
    "agrees",  # another statement of the chosen letter
    "superseded",  # an earlier statement the conclusion replaces (revised, narrowed, final marker)
    "retracted",  # withdrawn by a later correction
    "conflicting",  # one of several unreconciled letters
    "hedge",  # several letters where one was needed
    "outside",  # in text about another question, or after the text the policy read
    "not_an_option",  # names a letter the sample does not have
    "ignored",  # a mention, an unreadable statement, a fallback that was not needed
    "decides",  # the statement the verdict's failure comes from (no letter)
]
REGEX_FAILURES: Final = ("invalid_regex", "regex_timeout")


@attrs.frozen(kw_only=True)
class ChainEntry:
    """One step of a mode's chain, as the policies run it: its id (recorded in verdicts) and the
    configured step. ``choicebox._modes`` builds them from the YAML."""

    id: str
    step: Step
    primary: bool = False
    # Run only for samples whose template sets an answer_prefix (``when: answer_prefix``).
    when_answer_prefix: bool = False
    # Run only when the steps before found no letter statement (``when: no_commitment``).
    when_no_commitment: bool = False


class Ruling(NamedTuple):
    """One candidate and what the resolution did with it, with a short reason."""

    candidate: Candidate
    outcome: Outcome
    note: str = ""


@attrs.frozen
class Resolution:
    """A policy's result: the extraction the verdict is built from (``None``: nothing found),
    the chain entry it came from, and the rulings on every candidate considered."""

    found: Extraction | None
    entry: ChainEntry | None
    rulings: tuple[Ruling, ...] = ()


class Policy(Protocol):
    """A configured resolution policy: reads the context with the mode's chain, decides."""

    def __call__(
        self, context: Context, chain: Sequence[ChainEntry], errors: list[str], /
    ) -> Resolution: ...


PolicyT = TypeVar("PolicyT", bound=type[Any])
_POLICIES: dict[str, type[Any]] = {}


def register_policy(name: str) -> Callable[[PolicyT], PolicyT]:
    """Class decorator registering an attrs class as the resolution policy ``name``."""

    def register(cls: PolicyT) -> PolicyT:
        _POLICIES[name] = cls
        return cls

    return register


def policy_kinds() -> Mapping[str, type[Any]]:
    """The registered policies by name, ``conclusion`` (``choicebox.resolve._conclusion``) included."""
    _import_conclusion()
    return dict(_POLICIES)


def policy_kind(name: str) -> type[Any] | None:
    """The policy registered as ``name``; ``conclusion`` is imported the first time it is named
    (its module is ``robust``'s alone, and about 8 ms of start-up)."""
    if name not in _POLICIES:
        _import_conclusion()
    return _POLICIES.get(name)


def _import_conclusion() -> None:
    importlib.import_module(f"{__package__}._conclusion")


def applicable(entry: ChainEntry, context: Context) -> bool:
    return not (entry.when_answer_prefix and not context.answer_prefix)


def run_step(entry: ChainEntry, context: Context, errors: list[str]) -> list[Candidate]:
    """Every candidate of one chain entry: its ``find`` when it has one, else its one extraction."""
    context.step_id = entry.id
    step: Any = entry.step
    finder = getattr(step, "find", None)
    if finder is not None:
        found: list[Candidate] = list(finder(context))
    else:
        extraction = step(context)
        found = [] if extraction is None else [candidate_of(extraction, entry.id)]
    for candidate in found:
        if candidate.failure in REGEX_FAILURES and candidate.how not in errors:
            errors.append(candidate.how)
    return found


# --- first_step ----------------------------------------------------------------------------------


@register_policy("first_step")
@attrs.frozen(kw_only=True)
class FirstStep:
    """The first step in chain order that answers wins (NeMo Gym's semantics).

    A step's finding that stops the chain (an ambiguous answer) wins too; a failure that does not
    (a letter that is not an option) is kept in case nothing better turns up.
    """

    def __call__(self, context: Context, chain: Sequence[ChainEntry], errors: list[str]) -> Resolution:
        kept: tuple[Extraction, ChainEntry] | None = None
        rulings: list[Ruling] = []
        for entry in chain:
            if not applicable(entry, context):
                continue
            context.step_id = entry.id
            pick = getattr(entry.step, "pick", None)
            if pick is not None:  # the finder's own candidate: converted once, into the finding
                candidate = pick(context)
                found = None if candidate is None else extraction_of(candidate, context.options)
            else:
                found = entry.step(context)
                candidate = None if found is None else candidate_of(found, entry.id)
            if found is None or candidate is None:
                continue
            if found.failure in REGEX_FAILURES and found.detail not in errors:
                errors.append(found.detail)
            if found.letter is not None or found.final:
                rulings.append(Ruling(candidate, "chosen" if found.letter else "decides"))
                return Resolution(found, entry, tuple(rulings))
            rulings.append(Ruling(candidate, "ignored", "a later step may answer"))
            if kept is None or kept[0].failure in REGEX_FAILURES:
                kept = (found, entry)
        if kept is None:
            return Resolution(None, None, tuple(rulings))
        return Resolution(kept[0], kept[1], tuple(rulings))


# --- last_position -------------------------------------------------------------------------------


@register_policy("last_position")
@attrs.frozen(kw_only=True)
class LastPosition:
    """The statement made last in the text wins; at one position, the earlier step in the chain.

    A revision ("Answer: A ... on reflection, the answer is B") reads B. Statements that name
    nothing usable are kept as the failure when nothing answers.
    """

    def __call__(self, context: Context, chain: Sequence[ChainEntry], errors: list[str]) -> Resolution:
        best: tuple[int, Candidate, ChainEntry] | None = None
        failure: tuple[Candidate, ChainEntry] | None = None
        everything: list[Candidate] = []
        main = [e for e in chain if applicable(e, context) and not e.when_no_commitment]
        fallbacks = [e for e in chain if applicable(e, context) and e.when_no_commitment]
        for entry in main + fallbacks:
            if entry.when_no_commitment and best is not None:
                break
            for candidate in run_step(entry, context, errors):
                everything.append(candidate)
                if candidate.kind in ("commitment", "hedge"):
                    if best is None or candidate.start > best[0]:
                        best = (candidate.start, candidate, entry)
                elif candidate.kind == "unreadable" and failure is None:
                    failure = (candidate, entry)
        chosen = best[1] if best is not None else failure[0] if failure is not None else None
        rulings = tuple(
            Ruling(c, "chosen" if c is chosen else "superseded" if c.kind == "commitment" else "ignored")
            for c in everything
        )
        if best is not None:
            _, candidate, entry = best
            return Resolution(_extraction(candidate, context), entry, rulings)
        if failure is not None:
            return Resolution(_extraction(failure[0], context), failure[1], rulings)
        return Resolution(None, None, rulings)


def _extraction(candidate: Candidate, context: Context) -> Extraction:
    """The finding a decision rests on: ``extraction_of`` the candidate, or "no answer" for one
    that says nothing usable (a value, a statement of no option)."""
    found = extraction_of(candidate, context.options)
    if found is not None:
        return found
    return Extraction(
        None, failure=candidate.failure or "no_answer", detail=candidate.how, position=candidate.start,
        final=False,
    )  # fmt: skip
