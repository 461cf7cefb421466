"""Writing a verdict into its row: the verify-response row, and the batch's splice of the verdict's
fields onto the input line's own bytes (with the cache of encoded suffixes, keyed by
``verdict_key``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

from ._verdict import VERDICT_KEYS, Verdict, verdict_key

__all__ = ["WRITTEN_FIELDS", "append_spliced", "output_row"]


def output_row(row: Mapping[str, Any], verdict: Verdict) -> dict[str, Any]:
    """The verify-response row: the input row with the verdict's fields, and ``options_source``
    when the options were read from the prompt."""
    out = verdict.to_wire(row)
    if "options" not in row:
        out["options_source"] = "prompt"
    else:
        out.pop("options_source", None)
    return out


# The fields a verdict writes (``Verdict.wire_fields`` and ``options_source``): a row that has
# any of them was graded before, or is a verify response, and is spliced only if they agree.
WRITTEN_FIELDS: Final = frozenset({*VERDICT_KEYS, "options_source"})
# Of those, the ones a data row has (its gold answer and its mode), whose values grading keeps.
_DATA_FIELDS: Final = frozenset({"expected_answer", "grading_mode"})
_MAX_SUFFIXES: Final = 4096


def append_spliced(
    parts: list[bytes | memoryview],
    raw: bytes,
    row: dict[str, Any],
    verdict: Verdict,
    suffixes: dict[tuple[Any, ...], bytes],
) -> bool:
    """Append the output line as the input's own bytes with the verdict's fields appended;
    ``False`` (nothing appended) when that would not be the output row.

    Re-encoding a 5 KB rollout costs more than grading it. The output row is the input row with
    the verdict's fields set: fields the row lacks go at its end, and fields it already has with
    the same value (a data row's ``expected_answer`` and ``grading_mode``) stay where they are,
    so the input's bytes can be kept. Not when that does not hold: a re-graded row with a
    different verdict, ``options_source`` on a row with options (the output drops it), a line
    that does not end with its object.

    The appended bytes depend on the verdict's fields and on which of them the row has, and few
    verdicts differ in those (a mode's verdicts on a file are mostly "no answer", "correct" and
    "answered X, expected Y"), so they are encoded once per such verdict, in ``suffixes``.
    """
    shared = row.keys() & WRITTEN_FIELDS
    from_prompt = "options" not in row
    if not shared <= _DATA_FIELDS:  # graded before, or a verify response
        fields = _unshared_fields(row, verdict, shared, from_prompt)
        if fields is None:
            return False
        suffix = _suffix(fields)
    else:
        if "grading_mode" in shared and row["grading_mode"] != verdict.mode:
            return False  # the row's own mode, overridden: its field changes in place
        if "expected_answer" in shared and row["expected_answer"] != verdict.expected_answer:
            return False
        # Everything the appended fields are made of: the verdict's (from its wire schema, so a
        # new verdict field is in the key by construction) and which fields the row shares.
        key = (verdict_key(verdict), from_prompt, "expected_answer" in shared, "grading_mode" in shared)
        cached = suffixes.get(key)
        if cached is None:
            fields = _unshared_fields(row, verdict, shared, from_prompt)
            assert fields is not None  # the shared fields were compared above
            cached = _suffix(fields)
            if len(suffixes) >= _MAX_SUFFIXES:
                suffixes.clear()  # details that quote the output (a value) make many of them
            suffixes[key] = cached
        suffix = cached
    end = len(raw)
    while end and raw[end - 1] in _BLANK_BYTES:
        end -= 1
    if not end or raw[end - 1] != _CLOSE_BRACE:
        return False
    if suffix == b"}\n":
        parts.append(memoryview(raw)[:end])
        parts.append(b"\n")
        return True
    parts.append(memoryview(raw)[: end - 1])
    parts.append(b"," + suffix if row else suffix)
    return True


def _suffix(fields: dict[str, Any]) -> bytes:
    """What follows the input's bytes, less its closing brace: the verdict's ``fields`` encoded
    without their opening brace (the input object's own one stands for it), and the newline."""
    return orjson.dumps(fields)[1:] + b"\n" if fields else b"}\n"


_BLANK_BYTES: Final = frozenset(b" \t\r\n\x0b\x0c")
_CLOSE_BRACE: Final = ord("}")


def _unshared_fields(
    row: dict[str, Any], verdict: Verdict, shared: set[str], from_prompt: bool
) -> dict[str, Any] | None:
    """The verdict's fields the row does not have with the same value; ``None`` when the row has
    one with another value (or ``options_source`` beside its options), which splicing cannot
    write."""
    if "options_source" in shared and not from_prompt:
        return None  # the output drops it: a key removed is no append
    fields = verdict.wire_fields()
    if from_prompt:
        fields["options_source"] = "prompt"
    for key in shared:
        value = row[key]
        if type(value) is not type(fields[key]) or value != fields[key]:
            return None
        del fields[key]
    return fields
