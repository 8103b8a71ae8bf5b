"""Part II: the regimes of the whitened single neuron in closed form (the book's chapter grq_minimal_model).

Kunin et al. (NeurIPS 2024), Sec. 3, Fig. 3 and App. A.2, for f(x) = a w^T x with eta_a = eta_w = 1 on whitened
data (X^T X / n = I, beta* = X^T y / n, b = ||beta*||), in d = 2. From the exact solution of App. A.2
(:func:`markovlib.richlazy.minimal_exact.exact_parameters`: a(t), u(t) = w . e, s(t) = ||w - u e|| with e = beta* / b)
this module computes the kernel distance S(0, t) of M = a^2 I + w w^T (the NTK K = X M X^T, eq. (1), at whitened X
is the same distance), its end value S(0, inf) (a^2 -> (delta + S*)/2, w -> +-sqrt((S* - delta)/2) e, S* =
sqrt(delta^2 + 4 b^2)), the Fig. 3 statistics of one beta0 (lazy upstream, rich balanced, delayed rich downstream,
half-rise times, the zero crossing of a by the sign of the basin margin c1, App. A.2.5), the scans over the cosine of
beta0 to beta* and over the corners of the chapter's range, and the closed-form distance to the saddle of a flow
started on the separating surface c1 = 0 (App. A.2.5, item 4). Also the chapter's data and random initializations.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from ..numerics import checks
from .minimal_exact import basin_margin, exact_parameters
from .minimal_limits import init_from_product
from .minimal_model import kernel_distance


def _beta_star(beta_star):
    bstar = checks.finite_array("beta_star", beta_star, ndim=1)
    b = float(np.linalg.norm(bstar))
    if bstar.shape != (2,) or b == 0:
        raise ValueError(f"beta_star must be a nonzero vector of length 2, got {beta_star!r}")
    return bstar, b, bstar / b


def whitened_data(rng, n_samples, beta_star):
    """(X, y): X = sqrt(n) Q (n x 2, orthonormal columns Q from a Gaussian matrix), so X^T X / n = I, and
    y = X beta* + 0.5 q (q a third orthonormal column, a residual off range(X), when n > 2); X^T y / n = beta*."""
    n = checks.positive_int("n_samples", n_samples)
    if n < 2:
        raise ValueError(f"n_samples must be at least 2 (d is 2), got {n}")
    bstar, _, _ = _beta_star(beta_star)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    X = np.sqrt(n) * Q[:, :2]
    return X, X @ bstar + (0.5 * Q[:, 2] if n > 2 else 0.0)


def mu_phi(a, w, beta_star):
    """(mu, phi) = (a ||w||, cos(w, beta*)) of the reduced system (eq. (2)); w has the vector on its last axis."""
    _, _, e = _beta_star(beta_star)
    w = np.asarray(w, dtype=float)
    wn = np.linalg.norm(w, axis=-1)
    return np.asarray(a) * wn, (w @ e) / wn


def random_whitened_init(rng, beta_star, delta_max):
    """(delta, mu0, phi0, a0, w0) of a random initialization: delta uniform in [-delta_max, delta_max], mu0 in
    [-2, 2], phi0 in [-1, 1], and (a0, w0) with sign a0 = sign mu0, ||w0||^2 = a0^2 - delta, w0 in the plane of beta*
    on the side of e_perp = (-e_2, e_1). mu0 and phi0 are returned as recomputed from (a0, w0)."""
    delta_max = checks.finite_array("delta_max", delta_max)
    if delta_max.size != 1 or not float(delta_max) >= 0:
        raise ValueError(f"delta_max must be a number >= 0, got {delta_max!r}")
    _, _, e = _beta_star(beta_star)
    delta = rng.uniform(-float(delta_max), float(delta_max))
    mu0 = rng.uniform(-2, 2)
    phi0 = rng.uniform(-1, 1)
    S0 = np.hypot(delta, 2 * mu0)
    a0 = np.sign(mu0) * np.sqrt((S0 + delta) / 2)
    e_perp = np.array([-e[1], e[0]])
    w0 = np.sqrt((S0 - delta) / 2) * (phi0 * e + np.sqrt(1 - phi0**2) * e_perp)
    return delta, a0 * np.linalg.norm(w0), w0 @ e / np.linalg.norm(w0), a0, w0


def kernel_distance_curve(t, delta, beta_star, mu0, phi0, w0):
    """(S(0, t), beta(t)) from the closed form of App. A.2: M(t) = a^2 I + w w^T with w = u e + s v_hat (v_hat the
    fixed direction of the part of w0 orthogonal to beta*), S the kernel distance of M(t) to M(0); beta = a w."""
    _, b, e = _beta_star(beta_star)
    w0 = checks.finite_array("w0", w0, ndim=1)
    a_, u_, s_ = exact_parameters(t, delta, b, mu0, phi0)
    v0 = w0 - (w0 @ e) * e
    v_hat = v0 / np.linalg.norm(v0) if np.linalg.norm(v0) > 0 else np.zeros(2)
    w_t = u_[:, None] * e + s_[:, None] * v_hat
    Ms = a_[:, None, None] ** 2 * np.eye(2) + w_t[:, :, None] * w_t[:, None, :]
    return np.array([kernel_distance(Ms[0], Mk) for Mk in Ms]), a_[:, None] * w_t


def end_kernel_distance(delta, a0, w0, beta_star):
    """S(0, inf) from M0 = a0^2 I + w0 w0^T and the limit M = a^2 I + w w^T, a^2 = (delta + S*)/2,
    w = +-sqrt((S* - delta)/2) e (v -> 0): a closed form, no integration."""
    _, b, e = _beta_star(beta_star)
    S_star = np.hypot(delta, 2 * b)
    w_end = np.sqrt((S_star - delta) / 2) * e
    M_end = (delta + S_star) / 2 * np.eye(2) + np.outer(w_end, w_end)
    return kernel_distance(a0**2 * np.eye(2) + np.outer(w0, w0), M_end)


def regime_stats(beta0, S_curves, S_end, t, deltas, beta_star, lazy_window, c1_min, exact=False) -> dict:
    """The Fig. 3 statistics of one beta0 (the authors' initialization a0 > 0 at each delta of ``deltas``, sorted)
    from the curves S(0, t) (``S_curves[delta]``, theory or flow, on the times ``t``) and the end values
    ``S_end[delta]``: cos (beta0 to beta*), c1 (basin margin per delta), half (the first time S reaches half its end
    value, per delta <= -1; with ``exact`` refined by brentq on the closed form, so that two half-rise times in one
    grid step do not tie), up / bal (S(0, T) at the largest delta and at 0), bal_closed = (1 - cos^2)/5, early (max S
    for t <= lazy_window at the smallest delta), down_end, crossing (deltas <= -1 with c1 < 0: a crosses zero), near
    (deltas <= -1 with |c1| < c1_min), grows (half-rise times increase with |delta|), mono (S_end decreases with
    delta)."""
    bstar, _, e = _beta_star(beta_star)
    beta0 = checks.finite_array("beta0", beta0, ndim=1)
    t = checks.finite_array("t", t, ndim=1)
    d_max_, d_min_ = max(deltas), min(deltas)
    c_ = float(beta0 @ e / np.linalg.norm(beta0))
    c1_ = {d: float(basin_margin(*init_from_product(beta0, d), bstar)) for d in deltas}
    half = {}
    for d in [d for d in deltas if d <= -1]:
        above = np.nonzero(S_curves[d] >= 0.5 * S_end[d])[0]
        half[d] = float(t[above[0]]) if above.size else np.inf
        if exact and above.size and above[0] > 0:
            a0_, w0_ = init_from_product(beta0, d)
            mu0_, phi0_ = mu_phi(a0_, w0_, bstar)
            gap = lambda tt: kernel_distance_curve(np.array([0.0, tt]), d, bstar, mu0_, phi0_, w0_)[0][1] - 0.5 * S_end[d]  # noqa: E731,E501
            half[d] = brentq(gap, t[above[0] - 1], t[above[0]], xtol=1e-12)
    order = sorted(half)  # most downstream first
    return dict(
        cos=c_, c1=c1_, half=half,
        up=float(S_curves[d_max_][-1]), bal=float(S_curves[0.0][-1]), bal_closed=(1 - c_**2) / 5,
        early=float(S_curves[d_min_][t <= lazy_window].max()), down_end=float(S_curves[d_min_][-1]),
        crossing=[d for d in deltas if d <= -1 and c1_[d] < 0],
        near=[d for d in deltas if d <= -1 and abs(c1_[d]) < c1_min],
        grows=all(half[d1] > half[d2] for d1, d2 in zip(order, order[1:])),
        mono=all(S_end[d1] > S_end[d2] for d1, d2 in zip(deltas, deltas[1:])))


def beta0_at_cosine(c, beta0, beta_star):
    """beta0 turned to cosine c with beta*, same norm, on beta0's side of beta* (the side of e_perp = (-e_2, e_1))."""
    _, _, e = _beta_star(beta_star)
    beta0 = checks.finite_array("beta0", beta0, ndim=1)
    e_perp = np.array([-e[1], e[0]])
    side = 1.0 if beta0 @ e_perp >= 0 else -1.0
    return float(np.linalg.norm(beta0)) * (c * e + side * np.sqrt(1 - c**2) * e_perp)


def cosine_scan(cosines, beta0, beta_star, t, deltas, *, lazy_window, c1_min, lazy_S_max, rich_S_min):
    """The Fig. 3 claims at each cosine of ``cosines`` (beta0 turned by :func:`beta0_at_cosine`), from the closed
    forms (:func:`regime_stats` with exact=True). Returns (fail, n_rich, n_order, rows): fail[claim] lists the
    cosines where a claim fails ("regime": upstream lazy, balanced rich, downstream lazy for t <= lazy_window;
    "bal_closed": balanced S(0, T) = (1 - cos^2)/5 to 1e-6; "mono": S(0, inf) decreasing in delta; "rich": the most
    downstream run rich by T, asserted at the n_rich cosines with |c1| >= c1_min; "order": the delay grows with
    |delta|, asserted at the n_order cosines where no flow crosses a = 0 and none is near the surface); rows: the
    statistics of each cosine."""
    d_min = min(deltas)
    fail = {k: [] for k in ("regime", "bal_closed", "mono", "rich", "order")}
    n_rich, n_order, rows = 0, 0, []
    for c in cosines:
        beta0_c = beta0_at_cosine(c, beta0, beta_star)
        S_th, S_end = {}, {}
        for d in deltas:
            a0_, w0_ = init_from_product(beta0_c, d)
            S_th[d] = kernel_distance_curve(t, d, beta_star, *mu_phi(a0_, w0_, beta_star), w0_)[0]
            S_end[d] = end_kernel_distance(d, a0_, w0_, beta_star)
        sc = regime_stats(beta0_c, S_th, S_end, t, deltas, beta_star, lazy_window, c1_min, exact=True)
        if not (sc["up"] < lazy_S_max and sc["bal"] > rich_S_min and sc["early"] < lazy_S_max):
            fail["regime"].append(c)
        if abs(sc["bal"] - sc["bal_closed"]) > 1e-6:
            fail["bal_closed"].append(c)
        if not sc["mono"]:
            fail["mono"].append(c)
        if abs(sc["c1"][d_min]) >= c1_min:
            n_rich += 1
            if not sc["down_end"] > rich_S_min:
                fail["rich"].append(c)
        if not sc["crossing"] and not sc["near"]:
            n_order += 1
            if not sc["grows"]:
                fail["order"].append(c)
        rows.append(sc)
    return fail, n_rich, n_order, rows


def kernel_distance_at(T, delta, beta_star_norm, beta0_norm, cos):
    """(S(0, T), c1) of the authors' initialization at cosine ``cos`` to beta*, in coordinates with beta* along the
    first axis (the kernel distance is rotation invariant), from the closed form."""
    b, r0 = checks.positive_real("beta_star_norm", beta_star_norm), checks.positive_real("beta0_norm", beta0_norm)
    a0_ = np.sqrt((delta + np.hypot(delta, 2 * r0)) / 2)
    w0_ = r0 / a0_ * np.array([cos, np.sqrt(1 - cos**2)])
    a_, u_, s_ = exact_parameters(np.array([T]), delta, b, r0, cos)
    wT = np.array([u_[0], s_[0]])
    S_ = kernel_distance(a0_**2 * np.eye(2) + np.outer(w0_, w0_), a_[0] ** 2 * np.eye(2) + np.outer(wT, wT))
    return S_, float(basin_margin(a0_, w0_, np.array([b, 0.0])))


def corner_scan(rich_S_min, norms=(0.8, 1.25), horizons=(20.0, 40.0), n_cos=241, cos_max=0.6):
    """Where can "the most downstream run is rich by T" fail over the corners of the chapter's range? For |beta0|,
    |beta*| in ``norms``, T in ``horizons``, delta_min at -4 and at -3 max(|beta0|, |beta*|) and ``n_cos`` cosines in
    [-cos_max, cos_max]: returns (|c1| of each setting where S(0, T) <= rich_S_min, number of settings)."""
    n_cos = checks.positive_int("n_cos", n_cos)
    fails, n = [], 0
    for r0 in norms:
        for b in norms:
            for T in horizons:
                for d in (-4.0, -3.0 * max(r0, b)):
                    for c in np.linspace(-cos_max, cos_max, n_cos):
                        S_c, c1_c = kernel_distance_at(T, d, b, r0, c)
                        n += 1
                        if not S_c > rich_S_min:
                            fails.append(abs(c1_c))
    return fails, n


def saddle_distance(delta, a0, t, beta_star_norm):
    """Distance at time t to the saddle (0, sqrt(-delta) e_perp) of a flow started on the separating surface
    c1 = 0 at a0 (App. A.2.5, item 4): a^2 = a0^2 e^{-k t} / (1 + 2 a0^2 (1 - e^{-k t}) / k), k = S* - delta, from
    the Bernoulli solution; u = lambda_- a / b, s^2 = a^2 - u^2 - delta. Decreasing in t; needs delta <= 0."""
    b = checks.positive_real("beta_star_norm", beta_star_norm)
    if not float(delta) <= 0:
        raise ValueError(f"delta must be <= 0 (the separating surface is empty for delta > 0), got {delta!r}")
    S_star = np.hypot(delta, 2 * b)
    k = S_star - delta
    a2 = a0**2 * np.exp(-k * t) / (1 + 2 * a0**2 * (1 - np.exp(-k * t)) / k)
    u2 = ((delta + S_star) / 2) ** 2 * a2 / b**2
    s_ = np.sqrt(max(a2 - u2 - delta, 0.0))
    return float(np.sqrt(a2 + u2 + (s_ - np.sqrt(-delta)) ** 2))
