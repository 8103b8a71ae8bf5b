"""Part II: the function-space steps of the chapter grq_minimal_model (Kunin et al., NeurIPS 2024, Sec. 3, Thm 3.1,
Fig. 4), one call each.

The matrix M(beta, delta) of eq. (4) against the autograd Jacobian, its two lazy limits (M / delta -> I upstream,
M / |delta| -> beta_hat beta_hat^T downstream, at rate delta^-2), the key identity of Thm 3.1
(Hess q_delta(|beta|) = (3/2) |a| M^-1) by finite differences, and Thm 3.1's limits on the one-sample problem of
Fig. 4 against independent flows and an independent root search
(:mod:`markovlib.richlazy.minimal_reference`), with their asymptotes as |delta| -> infinity.
"""
from __future__ import annotations

import numpy as np

from ..book.formatting import bound, fixed
from ..numerics import checks
from ..numerics.numdiff import fd_hessian
from .minimal_exact import asymptote_constants, implicit_bias_limit, q_delta
from .minimal_limits import init_from_product
from .minimal_model import conserved_delta, function_space_M
from .minimal_reference import function_space_autograd, neuron_flows, psi_null_root


def function_space_error(rng, X, y, n=100):
    """Eq. (4) at n random (a, w) ~ N(0, 1) in d = 2: the largest relative error of ``function_space_M`` against
    J J^T (autograd), and of -M grad_beta L against d(a w)/dt from the autograd parameter gradient. Each error is
    max |difference| / (1 + max |reference|). Returns (M error, flow error)."""
    X, y = checks.finite_array("X", X, ndim=2), checks.finite_array("y", y, ndim=1)
    M_err, flow_err = 0.0, 0.0
    for _ in range(checks.positive_int("n", n)):
        a, w = rng.normal(), rng.normal(size=2)
        M_ref, beta_dot = function_space_autograd(X, y, a, w)
        M = function_space_M(a * w, conserved_delta(a, w))
        M_err = max(M_err, float(np.abs(M - M_ref).max() / (1 + np.abs(M_ref).max())))
        g_beta = X.T @ (X @ (a * w) - y) / len(y)
        flow_err = max(flow_err, float(np.abs(beta_dot + M @ g_beta).max() / (1 + np.abs(beta_dot).max())))
    return M_err, flow_err


def lazy_limit_slopes(beta, deltas):
    """Sec. 3's lazy limits of M: the log-log slopes over |delta| in ``deltas`` (positive) of |M(beta, delta)/delta
    - I| (upstream) and |M(beta, -delta)/delta - beta beta^T| (downstream, |beta| = 1); both are -2."""
    beta = checks.finite_array("beta", beta, ndim=1)
    if abs(np.linalg.norm(beta) - 1) > 1e-12:
        raise ValueError(f"beta must be a unit vector, got {beta!r}")
    big = checks.finite_array("deltas", deltas, ndim=1)
    if np.any(big <= 0):
        raise ValueError(f"deltas must be positive, got {deltas!r}")
    up = [np.abs(function_space_M(beta, d) / d - np.eye(beta.size)).max() for d in big]
    down = [np.abs(function_space_M(beta, -d) / d - np.outer(beta, beta)).max() for d in big]
    return tuple(float(np.polyfit(np.log10(big), np.log10(dev), 1)[0]) for dev in (up, down))


def hessian_identity_error(rng, n=40):
    """Thm 3.1's key step at n random (beta, delta), |beta| in [0.3, 2], delta in [-4, 4]: the largest relative error
    of the Richardson-extrapolated finite-difference Hessian of q_delta(|beta|) (``q_delta``, h = 1e-3) against
    (3/2)|a| M^-1 with M = (S + delta)/2 I + (S - delta)/2 beta_hat beta_hat^T written out (eq. (4)),
    S = sqrt(delta^2 + 4 |beta|^2), a^2 = (S + delta)/2."""
    worst = 0.0
    for _ in range(checks.positive_int("n", n)):
        delta = rng.uniform(-4, 4)
        ang = rng.uniform(0, 2 * np.pi)
        beta = rng.uniform(0.3, 2.0) * np.array([np.cos(ang), np.sin(ang)])

        def q_of(v, d=delta):
            return float(q_delta(np.linalg.norm(v), d))

        H = (4 * fd_hessian(q_of, beta, h=1e-3) - fd_hessian(q_of, beta, h=2e-3)) / 3  # error O(h^4)
        S = np.hypot(delta, 2 * np.linalg.norm(beta))
        bh = beta / np.linalg.norm(beta)
        M = (S + delta) / 2 * np.eye(2) + (S - delta) / 2 * np.outer(bh, bh)
        H_ref = 1.5 * np.sqrt((S + delta) / 2) * np.linalg.inv(M)
        worst = max(worst, float(np.abs(H - H_ref).max() / np.abs(H_ref).max()))
    return worst


def lowrank_limits(x, y, beta0, deltas, T_limit, print_tol=1e-7):
    """Thm 3.1 on the one-sample problem (x, y) in d = 2 (Fig. 4, right): at each delta the flow from the product
    beta0 (a0 > 0), integrated independently (C = x x^T, c = y x, rtol 1e-12) to T_limit, against
    ``implicit_bias_limit``, and that against the independent root search ``psi_null_root``. Returns dict(runs
    {delta: (beta(t), limit)}, bias_err, root_err, converged = max |beta(T) - beta(0.95 T)|, table (text, errors
    as bounds of ``print_tol`` and 1e-10))."""
    x, beta0 = checks.finite_array("x", x, ndim=1), checks.finite_array("beta0", beta0, ndim=1)
    T_limit = checks.positive_real("T_limit", T_limit)
    X, yv = x[None, :], np.array([float(y)])
    inits = [init_from_product(beta0, delta) for delta in deltas]
    a_l, W_l = neuron_flows(np.array([p[0] for p in inits]), np.array([p[1] for p in inits]), np.outer(x, x),
                            float(y) * x, T_limit, 2001, rtol=1e-12)
    out = dict(runs={}, bias_err=0.0, root_err=0.0, converged=0.0)
    lines = [f"{'delta':>6}{'flow limit':>22}{'argmin Psi':>22}{'|flow - argmin|':>17}{'|root - argmin|':>17}"]
    for j, delta in enumerate(deltas):
        beta_t = a_l[j][:, None] * W_l[j].T
        lim = implicit_bias_limit(X, yv, beta0, delta)
        e_flow = float(np.abs(beta_t[-1] - lim).max())
        e_root = float(np.abs(psi_null_root(x, y, beta0, delta) - lim).max())
        out["converged"] = max(out["converged"], float(np.abs(beta_t[-1] - beta_t[-101]).max()))
        out["bias_err"], out["root_err"] = max(out["bias_err"], e_flow), max(out["root_err"], e_root)
        out["runs"][delta] = (beta_t, lim)
        lines.append(f"{delta:>6g}   ({fixed(beta_t[-1, 0], 4)}, {fixed(beta_t[-1, 1], 4)})   ({fixed(lim[0], 4)}, "
                     f"{fixed(lim[1], 4)}){bound(e_flow, print_tol):>17}{bound(e_root, 1e-10):>17}")
    out["table"] = "\n".join(lines)
    return out


def asymptotes(x, y, beta0, extreme_delta, asymptote_tol, n_sweep):
    """Thm 3.1's two limits on the one-sample problem: at delta = +-extreme_delta the distance of
    ``implicit_bias_limit`` to the interpolant closest to beta0 (upstream) and to the one along beta0 (downstream),
    against the derived C_+- / delta^2 (``asymptote_constants``; tolerance 10 % of it plus asymptote_tol times the
    asymptote's norm), and the limit along the null space n over a sweep of n_sweep deltas in [-1e3, 1e3]
    (monotone from one asymptote to the other). Returns dict(C (C+ and C- in the max norm), pred, dev, tol
    (upstream, downstream pairs), ok, sweep, z (coordinates along n from beta_p), in_order, monotone, near, along,
    n, beta_p)."""
    x, beta0 = checks.finite_array("x", x, ndim=1), checks.finite_array("beta0", beta0, ndim=1)
    extreme_delta = checks.positive_real("extreme_delta", extreme_delta)
    n_sweep = checks.positive_int("n_sweep", n_sweep)
    X, yv = x[None, :], np.array([float(y)])
    n_vec = np.array([-x[1], x[0]]) / np.linalg.norm(x)
    beta_p = float(y) * x / (x @ x)
    C_up, C_down, near, along = asymptote_constants(x, y, beta0)
    gaps = (float(np.abs(implicit_bias_limit(X, yv, beta0, extreme_delta) - near).max()),
            float(np.abs(implicit_bias_limit(X, yv, beta0, -extreme_delta) - along).max()))
    C = (C_up * np.abs(n_vec).max(), C_down * np.abs(n_vec).max())
    pred = tuple(c / extreme_delta**2 for c in C)
    dev = tuple(abs(g - p) for g, p in zip(gaps, pred))
    tol = tuple(0.1 * p + asymptote_tol * np.linalg.norm(v) for p, v in zip(pred, (near, along)))
    sweep = np.concatenate([-np.logspace(3, -2, n_sweep // 2), [0.0], np.logspace(-2, 3, n_sweep // 2)])
    z = np.array([(implicit_bias_limit(X, yv, beta0, d) - beta_p) @ n_vec for d in sweep])
    in_order = int(np.sum(np.diff(z) * np.sign((near - along) @ n_vec) >= -1e-12))
    return dict(C=C, pred=pred, dev=dev, tol=tol, ok=dev[0] <= tol[0] and dev[1] <= tol[1], sweep=sweep, z=z,
                in_order=in_order, monotone=in_order == z.size - 1, near=near, along=along, n=n_vec, beta_p=beta_p)
