"""A graded row as a metrics record: read off the row as written, or off its input row and verdict.

The rows are read as the metrics read any row (``choicebox.metrics``' ``read_row``); what is the
batch's own is how rollouts are grouped into tasks when a row has no ``_ng_task_index``: by its
``uuid``, else by its prompt, so that a rollout file without indices still gets pass@k.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from choicebox._errors import BatchError, MetricsError
from choicebox._modes import COMPONENTS
from choicebox._wire import question_from_prompt
from choicebox.metrics._fields import TASK_INDEX_KEY, category_of
from choicebox.metrics._records import (
    RowRecord,
    full_reward,
    masked_record,
    read_row,
    response_preview,
)

from ._rows import WRITTEN_FIELDS

if TYPE_CHECKING:
    from ._verdict import Verdict

__all__ = ["RowRecord", "record_of", "record_of_verdict"]

# The fields a graded row's output sets or drops: a category read from one of them must be read
# off the output row, not the input row.
_OUTPUT_FIELDS: Final = WRITTEN_FIELDS


def _task_key(row: Mapping[str, Any]) -> int | str:
    """``_ng_task_index``, else ``uuid``, else a digest of the prompt text (kept short), else
    the one unnamed task ``""``."""
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
        return ""
    return (
        "prompt:" + hashlib.blake2b(prompt.encode("utf-8", "replace"), digest_size=16).hexdigest()
    )


def record_of(row: Mapping[str, Any], by: Sequence[str]) -> RowRecord:
    """The record of an output row as written: a graded row or an error row.

    Raises ``BatchError`` for a row that is neither (no error, no numeric reward): a ``.partial``
    file that ``choicebox grade`` did not write.
    """
    try:
        record = read_row(row, task=_task_key(row), component_names=COMPONENTS, by=by)
    except MetricsError:
        record = None
    if record is None or (
        record.error is None and (record.reward is None or math.isnan(record.reward))
    ):
        raise BatchError(f"graded row has no numeric reward: {str(row)[:200]}")
    return record


@functools.cache
def _reads_output(by: tuple[str, ...]) -> bool:
    """Whether a category by one of these fields is read from what the verdict writes."""
    return any(field.split(".", 1)[0] in _OUTPUT_FIELDS for field in by)


def record_of_verdict(
    row: Mapping[str, Any],
    verdict: Verdict,
    by: Sequence[str],
    output_row: Callable[[], Mapping[str, Any]],
    *,
    preview: bool = True,
) -> RowRecord:
    """``record_of(output_row(), by)``, read off the input ``row`` and its verdict instead: the
    grader writes most rows as their input's bytes plus the verdict's fields, and building and
    reading the output row only to count it would double the cost of counting.

    ``output_row`` is called only when a ``by`` field is one the verdict writes. Without
    ``preview`` a failed row's record has no response preview (it costs a second read of the
    response); a masked row's always has one.
    """
    reward = verdict.reward
    if row.get("mask_sample"):  # the rollout itself failed: the verdict is no measurement
        return masked_record(row, task=_task_key(row), reward=reward)
    uuid = row.get("uuid")
    components = verdict.reward_components
    categories: tuple[str, ...] = ()
    if by:
        if _reads_output(tuple(by)):
            written = output_row()
            categories = tuple([category_of(written, field) for field in by])
        else:
            categories = tuple([category_of(row, field) for field in by])
    failure: str | None = None
    shown = ""
    if not full_reward(reward):  # failed, as the metrics read it
        failure = verdict.failure or None
        if preview:
            shown = response_preview(row)
    return RowRecord(
        None,
        None if uuid is None else str(uuid),
        _task_key(row),
        reward,
        verdict.extracted_answer,
        tuple([components.get(name) for name in COMPONENTS]),
        failure,
        shown,
        categories,
    )
