"""Accuracy per category of a field, with intervals."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from choicebox._errors import MetricsError

from ._fields import _MISSING, _lookup, _reward_of
from ._stats import bootstrap_ci

MISSING_CATEGORY: Final = "(missing)"









# ----------------------------------------------------------------------- category breakdown


@attrs.frozen(kw_only=True)
class CategoryStats:
    """Mean reward of one category with its bootstrap interval."""

    category: str
    n_samples: int
    mean_reward: float
    ci_lower: float
    ci_upper: float


def category_breakdown(
    results: Iterable[Mapping[str, Any]],
    field: str,
    *,
    reward_key: str = "reward",
    resamples: int = 10_000,
    seed: int = 0,
) -> list[CategoryStats]:
    """Mean reward per value of ``field`` (a dotted path), sorted by category name.

    Rows lacking the field (or holding null there) fall into ``"(missing)"``; other values are
    ``str()``-ed so ``3`` and ``"3"`` share a category.
    """
    groups: dict[str, list[float]] = {}
    for i, row in enumerate(results):
        raw = _lookup(row, field)
        category = MISSING_CATEGORY if raw is _MISSING or raw is None else str(raw)
        try:
            reward = _reward_of(row, reward_key)
        except MetricsError as exc:
            raise MetricsError(f"category_breakdown: row {i}: {exc}") from None
        groups.setdefault(category, []).append(float(reward))
    stats = []
    for category in sorted(groups):
        ci = bootstrap_ci(groups[category], resamples=resamples, seed=seed)
        stats.append(
            CategoryStats(
                category=category,
                n_samples=len(groups[category]),
                mean_reward=ci.value,
                ci_lower=ci.ci_lower,
                ci_upper=ci.ci_upper,
            )
        )
    return stats


