"""pass@k, seeded bootstrap confidence intervals (overall and per category), and the Wilson
interval of a proportion."""

from __future__ import annotations

import math
import statistics
from array import array
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


def _plain_floats(scores: object) -> list[float] | None:
    """``scores`` as floats when it is a flat sequence of Python numbers, else ``None`` (numpy
    reads it, and says what is wrong with it)."""
    if isinstance(scores, array) and scores.typecode in "dfbBhHiIlLqQ":
        return scores.tolist()
    if not isinstance(scores, list | tuple):
        return None
    if not all(type(x) is float or type(x) is int or type(x) is bool for x in scores):
        return None
    return list(scores)  # ints and bools count, sum and compare as the floats they equal


def _plain_interval(
    scores: list[float], confidence: float, resamples: int
) -> ConfidenceInterval | None:
    """``bootstrap_ci`` of Python floats when it needs no resampling (a single value, constant
    or 0/1 scores), else ``None``."""
    n = len(scores)
    if n == 0:
        raise MetricsError("bootstrap_ci needs at least one score")
    if not all(map(math.isfinite, scores)):
        raise MetricsError("bootstrap_ci: scores must be finite (found NaN or infinity)")
    value = math.fsum(scores) / n
    first = scores[0]
    if scores.count(first) == n:
        return ConfidenceInterval(
            value=value, ci_lower=value, ci_upper=value, confidence=confidence, resamples=resamples
        )
    ones = scores.count(1.0)
    if ones + scores.count(0.0) != n:
        return None
    lower, upper = _binomial_interval(n, ones, confidence)
    return ConfidenceInterval(
        value=value, ci_lower=lower, ci_upper=upper, confidence=confidence, resamples=resamples
    )


# Binomial probabilities beyond this many standard deviations from the mode (plus a margin for
# small n) are below 1e-40 and are left out of the quantile search: it costs O(sqrt(n)).
_BINOMIAL_TAIL_SDS: Final = 14
_BINOMIAL_TAIL_MARGIN: Final = 40


def _binomial_interval(n: int, ones: int, confidence: float) -> tuple[float, float]:
    """The percentile-bootstrap interval of the mean of ``ones`` ones among ``n`` 0/1 scores,
    exactly: the ``alpha`` and ``1 - alpha`` quantiles of Binomial(n, ones/n), over n.

    The quantile is the smallest ``k`` with P(X <= k) >= q (what the percentile of ever more
    resamples tends to). The probabilities are built by the ratio recurrence outwards from the
    mode, relative to it (nothing overflows or needs lgamma), and normalised by their sum.
    """
    p = ones / n
    alpha = (1.0 - confidence) / 2.0
    mode = min(n, int((n + 1) * p))
    reach = _BINOMIAL_TAIL_MARGIN + int(_BINOMIAL_TAIL_SDS * math.sqrt(n * p * (1.0 - p)))
    low, high = max(0, mode - reach), min(n, mode + reach)
    odds = p / (1.0 - p)
    weights = [0.0] * (high - low + 1)
    weights[mode - low] = 1.0
    weight = 1.0
    for k in range(mode, high):  # P(k+1) / P(k) = (n - k) / (k + 1) * p / (1 - p)
        weight *= (n - k) / (k + 1) * odds
        weights[k + 1 - low] = weight
    weight = 1.0
    for k in range(mode, low, -1):  # P(k-1) / P(k) = k / (n - k + 1) * (1 - p) / p
        weight *= k / (n - k + 1) / odds
        weights[k - 1 - low] = weight
    total = math.fsum(weights)
    targets = [alpha * total, (1.0 - alpha) * total]
    quantiles: list[int] = []
    cumulative = 0.0
    for k, weight in enumerate(weights, start=low):
        cumulative += weight
        while targets and cumulative >= targets[0]:
            targets.pop(0)
            quantiles.append(k)
        if not targets:
            break
    while len(quantiles) < 2:  # rounding left the last target a hair above the sum
        quantiles.append(high)
    return quantiles[0] / n, quantiles[1] / n


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

    0/1 scores (every reward of the built-in modes) need no resampling: the mean of a resample is
    exactly Binomial(n, p)/n, so the interval is read off that distribution's quantiles, the
    limit of infinitely many resamples (``resamples`` and ``seed`` do not change it), in pure
    Python: counting a file's accuracy does not import numpy. Other scores are resampled in
    bounded-memory chunks.
    """
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise MetricsError(f"bootstrap_ci: resamples must be a positive int, got {resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise MetricsError(f"bootstrap_ci: confidence must be in (0, 1), got {confidence!r}")
    plain = _plain_floats(scores)
    if plain is not None:
        interval = _plain_interval(plain, confidence, resamples)
        if interval is not None:
            return interval
    import numpy as np  # noqa: PLC0415  only intervals of graded scores need numpy

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
    ones = int(np.count_nonzero(arr == 1.0))
    if ones + int(np.count_nonzero(arr == 0.0)) == n:
        lower, upper = _binomial_interval(n, ones, confidence)
        return ConfidenceInterval(
            value=value, ci_lower=lower, ci_upper=upper, confidence=confidence, resamples=resamples
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


# ------------------------------------------------------------------------------- Wilson score


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of the proportion ``successes / n`` (``choicebox grade
    --judge-sample``: how often a judge agrees with the rules).

    Wilson's rather than the normal approximation's: it stays inside [0, 1] and keeps its
    coverage near 0 and 1 and for small ``n``, where agreement rates of a good judge live.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise MetricsError(f"wilson_interval: n must be a positive int, got {n!r}")
    if isinstance(successes, bool) or not isinstance(successes, int) or not 0 <= successes <= n:
        raise MetricsError(f"wilson_interval: successes must be an int from 0 to n={n}, got {successes!r}")
    if not 0.0 < confidence < 1.0:
        raise MetricsError(f"wilson_interval: confidence must be between 0 and 1, got {confidence!r}")
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2.0)
    p = successes / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n)) / (1.0 + z2n)
    # The exact ends: at 0 successes the interval starts at 0, at n it ends at 1 (no rounding off).
    lower = 0.0 if successes == 0 else max(0.0, centre - half)
    upper = 1.0 if successes == n else min(1.0, centre + half)
    return lower, upper
