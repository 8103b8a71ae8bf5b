"""Where the gradient flow ends (Thms 2, 8; Lemmas 10, 11) for the chapter gradient_flow_energy: integrated flows
against the theorem rules (``energy_reference.theorem_rule``) and ``energy.predict_limit``. Each function returns
its measurements and the table it prints (``.text``) as a ``types.SimpleNamespace``; the chapter records the claims.

* :func:`basin_maps`: dense grids of initializations, with the band law for the undecided flows next to a
  separatrix (every disagreement within |E0 - E_sad| < kappa / t_eff^2).
* :func:`separatrix_arms`: the four arms of {E = E_sad} and the invariant lines e = 0, w = 0.
* :func:`good_region`: the data-agnostic region {w < 0, E > E_sad} (a global minimum for every chain).
* :func:`guideline_points`: the authors' initialization (-2 sqrt2, -16) (outside the region) and (1, -1) (inside).
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from ..book.formatting import bound, fixed, fraction, yes_no
from ..numerics import checks
from . import energy_reference
from .canonical import W_SADDLE, classify
from .drawings import saddle_asymptotes
from .energy import SADDLE_ENERGY, energy, predict_limit
from .energy_checks import chains
from .flow import data_rate, horizon, integrate, integrate_batch

__all__ = ["basin_maps", "separatrix_arms", "good_region", "guideline_points"]


def basin_maps(pq, n_grid, grid_box, t_eff, kappa, max_disagree):
    """Thms 2, 8 on an ``n_grid`` x ``n_grid`` grid of [-grid_box, grid_box]^2 per chain: ``flow.integrate_batch``
    (gtol="data", to t_eff / |g'(0)|) against ``theorem_rule`` and ``predict_limit``.

    ``n_dis``: flows that differ from the rule; ``all_undecided``: every one of them undecided at the horizon;
    ``band_max``: their largest |E0 - E_sad| in units of the band kappa / t_eff^2 (the band law); ``n_rule_pred``:
    grid points where ``predict_limit`` differs from the rule; ``ok_limits`` (Lemmas 10, 11): the agreeing flows end
    within 1e-4 of ``predict_limit`` with drift < 1e-6, and at least 1 - max_disagree of each map converged.
    ``basins[(p, q)]`` = (BatchResult, Limit, rule) for the figures."""
    pq, n_grid = chains("pq", pq), checks.positive_int("n_grid", n_grid)
    grid_box, kappa = checks.positive_real("grid_box", grid_box), checks.positive_real("kappa", kappa)
    t_eff = checks.positive_real("t_eff", t_eff)
    if not 0 <= max_disagree <= 1:
        raise ValueError(f"max_disagree must be a share in [0, 1], got {max_disagree!r}")
    grid = np.linspace(-grid_box, grid_box, n_grid)
    E0g, W0g = np.meshgrid(grid, grid, indexing="ij")  # E0g: the e0 values (rows), W0g: the w0 values
    band = kappa / t_eff ** 2
    rows = [f"{'p':>5}{'q':>5}{'flows':>7}{'undecided':>11}{'flow != rule':>14}{'predict != rule':>17}{'max drift':>11}"
            f"{'max|limit err|':>16}"]
    basins, dis, n_rule_pred, ok_limits = {}, [], 0, True
    worst = dict(drift=0.0, lim=0.0, share=0.0)
    for p, q in pq:
        res = integrate_batch(E0g, W0g, p, q, t_max=horizon(p, q, t_eff), gtol="data")
        pred = predict_limit(E0g, W0g, p, q)
        rule = energy_reference.theorem_rule(E0g, W0g, p, q)
        basins[(p, q)] = (res, pred, rule)
        agree = res.outcome == rule
        lim_err = max(np.abs(res.e[agree] - pred.e[agree]).max(), np.abs(res.w[agree] - pred.w[agree]).max())
        for i in zip(*np.nonzero(~agree)):
            dis.append((res.outcome[i], abs(energy(E0g[i], W0g[i]) - SADDLE_ENERGY) / band))
        n_dis, n_rp = int(np.sum(~agree)), int(np.sum(rule != pred.outcome))
        drift = float(np.nanmax(res.energy_drift))
        n_rule_pred += n_rp
        ok_limits &= drift < 1e-6 and lim_err < 1e-4 and res.converged.mean() >= 1 - max_disagree
        worst = dict(drift=max(worst["drift"], drift), lim=max(worst["lim"], lim_err),
                     share=max(worst["share"], n_dis / res.outcome.size))
        rows.append(f"{p:>5.2f}{q:>5.2f}{res.outcome.size:>7}{int(np.sum(res.outcome == 'undecided')):>11}{n_dis:>14}"
                    f"{n_rp:>17}{bound(drift, 1e-7):>11}{bound(lim_err, 1e-5):>16}")
    n_total = n_grid * n_grid * len(pq)
    band_max = max([d[1] for d in dis], default=0.0)
    all_undecided = all(d[0] == "undecided" for d in dis)
    rows.append(f"\nflows that differ from the rule: {len(dis)} of {n_total}, all undecided at the horizon: "
                f"{yes_no(all_undecided)}; largest |E0 - E_sad| among them: {fixed(band_max, 2)} of the band "
                f"kappa / t_eff^2 = {band:.2g}")
    return SimpleNamespace(grid=grid, basins=basins, n_total=n_total, n_dis=len(dis), n_rule_pred=n_rule_pred,
                           band=band, band_max=band_max, all_undecided=all_undecided, ok_limits=bool(ok_limits),
                           worst=worst, text="\n".join(rows))


def _end(tr, p, q):
    return classify(tr.e[-1], tr.w[-1], p, q, atol=1e-6), f"({fixed(tr.e[-1], 3)}, {fixed(tr.w[-1], 3)})"


def separatrix_arms(pq, t_eff):
    """Thms 2, 8 on measure-zero starts, per chain: the two saddle asymptotes ending at the saddle (``ok``: reached
    within 1e-3 with 4|g'(0)| t |e| within 0.02 of 1, the law |e| ~ 1/(4|g'(0)| t); ``law_dev``), the other two arms
    of {E = E_sad} from both signs of e0 (``ok_arms``: a global minimum within 1e-6 of ``predict_limit``, sign of e
    kept; ``n_arms`` of 4 per chain, ``arm_err``), and starts on the invariant lines e = 0, w = 0 (into ``ok``)."""
    pq = chains("pq", pq)
    rows, ok, ok_arms, law_dev, arm_err, n_arms = [], True, True, 0.0, 0.0, 0
    for p, q in pq:
        gp0, T = data_rate(p, q), horizon(p, q, t_eff)
        to_saddle, to_global = ((-0.4, -0.2), (-1.2, -2.0)) if p + q > 1 else ((-1.2, -2.0), (-0.4, -0.2))
        for w0 in to_saddle:  # the asymptote arms that end at the saddle
            e0 = float(saddle_asymptotes(w0))
            tr, pr = integrate(e0, w0, p, q, t_max=T), predict_limit(e0, w0, p, q)
            law = 4 * gp0 * tr.t[-1] * abs(tr.e[-1])
            dist = float(np.hypot(tr.e[-1], tr.w[-1] - W_SADDLE))
            good = pr.outcome == "saddle" and abs(law - 1) < 0.02 and tr.energy_drift < 1e-6 and dist < 1e-3
            ok, law_dev = ok and good, max(law_dev, abs(law - 1))
            rows.append((p, q, f"asymptote ({fixed(e0, 3)}, {w0})", pr.outcome,
                         f"dist. to saddle {dist:.0e}, 4|g'(0)| t |e| = {fixed(law, 3)}", good))
        for w0 in to_global:  # the other two arms of {E = E_sad}: Thm 2 (3) / Thm 8 say a global minimum
            for sign in (1.0, -1.0):
                e0 = sign * float(saddle_asymptotes(w0))
                tr, pr = integrate(e0, w0, p, q, t_max=T), predict_limit(e0, w0, p, q)
                reached, at = _end(tr, p, q)
                err = float(np.abs(np.array([tr.e[-1], tr.w[-1]]) - np.array([pr.e, pr.w])).max())
                good = (pr.outcome == reached == "global_min" and tr.energy_drift < 1e-6 and err < 1e-6
                        and np.sign(tr.e[-1]) == sign)
                ok_arms, arm_err, n_arms = ok_arms and good, max(arm_err, err), n_arms + int(good)
                rows.append((p, q, f"other arm ({fixed(e0, 3)}, {w0})", pr.outcome, f"reached {reached} at {at}", good))
        for e0, w0 in ((0.0, -1.2), (0.0, 0.3), (0.9, 0.0), (-0.9, 0.0)):
            tr, pr = integrate(e0, w0, p, q, t_max=T), predict_limit(e0, w0, p, q)
            reached, at = _end(tr, p, q)
            expected = classify(0.0, w0, p, q) if e0 == 0 else ("local_min" if p + q > 1 else "global_min")
            good = pr.outcome == reached == expected and np.allclose((tr.e[-1], tr.w[-1]), (pr.e, pr.w), atol=1e-6)
            ok = ok and good
            rows.append((p, q, f"({e0}, {w0})", pr.outcome, f"reached {reached} at {at}", good))
    text = "\n".join(f"{p:>4}{q:>5}  {start:<28}{pred:<12}{what:<52}{yes_no(good)}"
                     for p, q, start, pred, what, good in rows)
    return SimpleNamespace(ok=bool(ok), ok_arms=bool(ok_arms), law_dev=law_dev, arm_err=arm_err, n_arms=n_arms,
                           n_flows=len(rows), text=text)


def good_region(pq, n_good, t_eff, rng, box=3.0):
    """The data-agnostic region: ``n_good`` uniform draws of {w < 0, E > E_sad} within [-box, box] x [-box, 0) per
    chain, integrated by ``integrate_batch``; ``k_good`` of ``n`` reach a global minimum, ``drift`` the largest
    energy drift."""
    pq, n_good = chains("pq", pq), checks.positive_int("n_good", n_good)
    box = checks.positive_real("box", box)
    rows = [f"{'p':>6}{'q':>6}{'p+q':>6}{'inits':>7}{'to global':>11}{'max drift':>11}"]
    k_good, worst = 0, 0.0
    for p, q in pq:
        pts = []
        while len(pts) < n_good:
            e_try, w_try = rng.uniform(-box, box, 4 * n_good), -rng.uniform(1e-3, box, 4 * n_good)
            keep = energy(e_try, w_try) > SADDLE_ENERGY
            pts.extend(zip(e_try[keep], w_try[keep]))
        e_g, w_g = np.array(pts[:n_good]).T
        res = integrate_batch(e_g, w_g, p, q, t_max=horizon(p, q, t_eff), gtol="data")
        k, drift = int(np.sum(res.outcome == "global_min")), float(np.nanmax(res.energy_drift))
        k_good, worst = k_good + k, max(worst, drift)
        rows.append(f"{p:>6.2f}{q:>6.2f}{p + q:>6.2f}{n_good:>7}{fraction(k, n_good):>11}{bound(drift, 1e-7):>11}")
    return SimpleNamespace(k_good=k_good, n=n_good * len(pq), drift=worst, text="\n".join(rows))


def guideline_points(pq, t_eff, points=((-2 * math.sqrt(2), -16.0), (1.0, -1.0))):
    """For each start and chain, ``predict_limit`` and ``flow.integrate`` against the statement: a global minimum
    inside the region {w < 0, E > E_sad}; outside it (w0 < -1/sqrt2, E0 < E_sad) a global minimum iff p + q > 1.
    ``n_as_stated`` of ``n_cases`` (start, chain) cases end as stated."""
    pq = chains("pq", pq)
    rows = [f"\n{'start (e0, w0)':<22}{'E0':>9}{'in region':>11}  limits (predict_limit / integrate) for each chain"]
    n_as_stated, n_cases = 0, 0
    for e0, w0 in points:
        E0 = float(energy(e0, w0))
        inside = bool(w0 < 0 and E0 > SADDLE_ENERGY)
        outs = []
        for p, q in pq:
            pr = predict_limit(e0, w0, p, q)
            reached = _end(integrate(e0, w0, p, q, t_max=horizon(p, q, t_eff)), p, q)[0]
            expected = "global_min" if inside or p + q > 1 else "local_min"
            n_as_stated, n_cases = n_as_stated + (pr.outcome == reached == expected), n_cases + 1
            outs.append(f"({p},{q}): {pr.outcome}/{reached}")
        rows.append(f"({e0:.3f}, {w0:.1f}){'':<8}{E0:>9.2f}{yes_no(inside):>11}  " + "; ".join(outs))
    return SimpleNamespace(n_as_stated=int(n_as_stated), n_cases=n_cases, text="\n".join(rows))
