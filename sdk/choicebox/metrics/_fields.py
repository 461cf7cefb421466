"""Reading the fields metrics need from a graded row."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from choicebox._errors import MetricsError

TASK_INDEX_KEY: Final = "_ng_task_index"
PREVIEW_CHARS: Final = 200









# ---------------------------------------------------------------------------- row field helpers

_MISSING: Final = object()


def _lookup(row: Mapping[str, Any], path: str) -> Any:
    """Follow a dotted path (``metadata.category``) through nested mappings; ``_MISSING`` if absent."""
    if path in row:  # a literal key with a dot in its name wins over the nested reading
        return row[path]
    node: Any = row
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _number(value: object) -> float | int | None:
    """The value as a number if it is one (bools count as 0/1, like NeMo Gym's profiler)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        # Rewards are nearly always 0.0 or 1.0: sharing those two objects instead of keeping
        # one float per row keeps per-task memory small over millions of rows.
        return _SHARED_NUMBERS.get(value, value)
    return None


_SHARED_NUMBERS: Final[dict[float, float]] = {0.0: 0.0, 1.0: 1.0}


def _reward_of(row: Mapping[str, Any], key: str = "reward") -> float | int:
    value = _lookup(row, key)
    number = _number(value)
    if number is None:
        shown = "missing" if value is _MISSING else f"{type(value).__name__} {value!r}"
        raise MetricsError(f"row has no numeric {key!r} (it is {shown})")
    return number


