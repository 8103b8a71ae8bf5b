"""The exact population loss of the reference Sec. 2 by enumerating every context (Thms 4, 5; Lemmas 2, 6).

For short sequences the expected loss is a finite sum over all n_states^N sequences weighted by their
probabilities under the chain started from pi: no sampling noise, and autograd gives the exact gradient.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..numerics import checks

MAX_ENUMERATION = 2**20  # sequences; 2^20 x length symbols is the most exact_loss will enumerate


def all_sequences(length, n_states=2, device=None) -> torch.Tensor:
    """Every sequence of ``length`` symbols from {0, ..., n_states - 1}, as an int64 tensor of shape
    (n_states^length, length), in lexicographic order (row k is k written in base ``n_states``)."""
    length = checks.positive_int("length", length)
    n_states = checks.positive_int("n_states", n_states)
    if n_states < 2:
        raise ValueError(f"n_states must be >= 2, got {n_states}")
    if n_states**length > MAX_ENUMERATION:
        raise ValueError(f"n_states^length = {n_states}^{length} exceeds {MAX_ENUMERATION} sequences")
    k = torch.arange(n_states**length, device=device)
    powers = n_states ** torch.arange(length - 1, -1, -1, device=device)
    return (k[:, None] // powers) % n_states


def sequence_probabilities(chain, x: torch.Tensor) -> torch.Tensor:
    """P(x_1, ..., x_N) = pi(x_1) prod_{n>=2} P(x_n | x_{n-1}) (the chain started from its stationary law,
    reference Sec. 1) for every row of the integer tensor ``x`` (batch, N); float64."""
    if not isinstance(x, torch.Tensor) or x.dim() != 2:
        raise ValueError("x must be an integer torch tensor of shape (batch, length)")
    x = x.long()
    P = torch.as_tensor(chain.kernel, dtype=torch.float64, device=x.device)
    pi = torch.as_tensor(chain.stationary, dtype=torch.float64, device=x.device)
    return pi[x[:, 0]] * P[x[:, :-1], x[:, 1:]].prod(dim=1)


def exact_loss(model, chain, length) -> torch.Tensor:
    """The population loss of the reference Sec. 2 at sequence length N = ``length``, computed exactly:

        L_N(theta) = sum_x P(x_1..x_N) (1/(N-1)) sum_{n<N} CE(logit_n(x_1..x_n), x_{n+1}),

    the sum running over all n_states^N sequences (:func:`all_sequences`) with their probabilities under the
    chain started from pi (:func:`sequence_probabilities`). Differentiable: autograd gives the exact gradient of
    the expected loss (no sampling noise), for every parameter of ``model``. ``model.loss`` on a sample is an
    unbiased estimate of it. Needs 2 <= N <= model.max_len + 1 and n_states^N <= MAX_ENUMERATION."""
    length = checks.positive_int("length", length)
    if length < 2:
        raise ValueError(f"length must be >= 2 (one context and one target), got {length}")
    k = 2 if model.binary else model.n_states
    if chain.n_states != k:
        raise ValueError(f"the chain has {chain.n_states} states but the model predicts {k}")
    x = all_sequences(length, k, device=model.W_1.device)
    weights = sequence_probabilities(chain, x)
    logits = model(x[:, :-1])
    target = x[:, 1:]
    if model.binary:
        per_token = F.binary_cross_entropy_with_logits(logits, target.to(logits.dtype), reduction="none")
    else:
        per_token = F.cross_entropy(logits.transpose(1, 2), target, reduction="none")
    return (weights.to(per_token.dtype) * per_token.mean(dim=1)).sum()
