"""The chapter ``attention``'s checks along integrated flows of the attention scalar (Makkuva et al., Lemmas 14-16,
Thm 3; the second invariant and the separatrix are beyond the paper).

* :func:`flow_checks`: LSODA flows (``flow.integrate``) from N(0, 0.8^2 I) starts: energy drift, |grad L| at the end,
  the end's class and |E_end - E0| (Lemmas 14-16, Thm 3 (i)); flows from w0 = 0 stay on the ea-plane (Thm 3 (ii)).
* :func:`independent_integration`: the first flow of each side against scipy's BDF on -grad of the independent
  ``reference.attention_loss`` (autograd), with its autograd Hessian as Jacobian.
* :func:`same_energy_starts`: starts on one energy surface E = E_sad - 0.4 (w0 = -0.3) that end in different basins.
* :func:`line_checks`: ``invariant.line_check`` along flows, a table; :func:`labelled_flow`: one flow and its
  check; :func:`control_flow`: the negative control, a flow whose a-velocity is scaled (not a gradient flow).
* :func:`separatrix_asymptote`: 1 - 2|a| e_S^2 = t^3/16 - 5t^6/256 + ... (t = 1/|a|), the series derived by sympy from
  u du/da = 4(1 + 2au) (eq-att-lines), against ``attention.separatrix_gap``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
import torch
from scipy.integrate import solve_ivp

from ..book.formatting import bound, fixed, fraction
from ..numerics import checks
from . import attention, canonical, invariant, reference
from .attention_model import as_generator
from .energy import SADDLE_ENERGY, energy
from .flow import horizon, integrate, integrate_batch

__all__ = ["FlowChecks", "flow_checks", "independent_integration", "same_energy_starts", "line_checks",
           "labelled_flow", "control_flow", "SeparatrixSeries", "separatrix_asymptote"]


def _triple(name, theta):
    theta = checks.finite_array(name, theta, ndim=1)
    if theta.size != 3:
        raise ValueError(f"{name} must be a start (e0, w0, a0), got {theta.size} entries")
    return theta


@dataclass
class FlowChecks:
    """traj: (p, q, theta0, Trajectory); ok and worst (drift, |grad L|, |E_end - E0|); plane_ok, plane_max (|w(t)|
    of the flows from w0 = 0); rows of the table."""
    traj: list
    ok: bool
    worst: np.ndarray
    plane_ok: bool
    plane_max: float
    rows: list

    def report(self) -> str:
        out = [f"{'p':>5}{'q':>5}  {'theta0':<24}{'energy drift':>13}{'|grad L| end':>13}  {'end point':<28}"
               f"{'class':<12}{'|E_end - E0|':>12}"]
        for p_, q_, th0, drift, gnorm, end, kind, dE in self.rows:
            end_txt = "(" + ", ".join(fixed(x, 4) for x in end) + ")"
            out.append(f"{p_:>5}{q_:>5}  {'(%.2f, %.2f, %.2f)' % tuple(th0):<24}{bound(drift, 1e-8):>13}"
                       f"{bound(gnorm, 1e-8):>13}  {end_txt:<28}{kind:<12}{bound(dE, 1e-8):>12}")
        out.append(f"w0 = 0: w(t) = 0 exactly along the integrated flows: {'yes' if self.plane_ok else 'no'}")
        return "\n".join(out)


def flow_checks(pq_pairs, plane_pairs, t_eff, rng, n=3) -> FlowChecks:
    """Lemmas 14-16 and Thm 3 along ``n`` LSODA flows per chain of ``pq_pairs`` from N(0, 0.8^2 I) starts (``rng``),
    run to t_eff / |g'(0)|: each must conserve E to 1e-6, end with |grad L| < 1e-6 at a critical point
    (``attention.classify``) with E_end = E0 to 1e-6. Flows from w0 = 0 (two per chain of ``plane_pairs``) must keep
    w(t) = 0 exactly."""
    t_eff = checks.positive_real("t_eff", t_eff)
    traj, rows, ok, worst = [], [], True, np.zeros(3)
    for p_, q_ in pq_pairs:
        for th0 in as_generator(rng).normal(0, 0.8, (checks.positive_int("n", n), 3)):
            tr = integrate(*th0[:2], p_, q_, a0=th0[2], t_max=horizon(p_, q_, t_eff))
            traj.append((p_, q_, th0, tr))
            end = np.array([tr.e[-1], tr.w[-1], tr.a[-1]])
            gnorm = float(np.linalg.norm(canonical.grad(*end[:2], p_, q_, a=end[2])))
            kind = attention.classify(*end, p_, q_, atol=1e-6)
            dE = abs(float(energy(*end)) - float(energy(*th0)))
            ok &= tr.energy_drift < 1e-6 and gnorm < 1e-6 and kind != "regular" and dE < 1e-6
            worst = np.maximum(worst, [tr.energy_drift, gnorm, dE])
            rows.append((p_, q_, th0, tr.energy_drift, gnorm, end, kind, dE))
    plane_ok, plane_max = True, 0.0
    for p_, q_ in plane_pairs:
        for e0, a0 in [(0.6, 0.3), (1.5, -0.4)]:
            tr = integrate(e0, 0.0, p_, q_, a0=a0, t_max=horizon(p_, q_, t_eff))
            plane_ok &= bool(np.all(tr.w == 0.0))
            plane_max = max(plane_max, float(np.abs(tr.w).max()))
    return FlowChecks(traj, bool(ok), worst, plane_ok, plane_max, rows)


def independent_integration(traj) -> tuple[float, int]:
    """The largest |difference| between ``flow.integrate``'s trajectory and scipy's BDF (rtol 1e-11) on
    -grad ``reference.attention_loss`` (torch autograd, optimal bias; Jacobian its autograd Hessian), for the first
    flow of ``traj`` (as from :func:`flow_checks`) on each side of p + q = 1; and the number of flows compared."""
    err, n = 0.0, 0
    for above in (True, False):
        found = [t for t in traj if (t[0] + t[1] > 1) == above]
        if not found:
            continue
        p_, q_, th0, tr = found[0]
        hess = torch.func.hessian(lambda z: reference.attention_loss(z[0], z[1], z[2], None, p_, q_))
        jac = lambda t, x: -hess(torch.tensor(x, dtype=torch.float64)).numpy()  # noqa: E731
        ref = solve_ivp(lambda t, x: -reference.attention_grad(x, p_, q_), (0.0, tr.t[-1]), th0, method="BDF",
                        t_eval=tr.t, rtol=1e-11, atol=1e-13, jac=jac)
        err, n = max(err, float(np.abs(ref.y - np.stack([tr.e, tr.w, tr.a])).max())), n + 1
    return err, n


def same_energy_starts(p, q, t_eff, max_steps, w0=-0.3, a0s=(0.0, 0.3, 0.6, 0.9, 1.2)):
    """Starts (e0, w0, a0) with E = E_sad - 0.4 (below E_sad: in 2-D, Thm 2, a start there goes to the local minimum
    for p + q > 1), integrated by ``flow.integrate_batch``. Returns (e0s, a0s, E_target, result, report text)."""
    a0s = checks.finite_array("a0s", a0s, ndim=1)
    target = SADDLE_ENERGY - 0.4
    e0s = np.sqrt(target + 2 * a0s**2 + w0**2 - np.log(abs(w0)))
    res = integrate_batch(e0s, np.full_like(a0s, w0), p, q, a0=a0s, max_steps=max_steps, t_max=horizon(p, q, t_eff),
                          gtol="data")
    out = [f"p={p}, q={q}, w0={w0}: all starts have E = {target:.4f} < E_sad = {SADDLE_ENERGY:.4f}",
           f"{'a0':>6}{'e0':>8}{'E(theta0)':>11}  {'reached':<12}{'limit (e, w, a)':<30}"]
    for i in range(a0s.size):
        lim = "(" + ", ".join(fixed(x, 4) for x in (res.e[i], res.w[i], res.a[i])) + ")"
        out.append(f"{a0s[i]:>6.2f}{e0s[i]:>8.4f}{float(energy(e0s[i], w0, a0s[i])):>11.4f}  {res.outcome[i]:<12}"
                   f"{lim:<30}")
    return e0s, a0s, target, res, "\n".join(out)


def line_checks(traj, line_tol) -> tuple[list, str]:
    """``invariant.line_check`` along each flow of ``traj`` (as from :func:`flow_checks`), and the table's text."""
    out = [f"{'p':>5}{'q':>5}  {'theta0':<24}{'line':<10}{'label':>9}{'distance / allowance':>22}{'smallest J':>12}"
           f"{'label bracketed':>17}"]
    cks = []
    for p_, q_, th0, tr in traj:
        ck = invariant.line_check(tr, line_tol)
        cks.append(ck)
        out.append(f"{p_:>5}{q_:>5}  {'(%.2f, %.2f, %.2f)' % tuple(th0):<24}"
                   f"{'A (R_0)' if ck['inside'] else 'a_Gamma':<10}{fixed(ck['label'], 4):>9}"
                   f"{bound(ck['ratio'], 1.0):>22}{ck['J_min']:>12.0e}"
                   f"{fraction(ck['n_points'] - ck['n_out'], ck['n_points']):>17}")
    return cks, "\n".join(out)


def labelled_flow(pq, theta0, t_eff, line_tol):
    """The LSODA flow of the chain ``pq`` from ``theta0`` = (e0, w0, a0) to t_eff / |g'(0)| and its
    ``invariant.line_check`` at ``line_tol``: (trajectory, check)."""
    (p, q), theta0 = pq, _triple("theta0", theta0)
    tr = integrate(theta0[0], theta0[1], p, q, a0=theta0[2], t_max=horizon(p, q, checks.positive_real("t_eff", t_eff)))
    return tr, invariant.line_check(tr, line_tol)


def control_flow(p, q, theta0, t, scale):
    """The negative control of the line checks: LSODA (rtol 1e-11) on -grad L with the a-velocity multiplied by
    ``scale`` (not a gradient flow, so its (e, a) projection leaves its line), from ``theta0`` at the times ``t``;
    an object with arrays e, w, a."""
    theta0, scale = _triple("theta0", theta0), checks.positive_real("scale", scale)
    t = checks.finite_array("t", t, ndim=1)

    def field(_, x):
        return -np.array(canonical.grad(x[0], x[1], p, q, a=x[2]), dtype=float) * np.array([1.0, 1.0, scale])
    sol = solve_ivp(field, (0.0, t[-1]), theta0, method="LSODA", t_eval=t, rtol=1e-11, atol=1e-13)
    return type("Flow", (), {"e": sol.y[0], "w": sol.y[1], "a": sol.y[2]})


@dataclass
class SeparatrixSeries:
    """The asymptote of S: the sympy series (gap: terms t^3, t^6; g9, g12 the next two coefficients), and at the
    values a: the scaled gap 16|a|^3 gamma, the series, the allowance, the next-order term; counts n_within,
    n_resolved."""
    gap: object
    g9: object
    g12: object
    a: np.ndarray
    scaled: np.ndarray
    pred: np.ndarray
    solver_err: np.ndarray
    allowance: np.ndarray
    term: np.ndarray
    n_within: int
    n_resolved: int
    resolve: float

    @property
    def ok(self) -> bool:
        t = sp.symbols("t", positive=True)
        exact = sp.simplify(self.gap - (t**3 / 16 - sp.Rational(5, 256) * t**6)) == 0
        return exact and self.n_within == self.n_resolved == self.a.size

    def report(self) -> str:
        t_s = 1 / np.abs(self.a)
        out = [f"separatrix at a = 0: e_S = {fixed(attention.separatrix(0.0), 6)}; asymptote 1 - 2|a| e_S^2 = "
               f"{self.gap} + ({self.g9}) t^9 + ({self.g12}) t^12 + ..., t = 1/|a|",
               f"{'a':>7}{'16|a|^3 gap - 1':>17}{'series':>13}{'next-order term':>17}{'2 x t^12 term':>15}"
               f"{'solver error':>14}"]
        for i, a_ in enumerate(self.a):
            out.append(f"{a_:>7.1f}{self.scaled[i] - 1:>17.3e}{self.pred[i] - 1:>13.3e}{self.term[i]:>17.3e}"
                       f"{2 * abs(float(16 * self.g12)) * t_s[i]**9:>15.1e}{bound(self.solver_err[i], 1e-9):>14}")
        out.append(f"remainder within its allowance at {self.n_within}/{self.a.size} values of a; next-order term "
                   f"resolved (over {self.resolve:g} x the allowance) at {self.n_resolved}/{self.a.size}")
        return "\n".join(out)


def separatrix_asymptote(sep_a, resolve) -> SeparatrixSeries:
    """The series of 1 - 2|a| e_S^2 in t = 1/|a| (u = t/2 + sum_k c_k t^k solves -t^3 u du/dt + 4t - 8u = 0, i.e.
    (eq-att-lines) times u t), compared at ``sep_a`` with ``attention.separatrix_gap`` (Radau on the gap itself):
    16|a|^3 gamma = 1 - 5t^3/16 + 16 g9 t^6 within twice the t^12 term plus 10x the solver error (gap at rtol 1e-12
    vs 1e-13); the next-order term 5t^3/16 must exceed ``resolve`` times that allowance."""
    a = checks.finite_array("sep_a", sep_a, ndim=1)
    if np.any(a >= 0):
        raise ValueError(f"sep_a must be negative values of a, got {a.tolist()}")
    resolve = checks.positive_real("resolve", resolve)
    t_ = sp.symbols("t", positive=True)
    cks = sp.symbols("c2:14")
    u_ser = t_ / 2 + sum(ck * t_ ** (k + 2) for k, ck in enumerate(cks))
    resid = sp.Poly(sp.expand(-t_**3 * u_ser * sp.diff(u_ser, t_) + 4 * t_ - 8 * u_ser), t_)
    coef = sp.solve([resid.coeff_monomial(t_**j) for j in range(2, 14)], cks, dict=True)[0]
    gap_full = sp.expand(1 - 2 * u_ser.subs(coef) / t_)
    gap = sum(gap_full.coeff(t_, k) * t_**k for k in (3, 6))
    g9, g12 = gap_full.coeff(t_, 9), gap_full.coeff(t_, 12)
    t_s = 1 / np.abs(a)
    g_12 = attention.separatrix_gap(a, rtol=1e-12)
    scaled = 16 * np.abs(a) ** 3 * g_12
    solver_err = 16 * np.abs(a) ** 3 * np.abs(g_12 - attention.separatrix_gap(a, rtol=1e-13))
    pred = 1 - 5 * t_s**3 / 16 + float(16 * g9) * t_s**6
    allowance = 2 * abs(float(16 * g12)) * t_s**9 + 10 * solver_err
    term = 5 * t_s**3 / 16
    n_within = int(np.sum(np.abs(scaled - pred) < allowance))
    n_resolved = int(np.sum(term > resolve * allowance))
    return SeparatrixSeries(gap, g9, g12, a, scaled, pred, solver_err, allowance, term, n_within, n_resolved, resolve)
