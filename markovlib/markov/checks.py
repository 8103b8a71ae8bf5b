"""Statistics of Part I's chapters: exact frequency tests of the Markov sampler (Sec. 2 of Makkuva et al.) and
the bookkeeping of a family of such tests.

* :func:`binom_pvalue`: the two-sided exact binomial p-value, min(1, 2 min(P[K <= k], P[K >= k])).
* :func:`transition_counts`: the counts of 0 -> 1 and 1 -> 0 transitions and the visits of 0 and 1.
* :func:`runs_from_start`: run lengths of a binary sequence selected by their start only, so that given the past
  each length is a fresh Geom(r) (strong Markov property) and the counts per bin are exactly binomial.
* :func:`geometric_bins`: the law of those bins, Pr(len = k) = r (1 - r)^(k - 1) for k <= kmax and
  Pr(len > kmax) = (1 - r)^kmax.
* :func:`n_sigma_min`: the smallest two-sided normal level n_sigma at which ``n_tests`` tests keep their
  Bonferroni family-wise false-alarm bound at or below ``family_alpha``.
* :func:`round_up`: an upper bound printed with two significant digits, rounded up (never down).
* :func:`disc`, :func:`ball`: uniform perturbations in a disc of R^2 and a ball of R^3 (the perturbation tests of
  Thms 1 and 7, where the Hessian is degenerate).
* :func:`floor_text`: a loss difference that must stay above minus the rounding level, printed as its value when
  resolved and as a bound at the rounding level otherwise.
* :func:`place_roots`: which critical set of Thms 9, 10 (attention scalar) each root lies on, by closed-form tests.
* :func:`min_over_bias`: min over the bias b of a loss convex in b, e.g. the full transformer's exact loss at
  canonical (e, w) (Lemma 5 checked numerically: Brent's method on b).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..book.formatting import bound
from ..numerics import checks

__all__ = ["binom_pvalue", "transition_counts", "runs_from_start", "geometric_bins", "n_sigma_min", "round_up",
           "disc", "ball", "floor_text", "place_roots", "min_over_bias"]


def _binary_batch(x) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError(f"x must be a batch x length array of symbols with length >= 2, got shape {x.shape}")
    return x


def binom_pvalue(k, n, prob):
    """Two-sided exact binomial p-value of k successes in n trials at success probability ``prob``: twice the
    smaller tail, at most 1. Broadcasts; ``prob`` must lie in [0, 1] and ``n`` be a non-negative integer count."""
    k, n, prob = np.asarray(k), np.asarray(n), np.asarray(prob, dtype=float)
    if np.any(n < 0) or np.any(k < 0) or np.any(k > n):
        raise ValueError("k and n must be counts with 0 <= k <= n")
    if np.any(~np.isfinite(prob)) or np.any(prob < 0) or np.any(prob > 1):
        raise ValueError(f"prob must lie in [0, 1], got {prob!r}")
    return np.minimum(1.0, 2 * np.minimum(stats.binom.cdf(k, n, prob), stats.binom.sf(k - 1, n, prob)))


def transition_counts(x):
    """``((k01, n0), (k10, n1))`` of a batch of binary sequences: the visits of 0 followed by a 1 and the visits of 0
    (among positions 1..N-1), likewise for 1 followed by a 0. Given the visits, each count is a sum of fresh
    Bernoulli(P_{i,1-i}) choices (Markov property), hence binomial."""
    x = _binary_batch(x)
    a, b = x[:, :-1].ravel(), x[:, 1:].ravel()
    return ((int(((a == 0) & (b == 1)).sum()), int((a == 0).sum())),
            (int(((a == 1) & (b == 0)).sum()), int((a == 1).sum())))


def runs_from_start(x, kmax):
    """Length (capped at kmax + 1) and state of every run that starts with a switch at a position
    s <= length - 1 - kmax of a batch of binary sequences.

    Selecting runs by their start only (never by their end) avoids the window's bias: a run that starts there is
    followed for kmax steps, which the window always contains, so its binned length has exactly the geometric law
    (:func:`geometric_bins`). Returns ``(lengths, states)``, two 1-D arrays.
    """
    x = _binary_batch(x)
    B, N = x.shape
    kmax = checks.positive_int("kmax", kmax)
    if kmax > N - 2:
        raise ValueError(f"kmax must be at most length - 2 = {N - 2}, got {kmax}")
    switch = np.zeros((B, N + 1), dtype=bool)
    switch[:, 1:N] = x[:, 1:] != x[:, :-1]
    switch[:, N] = True  # sentinel: the window ends
    pos = np.where(switch, np.arange(N + 1), N + 1)
    first_at_or_after = np.minimum.accumulate(pos[:, ::-1], axis=1)[:, ::-1]
    rows, s = np.nonzero(switch[:, 1:N - kmax])
    s = s + 1
    lengths = np.minimum(first_at_or_after[rows, s + 1] - s, kmax + 1)
    return lengths, x[rows, s]


def geometric_bins(r, kmax) -> np.ndarray:
    """The law of a Geom(r) run length binned as 1, ..., kmax and "longer than kmax": r (1 - r)^(k - 1) for
    k = 1..kmax, then (1 - r)^kmax (kmax + 1 entries summing to 1)."""
    r = checks.probability("r", r)
    kmax = checks.positive_int("kmax", kmax)
    ks = np.arange(1, kmax + 1)
    return np.append(r * (1 - r) ** (ks - 1), (1 - r) ** kmax)


def n_sigma_min(n_tests, family_alpha) -> float:
    """The smallest n_sigma whose two-sided normal tail, 2 Phi(-n_sigma), keeps n_tests tests at a family-wise
    false-alarm bound n_tests * 2 Phi(-n_sigma) <= family_alpha (Bonferroni)."""
    n_tests = checks.positive_int("n_tests", n_tests)
    family_alpha = checks.probability("family_alpha", family_alpha)
    return float(stats.norm.isf(family_alpha / n_tests / 2))


def round_up(x, digits=2) -> float:
    """x > 0 rounded up to ``digits`` significant digits (an upper bound stays an upper bound when printed)."""
    x = checks.positive_real("x", x)
    digits = checks.positive_int("digits", digits)
    scale = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    k = math.ceil(x / scale)
    return (k - 1) * scale if (k - 1) * scale >= x else k * scale  # x / scale may land a rounding above an integer


def min_over_bias(loss_of_b, bracket=(-3.0, 3.0)) -> tuple[float, float]:
    """``(min_b L, argmin_b L)`` of a loss that is strictly convex in the bias b (Lemma 5), by Brent's method on b
    from ``bracket`` (tol 1e-10): the numeric counterpart of the closed-form optimal bias. ``loss_of_b(b)`` returns a
    float (e.g. the full transformer's exact population loss at canonical weights (e, w, b), App. C)."""
    from scipy.optimize import minimize_scalar

    if not callable(loss_of_b):
        raise ValueError("loss_of_b must be a function of the bias b")
    if len(bracket) != 2 or not bracket[0] < bracket[1]:
        raise ValueError(f"bracket must be a pair (lo, hi) with lo < hi, got {bracket!r}")
    res = minimize_scalar(loss_of_b, bracket=tuple(bracket), method="brent", tol=1e-10)
    return float(res.fun), float(res.x)


def disc(rng, n, r):
    """``(dx, dy)``: n points uniform in the disc of radius r (polar draw, radius r sqrt(U)) from ``rng``."""
    n, r = checks.positive_int("n", n), checks.positive_real("r", r)
    ang, rad = rng.uniform(0, 2 * np.pi, n), r * np.sqrt(rng.uniform(0, 1, n))
    return rad * np.cos(ang), rad * np.sin(ang)


def ball(rng, n, r):
    """An (n, 3) array of points uniform in the ball of radius r (normal direction, radius r U^(1/3))."""
    n, r = checks.positive_int("n", n), checks.positive_real("r", r)
    x = rng.normal(size=(n, 3))
    return r * x / np.linalg.norm(x, axis=1, keepdims=True) * rng.uniform(0, 1, (n, 1)) ** (1 / 3)


def floor_text(x, resolved=1e-12, rounding=2e-15) -> str:
    """The measured minimum x of a loss difference that must stay above minus the rounding level: its value when
    resolved (x > ``resolved``), else its size as a bound at the ``rounding`` level (a few float64 eps)."""
    x = float(checks.finite_array("x", x))
    return f"{x:.1e}" if x > resolved else f"|min| {bound(x, rounding)}"


def place_roots(R, p, q, set_tol):
    """Which predicted set each root (row of R: (e, w, a) or (e, w, a, b)) lies on, by closed-form tests (Thms 9, 10):
    the plane e = 0, the curve Sigma = {m(w) = 0, 1 + a e^2 = 0}, the surface Gamma* = {c = c*}, each within
    ``set_tol``, and for rows with a bias b also b = beta*(c) + f/2. Returns boolean masks keyed "Gamma*",
    "plane e=0", "Sigma", "elsewhere"."""
    from .reference import optimal_beta_np

    R = checks.finite_array("R", R, ndim=2)
    if R.shape[1] not in (3, 4):
        raise ValueError(f"R must hold roots (e, w, a) or (e, w, a, b) in rows, got shape {R.shape}")
    p, q = checks.probability("p", p), checks.probability("q", q)
    set_tol = checks.positive_real("set_tol", set_tol)
    e, w, a = R[:, 0], R[:, 1], R[:, 2]
    f, m = e**2 * (1 + a * e**2), 1 + 2 * w * np.abs(w)
    c = f * m
    c_opt = math.log((1 - p) * (1 - q) / (p * q))  # c* of Lemma 5: sigma(beta*) = p and sigma(c* + beta*) = 1 - q
    plane = np.abs(e) < set_tol
    sigma = ~plane & (np.abs(m) < set_tol) & (np.abs(1 + a * e**2) < set_tol)
    gamma = ~plane & ~sigma & (np.abs(c - c_opt) < set_tol)
    if R.shape[1] == 4:  # Thm 9: the bias sits at its optimum b*(theta) = beta*(c) + f/2
        at_b = np.abs(R[:, 3] - (optimal_beta_np(c, p, q) + f / 2)) < set_tol
        plane, sigma, gamma = plane & at_b, sigma & at_b, gamma & at_b
    return {"Gamma*": gamma, "plane e=0": plane, "Sigma": sigma, "elsewhere": ~(gamma | plane | sigma)}
