"""The bias as a free parameter (eq-energy-balance) for the chapter gradient_flow_energy: free-bias flows against
the b*-reduced theorems, and gradient descent with one extra bias step per update. Each function returns its
measurements and the table it prints (``.text``) as a ``types.SimpleNamespace``; the chapter records the claims.

* :func:`free_bias_grids`: ``bias_flow.integrate_free_bias`` on a grid, from b0 = b*(e0, w0) and from b0 = 0, against
  ``predict_limit`` read off at t = 0 and at the catch-up time (the first sampled time with |dL/db| < bias_caught);
  every disagreement must be a flow whose energy crossed E_sad; the integrated balance E(end) - E(0) = J.
* :func:`extra_bias_step`: ``bias_flow.gradient_descent_free_bias`` with one Newton bias step per update
  (``bias_steps=1``) and without (``bias_steps=0``) against ``flow.gradient_descent`` on the reduced loss.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..book.formatting import bound, fixed, fraction
from ..numerics import checks
from . import bias_flow, canonical
from .energy import SADDLE_ENERGY, energy, predict_limit
from .energy_checks import chains
from .flow import gradient_descent, horizon

__all__ = ["free_bias_grids", "extra_bias_step"]


def free_bias_grids(pq, n_free, grid_box, t_eff, bias_caught, n_times=160):
    """Free-bias flows on an ``n_free`` x ``n_free`` grid of [-grid_box, grid_box]^2 per chain and initial bias
    ("b*": b*(e0, w0); "0"), sampled at ``n_times`` log-spaced times to t_eff / |g'(0)|.

    ``lowest`` = (share, (p, q, b0)): the lowest share of a grid whose end agrees with ``predict_limit`` applied at
    the catch-up time (for b0 = b*, also from t = 0, where the two coincide); ``lowest_t0``: the same from t = 0 for
    b0 = 0; ``n_cross`` of ``n_dis`` disagreements (with the rule from t = 0) crossed E_sad; ``worst_bal`` the largest
    |E(end) - E(0) - J| / (1 + |J|); ``free[(p, q, b0)]`` = (FreeBiasResult, prediction, agree, agree_caught)."""
    pq, n_free = chains("pq", pq), checks.positive_int("n_free", n_free)
    grid_box, bias_caught = checks.positive_real("grid_box", grid_box), checks.positive_real("bias_caught", bias_caught)
    grid = np.linspace(-grid_box, grid_box, n_free)
    E0f, W0f = np.meshgrid(grid, grid, indexing="ij")
    rows = [f"{'p':>5}{'q':>5}{'b0':>4}{'flows':>6}{'Thms 2/8 from t = 0':>21}{'from catch-up':>15}"
            f"{'median|dE|':>11}{'max|dE|':>8}{'balance':>9}{'crossed':>9}"]
    free, worst_bal, lowest, lowest_t0, n_cross, n_dis = {}, 0.0, (2.0, None), (2.0, None), 0, 0
    for p, q in pq:
        pred = predict_limit(E0f, W0f, p, q).outcome
        T = horizon(p, q, t_eff)
        t_path = np.concatenate([[0.0], np.geomspace(1e-3 * T / 2e4, T, n_times)])
        for name, b0 in (("b*", canonical.optimal_bias(E0f, W0f, p, q)), ("0", np.zeros_like(E0f))):
            r = bias_flow.integrate_free_bias(E0f, W0f, b0, p, q, t_max=T, t_eval=t_path)
            agree = r.outcome == pred
            k, n = int(agree.sum()), agree.size
            # the reduced theorems applied from the first sampled time at which |dL/db| < bias_caught
            Fb = np.abs(canonical.grad(r.path[:, 0], r.path[:, 1], p, q, b=r.path[:, 2])[2])
            first, caught = np.argmax(Fb < bias_caught, axis=0), np.any(Fb < bias_caught, axis=0)
            e1 = np.take_along_axis(r.path[:, 0], first[None], 0)[0]
            w1 = np.take_along_axis(r.path[:, 1], first[None], 0)[0]
            agree_eq = caught & (predict_limit(e1, w1, p, q).outcome == r.outcome)
            k_eq = int(agree_eq.sum())
            E_path = energy(r.path[:, 0], r.path[:, 1]) - SADDLE_ENERGY  # (times, n_free, n_free)
            crossed = (E_path.min(axis=0) <= 0) & (E_path.max(axis=0) >= 0)
            n_cross, n_dis = n_cross + int(crossed[~agree].sum()), n_dis + int((~agree).sum())
            bal = float((np.abs(r.energy_drift - r.balance) / (1 + np.abs(r.balance))).max())
            worst_bal = max(worst_bal, bal)
            lowest = min(lowest, (k_eq / n, (p, q, name)))  # the claim: from the catch-up time (= t = 0 for b0 = b*)
            if name == "b*":
                lowest = min(lowest, (k / n, (p, q, name)))
            else:
                lowest_t0 = min(lowest_t0, (k / n, (p, q, name)))
            free[(p, q, name)] = (r, pred, agree, agree_eq)
            rows.append(f"{p:>5.2f}{q:>5.2f}{name:>4}{n:>6}{fraction(k, n):>21}{fraction(k_eq, n):>15}"
                        f"{fixed(np.median(np.abs(r.energy_drift)), 2):>11}{fixed(np.abs(r.energy_drift).max(), 1):>8}"
                        f"{bound(bal, 1e-4):>9}{fraction(crossed[~agree].sum(), (~agree).sum()):>9}")
    median_drift = max(float(np.median(np.abs(v[0].energy_drift))) for v in free.values())
    return SimpleNamespace(grid=grid, free=free, worst_bal=worst_bal, lowest=lowest, lowest_t0=lowest_t0,
                           n_cross=n_cross, n_dis=n_dis, median_drift=median_drift, n_flows=2 * len(pq) * n_free ** 2,
                           n_times=n_times + 1, text="\n".join(rows))


def extra_bias_step(pq, n, grid_box, T, lrs, min_order, min_gap):
    """On an ``n`` x ``n`` grid of [-grid_box, grid_box]^2, from b0 = b*, for time ``T`` at each step size of ``lrs``:
    the median over starts of max |(e, w) - reduced| after gradient descent with one Newton bias step per update
    (``extra``) and with none (``joint``). ``orders``: the log-log slope of the extra-step error per chain;
    ``min_ratio``: the smallest joint / extra; ``ok`` when every order is at least ``min_order`` and joint is at least
    ``min_gap`` times extra at every step."""
    pq, n = chains("pq", pq), checks.positive_int("n", n)
    grid_box, T = checks.positive_real("grid_box", grid_box), checks.positive_real("T", T)
    lrs = [checks.positive_real("lrs", lr) for lr in lrs]
    if len(lrs) < 2:
        raise ValueError(f"lrs must hold at least two step sizes, got {lrs}")
    g = np.linspace(-grid_box, grid_box, n)
    e0, w0 = (x.ravel() for x in np.meshgrid(g, g, indexing="ij"))
    rows = [f"{'p':>5}{'q':>5}{'step':>8}{'median |extra - reduced|':>26}{'median |joint - reduced|':>26}"]
    ok, orders, min_ratio = True, [], np.inf
    for p, q in pq:
        b0 = canonical.optimal_bias(e0, w0, p, q)
        med_ext, med_joint = [], []
        for lr in lrs:
            steps = int(round(T / lr))
            red = gradient_descent(e0, w0, p, q, lr=lr, steps=steps, record_every=steps)[-1]
            dist = [float(np.median(np.abs(bias_flow.gradient_descent_free_bias(
                e0, w0, b0, p, q, lr, steps, bias_steps=k, record_every=steps)[-1][:, :2] - red).max(axis=1)))
                for k in (1, 0)]
            med_ext.append(dist[0])
            med_joint.append(dist[1])
            rows.append(f"{p:>5.2f}{q:>5.2f}{lr:>8.4f}{med_ext[-1]:>26.0e}{med_joint[-1]:>26.1f}")
        order = float(np.polyfit(np.log(lrs), np.log(med_ext), 1)[0])
        orders.append(order)
        ok &= order >= min_order and all(j >= min_gap * x for j, x in zip(med_joint, med_ext))
        min_ratio = min(min_ratio, min(j / x for j, x in zip(med_joint, med_ext)))
        rows.append(f"{'':>10}log-log slope of the extra-step error: {fixed(order, 1)}")
    return SimpleNamespace(orders=orders, min_ratio=float(min_ratio), ok=bool(ok), text="\n".join(rows))
