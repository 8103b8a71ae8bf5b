"""The initialization guideline in the full model (reference Sec. 5.2, Fig. 4): where a run goes, read from c-hat.

A run is *at the bigram predictor* from the first evaluation after which its context coefficient ratio
c-hat / c* (c* = log((1-p)(1-q)/(pq)), Lemma 2; c-hat = mean logit after a 1 minus after a 0, on held-out data)
stays above a level for good.

- :func:`first_above`, :func:`ratio_curve`, :func:`steps_to_bigram`: that step, from a curve or a live run.
- :func:`load_stored`: the stored runs of ``book/data/guideline`` (``tools/run_guideline.py``), checked against the
  chapter's training settings.
- :func:`check_slice_prefix`: the measured deterministic prefix covers every stored seed in both CI configurations.
- :func:`replay_error`: the first steps of stored runs re-executed, largest difference of c-hat / c* and held-out
  loss to the stored curve.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import torch

from ..markov.energy import SADDLE_ENERGY, energy
from ..numerics import checks
from .training import Trainer


def first_above(x, r, level) -> float:
    """The first evaluation step of ``x`` from which ``r`` (c-hat / c*) stays above ``level`` to the end; inf if
    never."""
    x, r = np.asarray(x), np.asarray(r)
    if x.shape != r.shape or x.ndim != 1:
        raise ValueError(f"x and r must be curves of the same length, got shapes {x.shape} and {r.shape}")
    above = r > level
    stays = np.flip(np.logical_and.accumulate(np.flip(above)))
    return float(x[np.argmax(stays)]) if stays.any() else float("inf")


def ratio_curve(run):
    """(steps, c-hat / c*) at the evaluations of a live run (``train_many``'s result: ``run["history"]``)."""
    ev = [r for r in run["history"] if "eval_loss" in r]
    return np.array([r["step"] for r in ev]), np.array([r["coefficient_ratio"] for r in ev])


def steps_to_bigram(run, level) -> float:
    """:func:`first_above` of a live run."""
    return first_above(*ratio_curve(run), level)


def load_stored(folder, *, length, batch, init_std, lr, sgd_lr, within, n_seeds=20) -> dict:
    """The stored runs of the guideline set in ``folder``: the manifest, every curve as
    ``curves[(experiment, p, q, init, optimizer, seed)] = (steps, c-hat / c*, held-out loss)``, the seeds, the grid's
    chains (``cells``), the plateau chain, the configurations (``grid``, ``long``) and their step counts. ValueError
    when a run is missing or failed, a chain lies outside ``within`` or off the manifest's margin, the guideline point
    is outside the data-agnostic region, or the runs were made with other settings than the chapter's."""
    manifest = json.loads((folder / "manifest.json").read_text())
    frame = pd.read_csv(folder / "curves.csv.gz")
    curves = {key: (g.step.to_numpy(), g.coefficient_ratio.to_numpy(), g.eval_loss.to_numpy())
              for key, g in frame.groupby(["experiment", "p", "q", "init", "optimizer", "seed"])}
    stored_seeds = [int(s) for s in manifest["seeds"]]
    cells = [tuple(c) for c in manifest["grid_cells"]]
    (pp, qq), = [tuple(c) for c in manifest["plateau_chains"]]
    grid = {init: manifest["configs"][f"grid_{init}"] for init in ("standard", "guideline")}
    long = {opt: manifest["configs"][f"plateau_{opt}"] for opt in ("adamw", "sgd")}
    guide = grid["guideline"]["init_kwargs"]
    problems = []
    if len(stored_seeds) != n_seeds or manifest["failed_runs"]:
        problems.append(f"{n_seeds} seeds and no failed run")
    if len(curves) != len(stored_seeds) * (2 * len(cells) + 2):
        problems.append("every run stored")
    for a, b in cells + [(pp, qq)]:
        if not (within[0] <= a <= within[1] and within[0] <= b <= within[1]
                and abs(a + b - 1) >= manifest["margin"] - 1e-12):
            problems.append(f"chain ({a:g}, {b:g}) within {within} and the margin")
    if not (pp + qq > 1 and any(a + b < 1 for a, b in cells) and any(a + b > 1 for a, b in cells)):
        problems.append("chains on both sides of p + q = 1")
    if not (float(energy(guide["e"], guide["w"])) > SADDLE_ENERGY and guide["w"] < 0):
        problems.append("the guideline point in {w < 0, E > E_sad}")
    for c in (*grid.values(), *long.values()):
        if (c["length"], c["batch"], c["init_std"]) != (length, batch, init_std):
            problems.append(f"length {length}, batch {batch}, init_std {init_std}")
    if not (grid["standard"]["lr"] == long["adamw"]["lr"] == lr and long["sgd"]["lr"] == sgd_lr):
        problems.append(f"lr {lr} and sgd_lr {sgd_lr}")
    if problems:
        raise ValueError(f"the stored runs in {folder.name} must have: " + "; ".join(problems))
    return dict(manifest=manifest, curves=curves, seeds=stored_seeds, cells=cells, plateau=(pp, qq), grid=grid,
                long=long, guide=guide, grid_steps=grid["standard"]["steps"], long_steps=long["adamw"]["steps"])


def check_slice_prefix(prefix, seeds, steps) -> float:
    """The largest difference of c-hat / c* and held-out loss over the first ``steps`` steps of the measured prefix
    (``slice_prefix.csv``). ValueError unless it covers every seed of ``seeds`` over ``steps`` steps in both CI
    configurations."""
    steps = checks.positive_int("steps", steps)
    if sorted(prefix.seed.unique()) != sorted(seeds) or prefix.step.max() < steps or prefix.config.nunique() < 2:
        raise ValueError(f"prefix must cover every stored seed over the first {steps} steps in both CI "
                         "configurations; re-run tools/run_slice_prefix.py guideline")
    return float(prefix[prefix.step <= steps][["ratio_diff", "loss_diff"]].to_numpy().max())


def replay_error(stored, keys, seed, steps, *, lr_factor=1.0):
    """Re-execute the first ``steps`` steps of the stored runs ``keys`` ((experiment, p, q, init, optimizer)) of
    ``seed`` with their stored configuration (``stored`` from :func:`load_stored`; learning rate scaled by
    ``lr_factor``), one thread as the stored runs; returns the largest difference of c-hat / c* and held-out loss
    to the stored curve over every evaluation, and the number of evaluations."""
    steps = checks.positive_int("steps", steps)
    lr_factor = checks.positive_real("lr_factor", lr_factor)
    worst, n_evals = 0.0, 0
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the stored runs (one thread per run)
    try:
        for exp, pp, qq, init, opt in keys:
            template = stored["grid"][init] if exp == "grid" else stored["long"][opt]
            knobs = dict(template, p=pp, q=qq, seed=seed)
            if lr_factor != 1.0:
                knobs["lr"] = template["lr"] * lr_factor
            tr = Trainer(**knobs, progress=False)
            tr.train(stop_at=steps)
            x, r, L = stored["curves"][(exp, pp, qq, init, opt, seed)]
            for rec in tr.history:
                if "eval_loss" in rec:
                    i = int(np.flatnonzero(x == rec["step"])[0])
                    worst = max(worst, abs(rec["coefficient_ratio"] - r[i]), abs(rec["eval_loss"] - L[i]))
                    n_evals += 1
    finally:
        torch.set_num_threads(threads)
    return worst, n_evals
