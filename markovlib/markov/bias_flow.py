"""Gradient flow and gradient descent with the bias b as a free parameter (Sec. 4 with App. B-C; Thms 6, 7).

The theorems of Sec. 4 (Thms 2, 8) follow the flow of the *reduced* loss L(e, w) = L(e, w, b*(e, w)) (Lemma 5),
while every training run trains b jointly. Here the flow is run in all three scalars,

    d(e, w, b)/dt = -grad L(e, w, b),    L(e, w, b) = F(c, beta),  c = e^2 (1 + 2w|w|),  beta = b - e^2/2

(Lemma 2 for F, Lemma 3 for the gradient, ``canonical.grad(..., b=b)``). Along it the energy of Lemma 1 is no
longer constant: with grad E = (2e, -2w - 1/|w|) and Lemma 3,

    dE/dt = grad E . (de/dt, dw/dt) = 2 e^2 dL/db = -2 e^2 db/dt                         (energy balance)

(the F_c terms cancel exactly as in Lemma 1; the F_beta term of dL/de does not). :func:`integrate_free_bias`
integrates the balance integral J(t) = int_0^t 2 e^2 dL/db ds next to the state, so E(t) - E(0) = J(t) can be
checked. Gradient descent with "one extra bias step per update" (:func:`gradient_descent_free_bias`): a joint
step in (e, w, b), then Newton steps in b alone, b <- b - F_beta / F_beta_beta (F is strictly convex in beta,
Lemma 5), which keeps b near b*(e, w) so that the (e, w) iterates follow the reduced gradient descent.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.integrate import solve_ivp

from ..numerics import checks
from .canonical import coefficient, grad, hessian, sigmoid
from .energy import energy
from .flow import classify_end

_TINY = 1e-300  # the absolute tolerance on w: relative accuracy only


def _pq(p, q):
    return checks.probability("p", p), checks.probability("q", q)


def _points(e0, w0, b0):
    arrays = np.broadcast_arrays(checks.finite_array("e0", e0), checks.finite_array("w0", w0),
                                 checks.finite_array("b0", b0))
    if np.any(arrays[1] == 0):
        raise ValueError("w0 must be != 0 (the line w = 0 is invariant and E is undefined there, Lemma 9)")
    return [a.astype(float).ravel() for a in arrays], arrays[0].shape


def field(e, w, b, p, q):
    """-grad L(e, w, b) (Lemma 3) as three arrays (de/dt, dw/dt, db/dt)."""
    p, q = _pq(p, q)
    ge, gw, gb = grad(e, w, p, q, b=b)
    return -ge, -gw, -gb


def energy_rate(e, w, b, p, q):
    """dE/dt along the free-bias flow: 2 e^2 dL/db (the energy balance of the module docstring)."""
    p, q = _pq(p, q)
    return 2.0 * np.asarray(e, dtype=float) ** 2 * grad(e, w, p, q, b=b)[2]


@dataclass
class FreeBiasResult:
    """End states of free-bias flows (arrays of the initializations' shape) and, with ``t_eval``, the path."""

    e: np.ndarray
    w: np.ndarray
    b: np.ndarray
    balance: np.ndarray  # J(t_max) = int 2 e^2 dL/db dt, so that E(end) - E(0) = J (energy balance)
    energy_drift: np.ndarray  # E(end) - E(0), signed
    outcome: np.ndarray  # flow.classify_end of the end point (e, w): "global_min", "local_min", ...
    t: np.ndarray | None  # the times of ``t_eval``
    path: np.ndarray | None  # (len(t), 4, *shape): e, w, b, J at those times
    n_rhs: int  # evaluations of the vector field (cost)


def integrate_free_bias(e0, w0, b0, p, q, t_max=2e4, rtol=1e-9, atol=1e-11, t_eval=None, method="BDF"):
    """Integrate the gradient flow in (e, w, b) from every initialization at once.

    All initializations form one system of 4n equations (e, w, b and the balance integral J of each point),
    integrated by scipy's ``solve_ivp`` (implicit ``"BDF"`` or ``"Radau"``: the flow is stiff near Gamma*, where
    the Hessian's nonzero eigenvalues are large) with the exact, block-diagonal sparse Jacobian (from
    ``canonical.hessian``), so the cost of a step grows linearly with n. ``b0`` broadcasts against (e0, w0)
    (e.g. ``canonical.optimal_bias(e0, w0, p, q)`` or 0).
    ``t_eval``: optional increasing times in [0, t_max] at which the states are kept (``path``).
    ``atol`` applies to e, b and J; w is held to the relative accuracy ``rtol`` (it may approach 0 exponentially and
    E contains log|w|).
    """
    p, q = _pq(p, q)
    (e0, w0, b0), shape = _points(e0, w0, b0)
    t_max = checks.positive_real("t_max", t_max)
    rtol = checks.positive_real("rtol", rtol)
    atol = checks.positive_real("atol", atol)
    checks.choice("method", method, {"BDF", "Radau"})
    if t_eval is not None:
        t_eval = np.asarray(t_eval, dtype=float)
        if t_eval.ndim != 1 or np.any(np.diff(t_eval) <= 0) or t_eval[0] < 0 or t_eval[-1] > t_max:
            raise ValueError("t_eval must be an increasing 1-D array of times in [0, t_max]")
    n = e0.size
    calls = [0]

    def rhs(t, y):
        calls[0] += 1
        Y = y.reshape(4, n)
        e, w, b = Y[0], Y[1], Y[2]
        ge, gw, gb = grad(e, w, p, q, b=b)
        return np.concatenate([-ge, -gw, -gb, 2.0 * e * e * gb])

    # Jacobian: block-diagonal over points; for point k the (e, w, b) block is -Hessian of L (Lemma 4 in general,
    # ``canonical.hessian``), and the row of J' = 2 e^2 dL/db is (4 e dL/db, 0, 0) + 2 e^2 (row b of the Hessian).
    idx = np.arange(n)
    rows = np.concatenate([i * n + idx for i in range(4) for j in range(3)])
    cols = np.concatenate([j * n + idx for i in range(4) for j in range(3)])

    def jac(t, y):
        Y = y.reshape(4, n)
        e, w, b = Y[0], Y[1], Y[2]
        H = hessian(e, w, p, q, b=b)
        gb = grad(e, w, p, q, b=b)[2]
        top = -H  # (n, 3, 3)
        Jrow = 2.0 * (e * e)[:, None] * H[:, 2, :]
        Jrow[:, 0] += 4.0 * e * gb
        vals = np.concatenate([top[:, i, j] for i in range(3) for j in range(3)]
                              + [Jrow[:, j] for j in range(3)])
        return sparse.csc_matrix((vals, (rows, cols)), shape=(4 * n, 4 * n))

    y0 = np.concatenate([e0, w0, b0, np.zeros(n)])
    # w is held to relative accuracy only: it never changes sign (Lemma 9) but can approach 0 exponentially (to
    # 1e-12 and below on the way to a global minimum at w -> 0), and E contains log|w|, so an absolute tolerance on
    # w would leave E(end) - and the energy balance - wrong by atol / |w|
    atol = np.concatenate([np.full(n, atol), np.full(n, _TINY), np.full(2 * n, atol)])
    sol = solve_ivp(rhs, (0.0, t_max), y0, method=method, rtol=rtol, atol=atol, jac=jac,
                    t_eval=t_eval)
    if not sol.success:
        raise RuntimeError(f"solve_ivp failed: {sol.message}")
    if t_eval is None:
        end = sol.y[:, -1].reshape(4, n)
        path, times = None, None
    else:
        # solve_ivp with t_eval ends at t_eval[-1]; integrate on to t_max from there if needed
        path = sol.y.T.reshape(len(sol.t), 4, *shape)
        times = sol.t
        end = sol.y[:, -1].reshape(4, n)
        if sol.t[-1] < t_max:
            rest = solve_ivp(rhs, (sol.t[-1], t_max), sol.y[:, -1], method=method, rtol=rtol, atol=atol,
                             jac=jac)
            if not rest.success:
                raise RuntimeError(f"solve_ivp failed: {rest.message}")
            end = rest.y[:, -1].reshape(4, n)
    e, w, b, J = end
    drift = energy(e, w) - energy(e0, w0)
    outcome = classify_end(e, w, None, p, q)
    rs = lambda x: np.asarray(x).reshape(shape)
    return FreeBiasResult(e=rs(e), w=rs(w), b=rs(b), balance=rs(J), energy_drift=rs(drift), outcome=rs(outcome),
                          t=times, path=path, n_rhs=calls[0])


def bias_newton_step(e, w, b, p, q, max_step=1.0):
    """One Newton step in b at fixed (e, w): b - F_beta / F_beta_beta, F_beta_beta = pi0 s'(beta) + pi1 s'(c + beta)
    > 0 (Lemma 5: F is strictly convex in beta, so the step moves b towards b*(e, w), quadratically near it).
    The step is clipped to |delta b| <= ``max_step`` (a trust region: far from b*, where the sigmoids saturate and
    F_beta_beta is tiny, a plain Newton step on this logistic loss overshoots and diverges)."""
    p, q = _pq(p, q)
    max_step = checks.positive_real("max_step", max_step)
    e, w, b = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (e, w, b)))
    c = coefficient(e, w)
    beta = b - e * e / 2.0
    pi0, pi1 = q / (p + q), p / (p + q)
    s0, s1 = sigmoid(beta), sigmoid(c + beta)
    F_beta = pi0 * (s0 - p) + pi1 * (s1 - (1.0 - q))
    F_bb = pi0 * s0 * (1 - s0) + pi1 * s1 * (1 - s1)
    return b - np.clip(F_beta / F_bb, -max_step, max_step)


def gradient_descent_free_bias(e0, w0, b0, p, q, lr, steps, bias_steps=1, record_every=1):
    """Gradient descent in (e, w, b), theta <- theta - lr grad L(theta), followed after every update by
    ``bias_steps`` Newton steps in b alone (:func:`bias_newton_step`; ``bias_steps=0``: plain joint descent).

    Vectorized over initializations. Returns an array (n_records, n_inits, 3) of (e, w, b) at steps 0,
    record_every, 2 record_every, ... and the last step.
    """
    p, q = _pq(p, q)
    lr = checks.positive_real("lr", lr)
    steps = checks.nonnegative_int("steps", steps)
    bias_steps = checks.nonnegative_int("bias_steps", bias_steps)
    record_every = checks.positive_int("record_every", record_every)
    (e, w, b), _ = _points(e0, w0, b0)
    records = [np.stack([e, w, b], -1)]
    for s in range(1, steps + 1):
        ge, gw, gb = grad(e, w, p, q, b=b)
        e, w, b = e - lr * ge, w - lr * gw, b - lr * gb
        for _ in range(bias_steps):
            b = bias_newton_step(e, w, b, p, q)
        if s % record_every == 0 or s == steps:
            records.append(np.stack([e, w, b], -1))
    return np.stack(records)

