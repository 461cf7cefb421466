"""JSON in a response: the last JSON object it holds, and what a JSON Schema says of it.

One reader for ``choicebox.scoring.extract_json``/``validate_json_schema`` and the ``json_answer``
step kind, so that a scorer and a mode agree on which object a response gave. The object is found
by trying each ``{"`` (or ``{}``) in turn with the standard decoder and stepping past every object it decodes:
objects in a fenced block and bare ones are found alike, nested ones are part of their outermost
object, and the last one wins. Linear in practice; a bounded budget of characters that failed
decodes may scan keeps a text built to defeat it (thousands of unterminated ``{"`` openings) from
costing quadratic time.

Schemas are checked and run by the ``jsonschema`` library (its validator for the schema's own
``$schema``, Draft 2020-12 when it names none), imported on first use: a mode that reads no JSON
never pays its import.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import orjson

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["FoundObject", "compiled_schema", "last_json_object", "schema_problem", "schema_problems"]

# Failed decodes may scan, in all, this many characters per character of text (plus a floor):
# a real response fails a few short decodes ("{x}" in LaTeX); an adversarial one stops here.
_SCAN_BUDGET_PER_CHAR: Final = 4
_SCAN_BUDGET_FLOOR: Final = 1 << 16
# How many schema violations a verdict or a score lists: the first few say what is wrong.
_SHOWN_PROBLEMS: Final = 3


class FoundObject(NamedTuple):
    """A JSON object found in a text: its value and where it stands (``text[start:end]``)."""

    value: dict[str, Any]
    start: int
    end: int


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are Python's extension, not JSON: an object holding one is not JSON.
    raise ValueError(f"{name} is not JSON")


_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)


# Where an object may start: "{" then a key's quote or the closing brace. LaTeX's "\\frac{1}{2}"
# and prose braces are passed over without a decode.
_OPENING: Final = re.compile(r'\{\s*+["}]')
# A decode is tried on a window of the text from its "{": the decoder's error path counts lines
# up to the failure (so failing on the whole rest of a long text costs the whole rest), and
# answers are short. A decode that fails in a window cut short is tried again on the whole rest,
# once, at the price of the whole rest: the budget bounds how often.
_WINDOW: Final = 1 << 16


def last_json_object(text: str) -> FoundObject | None:
    """The last top-level JSON object of ``text`` (see the module docstring), ``None`` if none."""
    found: FoundObject | None = None
    budget = _SCAN_BUDGET_PER_CHAR * len(text) + _SCAN_BUDGET_FLOOR
    at = 0
    while budget > 0 and (opening := _OPENING.search(text, at)) is not None:
        start = opening.start()
        decoded, cost = _decode_at(text, start)
        budget -= cost
        if decoded is None:
            at = start + 1
            continue
        found = FoundObject(decoded[0], start, start + decoded[1])
        at = found.end
    return found


def _decode_at(text: str, start: int) -> tuple[tuple[dict[str, Any], int] | None, int]:
    """The object at ``text[start]`` with its length, or ``None``; and the characters it cost."""
    window = text[start : start + _WINDOW]
    try:
        value, end = _DECODER.raw_decode(window)
    except json.JSONDecodeError as exc:
        if start + len(window) >= len(text):
            return None, len(window) + exc.pos
        rest = text[start:]  # the object may run on past the window: once, on the whole rest
        try:
            value, end = _DECODER.raw_decode(rest)
        except (ValueError, RecursionError):
            return None, len(window) + 2 * len(rest)
        return (value, end), len(window) + end
    except (ValueError, RecursionError):  # a constant, an integer of 5,000 digits, deep nesting
        return None, len(window)
    return (value, end), end


@functools.lru_cache(maxsize=64)
def _validator(canonical: bytes) -> Validator:
    from jsonschema.validators import validator_for  # noqa: PLC0415  ~90 ms, only for modes and scorers that read JSON

    schema = orjson.loads(canonical)
    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _canonical(schema: Mapping[str, Any]) -> bytes:
    # The cache key: one schema written with its keys in another order is the same schema.
    return orjson.dumps(schema, default=_plain, option=orjson.OPT_SORT_KEYS)


def _plain(value: object) -> object:
    # A read-only view of a schema (a step's) is written as the mapping it shows.
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def schema_problem(schema: object) -> str | None:
    """Why ``schema`` is not a usable JSON Schema, or ``None`` when it is one."""
    from jsonschema.exceptions import SchemaError  # noqa: PLC0415  see _validator

    if not isinstance(schema, Mapping):
        return f"a JSON Schema is an object (a mapping), not {type(schema).__name__}"
    try:
        _validator(_canonical(schema))
    except orjson.JSONEncodeError as exc:
        return f"the schema is not JSON: {exc}"
    except SchemaError as exc:
        return f"not a valid JSON Schema: {exc.message} @ {_path(exc.absolute_path)}"
    return None


def compiled_schema(schema: Mapping[str, Any]) -> Validator:
    """The validator of ``schema`` (a schema ``schema_problem`` accepts), built once per schema:
    a step holds it, so that grading a row serialises no schema."""
    return _validator(_canonical(schema))


def schema_problems(instance: dict[str, Any], schema: Mapping[str, Any] | Validator) -> list[str]:
    """What is wrong with ``instance`` under ``schema`` (a schema ``schema_problem`` accepts, or
    its ``compiled_schema``), as ``message @ $.path`` lines, the first few by position; empty
    when it is valid."""
    validator = compiled_schema(schema) if isinstance(schema, Mapping) else schema
    errors = sorted(validator.iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{error.message} @ {_path(error.absolute_path)}" for error in errors[:_SHOWN_PROBLEMS]]


def _path(parts: Any) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)
