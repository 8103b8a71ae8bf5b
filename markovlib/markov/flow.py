"""Gradient flow of the canonical model (Sec. 4, App. F; App. G with the attention scalar).

    d theta / dt = -grad L(theta),   L = g(c(theta)),   theta = (e, w) or (e, w, a).

Three integrators: ``integrate`` (one initialization, scipy's solve_ivp, dense trajectory), ``integrate_batch``
(thousands of initializations advanced together by a vectorized Dormand-Prince 5(4) scheme with a step size per
initialization), and ``gradient_descent`` (finite steps theta <- theta - lr grad L, which do not conserve the energy:
the drift is a first-order effect in lr).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from ..numerics import checks
from ..numerics.dopri import dopri54_step
from .canonical import (
    c_star_unchecked,
    classify_unchecked,
    coefficient_grad_unchecked,
    coefficient_unchecked,
    feed_forward_factor,
    optimal_beta_unchecked,
    reduced_loss_grad_unchecked,
    reduced_loss_unchecked,
    sigmoid,
)
from .energy import energy

HORIZON_CAP = 1e9  # the longest horizon ``horizon`` returns (chains on, or next to, the line p + q = 1)


def data_rate(p, q) -> float:
    """|g'(0)| = pq|p + q - 1| / (p + q)^2: the rate at which the data drive gradient flow near the plane e = 0.

    The flow is -g'(c) grad c (Lemma 7): the chain enters the direction of the flow only through the sign of g'(c)
    and its speed only through |g'(c)|, which near the critical plane and the saddle is |g'(0)|. It is 0.2 for the
    chains of the paper's Fig. 1, (0.9, 0.9) and (0.1, 0.1), and small near p + q = 1 and at the corners of the
    range (about 1e-3 at (0.02, 0.93)); 0 for p + q = 1."""
    p, q = checks.probability("p", p), checks.probability("q", q)
    return abs(float(reduced_loss_grad_unchecked(0.0, p, q)))


def horizon(p, q, t_eff=4000.0) -> float:
    """The integration horizon t_eff / |g'(0)| (``data_rate``): the same effective time t_eff for every chain (2e4 for
    the chains of Fig. 1), capped at ``HORIZON_CAP`` (for p + q = 1, where g'(0) = 0 and flows approach their
    degenerate minima only algebraically)."""
    t_eff = checks.positive_real("t_eff", t_eff)
    rate = data_rate(p, q)
    return HORIZON_CAP if rate * HORIZON_CAP <= t_eff else t_eff / rate


def _field(y, p, q):
    """-grad L for a state array y of shape (n, 2) or (n, 3): -g'(c) grad c (Lemma 3/7; App. G)."""
    e, w = y[:, 0], y[:, 1]
    a = y[:, 2] if y.shape[1] == 3 else 0.0
    e2 = e * e
    m = feed_forward_factor(w)
    k = 1.0 + a * e2
    c = e2 * k * m  # = coefficient_unchecked(e, w, a), whose factors the field needs
    gp = p / (p + q) * (sigmoid(c + optimal_beta_unchecked(c, p, q)) - (1.0 - q))
    out = np.empty_like(y)
    out[:, 0] = -gp * (2 * e + 4 * a * e2 * e) * m
    out[:, 1] = -gp * e2 * k * 4 * np.abs(w)
    if y.shape[1] == 3:
        out[:, 2] = -gp * e2 * e2 * m
    return out


def _coefficient_rows(y):
    """c(e, w[, a]) for each row of a state array (App. C; App. G)."""
    return coefficient_unchecked(y[:, 0], y[:, 1], y[:, 2] if y.shape[1] == 3 else 0.0)


def _stack(e0, w0, a0):
    arrays = [checks.finite_array("e0", e0), checks.finite_array("w0", w0)]
    if a0 is not None:
        arrays.append(checks.finite_array("a0", a0))
    arrays = np.broadcast_arrays(*arrays)
    return np.stack([x.astype(float).ravel() for x in arrays], axis=1), arrays[0].shape


@dataclass
class Trajectory:
    """A solution of gradient flow: times t and states (e, w[, a]) with the loss and energy along it."""

    t: np.ndarray
    e: np.ndarray
    w: np.ndarray
    a: np.ndarray | None
    p: float
    q: float

    @property
    def energy(self):
        return energy(self.e, self.w, self.a)

    @property
    def coefficient(self):
        return coefficient_unchecked(self.e, self.w, 0.0 if self.a is None else self.a)

    @property
    def energy_drift(self) -> float:
        """max_t |E(theta(t)) - E(theta(0))| (zero for the exact flow, Lemma 1)."""
        E = self.energy
        return float(np.max(np.abs(E - E[0])))


def integrate(e0, w0, p, q, a0=None, t_max=2e4, rtol=1e-11, atol=1e-13, method="LSODA", n_points=400):
    """Integrate the flow from one initialization with ``scipy.integrate.solve_ivp`` (log-spaced output times)."""
    p, q = checks.probability("p", p), checks.probability("q", q)
    y0, shape = _stack(e0, w0, a0)
    if y0.shape[0] != 1:
        raise ValueError("integrate takes one initialization; use integrate_batch for arrays")
    t_max = checks.positive_real("t_max", t_max)
    t_eval = np.concatenate([[0.0], np.geomspace(1e-3, t_max, n_points - 1)])
    sol = solve_ivp(lambda t, y: _field(y[None, :], p, q)[0], (0.0, t_max), y0[0], method=method, t_eval=t_eval,
                    rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"solve_ivp failed: {sol.message}")
    a = sol.y[2] if a0 is not None else None
    return Trajectory(t=sol.t, e=sol.y[0], w=sol.y[1], a=a, p=p, q=q)


@dataclass
class BatchResult:
    """Final states of many flows with their classification (see ``integrate_batch``)."""

    e: np.ndarray
    w: np.ndarray
    a: np.ndarray | None
    t: np.ndarray  # time reached
    converged: np.ndarray  # |grad L| fell below gtol
    outcome: np.ndarray  # classify() of the final point; "undecided" where it is neither critical nor clear
    energy_drift: np.ndarray
    steps: int


def integrate_batch(e0, w0, p, q, a0=None, t_max=1e4, rtol=1e-10, atol=1e-12, gtol=1e-8, max_steps=200_000,
                    progress=False):
    """Advance many initializations of gradient flow at once (vectorized Dormand-Prince 5(4), one step size each).

    Each flow runs until |grad L| < gtol or c = c* to rounding (it has reached a critical point) or t = t_max;
    ``gtol="data"`` stops at |grad L| < 1e-8 |g'(0)| (``data_rate``): near the plane e = 0 the gradient is about
    2|g'(0)| |e| m(w), so a fixed gtol would stop the flows of slow chains (p + q near 1, the corners of the range)
    while |e| is still above the classification tolerance;
    finished flows leave the active set, so the cost follows the slowest flows only. The final point is classified with
    ``canonical.classify`` at tolerance 1e-6 (2-D), or as "global_min" / "unigram" (c -> c* / c -> 0) in 3-D.
    """
    p, q = checks.probability("p", p), checks.probability("q", q)
    y, shape = _stack(e0, w0, a0)
    t_max = checks.positive_real("t_max", t_max)
    if isinstance(gtol, str) and gtol == "data":
        gtol = 1e-8 * (data_rate(p, q) or 1.0)
    gtol = checks.positive_real("gtol", gtol)
    n = y.shape[0]
    t = np.zeros(n)
    h = np.full(n, 1e-3)
    converged = np.zeros(n, dtype=bool)
    active = np.arange(n)
    y0 = y.copy()
    field = lambda yy: _field(yy, p, q)  # noqa: E731
    f_act = field(y)
    bar = None
    if progress:
        from ..book.progress import progress_bar

        bar = progress_bar(total=n, desc="flows finished", leave=False)
    cs = c_star_unchecked(p, q)
    steps = 0
    # a trial stage of a far too long step may overflow: dopri54_step rejects that step and retries it shorter
    with np.errstate(over="ignore", invalid="ignore"):
        while active.size and steps < max_steps:
            steps += 1
            ya, ta, ha = y[active], t[active], np.minimum(h[active], t_max - t[active])
            y5, k7, _, ok, factor = dopri54_step(field, ya, ha, f_act, rtol, atol)
            h[active] = ha * factor
            acc = active[ok]
            y[acc] = y5[ok]
            t[acc] = ta[ok] + ha[ok]
            f_new = np.where(ok[:, None], k7, f_act)  # FSAL: k7 is the field at the accepted point
            gnorm = np.sqrt(np.sum(f_new ** 2, axis=1))
            # On the global-minimum manifold {c = c*} the flow has arrived even when |grad L| cannot drop below gtol:
            # there the Hessian's one non-zero eigenvalue g''(c*)|grad c|^2 can be large, and the explicit scheme then
            # chatters at its stability limit with |grad L| ~ that eigenvalue times the local error.
            # "Arrived" means c = c* to the resolution of c that the state's tolerance allows.
            yacc = y[active]
            c_now = _coefficient_rows(yacc)
            e_, w_ = yacc[:, 0], yacc[:, 1]
            a_ = yacc[:, 2] if yacc.shape[1] == 3 else 0.0
            grad_c = np.abs(np.stack(coefficient_grad_unchecked(e_, w_, a_), axis=1)).sum(axis=1)
            resolution = 10 * (atol + rtol * np.abs(yacc).max(axis=1)) * grad_c
            at_gamma = np.abs(c_now - cs) <= np.maximum(resolution, 1e-13 * np.maximum(1.0, np.abs(cs)))
            arrived = (gnorm < gtol) | at_gamma
            fin = ok & (arrived | (t[active] >= t_max * (1 - 1e-12)))
            converged[active[fin & arrived]] = True
            keep = ~fin
            active, f_act = active[keep], f_new[keep]
            if bar is not None:
                bar.update(int(fin.sum()))
    if bar is not None:
        bar.close()
    e, w = y[:, 0], y[:, 1]
    a = y[:, 2] if y.shape[1] == 3 else None
    E0 = energy(*y0.T)
    drift = np.abs(energy(e, w, a) - E0)
    outcome = _classify_end(e, w, a, p, q)
    rs = lambda x: None if x is None else x.reshape(shape)  # noqa: E731
    return BatchResult(e=rs(e), w=rs(w), a=rs(a), t=rs(t), converged=rs(converged), outcome=rs(outcome),
                       energy_drift=rs(drift), steps=steps)


def classify_end(e, w, a, p, q, tol=1e-6, loss_tol=1e-8):
    """Name the end point of a flow: ``canonical.classify`` at tolerance ``tol`` ("regular" becomes "undecided");
    in 3-D (``a`` not None) "global_min" / "unigram" (c -> c* / c -> 0) / "undecided". Also "global_min" where the
    loss is within ``loss_tol`` of the entropy rate: for p + q = 1 the minima are degenerate (g'(c) ~ g''(0) c) and
    flows approach them only like t^(-1/2). Broadcasts; a str for scalar input."""
    p, q = checks.probability("p", p), checks.probability("q", q)
    e, w = checks.finite_array("e", e), checks.finite_array("w", w)
    a = None if a is None else checks.finite_array("a", a)
    return _classify_end(e, w, a, p, q, tol, loss_tol)


def _classify_end(e, w, a, p, q, tol=1e-6, loss_tol=1e-8):
    cs = c_star_unchecked(p, q)
    c = coefficient_unchecked(e, w, 0.0 if a is None else a)
    at_best = reduced_loss_unchecked(c, p, q) - reduced_loss_unchecked(cs, p, q) <= loss_tol
    if a is None:
        out = np.asarray(classify_unchecked(e, w, p, q, tol, None), dtype=object)
        out[out == "regular"] = "undecided"
    else:
        out = np.full(np.broadcast(e, w, a).shape, "undecided", dtype=object)
        out[np.abs(c) <= tol] = "unigram"
        out[np.abs(c - cs) <= tol * max(1.0, abs(cs))] = "global_min"
    out[at_best] = "global_min"
    out = out.astype(str)
    return str(out[()]) if out.ndim == 0 else out


def gradient_descent(e0, w0, p, q, lr, steps, a0=None, record_every=1):
    """Plain gradient descent theta <- theta - lr grad L, vectorized over initializations.

    Returns (thetas, losses-free record): an array of shape (n_records, n_inits, dim) of the iterates at
    steps 0, record_every, 2 record_every, ... (the last step is always recorded).
    """
    p, q = checks.probability("p", p), checks.probability("q", q)
    lr = checks.positive_real("lr", lr)
    steps = checks.nonnegative_int("steps", steps)
    record_every = checks.positive_int("record_every", record_every)
    y, shape = _stack(e0, w0, a0)
    records = [y.copy()]
    for s in range(1, steps + 1):
        y = y + lr * _field(y, p, q)
        if s % record_every == 0 or s == steps:
            records.append(y.copy())
    return np.stack(records)
