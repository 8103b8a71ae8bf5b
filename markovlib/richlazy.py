"""Part II: the minimal model of "Get rich quick" (Kunin et al., NeurIPS 2024, Sec. 3 and App. A).

f(x; a, w) = a w^T x with a in R and w in R^d, trained by gradient flow with layer-wise learning rates
eta_a, eta_w on the MSE L = ||X (a w) - y||^2 / (2n). The rescaling symmetry (a, w) -> (a / s, s w) gives the
conserved quantity delta = eta_w a^2 - eta_a ||w||^2 (Sec. 3), which fixes the regime at initialization:
delta > 0 upstream (lazy), delta = 0 balanced (rich), delta < 0 downstream (lazy, then delayed rich).
"""
from __future__ import annotations

import numpy as np


def _finite_array(name, x) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got non-finite values")
    return arr


def _positive_rate(name, x) -> float:
    v = float(x)
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite learning rate > 0, got {x!r}")
    return v


def conserved_delta(a, w, eta_a=1.0, eta_w=1.0):
    """delta = eta_w a^2 - eta_a ||w||^2 (Sec. 3), broadcast over leading axes; ``w``'s last axis is the input
    dimension, so ``a`` has the shape of ``w`` without its last axis."""
    eta_a = _positive_rate("eta_a", eta_a)
    eta_w = _positive_rate("eta_w", eta_w)
    a = _finite_array("a", a)
    w = _finite_array("w", w)
    if w.ndim == 0:
        raise ValueError("w must have at least one axis (the input dimension)")
    try:
        return eta_w * a**2 - eta_a * np.sum(w**2, axis=-1)
    except ValueError:
        raise ValueError(f"a has shape {a.shape} but w has leading shape {w.shape[:-1]}; they must broadcast") from None


def kernel_distance(K1, K2) -> float:
    """S = 1 - <K1, K2>_F / (||K1||_F ||K2||_F) (Sec. 3, after Fort et al.): 0 when the kernel only rescales
    (lazy), up to 1 (rich). Two zero kernels are at distance 0; one zero kernel is at distance 1."""
    K1 = _finite_array("K1", K1)
    K2 = _finite_array("K2", K2)
    if K1.shape != K2.shape or K1.ndim != 2:
        raise ValueError(f"K1 and K2 must be matrices of one shape, got {K1.shape} and {K2.shape}")
    n1, n2 = np.linalg.norm(K1), np.linalg.norm(K2)
    if n1 == 0 and n2 == 0:
        return 0.0
    if n1 == 0 or n2 == 0:
        return 1.0
    # normalize first, so that huge or tiny kernels do not overflow the inner product
    return float(1.0 - np.sum((K1 / n1) * (K2 / n2)))
