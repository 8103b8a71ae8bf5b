"""Trap or plateau: the standard initialization on chains with p + q > 1 under four optimizers, with Part I's
conserved energy read off the full model at every evaluation (book/trap_or_plateau.ipynb, tools/run_escape.py).

Gradient flow conserves E(e, w) = e^2 - w^2 - sign(w) log|w| (Lemma 1); the standard initialization N(0, 0.02^2)
starts near the unigram line e = 0 with |w| ~ 1e-3, so E_0 ~ log|w_0| lies far below the saddle's
E_sad = -(1 + log 2)/2, where Thm 2 (p + q > 1, w_0 < 0) predicts the unigram minimum. A discrete optimizer breaks the
conservation (closing chapter): whether a run escapes H(pi) then depends on how fast its optimizer moves E.

- :data:`OPTIMIZER_ARMS`: plain SGD, SGD with heavy-ball momentum 0.9, Adam (AdamW with zero weight decay: the same
  update, no decay and no L2 term), AdamW with the paper's decay 1e-3.
- :func:`escape_config`: a run's :class:`~markovlib.transformer.training.Trainer` knobs (constant learning rate,
  no warm-up: the horizon only censors, it does not shape the schedule).
- :func:`train_with_energy`: train one configuration and return its evaluations with the canonical projection
  (e, w) of :func:`~markovlib.transformer.readout.canonical_scalars`, E(e, w) and W_1's top singular fraction.
- :func:`escape_step`: the first evaluation at which c-hat / c* reaches a threshold (the escape from H(pi)).
"""
from __future__ import annotations

import numpy as np

from ..markov.energy import energy
from ..numerics import checks

OPTIMIZER_ARMS = {
    "sgd": dict(optimizer="sgd", momentum=0.0, weight_decay=0.0),
    "momentum": dict(optimizer="sgd", momentum=0.9, weight_decay=0.0),
    "adam": dict(optimizer="adamw", weight_decay=0.0),
    "adamw": dict(optimizer="adamw", weight_decay=1e-3),
}
EVAL_COLUMNS = ("step", "eval_loss", "coefficient_ratio", "e", "w", "energy", "top_fraction_W_1")
__all__ = ["OPTIMIZER_ARMS", "EVAL_COLUMNS", "escape_config", "projection", "train_with_energy", "escape_step"]


def escape_config(p, q, optimizer, lr, seed, steps, *, eval_every=50, length=64, batch=16) -> dict:
    """The knobs of one run: the binary model with softmax attention, d = 8, the standard initialization
    N(0, 0.02^2), ``optimizer`` (a key of :data:`OPTIMIZER_ARMS`) at the constant learning rate ``lr`` from step 0,
    gradient clipping at norm 1 (the package default), evaluated every ``eval_every`` steps on 4 held-out batches.
    The Trainer validates p, q, lr, seed, steps and the sizes."""
    if optimizer not in OPTIMIZER_ARMS:
        raise ValueError(f"optimizer must be one of {sorted(OPTIMIZER_ARMS)}, got {optimizer!r}")
    return dict(p=p, q=q, device="cpu", length=length, batch=batch, init="standard", init_std=0.02, steps=steps,
                lr=lr, seed=seed, eval_every=eval_every, schedule="constant", warmup=0.0,
                **OPTIMIZER_ARMS[optimizer])


def projection(trainer, row):
    """The canonical projection of ``trainer``'s model at an evaluation ``row``: e, w and the energy E(e, w) (Part I,
    Lemma 1), or None for a row without an evaluation; a run's evaluation columns (train_with_energy, SeedBatchSGD)."""
    from .readout import canonical_scalars

    if row.get("eval_loss") is None:
        return None
    s = canonical_scalars(trainer.model)
    return {"e": s.e, "w": s.w, "energy": float(energy(s.e, s.w))}  # NaN exactly on w = 0 (Lemma 1)


def train_with_energy(config: dict, out=None) -> list[dict]:
    """Train ``config`` (Trainer knobs, e.g. from :func:`escape_config`) on one CPU thread; return one dict per
    evaluation with the columns of :data:`EVAL_COLUMNS`.

    Only the evaluation rows are kept in the Trainer's history (a run of 10^6 steps would otherwise hold a row per
    step). With ``out`` (a folder) and ``checkpoint_every`` in ``config``, the Trainer saves its checkpoint there and a
    second call resumes from it: the result is the same as an uninterrupted run's."""
    import json
    from pathlib import Path

    import torch

    from .training import Trainer

    def keep_evals(trainer, row):
        extra = projection(trainer, row)
        if extra is None and trainer.history and trainer.history[-1] is row:
            trainer.history.pop()  # a training row: not needed
        return extra

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ckpt = Path(out) / "checkpoint.pt" if out is not None else None
        if ckpt is not None and ckpt.is_file():
            trainer = Trainer.from_checkpoint(ckpt, progress=False)
            start = json.loads((Path(out) / "start.json").read_text())
        else:
            trainer = Trainer(**config, out=out, progress=False)
            start = projection(trainer, {"eval_loss": 0.0})  # the initialization: train() evaluates it at step 0
            if out is not None:
                Path(out).mkdir(parents=True, exist_ok=True)
                (Path(out) / "start.json").write_text(json.dumps(start))
        trainer.train(callback=keep_evals)
    finally:
        torch.set_num_threads(old)
    rows = [r for r in trainer.history if r.get("eval_loss") is not None]
    rows[0] = {**rows[0], **start}
    return [{c: r[c] for c in EVAL_COLUMNS} for r in rows]


def escape_step(steps, ratios, threshold=0.5):
    """The first of ``steps`` at which ``ratios`` (c-hat / c*) reaches ``threshold``: the escape from the unigram
    plateau H(pi); None if it never does (the run is censored at its last step)."""
    threshold = checks.positive_real("threshold", threshold)
    steps, ratios = np.asarray(steps), np.asarray(ratios, dtype=float)
    if steps.shape != ratios.shape or steps.ndim != 1:
        raise ValueError(f"steps and ratios must be 1-d of one length, got shapes {steps.shape} and {ratios.shape}")
    hit = np.flatnonzero(ratios >= threshold)
    return int(steps[hit[0]]) if hit.size else None
