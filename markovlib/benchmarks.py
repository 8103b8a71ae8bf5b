"""Benchmarks that print their figures beside a baseline measured in the same run (not timed tests).

``python -m markovlib bench sampler``: the vectorized binary sampler against a per-position ``torch.multinomial``
loop (how the authors' code draws sequences). ``python -m markovlib bench flow``: classifying a grid of
initializations with the batched gradient-flow integrator, with its agreement with ``energy.predict_limit``.
Both run on one CPU thread.
"""
from __future__ import annotations

import time

import numpy as np

from .chain import MarkovChain


def _best_time(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def multinomial_loop_sampler(chain: MarkovChain, batch: int, length: int, seed: int = 0):
    """Baseline: one ``torch.multinomial`` call per position (a Python loop over the sequence)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    kernel = torch.as_tensor(chain.kernel, dtype=torch.float32)
    pi = torch.as_tensor(chain.stationary, dtype=torch.float32)
    x = torch.empty(batch, length, dtype=torch.long)
    x[:, 0] = torch.multinomial(pi.expand(batch, -1), 1, generator=gen)[:, 0]
    for n in range(1, length):
        x[:, n] = torch.multinomial(kernel[x[:, n - 1]], 1, generator=gen)[:, 0]
    return x


def bench_sampler(quick: bool = False, p: float = 0.2, q: float = 0.3):
    import torch

    torch.set_num_threads(1)
    chain = MarkovChain(p, q)
    sizes = [(16, 1024), (64, 1024)] if quick else [(16, 1024), (1024, 1024), (256, 4096)]
    repeats = 3 if quick else 7
    print(f"Sampler benchmark, chain p={p}, q={q}, one CPU thread, best of {repeats}")
    header = f"{'batch x length':>16} {'tokens':>9} {'loop tok/s':>12} {'numpy tok/s':>13} {'torch tok/s':>13} {'speed-up':>9}"
    print(header)
    rows = []
    for batch, length in sizes:
        n_tok = batch * length
        t_loop = _best_time(lambda: multinomial_loop_sampler(chain, batch, length), 1 if n_tok > 2**18 else repeats)
        t_np = _best_time(lambda: chain.sample(batch, length, seed=0), repeats)
        t_torch = _best_time(lambda: chain.sample(batch, length, seed=0, backend="torch"), repeats)
        row = dict(batch=batch, length=length, loop=n_tok / t_loop, numpy=n_tok / t_np, torch=n_tok / t_torch)
        rows.append(row)
        print(f"{batch:>7} x {length:<6} {n_tok:>9} {row['loop']:>12.3g} {row['numpy']:>13.3g} {row['torch']:>13.3g}"
              f" {row['numpy'] / row['loop']:>8.0f}x")
    return rows


def bench_flow(quick: bool = False, p: float = 0.9, q: float = 0.9, lim: float = 2.0):
    from .energy import predict_limit
    from .flow import integrate_batch

    n = 60 if quick else 200
    grid = np.linspace(-lim, lim, n)
    E0, W0 = np.meshgrid(grid, grid)
    print(f"Flow benchmark: {n} x {n} initializations on [-{lim}, {lim}]^2, p={p}, q={q}, one CPU thread")
    t0 = time.perf_counter()
    res = integrate_batch(E0, W0, p, q)
    t_flow = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = predict_limit(E0, W0, p, q)
    t_pred = time.perf_counter() - t0
    agree = float(np.mean(res.outcome == pred.outcome))
    print(f"{'method':<34} {'seconds':>8}")
    print(f"{'batched Dormand-Prince integrator':<34} {t_flow:>8.2f}   ({res.steps} steps of the slowest flow)")
    print(f"{'energy criterion (predict_limit)':<34} {t_pred:>8.2f}")
    print(f"agreement of integrated limits with predict_limit: {agree:.4%} ({int(np.sum(res.outcome != pred.outcome))}"
          f" of {E0.size} differ); max energy drift {np.nanmax(res.energy_drift):.1e}")
    return dict(seconds=t_flow, predict_seconds=t_pred, agreement=agree, n=E0.size)
