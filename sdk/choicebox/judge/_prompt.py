"""The judge's prompt: a template file the user can replace, rendered per row.

The template is plain text with ``$question``, ``$options`` and ``$response`` (each required) and
``$letters`` (optional: the row's option letters, ``A, B, C, D``); ``$$`` is a dollar sign. It is
Python's ``string.Template``: what is substituted is never read as a template again, so a response
that holds ``$question`` stays as written. The shipped template (``prompt.txt``) states the reading
rules the verifier follows (a hedge or a list of letters commits to none), so that a mode that
opts hedges in is judged by them.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import attrs

from choicebox._errors import JudgeError
from choicebox._resources import builtin_judge_prompt

__all__ = ["JudgePrompt"]

_REQUIRED: Final = ("question", "options", "response")
_KNOWN: Final = (*_REQUIRED, "letters")
# A template is a page of instructions, not a data file: a larger one is a wrong path.
_MAX_TEMPLATE_BYTES: Final = 64 * 1024


def _check(instance: JudgePrompt, attribute: attrs.Attribute[str], text: str) -> None:
    template = string.Template(text)
    if not template.is_valid():
        line, column = _bad_placeholder(text)
        raise JudgeError(
            "a '$' that starts no placeholder (write $$ for a dollar sign)",
            path=instance.source, line=line, column=column, source_line=text.splitlines()[line - 1],
        )  # fmt: skip
    names = set(template.get_identifiers())
    unknown = sorted(names - set(_KNOWN))
    if unknown:
        raise JudgeError(
            f"unknown placeholder ${unknown[0]}; a judge prompt may use {', '.join('$' + n for n in _KNOWN)}",
            path=instance.source,
        )
    missing = [name for name in _REQUIRED if name not in names]
    if missing:
        raise JudgeError(
            f"the template never shows {', '.join('$' + n for n in missing)}: the judge must see the "
            "question, the options and the response",
            path=instance.source,
        )


def _bad_placeholder(text: str) -> tuple[int, int]:
    """The 1-based line and column of the first ``$`` that starts no placeholder."""
    pattern = string.Template.pattern
    for match in pattern.finditer(text):
        if match.group("invalid") is not None:
            start = match.start("invalid")
            line = text.count("\n", 0, start) + 1
            return line, start - (text.rfind("\n", 0, start) + 1) + 1
    return 1, 1  # pragma: no cover - is_valid() said there is one


@attrs.frozen(kw_only=True)
class JudgePrompt:
    """A judge prompt template (see the module docstring), checked on construction."""

    # ``source`` first: the check of ``text`` names it.
    source: str = "<builtin>/prompt.txt"
    text: str = attrs.field(validator=_check)

    @classmethod
    def default(cls) -> JudgePrompt:
        """The shipped template."""
        return cls(text=builtin_judge_prompt())

    @classmethod
    def from_file(cls, path: str | Path) -> JudgePrompt:
        """The template in ``path`` (UTF-8); a ``JudgeError`` names the file when it is unusable."""
        try:
            with open(path, "rb") as handle:
                data = handle.read(_MAX_TEMPLATE_BYTES + 1)
        except OSError as exc:
            raise JudgeError(f"cannot read the prompt template: {exc.strerror}", path=str(path)) from None
        if len(data) > _MAX_TEMPLATE_BYTES:
            raise JudgeError(f"a prompt template is at most {_MAX_TEMPLATE_BYTES:,} bytes", path=str(path))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JudgeError(f"not UTF-8 at byte {exc.start}", path=str(path)) from None
        return cls(text=text, source=str(path))

    def render(self, *, question: str, options: Mapping[str, str], response: str) -> str:
        """The prompt for one row: its question, its options one a line (``A. text``), the response."""
        listed = "\n".join(f"{letter}. {text}" for letter, text in options.items())
        return string.Template(self.text).substitute(
            question=question.strip(), options=listed, response=response.strip(), letters=", ".join(options)
        )
