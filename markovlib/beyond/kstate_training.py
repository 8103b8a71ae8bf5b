"""K-state initializations and a minimal training loop for the K-state single-layer transformer (the package's
Trainer trains binary chains only), used by the chapter ``book/beyond_two_states.ipynb`` and
``tools/run_beyond.py`` (the samplers and yardsticks are in :mod:`markovlib.beyond.multistate`).

Two arms beside the chapter's Adam: plain SGD (theta <- theta - lr grad, no momentum, no weight decay) and the
untied head (a separate unembedding matrix U, logits U z + b, instead of the tied E z + b; MarkovTransformer's
``tied=False``). The defaults (Adam, tied) reproduce the chapter's stored runs bit for bit.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..numerics import checks

KSTATE_INITS = ("standard", "guideline_like")
KSTATE_OPTIMIZERS = ("adam", "sgd")


def _stream_seed(seed, *key):
    """A 32-bit seed derived from (seed, *key) by numpy's SeedSequence (independent streams of one seed)."""
    return int(np.random.SeedSequence([seed, *key]).generate_state(1)[0])


@torch.no_grad()
def init_kstate(model, scheme, seed, std=0.02):
    """Initialize the K-state ``model`` in place (a torch.Generator seeded with ``seed``) and return it.

    ``"standard"``: every weight N(0, std^2), biases 0 (reference Sec. 2, the authors' code).
    ``"guideline_like"``: our K-state reading of the guideline point (e, w) = (1, -1) of reference Sec. 5:
    embedding rows of unit scale (E ~ N(0, 1/d), the analogue of e = 1), W_1 ~ N(0, 1/d) and W_2 = -W_1^T, so
    that on an input y the feed-forward Jacobian I + W_2 D W_1 is about I - 2 I = -I (r = 4d units, half of them
    active), the analogue of 1 + 2 w|w| = -1 at w = -1; attention and positional weights N(0, std^2), biases 0.
    An untied model (``model.tied`` False) gets the same draws for every other parameter and its unembedding U
    drawn like E (N(0, std^2), resp. N(0, 1/d)) from its own generator, seeded by (seed, 1) via SeedSequence.
    """
    checks.choice("scheme", scheme, set(KSTATE_INITS))
    if model.binary:
        raise ValueError("init_kstate needs the K-state model (n_states=K)")
    gen = torch.Generator().manual_seed(checks.nonnegative_int("seed", seed))
    std = checks.positive_real("std", std)
    params = dict(model.named_parameters())
    for name, prm in params.items():
        if name == "unembedding":
            continue
        draw = torch.randn(prm.shape, generator=gen, dtype=torch.float64) * std
        prm.copy_(torch.zeros(prm.shape) if name == "bias" else draw)
    d = model.d
    if scheme == "guideline_like":
        params["embedding"].copy_(torch.randn(params["embedding"].shape, generator=gen, dtype=torch.float64)
                                  / math.sqrt(d))
        W1 = torch.randn(params["W_1"].shape, generator=gen, dtype=torch.float64) / math.sqrt(d)
        params["W_1"].copy_(W1)
        params["W_2"].copy_(-W1.T)
    if not model.tied:
        own = torch.Generator().manual_seed(_stream_seed(seed, 1))
        scale = 1 / math.sqrt(d) if scheme == "guideline_like" else std
        params["unembedding"].copy_(torch.randn(params["unembedding"].shape, generator=own, dtype=torch.float64)
                                    * scale)
    return model


def train_kstate(sampler, n_states, entropy_rate, marginal_entropy, *, init="standard", seed=0, d=8, length=64,
                 batch=32, steps=600, lr=2e-3, eval_batch=256, eval_every=50, attention="softmax",
                 optimizer="adam", tied=True):
    """Train the K-state model (float32) on fresh batches ``sampler(batch, length + 1, seed)`` (a function
    returning an int64 tensor), step s drawing with the seed derived from (seed, s) by numpy's SeedSequence; the
    model is initialized by :func:`init_kstate` (seed). ``optimizer``: ``"adam"`` (torch.optim.Adam, lr ``lr``,
    betas (0.9, 0.95), the chapter's runs) or ``"sgd"`` (torch.optim.SGD, plain gradient descent
    theta <- theta - lr grad, no momentum); both with a constant rate and no weight decay. ``tied``: ``True`` the
    tied head E z + b (the reference Sec. 2), ``False`` a separate unembedding U (MarkovTransformer's
    ``tied=False``). Every ``eval_every`` steps and at the end the loss on one fixed held-out batch of
    ``eval_batch`` sequences is recorded. Returns {"history": [(step, eval_loss)], "final_loss",
    "gap" (final_loss - entropy_rate) / (marginal_entropy - entropy_rate), "model"}."""
    from ..transformer.model import MarkovTransformer
    from .multistate import n_states_of

    for name, v in (("d", d), ("length", length), ("batch", batch), ("steps", steps), ("eval_batch", eval_batch),
                    ("eval_every", eval_every)):
        checks.positive_int(name, v)
    seed = checks.nonnegative_int("seed", seed)
    lr = checks.positive_real("lr", lr)
    if not isinstance(optimizer, str) or optimizer not in KSTATE_OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {list(KSTATE_OPTIMIZERS)}, got {optimizer!r}")
    if not isinstance(tied, bool):
        raise ValueError(f"tied must be True or False, got {tied!r}")
    if not marginal_entropy > entropy_rate:
        raise ValueError("marginal_entropy must exceed entropy_rate (the chain must not be i.i.d.)")
    model = MarkovTransformer(d, length, attention=attention, n_states=n_states_of(n_states), dtype=torch.float32,
                              tied=tied)
    init_kstate(model, init, seed)
    if optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.95))
    else:
        opt = torch.optim.SGD(model.parameters(), lr=lr)

    def step_seed(s, stream):
        return _stream_seed(seed, s, stream)

    x_eval = sampler(eval_batch, length + 1, step_seed(0, 1))

    @torch.no_grad()
    def evaluate():
        return float(model.loss(x_eval))

    history = [(0, evaluate())]
    for s in range(1, steps + 1):
        loss = model.loss(sampler(batch, length + 1, step_seed(s, 0)))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if s % eval_every == 0 or s == steps:
            history.append((s, evaluate()))
    final = history[-1][1]
    return {"history": history, "final_loss": final,
            "gap": (final - entropy_rate) / (marginal_entropy - entropy_rate), "model": model}
