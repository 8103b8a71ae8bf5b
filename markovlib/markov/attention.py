"""The canonical model with the attention scalar a (Sec. 4.1, App. G): critical points, invariants and basins in 3-D.

With linear attention and rank-one weights along alpha (App. G), the model reduces to theta = (e, w, a) and

    c(e, w, a) = f(e, a) m(w),   f(e, a) = e^2 (1 + a e^2) = e^2 k,   k = 1 + a e^2,   m(w) = 1 + 2 w|w|,
    L(e, w, a) = g(c)            (optimal bias, Lemma 5; ``canonical.reduced_loss``).

Critical points (Thm 10, reduced loss in R^3): grad L = g'(c) grad c vanishes iff c = c* (global minima) or
grad c = (f_e m, f m'(w), f_a m) = 0, i.e. e = 0 (the (w, a)-plane, loss H(pi)) or m = k = 0 (the curve
Sigma = {w = -1/sqrt 2, a = -1/e^2}, loss H(pi)).

Invariants of gradient flow theta' = -g'(c) grad c:

* the energy E(e, w, a) = e^2 - 2a^2 - w^2 - sign(w) log|w| (Lemma 14): grad E . grad c = 0;
* the planar orbit: (e', a') = -g'(c) m (f_e, f_a), so the projection (e, a) runs along ONE gradient line of
  f(e, a), whatever w, p, q do (they change only the speed and the direction along it). In u = e^2 these lines
  solve the Abel equation u du/da = 4 (1 + 2 a u) (no closed form; integrated numerically here). A line that
  descends f either reaches the a-axis e = 0 at a finite point A (region R_0, "reaches e = 0") or crosses the
  curve Gamma = {1 + 2 a e^2 = 0} (where e stops shrinking) and then runs to f -> -infinity. The label of a
  line is A in R_0 and a_Gamma, the value of a where it crosses Gamma, outside. The boundary of R_0 is one
  line, the separatrix S (``separatrix``), asymptotic to Gamma as a -> -infinity (``separatrix_gap``). The label
  is exact along every flow; computed from a point far along its line (towards increasing a) it is
  ill-conditioned, and within rounding of S it is undetermined (``planar_label``).

Basins (beyond the paper; derived in book/attention.ipynb and checked there against integrated flows). Along the
line through (e0, a0) in R_0, h = e^2 - 2a^2 increases with f from h = -2A^2 at e = 0, and the flow restricted to
the cylinder {line} x R_w is the 2-D flow of Sec. 4 with e^2 replaced by h + 2A^2. Hence the 3-D flow ends where
the 2-D flow from (e~0, w0) ends, with

    e~0^2 = e0^2 - 2 a0^2 + 2 A^2,   i.e. the reduced energy  E~ = E + 2A^2  plays the role of E,

(Thm 2 for p + q > 1, Thm 8 for p + q < 1, saddle energy E_sad). Outside R_0 (on the far side of S) no line
reaches e = 0 and every flow ends at a global minimum (up to a measure-zero set). ``predict_outcome`` implements
this rule.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..numerics import checks
from ..numerics.bisection import bisect
from ..numerics.dopri import dopri54_step
from .canonical import (
    check_pq,
    classify_unchecked,
    coefficient_grad_unchecked,
    feed_forward_factor,
    is_iid,
    pre_coefficient_unchecked,
    reduced_loss_grad_unchecked,
    reduced_loss_hess_unchecked,
)
from .energy import SADDLE_ENERGY, energy, predict_limit

__all__ = [
    "attention_factor", "pre_coefficient", "coefficient_grad", "hessian", "classify", "PlanarLabel",
    "planar_label", "separatrix", "separatrix_gap", "reduced_energy", "basin_boundary", "Limit3", "predict_outcome",
]

_L_END = -46.0  # log(e^2) at which a descending planar line counts as having reached e = 0 (e ~ 1e-10)


def attention_factor(e, a):
    """k(e, a) = 1 + a e^2: the attention layer multiplies the embedding by it, y_n = e k (x_n - 1/2) alpha."""
    e, a = checks.finite_array("e", e), checks.finite_array("a", a)
    return 1.0 + a * e * e


def pre_coefficient(e, a):
    """f(e, a) = e^2 (1 + a e^2), so that c(e, w, a) = f(e, a) (1 + 2w|w|) (App. G)."""
    return pre_coefficient_unchecked(checks.finite_array("e", e), checks.finite_array("a", a))


def coefficient_grad(e, w, a):
    """grad c = (f_e m, f m'(w), f_a m) with f_e = 2e + 4 a e^3, f_a = e^4, m'(w) = 4|w|. Shape (..., 3)."""
    e, w, a = np.broadcast_arrays(*(checks.finite_array(n, v) for n, v in (("e", e), ("w", w), ("a", a))))
    return np.stack(coefficient_grad_unchecked(e, w, a), axis=-1)


def hessian(e, w, a, p, q):
    """Hessian of the reduced loss L = g(c(e, w, a)) in (e, w, a): g''(c) grad c grad c^T + g'(c) hess c.

    hess c = [[f_ee m, f_e m', f_ea m], [f_e m', f m'', f_a m'], [f_ea m, f_a m', 0]] with f_ee = 2 + 12 a e^2,
    f_ea = 4 e^3, m' = 4|w|, m'' = 4 sign(w) (undefined at w = 0, where 0 is used). Shape (..., 3, 3).
    """
    p, q = check_pq(p, q)
    e, w, a = np.broadcast_arrays(*(checks.finite_array(n, v) for n, v in (("e", e), ("w", w), ("a", a))))
    e2 = e * e
    f = pre_coefficient_unchecked(e, a)
    fe, fa = 2 * e + 4 * a * e2 * e, e2 * e2
    fee, fea = 2 + 12 * a * e2, 4 * e2 * e
    m, m1, m2 = feed_forward_factor(w), 4 * np.abs(w), 4 * np.sign(w)
    c = f * m
    gc = np.stack([fe * m, f * m1, fa * m], axis=-1)
    hc = np.stack([np.stack([fee * m, fe * m1, fea * m], -1),
                   np.stack([fe * m1, f * m2, fa * m1], -1),
                   np.stack([fea * m, fa * m1, np.zeros_like(e)], -1)], -2)
    g1, g2 = reduced_loss_grad_unchecked(c, p, q), reduced_loss_hess_unchecked(c, p, q)
    g1, g2 = np.asarray(g1), np.asarray(g2)
    return g2[..., None, None] * gc[..., :, None] * gc[..., None, :] + g1[..., None, None] * hc


def classify(e, w, a, p, q, atol=1e-8):
    """Classify points of R^3 for the reduced loss (Thm 10 as reconstructed in book/attention.ipynb).

    "global_min" where c = c* (e != 0); on the plane e = 0 (loss H(pi)): "local_min" / "local_max" as in Thm 1
    (p + q > 1: local minima for w > -1/sqrt 2; p + q < 1: below), "saddle" on the line w = -1/sqrt 2;
    "saddle" on the curve Sigma = {m = 0, k = 0} (strict saddle: Hessian eigenvalues -lambda, 0, +lambda);
    "regular" elsewhere. For p + q = 1 every critical point is a global minimum. Returns str or array of str.
    """
    p, q = check_pq(p, q)
    e, w, a = (checks.finite_array(n, v) for n, v in (("e", e), ("w", w), ("a", a)))
    return classify_unchecked(e, w, p, q, atol, a)


# ------------------------------------------------------------------------------------------------------------
# the planar invariant: gradient lines of f(e, a) = e^2 (1 + a e^2)
# ------------------------------------------------------------------------------------------------------------
class PlanarLabel(NamedTuple):
    """Which gradient line of f passes through (e, a). ``reaches_axis``: the descending line reaches e = 0 (region
    R_0); ``A``: where (the a-coordinate; NaN outside R_0); ``a_gamma``: the a-coordinate where the line crosses
    Gamma = {1 + 2 a e^2 = 0} (NaN inside R_0)."""

    reaches_axis: np.ndarray
    A: np.ndarray
    a_gamma: np.ndarray


def _planar_field(y, sgn):
    """Unit-speed gradient field of f in (l, a), l = log e^2: descending (sgn = +1) (l', a') ~ -(4z, u^2),
    z = 1 + 2 a u, u = e^l (from u' = -4 u z, a' = -u^2, the time-rescaled descent of f)."""
    log_u, a = y[:, 0], y[:, 1]
    u = np.exp(np.minimum(log_u, 300.0))
    z = 1 + 2 * a * u
    v = np.stack([-4 * z, -u * u], axis=1)
    norm = np.sqrt(np.sum(v * v, axis=1)) + 1e-300
    return sgn[:, None] * v / norm[:, None]


def planar_label(e, a, rtol=1e-11, atol=1e-12, max_steps=20000):
    """Follow the gradient line of f(e, a) = e^2 (1 + a e^2) through (e, a) (vectorized, adaptive Dormand-Prince
    in arc length of (log e^2, a)). Points above Gamma (1 + 2 a e^2 > 0) descend f: they either reach e = 0 (then
    A is that a) or meet Gamma; points below Gamma ascend f until they meet Gamma. Returns :class:`PlanarLabel`.
    The line, hence the label, is the same for e and -e.

    Conditioning (derived in book/attention.ipynb, eq-att-squeeze). The label is exactly constant along gradient
    flow, but computed from a point it is only as good as the point: along increasing a, neighbouring lines are
    squeezed together by J = exp(-int 4/u^2 da) (strongly near Gamma at negative a, where every line converges to
    the separatrix S), so an error delta in e^2 at a point reached by following a line towards increasing a moves
    the label by about delta / J. At points within that resolution of S the label is undetermined (A -> -infinity
    as the line approaches S from R_0, a_gamma -> -infinity from outside): only the labels of a start, or of
    points resolved away from S, carry information. The labels are computed to about 10 rtol (1 + |label|).
    """
    e, a = np.broadcast_arrays(checks.finite_array("e", e), checks.finite_array("a", a))
    shape = e.shape
    e, a = e.ravel().astype(float), a.ravel().astype(float)
    n = e.size
    reaches = np.zeros(n, dtype=bool)
    A = np.full(n, np.nan)
    a_gamma = np.full(n, np.nan)
    with np.errstate(divide="ignore"):
        y = np.stack([np.log(e * e), a.copy()], axis=1)
    z0 = 1 + 2 * a * e * e
    axis = e == 0
    reaches[axis], A[axis] = True, a[axis]
    on_gamma = ~axis & (z0 == 0)
    a_gamma[on_gamma] = a[on_gamma]
    sgn = np.where(z0 > 0, 1.0, -1.0)
    active = np.flatnonzero(~axis & ~on_gamma)
    h = np.full(n, 0.05)
    steps = 0
    while active.size and steps < max_steps:
        steps += 1
        ya, ha, sa = y[active], h[active], sgn[active]
        y5, _, en, ok, factor = dopri54_step(lambda yy: _planar_field(yy, sa), ya, ha, _planar_field(ya, sa),
                                             rtol, atol)
        # a step that crosses Gamma is retried with a smaller step until it is tiny: the crossing is then located
        z_old = 1 + 2 * ya[:, 1] * np.exp(np.minimum(ya[:, 0], 300.0))
        z_new = 1 + 2 * y5[:, 1] * np.exp(np.minimum(y5[:, 0], 300.0))
        crosses = ok & (np.sign(z_new) != np.sign(z_old))
        tiny = ha < 1e-12
        retry = crosses & ~tiny
        accept = ok & ~retry
        h_new = np.minimum(ha * factor, 0.5)
        h_new = np.where(retry, ha / 8, h_new)
        h[active] = h_new
        acc = active[accept]
        y[acc] = y5[accept]
        met_gamma = accept & crosses
        at_axis = accept & (y5[:, 0] <= _L_END)
        idx = active[met_gamma]
        a_gamma[idx] = 0.5 * (ya[met_gamma, 1] + y5[met_gamma, 1])
        idx = active[at_axis & ~met_gamma]
        reaches[idx], A[idx] = True, y5[at_axis & ~met_gamma, 1]
        active = active[~(met_gamma | at_axis)]
    if active.size:
        raise RuntimeError(f"planar_label: {active.size} lines unfinished after {max_steps} steps")
    rs = lambda x: x.reshape(shape)  # noqa: E731
    if shape == ():
        return PlanarLabel(bool(reaches[0]), float(A[0]), float(a_gamma[0]))
    return PlanarLabel(rs(reaches), rs(A), rs(a_gamma))


def separatrix(a, rtol=1e-12):
    """e_S(a) > 0: the boundary of R_0 on the line of constant a (|e| < e_S(a) reaches e = 0, |e| > e_S(a) does not).

    S is the one gradient line of f asymptotic to Gamma (u = e^2 = 1/(2|a|)) as a -> -infinity. Along increasing a,
    every line near Gamma is attracted to S (deviations decay like exp(-16 int a^2 da)), so S is computed by
    integrating the line equation u du/da = 4 (1 + 2 a u) forward from a point of Gamma far to the left (implicit
    Radau; the start's error is damped to rounding level long before a = -50).
    """
    from scipy.integrate import solve_ivp

    a = checks.finite_array("a", a)
    shape = a.shape
    flat = a.ravel().astype(float)
    a_start = min(-200.0, 2.0 * float(flat.min()) if flat.size else -200.0)
    a_end = max(1.0, float(flat.max()) + 1.0) if flat.size else 1.0
    sol = solve_ivp(lambda s, u: 4 * (1 + 2 * s * u) / u, (a_start, a_end), [1 / (2 * abs(a_start))], method="Radau",
                    rtol=rtol, atol=1e-15, dense_output=True)
    if not sol.success:  # pragma: no cover
        raise RuntimeError(f"separatrix: {sol.message}")
    out = np.sqrt(sol.sol(flat)[0])
    return float(out[0]) if shape == () else out.reshape(shape)


def separatrix_gap(a, rtol=1e-12):
    """gamma(a) = 1 - 2|a| e_S(a)^2 for a < 0: how far the separatrix S lies inside Gamma = {1 + 2 a e^2 = 0}.

    S approaches Gamma as a -> -infinity, gamma ~ 1/(16|a|^3), so 1 - 2|a| e_S^2 computed from ``separatrix``
    loses the digits of e_S^2 that the subtraction cancels (at a = -20 about six of them). Here gamma itself is
    integrated: with s = -a and u = e^2 = (1 - gamma)/(2s), the line equation du/da = 4 (1 + 2au)/u becomes

        d gamma / da = (1 - gamma)/s - 16 s^2 gamma / (1 - gamma),

    stiff (rate 16 s^2) and attracting, integrated by Radau with its exact Jacobian from a = -200 (started on the
    series t^3/16 - 5 t^6/256, t = 1/s) to the largest requested a, at relative tolerance ``rtol`` (gamma > 0 is
    held to relative accuracy: no absolute tolerance).
    """
    from scipy.integrate import solve_ivp

    a = checks.finite_array("a", a)
    rtol = checks.positive_real("rtol", rtol)
    if a.size and not np.all((a < 0) & (a > _GAP_START)):
        raise ValueError(f"a must lie in ({_GAP_START:g}, 0) (the separatrix gap is measured from Gamma at a < 0)")
    shape = a.shape
    flat = a.ravel().astype(float)
    t0 = -1.0 / _GAP_START
    g0 = t0**3 / 16 - 5 * t0**6 / 256
    rhs = lambda x, g: (1 - g) / (-x) - 16 * x * x * g / (1 - g)  # noqa: E731
    jac = lambda x, g: [[1 / x - 16 * x * x / (1 - g[0]) ** 2]]  # noqa: E731
    a_end = float(flat.max()) if flat.size else -1.0
    sol = solve_ivp(rhs, (_GAP_START, a_end), [g0], method="Radau", rtol=rtol, atol=1e-300, jac=jac,
                    dense_output=True)
    if not sol.success:  # pragma: no cover
        raise RuntimeError(f"separatrix_gap: {sol.message}")
    out = sol.sol(flat)[0]
    return float(out[0]) if shape == () else out.reshape(shape)


_GAP_START = -200.0  # where separatrix_gap starts on the series of S


def reduced_energy(e, w, a, label=None):
    """E~ = E(e, w, a) + 2 A^2 with A the end of the planar line through (e, a) (NaN outside R_0 or at w = 0).

    Constant along gradient flow (both E and A are); the basins of Thm 2 / Thm 8 hold with E~ in place of E.
    """
    lab = planar_label(e, a) if label is None else label
    return energy(e, w, a) + 2 * np.asarray(lab.A) ** 2


def basin_boundary(e, a, label=None):
    """The 3-D saddle-asymptote surfaces {E~ = E_sad} over R_0: (w_low, w_high) with w_low <= -1/sqrt 2 <= w_high < 0.

    They solve w^2 - log(-w) = e~^2 - E_sad, e~^2 = e^2 - 2a^2 + 2A^2 (the 2-D saddle asymptotes at e = e~). For
    p + q > 1 the unigram basin is {(e, a) in R_0, w > w_high}; for p + q < 1 it is {(e, a) in R_0, w < w_low}.
    NaN outside R_0. Vectorized bisection in u = log(-w), where w^2 - log(-w) = e^{2u} - u has its minimum
    -E_sad at u_m = -log(2)/2.
    """
    e, a = np.broadcast_arrays(checks.finite_array("e", e), checks.finite_array("a", a))
    lab = planar_label(e, a) if label is None else label
    A = np.asarray(lab.A, dtype=float)
    psi = e * e - 2 * a * a + 2 * A * A - SADDLE_ENERGY  # >= -E_sad inside R_0; NaN outside
    ok = np.isfinite(psi)
    psi = np.where(ok, np.maximum(psi, -SADDLE_ENERGY), 0.0)
    u_m = -0.5 * np.log(2.0)
    above = lambda u: np.exp(2 * u) - u > psi  # noqa: E731  (phi(u) = e^{2u} - u above the level psi)
    big = np.abs(psi) + 5.0
    full = lambda x: np.broadcast_to(x, psi.shape).astype(float)  # noqa: E731
    # phi decreases on (-inf, u_m]: the root nearer w = 0 is right of mid where phi(mid) is above psi; phi
    # increases beyond u_m: the root is right of mid where phi(mid) is not above psi (phi is flat near u_m, so
    # this tie rule fixes the result there); 200 halvings
    u_high = bisect(above, full(-big - 1.0), full(u_m))
    u_low = bisect(lambda u: ~above(u), full(u_m), full(0.5 * np.log(big) + 2.0))
    w_low, w_high = -np.exp(u_low), -np.exp(u_high)
    nan = np.full(psi.shape, np.nan)
    w_low, w_high = np.where(ok, w_low, nan), np.where(ok, w_high, nan)
    return (float(w_low), float(w_high)) if w_low.ndim == 0 else (w_low, w_high)


class Limit3(NamedTuple):
    """Predicted outcome ("global_min" or "unigram") and, for "unigram", the limit point (0, w_inf, A); the global
    limit is the point of {c = c*} on the orbit (not computed here: NaN)."""

    outcome: object
    e: object
    w: object
    a: object


def predict_outcome(e0, w0, a0, p, q, label=None):
    """Where gradient flow of L(e, w, a) from (e0, w0, a0) ends, by the invariants (module docstring).

    - e0 = 0: the point is critical (loss H(pi)) and stays: "unigram" at itself (p + q != 1).
    - (e0, a0) outside R_0: "global_min" (for every p, q; up to measure zero).
    - inside R_0: the 2-D rule (``energy.predict_limit``) at (e~0, w0), e~0^2 = e0^2 - 2 a0^2 + 2 A^2; its unigram
      limit (0, w_inf) becomes (0, w_inf, A).
    For p + q = 1 every limit is a global minimum.
    """
    p, q = checks.probability("p", p), checks.probability("q", q)
    e0, w0, a0 = np.broadcast_arrays(*(checks.finite_array(n, v) for n, v in (("e0", e0), ("w0", w0), ("a0", a0))))
    shape = e0.shape
    e0, w0, a0 = (x.ravel().astype(float) for x in (e0, w0, a0))
    lab = planar_label(e0, a0) if label is None else PlanarLabel(*(np.ravel(x) for x in label))
    n = e0.size
    outcome = np.full(n, "global_min", dtype=object)
    e_l, w_l, a_l = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    iid = is_iid(p, q)
    crit = e0 == 0
    if not iid:
        outcome[crit] = "unigram"
    e_l[crit], w_l[crit], a_l[crit] = 0.0, w0[crit], a0[crit]
    inside = np.flatnonzero(np.asarray(lab.reaches_axis) & ~crit)
    if inside.size and not iid:
        A = np.asarray(lab.A)[inside]
        et2 = e0[inside] ** 2 - 2 * a0[inside] ** 2 + 2 * A ** 2
        lim = predict_limit(np.sqrt(np.maximum(et2, 0.0)), w0[inside], p, q)
        uni = np.asarray(lim.outcome) != "global_min"
        sel = inside[uni]
        outcome[sel] = "unigram"
        e_l[sel], w_l[sel], a_l[sel] = 0.0, np.asarray(lim.w)[uni], A[uni]
    outcome = outcome.astype(str)
    if shape == ():
        return Limit3(str(outcome[0]), float(e_l[0]), float(w_l[0]), float(a_l[0]))
    rs = lambda x: x.reshape(shape)  # noqa: E731
    return Limit3(rs(outcome), rs(e_l), rs(w_l), rs(a_l))

