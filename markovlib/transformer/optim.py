"""The optimizer's parameter groups (reference Sec. 7): which parameters weight decay applies to (every parameter,
or the layer's weight matrices only as in the authors' nanoGPT-style code).
"""
from __future__ import annotations


def parameter_groups(model, weight_decay, decay_groups="all") -> list[dict]:
    """Optimizer parameter groups. ``"all"``: every parameter decays. ``"nanogpt"`` (the authors' code): only the
    layer's weight matrices (W_Q, W_K, W_V, W_O, W_1, W_2) decay; the token embedding, the positional rows and
    the biases do not."""
    if decay_groups == "all":
        return [{"params": list(model.parameters()), "weight_decay": weight_decay}]
    decay, keep = [], []
    for name, prm in model.named_parameters():
        (decay if name in ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2") else keep).append(prm)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": keep, "weight_decay": 0.0}]
