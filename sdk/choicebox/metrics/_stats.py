"""pass@k and seeded bootstrap confidence intervals (overall and per category)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from choicebox._errors import MetricsError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# Below this many attempts pass_at_k divides exact integer binomials: Python's int / int is
# correctly rounded, so the result is the best float there is and equals NeMo Gym's
# ``1 - comb(..)/comb(..)`` bit for bit. Above it the binomials grow to thousands of digits and
# the product form is both faster and accurate to a few ulps.
_EXACT_PASS_AT_K_MAX_N: Final = 1024

# Bootstrap memory budget: at most this many elements per resampling chunk (8 MiB of int64).
_CHUNK_ELEMENTS: Final = 1 << 20
# Multinomial resampling costs O(unique values) per resample; past this many unique values the
# chunked index draws are cheaper.
_MULTINOMIAL_MAX_UNIQUE: Final = 4096


# --------------------------------------------------------------------------------------- pass@k


def _check_int(name: str, value: object) -> int:
    # bool is an int subclass; pass_at_k(True, ...) is always a caller bug.
    if isinstance(value, bool) or not isinstance(value, int):
        raise MetricsError(f"pass_at_k: {name} must be an int, got {type(value).__name__}")
    return value


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k estimate ``1 - C(n-c, k) / C(n, k)`` for ``c`` correct of ``n`` attempts.

    The chance that at least one of ``k`` attempts drawn without replacement is correct
    (Chen et al., 2021). Requires ``n >= 1``, ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    n = _check_int("n", n)
    c = _check_int("c", c)
    k = _check_int("k", k)
    if n < 1:
        raise MetricsError(f"pass_at_k: n must be >= 1 attempts, got n={n}")
    if not 0 <= c <= n:
        raise MetricsError(f"pass_at_k: c must be between 0 and n={n}, got c={c}")
    if not 1 <= k <= n:
        raise MetricsError(f"pass_at_k: k must be between 1 and n={n}, got k={k}")
    return _pass_ratio_complement(n, n - c, k)


def _pass_ratio_complement(n: int, wrong: int, k: int) -> float:
    """``1 - C(wrong, k) / C(n, k)`` for already validated arguments (the hot path)."""
    if wrong < k:  # every k-subset contains a correct attempt
        return 1.0
    if n <= _EXACT_PASS_AT_K_MAX_N:
        return 1.0 - math.comb(wrong, k) / math.comb(n, k)
    # C(n-c, k) / C(n, k) = prod_{i=n-c+1}^{n} (1 - k/i): c factors in [0, 1], no overflow.
    ratio = 1.0
    for i in range(wrong + 1, n + 1):
        ratio *= 1.0 - k / i
    return 1.0 - ratio


# ------------------------------------------------------------------------------------ bootstrap


@attrs.frozen(kw_only=True)
class ConfidenceInterval:
    """A point estimate with a percentile-bootstrap interval around it."""

    value: float
    ci_lower: float
    ci_upper: float
    confidence: float
    resamples: int


@attrs.frozen(kw_only=True)
class CategoryStats:
    """Mean reward of one category with its bootstrap interval."""

    category: str
    n_samples: int
    mean_reward: float
    ci_lower: float
    ci_upper: float


BootstrapMethod = Literal["auto", "binomial", "multinomial", "indices"]


def _bootstrap_means(
    arr: npt.NDArray[np.float64],
    resamples: int,
    rng: np.random.Generator,
    method: BootstrapMethod = "auto",
) -> npt.NDArray[np.float64]:
    """``resamples`` bootstrap means of ``arr``, in O(chunk) memory whatever ``arr.size`` is."""
    import numpy as np  # noqa: PLC0415  only intervals need numpy, not every command that reads metrics

    n = int(arr.size)
    uniq, counts = np.unique(arr, return_counts=True)
    if method == "auto":
        if np.isin(uniq, (0.0, 1.0)).all():
            method = "binomial"
        elif uniq.size <= _MULTINOMIAL_MAX_UNIQUE:
            method = "multinomial"
        else:
            method = "indices"

    if method == "binomial":
        # With 0/1 scores the sum of n resampled values is exactly Binomial(n, p): O(resamples).
        if not np.isin(uniq, (0.0, 1.0)).all():
            raise MetricsError("the binomial bootstrap needs scores that are all 0 or 1")
        ones = int(counts[uniq == 1.0].sum())
        draws = rng.binomial(n, ones / n, size=resamples)
        return draws.astype(np.float64) / n

    out = np.empty(resamples, dtype=np.float64)
    if method == "multinomial":
        # A resample is fully described by how often each unique value was drawn.
        pvals = counts / n
        step = max(1, _CHUNK_ELEMENTS // int(uniq.size))
        for start in range(0, resamples, step):
            stop = min(resamples, start + step)
            tallies = rng.multinomial(n, pvals, size=stop - start)
            out[start:stop] = (tallies @ uniq) / n
        return out

    # Plain index resampling, a few rows of n indices at a time.
    step = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = arr[idx].mean(axis=1)
    return out


def bootstrap_ci(
    scores: Sequence[float] | npt.NDArray[Any],
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> ConfidenceInterval:
    """Percentile-bootstrap interval of the mean of ``scores``; deterministic for a given seed.

    0/1 scores take an exact binomial shortcut, so a million scores cost no more than ten.
    Other scores are resampled in bounded-memory chunks.
    """
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise MetricsError(f"bootstrap_ci: resamples must be a positive int, got {resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise MetricsError(f"bootstrap_ci: confidence must be in (0, 1), got {confidence!r}")
    import numpy as np  # noqa: PLC0415  only intervals need numpy, not every command that reads metrics

    try:
        arr = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise MetricsError(f"bootstrap_ci: scores must be numbers ({exc})") from exc
    if arr.ndim != 1:
        raise MetricsError(f"bootstrap_ci: scores must be one-dimensional, got shape {arr.shape}")
    n = int(arr.size)
    if n == 0:
        raise MetricsError("bootstrap_ci needs at least one score")
    if not np.isfinite(arr).all():
        raise MetricsError("bootstrap_ci: scores must be finite (found NaN or infinity)")

    # fsum: the point estimate should not depend on summation order or drift for large n.
    value = math.fsum(arr.tolist()) / n
    if n == 1 or bool((arr == arr[0]).all()):
        # Every resample is the same: the interval collapses onto the value.
        return ConfidenceInterval(
            value=value, ci_lower=value, ci_upper=value, confidence=confidence, resamples=resamples
        )
    means = _bootstrap_means(arr, resamples, np.random.default_rng(seed))
    alpha = (1.0 - confidence) / 2.0
    lower, upper = np.quantile(means, [alpha, 1.0 - alpha])
    return ConfidenceInterval(
        value=value,
        ci_lower=float(lower),
        ci_upper=float(upper),
        confidence=confidence,
        resamples=resamples,
    )
