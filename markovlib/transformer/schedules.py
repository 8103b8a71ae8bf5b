"""Learning-rate schedules of a training run (reference Sec. 7: the paper's code, and the authors' OneCycleLR).

:func:`lr_factor`: linear warm-up then cosine (or constant) multiplier of the base rate; :func:`onecycle_factor`:
the closed form of torch's OneCycleLR with the authors' settings; :func:`make_scheduler` builds the torch
scheduler of a :class:`~markovlib.transformer.config.TrainConfig`.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from .config import TrainConfig


def make_scheduler(optimizer, cfg: TrainConfig):
    """The learning-rate schedule of ``cfg``: torch's OneCycleLR with the authors' settings (``"onecycle"``:
    div_factor 100, final_div_factor 0.05, cosine, warm-up fraction ``cfg.warmup``; :func:`onecycle_factor`), else
    the warm-up + cosine / constant multiplier :func:`lr_factor`."""
    if cfg.schedule == "onecycle":
        return torch.optim.lr_scheduler.OneCycleLR(
            optimizer, max_lr=cfg.lr, total_steps=cfg.steps, pct_start=cfg.warmup, anneal_strategy="cos",
            cycle_momentum=False, div_factor=100.0, final_div_factor=0.05)
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: lr_factor(s, cfg.steps, cfg.warmup, cfg.min_lr_ratio, cfg.schedule))


def lr_factor(step, steps, warmup=0.02, min_lr_ratio=0.1, schedule="cosine") -> float:
    """Multiplier of the base learning rate at optimizer step ``step`` (0-based): linear warm-up from 1/W to 1
    over the first W = ceil(warmup * steps) steps, then cosine from 1 down to ``min_lr_ratio`` at the last step
    (``schedule="constant"``: 1 after the warm-up). (``"onecycle"`` is torch's OneCycleLR, built by the
    Trainer; :func:`onecycle_factor` is its closed form.)"""
    n_warm = math.ceil(warmup * steps)
    if step < n_warm:
        return (step + 1) / n_warm
    if schedule == "constant":
        return 1.0
    span = max(steps - n_warm - 1, 1)
    progress = min((step - n_warm) / span, 1.0)
    return min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def onecycle_factor(step, steps, warmup=0.02, div_factor=100.0, final_div_factor=0.05) -> float:
    """Closed form of torch's OneCycleLR (cosine annealing, the authors' settings): the learning rate at step
    ``step`` divided by the maximum. Phase 1 (steps 0 .. T1 = warmup * steps - 1) anneals by half a cosine from
    1/div_factor to 1, phase 2 (T1 .. steps - 1) from 1 down to 1/(div_factor * final_div_factor) (lr/5 here):
    f(t) = end + (start - end) (1 + cos(pi t)) / 2 with t the fraction of the phase done."""
    t1, t2 = float(warmup * steps) - 1, steps - 1
    lo, top, end = 1 / div_factor, 1.0, 1 / (div_factor * final_div_factor)
    if step <= t1:
        a, b, frac = lo, top, step / t1 if t1 > 0 else 1.0
    else:
        a, b, frac = top, end, (step - t1) / (t2 - t1)
    return b + (a - b) * (1 + math.cos(math.pi * frac)) / 2
