"""Small initialization, finite steps and i.i.d. data (Thm 2's consequence; eq-gd-drift; p + q = 1) for the
chapter gradient_flow_energy. Each function returns its measurements and the table it prints (``.text``) as a
``types.SimpleNamespace``; the chapter records the claims.

* :func:`small_init`: P(bad local minimum) of flows from N(0, sigma^2 I) three ways: eq-p-local by quadrature
  (``energy_reference.p_local_exact``), the energy criterion ``predict_limit``, integrated flows, with Bonferroni
  Wilson intervals at a family-wise error.
* :func:`sigma_limits`: eq-p-local's limits, 1 and 0 as sigma -> 0, 1/2 and 1/4 as sigma -> infinity.
* :func:`gd_drift`: the energy drift of gradient descent over a time T against K1 eta (eq-gd-drift).
* :func:`iid_flow`: p + q = 1, the algebraic law |e(t)| ~ 1/(2|m(w_inf)| sqrt(g''(0) t)).
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from scipy.integrate import trapezoid
from scipy.stats import norm

from ..book.formatting import bound, fixed, fraction, yes_no
from ..book.inference import wilson_interval
from ..numerics import checks
from . import canonical
from .chain import MarkovChain
from .energy import energy, predict_limit
from .energy_checks import chains
from .energy_reference import p_local_exact
from .flow import gradient_descent, horizon, integrate, integrate_batch

__all__ = ["small_init", "sigma_limits", "gd_drift", "iid_flow"]


def small_init(sigmas, pq, n_mc, n_criterion, mc_alpha, t_eff, rng):
    """For every sigma of ``sigmas`` and chain of ``pq``: ``n_mc`` integrated flows and ``n_criterion`` draws of the
    energy criterion (the same draws for every chain) against eq-p-local, each estimate with a two-sided Wilson
    interval at level 1 - mc_alpha / (2 cells) (Bonferroni: family-wise error mc_alpha).

    ``inside`` / ``crit_inside``: cells whose flow / criterion interval holds the quadrature value, of ``n_cells``;
    ``worst_dev`` the largest deviation in standard errors; ``agree_min`` = (k, (sigma, p, q)), the fewest flows that
    end where ``predict_limit`` says; ``small[(p, q)]``: flows at the smallest sigma that end as the limit says (local
    for p + q > 1, global for p + q < 1); ``mc[(sigma, p, q)]`` = (exact, criterion, flows, lo, hi)."""
    sigmas = [checks.positive_real("sigmas", s) for s in sigmas]
    pq, n_mc = chains("pq", pq), checks.positive_int("n_mc", n_mc)
    n_criterion = checks.positive_int("n_criterion", n_criterion)
    if not 0 < mc_alpha < 1:
        raise ValueError(f"mc_alpha must lie in (0, 1), got {mc_alpha!r}")
    n_cells = len(sigmas) * len(pq)
    n_tests = 2 * n_cells  # one interval per cell for the flows and one for the criterion
    z = float(norm.ppf(1 - mc_alpha / (2 * n_tests)))  # two-sided, Bonferroni: family-wise error mc_alpha
    rows = [f"{'sigma':>6}{'p+q':>6}{'exact (eq)':>11}{'criterion':>11}{'integrated flows [Wilson CI]':>30}"
            f"{'flow=predict':>14}  in CI"]
    mc, inside, crit_inside, worst_dev, agree_min, small = {}, 0, 0, 0.0, (n_mc + 1, None), {}
    for sigma in sigmas:
        ec, wc = rng.normal(0, sigma, (2, n_criterion))
        e0, w0 = rng.normal(0, sigma, (2, n_mc))
        for p, q in pq:
            exact = p_local_exact(sigma, p + q > 1)
            crit = float(np.mean(predict_limit(ec, wc, p, q).outcome == "local_min"))
            res = integrate_batch(e0, w0, p, q, t_max=horizon(p, q, t_eff), gtol="data")
            k = int(np.sum(res.outcome == "local_min"))
            lo, hi = wilson_interval(k, n_mc, z)
            clo, chi = wilson_interval(round(crit * n_criterion), n_criterion, z)
            k_agree = int(np.sum(res.outcome == predict_limit(e0, w0, p, q).outcome))
            agree_min = min(agree_min, (k_agree, (sigma, p, q)))
            inside, crit_inside = inside + bool(lo <= exact <= hi), crit_inside + bool(clo <= exact <= chi)
            worst_dev = max(worst_dev, abs(k / n_mc - exact) / math.sqrt(max(exact * (1 - exact), 1 / n_mc) / n_mc))
            mc[(sigma, p, q)] = (exact, crit, k / n_mc, lo, hi)
            if sigma == sigmas[0]:
                small[(p, q)] = k if p + q > 1 else n_mc - k  # flows that end as the limit sigma -> 0 says
            rows.append(f"{sigma:>6.2f}{p + q:>6.2f}{fixed(exact, 4):>11}{fixed(crit, 4):>11}{fraction(k, n_mc):>12} "
                        f"[{fixed(lo, 3)}, {fixed(hi, 3)}]{fraction(k_agree, n_mc):>14}  {yes_no(lo <= exact <= hi)}")
    rows.append(f"(Wilson intervals at z = {z:.2f}: level 1 - {mc_alpha:g}/{n_tests} each, family-wise error "
                f"{mc_alpha:g})")
    worst_small = min(small, key=small.get)
    return SimpleNamespace(mc=mc, inside=inside, crit_inside=crit_inside, n_cells=n_cells, n_tests=n_tests, z=z,
                           worst_dev=worst_dev, agree_min=agree_min, small=small, worst_small=worst_small,
                           n_flows=n_cells * n_mc, text="\n".join(rows))


def sigma_limits(sigma_small, sigma_big=1e3):
    """eq-p-local at a small and a large sigma: ``small`` = (p + q > 1, p + q < 1) at sigma_small, ``big`` likewise at
    sigma_big; ``ok`` when small is within 0.01 of (1, 0) and big within 0.01 of (1/2, 1/4)."""
    s, b = checks.positive_real("sigma_small", sigma_small), checks.positive_real("sigma_big", sigma_big)
    small, big = (p_local_exact(s, True), p_local_exact(s, False)), (p_local_exact(b, True), p_local_exact(b, False))
    ok = small[0] > 0.99 and small[1] < 0.01 and abs(big[0] - 0.5) < 0.01 and abs(big[1] - 0.25) < 0.01
    text = (f"sigma = {b:g}: exact P_min = {big[0]:.4f} (p+q > 1), {big[1]:.4f} (p+q < 1); sigma = {s:g}: "
            f"{small[0]:.4f}, {small[1]:.4f}")
    return SimpleNamespace(small=small, big=big, ok=bool(ok), text=text)


def gd_drift(pq, init, T, lrs, slope_tol, ratio_tol):
    """eq-gd-drift: gradient descent (``flow.gradient_descent``) from ``init`` for time ``T`` at each step size of
    ``lrs``; ``drift`` = E_T - E_0 per step size, ``K1`` = (1/2) int grad L^T Hess E grad L dt along a
    ``flow.integrate`` trajectory (trapezoidal rule), ``slope`` the log-log slope of |drift| against the step,
    ``ratio_last`` = drift / (K1 step) at the smallest step; ``ok`` when |slope - 1| < slope_tol, |ratio_last - 1| <
    ratio_tol and |ratio - 1| falls with the step."""
    (p, q), = chains("pq", [pq])
    e0, w0 = (float(x) for x in init)
    T = checks.positive_real("T", T)
    lrs = np.array([checks.positive_real("lrs", lr) for lr in lrs])
    if lrs.size < 2:
        raise ValueError(f"lrs must hold at least two step sizes, got {lrs.tolist()}")
    tr = integrate(e0, w0, p, q, t_max=T, n_points=4000)
    ge, gw = canonical.grad(tr.e, tr.w, p, q)
    K1 = float(0.5 * trapezoid(2 * ge ** 2 + (-2 + np.sign(tr.w) / tr.w ** 2) * gw ** 2, tr.t))
    drift = []
    for lr in lrs:
        steps = int(round(T / lr))
        th = gradient_descent(e0, w0, p, q, lr=lr, steps=steps, record_every=steps)
        drift.append(float(energy(th[-1, 0, 0], th[-1, 0, 1]) - energy(e0, w0)))
    drift = np.array(drift)
    slope = float(np.polyfit(np.log(lrs), np.log(np.abs(drift)), 1)[0])
    ratio_last = float(drift[-1] / (K1 * lrs[-1]))
    ok = bool(abs(slope - 1) < slope_tol and abs(ratio_last - 1) < ratio_tol
              and np.all(np.diff(np.abs(drift / (K1 * lrs) - 1)) < 0))
    rows = [f"p = {p}, q = {q}, start {list(init)}, T = {T}: K1 = {fixed(K1, 4)} (from the flow)",
            f"{'step':>8}{'E_T - E_0':>12}{'K1 * step':>12}{'ratio':>8}"]
    rows += [f"{lr:>8.4f}{fixed(d, 4):>12}{fixed(K1 * lr, 4):>12}{fixed(d / (K1 * lr), 3):>8}"
             for lr, d in zip(lrs, drift)]
    rows.append(f"log-log slope of |drift| vs step: {fixed(slope, 3)}")
    return SimpleNamespace(lrs=lrs, drift=drift, K1=K1, slope=slope, ratio_last=ratio_last, ok=ok, T=T,
                           text="\n".join(rows))


def iid_flow(pq, init, t_eff):
    """p + q = 1: one ``flow.integrate`` trajectory from ``init`` against the algebraic law |e(t)| ~ 1/(2|m(w_inf)|
    sqrt(g''(0) t)), w_inf from ``predict_limit``; ``ok`` when the limit is global, the ratio |e| / law is within
    0.01 of 1 at the horizon, the energy drift below 1e-6 and w within 1e-3 of w_inf."""
    (p, q), = chains("pq", [pq])
    if not canonical.is_iid(p, q):
        raise ValueError(f"pq must have p + q = 1 (i.i.d. data), got ({p}, {q})")
    tr = integrate(*init, p, q, t_max=horizon(p, q, t_eff))  # g'(0) = 0: the horizon cap
    pr = predict_limit(*init, p, q)
    m_inf = 1 + 2 * pr.w * abs(pr.w)
    law = 1 / (2 * abs(m_inf) * np.sqrt(canonical.reduced_loss_hess(0.0, p, q) * tr.t[1:]))
    ratio = np.abs(tr.e[1:]) / law
    gap = float(canonical.loss(tr.e[-1], tr.w[-1], p, q) - MarkovChain(p, q).entropy_rate)
    ok = bool(pr.outcome == "global_min" and abs(ratio[-1] - 1) < 0.01 and tr.energy_drift < 1e-6
              and abs(tr.w[-1] - pr.w) < 1e-3)
    text = (f"p = {p}, q = {q}, start {list(init)}: predicted {pr.outcome} at w = {fixed(pr.w, 4)}; energy drift "
            f"{bound(tr.energy_drift, 1e-6)}\nat t = {tr.t[-1]:.0e}: |e| = {abs(tr.e[-1]):.2e}, law {law[-1]:.2e}, "
            f"ratio {fixed(ratio[-1], 3)}; loss gap to the entropy rate {bound(gap, 1e-6)}")
    return SimpleNamespace(t=tr.t[1:], e=np.abs(tr.e[1:]), law=law, ratio=float(ratio[-1]), ok=ok, p=p, q=q,
                           text=text)
