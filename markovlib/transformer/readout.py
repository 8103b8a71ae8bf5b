"""Reading a (trained) binary model in canonical terms (reference Sec. 3, Sec. 6, Sec. 7).

Closed forms of the canonical model (see :mod:`markovlib.transformer.model` for the weights): the logit is
logit_n = c x_n + offset(e, w, a) + b with c = e^2 (1 + a e^2)(1 + 2 w|w|) (:func:`canonical_logit`,
:func:`canonical_logit_offset`), and the loss-minimizing bias (:func:`optimal_canonical_bias`). Diagnostics of a
model: the energy fraction of the top singular components of each weight matrix (:func:`singular_fractions`,
Figs. 3, 6, 7), the empirical coefficient of x_n in the logit (:func:`context_coefficient`, Lemma 2) and the
canonical scalars (e, w, a, b) of a near rank-one model (:func:`canonical_scalars`).

Works on any :class:`~markovlib.transformer.model.MarkovTransformer` passed in; this module does not import it.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from ..markov.canonical import coefficient, optimal_beta
from ..numerics import checks


def canonical_logit_offset(e, w, a=0.0):
    """The constant of the canonical logit, logit_n = c x_n + offset + b (module docstring):
    -kappa/2 if m = e(1 + a e^2) >= 0, else -kappa/2 - 2 w|w| kappa, with kappa = e^2 (1 + a e^2)."""
    e, w, a = (np.asarray(v, dtype=float) for v in (e, w, a))
    kappa = e**2 * (1 + a * e**2)
    m = e * (1 + a * e**2)
    out = np.where(m >= 0, -kappa / 2, -kappa / 2 - 2 * w * np.abs(w) * kappa)
    return out[()] if out.ndim == 0 else out


def canonical_logit(x, e, w, a=0.0, b=0.0):
    """Closed-form logit of the canonical model (module docstring; reference Sec. 3 and Sec. 6):
    c(e, w, a) x_n + offset(e, w, a) + b. Broadcasts over the array of symbols ``x``."""
    x = np.asarray(x, dtype=float)
    return coefficient(e, w, a) * x + canonical_logit_offset(e, w, a) + float(b)


def optimal_canonical_bias(e, w, a, p, q):
    """The loss-minimizing bias of the canonical model: b* = -offset(e, w, a) + beta*(c) (reference Sec. 3,
    Lemma 5, with beta* from :func:`markovlib.markov.canonical.optimal_beta`; offset from
    :func:`canonical_logit_offset`). When m = e(1 + a e^2) >= 0 this is :func:`markovlib.markov.canonical.optimal_bias`,
    e^2(1 + a e^2)/2 + beta*(c); when m < 0 the full model's bias must also absorb the shift 2 w|w| kappa."""
    c = coefficient(e, w, a)
    return float(-canonical_logit_offset(e, w, a) + optimal_beta(c, p, q))



class CanonicalScalars(NamedTuple):
    """The canonical scalars of a binary model with its directions alpha (d) and u (hidden, ||u|| = 2)."""

    e: float
    w: float
    a: float
    b: float
    alpha: np.ndarray
    u: np.ndarray



def top_singular_fraction(W, k=1) -> float:
    """Fraction of the energy in the top-k singular components, sum_{i<=k} s_i^2 / sum_i s_i^2 (reference
    Sec. 7, Figs. 3, 6, 7). 1 for a rank-one matrix; nan for the zero matrix or non-finite entries."""
    k = checks.positive_int("k", k)
    W = torch.as_tensor(W).detach().to("cpu", torch.float64)
    if W.dim() == 1:
        W = W[None, :]
    if W.dim() != 2:
        raise ValueError(f"W must be a matrix (or vector), got shape {tuple(W.shape)}")
    if not bool(torch.isfinite(W).all()):
        return float("nan")
    s2 = torch.linalg.svdvals(W) ** 2
    total = float(s2.sum())
    if total == 0:
        return float("nan")
    return float(s2[:k].sum()) / total


def singular_fractions(model, k=1) -> dict:
    """top_singular_fraction of every weight matrix of ``model`` (:meth:`MarkovTransformer.weight_matrices`)."""
    return {name: top_singular_fraction(W, k) for name, W in model.weight_matrices().items()}


@torch.no_grad()
def context_coefficient(logits: torch.Tensor, x: torch.Tensor) -> float:
    """The empirical coefficient of x_n in the logit of a binary model: mean logit after a 1 minus mean logit
    after a 0, over the positions of ``x`` (batch, N) with their ``logits`` (batch, N).

    For the canonical model logit_n = c x_n + beta this is exactly c (reference Sec. 3, Lemma 2), so it reads
    where a trained full model ended: c* = log((1-p)(1-q)/(pq)) at the bigram predictor (global minimum,
    prediction = kernel), 0 at the unigram predictor (bad local minimum, prediction = pi1). Unlike the loss
    gap H(pi) - entropy rate, which is second order near p + q = 1, c* is first order there. nan if ``x`` lacks
    one of the two symbols."""
    if logits.shape != x.shape:
        raise ValueError(f"logits and x must have the same shape, got {tuple(logits.shape)} and {tuple(x.shape)}")
    logits = logits.detach().to(torch.float64)
    ones = x == 1
    n1, n0 = int(ones.sum()), int((~ones).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")
    return float(logits[ones].sum() / n1 - logits[~ones].sum() / n0)


@torch.no_grad()
def canonical_scalars(model, *, check=False, rtol=1e-6) -> CanonicalScalars:
    """Read the canonical scalars (e, w, a, b) of a (near) rank-one binary model (inverse of the canonical
    weights, reference Sec. 3 and Sec. 6).

    alpha and u come from the top singular pair of W_1 = |w| u alpha^T, signed so that u >= 0 (sum u > 0) and
    scaled to ||u|| = 2; then w = alpha^T W_2 u / 4, e = <e_vec, alpha>,
    a = k v / 4 with k = alpha^T W_Q^T W_K alpha and v = alpha^T W_O W_V alpha (0 without attention, nan with
    softmax attention, where a is not defined). If W_1 = 0, alpha = e_vec / ||e_vec|| and w = 0.
    For a trained, only approximately rank-one model these are the projections on the top direction.
    ``check=True`` rebuilds the canonical weights from the scalars and raises ValueError unless they match the
    model to ``rtol`` (relative Frobenius error per matrix).
    """
    if not model.binary:
        raise ValueError("model must be the binary model (n_states=None) to have canonical scalars")
    f64 = {name: prm.detach().to("cpu", torch.float64) for name, prm in model.named_parameters()}
    W1, W2, ev = f64["W_1"], f64["W_2"], f64["embedding"]
    U, S, Vh = torch.linalg.svd(W1)
    if float(S[0]) > 0:
        u1, alpha = U[:, 0], Vh[0]
        if float(u1.sum()) < 0:
            u1, alpha = -u1, -alpha
        u = 2 * u1
        w = float(alpha @ W2 @ u) / 4  # alpha^T (w alpha u^T) u / 4 = w ||u||^2 / 4 = w
    else:
        nrm = float(ev.norm())
        alpha = ev / nrm if nrm > 0 else torch.zeros_like(ev)
        u = torch.full((model.hidden,), 2 / math.sqrt(model.hidden), dtype=torch.float64)
        w = 0.0
    e = float(ev @ alpha)
    if model.attention is None:
        a = 0.0
    elif model.attention == "linear":
        k = float(alpha @ f64["W_Q"].T @ f64["W_K"] @ alpha)
        v = float(alpha @ f64["W_O"] @ f64["W_V"] @ alpha)
        a = k * v / 4
    else:
        a = float("nan")
    b = float(f64["bias"])
    out = CanonicalScalars(e, w, a, b, alpha.numpy(), u.numpy())
    if check:
        if model.attention == "softmax":
            raise ValueError("check=True needs attention None or 'linear'")
        ref = type(model)(model.d, model.max_len, attention=model.attention, hidden=model.hidden)
        u_pos = u.clamp(min=0)  # a perturbed W_1 can give slightly negative entries: then W_1 will not match
        # (u_pos != 0: u is signed so that sum(u) > 0)
        ref.init_weights("canonical", e=e, w=w, a=a, b=b, alpha=alpha.numpy(), u=u_pos.numpy())
        for name, prm in ref.named_parameters():
            if name in ("W_Q", "W_K", "W_V", "W_O"):
                continue  # only their products are canonical
            err = float((prm - f64[name]).norm()) / max(float(f64[name].norm()), 1e-300)
            if err > rtol:
                raise ValueError(f"model is not canonical: {name} differs by relative error {err:.2e} > {rtol}")
    return out
