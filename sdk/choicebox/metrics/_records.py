"""What the metrics keep of one row, and the one way a row is read into it.

A graded row (a verify response, a line of ``choicebox grade`` output, a row of one's own) and an
error row both become a :class:`RowRecord`; the accumulator only ever sees records. How rows are
grouped into tasks is the caller's to say (``read_row``'s ``task``): the library takes
``_ng_task_index`` or a key it is given, ``choicebox grade`` falls back to the uuid and the prompt.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Final, NamedTuple

from choicebox._errors import MetricsError
from choicebox._rollout import response_excerpt

from ._fields import (
    _SHARED_NUMBERS,
    PREVIEW_CHARS,
    TASK_INDEX_KEY,
    _lookup,
    _number,
    _shown,
    category_of,
)


class RowRecord(NamedTuple):
    """What the metrics keep of one row; small, so workers can send it back cheaply.

    * ``error``: the row's ``error``, if it has one. An error row without a numeric reward is
      counted (rows, errors, failures) but not graded.
    * ``task``: the task the rollout belongs to, for pass@k (``None``: none).
    * ``reward``: ``None`` when the row has no numeric reward.
    * ``components`` and ``categories``: one entry per component name and per ``by`` field of
      the accumulator; empty for a row without a reward.
    * ``failure``: the failure the row names itself (a verdict's ``grading_failure``, else
      Gym's ``failure_kind``); a failed row that names none counts as an error, a missing answer
      or a wrong answer.
    * ``preview``: the start of the response, for failed rows only.
    * ``masked``: the row's ``mask_sample`` is set: its reward is no valid measurement (Gym's
      meaning), so it is counted in the coverage but in no score.
    """

    error: str | None
    uuid: str | None
    task: int | str | None
    reward: float | int | None
    extracted: Hashable | None
    components: tuple[float | int | None, ...]
    failure: str | None
    preview: str
    categories: tuple[str, ...]
    masked: bool = False


# Failed rows kept as exemplars per failure kind (with their previews), unless told otherwise.
EXEMPLARS_PER_KIND: Final = 3


def failure_kind(record: RowRecord) -> str:
    """The failure kind a failed row is counted under: the one it names, else an error, a missing
    answer or a wrong answer."""
    return record.failure or (
        "error"
        if record.error is not None
        else "no_answer"
        if record.extracted is None
        else "wrong_answer"
    )


def full_reward(reward: float | None) -> bool:
    """Whether a reward is full (at least 1): the one test of "passed" every reader of rows and
    verdicts uses. NaN and no reward are not: they never earned anything."""
    return reward is not None and reward >= 1


def failed(record: RowRecord) -> bool:
    """Whether the row failed: an error, a masked row (its reward does not count), or no full
    reward."""
    return record.error is not None or record.masked or not full_reward(record.reward)


def read_row(
    row: Mapping[str, Any],
    *,
    task: int | str | None,
    component_names: Sequence[str] = (),
    by: Sequence[str] = (),
    reward_key: str = "reward",
    need_reward: bool = True,
) -> RowRecord:
    """The record of ``row``, grouped into ``task``.

    A row that carries a verdict (``grading_failure``, or ``failure_kind`` in files written
    before it) and a reward is judged by its verdict alone: an ``error`` field it brought along
    from its input does not fail it.

    Raises ``MetricsError`` for a row that is no error row and has no numeric reward, unless
    ``need_reward`` is false (failure analysis alone needs none) or the row is masked.
    """
    # The hot path of every worker: plain dict and type checks before the general ones.
    get = row.get
    raw_error = get("error")
    value = row[reward_key] if reward_key in row else _lookup(row, reward_key)
    reward = _SHARED_NUMBERS.get(value, value) if type(value) is float else _number(value)
    if raw_error is None or (
        reward is not None and ("grading_failure" in row or "failure_kind" in row)
    ):
        error = None
    else:
        error = str(raw_error)
    # Gym's test is truthiness (`vr.get("mask_sample")`), so is this one.
    masked = bool(get("mask_sample"))
    if masked:
        return masked_record(row, task=task, reward=reward, error=error)
    if reward is None and error is None and need_reward:
        raise MetricsError(f"row has no numeric {reward_key!r} (it is {_shown(value)})")
    extracted = get("extracted_answer")
    if extracted is not None and type(extracted) is not str and not isinstance(extracted, Hashable):
        extracted = repr(extracted)  # majority voting needs hashable answers
    uuid = get("uuid")
    if uuid is not None and type(uuid) is not str:
        uuid = str(uuid)
    components: tuple[float | int | None, ...] = ()
    categories: tuple[str, ...] = ()
    if reward is not None:
        components = tuple([_number(get(name)) for name in component_names])
        if by:
            categories = tuple([category_of(row, field) for field in by])
    if error is None and full_reward(reward):
        return RowRecord(None, uuid, task, reward, extracted, components, None, "", categories)
    return RowRecord(
        error,
        uuid,
        task,
        reward,
        extracted,
        components,
        _named_failure(row, error),
        response_preview(row, error),
        categories,
    )


def masked_record(
    row: Mapping[str, Any],
    *,
    task: int | str | None,
    reward: float | int | None,
    error: str | None = None,
) -> RowRecord:
    """The record of a row whose ``mask_sample`` is set: counted and failed, scored nowhere.

    Why it is masked is Gym's ``failure_kind`` (an infrastructure failure, or choicebox's own
    ``choicebox:invalid_row``), not a verdict's.
    """
    kind = row.get("failure_kind")
    uuid = row.get("uuid")
    return RowRecord(
        error,
        None if uuid is None else str(uuid),
        task,
        reward,
        None,
        (),
        kind if isinstance(kind, str) and kind else "masked",
        response_preview(row, error),
        (),
        True,
    )


def _named_failure(row: Mapping[str, Any], error: str | None) -> str | None:
    """The failure a failed row names: its verdict's, else what Gym's own fields say."""
    for verdict_field in ("grading_failure", "failure_kind"):
        # A verdict says it all, ``None`` included; failure_kind is Gym's, and choicebox's own
        # verdict field in files written before grading_failure.
        if verdict_field in row:
            kind = row[verdict_field]
            return kind if isinstance(kind, str) and kind else None
    failure = row.get("failure")
    if isinstance(failure, str) and failure:
        return failure
    if error is not None:
        return None  # an error row is an error, whatever else it says
    for holder in (row, row.get("scoring_details")):
        if isinstance(holder, Mapping):
            category = holder.get("error_category")
            if isinstance(category, str) and category:
                return category
    if row.get("infra_error"):
        return "infra_error"
    if row.get("timeout"):
        return "timeout"
    response = row.get("response")
    if isinstance(response, Mapping) and response.get("error") is not None:
        return "timeout" if "timeout" in str(response["error"]).lower() else "infra_error"
    return None


def response_preview(row: Mapping[str, Any], error: str | None = None) -> str:
    """The start of what the model wrote (or, for an error row, of the error)."""
    if "response" in row:
        return response_excerpt(row["response"], PREVIEW_CHARS) or ""
    for key in ("response_preview", "output_text", "text"):
        value = row.get(key)
        if isinstance(value, str):
            return value[:PREVIEW_CHARS]
    return "" if error is None else error[:PREVIEW_CHARS]


def library_task(row: Mapping[str, Any], task_key: str | None, *, strict: bool) -> int | str | None:
    """``_ng_task_index`` when the row has one, else ``task_key``.

    ``strict``: an index that is no int is an error (grouping by it would be wrong); otherwise it
    is passed over (failure analysis only reports it).
    """
    index = row.get(TASK_INDEX_KEY)
    if index is None:
        return task_key
    if isinstance(index, bool) or not isinstance(index, int):
        if strict:
            raise MetricsError(f"{TASK_INDEX_KEY} must be an int, got {type(index).__name__}")
        return task_key
    return index
