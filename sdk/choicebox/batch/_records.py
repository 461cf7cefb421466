"""Per-row records: what the metrics need of a graded row, small enough to cross process pipes."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from choicebox._errors import (
    BatchError,
    WireFormatError,
)
from choicebox._modes import COMPONENTS
from choicebox._rollout import response_text
from choicebox._wire import question_from_prompt
from choicebox.metrics._categories import MISSING_CATEGORY
from choicebox.metrics._fields import _MISSING, PREVIEW_CHARS, TASK_INDEX_KEY, _lookup

# --- per-row records: what the metrics need of a graded row -----------------------------------


class RowRecord(NamedTuple):
    """What the metrics keep of one output row; small, so workers can send it back cheaply."""

    error: str | None
    uuid: str | None
    task: int | str | None
    reward: float
    extracted: str | None
    components: tuple[float | None, ...]
    failure: str | None
    preview: str
    categories: tuple[str, ...]


def _task_key(row: Mapping[str, Any]) -> int | str | None:
    """``_ng_task_index``, else ``uuid``, else a digest of the prompt text (kept short)."""
    index = row.get(TASK_INDEX_KEY)
    if isinstance(index, int) and not isinstance(index, bool):
        return index
    uuid = row.get("uuid")
    if uuid is not None:
        return f"uuid:{uuid}"
    prompt = question_from_prompt(row.get("responses_create_params"))
    if prompt is None:
        question = row.get("question")
        prompt = question if isinstance(question, str) else None
    if prompt is None:
        return None
    return (
        "prompt:" + hashlib.blake2b(prompt.encode("utf-8", "replace"), digest_size=16).hexdigest()
    )


def _category(row: Mapping[str, Any], field: str) -> str:
    value = _lookup(row, field)
    return MISSING_CATEGORY if value is _MISSING or value is None else str(value)


def _float(value: object) -> float | None:
    if type(value) is float:
        return value
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    return None


def record_of(row: Mapping[str, Any], by: Sequence[str]) -> RowRecord:
    """The record of an output row, as written (a graded row or an error row)."""
    uuid = row.get("uuid")
    uuid_text = None if uuid is None else str(uuid)
    error = row.get("error")
    if error is not None:
        preview = str(error)[:PREVIEW_CHARS]
        return RowRecord(str(error), uuid_text, None, 0.0, None, (), None, preview, ())
    reward = _float(row.get("reward"))
    if reward is None or math.isnan(reward):
        raise BatchError(f"graded row has no numeric reward: {str(row)[:200]}")
    extracted = row.get("extracted_answer")
    failure = row.get("failure_kind")
    preview = ""
    if reward < 1.0:
        try:
            preview = response_text(row.get("response", ""))[:PREVIEW_CHARS]
        except WireFormatError:
            preview = ""
    return RowRecord(
        None,
        uuid_text,
        _task_key(row),
        reward,
        None if extracted is None else str(extracted),
        tuple([_float(row.get(name)) for name in COMPONENTS]),
        None if failure is None else str(failure),
        preview,
        tuple(_category(row, field) for field in by),
    )


