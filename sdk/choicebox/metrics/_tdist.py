"""Student's t quantiles, for the t intervals NeMo Gym puts in its repeat-level metrics.

Gym calls ``scipy.stats.t.interval(0.95, df, loc, scale)``; choicebox does not depend on scipy,
so the quantile is computed here: Newton's method on the t distribution's tail, which is a
regularized incomplete beta function evaluated by its continued fraction. The result agrees with
scipy's to about 1e-15 relative (``tests/serve/test_gym_metrics.py`` checks it against recorded values).
"""

from __future__ import annotations

import math
from typing import Final

_EPS: Final = 1e-16
_TINY: Final = 1e-300
_MAX_TERMS: Final = 10_000

# Stirling-series coefficients B_2k / (2k (2k - 1)) of ln Γ(z).
_STIRLING: Final = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)


def _log_gamma_ratio(a: float) -> float:
    """``ln Γ(a + 1/2) - ln Γ(a)`` without the cancellation ``lgamma`` differences suffer for
    large ``a`` (both terms grow like ``a ln a`` while their difference is ``½ ln a``)."""
    if a < 12:
        return math.lgamma(a + 0.5) - math.lgamma(a)
    b = a + 0.5
    # Stirling: ln Γ(z) = (z - ½) ln z - z + ½ ln 2π + Σ c_k z^(1-2k). The leading terms of the
    # difference reduce to a·ln(1 + 1/(2a)) + ½ ln a - ½; log1p keeps the first one exact.
    total = a * math.log1p(0.5 / a) + 0.5 * math.log(a) - 0.5
    for k, c in enumerate(_STIRLING, start=1):
        power = 1 - 2 * k
        total += c * (b**power - a**power)
    return total


def _log_beta_half(a: float) -> float:
    """``ln B(a, 1/2)``."""
    return 0.5 * math.log(math.pi) - _log_gamma_ratio(a)


def _beta_fraction(x: float, a: float, b: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_TERMS):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def _upper_tail(t: float, df: float) -> float:
    """P(T > t) for t >= 0: half the regularized incomplete beta I_x(df/2, 1/2) at
    x = df / (df + t²)."""
    a, b = 0.5 * df, 0.5
    ratio = t * t / df
    x = 1.0 / (1.0 + ratio)
    one_minus_x = ratio / (1.0 + ratio)
    # ln x = -ln(1 + t²/df): log1p keeps it exact when df is large and x is close to 1.
    log_front = -a * math.log1p(ratio) + b * math.log(one_minus_x) - _log_beta_half(a)
    if x < (a + 1.0) / (a + b + 2.0):
        incomplete = math.exp(log_front) * _beta_fraction(x, a, b) / a
    else:
        incomplete = 1.0 - math.exp(log_front) * _beta_fraction(one_minus_x, b, a) / b
    return 0.5 * incomplete


def _density(t: float, df: float) -> float:
    log_norm = -0.5 * math.log(df) - _log_beta_half(0.5 * df)
    return math.exp(log_norm - 0.5 * (df + 1.0) * math.log1p(t * t / df))


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t distribution with ``df`` degrees of freedom."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if not df > 0:
        raise ValueError(f"df must be positive, got {df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    if df == 1.0:
        return math.tan(math.pi * (p - 0.5))
    if df == 2.0:
        return (2.0 * p - 1.0) / math.sqrt(2.0 * p * (1.0 - p))
    t = _cornish_fisher(p, df)
    if df >= _SERIES_MIN_DF:
        return t  # the series' first omitted term is below 1e-16 relative here
    tail = 1.0 - p
    for _ in range(100):
        step = (_upper_tail(t, df) - tail) / _density(t, df)
        t += step
        if abs(step) <= 4 * _EPS * abs(t):
            break
    return t


# From here on the Cornish-Fisher series (terms to 1/df⁴) is more accurate than the tail
# integral, whose continued fraction converges slowly when df/(df + t²) is close to 1.
_SERIES_MIN_DF: Final = 1000.0


def _cornish_fisher(p: float, df: float) -> float:
    """The t quantile as the normal quantile plus its expansion in 1/df (A&S 26.7.5)."""
    z = _normal_quantile(p)
    z2 = z * z
    g1 = (z2 + 1) * z / 4
    g2 = ((5 * z2 + 16) * z2 + 3) * z / 96
    g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384
    g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160
    return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df


def _normal_quantile(p: float) -> float:
    """The standard normal quantile for p >= 0.5: Acklam's approximation, then two Halley steps
    on the normal tail, which make it exact to the last bit or two."""
    a = (-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.3577518672690,
         -30.66479806614716, 2.506628277459239)  # fmt: skip
    b = (-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972,
         -13.28068155288572)  # fmt: skip
    c = (-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734,
         4.374664141464968, 2.938163982698783)  # fmt: skip
    d = (0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416)
    if p > 1 - 0.02425:
        q = math.sqrt(-2 * math.log(1 - p))
        z = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        )
    else:
        q = p - 0.5
        r = q * q
        z = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / (
            ((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1
        )
    for _ in range(2):
        error = 0.5 * math.erfc(z / math.sqrt(2)) - (1.0 - p)
        u = -error * math.sqrt(2 * math.pi) * math.exp(z * z / 2)
        z -= u / (1 + z * u / 2)
    return z


def t_interval(confidence: float, df: float, loc: float, scale: float) -> tuple[float, float]:
    """``scipy.stats.t.interval(confidence, df, loc=loc, scale=scale)``."""
    low = t_quantile((1.0 - confidence) / 2.0, df)
    high = t_quantile((1.0 + confidence) / 2.0, df)
    return loc + low * scale, loc + high * scale
