"""Part II: the steps of the chapter grq_wide_deep on wide two-layer linear networks, one call each (Kunin et al.,
NeurIPS 2024, Sec. 4, Thms 4.1, 4.2, B.6, App. B.1).

For f(x) = A W x with layer-wise rates (eta_a, eta_w): the conserved matrix C = eta_w A^T A - eta_a W W^T along
independent flows, Thm 4.1's preconditioner M three ways and the NTK, Thm 4.2's M from beta alone in the isotropic
case (C = delta I), the singular-value law and the mirror flow of Thm B.6 by central differences, the hyperbolic
entropy's derivatives, the task-aligned whitened case, and the problem and table of the lazy-limit sweep. Each
compares ``linear_networks`` with the independent references of :mod:`markovlib.richlazy.linear_reference`.
"""
from __future__ import annotations

import numpy as np

from ..book.formatting import bound, yes_no
from ..numerics import checks
from .linear_checks import relative_error
from .linear_lazy import product_split
from .linear_networks import (
    gradient_flow,
    hyperbolic_entropy,
    hyperbolic_entropy_grad,
    isotropic_init,
    isotropic_preconditioner,
    neuron_deltas,
    ntk,
    preconditioner,
    preconditioner_from_beta,
    singular_value_rates,
    vec,
)
from .linear_reference import aligned_singular_values, autograd_M, autograd_M_and_velocity, torch_flow


def conservation(rng, shapes, n_samples, init_scale, flow_time, eta_a=1.0, eta_w=1.0, thm_tol=1e-12, drift_tol=1e-9):
    """Sec. 4: per shape (d, h, c) Gaussian data (n_samples) and (A, W) of std init_scale, the torch-autograd flow
    (:func:`~markovlib.richlazy.linear_reference.torch_flow`) at 13 times in [0, flow_time]: the largest drift of
    C = eta_w A^T A - eta_a W W^T, the largest relative error of ``gradient_flow`` against it, and one text line per
    shape (also whether ``neuron_deltas`` is diag C(0) to thm_tol). Returns (drift, agreement, text)."""
    n_samples = checks.positive_int("n_samples", n_samples)
    tt = np.linspace(0.0, checks.positive_real("flow_time", flow_time), 13)
    worst_drift, worst_agree, lines = 0.0, 0.0, []
    for d_, h_, c_ in shapes:
        X, Y = rng.standard_normal((n_samples, d_)), rng.standard_normal((n_samples, c_))
        A0, W0 = init_scale * rng.standard_normal((c_, h_)), init_scale * rng.standard_normal((h_, d_))
        At, Wt = torch_flow(A0, W0, X, Y, tt, eta_a, eta_w)
        C = np.array([eta_w * a.T @ a - eta_a * w @ w.T for a, w in zip(At, Wt)])
        drift = float(np.max(np.abs(C - C[0])))
        Am, Wm = gradient_flow(A0, W0, X, Y, tt, eta_a, eta_w)
        agree = max(relative_error(Am, At), relative_error(Wm, Wt))
        worst_drift, worst_agree = max(worst_drift, drift), max(worst_agree, agree)
        dk_ok = relative_error(neuron_deltas(A0, W0, eta_a, eta_w), np.diag(C[0])) < thm_tol
        lines.append(f"(d, h, c) = ({d_}, {h_}, {c_}): max drift of C {bound(drift, drift_tol)}; markovlib flow vs "
                     f"torch flow {bound(agree, 1e-8)}; delta_k = diag C: {yes_no(dk_ok)}")
    return worst_drift, worst_agree, "\n".join(lines)


def thm41(rng, shapes, n_random, n_samples, eta_a=1.0, eta_w=1.0) -> dict:
    """Thm 4.1 at n_random Gaussian (A, W) and data per shape: the largest relative errors against autograd of
    ``preconditioner`` (eq. grq-eq-M), of ``preconditioner_from_beta`` (through (beta_k, delta_k)), of the
    dynamics d vec(beta)/dt = -M vec(grad_beta L) and of ``ntk`` = (X kron I) M (X kron I)^T; and the count."""
    out = dict(formula=0.0, beta=0.0, dyn=0.0, ntk=0.0, n=0)
    for d_, h_, c_ in shapes:
        for _ in range(checks.positive_int("n_random", n_random)):
            X, Y = rng.standard_normal((n_samples, d_)), rng.standard_normal((n_samples, c_))
            A, W = rng.standard_normal((c_, h_)), rng.standard_normal((h_, d_))
            MJ, vel, Gb = autograd_M_and_velocity(A, W, X, Y, eta_a, eta_w)
            M = preconditioner(A, W, eta_a, eta_w)
            Mb = preconditioner_from_beta(np.einsum("ik,kj->kij", A, W), neuron_deltas(A, W, eta_a, eta_w), eta_a,
                                          eta_w)
            Xk = np.kron(X, np.eye(c_))
            for key, err in (("formula", relative_error(M, MJ)), ("beta", relative_error(Mb, MJ)),
                             ("dyn", relative_error(-M @ vec(Gb), vel)),
                             ("ntk", relative_error(ntk(X, A, W, eta_a, eta_w), Xk @ MJ @ Xk.T))):
                out[key] = max(out[key], err)
            out["n"] += 1
    return out


def thm42(rng, iso_cases, iso_violating, n_samples, init_scale, iso_time, seed, eta_a=1.0, eta_w=1.0,
          flow_tol=1e-9) -> dict:
    """Thm 4.2 on the isotropic cases (d, h, c, delta): along ``gradient_flow`` (7 times in [0, iso_time]) the
    largest relative error of C against delta I (``iso_C``) and of ``isotropic_preconditioner`` against the autograd
    M (``iso``); in the square cases a second isotropic pair with the same beta built from the SVD of beta(T) (its M
    must agree: ``pair``, inf if the pair is not isotropic to flow_tol) and a non-isotropic pair (A S^-1, S W) (its
    M must not: ``gap_noniso``, the smallest relative difference); and the case outside the theorem
    (``gap_violating``)."""
    ti = np.linspace(0.0, checks.positive_real("iso_time", iso_time), 7)
    out = dict(iso=0.0, iso_C=0.0, pair=0.0, gap_noniso=np.inf)
    for d_, h_, c_, dl in iso_cases:
        X, Y = rng.standard_normal((n_samples, d_)), rng.standard_normal((n_samples, c_))
        A0, W0 = isotropic_init(d_, h_, c_, dl, scale=init_scale, seed=int(rng.integers(2**31)), eta_a=eta_a,
                                eta_w=eta_w)
        At, Wt = gradient_flow(A0, W0, X, Y, ti, eta_a, eta_w)
        for a, w in zip(At, Wt):
            out["iso_C"] = max(out["iso_C"], relative_error(eta_w * a.T @ a - eta_a * w @ w.T, dl * np.eye(h_)))
            out["iso"] = max(out["iso"], relative_error(isotropic_preconditioner(a @ w, dl, eta_a, eta_w),
                                                        autograd_M(a, w, eta_a, eta_w)))
        if d_ == h_ == c_:
            b = At[-1] @ Wt[-1]
            U, s, Vt = np.linalg.svd(b)
            xa, yw = product_split(s, dl, eta_a, eta_w)
            R = np.linalg.qr(rng.standard_normal((h_, h_)))[0]
            A2, W2 = U @ np.diag(np.sqrt(xa / eta_w)) @ R.T, R @ np.diag(np.sqrt(yw / eta_a)) @ Vt
            pair_ok = relative_error(A2 @ W2, b) < flow_tol and relative_error(
                eta_w * A2.T @ A2 - eta_a * W2 @ W2.T, dl * np.eye(h_)) < flow_tol
            M_end = autograd_M(At[-1], Wt[-1], eta_a, eta_w)
            out["pair"] = max(out["pair"], relative_error(autograd_M(A2, W2, eta_a, eta_w), M_end))
            if not pair_ok:
                out["pair"] = np.inf
            Sg = np.eye(h_) + 0.5 * rng.standard_normal((h_, h_))
            out["gap_noniso"] = min(out["gap_noniso"], relative_error(
                autograd_M(At[-1] @ np.linalg.inv(Sg), Sg @ Wt[-1], eta_a, eta_w), M_end))
    dv, hv, cv, dlv = iso_violating
    Av, Wv = isotropic_init(dv, hv, cv, dlv, scale=init_scale, seed=seed, eta_a=eta_a, eta_w=eta_w)
    out["gap_violating"] = relative_error(isotropic_preconditioner(Av @ Wv, dlv, eta_a, eta_w),
                                          autograd_M(Av, Wv, eta_a, eta_w))
    return out


def singular_value_law(rng, iso_cases, n_samples, init_scale, iso_time, fd_step, eta_a=1.0, eta_w=1.0):
    """Eq. grq-eq-sv and Thm B.6 on the square isotropic cases: central differences (step fd_step) of the singular
    values and of grad Phi_delta(sigma) along the torch reference flow at iso_time / 2 and iso_time, against
    ``singular_value_rates`` and -dL/dsigma. Returns (rate error, mirror error, points checked)."""
    err_sv, err_mirror, n_sv = 0.0, 0.0, 0
    for d_, h_, c_, dl in iso_cases:
        if not (d_ == h_ == c_):
            continue
        X, Y = rng.standard_normal((n_samples, d_)), rng.standard_normal((n_samples, c_))
        A0, W0 = isotropic_init(d_, h_, c_, dl, scale=init_scale, seed=int(rng.integers(2**31)), eta_a=eta_a,
                                eta_w=eta_w)
        for tc in (0.5 * iso_time, iso_time):
            At, Wt = torch_flow(A0, W0, X, Y, np.array([tc - fd_step, tc, tc + fd_step]), eta_a, eta_w)
            sv = [np.linalg.svd(a @ w, compute_uv=False) for a, w in zip(At, Wt)]
            bc = At[1] @ Wt[1]
            Gc = (X @ bc.T - Y).T @ X / X.shape[0]
            err_sv = max(err_sv, relative_error((sv[2] - sv[0]) / (2 * fd_step),
                                                singular_value_rates(bc, Gc, dl, eta_a, eta_w)))
            if dl != 0:
                gphi = [hyperbolic_entropy_grad(s_, dl, eta_a, eta_w) for s_ in sv]
                U, _, Vt = np.linalg.svd(bc)
                dL_dsigma = np.einsum("ir,ij,rj->r", U, Gc, Vt)
                err_mirror = max(err_mirror, relative_error((gphi[2] - gphi[0]) / (2 * fd_step), -dL_dsigma))
            n_sv += 1
    return err_sv, err_mirror, n_sv


def entropy_derivatives(deltas, eta_a=1.0, eta_w=1.0, sigma=(0.05, 0.4, 1.5, 6.0), h=1e-6) -> float:
    """Thm B.6's hyperbolic entropy at each nonzero delta: central differences (step h) of ``hyperbolic_entropy``
    against ``hyperbolic_entropy_grad`` and of that against the derived Hessian 1 / sqrt(delta^2 + 4 eta_a eta_w
    sigma^2); the largest relative error."""
    sig = np.asarray(sigma, dtype=float)
    worst = 0.0
    for dl in (d_ for d_ in deltas if d_ != 0):
        hd = np.array([(hyperbolic_entropy_grad(sig + h * e, dl, eta_a, eta_w)
                        - hyperbolic_entropy_grad(sig - h * e, dl, eta_a, eta_w))[i] / (2 * h)
                       for i, e in enumerate(np.eye(sig.size))])
        gd = np.array([(hyperbolic_entropy(sig + h * e, dl, eta_a, eta_w) - hyperbolic_entropy(sig - h * e, dl, eta_a,
                                                                                               eta_w)) / (2 * h)
                       for e in np.eye(sig.size)])
        worst = max(worst, relative_error(hd, 1 / np.sqrt(dl**2 + 4 * eta_a * eta_w * sig**2)),
                    relative_error(gd, hyperbolic_entropy_grad(sig, dl, eta_a, eta_w)))
    return worst


def aligned_case(seed, n_samples, sv_target, sv_deltas, sv_init, sv_time, eta_a=1.0, eta_w=1.0) -> dict:
    """The task-aligned whitened case: X with X^T X / n = I, beta* = U diag(sv_target) V^T (Haar U, V from seeds
    seed + 1..3), a start sharing U, V with singular values sv_init (rotation from seed + 4) at each delta, its
    ``gradient_flow`` on 81 times against the decoupled scalar equations (``aligned_singular_values``), and the same
    start at -delta (the singular values depend on delta^2 only). Returns dict(ts, s_star, curves {delta: (flow,
    scalar ODE)}, aligned (error), sign (error))."""
    k_ = len(sv_target)
    n_w = max(n_samples, k_)
    Xw = np.sqrt(n_w) * np.linalg.qr(np.random.default_rng(seed + 1).standard_normal((n_w, k_)))[0]
    Us = np.linalg.qr(np.random.default_rng(seed + 2).standard_normal((k_, k_)))[0]
    Vs = np.linalg.qr(np.random.default_rng(seed + 3).standard_normal((k_, k_)))[0]
    Yw = Xw @ (Us @ np.diag(sv_target) @ Vs.T).T
    ts = np.linspace(0.0, checks.positive_real("sv_time", sv_time), 81)
    out = dict(ts=ts, s_star=np.sort(sv_target)[::-1], curves={}, aligned=0.0, sign=0.0)

    def start(dl, R):
        xa, yw = product_split(sv_init, dl, eta_a, eta_w)
        return (Us @ np.diag(np.full(k_, np.sqrt(xa / eta_w))) @ R.T,
                R @ np.diag(np.full(k_, np.sqrt(yw / eta_a))) @ Vs.T)

    def singular_values(A0, W0):
        At, Wt = gradient_flow(A0, W0, Xw, Yw, ts, eta_a, eta_w)
        return np.array([np.linalg.svd(a @ w, compute_uv=False) for a, w in zip(At, Wt)])

    for dl in sv_deltas:
        R = np.linalg.qr(np.random.default_rng(seed + 4).standard_normal((k_, k_)))[0]
        s_flow = singular_values(*start(dl, R))
        ode = aligned_singular_values(dl, out["s_star"], sv_init, ts, eta_a, eta_w)
        out["aligned"] = max(out["aligned"], relative_error(s_flow, ode))
        out["curves"][dl] = (s_flow, ode)
        out["sign"] = max(out["sign"], relative_error(singular_values(*start(-dl, R)), s_flow))
    return out


def lazy_problem(seed, n_samples, lazy_dims, teacher_rank):
    """The data of the lazy-limit sweep (own stream seed + 10): Gaussian X (n_samples x d), a Gaussian teacher
    beta* of rank teacher_rank (c x d), Y = X beta*^T, and the initialization seed of ``lazy_sweep``."""
    d_l, _, c_l = lazy_dims
    rl = np.random.default_rng(seed + 10)
    Xl = rl.standard_normal((n_samples, d_l))
    beta_t = rl.standard_normal((c_l, teacher_rank)) @ rl.standard_normal((teacher_rank, d_l))
    return Xl, Xl @ beta_t.T, int(rl.integers(2**31))


def sweep_table(deltas, sweep) -> str:
    """The lazy-limit sweep as text: per delta S(0, T) and the distances of K(T) to the two frozen kernels (values
    below 1e-8 as the bound < 1e-08)."""
    def text(s):
        return bound(s, 1e-8) if s < 1e-8 else f"{s:.1e}"

    lines = [f"{'delta':>8} {'S(0, T)':>10} {'S(K_T, K_+)':>12} {'S(K_T, K_-)':>12}"]
    for dl, s, sp, sm in zip(deltas, sweep["S"], sweep["to_plus"], sweep["to_minus"]):
        lines.append(f"{dl:>8g} {text(s):>10} {text(sp):>12} {text(sm):>12}")
    return "\n".join(lines)
