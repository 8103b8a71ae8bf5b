"""The speed of Part II's batched ReLU trainer (:func:`markovlib.richlazy.relu_batch.train_networks`), for
``python -m markovlib bench relu-grid``: the flops of one network-step (:func:`step_flops`), the time of the GD
steps alone (:func:`time_steps`), and the flop rate of a large square matrix product on the same hardware
(:func:`matmul_peak`), the measured peak that the trainer's rate is compared with.
"""
from __future__ import annotations

import time

import numpy as np

from ..numerics import checks
from .relu_batch import _backend, _inputs, _plan


def step_flops(n: int, d: int, h: int) -> int:
    """Floating-point operations of one network's ReLU GD step as both backends compute it (relu_batch._Block.step,
    relu_torch.TorchBlock.step; a multiply-add counts two, comparisons and signs none): the two matrix products
    X W^T and X^T (r sigma'(Z)), 2 n d h each; the outputs f = sigma(Z) a and the readout gradient sigma(Z)^T r,
    2 n h each; r sigma'(Z), n h; r = f - y, n; the factor (2/n) a_k on column k of X^T (r sigma'(Z)), h + d h;
    the factor 2/n of dL/da, h; the updates a - lr eta_a dL/da and W - lr eta_w dL/dW, 2 h + 2 d h. (A leaky
    slope gamma > 0 adds the n h products gamma z.)"""
    n, d, h = (checks.positive_int(k, v) for k, v in (("n", n), ("d", d), ("h", h)))
    return 4 * n * d * h + 5 * n * h + n + 3 * d * h + 4 * h


def _clock(device):
    return time.perf_counter if device == "cuda" else time.process_time


def time_steps(X, y, a0, W0, lr, steps, *, gamma=0.0, eta_a=1.0, eta_w=1.0, block=None, dtype="float64",
               backend="numpy", device=None) -> dict:
    """``steps`` GD steps of every network, timed: the blocks, steppers and arithmetic of train_networks (same
    arguments, kernel=False) without its checkpoint metrics. Before the clock starts, one step of a copy of the
    first block (library and device initialization) and the building of every block; the clock: this process's
    CPU seconds on the CPU, wall seconds on CUDA (every block synchronized).

    Returns ``seconds``, the ``device`` ("cpu" or "cuda") and the final weights ``a`` (*lead, h), ``W`` (*lead, h,
    d) as float64 arrays (lead: the networks' axes), equal to train_networks' after ``steps`` steps."""
    steps = checks.positive_int("steps", steps)
    (X, y, a0, W0, lr, _, _, g, eta_a, eta_w), lead, _ = _inputs(X, y, a0, W0, lr, [steps], None, None, gamma,
                                                                   eta_a, eta_w)
    dtype, backend, device = _backend(dtype, backend, device)
    S, G, h = a0.shape
    n, d = X.shape[1:]
    blocks, stepper = _plan(S, G, n, h, block, False, dtype, backend, device)
    part = [(X[ss], y[ss], a0[ss, gs], W0[ss, gs], lr[ss, gs], g, eta_a, eta_w) for ss, gs in blocks]
    stepper(*part[0]).run(1)
    runs = [stepper(*args) for args in part]
    clock = _clock(device)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        t0 = clock()
        for run in runs:
            run.run(steps)
        seconds = clock() - t0
    a, W = np.empty_like(a0), np.empty_like(W0)
    for (ss, gs), run in zip(blocks, runs):
        a[ss, gs], Wt = run.weights()
        W[ss, gs] = Wt.reshape(run.Sb, d, run.Gb, h).transpose(0, 2, 3, 1)
    return {"seconds": seconds, "device": device, "a": a.reshape(lead + (h,)), "W": W.reshape(lead + (h, d))}


def matmul_peak(size: int, dtype="float64", library="numpy", repeats: int = 3) -> float:
    """GFLOP/s of the product A @ B of two ``size`` x ``size`` matrices (2 size^3 flops), the best of ``repeats``:
    ``library`` "numpy" (its BLAS, in the caller's thread limits: threadpoolctl), "torch" (torch on the CPU, in
    torch's thread count) or "cuda" (torch on CUDA, wall time, synchronized). Rates are CPU time on the CPU."""
    size, repeats = checks.positive_int("size", size), checks.positive_int("repeats", repeats)
    dtype = checks.choice("dtype", dtype, ("float64", "float32"))
    library = checks.choice("library", library, ("numpy", "torch", "cuda"))
    rng = np.random.default_rng(0)
    A, B = (rng.standard_normal((size, size)).astype(dtype) for _ in range(2))
    sync = None
    if library != "numpy":
        import torch

        A, B = (torch.tensor(M, device="cuda" if library == "cuda" else "cpu") for M in (A, B))
        if library == "cuda":
            sync = torch.cuda.synchronize
            A @ B   # cuBLAS initialization
            sync()
    clock, best = _clock("cuda" if library == "cuda" else "cpu"), 0.0
    for _ in range(repeats):
        t0 = clock()
        A @ B
        if sync is not None:
            sync()
        best = max(best, 2.0 * size**3 / max(clock() - t0, 1e-9) / 1e9)
    return best
