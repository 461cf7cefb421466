"""Reading the fields metrics need from a row: dotted paths, numbers, categories."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

TASK_INDEX_KEY: Final = "_ng_task_index"
ROLLOUT_INDEX_KEY: Final = "_ng_rollout_index"
PREVIEW_CHARS: Final = 200
# The category of a row that lacks the field (or holds null there).
MISSING_CATEGORY: Final = "(missing)"

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


def category_of(row: Mapping[str, Any], field: str) -> str:
    """The row's category by ``field``: its value ``str()``-ed, so ``3`` and ``"3"`` share one."""
    value = _lookup(row, field)
    return MISSING_CATEGORY if value is _MISSING or value is None else str(value)


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


def _shown(value: object) -> str:
    """How an unusable field value is named in an error message."""
    return "missing" if value is _MISSING else f"{type(value).__name__} {value!r}"
