"""choicebox: decide, fast and beyond doubt, which choice a language model picked.

The root holds what a grading user needs: samples, templates, ``grade`` and its ``Verdict``, the
grading modes and their registry, the step-kind extension API and every error. Families live in
public submodules: ``choicebox.audit`` (data checks and repairs), ``choicebox.metrics`` (pass@k,
intervals, Gym's aggregate metrics; ``choicebox.metrics.report`` the HTML report),
``choicebox.scoring`` (scorer primitives), ``choicebox.jsonl`` (streaming JSON Lines),
``choicebox.batch`` (file grading; ``choicebox.batch.ray`` on Ray Data), ``choicebox.testing``
(rule-file example runner), ``choicebox.server`` (the verify service), ``choicebox.judge`` (a model
judge for the rows the rules leave undecided).
"""

from __future__ import annotations

from ._errors import (
    AuditConfigError,
    BatchError,
    ChoiceboxError,
    FixFileError,
    GymConfigError,
    JudgeError,
    MetricsError,
    ParameterError,
    ReportError,
    RuleFileError,
    SampleError,
    StepKindError,
    TemplateError,
    UnknownModeError,
    WireFormatError,
)
from ._grading import grade, grade_many, grade_text
from ._modes import GradingMode, ModeRegistry, default_registry
from ._problems import Problem
from ._rollout import ModelOutput, Rollout, response_text
from ._samples import (
    DEFAULT_GRADING_MODE,
    MCQASample,
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
    Style,
    Template,
)
from ._templates import PromptTemplate, templates
from .find import (
    Candidate,
    Context,
    Extraction,
    FailureKind,
    Step,
    register_step_kind,
    step_kinds,
)
from .render import Verdict

__version__: str  # read on first use by __getattr__ below


def __getattr__(name: str) -> str:
    # importlib.metadata takes ~30 ms to import: every command would pay it for a string that
    # only --version and the report's footer show.
    if name != "__version__":
        raise AttributeError(f"module 'choicebox' has no attribute {name!r}")
    from importlib import metadata  # noqa: PLC0415  see above

    try:
        version = metadata.version("choicebox")
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        version = "0+unknown"
    globals()["__version__"] = version
    return version

__all__ = [
    "DEFAULT_GRADING_MODE",
    "AuditConfigError",
    "BatchError",
    "Candidate",
    "ChoiceboxError",
    "Context",
    "Extraction",
    "FailureKind",
    "FixFileError",
    "GradingMode",
    "GymConfigError",
    "JudgeError",
    "MCQASample",
    "MetricsError",
    "ModeRegistry",
    "ModelOutput",
    "MultipleChoiceCompletionSample",
    "MultipleChoiceQuestionAnswerSample",
    "MultipleChoiceSample",
    "ParameterError",
    "Problem",
    "PromptTemplate",
    "ReportError",
    "Rollout",
    "RuleFileError",
    "SampleError",
    "Step",
    "StepKindError",
    "Style",
    "Template",
    "TemplateError",
    "UnknownModeError",
    "Verdict",
    "WireFormatError",
    "__version__",
    "default_registry",
    "grade",
    "grade_many",
    "grade_text",
    "register_step_kind",
    "response_text",
    "step_kinds",
    "templates",
]
