"""Many training runs at once: :func:`train_many` (one process per run, one CPU thread each).

Runs are deterministic (every draw comes from generators seeded by the run's configuration), so the results do
not depend on the number of worker processes.
"""
from __future__ import annotations

import torch

from ..book.progress import progress_bar
from ..numerics import checks
from .training import Trainer


def _train_one(config: dict) -> dict:
    torch.set_num_threads(1)
    trainer = Trainer(**config, progress=False)
    summary = trainer.train()
    weights = {k: v.detach().double().cpu().numpy() for k, v in trainer.model.named_parameters()}
    return {"summary": summary, "history": trainer.history, "weights": weights}


def train_many(configs, *, workers=1, progress=True) -> list[dict]:
    """Train one run per dict of ``configs`` (keywords of :class:`Trainer`, e.g. p, q, init, seed, steps; no
    ``out``), each on one CPU thread, in ``workers`` processes (spawned; ``workers=1`` runs them here).
    Returns, in the order of ``configs``, {"summary": ..., "history": ..., "weights": ...} per run (the final
    weights as float64 numpy arrays by parameter name). Runs are deterministic, so the
    result does not depend on ``workers``. Every config is validated before any run starts."""
    configs = [dict(c) for c in configs]
    workers = checks.positive_int("workers", workers)
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
                    results[i] = _train_one(c)
                    bar.update(1)
            finally:
                torch.set_num_threads(old)
        else:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(max_workers=min(workers, len(configs)),
                                     mp_context=mp.get_context("spawn")) as pool:
                futures = {pool.submit(_train_one, c): i for i, c in enumerate(configs)}
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    bar.update(1)
    finally:
        bar.close()
    return results
