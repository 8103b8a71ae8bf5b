"""The authors' 2-token model and its equivalence with the binary model of the paper (reference Sec. 7).

The authors' code does not feed the scalar symbol x_n in {0, 1} through one embedding vector e. It has a 2-token
vocabulary: a 2 x d token embedding with rows E_0, E_1, tied to a 2-logit head with biases (b_0, b_1), trained
with softmax cross-entropy. In the package this is ``MarkovTransformer(n_states=2)``. The layer between embedding
and head is the same, and the two models compute the same function under

    e = E_1 - E_0,        p_n = P_n + E_0,        b = b_1 - b_0                         (eq. two-token-map)

because the embedded input is E[x_n] + P_n = x_n (E_1 - E_0) + (P_n + E_0) = x_n e + p_n, and a 2-class softmax
cross-entropy with logits (<E_0, z> + b_0, <E_1, z> + b_1) is the binary cross-entropy of their difference
<E_1 - E_0, z> + b_1 - b_0 = <e, z> + b. The map is linear and onto, but not one to one (E_0 is free), so the
gradient dynamics differ: gradient flow in (E_0, E_1, P) moves (e, p) with the metric J J^T of the map J, not
with the identity (:func:`induced_binary_gradient`).

The authors' two guideline initializations of the 2-state model (reference Sec. 7):

* :func:`init_authors_submission` (the code submitted with the paper): W_1 all 1, W_2 all -1, every other weight
  N(0, 0.02^2), biases 0.
* :func:`init_authors_public` (the later public code): both token rows all -1, positional rows all 0.5, W_1 all 2,
  W_2 all -2, attention N(0, 0.02^2), biases 0. Then e = E_1 - E_0 = 0 exactly and p_n = -1/2 (every entry), so
  W_1 y_n < 0 at the start and every ReLU is dead; the logit is b = 0 and the starting loss is log 2.

Read through the canonical parameterization (alpha = 1/sqrt(d), u = (2/sqrt(r)) 1, r = 4d), a constant W_1 = k 1 1^T
is |w| u alpha^T with |w| = k sqrt(r d) / 2, and a constant W_2 = -k 1 1^T is w alpha u^T with w = -k sqrt(r d) / 2:
the submission's W_1, W_2 read as w = -sqrt(r d) / 2 = -d (w = -8 at d = 8), the public code's as w = -d * 2 = -16
at d = 8. Their e is small and random (submission) or exactly 0 (public code).
"""
from __future__ import annotations

import math

import torch

from ..numerics import checks
from .model import MarkovTransformer


def _check_two_state(model):
    if not isinstance(model, MarkovTransformer) or model.n_states != 2 or not model.tied:
        raise ValueError("model must be a tied MarkovTransformer with n_states=2 (the authors' 2-token model)")


def _check_binary(model):
    if not isinstance(model, MarkovTransformer) or not model.binary:
        raise ValueError("model must be the binary MarkovTransformer (n_states=None)")


def _layer_names(model):
    return [n for n in ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2") if hasattr(model, n)]


@torch.no_grad()
def binary_equivalent(model: MarkovTransformer) -> MarkovTransformer:
    """The binary model (n_states=None) computing the same function as the 2-state ``model``, by
    (eq. two-token-map): e = E_1 - E_0, p_n = P_n + E_0, b = b_1 - b_0, the layer weights copied."""
    _check_two_state(model)
    ref = model.embedding
    out = MarkovTransformer(model.d, model.max_len, attention=model.attention, hidden=model.hidden,
                            dtype=ref.dtype, device=ref.device)
    out.embedding.copy_(model.embedding[1] - model.embedding[0])
    out.positional.copy_(model.positional + model.embedding[0])
    out.bias.copy_(model.bias[1] - model.bias[0])
    for name in _layer_names(model):
        getattr(out, name).copy_(getattr(model, name))
    return out


@torch.no_grad()
def two_state_from_binary(model: MarkovTransformer, E0=None, b0: float = 0.0) -> MarkovTransformer:
    """A 2-state model computing the same function as the binary ``model``: E_0 given (default zero),
    E_1 = E_0 + e, P_n = p_n - E_0, (b_0, b_1) = (b0, b0 + b)."""
    _check_binary(model)
    ref = model.embedding
    out = MarkovTransformer(model.d, model.max_len, attention=model.attention, hidden=model.hidden, n_states=2,
                            dtype=ref.dtype, device=ref.device)
    e0 = torch.zeros_like(ref) if E0 is None else torch.as_tensor(E0, dtype=ref.dtype, device=ref.device)
    if e0.shape != ref.shape or not bool(torch.isfinite(e0).all()):
        raise ValueError(f"E0 must be a finite vector of length d = {model.d}")
    b0 = float(checks.finite_array("b0", b0))
    out.embedding.copy_(torch.stack([e0, e0 + model.embedding]))
    out.positional.copy_(model.positional - e0)
    out.bias.copy_(torch.tensor([b0, b0 + float(model.bias)], dtype=ref.dtype))
    for name in _layer_names(model):
        getattr(out, name).copy_(getattr(model, name))
    return out


def induced_binary_gradient(grad_e, grad_p):
    """The velocity of (e, p) under gradient flow in the 2-state parameters, given the binary gradients
    dL/de (d,) and dL/dp (N, d) at the corresponding point (chain rule through eq. two-token-map):

        dL/dE_1 = dL/de,   dL/dE_0 = -dL/de + sum_n dL/dp_n,   dL/dP_n = dL/dp_n,
        de/dt   = -(dL/dE_1 - dL/dE_0) = -(2 dL/de - sum_n dL/dp_n),
        dp_n/dt = -(dL/dP_n + dL/dE_0) = -(dL/dp_n - dL/de + sum_m dL/dp_m).

    Returns (de/dt, dp/dt). The binary parameterization's own flow is (-dL/de, -dL/dp)."""
    grad_e = torch.as_tensor(grad_e)
    grad_p = torch.as_tensor(grad_p)
    if grad_p.dim() != 2 or grad_e.shape != grad_p.shape[1:]:
        raise ValueError("grad_e must have shape (d,) and grad_p shape (N, d)")
    s = grad_p.sum(dim=0)
    return -(2 * grad_e - s), -(grad_p - grad_e + s)


def init_authors_submission(model: MarkovTransformer, *, std: float = 0.02, seed=None, generator=None):
    """The guideline init of the code submitted with the paper (module docstring): W_1 all 1, W_2 all -1, every
    other weight N(0, std^2), biases 0. In place; returns ``model`` (``init_weights("authors_submission")``)."""
    _check_two_state(model)
    return model.init_weights("authors_submission", std=std, seed=seed, generator=generator)


def init_authors_public(model: MarkovTransformer, *, std: float = 0.02, seed=None, generator=None):
    """The guideline init of the later public code (module docstring): token rows all -1, positional all 0.5,
    W_1 all 2, W_2 all -2, attention N(0, std^2), biases 0. In place; returns ``model``
    (``init_weights("authors_public")``)."""
    _check_two_state(model)
    return model.init_weights("authors_public", std=std, seed=seed, generator=generator)


def constant_ffn_scalar(k: float, d: int, hidden: int | None = None) -> float:
    """|w| of a constant feed-forward layer W_1 = k 1 1^T read canonically (module docstring):
    |w| = k sqrt(r d) / 2 with r = hidden (default 4d)."""
    d = checks.positive_int("d", d)
    r = checks.positive_int("hidden", hidden) if hidden is not None else 4 * d
    return float(k) * math.sqrt(r * d) / 2
