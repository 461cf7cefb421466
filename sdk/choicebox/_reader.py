"""Reading a row: its validated fields, or every problem it has, each coded and at its path.

``read_mcqa_row`` is the one reader of a NeMo Gym ``mcqa`` row. ``MCQASample.from_wire``, the
batch ``Grader`` (so ``choicebox grade``), ``choicebox serve`` and ``choicebox audit`` all call it,
so they accept and reject exactly the same rows and report the same ``Problem`` for the same
defect. A row without ``options`` (Gym's rollout files drop them) has its options read from the
prompt by ``_prompt_options.options_listed``.

The common case, a well-formed row decoded from JSON, is read in one pass of cheap ``type(x) is``
checks; the wording of a problem is only worked out when there is one. ``read_multiple_choice_row``
reads the context/choices family with the same vocabulary.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs
import cattrs

from ._errors import describe_value
from ._problems import Problem, ProblemCode
from ._prompt_options import options_listed
from ._wire import (
    DEFAULT_GRADING_MODE,
    MC_WIRE_KEYS,
    MCQA_WIRE_KEYS,
    STYLES,
    TASK_TYPE,
    TEMPLATE_WIRE_KEYS,
    Style,
    converter,
    question_from_prompt,
)

__all__ = [
    "MultipleChoiceReading",
    "RowReading",
    "blank",
    "is_option_letter",
    "mcqa_extra",
    "read_mcqa_row",
    "read_multiple_choice_row",
    "template_extra",
]

_ABSENT: Final = object()
_TEMPLATE_TEXT_KEYS: Final = ("template_id", "prompt_type", "format_type", "answer_prefix")


def blank(text: str) -> bool:
    """Whether ``text`` is empty or only whitespace (what no question or option may be)."""
    return not text or text.isspace()


def is_option_letter(letter: object) -> bool:
    """Whether ``letter`` may name an option: one letter of any alphabet (``A``, ``b``, ``Ж``)."""
    return isinstance(letter, str) and len(letter) == 1 and letter.isalpha()


# --- the lettered question family ------------------------------------------------------------


# Not frozen: one is built for every row graded, and a frozen attrs class costs three times as
# much to build. Nothing assigns to a reading once it is returned.
@attrs.define
class RowReading:
    """The validated fields of an ``mcqa`` row, ready to grade or to become a sample.

    ``row`` is the row itself: the fields that are kept as they are (``uuid``, ``metadata``, the
    prompt, the template) are read from it. The others are the ones reading had to work out:
    ``options`` maps each letter to its text, in order (read from the prompt when the row has no
    ``options``), the grading mode has its default, and ``output_regex`` and ``answer_prefix`` are
    taken from ``template_metadata``.
    """

    row: Mapping[str, Any]
    question: str
    options: dict[str, str]
    expected_answer: str
    grading_mode: str
    output_regex: tuple[str, ...] = ()
    answer_prefix: str | None = None

    @property
    def options_from_prompt(self) -> bool:
        """Whether the options were read from the prompt (the row has no ``options``)."""
        return "options" not in self.row

    @property
    def template(self) -> Mapping[str, Any] | None:
        """The row's ``template_metadata``."""
        return self.row.get("template_metadata")

    @property
    def uuid(self) -> str | None:
        return self.row.get("uuid")

    @property
    def responses_create_params(self) -> Mapping[str, Any] | None:
        return self.row.get("responses_create_params")


def read_mcqa_row(row: object, *, rollout: bool = False) -> RowReading | list[Problem]:
    """The fields of a NeMo Gym ``mcqa`` row, or the list of everything wrong with it.

    ``rollout`` also requires the model's ``response`` (a row to grade). A row without
    ``options`` takes them from its question, else from its prompt's last user message; a null
    option (Gym pads option lists with them) is no option.
    """
    if not (type(row) is dict or isinstance(row, Mapping)):
        return [Problem("wrong_type", f"expected a JSON object, got {type(row).__name__}")]
    problems: list[Problem] = []
    get = row.get

    params = get("responses_create_params")
    if params is not None and not (type(params) is dict or isinstance(params, Mapping)):
        problems.append(
            Problem(
                "wrong_type",
                f"expected an object, got {type(params).__name__}",
                "$.responses_create_params",
            )
        )
        params = None

    question = get("question")
    prompt: str | None = None  # the user message, once it has been read
    if question is None:
        question = prompt = question_from_prompt(params)
        if question is None:
            problems.append(
                Problem(
                    "no_question",
                    "no question: the row has neither `question` nor a user message",
                    "$.responses_create_params.input",
                )
            )
        elif not question or question.isspace():  # blank(), inlined on the path of every row
            problems.append(
                Problem(
                    "empty_text",
                    "the user message, read as the question, must not be empty",
                    "$.responses_create_params.input",
                )
            )
    elif not isinstance(question, str):
        problems.append(
            Problem("wrong_type", f"expected a string, got {type(question).__name__}", "$.question")
        )
        question = None
    elif not question or question.isspace():
        problems.append(Problem("empty_text", "must not be empty", "$.question"))

    before_options = len(problems)
    raw_options = get("options", _ABSENT)
    options: dict[str, str]
    if raw_options is not _ABSENT:
        options = _read_options(raw_options, problems)
        if len(problems) == before_options and len(options) < 2:
            problems.append(
                Problem(
                    "too_few_options",
                    f"needs at least two options, got {len(options)}",
                    "$.options",
                )
            )
    elif question is None:
        options = {}
        problems.append(Problem("missing_field", "required field missing", "$.options"))
    else:
        if prompt is None:  # the question is a field of its own: the options may be in the prompt
            prompt = question_from_prompt(params)
        listed = options_listed(question, prompt)
        options = dict(listed.pairs) if listed is not None else {}
        if listed is None:
            problems.append(
                Problem(
                    "no_listed_options",
                    "required field missing, and the prompt lists no lettered options",
                    "$.options",
                )
            )
    options_ok = len(problems) == before_options

    expected = get("expected_answer")
    if expected is None:
        problems.append(Problem("missing_field", "required field missing", "$.expected_answer"))
    elif not isinstance(expected, str):
        problems.append(
            Problem(
                "wrong_type",
                f"expected a letter, got {type(expected).__name__}",
                "$.expected_answer",
            )
        )
    elif options_ok and expected not in options:
        problems.append(
            Problem(
                "answer_not_an_option",
                f"{describe_value(expected)} is not one of the option letters {', '.join(options)}",
                "$.expected_answer",
            )
        )

    grading_mode = get("grading_mode")
    if grading_mode is None:
        grading_mode = DEFAULT_GRADING_MODE
    elif not isinstance(grading_mode, str) or not grading_mode:
        code: ProblemCode = "empty_text" if isinstance(grading_mode, str) else "wrong_type"
        problems.append(
            Problem(
                code, f"expected a mode name, got {describe_value(grading_mode)}", "$.grading_mode"
            )
        )

    uuid = get("uuid")
    if uuid is not None and not isinstance(uuid, str):
        problems.append(
            Problem("wrong_type", f"expected a string, got {type(uuid).__name__}", "$.uuid")
        )

    template = get("template_metadata")
    output_regex: tuple[str, ...] = ()
    answer_prefix: str | None = None
    if template is not None and not _template_problems(template, problems):
        pattern = template.get("output_regex")
        if pattern is not None:
            output_regex = (pattern,) if isinstance(pattern, str) else tuple(pattern)
        answer_prefix = template.get("answer_prefix")

    try:
        "".join(row)  # str.join refuses anything but strings, in C: the cheapest test of the keys
    except TypeError:
        key = next(k for k in row if not isinstance(k, str))
        problems.append(Problem("wrong_type", f"keys must be strings, got {type(key).__name__}"))

    if rollout and get("response") is None:
        problems.append(Problem("missing_field", "required field missing", "$.response"))

    if problems:
        return problems
    return RowReading(
        row,
        question,  # type: ignore[arg-type]  # a str, or a problem was recorded
        options,
        expected,  # type: ignore[arg-type]  # likewise
        grading_mode,
        output_regex,
        answer_prefix,
    )


def _read_options(value: Any, problems: list[Problem]) -> dict[str, str]:
    """A row's ``options`` (a list of ``{"A": "text"}`` objects) as letter -> text, in order."""
    if type(value) is list:
        # The common case, one valid option per object, in one pass; anything else (padding,
        # several options in one object, any fault) is read again, carefully, below.
        options: dict[str, str] = {}
        for item in value:
            if type(item) is not dict or len(item) != 1:
                break
            (letter,) = item
            text = item[letter]
            if (
                type(text) is not str
                or type(letter) is not str
                or len(letter) != 1
                or not letter.isalpha()
                or letter in options
                or not text
                or text.isspace()
            ):
                break
            options[letter] = text
        else:
            return options
    return _read_options_carefully(value, problems)


def _read_options_carefully(value: Any, problems: list[Problem]) -> dict[str, str]:
    if not isinstance(value, list):
        problems.append(
            Problem(
                "wrong_type",
                f"expected a list of single-key objects, got {type(value).__name__}",
                "$.options",
            )
        )
        return {}
    options: dict[str, str] = {}
    seen: set[Any] = set()
    for i, item in enumerate(value):
        where = f"$.options[{i}]"
        if not isinstance(item, Mapping) or not item:
            problems.append(Problem("wrong_type", 'expected an object like {"A": "text"}', where))
            continue
        for letter, text in item.items():
            if text is None:
                continue  # Gym data pads option lists with nulls: "no such choice", not a choice
            if not is_option_letter(letter):
                problems.append(
                    Problem(
                        "bad_option_letter",
                        f"option letter {describe_value(letter)} is not a single letter",
                        where,
                    )
                )
                continue
            if letter in seen:
                problems.append(
                    Problem(
                        "duplicate_option_letter",
                        f"option letter {describe_value(letter)} appears twice",
                        where,
                    )
                )
                continue
            seen.add(letter)
            if not isinstance(text, str):
                problems.append(
                    Problem(
                        "wrong_type",
                        f"expected option text, got {type(text).__name__}",
                        f"{where}.{letter}",
                    )
                )
            elif blank(text):
                problems.append(
                    Problem("empty_text", "option text must not be empty", f"{where}.{letter}")
                )
            else:
                options[letter] = text
    return options


def _template_problems(value: Any, problems: list[Problem]) -> bool:
    """Record what is wrong with a row's ``template_metadata``; whether anything is."""
    where = "$.template_metadata"
    if not (type(value) is dict or isinstance(value, Mapping)):
        problems.append(
            Problem("wrong_type", f"expected an object, got {type(value).__name__}", where)
        )
        return True
    before = len(problems)
    regex = value.get("output_regex")
    if not (
        regex is None
        or isinstance(regex, str)
        or (isinstance(regex, list) and all(isinstance(p, str) for p in regex))
    ):
        problems.append(
            Problem(
                "wrong_type",
                f"output_regex must be a pattern or a list of patterns, got {type(regex).__name__}",
                f"{where}.output_regex",
            )
        )
    for key in _TEMPLATE_TEXT_KEYS:
        item = value.get(key)
        if item is not None and not isinstance(item, str):
            problems.append(
                Problem(
                    "wrong_type", f"expected a string, got {type(item).__name__}", f"{where}.{key}"
                )
            )
    for key in value:
        if not isinstance(key, str):
            problems.append(
                Problem("wrong_type", f"keys must be strings, got {type(key).__name__}", where)
            )
            break
    return len(problems) > before


def mcqa_extra(row: Mapping[str, Any]) -> dict[str, Any]:
    """The columns of an ``mcqa`` row that are none of its fields, kept as they are."""
    return {k: v for k, v in row.items() if k not in MCQA_WIRE_KEYS}


def template_extra(template: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of a ``template_metadata`` that are none of its named fields."""
    return {k: v for k, v in template.items() if k not in TEMPLATE_WIRE_KEYS}


# --- the context/choices family --------------------------------------------------------------


@attrs.frozen
class MultipleChoiceReading:
    """The validated fields of a ``task_type: multiple_choice`` row."""

    style: Style
    context: str
    choices: tuple[str, ...]
    answer_index: int
    extra: dict[str, Any]


_CHOICES_FIELDS: Final[tuple[tuple[str, Any], ...]] = (
    ("context", str),
    ("choices", list[str]),
    ("answer_index", int),
)


def read_multiple_choice_row(row: object) -> MultipleChoiceReading | list[Problem]:
    """The fields of a ``task_type: multiple_choice`` row, or the list of everything wrong."""
    if not isinstance(row, Mapping):
        return [Problem("wrong_type", f"expected a JSON object, got {type(row).__name__}")]
    problems: list[Problem] = []
    task_type = row.get("task_type", TASK_TYPE)
    if task_type != TASK_TYPE:
        problems.append(
            Problem(
                "wrong_value",
                f"task_type must be {TASK_TYPE!r}, got {describe_value(task_type)}",
                "$.task_type",
            )
        )
    style: Style | None = None
    if "style" not in row:
        problems.append(
            Problem(
                "missing_field", f"required field missing (one of {', '.join(STYLES)})", "$.style"
            )
        )
    elif row["style"] == "qa":
        style = "qa"
    elif row["style"] == "continuation":
        style = "continuation"
    else:
        problems.append(
            Problem(
                "wrong_value",
                f"unknown style {describe_value(row['style'])}; expected one of {', '.join(STYLES)}",
                "$.style",
            )
        )
    # Each core field is typed on its own, so one wrong field never hides the others' problems.
    typed: dict[str, Any] = {}
    for key, type_ in _CHOICES_FIELDS:
        if key not in row:
            problems.append(Problem("missing_field", "required field missing", f"$.{key}"))
            continue
        try:
            typed[key] = converter().structure(row[key], type_)
        except Exception as exc:  # cattrs raises its own validation groups
            problems.extend(_structuring_problems(exc, f"$.{key}"))
    context = typed.get("context")
    if context is not None and not context.strip():
        problems.append(Problem("empty_text", "must not be empty", "$.context"))
    choices = typed.get("choices")
    if choices is not None and len(choices) < 2:
        problems.append(
            Problem(
                "too_few_options", f"needs at least two choices, got {len(choices)}", "$.choices"
            )
        )
    index = typed.get("answer_index")
    if index is not None and choices is not None and not 0 <= index < len(choices):
        n = len(choices)
        problems.append(
            Problem(
                "answer_not_an_option",
                f"{index} is outside the {n} choices (0..{n - 1})"
                if n
                else f"{index} is outside the choices: there are none",
                "$.answer_index",
            )
        )
    for key in row:
        if not isinstance(key, str):
            problems.append(
                Problem("wrong_type", f"keys must be strings, got {type(key).__name__}")
            )
            break
    if problems or style is None:
        return problems
    return MultipleChoiceReading(
        style=style,
        context=typed["context"],
        choices=tuple(typed["choices"]),
        answer_index=typed["answer_index"],
        extra={k: v for k, v in row.items() if k not in MC_WIRE_KEYS},
    )


def _structuring_problems(exc: Exception, path: str) -> list[Problem]:
    """cattrs' account of a value that does not structure, one wrong_type problem per fault."""
    if not isinstance(exc, cattrs.BaseValidationError):
        return [Problem("wrong_type", str(exc), path)]
    out: list[Problem] = []
    for text in cattrs.transform_error(exc, path=path, format_exception=_format_exception):
        message, _, where = text.rpartition(" @ ")  # transform_error writes "message @ path"
        out.append(Problem("wrong_type", message, where))
    return out


def _format_exception(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, TypeError | ValueError):
        return str(exc)
    return f"invalid value ({exc})"
