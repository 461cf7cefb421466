"""The verify service's replies as NeMo Gym reads them: a graded row is a valid measurement; a
request whose task data is unusable is masked (reward 0, the problems in ``failure_reason``), with
no verdict field it brought along left behind."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ._verdict import VERDICT_KEYS

__all__ = ["INVALID_ROW_KIND", "gym_verify_response", "masked_response"]

INVALID_ROW_KIND: Final = "choicebox:invalid_row"


def gym_verify_response(verdict: dict[str, Any]) -> dict[str, Any]:
    """A graded row's verify response: a verdict is a valid measurement (Gym's meaning)."""
    verdict["mask_sample"] = False
    verdict["failure_kind"] = None
    verdict["failure_reason"] = None
    return verdict


def masked_response(row: Mapping[str, Any], problems: Sequence[str]) -> dict[str, Any]:
    """The verify response for a verify request whose task data is unusable: reward 0, masked,
    the problems in ``failure_reason``. Verdict fields the row brought along (a row graded
    before) are dropped: there is no verdict now."""
    out = {key: value for key, value in row.items() if key not in _DROPPED}
    expected = row.get("expected_answer")
    out["reward"] = 0.0
    out["expected_answer"] = expected if isinstance(expected, str) else ""
    out["extracted_answer"] = None
    out["mask_sample"] = True
    out["failure_kind"] = INVALID_ROW_KIND
    out["failure_reason"] = "; ".join(problems)
    return out


_DROPPED: Final = frozenset({*VERDICT_KEYS, "mask_sample", "failure_kind", "failure_reason"})
