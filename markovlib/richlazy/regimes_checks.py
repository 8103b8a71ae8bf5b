"""Part II, Sec. 4 and App. B.1 of "Get rich quick" (Kunin et al., NeurIPS 2024): the machinery of the chapter
``grq_regimes`` (narrowing and expanding linear networks, lazy on one side and delayed rich on the other).

- the chapter's parameter rules that ``markovlib.book.params`` has no ready rule for: a network shape (d, h, c)
  (:func:`shape_rule`), the Riccati starts (:func:`riccati_cases_rule`) and the one-neuron cases of App. B.1.4
  (:func:`b14_cases_rule`);
- :func:`printed_bound`: the bound printed for a measured error (the chapter's floor at the defaults, following the
  measurement upward where an accepted input gives more);
- the sweep of Sec. 4 / App. B.1.5: :func:`regime_start` (Delta = delta I where the remark after Assumption B.2 allows
  it, else all delta_k = delta), :func:`draw_problem`, :func:`fit_sweep` (time to fit and kernel distance per draw and
  |delta|), :func:`median_slope` and :func:`regime_ok` (the lazy and delayed-rich criteria);
- :func:`bernoulli_shared_start`: a start with Delta = delta I whose nu(0) and C(0) = A_p^T A_p are both diagonal in
  the eigenbasis of beta*^T beta* (App. B.1.1's shared eigenspace, with C(0) free).
"""
from __future__ import annotations

import numpy as np

from ..book import params
from ..book.formatting import bound, ladder_limit
from ..numerics import checks
from . import linear_networks, linear_regimes
from .minimal_model import kernel_distance


# ------------------------------------------------------------------------------------------------------------
# parameter rules
# ------------------------------------------------------------------------------------------------------------
def shape_rule(narrow: bool, *, why: str = "") -> params.Rule:
    """A network shape [d, h, c] (list or YAML text) that narrows (d > c) or expands (d < c), with (d, c) = (6, 2)
    or (2, 6) and h in 2..4, i.e. min(d, c) <= h <= max(d, c) - 2: the shapes for which the chapter states claim 2
    (at h = max(d, c) - 1 the delayed-rich criterion fails in about a quarter of base seeds)."""
    def convert(name, value):
        out = params.int_list(name, value, minimum=1)
        if len(out) != 3:
            raise ValueError(f"{name} must hold (d, h, c), got {value!r}")
        d, h, c = out
        if (d <= c) if narrow else (d >= c):
            raise ValueError(f"{name} = {out}: a {'narrowing' if narrow else 'expanding'} network needs "
                             f"d {'above' if narrow else 'below'} c")
        if sorted((d, c)) != [2, 6] or not 2 <= h <= 4:
            raise ValueError(f"{name} = {out}: the claims are stated (and checked) for (6, h, 2) and (2, h, 6) with h "
                             f"in 2..4, i.e. min(d, c) <= h <= max(d, c) - 2")
        return out
    side = "(6, h, 2)" if narrow else "(2, h, 6)"
    return params.Rule(convert, f"shape {side}, h in 2..4", why)


def _cases(name, value):
    if isinstance(value, str):  # `papermill -p name '[[...], ...]'` passes the text
        import yaml

        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError:
            raise ValueError(f"{name} must be a list of triples, got the text {value!r}") from None
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__") or not list(value):
        raise ValueError(f"{name} must be a non-empty list of triples, got {value!r}")
    return [params.real_list(f"{name}[{i}]", r) for i, r in enumerate(value)]


def riccati_cases_rule(*, why: str = "") -> params.Rule:
    """A non-empty list of Riccati starts (delta, n0_1 / s_1, n0_2 / s_2): delta nonzero in [-1, 2], |n0_i / s_i| <= 3
    (where the reference integration is checked), |n0_i / s_i| below 1 for delta > 0 and n0_i / s_i above 1 for
    delta < 0 (an invertible A_p that stays invertible)."""
    def convert(name, value):
        cases = _cases(name, value)
        for i, r in enumerate(cases):
            if len(r) != 3 or r[0] == 0 or not -1.0 <= r[0] <= 2.0:
                raise ValueError(f"{name}[{i}] must be (delta, n0_1 / s_1, n0_2 / s_2) with delta nonzero in [-1, 2]")
            if max(abs(f) for f in r[1:]) > 3.0:
                raise ValueError(f"{name}[{i}] = {r}: need |n0_i / s_i| <= 3 (the range where the reference "
                                 f"integration is checked)")
            if any((abs(f) < 1) != (r[0] > 0) for f in r[1:]) or (r[0] < 0 and min(r[1:]) < 0):
                raise ValueError(f"{name}[{i}] = {r}: need |n0_i / s_i| below 1 for delta > 0 and n0_i / s_i above 1 "
                                 f"for delta < 0 (an invertible A that stays invertible)")
        return cases
    return params.Rule(convert, "list of (delta in [-1, 2] nonzero, n0_1 / s_1, n0_2 / s_2), |n0_i / s_i| <= 3", why)


def b14_cases_rule(*, why: str = "") -> params.Rule:
    """A non-empty list of one-neuron cases (delta, beta*, beta0) with 1e-6 <= |delta| <= 10, beta0 != beta* and
    |beta*|, |beta0| <= 10 (App. B.1.4's closed form is checked there)."""
    def convert(name, value):
        cases = _cases(name, value)
        for i, r in enumerate(cases):
            if len(r) != 3 or not 1e-6 <= abs(r[0]) <= 10 or r[1] == r[2] or max(abs(r[1]), abs(r[2])) > 10:
                raise ValueError(f"{name}[{i}] must be (delta, beta*, beta0) with 1e-6 <= |delta| <= 10, beta0 != "
                                 f"beta* and |beta*|, |beta0| <= 10, got {r}")
        return cases
    return params.Rule(convert, "list of (delta, beta*, beta0), 1e-6 <= |delta| <= 10, |beta*|, |beta0| <= 10", why)


# ------------------------------------------------------------------------------------------------------------
# printing
# ------------------------------------------------------------------------------------------------------------
def printed_bound(x, floor, tol=None) -> str:
    """The printed bound of a measured error ``x``: ``floor`` (the chapter's bound at the defaults, at least 100 times
    above the error observed across machines) or, where an accepted input gives a larger value, the 1-2-3-5-7 step at
    least 3 times above it (never rounded down); the value itself (one digit) if that step would reach ``tol``. A
    NaN (after a blow-up, where the claim fails) prints as it is."""
    x = float(x)
    floor = checks.positive_real("floor", floor)
    if not np.isfinite(x):
        return f"{x}"
    lim = ladder_limit(x, margin=3.0, floor=floor)
    return bound(x, lim) if tol is None or lim < tol else f"{abs(x):.1e}"


# ------------------------------------------------------------------------------------------------------------
# the sweep of Sec. 4 / App. B.1.5
# ------------------------------------------------------------------------------------------------------------
def _shape(shape):
    out = params.int_list("shape", shape, minimum=1)
    if len(out) != 3:
        raise ValueError(f"shape must hold (d, h, c), got {shape!r}")
    return out


def regime_start(shape, delta, seed, init_scale):
    """(A0, W0, isotropic) for the network ``shape`` = (d, h, c) at conserved delta: Delta = delta I_h where it exists
    (delta > 0 and h <= c, or delta < 0 and h <= d; :func:`markovlib.richlazy.linear_networks.isotropic_init`, its
    Gaussian layer of std init_scale / sqrt(|delta|) so that beta(0) stays of order init_scale), else all
    delta_k = delta with independent random directions and ||beta_k(0)|| = init_scale
    (:func:`~markovlib.richlazy.linear_networks.init_with_deltas`)."""
    d, h, c = _shape(shape)
    delta = float(checks.finite_array("delta", delta, ndim=0))
    if delta == 0:
        raise ValueError("delta must be non-zero")
    init_scale = checks.positive_real("init_scale", init_scale)
    if (delta > 0 and h <= c) or (delta < 0 and h <= d):
        A0, W0 = linear_networks.isotropic_init(d, h, c, delta, scale=init_scale / np.sqrt(abs(delta)), seed=seed)
        return A0, W0, True
    A0, W0 = linear_networks.init_with_deltas(d, c, np.full(h, delta), np.full(h, init_scale), seed=seed)
    return A0, W0, False


def draw_problem(shape, seed, k):
    """Draw ``k`` of base ``seed`` for ``shape`` (d, h, c): X (n, d) with n = 2 max(d, c) Gaussian rows, a Gaussian
    teacher beta* (c, d), Y = X beta*^T (realizable), and the seed of the initialization; both sides of a shape share
    it. Returns (X, Y, init_seed)."""
    d, _, c = _shape(shape)
    seed, k = checks.nonnegative_int("seed", seed), checks.nonnegative_int("k", k)
    rng = np.random.default_rng([seed, 22, k, d, c])
    X = rng.standard_normal((2 * max(d, c), d))
    Y = X @ rng.standard_normal((c, d)).T
    return X, Y, int(rng.integers(2**31))


def fit_sweep(shape, sign, abs_deltas, n_seeds, seed, init_scale, fit_eps, t_max):
    """The time to fit t_fit (first time the excess loss is ``fit_eps`` of its start,
    :func:`markovlib.richlazy.linear_regimes.flow_to_fit`) and the kernel distance S(0, t_fit) of the NTK on the
    training inputs, for draws k = 0..n_seeds-1 (:func:`draw_problem`) and delta = sign |delta| over ``abs_deltas``
    (:func:`regime_start`). Returns (T, S), each (n_seeds, len(abs_deltas))."""
    if sign not in (-1, 1):
        raise ValueError(f"sign must be -1 or 1, got {sign!r}")
    abs_deltas = [checks.positive_real(f"abs_deltas[{j}]", m) for j, m in enumerate(abs_deltas)]
    n_seeds = checks.positive_int("n_seeds", n_seeds)
    T = np.zeros((n_seeds, len(abs_deltas)))
    S = np.zeros_like(T)
    for k in range(n_seeds):
        X, Y, init_seed = draw_problem(shape, seed, k)
        for j, m in enumerate(abs_deltas):
            A0, W0, _ = regime_start(shape, sign * m, init_seed, init_scale)
            T[k, j], A1, W1 = linear_regimes.flow_to_fit(A0, W0, X, Y, fit_eps, t_max)
            S[k, j] = kernel_distance(linear_networks.ntk(X, A0, W0), linear_networks.ntk(X, A1, W1))
    return T, S


def median_slope(T, abs_deltas) -> float:
    """The median over draws of the log-log slope of t_fit between the two largest |delta| (the last two columns)."""
    T = checks.finite_array("T", T, ndim=2)
    if T.shape[1] != len(abs_deltas) or T.shape[1] < 2 or np.any(T <= 0):
        raise ValueError(f"T must be positive with one column per |delta| (at least 2), got shape {T.shape}")
    return float(np.median(np.log(T[:, -1] / T[:, -2]) / np.log(abs_deltas[-1] / abs_deltas[-2])))


def regime_ok(T, S, lazy, s_lazy_max, delay_ratio_min, s_rich_ratio):
    """Per draw (row), the chapter's criterion. Lazy: t_fit and S(0, t_fit) both fall strictly with |delta| and S at
    the largest |delta| is below ``s_lazy_max``. Delayed rich: t_fit rises strictly, by at least ``delay_ratio_min``
    from the smallest |delta| to the largest, and S at the largest is at least ``s_rich_ratio`` times S at the
    smallest (S levels off instead of vanishing)."""
    T, S = checks.finite_array("T", T, ndim=2), checks.finite_array("S", S, ndim=2)
    if T.shape != S.shape:
        raise ValueError(f"T and S must have the same shape, got {T.shape} and {S.shape}")
    if lazy:
        return np.all(np.diff(T, axis=1) < 0, axis=1) & np.all(np.diff(S, axis=1) < 0, axis=1) & (S[:, -1] < s_lazy_max)
    return (np.all(np.diff(T, axis=1) > 0, axis=1) & (T[:, -1] / T[:, 0] >= delay_ratio_min)
            & (S[:, -1] >= s_rich_ratio * S[:, 0]))


# ------------------------------------------------------------------------------------------------------------
# App. B.1.1: a shared-eigenspace start with C(0) free
# ------------------------------------------------------------------------------------------------------------
def bernoulli_shared_start(b_star, delta, fractions, rng):
    """(A0, W0) with c = h = 2, Delta = A_p A_p^T - W W^T = delta I, nu(0) = V diag(n_i(0)) V^T with
    n_i(0) = fractions_i s_i, and C(0) = A_p^T A_p = |delta| V diag(1/|k_i|) V^T, where beta*_p = b_star^T =
    U diag(s_i) V^T. Built as W = A_p V diag(n_i(0)/s_i) U^T + r A_p v_1 u_perp^T with r^2 = |1 - n_1(0)^2/s_1^2| / 2
    (r = 0 when d = c) and A_p = sqrt|delta| O diag(|k_i|)^(-1/2) V^T, k_i = 1 - n_i(0)^2/s_i^2 - r^2 [i = 1], O a
    random rotation from ``rng``. The k_i have the sign of delta under the conditions of :func:`riccati_cases_rule`.
    Returns (A0 = A_p^T, W0)."""
    b_star = checks.finite_array("b_star", b_star, ndim=2)
    if b_star.shape[0] != 2 or b_star.shape[1] < 2:
        raise ValueError(f"b_star must have shape (2, d) with d >= 2, got {b_star.shape}")
    delta = float(checks.finite_array("delta", delta, ndim=0))
    fr = checks.finite_array("fractions", fractions, ndim=1)
    if delta == 0 or fr.shape != (2,):
        raise ValueError(f"delta must be non-zero and fractions hold two ratios n0_i / s_i, got {delta!r}, {fr}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy Generator")
    d = b_star.shape[1]
    U_full, s_b, Vt_b = np.linalg.svd(b_star.T)
    U_b, U_perp, V_b = U_full[:, :2], U_full[:, 2:], Vt_b.T
    n0 = fr * s_b
    m = 1 - (n0 / s_b) ** 2
    r2 = abs(m[0]) / 2 if d > 2 else 0.0
    k_diag = m - r2 * np.array([1.0, 0.0])
    if np.any(np.sign(k_diag) != np.sign(delta)):
        raise ValueError(f"fractions {fr.tolist()} do not suit delta = {delta:g} (see riccati_cases_rule)")
    rot = np.linalg.qr(rng.standard_normal((2, 2)))[0]
    Ap = np.sqrt(abs(delta)) * rot @ np.diag(np.abs(k_diag) ** -0.5) @ V_b.T
    W0 = Ap @ V_b @ np.diag(n0 / s_b) @ U_b.T
    if d > 2:
        W0 = W0 + np.sqrt(r2) * np.outer(Ap @ V_b[:, 0], U_perp[:, 0])
    return Ap.T, W0
