"""The two yardsticks as critical points of the full model (reference Sec. 2, Thms 4 and 5 of Makkuva et al.).

- :func:`global_min_weights`: the canonical construction of Thm 4, (c*, w, b) with e^2 (1 + 2 w|w|) = c* at
  e = 1 by default: the prediction is the kernel, the loss the entropy rate.
- :func:`kappa`: kappa(w) of the Thm 5 bound, dL >= (p + q - 1) pi_0 pi_1 (kappa(w) - O(rho)) ||delta e||^2.
- :func:`perturbation_study`: the exact loss change under random perturbations of all parameters.
- :func:`direction_c_beta`, :func:`direction_losses`: the explicit directions at theta_pi (canonical,
  positional-free, orthogonal), closed form (c, beta) of the logit c x_n + beta and the measured exact loss change.
- :func:`best_bias_loss`: min over the bias of a model's exact loss (Brent; the loss is convex in b).
- :func:`min_slope_on_range`: the smallest |g'(0)| = pq |p + q - 1| / (p + q)^2 over the theory range at a margin.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from scipy.optimize import minimize_scalar
from scipy.special import logit

from ..markov.canonical import c_star, logistic_loss, optimal_bias
from ..numerics import checks
from .exact import exact_loss
from .inits import random_alpha
from .model import canonical_full_model

DIRECTIONS = ("canonical", "positional-free", "orthogonal")


def global_min_weights(p, q, e=1.0):
    """Thm 4's construction at embedding scale ``e`` (eq-thm4-construction): (c*, w, b) with
    e^2 (1 + 2 w|w|) = c* = log((1-p)(1-q)/(pq)), w = sign(t) sqrt(|t|/2), t = c*/e^2 - 1, and the optimal bias b
    (Lemma 5 of the canonical model: b - e^2/2 = logit(p))."""
    p, q = checks.probability("p", p), checks.probability("q", q)
    e = checks.positive_real("e", e)
    cs = c_star(p, q)
    t = cs / e**2 - 1  # 2 w|w| = c*/e^2 - 1
    w = math.copysign(math.sqrt(abs(t) / 2), t)
    return cs, w, float(optimal_bias(e, w, p, q))


def kappa(w) -> float:
    """kappa(w) of the Thm 5 bound: 1 for w >= 0, 1 - 4 w^2 below (positive exactly for w > -1/2)."""
    w = float(checks.finite_array("w", w))
    return 1.0 if w >= 0 else 1 - 4 * w * w


def perturbation_study(model, chain, radius, n, seed, n_exact):
    """Exact loss change (all 2^n_exact sequences, :func:`~markovlib.transformer.exact.exact_loss`) and
    ||delta e||^2 for ``n`` random perturbations of every parameter of ``model``, each entry N(0, radius^2) from a
    generator seeded with ``seed``; the model is restored afterwards. Returns two arrays (dL, ||delta e||^2)."""
    radius = checks.positive_real("radius", radius)
    n = checks.positive_int("n", n)
    seed = checks.nonnegative_int("seed", seed)
    n_exact = checks.positive_int("n_exact", n_exact)
    base = [prm.detach().clone() for prm in model.parameters()]
    i_e = [name for name, _ in model.named_parameters()].index("embedding")
    gen = torch.Generator().manual_seed(seed)
    dL, a2 = [], []
    with torch.no_grad():
        L0 = float(exact_loss(model, chain, n_exact))
        for _ in range(n):
            deltas = [radius * torch.randn(b0.shape, generator=gen, dtype=b0.dtype) for b0 in base]
            for prm, b0, dl in zip(model.parameters(), base, deltas):
                prm.copy_(b0 + dl)
            dL.append(float(exact_loss(model, chain, n_exact)) - L0)
            a2.append(float(deltas[i_e].pow(2).sum()))
        for prm, b0 in zip(model.parameters(), base):
            prm.copy_(b0)
    return np.array(dL), np.array(a2)


def direction_c_beta(kind, eps, w, b0):
    """Closed form (c, beta) of the logit c x_n + beta along an explicit direction of size ``eps`` at theta_pi(w)
    with bias ``b0``: canonical (e = eps alpha, p_n = -eps/2 alpha): c = eps^2 (1 + 2w|w|), beta = b0 - eps^2/2;
    positional-free (p_n = 0): c = eps^2 (1 + 4w|w|); orthogonal (e = eps alpha_perp): c = eps^2. For eps < 0 the
    ReLU fires after a 0 instead of a 1: the canonical direction gets the constant -2w|w| eps^2 (absorbed by the
    bias), and the positional-free direction switches the ReLU off (c = eps^2)."""
    checks.choice("kind", kind, set(DIRECTIONS))
    eps = np.asarray(eps, dtype=float)
    w = float(checks.finite_array("w", w))
    m2, m4 = 1 + 2 * w * abs(w), 1 + 4 * w * abs(w)
    if kind == "canonical":
        return eps**2 * m2, b0 - eps**2 / 2 - np.where(eps < 0, 2 * w * abs(w) * eps**2, 0.0)
    if kind == "positional-free":
        return eps**2 * np.where(eps > 0, m4, 1.0), b0 + 0 * eps
    return eps**2, b0 + 0 * eps  # orthogonal: s = 0, the ReLU never fires


def direction_losses(chain, w, eps, seed, *, d, n_exact):
    """(name, predicted dL, measured dL) for the three explicit directions at theta_pi(w) of ``chain`` (embedding
    0, bias logit(pi_1), the full softmax model of width ``d`` on ``n_exact``-symbol sequences): predicted by
    ``logistic_loss`` at :func:`direction_c_beta`, measured by the exact loss."""
    d = checks.positive_int("d", d)
    if d < 2:
        raise ValueError(f"d must be at least 2 (the orthogonal direction), got {d!r}")
    n_exact = checks.positive_int("n_exact", n_exact)
    b0 = logit(chain.p / (chain.p + chain.q))
    model = canonical_full_model(0.0, w, b0, d=d, max_len=n_exact - 1, seed=seed)
    alpha = torch.as_tensor(random_alpha(d, seed))
    perp = torch.zeros(d, dtype=torch.float64)
    perp[0], perp[1] = alpha[1], -alpha[0]  # orthogonal to alpha (entries +-1/sqrt(d))
    perp = perp / perp.norm()
    L0 = float(exact_loss(model, chain, n_exact).detach())
    out = []
    for name, e_vec, pos in (("canonical", eps * alpha, -eps / 2 * alpha),
                             ("positional-free", eps * alpha, 0 * alpha), ("orthogonal", eps * perp, 0 * perp)):
        c, beta = direction_c_beta(name, eps, w, b0)
        with torch.no_grad():
            model.embedding.copy_(e_vec)
            model.positional.copy_(pos.expand_as(model.positional))
            measured = float(exact_loss(model, chain, n_exact)) - L0
        predicted = float(logistic_loss(c, beta, chain.p, chain.q)) - chain.marginal_entropy
        out.append((name, predicted, measured))
    return out


def best_bias_loss(model_at_b, chain, n_exact):
    """min over b of the exact loss of ``model_at_b(b)`` (a function returning the model with bias b), by Brent's
    method from the bracket (-2, 2), tolerance 1e-10; the loss is convex in b."""
    n_exact = checks.positive_int("n_exact", n_exact)
    if not callable(model_at_b):
        raise ValueError(f"model_at_b must be a function of the bias, got {model_at_b!r}")

    def loss_b(b):
        with torch.no_grad():
            return float(exact_loss(model_at_b(b), chain, n_exact))
    return minimize_scalar(loss_b, bracket=(-2.0, 2.0), method="brent", tol=1e-10).fun


def min_slope_on_range(margin, within=(0.02, 0.98), points=481):
    """The smallest |g'(0)| = pq |p + q - 1| / (p + q)^2 (the slope of the loss change along an explicit direction
    in eps^2 m) over a ``points`` x ``points`` grid of ``within``^2, on the chains with |p + q - 1| >= ``margin``."""
    margin = checks.positive_real("margin", margin)
    points = checks.positive_int("points", points)
    g = np.linspace(*within, points)
    PP, QQ = np.meshgrid(g, g)
    gp0 = PP * QQ * np.abs(PP + QQ - 1) / (PP + QQ) ** 2
    keep = np.abs(PP + QQ - 1) >= margin - 1e-12
    if not keep.any():
        raise ValueError(f"margin {margin!r} leaves no chain of the range {within!r}")
    return float(gp0[keep].min())
