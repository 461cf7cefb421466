"""The one place that finds the data files shipped inside the package.

``rules/``, ``grammars/``, the prompt templates and the judge's prompt are package data; reading them through
``importlib.resources`` works the same from a wheel, an editable install or a zip.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Final

__all__ = ["builtin_grammar", "builtin_judge_prompt", "builtin_rule_files", "builtin_template_files"]

_RULES: Final = "choicebox.rules"
_GRAMMARS: Final = "choicebox.grammars"
_TEMPLATES: Final = "choicebox.prompt_templates"
_JUDGE: Final = "choicebox.judge"


def _yaml_files(package: str) -> Iterator[Traversable]:
    root = resources.files(package)
    yield from sorted(
        (f for f in root.iterdir() if f.is_file() and f.name.endswith((".yaml", ".yml"))),
        key=lambda f: f.name,
    )


def builtin_rule_files() -> Iterator[Traversable]:
    """The built-in grading modes, one YAML file each, in name order."""
    return _yaml_files(_RULES)


def builtin_template_files() -> Iterator[Traversable]:
    """The shipped prompt templates, one YAML file each, in name order."""
    return _yaml_files(_TEMPLATES)


def builtin_grammar(name: str) -> str:
    """The text of ``grammars/<name>.lark``."""
    return resources.files(_GRAMMARS).joinpath(f"{name}.lark").read_text(encoding="utf-8")


def builtin_judge_prompt() -> str:
    """The text of the judge's shipped prompt template, ``judge/prompt.txt``."""
    return resources.files(_JUDGE).joinpath("prompt.txt").read_text(encoding="utf-8")
