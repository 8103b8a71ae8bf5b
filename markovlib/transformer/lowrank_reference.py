"""Independent reference: the measurements of the chapter low_rank (reference Sec. 5.1, Figs. 3, 6, 7) by numpy's
SVD and torch's binary cross-entropy, without the package's low-rank functions.

- :func:`spectrum`, :func:`top_fraction`, :func:`s2_over_s1`: the singular values of a trained matrix, its top
  fraction s_1^2 / sum_i s_i^2 (1 for a rank-one matrix) and the ratio s_2 / s_1 (0 for a rank-one matrix);
- :func:`off_rank_one`: the size (sum_{i >= 2} s_i^2)^{1/2} of the part outside the best rank-one approximation;
- :func:`excess_loss`: the held-out loss of a model minus the bigram predictor's on the same sequences (0 at the
  global minimum, H(pi) - entropy rate at the unigram point, reference Sec. 3).
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from ..markov.chain import MarkovChain
from ..numerics import checks


def spectrum(W) -> np.ndarray:
    """Independent reference: the singular values of a matrix, by numpy's SVD, largest first (NaN for a diverged
    run's non-finite weights, so that such a run fails every claim it enters)."""
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or min(W.shape) < 1:
        raise ValueError(f"W must be a non-empty matrix, got shape {W.shape}")
    if not np.all(np.isfinite(W)):
        return np.full(min(W.shape), np.nan)
    return np.linalg.svd(W, compute_uv=False)


def top_fraction(W) -> float:
    """Independent reference: s_1^2 / sum_i s_i^2 of a matrix (reference Fig. 3's curves)."""
    s = spectrum(W)
    return float(s[0] ** 2 / np.sum(s ** 2))


def s2_over_s1(W) -> float:
    """Independent reference: s_2 / s_1, the ratio of the two largest singular values (needs two of them)."""
    s = spectrum(W)
    if s.size < 2:
        raise ValueError("W must have at least two singular values")
    return float(s[1] / s[0])


def off_rank_one(W) -> float:
    """Independent reference: (sum_{i >= 2} s_i^2)^{1/2}, the Frobenius size of W minus its best rank-one part."""
    return float(np.sqrt(np.sum(spectrum(W)[1:] ** 2)))


def excess_loss(model, p, q, *, sequences, length, seed) -> float:
    """Independent reference: the held-out loss of ``model`` on ``sequences`` fresh sequences of the chain (p, q) of
    ``length`` + 1 symbols (drawn with ``seed``), minus the loss of the bigram predictor P(x_{n+1} | x_n) on the
    same sequences (paired, so that the sampling noise nearly cancels)."""
    p, q = checks.probability("p", p), checks.probability("q", q)
    sequences, length = checks.positive_int("sequences", sequences), checks.positive_int("length", length)
    x = MarkovChain(p, q).sample(sequences, length + 1, seed=seed, backend="torch")
    ctx, target = x[:, :-1], x[:, 1:].to(torch.float64)
    model.eval()
    with torch.no_grad():
        logits = model(ctx).to(torch.float64)
    oracle = torch.where(ctx == 1, math.log((1 - q) / q), math.log(p / (1 - p))).to(torch.float64)
    return float(F.binary_cross_entropy_with_logits(logits, target)
                 - F.binary_cross_entropy_with_logits(oracle, target))
