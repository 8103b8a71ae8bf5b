"""Low rank in trained weights (reference Sec. 5.1, Figs. 3, 6, 7): run settings, measurements and counts over seeds.

- :func:`run_config`: the knobs of one run of the chapter (SGD without decay, or AdamW with decay 1e-3; no
  clipping; no evaluation during the run).
- :func:`top_vector`, :func:`min_alignment`, :func:`flatness`: the shared direction (|cos(e, top singular vector)|
  of W_V, W_O, W_1, W_2, positional, each on the side that carries alpha in the canonical form
  e = e alpha, W_1 = |w| u alpha^T, W_2 = w alpha u^T, W_O W_V = v alpha alpha^T) and the hypercube
  (min_i |e_i| / max_i |e_i|, 1 on {+-1}^d / sqrt(d)), by numpy's SVD.
- :func:`seeds_where`, :func:`count_text`, :func:`later_count`: counts over the stored seeds (``final.csv``).
- :func:`slice_prefix`: the deterministic prefix of every stored run of the first part (``slice_prefix.csv``).
- :func:`replay_error`: the first steps of stored SGD runs re-executed (recipe ``sec51_sgd``), largest difference to
  the stored held-out loss and fractions.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..book.formatting import fixed, fraction
from ..book.inference import wilson_interval
from ..book.stored import deterministic_prefix
from ..numerics import checks
from .config import recipe
from .training import Trainer

ALPHA_SIDES = {"W_V": "right", "W_O": "left", "W_1": "right", "W_2": "left", "positional": "right"}


def run_config(seed, init, optimizer, lr, *, p, q, d, length, batch, steps, init_std) -> dict:
    """Knobs of one run: ``optimizer`` "sgd" (no weight decay) or "adamw" (weight decay 1e-3), no clipping, on CPU,
    no evaluation during the run (the chapter measures the returned weights)."""
    checks.choice("optimizer", optimizer, {"sgd", "adamw"})
    return dict(device="cpu", p=p, q=q, d=d, length=length, batch=batch, steps=steps, init=init, init_std=init_std,
                optimizer=optimizer, lr=lr, weight_decay=0.0 if optimizer == "sgd" else 1e-3, grad_clip=0.0,
                seed=seed, eval_every=0)


def top_vector(W, side):
    """The top left (``side="left"``) or right singular vector of ``W`` (numpy SVD); NaN for non-finite weights."""
    checks.choice("side", side, {"left", "right"})
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2:
        raise ValueError(f"W must be a matrix, got shape {W.shape}")
    if not np.all(np.isfinite(W)):  # a diverged run
        return np.full(W.shape[0] if side == "left" else W.shape[1], np.nan)
    U, _, Vh = np.linalg.svd(W)
    return U[:, 0] if side == "left" else Vh[0]


def min_alignment(weights) -> float:
    """min over W_V, W_O, W_1, W_2, positional of |cos(e, top singular vector)| on the side that carries alpha
    (:data:`ALPHA_SIDES`); ``weights`` maps names to arrays (with ``embedding``). NaN for a diverged run."""
    missing = {"embedding", *ALPHA_SIDES} - set(weights)
    if missing:
        raise ValueError(f"weights must hold {sorted(missing)}")
    e = np.asarray(weights["embedding"], dtype=np.float64)
    e = e / np.linalg.norm(e)
    return min(float(abs(top_vector(weights[m], side) @ e)) for m, side in ALPHA_SIDES.items())


def flatness(e) -> float:
    """min_i |e_i| / max_i |e_i|: 1 on the hypercube {+-1}^d / sqrt(d); NaN for a diverged run's non-finite e (so
    that such a run fails every claim it enters)."""
    e = np.abs(np.asarray(e, dtype=np.float64))
    if e.ndim != 1 or e.size == 0:
        raise ValueError("e must be a nonzero vector")
    if not np.all(np.isfinite(e)):
        return float("nan")
    if not e.max() > 0:
        raise ValueError("e must be a nonzero vector")
    return float(e.min() / e.max())


def seeds_where(final, init, optimizer, flags):
    """(k, n): the number of stored seeds of (init, optimizer) in ``final`` (one row per run) in which
    ``flags(row)`` holds, and the number of those seeds."""
    rows = final[(final["init"] == init) & (final["optimizer"] == optimizer)]
    return int(sum(bool(flags(r)) for _, r in rows.iterrows())), len(rows)


def count_text(k, n, z) -> str:
    """"k/n seeds [lo, hi]" with the two-sided Wilson interval at normal quantile ``z``."""
    n = checks.positive_int("n", n)
    lo, hi = wilson_interval(k, n, z)
    return f"{k}/{n} seeds [{fixed(lo, 2)}, {fixed(hi, 2)}]"


def later_count(final, init, optimizer, flags, first=10) -> str:
    """k/n over the stored seeds from ``first`` on (those stored after the claims were chosen)."""
    rows = final[(final["init"] == init) & (final["optimizer"] == optimizer) & (final["seed"] >= first)]
    return fraction(int(sum(bool(flags(r)) for _, r in rows.iterrows())), len(rows))


def slice_prefix(prefix, seeds, level):
    """The deterministic prefix of every run of the first stored part in every numeric configuration: ``prefix``
    holds the rows of ``slice_prefix.csv`` (config, init, optimizer, seed, step, loss_diff, fraction_diff); a run
    is deterministic while both differences stay within ``level``. Returns (prefix_of, frame with the column
    ``diff``). ValueError when the file does not cover every run of ``seeds`` in every configuration."""
    level = checks.positive_real("level", level)
    prefix = prefix.assign(diff=prefix[["loss_diff", "fraction_diff"]].max(axis=1))
    if sorted(prefix.seed.unique()) != sorted(seeds) or prefix.groupby("config").size().nunique() != 1:
        raise ValueError("prefix does not cover every run of the first part in every configuration; re-run "
                         "tools/run_slice_prefix.py lowrank")
    return deterministic_prefix(prefix, ["config", "init", "optimizer", "seed"], "diff", level), prefix


def replay_error(curves, manifest, inits, seed, steps, matrices, *, lr_factor=1.0) -> float:
    """Re-execute the first ``steps`` steps of the stored SGD-step-5 run of ``seed`` for each of ``inits`` with the
    stored configuration (recipe ``sec51_sgd`` and the manifest's knobs; learning rate scaled by ``lr_factor``) and
    return the largest |live - stored| of the held-out loss and the top fractions of ``matrices`` at every
    recorded step. AssertionError when the recorded steps differ."""
    steps = checks.positive_int("steps", steps)
    lr_factor = checks.positive_real("lr_factor", lr_factor)
    err = 0.0
    for init in inits:
        knobs = recipe("sec51_sgd", **manifest["optimizers"]["sgd_5"], seed=seed, eval_every=20, eval_batches=2)
        knobs["lr"] = knobs["lr"] * lr_factor
        tr = Trainer(device="cpu", p=manifest["chain"][0], q=manifest["chain"][1], init=init, progress=False, **knobs)
        tr.train(stop_at=steps)
        live = pd.DataFrame([r for r in tr.history if "eval_loss" in r])
        ref = curves[(curves["init"] == init) & (curves["optimizer"] == "sgd_5") & (curves["seed"] == seed)
                     & (curves["step"] <= steps)]
        assert list(live["step"]) == list(ref["step"]), (init, list(live["step"]), list(ref["step"]))
        for col in ["eval_loss", *[f"top_fraction_{m}" for m in matrices]]:
            err = max(err, float(np.max(np.abs(live[col].to_numpy() - ref[col].to_numpy()))))
    return err
