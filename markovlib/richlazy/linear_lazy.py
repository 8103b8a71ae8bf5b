"""Part II: the lazy limits of wide linear networks (Kunin et al., NeurIPS 2024, Thm B.1; the book's chapter
grq_wide_deep).

All delta_k = delta and fixed products ||beta_k(0)|| (``linear_networks.init_with_deltas``), so beta(0) is the same
for every delta. The sweep integrates each flow to convergence and measures the kernel distance S(0, T) of the NTK
(``linear_networks.ntk``) and the distance of K(T) to the two frozen kernels of the lazy limits, eta_w X X^T kron
A0 A0^T (delta -> +inf) and eta_a X W0^T W0 X^T kron I_c (delta -> -inf). The book derives S(0, T) = O(|delta|^-4);
:func:`tail_exponents` fits that exponent between the two largest |delta| on each side.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks
from .linear_networks import gradient_flow, init_with_deltas, ntk
from .minimal_model import kernel_distance


def product_split(sigma, delta, eta_a=1.0, eta_w=1.0):
    """(eta_w ||a||^2, eta_a ||w||^2) = ((S + delta)/2, (S - delta)/2), S = sqrt(delta^2 + 4 eta_a eta_w sigma^2), for
    a product of norm sigma and a conserved delta (Thm 4.1's split), the smaller one without cancellation."""
    eta_a, eta_w = checks.positive_real("eta_a", eta_a), checks.positive_real("eta_w", eta_w)
    sigma = np.asarray(sigma, dtype=float)
    S = np.sqrt(delta**2 + 4 * eta_a * eta_w * sigma**2)
    small, large = 2 * eta_a * eta_w * sigma**2 / (S + abs(delta)), (S + abs(delta)) / 2
    return (large, small) if delta >= 0 else (small, large)


def kernel_distance_small(K1, K2) -> float:
    """The kernel distance 1 - cos as ||K1/|K1| - K2/|K2| ||^2 / 2: the same number as
    ``minimal_model.kernel_distance``, without its cancellation when S is far below 1e-8."""
    K1, K2 = checks.finite_array("K1", K1), checks.finite_array("K2", K2)
    if K1.shape != K2.shape or not np.any(K1) or not np.any(K2):
        raise ValueError(f"K1 and K2 must be nonzero matrices of one shape, got {K1.shape} and {K2.shape}")
    return 0.5 * float(np.sum((K1 / np.linalg.norm(K1) - K2 / np.linalg.norm(K2)) ** 2))


def flow_to_convergence(A0, W0, X, Y, T, converged_tol, eta_a=1.0, eta_w=1.0, tries=4):
    """(A, W at times 0 and T_end, final / initial loss): the flow to T, and while the loss ratio is not below
    ``converged_tol`` (a long plateau) again to 4 times the horizon, at most ``tries`` runs in all (DOP853 at
    rtol 1e-11, atol 1e-13)."""
    T = checks.positive_real("T", T)
    tries = checks.positive_int("tries", tries)
    n = X.shape[0]
    for _ in range(tries):
        At, Wt = gradient_flow(A0, W0, X, Y, [0.0, T], eta_a, eta_w, rtol=1e-11, atol=1e-13)
        loss = [np.sum((X @ (a @ w).T - Y) ** 2) / (2 * n) for a, w in zip(At, Wt)]
        if loss[1] / loss[0] < converged_tol:
            break
        T *= 4
    return At, Wt, loss[1] / loss[0]


def lazy_sweep(X, Y, h, deltas, product, init_seed, t_fit, converged_tol, eta_a=1.0, eta_w=1.0) -> dict:
    """The sweep over ``deltas`` (all h neurons at one delta, ||beta_k(0)|| = product, directions from
    ``init_seed``), each flow to convergence from T = t_fit / max(1, |delta|) (:func:`flow_to_convergence`). Arrays
    over the deltas: S (S(0, T), :func:`kernel_distance_small`), to_plus / to_minus (distance of K(T) to the
    upstream / downstream frozen kernel), conv (final / initial loss); kd_gap = the largest difference between
    :func:`kernel_distance_small` and ``minimal_model.kernel_distance`` at (K(0), K(T))."""
    c, d = Y.shape[1], X.shape[1]
    out = {k: [] for k in ("S", "to_plus", "to_minus", "conv")}
    kd_gap = 0.0
    for dl in deltas:
        A0, W0 = init_with_deltas(d, c, np.full(h, dl), np.full(h, product), seed=init_seed, eta_a=eta_a, eta_w=eta_w)
        At, Wt, ratio = flow_to_convergence(A0, W0, X, Y, t_fit / max(1.0, abs(dl)), converged_tol, eta_a, eta_w)
        out["conv"].append(ratio)
        K0, KT = ntk(X, At[0], Wt[0], eta_a, eta_w), ntk(X, At[1], Wt[1], eta_a, eta_w)
        out["S"].append(kernel_distance_small(K0, KT))
        kd_gap = max(kd_gap, abs(out["S"][-1] - kernel_distance(K0, KT)))
        out["to_plus"].append(kernel_distance_small(KT, np.kron(X @ X.T, A0 @ A0.T)))
        out["to_minus"].append(kernel_distance_small(KT, np.kron(X @ W0.T @ W0 @ X.T, np.eye(c))))
    return {**{k: np.array(v) for k, v in out.items()}, "kd_gap": kd_gap}


def tail_exponents(deltas, S) -> dict:
    """{"upstream", "downstream"}: the log-log slope of S(0, T) between the two largest |delta| on each side."""
    dl_arr, S = np.asarray(deltas, dtype=float), np.asarray(S, dtype=float)
    tail = {}
    for side, sel in (("upstream", dl_arr > 0), ("downstream", dl_arr < 0)):
        if sel.sum() < 2:
            raise ValueError(f"deltas must hold two values on the {side} side")
        dsel, ssel = np.abs(dl_arr[sel]), S[sel]
        order = np.argsort(dsel)
        d2, s2 = dsel[order][-2:], ssel[order][-2:]
        tail[side] = float(np.log(s2[1] / s2[0]) / np.log(d2[1] / d2[0]))
    return tail


def balanced_kernel_distance(rng, n, dims, teacher_rank, product, t_fit, converged_tol, eta_a=1.0, eta_w=1.0):
    """S(0, T) of the balanced flow (delta = 0, ||beta_k(0)|| = product) to convergence, on fresh Gaussian data
    (n x d), a Gaussian teacher of rank ``teacher_rank`` and an initialization, all drawn from ``rng``."""
    d, h, c = dims
    X = rng.standard_normal((n, d))
    Y = X @ (rng.standard_normal((c, teacher_rank)) @ rng.standard_normal((teacher_rank, d))).T
    A0, W0 = init_with_deltas(d, c, np.zeros(h), np.full(h, product), seed=int(rng.integers(2**31)), eta_a=eta_a,
                              eta_w=eta_w)
    At, Wt, _ = flow_to_convergence(A0, W0, X, Y, t_fit, converged_tol, eta_a, eta_w)
    return kernel_distance_small(ntk(X, At[0], Wt[0], eta_a, eta_w), ntk(X, At[1], Wt[1], eta_a, eta_w))
