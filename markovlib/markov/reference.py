"""Independent reference: the canonical loss of Makkuva et al. re-derived in torch, sharing no code with
:mod:`markovlib.markov.canonical`, so that Part I's chapters can check ``canonical``, ``energy`` and ``flow`` against
torch autograd (evidence of kind "independent").

* :func:`logistic_loss`: Lemma 2, F(c, beta) = E[BCE(c X + beta, Y)] over the four pairs (x, y) with weights
  pi_x P(y | x), written with torch's own binary cross-entropy.
* :func:`optimal_beta`: Lemma 5, beta* = log u with u > 0 the root of q e^c u^2 + (q - p) u - p = 0 (from
  dF/dbeta = 0), written without cancellation for either sign of q - p.
* :func:`coefficient`: c(e, w) = e^2 (1 + 2 w|w|) (App. C).
* :func:`reduced_loss` (L(e, w) = F(c, beta*(c)), Lemma 6) and :func:`loss_with_bias` (L(e, w, b) with
  beta = b - e^2 / 2, Lemma 2) take points ``theta`` with the coordinates on the last axis.
* :func:`autograd_grad`: the torch gradient of either loss at numpy points (rows).
* :func:`flow_field`, :func:`flow_jacobian`: the gradient flow -grad L(e, w) and its Jacobian -Hess L by autograd, in
  the signature of ``scipy.integrate.solve_ivp`` (an integration of Lemma 7's flow that shares no code with ``flow``).
* :func:`frobenius_normal`: n = grad c x grad beta = (4e^2|w|, -2e m(w), 4e^3|w|) in (e, w, b), the normal of the
  planes a data-independent first integral of the free-bias flow would have to be tangent to.

With the attention scalar a (Sec. 4.1, App. G; f = e^2 (1 + a e^2), c = f m(w)):

* :func:`attention_loss`: Lemma 2 with beta = b - f/2, or for ``b=None`` the optimal beta* (Lemma 5, textbook root);
  :func:`attention_grad` its autograd gradient at (e, w, a) or (e, w, a, b); :func:`attention_loss_np` its values at
  the optimal bias as a numpy function.
* :func:`optimal_beta_np` (beta* in numpy) and :func:`optimal_bias_full`, the full model's optimal bias
  beta*(c) + f/2 + [e(1 + a e^2) < 0] 2w|w| f (eq-att-c).
* :func:`full_model_loss`: the exact expected next-symbol loss of the full model (linear attention) with canonical
  weights built from torch scalars, through ``torch.func.functional_call``.

Every function takes torch tensors of float64 (numpy input to :func:`autograd_grad`); (p, q) are scalars in (0, 1).
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from ..numerics import checks

__all__ = ["logistic_loss", "optimal_beta", "coefficient", "reduced_loss", "loss_with_bias", "autograd_grad",
           "flow_field", "flow_jacobian", "frobenius_normal", "attention_loss", "attention_grad", "attention_loss_np",
           "optimal_beta_np", "optimal_bias_full", "full_model_loss"]


def _pq(p, q):
    return checks.probability("p", p), checks.probability("q", q)


def logistic_loss(c, beta, p, q):
    """Lemma 2: the expected binary cross-entropy over the four pairs (x, y), weights pi_x P(y | x)."""
    p, q = _pq(p, q)
    pi0, pi1 = q / (p + q), p / (p + q)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    out = 0.0
    for x, y, weight in ((0, 0, pi0 * (1 - p)), (0, 1, pi0 * p), (1, 0, pi1 * q), (1, 1, pi1 * (1 - q))):
        z = c * x + beta
        out = out + weight * bce(z, torch.full_like(z, float(y)), reduction="none")
    return out


def optimal_beta(c, p, q):
    """Lemma 5: log of the root u > 0 of q e^c u^2 + (q - p) u - p = 0, written without cancellation."""
    p, q = _pq(p, q)
    Cc = torch.exp(c)
    S = torch.sqrt((q - p) ** 2 + 4 * p * q * Cc)
    u = 2 * p / ((q - p) + S) if q >= p else ((p - q) + S) / (2 * q * Cc)
    return torch.log(u)


def coefficient(e, w):
    """c(e, w) = e^2 (1 + 2 w|w|) (App. C)."""
    return e ** 2 * (1 + 2 * w * torch.abs(w))


def _last_axis(theta, k):
    if not isinstance(theta, torch.Tensor) or theta.shape[-1:] != (k,):
        raise ValueError(f"theta must be a torch tensor with {k} coordinates on its last axis")
    return theta


def reduced_loss(theta, p, q):
    """Lemma 6: L(e, w) = F(c, beta*(c)) at theta[..., :2] = (e, w)."""
    theta = _last_axis(theta, 2)
    c = coefficient(theta[..., 0], theta[..., 1])
    return logistic_loss(c, optimal_beta(c, p, q), p, q)


def loss_with_bias(theta, p, q):
    """Lemma 2 with the bias: L(e, w, b) = F(c, b - e^2 / 2) at theta[..., :3] = (e, w, b)."""
    theta = _last_axis(theta, 3)
    e, w, b = theta[..., 0], theta[..., 1], theta[..., 2]
    return logistic_loss(coefficient(e, w), b - e ** 2 / 2, p, q)


def autograd_grad(x, p, q):
    """torch autograd gradient of :func:`reduced_loss` (rows (e, w)) or :func:`loss_with_bias` (rows (e, w, b)) at
    the numpy points ``x`` (one point or an (n, 2) / (n, 3) array); returns an (n, k) array."""
    x = np.atleast_2d(checks.finite_array("x", x))
    if x.ndim != 2 or x.shape[1] not in (2, 3):
        raise ValueError(f"x must hold points (e, w) or (e, w, b) in rows, got shape {x.shape}")
    T = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    loss = reduced_loss if x.shape[1] == 2 else loss_with_bias
    (g,) = torch.autograd.grad(loss(T, p, q).sum(), T)
    return g.numpy()


def flow_field(t, y, p, q):
    """-grad L(e, w) at y = (e, w) by torch autograd of :func:`reduced_loss` (``solve_ivp``'s ``fun(t, y, *args)``)."""
    return -autograd_grad(np.asarray(y, dtype=float)[:2], p, q)[0]


def flow_jacobian(t, y, p, q):
    """-Hess L(e, w) at y = (e, w) by torch autograd (``solve_ivp``'s ``jac(t, y, *args)``)."""
    y = torch.tensor(checks.finite_array("y", y, ndim=1)[:2], dtype=torch.float64)
    return -torch.func.hessian(lambda z: reduced_loss(z, p, q))(y).numpy()


def frobenius_normal(x):
    """n(e, w, b) = grad c x grad beta = (4e^2|w|, -2e m(w), 4e^3|w|), m(w) = 1 + 2w|w|, at torch points x[..., :3]."""
    x = _last_axis(x, 3)
    e, w = x[..., 0], x[..., 1]
    m = 1 + 2 * w * torch.abs(w)
    return torch.stack([4 * e ** 2 * torch.abs(w), -2 * e * m, 4 * e ** 3 * torch.abs(w)], -1)


def attention_loss(e, w, a, b, p, q):
    """Lemma 2 with the attention scalar: beta = b - f/2 (f = e^2 (1 + a e^2)), or the optimal beta* for b=None."""
    p, q = _pq(p, q)
    f = e**2 * (1 + a * e**2)
    c = f * (1 + 2 * w * torch.abs(w))
    if b is None:
        beta = math.log(2 * p) - torch.log((q - p) + torch.sqrt((q - p) ** 2 + 4 * p * q * torch.exp(c)))
    else:
        beta = b - f / 2
    pi0, pi1 = q / (p + q), p / (p + q)
    return (pi0 * (p * F.softplus(-beta) + (1 - p) * F.softplus(beta))
            + pi1 * ((1 - q) * F.softplus(-(c + beta)) + q * F.softplus(c + beta)))


def attention_grad(x, p, q):
    """torch autograd gradient of :func:`attention_loss` at x = (e, w, a) (optimal bias) or x = (e, w, a, b)."""
    x = checks.finite_array("x", x, ndim=1)
    if x.size not in (3, 4):
        raise ValueError(f"x must be (e, w, a) or (e, w, a, b), got {x.size} entries")
    x = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    L = attention_loss(x[0], x[1], x[2], x[3] if x.numel() == 4 else None, p, q)
    return torch.autograd.grad(L, x)[0].numpy()


def attention_loss_np(x, p, q):
    """:func:`attention_loss` at the optimal bias as a numpy function of x = (e, w, a) (rows, or one point)."""
    x = torch.as_tensor(np.asarray(x, dtype=float))
    if x.shape[-1:] != (3,):
        raise ValueError(f"x must hold points (e, w, a) on its last axis, got shape {tuple(x.shape)}")
    with torch.no_grad():
        return attention_loss(x[..., 0], x[..., 1], x[..., 2], None, p, q).numpy()


def optimal_beta_np(c, p, q):
    """Lemma 5's beta* in numpy, the root of q e^c s^2 + (q - p) s - p = 0 as written (s = e^beta)."""
    p, q = _pq(p, q)
    return math.log(2 * p) - np.log((q - p) + np.sqrt((q - p) ** 2 + 4 * p * q * np.exp(c)))


def optimal_bias_full(e, w, a, p, q):
    """The optimal bias of the full model: beta*(c) + f/2 + [e(1 + ae^2) < 0] 2w|w| f (eq-att-c)."""
    f = e**2 * (1 + a * e**2)
    c = f * (1 + 2 * w * abs(w))
    return float(optimal_beta_np(c, p, q)) + f / 2 + (2 * w * abs(w) * f if e * (1 + a * e**2) < 0 else 0.0)


def full_model_loss(model, e, w, a, b, alpha, u, p, q):
    """Exact expected next-symbol loss of the full model (a ``MarkovTransformer`` with linear attention) with the
    canonical weights of App. G built from torch scalars (e, w, a, b), direction ``alpha`` and ``u``."""
    from torch.func import functional_call

    p, q = _pq(p, q)
    Aa = torch.outer(alpha, alpha)
    params_ = {"embedding": e * alpha, "positional": (-e / 2) * alpha.expand(model.max_len, model.d),
               "W_Q": 4 * a * Aa, "W_K": Aa, "W_V": Aa, "W_O": Aa,
               "W_1": torch.abs(w) * torch.outer(u, alpha), "W_2": w * torch.outer(alpha, u), "bias": b}
    lg = functional_call(model, params_, (torch.tensor([[0], [1]]),))[:, 0]
    pi, p1 = (q / (p + q), p / (p + q)), (p, 1 - q)  # p1[x] = P(x_{n+1} = 1 | x_n = x)
    return sum(pi[x] * (p1[x] * F.softplus(-lg[x]) + (1 - p1[x]) * F.softplus(lg[x])) for x in (0, 1))
