"""Independent reference: the single-layer transformer of Makkuva et al. (Sec. 2, App. A; the chapter
``transformer_yardsticks``, eq-model and eq-loss) recomputed line by line from a model's weights, without calling its
``forward``, ``attend`` or ``loss``, so that the chapter can check ``MarkovTransformer`` against it.

* :func:`streams_by_hand`: x_n = x_n e + p_n; y_n = x_n + W_O sum_{i <= n} att_{n,i} W_V x_i with
  att = causal softmax of <W_Q x_n, W_K x_i> / sqrt(d); z_n = y_n + W_2 ReLU(W_1 y_n); logit_n = <e, z_n> + b; and the
  loss (eq-loss) as the mean of log(1 + e^l) - x l (which keeps its digits when sigma(l) is close to 1).
"""
from __future__ import annotations

import math

import torch

__all__ = ["streams_by_hand"]


def streams_by_hand(model, x) -> dict:
    """Independent reference: the streams of (eq-model) and the loss (eq-loss) of ``model`` (a softmax
    ``MarkovTransformer``: its attributes embedding, positional, W_Q, W_K, W_V, W_O, W_1, W_2, bias are read, nothing
    is called) on the binary sequences ``x`` (a (batch, n) tensor). Returns {'x', 'y', 'z', 'logit', 'loss',
    'attention' (the (batch, n, n) weights), 'relu_on' (the units where W_1 y_n > 0)}."""
    x = torch.as_tensor(x)
    if x.ndim != 2 or x.shape[1] > model.max_len or not bool(((x == 0) | (x == 1)).all()):
        raise ValueError(f"x must be a (batch, n) tensor of 0s and 1s with n <= {model.max_len}, got shape "
                         f"{tuple(x.shape)}")
    with torch.no_grad():
        n, d = x.shape[1], model.embedding.shape[0]
        xs = x.double()
        h = xs[..., None] * model.embedding + model.positional[:n]  # embedding: x_n = x_n e + p_n
        scores = (h @ model.W_Q.T) @ (h @ model.W_K.T).transpose(1, 2) / math.sqrt(d)
        causal = torch.ones(n, n, dtype=torch.bool).tril()  # i <= n
        att = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
        y = h + (att @ (h @ model.W_V.T)) @ model.W_O.T
        pre = y @ model.W_1.T
        z = y + torch.relu(pre) @ model.W_2.T
        lg = z @ model.embedding + model.bias  # tied head
        # the logit at n predicts x_{n+1}: -x log s(l) - (1 - x) log(1 - s(l)) = log(1 + e^l) - x l
        ce = (torch.logaddexp(torch.zeros_like(lg[:, :-1]), lg[:, :-1]) - xs[:, 1:] * lg[:, :-1]).mean()
    return {"x": h, "y": y, "z": z, "logit": lg, "loss": ce, "attention": att, "relu_on": pre > 0}
