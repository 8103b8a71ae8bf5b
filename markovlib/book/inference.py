"""Statistics of the chapters' checks: Monte Carlo means against their predicted values (:func:`mean_test`,
:func:`z_score`) and counts over seeds (:func:`wilson_interval`, :func:`wilson_lower_z`, with the fewest cases a
count may rest on, :data:`MIN_LIVE` and :data:`MIN_STORED`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .formatting import as_float

MIN_LIVE = 10  # the fewest cases of a count over live runs or draws (the developers' guide)
MIN_STORED = 20  # the fewest cases of a count read from stored paper-scale runs


def z_score(estimate, truth, std_err, exact_tol: float = 1e-12) -> float:
    """|estimate - truth| in standard errors. A zero standard error (a predictor whose loss is the same on every
    sequence, e.g. the constant 1/2 when p = q) gives 0 when the estimate equals the truth to ``exact_tol``, else
    infinity (never NaN)."""
    est, tru, se = (as_float(n, v) for n, v in (("estimate", estimate), ("truth", truth), ("std_err", std_err)))
    if not se >= 0:
        raise ValueError(f"std_err must be a real number >= 0, got {std_err!r}")
    if se > 0:
        return abs(est - tru) / se
    return 0.0 if abs(est - tru) < exact_tol else math.inf


@dataclass(frozen=True)
class MeanTest:
    """A sampled mean against its predicted value: the mean, its standard error, |z| and the two-sided p-value."""
    mean: float
    std_err: float
    z: float
    pvalue: float


def mean_test(samples, truth, *, se_floor: float = 1e-13) -> MeanTest:
    """Test a Monte Carlo mean of independent ``samples`` (one per sequence) against ``truth``: the standard error
    is estimated (``std(ddof=1) / sqrt(n)``), so the p-value is Student t's with n - 1 degrees of freedom; it is
    floored at ``se_floor`` (the rounding level of a float64 mean of O(1) values), since a predictor whose loss is
    the same on every sequence (1/2 when p = q) has a standard error of rounding size."""
    from scipy.stats import t as student_t
    x = np.asarray(samples, dtype=float).ravel()
    if x.size < 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"samples must hold at least 2 finite values, got {x.size} values")
    tru = as_float("truth", truth)
    floor = as_float("se_floor", se_floor)
    if not floor > 0:
        raise ValueError(f"se_floor must be > 0, got {se_floor!r}")
    mean = float(x.mean())
    se = max(float(x.std(ddof=1)) / math.sqrt(x.size), floor)
    z = abs(mean - tru) / se
    return MeanTest(mean, se, z, float(2 * student_t.sf(z, x.size - 1)))


def wilson_interval(k, n, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion k/n at normal quantile z (default 95 %). Vectorized."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if np.any(n <= 0) or np.any(k < 0) or np.any(k > n):
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k!r}, n={n!r}")
    z = as_float("z", z)
    if not z > 0:
        raise ValueError(f"z must be > 0, got {z!r}")
    phat = k / n
    denom = 1 + z**2 / n
    centre = (phat + z**2 / (2 * n)) / denom
    half = z * np.sqrt(phat * (1 - phat) / n + z**2 / (4 * n**2)) / denom
    lo, hi = np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)
    lo, hi = np.where(k == 0, 0.0, lo), np.where(k == n, 1.0, hi)  # exact ends (rounding gave 1 - 1e-16)
    return (float(lo), float(hi)) if lo.ndim == 0 else (lo, hi)


def wilson_lower_z(alpha: float = 0.05, family: int = 1) -> float:
    """The normal quantile of a one-sided lower confidence bound at level 1 - alpha / family (Bonferroni over
    ``family`` claims tested at once, so the family-wise error is at most ``alpha``)."""
    from scipy.stats import norm

    alpha = as_float("alpha", alpha)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if isinstance(family, bool) or not isinstance(family, int) or family < 1:
        raise ValueError(f"family must be an integer >= 1, got {family!r}")
    return float(norm.ppf(1 - alpha / family))
