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
from typing import Any, Final

import attrs
import yaml

from ._errors import TemplateError
from ._resources import builtin_template_files
from ._yaml import compose

__all__ = ["PromptTemplate", "lettered_options", "parse_template", "prompt_template", "templates"]

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
        text = resource.read_text(encoding="utf-8")
        template = parse_template(text, path=f"<builtin>/prompt_templates/{resource.name}")
        found[template.id] = template
    return found


_TEXT_FIELDS: Final = ("id", "description", "grading_mode", "option_line", "prompt")
_KNOWN_FIELDS: Final = frozenset({"version", *_TEXT_FIELDS, "output_regex"})


def parse_template(text: str, *, path: str) -> PromptTemplate:
    """A template file's text as a ``PromptTemplate``; a ``TemplateError`` points into the file."""
    document, root = compose(text, path=path, error=TemplateError)
    if not isinstance(root, yaml.MappingNode):
        raise document.error("a template must be a mapping", root)
    data: dict[str, Any] = document.value(root)
    error = document.error
    nodes = {str(key.value): (key, value) for key, value in root.value}
    for name, (key, _) in nodes.items():
        if name not in _KNOWN_FIELDS:
            raise error(f"unknown key {name!r}", key)
    for name in _TEXT_FIELDS:
        if name not in data:
            raise error(f"a template needs {name!r}", root)
        if not isinstance(data[name], str):
            raise error(f"{name!r} must be a string", nodes[name][1])
    regexes = data.get("output_regex") or []
    if not isinstance(regexes, list) or not all(isinstance(r, str) for r in regexes):
        raise error("'output_regex' must be a list of strings", nodes["output_regex"][1])
    return PromptTemplate(
        id=data["id"],
        description=data["description"],
        grading_mode=data["grading_mode"],
        option_line=data["option_line"],
        prompt=data["prompt"],
        output_regex=tuple(regexes),
    )


def prompt_template(template_id: str) -> PromptTemplate:
    """The shipped template ``template_id``; ``TemplateError`` names the known ones."""
    known = templates()
    if template_id not in known:
        raise TemplateError(
            f"unknown template {template_id!r}; known templates: {', '.join(sorted(known))}"
        )
    return known[template_id]


def lettered_options(options: Mapping[str, str] | Sequence[str]) -> dict[str, str]:
    """Options as letter -> text: a mapping as it is, a plain list lettered A, B, C, ..."""
    if isinstance(options, Mapping):
        return dict(options)
    if isinstance(options, str):
        raise TemplateError("options must be a mapping or a list of texts, not a single string")
    if len(options) > len(string.ascii_uppercase):
        raise TemplateError(f"{len(options)} options do not fit the letters A-Z")
    return dict(zip(string.ascii_uppercase, options, strict=False))
