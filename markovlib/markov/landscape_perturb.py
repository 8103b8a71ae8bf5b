"""The perturbation tests of the chapter loss_landscape on the degenerate w-axis (Thm 1 (ii)-(iv); Thm 7 with the
bias), where the Hessian cannot classify the critical points. Each function returns its measurements with the table it
prints (``.text``) as a ``types.SimpleNamespace``; the chapter records the claims.

* :func:`axis_points`: the tested axis points, at least 2r from the saddle.
* :func:`axis_perturbation`: Delta L = L(e', w') - H(pi) in discs around axis points against the sign law
  sign(Delta L) = sign((p + q - 1) m(w')) (eq-axis-sign), checked wherever a convexity lower bound on |Delta L|
  exceeds the rounding level tau; the other perturbations must stay within |g'(0)c'| + M c'^2/2 + tau.
* :func:`lifted_perturbation`: the same in balls in (e, w, b) around the lifted axis points.
* :func:`smallest_rate`: the smallest |g'(0)| = pq|p+q-1|/(p+q)^2 on a grid of the range at a margin.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from ..book.formatting import fixed, yes_no
from ..numerics import checks
from . import canonical
from .chain import MarkovChain
from .checks import ball, disc
from .energy_checks import chains

__all__ = ["axis_points", "axis_perturbation", "lifted_perturbation", "smallest_rate"]


def axis_points(n_axis, radius):
    """``n_axis`` points of [-2, 2] on the w-axis, without those within 2 radius of the saddle -1/sqrt2."""
    n_axis, radius = checks.positive_int("n_axis", n_axis), checks.positive_real("radius", radius)
    w = np.linspace(-2, 2, n_axis)
    return w[np.abs(w - canonical.W_SADDLE) > 2 * radius]


def _kind(w0, p, q, names=("local_min", "local_max")):
    if w0 == canonical.W_SADDLE:
        return "saddle"
    return names[0] if (p + q - 1) * (w0 - canonical.W_SADDLE) > 0 else names[1]


def axis_perturbation(pq, w_test, n_perturb, radius, tau, rng, min_resolved):
    """Thm 1 (ii)-(iv): ``n_perturb`` perturbations uniform in the disc of radius ``radius`` around each (0, w) of
    ``w_test`` and five times as many around the saddle, per chain.

    Per point the sign law holds on every resolvable perturbation (convexity bound |Delta L| >= |g'(0)c'| away from
    c*, >= |c'|/|c*| (H(pi) - g(c*)) towards it, above ``tau``) and the rest are within |g'(0)c'| + M c'^2/2 + tau
    (M = min(pi_0, pi_1)/4 bounds g''); ``n_law`` of ``n_pts`` points pass. ``ok`` also needs: no local minimum
    undercut and no local maximum exceeded beyond tau, the saddle's disc about half positive and half negative,
    ``canonical.classify`` agreeing, the rounding floor max |L(0, w) - H(pi)| (``floor``) below tau, and
    ``resolved``, the smallest resolvable fraction of a disc, at least ``min_resolved``."""
    pq, n_perturb = chains("pq", pq), checks.positive_int("n_perturb", n_perturb)
    radius, tau = checks.positive_real("radius", radius), checks.positive_real("tau", tau)
    if not 0 <= min_resolved <= 1:
        raise ValueError(f"min_resolved must be a fraction in [0, 1], got {min_resolved!r}")
    w_sad = canonical.W_SADDLE
    ok, floor, resolved, n_law, n_pts, by_chain = True, 0.0, 1.0, 0, 0, {}
    for p, q in pq:
        H_pi = MarkovChain(p, q).marginal_entropy
        gp0 = p * q * (p + q - 1) / (p + q) ** 2
        M2 = min(p, q) / (p + q) / 8  # M / 2 with M = min(pi_0, pi_1) / 4, the bound on g''
        cs, gap = canonical.c_star(p, q), H_pi - MarkovChain(p, q).entropy_rate  # c* and g(0) - g(c*)
        floor = max(floor, float(np.abs(canonical.loss(np.zeros_like(w_test), w_test, p, q) - H_pi).max()))
        stats = {}
        for w0 in list(w_test) + [w_sad]:
            de, dw = disc(rng, n_perturb * (5 if w0 == w_sad else 1), radius)
            dL = canonical.loss(de, w0 + dw, p, q) - H_pi
            mm = 1 + 2 * (w0 + dw) * np.abs(w0 + dw)
            cp = de ** 2 * mm
            lower = np.where(gp0 * cp > 0, np.abs(gp0 * cp), np.abs(cp) / abs(cs) * gap)  # convexity of g
            res = lower > tau
            law = bool(np.array_equal(np.sign(dL[res]), np.sign((p + q - 1) * mm[res])))
            law &= bool(np.all(np.abs(dL[~res]) <= np.abs(gp0 * cp[~res]) + M2 * cp[~res] ** 2 + tau))
            n_law, n_pts = n_law + law, n_pts + 1
            kind = _kind(w0, p, q)
            s = stats.setdefault(kind, dict(n=0, pos=[], neg=[], big=0.0, law=True, cls=True, res=[], lo=np.inf,
                                            hi=-np.inf))
            s["n"] += 1
            s["pos"].append(np.mean(dL > 0))
            s["neg"].append(np.mean(dL < 0))
            s["res"].append(np.mean(res))
            s["big"], s["lo"], s["hi"] = max(s["big"], np.abs(dL).max()), min(s["lo"], dL.min()), max(s["hi"], dL.max())
            s["law"] &= law
            s["cls"] &= canonical.classify(0.0, w0, p, q) == kind
        sad = stats["saddle"]
        resolved = min(resolved, min(min(s["res"]) for s in stats.values()))
        ok &= (stats["local_min"]["lo"] > -tau and stats["local_max"]["hi"] < tau and 0.4 < sad["pos"][0] < 0.6
               and 0.4 < sad["neg"][0] < 0.6 and all(s["law"] and s["cls"] for s in stats.values()))
        by_chain[(p, q)] = stats
    ok &= floor < tau and resolved >= min_resolved
    rows = [f"{'p':>5}{'q':>5}{'type':>11}{'points':>8}{'dL > 0':>8}{'dL < 0':>8}{'max|dL|':>10}{'resolved':>10}"
            f"{'sign law':>10}{'classify':>10}"]
    rows += [f"{p:>5.2f}{q:>5.2f}{kind:>11}{s['n']:>8}{fixed(np.mean(s['pos']), 2):>8}{fixed(np.mean(s['neg']), 2):>8}"
             f"{s['big']:>10.1e}{fixed(min(s['res']), 4):>10}{yes_no(s['law']):>10}{yes_no(s['cls']):>10}"
             for (p, q), stats in by_chain.items() for kind, s in stats.items()]
    return SimpleNamespace(ok=bool(ok), floor=floor, resolved=float(resolved), n_law=n_law, n_pts=n_pts,
                           by_chain=by_chain, text="\n".join(rows))


def lifted_perturbation(pq, w_test, n_perturb, radius, tau, rng):
    """Thm 7: ``n_perturb`` perturbations uniform in the ball of radius ``radius`` in (e, w, b) around each lifted
    axis point (0, w, log(p/q)) of ``w_test`` and five times as many around the saddle. ``ok``: around the minima
    Delta L > -tau (``min_lo`` the smallest), around the lifted maxima and the saddle both signs beyond tau
    (``n_both`` of ``n_sad``)."""
    pq, n_perturb = chains("pq", pq), checks.positive_int("n_perturb", n_perturb)
    radius, tau = checks.positive_real("radius", radius), checks.positive_real("tau", tau)
    w_sad = canonical.W_SADDLE
    rows = [f"{'p':>5}{'q':>5}{'lifted set':>16}{'points':>8}{'dL > 0':>9}{'dL < 0':>9}{'max|dL|':>10}  verdict"]
    ok, min_lo, n_both, n_sad = True, np.inf, 0, 0
    for p, q in pq:
        H_pi, b0, res = MarkovChain(p, q).marginal_entropy, math.log(p / q), {}
        for w0 in list(w_test) + [w_sad]:
            d = ball(rng, n_perturb * (5 if w0 == w_sad else 1), radius)
            dL = canonical.loss(d[:, 0], w0 + d[:, 1], p, q, b=b0 + d[:, 2]) - H_pi
            kind = _kind(w0, p, q, ("min", "max -> saddle"))
            both = bool(dL.min() < -tau and dL.max() > tau)  # both signs, each beyond the rounding level
            s = res.setdefault(kind, dict(n=0, pos=[], neg=[], big=0.0, both=True, lo=np.inf))
            s["n"] += 1
            s["pos"].append(np.mean(dL > 0))
            s["neg"].append(np.mean(dL < 0))
            s["big"], s["both"], s["lo"] = max(s["big"], np.abs(dL).max()), s["both"] and both, min(s["lo"], dL.min())
            if kind == "min":
                min_lo = min(min_lo, dL.min())
            else:
                n_sad, n_both = n_sad + 1, n_both + both
        ok &= res["min"]["lo"] > -tau and res["max -> saddle"]["both"] and res["saddle"]["both"]
        for kind, s in res.items():
            verdict = (f"never below H(pi) - tau: {yes_no(s['lo'] > -tau)}" if kind == "min"
                       else f"both signs: {yes_no(s['both'])}")
            rows.append(f"{p:>5.2f}{q:>5.2f}{kind:>16}{s['n']:>8}{fixed(np.mean(s['pos']), 2):>9}"
                        f"{fixed(np.mean(s['neg']), 2):>9}{s['big']:>10.1e}  {verdict}")
    return SimpleNamespace(ok=bool(ok), min_lo=float(min_lo), n_both=n_both, n_sad=n_sad, text="\n".join(rows))


def smallest_rate(margin, lo=0.02, hi=0.98, n=481):
    """min |g'(0)| = pq|p + q - 1|/(p + q)^2 over an n x n grid of [lo, hi]^2 with |p + q - 1| >= margin."""
    margin = checks.positive_real("margin", margin)
    if not 0 < lo < hi < 1:
        raise ValueError(f"need 0 < lo < hi < 1, got lo = {lo!r}, hi = {hi!r}")
    PP, QQ = np.meshgrid(np.linspace(lo, hi, n), np.linspace(lo, hi, n))
    rate = PP * QQ * np.abs(PP + QQ - 1) / (PP + QQ) ** 2
    return float(rate[np.abs(PP + QQ - 1) >= margin - 1e-12].min())
