"""Failure analysis: why rows earned no reward, counted per kind with a few exemplars."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from choicebox._errors import MetricsError
from choicebox.metrics._fields import PREVIEW_CHARS, TASK_INDEX_KEY

from ._fields import _number

# ------------------------------------------------------------------------- failure analysis


def _failure_category(row: Mapping[str, Any]) -> str:
    failure = row.get("failure")
    if isinstance(failure, str) and failure:
        return failure  # choicebox verdicts name their own failure
    if row.get("error") is not None:
        return "error"
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
    if row.get("extracted_answer") is None:
        return "no_answer"
    return "wrong_answer"


def _preview(row: Mapping[str, Any]) -> str:
    for key in ("response_preview", "output_text", "text"):
        value = row.get(key)
        if isinstance(value, str):
            return value[:PREVIEW_CHARS]
    return ""


def _is_failure(row: Mapping[str, Any]) -> bool:
    if row.get("error") is not None:
        return True
    reward = _number(row.get("reward"))
    # A row without a usable reward never earned one: count it as failed, not skipped.
    return reward is None or reward < 1 or math.isnan(reward)


class FailureAccumulator:
    """Streams rows into ``failure_analysis.json``: counts per category plus a few exemplars.

    Memory is bounded by the number of categories times ``max_exemplars``.
    """

    __slots__ = ("_counts", "_exemplar_counts", "_exemplars", "_max_exemplars", "_total")

    def __init__(self, *, max_exemplars: int = 3) -> None:
        if isinstance(max_exemplars, bool) or not isinstance(max_exemplars, int):
            raise MetricsError("max_exemplars must be an int")
        if max_exemplars < 0:
            raise MetricsError(f"max_exemplars must be >= 0, got {max_exemplars}")
        self._max_exemplars = max_exemplars
        self._total = 0
        self._counts: Counter[str] = Counter()
        self._exemplar_counts: Counter[str] = Counter()
        self._exemplars: list[dict[str, Any]] = []

    def add(self, row: Mapping[str, Any], index: int) -> None:
        """Record one row; ``index`` is reported as the exemplar's ``problem_idx``."""
        self._total += 1
        if not _is_failure(row):
            return
        category = _failure_category(row)
        self._counts[category] += 1
        if self._exemplar_counts[category] < self._max_exemplars:
            self._exemplar_counts[category] += 1
            uuid = row.get("uuid")
            self._exemplars.append(
                {
                    "category": category,
                    "problem_idx": index,
                    "uuid": None if uuid is None else str(uuid),
                    "response_preview": _preview(row),
                }
            )

    def result(self) -> dict[str, Any]:
        total = self._total
        failures = sum(self._counts.values())
        # Most frequent first, ties by name, so the file reads as a ranking.
        ranked = sorted(self._counts.items(), key=lambda item: (-item[1], item[0]))
        return {
            "total_failures": failures,
            "failure_rate": failures / total if total else 0.0,
            "categories": {name: {"count": count, "rate": count / total} for name, count in ranked},
            "exemplars": [dict(e) for e in self._exemplars],
        }


def failure_analysis(
    rows: Iterable[Mapping[str, Any]], *, max_exemplars: int = 3
) -> dict[str, Any]:
    """One-shot :class:`FailureAccumulator`; ``problem_idx`` is ``_ng_task_index`` or position."""
    acc = FailureAccumulator(max_exemplars=max_exemplars)
    for i, row in enumerate(rows):
        task_index = row.get(TASK_INDEX_KEY)
        if isinstance(task_index, bool) or not isinstance(task_index, int):
            task_index = i
        acc.add(row, task_index)
    return acc.result()
