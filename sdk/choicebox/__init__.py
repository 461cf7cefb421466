"""choicebox: decide, fast and beyond doubt, which choice a language model picked."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from ._errors import (
    ChoiceboxError,
    RuleFileError,
    SampleError,
    TemplateError,
    UnknownModeError,
    WireFormatError,
)
from ._jsonl import JsonlError, JsonlRow, dumps, iter_jsonl, loads
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

try:
    __version__ = version("choicebox")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "DEFAULT_GRADING_MODE",
    "ChoiceboxError",
    "JsonlError",
    "JsonlRow",
    "MCQASample",
    "ModelOutput",
    "MultipleChoiceCompletionSample",
    "MultipleChoiceQuestionAnswerSample",
    "MultipleChoiceSample",
    "PromptTemplate",
    "Rollout",
    "RuleFileError",
    "SampleError",
    "Style",
    "Template",
    "TemplateError",
    "UnknownModeError",
    "WireFormatError",
    "__version__",
    "dumps",
    "iter_jsonl",
    "loads",
    "response_text",
    "templates",
]
