"""The checks of the conserved energy (Lemmas 1, 9, 12) for the chapter gradient_flow_energy: each function runs one
step of the chapter and returns its measurements with the table it prints (``.text``), as a
``types.SimpleNamespace``; the chapter records the claims.

* :func:`gradient_identity`: grad E . grad c = 0 (Lemma 1) and the gradient of ``energy.energy`` by finite
  differences, at random points.
* :func:`independent_flows`: ``flow.integrate`` against an integration of -grad L that calls no markovlib function
  under test (torch autograd of ``reference.reduced_loss``, scipy's BDF), the energy by eq-energy.
* :func:`conservation`: the energy drift and sign(w) along ``flow.integrate`` trajectories (Lemmas 1, 9).
* :func:`axis_energy`: E(0, w) on grids of w < 0 and w > 0 (Lemma 12).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from scipy.integrate import solve_ivp

from ..book.formatting import bound, fixed, fraction, yes_no
from ..numerics import checks
from ..numerics.numdiff import fd_gradient
from . import energy_reference, reference
from .canonical import W_SADDLE
from .energy import SADDLE_ENERGY, energy
from .flow import horizon, integrate

__all__ = ["chains", "gradient_identity", "independent_flows", "conservation", "axis_energy"]


def chains(name, pq):
    """``pq`` as a list of (p, q) pairs of probabilities; a ValueError naming ``name`` otherwise."""
    try:
        out = [(float(p), float(q)) for p, q in pq]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of (p, q) pairs, got {pq!r}") from None
    if not out:
        raise ValueError(f"{name} must hold at least one chain")
    for p, q in out:
        checks.probability(f"{name}: p", p), checks.probability(f"{name}: q", q)
    return out


def gradient_identity(rng, n=2000, box=2.0):
    """Lemma 1 at ``n`` uniform points of [-box, box]^2: ``ortho`` = max |grad E . grad c| / sum |terms| (closed forms
    of ``energy_reference``) and ``fd_err`` = max relative error of finite differences of ``energy.energy`` against
    the closed form of grad E."""
    n, box = checks.positive_int("n", n), checks.positive_real("box", box)
    e_r, w_r = rng.uniform(-box, box, (2, n))
    grad_E = np.stack([fd_gradient(lambda x: energy(x[0], x[1]), (e, w), h=1e-6) for e, w in zip(e_r, w_r)], axis=1)
    closed = energy_reference.energy_gradient(e_r, w_r)
    terms = closed * energy_reference.coefficient_gradient(e_r, w_r)
    ortho = float(np.max(np.abs(terms.sum(0)) / (np.abs(terms).sum(0) + 1e-300)))
    fd_err = float(np.max(np.abs(grad_E - closed) / (1 + np.abs(closed))))
    text = (f"grad E: closed form vs finite differences of energy(), max rel. error {bound(fd_err, 1e-4)}\n"
            f"grad E . grad c = 0 at {n} random points: max |sum| / sum |terms| = {bound(ortho, 1e-12)}")
    return SimpleNamespace(ortho=ortho, fd_err=fd_err, n=n, text=text)


def independent_flows(pq, n_per_chain, t_eff, rng, box=1.8):
    """``n_per_chain`` flows per chain from uniform starts in [-box, box]^2 to t_eff / |g'(0)|: ``err`` = max
    |flow.integrate - BDF of reference.flow_field| at its output times, ``drift`` = max energy drift (eq-energy, by
    ``energy_reference.energy_formula``) along the independent flows."""
    pq, n_per_chain = chains("pq", pq), checks.positive_int("n_per_chain", n_per_chain)
    err, drift, n = 0.0, 0.0, 0
    for p, q in pq:
        T = horizon(p, q, t_eff)
        for e0, w0 in rng.uniform(-box, box, (n_per_chain, 2)):
            tr = integrate(e0, w0, p, q, t_max=T)
            ref = solve_ivp(reference.flow_field, (0.0, T), [e0, w0], method="BDF", t_eval=tr.t, rtol=1e-11,
                            atol=1e-13, jac=reference.flow_jacobian, args=(p, q))
            err = max(err, float(np.abs(ref.y - np.stack([tr.e, tr.w])).max()))
            E_ref = energy_reference.energy_formula(*ref.y)
            drift, n = max(drift, float(np.abs(E_ref - E_ref[0]).max())), n + 1
    text = (f"{n} flows: flow.integrate (markovlib, LSODA) vs torch autograd + scipy BDF: max |difference| "
            f"{bound(err, 1e-7)}; energy drift along the independent flows {bound(drift, 1e-7)}")
    return SimpleNamespace(err=err, drift=drift, n=n, text=text)


def conservation(pq, n_traj, t_eff, rng, axis_start=0.9, box=1.8):
    """Lemmas 1, 9: ``n_traj`` ``flow.integrate`` trajectories per chain from uniform starts in [-box, box]^2; ``ok``
    when every energy drift is below 1e-6 and sign(w) is kept, and the flow from (axis_start, 0) under the first
    chain stays on the e-axis (``axis_w`` = max |w| along it)."""
    pq, n_traj = chains("pq", pq), checks.positive_int("n_traj", n_traj)
    rows = [f"\n{'p':>5}{'q':>5}{'flows':>7}{'max drift':>11}{'max |E0|':>10}{'sign(w) kept':>14}"]
    ok, worst, kept_all = True, 0.0, 0
    for p, q in pq:
        inits = rng.uniform(-box, box, (n_traj, 2))
        drifts, kept = [], 0
        for e0, w0 in inits:
            tr = integrate(e0, w0, p, q, t_max=horizon(p, q, t_eff))
            drifts.append(tr.energy_drift)
            kept += bool(np.all(np.sign(tr.w) == np.sign(w0)))
        ok &= max(drifts) < 1e-6 and kept == n_traj
        worst, kept_all = max(worst, max(drifts)), kept_all + kept
        rows.append(f"{p:>5.2f}{q:>5.2f}{n_traj:>7}{bound(max(drifts), 1e-7):>11}"
                    f"{fixed(np.abs(energy(*inits.T)).max(), 3):>10}{fraction(kept, n_traj):>14}")
    tr_axis = integrate(axis_start, 0.0, *pq[0], t_max=horizon(*pq[0], t_eff))  # w0 = 0 (Lemma 9)
    ok &= bool(np.all(tr_axis.w == 0))
    axis_w = float(np.abs(tr_axis.w).max())
    rows.append(f"w0 = 0: max |w(t)| along the flow = {fixed(axis_w, 1)}")
    return SimpleNamespace(ok=bool(ok), drift=worst, kept=kept_all, n=n_traj * len(pq), axis_w=axis_w,
                           n_flows=n_traj * len(pq) + 1, text="\n".join(rows))


def axis_energy(n=40001, w_max=4.0):
    """Lemma 12 on grids of ``n`` points of [-w_max, -1e-3] and [1e-3, w_max]: ``checks`` maps each property (i)-(iv)
    to its outcome (monotone pieces, the maximum E_sad at -1/sqrt2, the limits at w = 0, the number of solutions
    of E(0, w) = E on w < 0 for five levels: 2 below E_sad, 0 above); ``w_at_max``, ``max_err``, ``n_sols``."""
    n, w_max = checks.positive_int("n", n), checks.positive_real("w_max", w_max)
    w_neg, w_pos = np.linspace(-w_max, -1e-3, n), np.linspace(1e-3, w_max, n)
    E_neg, E_pos = energy(0.0, w_neg), energy(0.0, w_pos)
    i_max = int(np.argmax(E_neg))
    out = {
        "(i) increasing on (-inf, -1/sqrt2]": bool(np.all(np.diff(E_neg[w_neg <= W_SADDLE]) > 0)),
        "(ii) decreasing on [-1/sqrt2, 0)": bool(np.all(np.diff(E_neg[w_neg >= W_SADDLE]) < 0)),
        "max over w < 0 at -1/sqrt2, value E_sad": bool(abs(w_neg[i_max] - W_SADDLE) <= 1e-4
                                                        and abs(E_neg.max() - SADDLE_ENERGY) < 1e-6),
        "(iv) decreasing on (0, inf)": bool(np.all(np.diff(E_pos) < 0)),
        "E(0, 0-) -> -inf, E(0, 0+) -> +inf": bool(energy(0.0, -1e-300) < -600 and energy(0.0, 1e-300) > 600),
    }
    n_sols = []
    for level in (-3.0, -1.0, SADDLE_ENERGY - 1e-3, SADDLE_ENERGY + 1e-3, 0.0):  # (iii): solutions on w < 0
        n_sol = int(np.sum(np.diff(np.sign(E_neg - level)) != 0))
        n_sols.append(n_sol)
        out[f"(iii) level {level:.4f}: {n_sol} solution(s) on w < 0"] = n_sol == (2 if level < SADDLE_ENERGY else 0)
    lines = [f"{k:<48} {yes_no(v)}" for k, v in out.items()]
    lines.append(f"max of E(0, w) over w < 0: {E_neg.max():.8f} at w = {w_neg[i_max]:.4f}; E_sad = {SADDLE_ENERGY:.8f}")
    return SimpleNamespace(checks=out, w_at_max=float(w_neg[i_max]), max_err=float(E_neg.max() - SADDLE_ENERGY),
                           n_sols=n_sols, text="\n".join(lines))
