"""MkDocs hooks: the parts of the documentation generated from the code, so they cannot drift.

``<!-- step-kinds -->`` becomes the table of every registered step kind (its parameters with their
defaults, from its attrs fields; what it reads, from its docstring), and ``<!-- module-tree -->``
the package's modules, one line each, from their docstrings.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import attrs

from choicebox import step_kinds

PACKAGE = Path(__file__).parents[2] / "sdk" / "choicebox"
_MARK = re.compile(r"<!-- (step-kinds|module-tree)\b[^>]*-->")


def on_page_markdown(markdown: str, **_: Any) -> str:
    return _MARK.sub(lambda m: _STEP_KINDS() if m.group(1) == "step-kinds" else _MODULE_TREE(), markdown)


def _summary(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line, with table bars escaped."""
    first = (doc or "").strip().split("\n\n", 1)[0]
    return " ".join(first.split()).replace("|", "\\|")


def _default(field: attrs.Attribute[Any]) -> str:
    if field.default is attrs.NOTHING:
        return "required"
    if isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
        return "empty"
    value = field.default
    if isinstance(value, tuple) and len(value) > 4:
        return f"{len(value)} entries"
    return f"`{value!r}`"


def _STEP_KINDS() -> str:
    rows = ["| kind | module | parameters (default) | reads |", "|---|---|---|---|"]
    for name, cls in sorted(step_kinds().items()):
        params = [f"`{f.alias}` ({_default(f)})" for f in attrs.fields(cls) if f.init]
        module = cls.__module__.removeprefix("choicebox.")
        rows.append(f"| `{name}` | `{module}` | {', '.join(params) or '-'} | {_summary(cls.__doc__)} |")
    return "\n".join(rows) + "\n"


def _MODULE_TREE() -> str:
    lines = ["```text"]
    for path in sorted(PACKAGE.rglob("*.py"), key=lambda p: (p.parent != PACKAGE, p.parent.as_posix(), p.name != "__init__.py", p.name)):
        relative = path.relative_to(PACKAGE.parent).as_posix()
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        first = " ".join(doc.strip().split("\n\n", 1)[0].split())
        first = first.split(". ")[0].rstrip(".")
        lines.append(f"{relative:<40} {first}")
    lines.append("```")
    return "\n".join(lines) + "\n"
