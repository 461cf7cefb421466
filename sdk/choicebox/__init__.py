"""choicebox: decide, fast and beyond doubt, which choice a language model picked."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from ._audit import (
    Audit,
    AuditConfig,
    AuditConfigError,
    AuditSummary,
    CheckInfo,
    CheckSettings,
    Finding,
    audit,
    audit_checks,
    audit_file,
    audit_row,
    audit_rows,
)
from ._errors import (
    ChoiceboxError,
    RuleFileError,
    SampleError,
    TemplateError,
    UnknownModeError,
    WireFormatError,
)
from ._fix import Change, FixSummary, RowFix, fix, fix_file, fix_row
from ._grading import Verdict, grade, grade_many, grade_text
from ._jsonl import JsonlError, JsonlRow, dumps, iter_jsonl, loads
from ._metrics import (
    CategoryStats,
    ConfidenceInterval,
    FailureAccumulator,
    MetricsAccumulator,
    MetricsError,
    aggregate_metrics,
    bootstrap_ci,
    category_breakdown,
    failure_analysis,
    pass_at_k,
)
from ._modes import ChainEntry, GradingMode, ModeExample, ModeRegistry, default_registry
from ._report import ReportError, render_report, write_report
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
from ._scoring import (
    Score,
    ScorerInput,
    answer_line,
    exact_match,
    fuzzy_match,
    multichoice_regex,
    numeric_match,
)
from ._steps import (
    Context,
    Extraction,
    FailureKind,
    ParameterError,
    Step,
    register_step_kind,
    step_kinds,
)
from ._templates import PromptTemplate, templates

try:
    __version__ = version("choicebox")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "DEFAULT_GRADING_MODE",
    "Audit",
    "AuditConfig",
    "AuditConfigError",
    "AuditSummary",
    "CategoryStats",
    "ChainEntry",
    "Change",
    "CheckInfo",
    "CheckSettings",
    "ChoiceboxError",
    "ConfidenceInterval",
    "Context",
    "Extraction",
    "FailureAccumulator",
    "FailureKind",
    "Finding",
    "FixSummary",
    "GradingMode",
    "JsonlError",
    "JsonlRow",
    "MCQASample",
    "MetricsAccumulator",
    "MetricsError",
    "ModeExample",
    "ModeRegistry",
    "ModelOutput",
    "MultipleChoiceCompletionSample",
    "MultipleChoiceQuestionAnswerSample",
    "MultipleChoiceSample",
    "ParameterError",
    "PromptTemplate",
    "ReportError",
    "Rollout",
    "RowFix",
    "RuleFileError",
    "SampleError",
    "Score",
    "ScorerInput",
    "Step",
    "Style",
    "Template",
    "TemplateError",
    "UnknownModeError",
    "Verdict",
    "WireFormatError",
    "__version__",
    "aggregate_metrics",
    "answer_line",
    "audit",
    "audit_checks",
    "audit_file",
    "audit_row",
    "audit_rows",
    "bootstrap_ci",
    "category_breakdown",
    "default_registry",
    "dumps",
    "exact_match",
    "failure_analysis",
    "fix",
    "fix_file",
    "fix_row",
    "fuzzy_match",
    "grade",
    "grade_many",
    "grade_text",
    "iter_jsonl",
    "loads",
    "multichoice_regex",
    "numeric_match",
    "pass_at_k",
    "register_step_kind",
    "render_report",
    "response_text",
    "step_kinds",
    "templates",
    "write_report",
]
