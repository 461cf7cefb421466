"""Extraction steps: the building blocks of a grading mode's rule chain.

A step reads the model's text and either finds the letter it committed to, reports why it could
not (an ambiguous list, a letter that is not an option, a bad regex), or says nothing; a step
that can also report every statement it recognises as a ``Candidate`` (``find``) takes part in
policies that weigh them all (``conclusion``). A step kind is an attrs class whose fields are the
step's parameters (validated when a rule file loads) and whose instances are called with a
``Context``. Built-in kinds are registered with ``register_step_kind`` exactly as a larger system
registers its own, and rule files use them by name: importing this package registers those of
NeMo Gym's modes, and the others (``robust``'s) are registered the first time they are needed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from choicebox._errors import ParameterError, StepKindError

from . import answer_line, boxed, regex
from ._api import (
    _LATER_MODULES,
    FAILURE_KINDS,
    Candidate,
    Context,
    Extraction,
    FailureKind,
    Finder,
    StatementKind,
    Step,
    register_step_kind,
    step_kinds,
)
from .regex import run_patterns

if TYPE_CHECKING:
    from . import fallbacks, scope, statements, text


def __getattr__(name: str) -> Any:
    # ``choicebox.steps.statements`` and the other modules imported on first need (``_api``).
    if name in _LATER_MODULES:
        step_kinds()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FAILURE_KINDS",
    "Candidate",
    "Context",
    "Extraction",
    "FailureKind",
    "Finder",
    "ParameterError",
    "StatementKind",
    "Step",
    "StepKindError",
    "answer_line",
    "boxed",
    "fallbacks",
    "regex",
    "register_step_kind",
    "run_patterns",
    "scope",
    "statements",
    "step_kinds",
    "text",
]
