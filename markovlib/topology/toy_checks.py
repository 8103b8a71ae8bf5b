"""The claims of the chapter ``topo_obstruction`` on the Sec. 6 toy of Nurisso et al. (NeurIPS 2024, Fig. 3): the
three arms of runs (:mod:`markovlib.topology.toy`), what the obstructed and the unobstructed runs do, and the drift
of the balances c_k at the step h and at the step h_star that the O(h) drift predicts for the paper's 1 %.

* :func:`arm_runs` -- ``seeds`` runs per arm: obstructed c = (-|c|, -|c|), unobstructed with the paper's draw and
  with an active start, c = (-|c|, +|c|);
* :func:`obstructed_summary` and :func:`unobstructed_summary` -- the counts of the claims, with their report lines;
* :func:`drift_recheck` -- the largest relative drift, and the worst runs re-run at h_star over the same time.
"""
from __future__ import annotations

import numpy as np

from ..book.formatting import fixed, fraction
from ..book.inference import wilson_interval
from ..numerics import checks
from . import shallow_relu, toy

__all__ = ["ARMS", "arm_runs", "obstructed_summary", "unobstructed_summary", "drift_recheck"]

ARMS = ("obstructed", "unobstructed, paper's draw", "unobstructed, active start")


def arm_runs(seed, seeds, X, F, *, c_abs, lr, steps, learned_below) -> dict:
    """arm -> list of ``seeds`` :class:`toy.ToyRun` (:func:`toy.toy_draw` of (seed, s), then :func:`toy.toy_run`, the
    path saved for s = 0), for the arms of :data:`ARMS`."""
    seeds, c_abs = checks.positive_int("seeds", seeds), checks.positive_real("c_abs", c_abs)
    arms = dict(zip(ARMS, (([-c_abs, -c_abs], False), ([-c_abs, c_abs], False), ([-c_abs, c_abs], True))))
    return {k: [toy.toy_run(*toy.toy_draw(seed, s, c, active), X, F, c=c, lr=lr, steps=steps,
                            learned_below=learned_below, c_abs=c_abs, save_path=s == 0) for s in range(seeds)]
            for k, (c, active) in arms.items()}


def obstructed_summary(runs, bound, tau) -> dict:
    """Over the obstructed runs: pos (runs with both output weights positive at every step, Prop. 3), a_min, margin
    (smallest loss minus ``bound`` = 0.5 mean F^2) and margin_text (a bound 100x inside tau when above -1e-14), dead
    (runs ending with f = 0), above (runs with loss >= bound - ``tau`` at every step), n, and text (the report)."""
    if not runs:
        raise ValueError("runs must hold at least one run")
    n = len(runs)
    o = dict(n=n, pos=sum(bool(np.all(r.res.W2_min > 0)) for r in runs),
             a_min=min(float(r.res.W2_min.min()) for r in runs), margin=min(r.loss_min for r in runs) - bound,
             dead=sum(r.dead_end for r in runs), above=sum(r.loss_min >= bound - tau for r in runs))
    o["margin_text"] = "> -1e-14" if o["margin"] > -1e-14 else f"= {o['margin']:.1e}"
    o["text"] = (f"obstructed: runs with both output weights positive at every step: {fraction(o['pos'], n)} "
                 f"(smallest a_k over all steps {fixed(np.floor(o['a_min'] * 100) / 100, 2)}); runs that end dead "
                 f"(f = 0): {fraction(o['dead'], n)}\nobstructed: runs with L >= bound - tau at every step: "
                 f"{fraction(o['above'], n)}; smallest L - bound over all runs and steps {o['margin_text']}")
    return o


def unobstructed_summary(paper, active, dying_frac) -> dict:
    """Over the unobstructed runs with the paper's draw and the active start: learn_p, learn_a (runs that learned F),
    dead0 (paper's draw: the non-pathological neuron inactive on every point at the start) and dead0_learned,
    how_ok (every learner ends with a_2 < 0 and keeps a_1 > 0 at every step), fails and fail_dying (failed runs whose
    non-pathological neuron is active on fewer than ``dying_frac`` of the points), the 95 % Wilson intervals (lo_p,
    hi_p), (lo_a, hi_a), n, and text (the report)."""
    if not paper or len(paper) != len(active):
        raise ValueError("paper and active must hold the same positive number of runs")
    n, fails = len(paper), [r for r in paper + active if not r.learned]
    o = dict(n=n, learn_p=sum(r.learned for r in paper), learn_a=sum(r.learned for r in active),
             dead0=sum(r.dead0_2 for r in paper), dead0_learned=sum(r.learned for r in paper if r.dead0_2),
             how_ok=all(r.res.W2[1] < 0 and r.res.W2_min[0] > 0 for r in paper + active if r.learned),
             fails=len(fails), fail_dying=sum(r.active_2 < dying_frac for r in fails))
    o["lo_p"], o["hi_p"] = wilson_interval(o["learn_p"], n)
    o["lo_a"], o["hi_a"] = wilson_interval(o["learn_a"], n)
    o["text"] = "\n".join([
        f"unobstructed, paper's draw: learned {fraction(o['learn_p'], n)} (Wilson 95 % [{fixed(o['lo_p'], 2)}, "
        f"{fixed(o['hi_p'], 2)}]); non-pathological neuron dead at the start: {fraction(o['dead0'], n)}, of which "
        f"learned {o['dead0_learned']}",
        f"unobstructed, active start: learned {fraction(o['learn_a'], n)} (Wilson 95 % [{fixed(o['lo_a'], 2)}, "
        f"{fixed(o['hi_a'], 2)}])",
        f"failed runs (both arms) whose non-pathological neuron is active on < {dying_frac} of the points at the end: "
        f"{fraction(o['fail_dying'], o['fails'])}"])
    return o


def drift_recheck(runs, X, F, *, c_abs, lr, steps, target, n_recheck) -> dict:
    """The drift of the balances: drifts (relative, per run), worst, n_below (runs below ``target``), n_abs_below
    (absolute drift below ``target``), h_star = lr min(1, target / (2 worst)) and steps_star (the same training time
    lr steps), star (the ``n_recheck`` worst runs re-run at h_star: their relative drift), drift_star, ratio
    (drift_star over those runs' drift at lr; O(h) predicts h_star / lr), and text (the report)."""
    if not runs:
        raise ValueError("runs must hold at least one run")
    c_abs, lr = checks.positive_real("c_abs", c_abs), checks.positive_real("lr", lr)
    n_recheck = checks.positive_int("n_recheck", n_recheck)
    drifts = np.array([r.rel_drift for r in runs])
    worst = float(drifts.max())
    h_star = lr * min(1.0, target / (2 * worst))
    steps_star = int(np.ceil(lr * steps / h_star))
    order = np.argsort(-drifts)[:n_recheck]
    star = [float(shallow_relu.gradient_descent(runs[i].W1_0, runs[i].a_0, X, F, lr=h_star,
                                                steps=steps_star).balance_drift.max() / c_abs) for i in order]
    o = dict(drifts=drifts, worst=worst, n_below=int(np.sum(drifts < target)),
             n_abs_below=int(np.sum(drifts * c_abs < target)), h_star=h_star, steps_star=steps_star, star=star,
             drift_star=max(star), ratio=max(star) / float(drifts[order].max()))
    o["text"] = (f"h = {lr}: largest relative drift of c_k over {len(runs)} runs {fixed(100 * worst, 1)} %; below "
                 f"{100 * target:g} % in {fraction(o['n_below'], len(drifts))} runs; largest drift / |c_k| below 1 "
                 f"(signs kept)\nh = {lr}: largest absolute drift |c_k(t) - c_k(0)| {worst * c_abs:.1e}; below "
                 f"{target:g} in {fraction(o['n_abs_below'], len(drifts))} runs\nh_star = {h_star:.1e} ({steps_star} "
                 f"steps, same training time): the {n_recheck} worst runs drift by at most "
                 f"{fixed(100 * o['drift_star'], 2)} %; drift ratio {fixed(o['ratio'], 3)} against h_star / h = "
                 f"{fixed(h_star / lr, 3)}")
    return o
