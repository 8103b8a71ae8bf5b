"""Many training runs at once: :func:`train_many` (one process per run, one CPU thread each).

Runs are deterministic (every draw comes from generators seeded by the run's configuration), so the results do
not depend on the number of worker processes. ``snapshot_steps`` returns each run's weights at chosen steps, so
that a chapter measures what it needs along training (singular values, alignments) with its own code.
"""
from __future__ import annotations

import torch

from ..book.progress import progress_bar
from ..numerics import checks
from .training import Trainer


def _weights(model) -> dict:
    return {k: v.detach().double().cpu().numpy().copy() for k, v in model.named_parameters()}


def _train_one(config: dict, snapshot_steps=frozenset()) -> dict:
    torch.set_num_threads(1)
    trainer = Trainer(**config, progress=False)
    snapshots = {0: _weights(trainer.model)} if 0 in snapshot_steps else {}

    def snap(tr, row):
        if tr.step in snapshot_steps:
            snapshots[tr.step] = _weights(tr.model)

    summary = trainer.train(callback=snap if snapshot_steps else None)
    out = {"summary": summary, "history": trainer.history, "weights": _weights(trainer.model)}
    if snapshot_steps:
        out["snapshots"] = snapshots
    return out


def _snapshot_steps(snapshot_steps):
    if snapshot_steps is None:
        return frozenset()
    if isinstance(snapshot_steps, (str, bytes)) or not hasattr(snapshot_steps, "__iter__"):
        raise ValueError(f"snapshot_steps must be a collection of step numbers >= 0 or None, got {snapshot_steps!r}")
    return frozenset(checks.nonnegative_int("snapshot_steps[i]", s) for s in snapshot_steps)


def train_many(configs, *, workers=1, progress=True, snapshot_steps=None) -> list[dict]:
    """Train one run per dict of ``configs`` (keywords of :class:`Trainer`, e.g. p, q, init, seed, steps; no
    ``out``), each on one CPU thread, in ``workers`` processes (spawned; ``workers=1`` runs them here).
    Returns, in the order of ``configs``, {"summary": ..., "history": ..., "weights": ...} per run (the final
    weights as float64 numpy arrays by parameter name). With ``snapshot_steps`` (step numbers; 0 is the
    initialization, k the weights after k optimizer steps) each result also has "snapshots": {step: weights} for the
    listed steps that the run reaches. Runs are deterministic, so the result does not depend on ``workers``. Every
    config is validated before any run starts."""
    configs = [dict(c) for c in configs]
    workers = checks.positive_int("workers", workers)
    snapshot_steps = _snapshot_steps(snapshot_steps)
    for c in configs:
        if "out" in c or "progress" in c:
            raise ValueError("train_many configs may not set out or progress")
        Trainer(**c, progress=False)  # validation only: raises ValueError before any work
    results = [None] * len(configs)
    bar = progress_bar(total=len(configs), desc="runs", disable=not progress, leave=False)
    try:
        if workers == 1 or len(configs) <= 1:
            old = torch.get_num_threads()
            try:
                for i, c in enumerate(configs):
                    results[i] = _train_one(c, snapshot_steps)
                    bar.update(1)
            finally:
                torch.set_num_threads(old)
        else:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(max_workers=min(workers, len(configs)),
                                     mp_context=mp.get_context("spawn")) as pool:
                futures = {pool.submit(_train_one, c, snapshot_steps): i for i, c in enumerate(configs)}
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    bar.update(1)
    finally:
        bar.close()
    return results
