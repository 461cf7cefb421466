"""Prompt templates: data files that turn a question and options into a Gym prompt.

Each template supplies the prompt text, the line format of an option, the grading mode that reads
its answer format and the ``output_regex`` that extracts it. Placeholders are substituted by plain
replacement, never ``str.format``, so template text cannot reach into Python objects.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import yaml

from ._errors import TemplateError
from ._resources import builtin_template_files
from ._samples import MCQASample, Template

__all__ = ["PromptTemplate", "render_sample", "templates"]

_PROMPT_FIELD = re.compile(r"\{(question|options|letters)\}")
_OPTION_FIELD = re.compile(r"\{(letter|text)\}")


@attrs.frozen(kw_only=True)
class PromptTemplate:
    """A shipped prompt template."""

    id: str
    description: str
    grading_mode: str
    option_line: str
    prompt: str
    output_regex: tuple[str, ...]

    def render(self, question: str, options: Mapping[str, str]) -> str:
        """The prompt text for a question and its lettered options."""
        # One pass over the template text each: a placeholder spelled inside a question or an option
        # (say "{options}") is text to show, never expanded a second time.
        lines = "\n".join(
            _substitute(_OPTION_FIELD, self.option_line, {"letter": letter, "text": text})
            for letter, text in options.items()
        )
        values = {"question": question, "options": lines, "letters": "".join(options)}
        return _substitute(_PROMPT_FIELD, self.prompt, values)


def _substitute(fields: re.Pattern[str], text: str, values: Mapping[str, str]) -> str:
    return fields.sub(lambda m: values[m[1]], text)


@functools.cache
def templates() -> Mapping[str, PromptTemplate]:
    """The shipped prompt templates by id."""
    found: dict[str, PromptTemplate] = {}
    for resource in builtin_template_files():
        data: Any = yaml.safe_load(resource.read_text(encoding="utf-8"))
        try:
            template = PromptTemplate(
                id=data["id"],
                description=data["description"],
                grading_mode=data["grading_mode"],
                option_line=data["option_line"],
                prompt=data["prompt"],
                output_regex=tuple(data.get("output_regex") or ()),
            )
        except (KeyError, TypeError) as exc:
            raise TemplateError(f"{resource.name}: malformed template ({exc})") from None
        found[template.id] = template
    return found


def _lettered(options: Mapping[str, str] | Sequence[str]) -> dict[str, str]:
    if isinstance(options, Mapping):
        return dict(options)
    if isinstance(options, str):
        raise TemplateError("options must be a mapping or a list of texts, not a single string")
    if len(options) > len(string.ascii_uppercase):
        raise TemplateError(f"{len(options)} options do not fit the letters A-Z")
    return dict(zip(string.ascii_uppercase, options, strict=False))


def render_sample(
    question: str,
    options: Mapping[str, str] | Sequence[str],
    expected_answer: str,
    *,
    template: str,
    grading_mode: str | None,
    uuid: str | None,
    metadata: Any,
) -> MCQASample:
    known = templates()
    if template not in known:
        raise TemplateError(
            f"unknown template {template!r}; known templates: {', '.join(sorted(known))}"
        )
    spec = known[template]
    lettered = _lettered(options)
    meta = (
        Template(output_regex=spec.output_regex, template_id=spec.id, regex_as_list=True)
        if spec.output_regex
        else None
    )
    params = {"input": [{"role": "user", "content": spec.render(question, lettered)}]}
    return MCQASample(
        question=question,
        options=lettered,
        expected_answer=expected_answer,
        grading_mode=grading_mode or spec.grading_mode,
        template=meta,
        uuid=uuid,
        metadata=metadata,
        responses_create_params=params,
    )
