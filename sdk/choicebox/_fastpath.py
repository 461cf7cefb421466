"""Grading a decoded JSON row without building a sample: the hot path of ``grade`` and ``serve``.

Building an ``MCQASample`` validates and freezes every field, which costs as much as grading.
A row that is plainly well formed is graded straight from its dict; this path accepts only rows
that ``decode_mcqa`` would decode (every check it makes that can fail is made here, more
strictly) and passes ``grade_text`` what ``grade`` would, so the verdict is the same. Anything
unusual returns ``None`` and takes the full path, which also words the errors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from ._errors import WireFormatError
from ._grading import Verdict, grade_text
from ._modes import GradingMode
from ._regex import DEFAULT_TIMEOUT
from ._rollout import response_text
from ._samples import DEFAULT_GRADING_MODE
from ._wire import question_from_prompt

__all__ = ["grade_row_fast"]

_ABSENT: Final = object()
_TEMPLATE_TEXT_KEYS: Final = ("template_id", "prompt_type", "format_type", "answer_prefix")


def grade_row_fast(
    row: dict[str, Any],
    mode_for: Callable[[str], GradingMode],
    *,
    options_from_prompt: Callable[[dict[str, Any], str], Sequence[tuple[str, str]]] | None = None,
    max_patterns: int | None = None,
    regex_timeout: float = DEFAULT_TIMEOUT,
) -> Verdict | None:
    """The verdict for a well-formed row, or ``None`` when the row needs the full path.

    ``mode_for`` resolves the row's grading mode (it may raise for an unknown one).
    ``options_from_prompt(row, question)`` reads options from the prompt for a row without
    ``options``; without it such a row takes the full path. ``max_patterns`` sends a row with
    more template patterns than that to the full path.
    """
    response = row.get("response")
    if response is None:
        return None
    params = row.get("responses_create_params")
    if params is not None and type(params) is not dict:
        return None
    question = row.get("question")
    if question is not None and (type(question) is not str or not question.strip()):
        return None
    if question is None:
        # The prompt's user message is the question, as decode_mcqa reads it: the row must
        # have one, and the options may have to be found in it.
        question = question_from_prompt(params)
        if type(question) is not str or not question.strip():
            return None
    raw_options = row.get("options", _ABSENT)
    options: dict[str, str] = {}
    if raw_options is _ABSENT:
        if options_from_prompt is None:
            return None
        options = dict(options_from_prompt(row, question))
    elif type(raw_options) is list:
        for item in raw_options:
            if type(item) is not dict or len(item) != 1:
                return None
            for letter, text in item.items():
                if (
                    len(letter) != 1
                    or not letter.isalpha()
                    or letter in options
                    or type(text) is not str
                    or not text.strip()
                ):
                    return None
                options[letter] = text
    else:
        return None
    expected = row.get("expected_answer")
    if len(options) < 2 or type(expected) is not str or expected not in options:
        return None
    mode_name = row.get("grading_mode")
    if mode_name is None:
        mode_name = DEFAULT_GRADING_MODE
    elif type(mode_name) is not str or not mode_name:
        return None
    uuid = row.get("uuid")
    if uuid is not None and type(uuid) is not str:
        return None
    output_regex: tuple[str, ...] = ()
    answer_prefix: str | None = None
    template = row.get("template_metadata")
    if template is not None:
        if type(template) is not dict:
            return None
        for key in _TEMPLATE_TEXT_KEYS:
            value = template.get(key)
            if value is not None and type(value) is not str:
                return None
        pattern = template.get("output_regex")
        if type(pattern) is str:
            output_regex = (pattern,)
        elif type(pattern) is list and all(type(p) is str for p in pattern):
            output_regex = tuple(pattern)
        elif pattern is not None:
            return None
        if max_patterns is not None and len(output_regex) > max_patterns:
            return None
        answer_prefix = template.get("answer_prefix")
    mode = mode_for(mode_name)
    try:
        text = response_text(response)
    except WireFormatError:
        return None  # the full path words the invalid_output verdict
    return grade_text(
        text,
        options,
        expected,
        mode,
        output_regex=output_regex,
        answer_prefix=answer_prefix,
        regex_timeout=regex_timeout,
        question=question,
    )
