"""The view a check reads: a sample's question, lettered choices, gold answer, prompt and template,
as far as they can be read from a row or a sample."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

import attrs

from choicebox._prompt_options import PromptOptions, locate_options, options_listed
from choicebox._samples import (
    MCQASample,
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
)
from choicebox._templates import templates
from choicebox._wire import question_from_prompt

AnySample: TypeAlias = (
    MCQASample | MultipleChoiceQuestionAnswerSample | MultipleChoiceCompletionSample
)


# --- the view a check reads ----------------------------------------------------------------------


@attrs.frozen
class _Option:
    letter: str | None  # None when the raw key is no single letter
    text: Any  # a string for a readable option
    field: str


@attrs.frozen(kw_only=True)
class _View:
    family: Literal["mcqa", "mc"]
    # The question as a person reads it (None when there is none to judge) and where it lives.
    question: str | None
    question_field: str
    judge_question: bool  # False for continuation stems
    explicit_question: bool  # the text is a field of its own (not the prompt), so fix may tidy it
    options: tuple[_Option, ...]
    options_readable: bool = True  # False: the options are no list, so no gold can be judged
    duplicate_letters: tuple[tuple[str, str], ...] = ()  # (field, letter)
    gold: Any  # the gold letter (mcqa) or index (mc), as read
    gold_present: bool
    gold_field: str
    prompt: str | None = None  # the last user message
    options_from_prompt: bool = False  # the row has no `options`: they were read from the prompt
    prompt_texts: tuple[str, ...] = ()  # every message text, for finding the instruction
    regexes: tuple[Any, ...] = ()
    regex_field: str = "template_metadata.output_regex"
    regex_as_list: bool = False

    @property
    def texts(self) -> dict[str, str]:
        """Readable options: letter -> text."""
        return {
            o.letter: o.text
            for o in self.options
            if o.letter is not None and isinstance(o.text, str)
        }

    @property
    def gold_text(self) -> str | None:
        if self.family == "mcqa":
            return self.texts.get(self.gold) if isinstance(self.gold, str) else None
        index = self.gold
        if (
            isinstance(index, int)
            and not isinstance(index, bool)
            and 0 <= index < len(self.options)
        ):
            text = self.options[index].text
            return text if isinstance(text, str) else None
        return None


def _mc_letter(i: int) -> str | None:
    return string.ascii_uppercase[i] if i < len(string.ascii_uppercase) else None


def _message_texts(params: Any) -> tuple[str, ...]:
    if not isinstance(params, Mapping):
        return ()
    out: list[str] = []
    instructions = params.get("instructions")
    if isinstance(instructions, str):
        out.append(instructions)
    messages = params.get("input")
    if isinstance(messages, str):
        out.append(messages)
    elif isinstance(messages, Sequence):
        for message in messages:
            if not isinstance(message, Mapping):
                continue
            content = message.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, Sequence):
                out.extend(
                    p["text"]
                    for p in content
                    if isinstance(p, Mapping) and isinstance(p.get("text"), str)
                )
    return tuple(out)


def _question_stem(
    question: Any,
    prompt: str | None,
    letters: Sequence[str],
    block: PromptOptions | None = None,
) -> tuple[str | None, bool]:
    """The question to judge and whether it is a field of its own.

    A row without ``question`` is read from its prompt: the text before the listed options (the
    ``block`` its options were read from, else where the prompt lists ``letters``), after the
    instruction of a shipped template when the prompt starts with one.
    """
    if isinstance(question, str) and question != prompt:
        return question, True
    if prompt is None:
        return (question if isinstance(question, str) else None), False
    if block is None:
        block = locate_options(prompt, letters)
    if block is None:
        return None, False
    stem = block.text_before(prompt)
    for prefix in _template_prefixes():
        match = prefix.match(stem)
        if match is not None:
            stem = stem[match.end() :]
            break
    return stem, False


def _template_prefixes() -> tuple[re.Pattern[str], ...]:
    cached = _PREFIX_CACHE.get("prefixes")
    if cached is None:
        found: list[re.Pattern[str]] = []
        for spec in templates().values():
            head, sep, _ = spec.prompt.partition("{question}")
            if not sep or not head:
                continue
            pattern = "".join(
                "[A-Za-z]*" if part == "{letters}" else re.escape(part)
                for part in re.split(r"(\{letters\})", head)
            )
            found.append(re.compile(pattern))
        cached = tuple(found)
        _PREFIX_CACHE["prefixes"] = cached
    return cached


_PREFIX_CACHE: dict[str, tuple[re.Pattern[str], ...]] = {}


def _view_of_row(row: Mapping[str, Any]) -> _View:
    if row.get("task_type") == "multiple_choice" or ("context" in row and "choices" in row):
        return _view_of_mc_row(row)
    params = row.get("responses_create_params")
    prompt = question_from_prompt(params) if isinstance(params, Mapping) else None
    options: list[_Option] = []
    duplicates: list[tuple[str, str]] = []
    seen: set[str] = set()
    raw_options = row.get("options")
    readable = isinstance(raw_options, list)
    if isinstance(raw_options, list):
        for i, item in enumerate(raw_options):
            if not isinstance(item, Mapping):
                continue
            for letter, text in item.items():
                if text is None:  # Gym pads option lists with nulls: no such choice
                    continue
                good = isinstance(letter, str) and len(letter) == 1 and letter.isalpha()
                if good and letter in seen:
                    duplicates.append((f"options[{i}]", letter))
                    continue
                if good:
                    seen.add(letter)
                options.append(
                    _Option(
                        letter if good else None,
                        text,
                        f"options.{letter}" if good else f"options[{i}]",
                    )
                )
    from_prompt = "options" not in row
    listed: PromptOptions | None = None
    if from_prompt:  # Gym rollout files drop `options`: read them as the reader does
        asked = row.get("question")
        asked = prompt if asked is None else asked
        listed = options_listed(asked, prompt) if isinstance(asked, str) else None
        field = "question" if prompt is None else "responses_create_params.input"
        pairs = listed.pairs if listed is not None else ()
        options = [_Option(letter, text, field) for letter, text in pairs]
        readable = listed is not None  # else there are no options to judge the gold against
    question, explicit = _question_stem(
        row.get("question"),
        prompt,
        [o.letter for o in options if o.letter],
        listed if listed is not None and row.get("question") is None else None,
    )
    template = row.get("template_metadata")
    regexes: tuple[Any, ...] = ()
    as_list = False
    if isinstance(template, Mapping):
        pattern = template.get("output_regex")
        if isinstance(pattern, str):
            regexes = (pattern,)
        elif isinstance(pattern, list):
            regexes, as_list = tuple(pattern), True
    return _View(
        family="mcqa",
        question=question,
        question_field="question" if explicit else "responses_create_params.input",
        judge_question=True,
        explicit_question=explicit,
        options=tuple(options),
        options_readable=readable,
        duplicate_letters=tuple(duplicates),
        gold=row.get("expected_answer"),
        gold_present="expected_answer" in row and row.get("expected_answer") is not None,
        gold_field="expected_answer",
        prompt=prompt,
        options_from_prompt=from_prompt,
        prompt_texts=_message_texts(params),
        regexes=regexes,
        regex_as_list=as_list,
    )


def _view_of_mc_row(row: Mapping[str, Any]) -> _View:
    choices = row.get("choices")
    readable = isinstance(choices, list)
    options = (
        tuple(_Option(_mc_letter(i), text, f"choices[{i}]") for i, text in enumerate(choices))
        if isinstance(choices, list)
        else ()
    )
    context = row.get("context")
    return _View(
        family="mc",
        question=context if isinstance(context, str) else None,
        question_field="context",
        judge_question=row.get("style") == "qa",
        explicit_question=True,
        options=options,
        options_readable=readable,
        gold=row.get("answer_index"),
        gold_present="answer_index" in row,
        gold_field="answer_index",
    )


def _view_of_sample(sample: AnySample) -> _View:
    if isinstance(sample, MultipleChoiceSample):
        return _View(
            family="mc",
            question=sample.context,
            question_field="context",
            judge_question=sample.style == "qa",
            explicit_question=True,
            options=tuple(
                _Option(_mc_letter(i), text, f"choices[{i}]")
                for i, text in enumerate(sample.choices)
            ),
            gold=sample.answer_index,
            gold_present=True,
            gold_field="answer_index",
        )
    prompt = question_from_prompt(sample.responses_create_params)
    question, explicit = _question_stem(sample.question, prompt, sample.letters)
    template = sample.template
    return _View(
        family="mcqa",
        question=question,
        question_field="question" if explicit else "responses_create_params.input",
        judge_question=True,
        explicit_question=explicit,
        options=tuple(
            _Option(letter, text, f"options.{letter}") for letter, text in sample.options.items()
        ),
        gold=sample.expected_answer,
        gold_present=True,
        gold_field="expected_answer",
        prompt=prompt,
        prompt_texts=_message_texts(sample.responses_create_params),
        regexes=template.output_regex if template is not None else (),
        regex_as_list=template is not None
        and (template.regex_as_list or len(template.output_regex) != 1),
    )
