"""Independent reference for the chapter authors_fig4: the 2-token model's map to the binary model and the held-out
context coefficient c-hat, written out without the markovlib functions they check
(``markovlib.transformer.two_token.binary_equivalent``, ``markovlib.transformer.readout.context_coefficient``).

- :func:`binary_by_hand`: e = E_1 - E_0, p_n = P_n + E_0, b = b_1 - b_0, every layer copied (eq-two-token-map).
- :func:`heldout_c_hat`: c-hat (mean logit after a 1 minus after a 0) on fresh held-out batches, with its standard
  error from their spread.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..markov.chain import MarkovChain
from ..numerics import checks
from .model import MarkovTransformer
from .training import Trainer


def binary_by_hand(m2: MarkovTransformer) -> MarkovTransformer:
    """Independent reference: the binary model of the 2-token model ``m2`` under the map (eq-two-token-map),
    e = E_1 - E_0, p_n = P_n + E_0, b = b_1 - b_0, the attention and feed-forward weights copied."""
    if getattr(m2, "n_states", None) != 2 or m2.embedding.dim() != 2:
        raise ValueError("m2 must be a 2-token MarkovTransformer (n_states=2)")
    m1 = MarkovTransformer(m2.d, m2.max_len, attention=m2.attention)
    with torch.no_grad():
        m1.embedding.copy_(m2.embedding[1] - m2.embedding[0])
        m1.positional.copy_(m2.positional + m2.embedding[0])
        m1.bias.copy_(m2.bias[1] - m2.bias[0])
        for name in ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2"):
            if hasattr(m2, name):
                getattr(m1, name).copy_(getattr(m2, name))
    return m1


def heldout_c_hat(cfg: dict, weights: dict, *, noise_batches: int, length: int) -> tuple[float, float]:
    """Independent reference: c-hat, the mean logit after a 1 minus the mean logit after a 0, on each of
    ``noise_batches`` fresh held-out batches (``cfg["batch"]`` sequences of ``length`` + 1 tokens, seeds
    7,000,000 + 1000 cfg["seed"] + j) of the run's model rebuilt from its final ``weights`` (``cfg`` a Trainer
    configuration); returns the mean over the batches and its standard error from their spread."""
    noise_batches = checks.positive_int("noise_batches", noise_batches)
    length = checks.positive_int("length", length)
    if noise_batches < 2:
        raise ValueError(f"noise_batches must be at least 2 for a standard error, got {noise_batches}")
    model = Trainer(progress=False, **cfg).model
    model.load_state_dict({k: torch.as_tensor(v, dtype=torch.float32) for k, v in weights.items()})
    model.eval()
    values = []
    with torch.no_grad():
        for j in range(noise_batches):
            x = MarkovChain(cfg["p"], cfg["q"]).sample(cfg["batch"], length + 1,
                                                      seed=7_000_000 + 1000 * cfg["seed"] + j, backend="torch")
            ctx = x[:, :-1]
            logit = model(ctx).to(torch.float64)
            if logit.dim() == 3:  # the 2-token model: its binary logit is the difference of its two logits
                logit = logit[..., 1] - logit[..., 0]
            values.append(float(logit[ctx == 1].mean() - logit[ctx == 0].mean()))
    values = np.array(values)
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(noise_batches))
