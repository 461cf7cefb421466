"""The ``json_answer`` step kind: the letter under a key of the response's last JSON object, once
that object is valid under the JSON Schema the mode names.

Structured-output prompts ask for ``{"answer": "B"}`` (often with a reason beside it). The object
is found as ``choicebox.scoring.extract_json`` finds it (``choicebox._json``: fenced or bare, the
last one wins), checked against the mode's schema with the ``jsonschema`` library, and its value
read as every payload-reading kind reads a payload. An object the schema rejects is recorded
(``no_answer``, the schema's complaints in the detail) and the chain goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import attrs

from choicebox._errors import ParameterError
from choicebox._json import compiled_schema, last_json_object, schema_problem, schema_problems
from choicebox._letters import match_option_text
from choicebox.find._payload import read_payload

from ._api import Context, Extraction, Leniency, _answer, _from_payload, register_step_kind

__all__ = ["JsonAnswer"]


def _check_schema(instance: Any, attribute: attrs.Attribute[Any], value: Mapping[str, Any]) -> None:
    problem = schema_problem(value)
    if problem is not None:
        raise ParameterError("schema", problem)


def _frozen_schema(value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ParameterError("schema", f"a JSON Schema is a mapping, not {type(value).__name__}")
    return MappingProxyType(dict(value))


def _check_key(instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not value:
        raise ParameterError("key", "needs the name of the key that holds the answer")


@register_step_kind("json_answer")
@attrs.frozen(kw_only=True)
class JsonAnswer:
    """The value under ``key`` of the last JSON object in the response, once the object is valid
    under ``schema`` (a JSON Schema, written in the rule file; checked when the file loads).

    The value is read as a payload: ``payload: strict`` (the default: a lone letter, or an
    option's exact text) or ``lenient`` (wrappers, ``option B``, lists as hedges). An object the
    schema rejects, or a value that is no string, is no answer and the chain goes on.
    """

    # A mapping view: the rule file's schema cannot be changed through the step. Left out of the
    # hash, which a mapping has not; steps compare equal by it all the same.
    schema: Mapping[str, Any] = attrs.field(converter=_frozen_schema, validator=_check_schema, hash=False)
    key: str = attrs.field(default="answer", validator=_check_key)
    payload: Leniency = "strict"
    # The schema's validator (a ``jsonschema`` Validator), built once; typed Any because the
    # registry resolves the field types at run time and jsonschema is imported only on use.
    _compiled: Any = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_compiled", compiled_schema(self.schema))

    def __call__(self, context: Context) -> Extraction | None:
        if "{" not in context.text:
            return None
        found = last_json_object(context.text)
        if found is None:
            return None
        problems = schema_problems(found.value, self._compiled)
        if problems:
            return Extraction(
                None, failure="no_answer", position=found.start, final=False,
                detail=f"the JSON object does not match the mode's schema: {'; '.join(problems)}",
            )  # fmt: skip
        value = found.value.get(self.key)
        detail = f"the JSON object's {self.key!r}"
        if not isinstance(value, str):
            return Extraction(
                None, failure="no_answer", position=found.start, final=False,
                detail=f"{detail} is {'missing' if value is None else 'no string'}",
            )  # fmt: skip
        if self.payload == "lenient":
            return _from_payload(read_payload(value, context.options), position=found.start, clean=True, detail=detail)
        stripped = value.strip()
        if len(stripped) == 1 and stripped.isalpha() and stripped.isupper():
            return _answer(context, stripped, position=found.start, clean=True, detail=detail)
        by_text = match_option_text(stripped, context.options, punctuation=False, numeric=False)
        if by_text is not None:
            return Extraction(by_text, position=found.start, clean=True, detail=f"{detail} (option text)")
        return Extraction(
            None, failure="no_answer", position=found.start, final=False,
            detail=f"{detail} is {value[:40]!r}, no option letter",
        )  # fmt: skip
