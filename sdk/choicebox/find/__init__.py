"""Find: text in, statements out. The step kinds a mode's rule chain names, and their API.

The first room of the grading pipeline (``choicebox.resolve`` is the second). A step reads the
model's text (a ``Context``) and either finds the letter it committed to (an ``Extraction``),
reports why it could not (an ambiguous list, a letter that is not an option, a bad regex), or
says nothing; a step that can also report every statement it recognises as a ``Candidate``
(``find``) takes part in the policies that weigh them all. A step only finds: what a statement
counts for is the policy's to decide.

A step kind is an attrs class whose fields are the step's parameters (validated when a rule file
loads) and whose instances are called with a ``Context``. Built-in kinds are registered with
``register_step_kind`` exactly as a larger system registers its own, and rule files use them by
name. Every public module of this package holds kinds (adding one is adding its module);
importing the package registers those of NeMo Gym's modes, and the others (``robust``'s) are
registered the first time they are needed. The private modules are what the kinds share: the
one payload reader (``_payload``), option citations (``_citation``), the box grammar
(``_boxed``), the per-sample features (``_features``) and the vocabulary patterns (``_vocab``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from choicebox._errors import ParameterError, StepKindError

from . import answer_line, boxed, regex
from ._api import (
    FAILURE_KINDS,
    Candidate,
    Context,
    Extraction,
    FailureKind,
    Finder,
    StatementKind,
    Step,
    kind_modules,
    register_step_kind,
    step_kinds,
)
from .regex import run_patterns

if TYPE_CHECKING:
    from . import citation, fallbacks, lines, scope, statements, text, verdicts


def __getattr__(name: str) -> Any:
    # ``choicebox.find.statements`` and the other modules imported on first need (``_api``).
    if name in kind_modules():
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
    "citation",
    "fallbacks",
    "kind_modules",
    "lines",
    "regex",
    "register_step_kind",
    "run_patterns",
    "scope",
    "statements",
    "step_kinds",
    "text",
    "verdicts",
]
