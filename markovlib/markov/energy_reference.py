"""Independent reference: Part I's energy results (Sec. 4, App. F) written out from the statements, sharing no code
with the functions they check, for the chapter gradient_flow_energy (evidence of kind "independent").

* :func:`energy_formula`: eq-energy, E(e, w) = e^2 - w^2 - sign(w) log|w| (Lemma 1), not ``energy.energy``.
* :func:`energy_gradient`, :func:`coefficient_gradient`: the closed forms grad E = (2e, -2w - 1/|w|) and
  grad c = (2e m(w), 4e^2|w|), m(w) = 1 + 2w|w| (Lemma 1's proof: their dot product vanishes).
* :func:`theorem_rule`: Thm 2 (p + q > 1) and Thm 8 (p + q < 1) as rules on (w0, E0).
* :func:`p_local_exact`: eq-p-local, the probability that a flow from N(0, sigma^2 I) ends in a bad local minimum,
  by quadrature of the energy criterion.
* :func:`energy_balance_error`: eq-energy-balance, dE/dt = 2 e^2 dL/db along the free-bias flow, by torch autograd of
  ``reference.loss_with_bias``; :func:`frobenius_error`: n . curl n = 16 e^3 m(w)|w| by a torch Jacobian.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from scipy.integrate import quad
from scipy.special import erf

from ..numerics import checks
from . import reference

__all__ = ["E_SAD", "W_SAD", "energy_formula", "energy_gradient", "coefficient_gradient", "theorem_rule",
           "p_local_exact", "energy_balance_error", "frobenius_error"]

E_SAD = -(1.0 + math.log(2.0)) / 2.0  # eq-e-sad, E(0, -1/sqrt 2) (Lemma 12)
W_SAD = -1.0 / math.sqrt(2.0)  # the saddle of Thm 1


def energy_formula(e, w):
    """eq-energy written out: E(e, w) = e^2 - w^2 - sign(w) log|w| (Lemma 1); ``w`` must be nonzero."""
    e, w = checks.finite_array("e", e), checks.finite_array("w", w)
    if np.any(w == 0):
        raise ValueError("w must be nonzero (E is undefined on the invariant line w = 0)")
    return e ** 2 - w ** 2 - np.sign(w) * np.log(np.abs(w))


def energy_gradient(e, w):
    """grad E = (2e, -2w - 1/|w|) (Lemma 1's proof), stacked on the first axis; ``w`` must be nonzero."""
    e, w = checks.finite_array("e", e), checks.finite_array("w", w)
    if np.any(w == 0):
        raise ValueError("w must be nonzero")
    return np.stack([2 * e, -2 * w - 1 / np.abs(w)])


def coefficient_gradient(e, w):
    """grad c = (2e m(w), 4e^2|w|) with m(w) = 1 + 2w|w| (Lemma 7), stacked on the first axis."""
    e, w = checks.finite_array("e", e), checks.finite_array("w", w)
    return np.stack([2 * e * (1 + 2 * w * np.abs(w)), 4 * e ** 2 * np.abs(w)])


def theorem_rule(e0, w0, p, q):
    """Thm 2 (p + q > 1) and Thm 8 (p + q < 1) as rules on (w0, E0): "local_min" or "global_min", for e0 != 0 and
    w0 != 0 (the measure-zero separatrices E0 = E_sad are not separated out).

    p + q > 1: local iff w0 > 0, or -1/sqrt2 < w0 < 0 and E0 < E_sad; p + q < 1: local iff w0 < -1/sqrt2 and
    E0 < E_sad."""
    p, q = checks.probability("p", p), checks.probability("q", q)
    if abs(p + q - 1) < 1e-12:
        raise ValueError(f"p + q must differ from 1 (Thms 2 and 8), got p = {p}, q = {q}")
    E0 = energy_formula(e0, w0)
    w0 = np.asarray(w0, dtype=float)
    if p + q > 1:
        local = (w0 > 0) | ((w0 > W_SAD) & (E0 < E_SAD))
    else:
        local = (w0 < W_SAD) & (E0 < E_SAD)
    return np.where(local, "local_min", "global_min")


def p_local_exact(sigma, above_one):
    """eq-p-local: P(the flow from (e0, w0) ~ N(0, sigma^2 I) ends in a bad local minimum), by quadrature.

    With R(w) = E_sad + w^2 - log|w| and P(e0^2 < R) = erf(sqrt(R) / (sigma sqrt 2)): 1/2 + int_{-1/sqrt2}^0
    phi_sigma(w) erf(...) dw for p + q > 1 (``above_one``), int_{-inf}^{-1/sqrt2} phi_sigma(w) erf(...) dw for
    p + q < 1."""
    sigma = checks.positive_real("sigma", sigma)

    def f(w):
        R = E_SAD + w * w - math.log(abs(w))
        return math.exp(-w * w / (2 * sigma ** 2)) / (sigma * math.sqrt(2 * math.pi)) * float(
            erf(math.sqrt(max(R, 0.0)) / (sigma * math.sqrt(2))))

    if above_one:
        return 0.5 + quad(f, W_SAD, 0.0, limit=200, points=[-sigma])[0]
    return quad(f, -np.inf, W_SAD, limit=200)[0]


def energy_balance_error(x, p, q) -> float:
    """max |dE/dt - 2 e^2 dL/db| / max |dE/dt| at the points ``x`` (rows (e, w, b)), the velocity being -grad L of
    ``reference.loss_with_bias`` by torch autograd (eq-energy-balance)."""
    x = np.atleast_2d(checks.finite_array("x", x))
    if x.ndim != 2 or x.shape[1] != 3:
        raise ValueError(f"x must hold points (e, w, b) in rows, got shape {x.shape}")
    g = torch.tensor(reference.autograd_grad(x, p, q))
    e, w = torch.tensor(x[:, 0]), torch.tensor(x[:, 1])
    dE = 2 * e * (-g[:, 0]) + (-2 * w - 1 / torch.abs(w)) * (-g[:, 1])  # grad E . (de/dt, dw/dt)
    return float((dE - 2 * e ** 2 * g[:, 2]).abs().max() / (dE.abs().max() + 1e-300))


def frobenius_error(x) -> tuple[float, bool]:
    """``(error, nonzero)``: the largest relative error of n . curl n = 16 e^3 m(w)|w| at the points ``x`` (rows
    (e, w, b)), curl n from the torch Jacobian of ``reference.frobenius_normal``, and whether the closed form is
    nonzero at every point (then no data-independent first integral exists, by Frobenius)."""
    x = torch.tensor(np.atleast_2d(checks.finite_array("x", x)))
    if x.ndim != 2 or x.shape[1] != 3:
        raise ValueError(f"x must hold points (e, w, b) in rows, got shape {tuple(x.shape)}")
    J = torch.func.vmap(torch.func.jacrev(reference.frobenius_normal))(x)  # J[k, i, j] = d n_i / d x_j
    curl = torch.stack([J[:, 2, 1] - J[:, 1, 2], J[:, 0, 2] - J[:, 2, 0], J[:, 1, 0] - J[:, 0, 1]], -1)
    nc = (reference.frobenius_normal(x) * curl).sum(-1)
    e, w = x[:, 0], x[:, 1]
    closed = 16 * e ** 3 * (1 + 2 * w * torch.abs(w)) * torch.abs(w)
    return float((nc - closed).abs().max() / closed.abs().max()), bool((closed.abs() > 0).all())
