"""Benchmarks that print their figures beside a baseline measured in the same run (not timed tests).

``python -m markovlib bench sampler``: the vectorized binary sampler against a per-position ``torch.multinomial``
loop (how the authors' code draws sequences). ``python -m markovlib bench flow``: classifying a grid of
initializations with the batched gradient-flow integrator, with its agreement with ``energy.predict_limit``.
Both run on one CPU thread. ``python -m markovlib bench train [--device D]``: training throughput of the Trainer
against a plain loop (:func:`bench_train`); on an accelerator, beside the Trainer's CPU figure.
torch is imported by the functions that need it (``bench flow`` runs without it).
"""
from __future__ import annotations

import os
import threading
import time

import numpy as np

from ..markov.chain import MarkovChain
from ..numerics import checks


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
    header = (f"{'batch x length':>16} {'tokens':>9} {'loop tok/s':>12} {'numpy tok/s':>13} {'torch tok/s':>13} "
              f"{'speed-up':>9}")
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
    from ..markov.energy import predict_limit
    from ..markov.flow import integrate_batch

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


class _PeakMemory:
    """Peak memory of a block: torch.cuda.max_memory_allocated on CUDA; on CPU the peak resident set size
    above the value at entry, polled from /proc/self/statm every millisecond (falls back to ru_maxrss)."""

    def __init__(self, device):
        import torch

        self.device = torch.device(device)
        self.peak = None

    @staticmethod
    def _rss():
        try:
            with open("/proc/self/statm") as fh:
                return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            return None

    def __enter__(self):
        import torch

        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            self.base = torch.cuda.memory_allocated(self.device)
            return self
        self.base = self._rss()
        self.max = self.base
        self._stop = threading.Event()
        if self.base is not None:
            def poll():
                while not self._stop.wait(0.001):
                    self.max = max(self.max, self._rss())
            self._thread = threading.Thread(target=poll, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        import torch

        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            self.peak = torch.cuda.max_memory_allocated(self.device) - self.base
            self.kind = "cuda max_memory_allocated"
            return False
        if self.base is not None:
            self._stop.set()
            self._thread.join()
            self.max = max(self.max, self._rss())
            self.peak = self.max - self.base
            self.kind = "peak RSS increase"
        else:
            import resource

            self.peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            self.kind = "process ru_maxrss"
        return False


def _sync(device):
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _time_trainer(dev, n, d, length, batch):
    """steps/s, tokens/s and peak memory of ``n`` Trainer steps on ``dev`` (after one warm-up step)."""
    from .training import Trainer

    trainer = Trainer(p=0.5, q=0.8, d=d, length=length, batch=batch, steps=n + 1, device=dev, progress=False)
    trainer.train_step()  # warm-up
    _sync(dev)
    with _PeakMemory(dev) as mem:
        t0 = time.perf_counter()
        for _ in range(n):
            trainer.train_step()
        _sync(dev)
        dt = time.perf_counter() - t0
    return {"steps_per_s": n / dt, "tokens_per_s": n * batch * length / dt, "peak_bytes": mem.peak,
            "memory_kind": mem.kind}


def bench_train(quick=False, *, device=None, threads=1) -> dict:
    """Training throughput at the paper configuration (d = 8, length 1024, batch 16, AdamW): the Trainer
    (vectorized sampler, fused causal attention, float32) next to a plain baseline loop in the same run
    (per-position torch.multinomial sampler, attention with the materialized length x length matrix).
    On an accelerator (``device="cuda"``) the Trainer is also timed on the CPU, and both figures are printed.
    Prints steps/s, tokens/s, peak memory and the speed-up; returns the figures. On CPU torch uses
    ``threads`` threads during the benchmark (default 1: the per-core figure)."""
    import torch

    from ..markov.chain import MarkovChain
    from .device import pick_device
    from .model import MarkovTransformer

    dev = pick_device(device)
    threads = checks.positive_int("threads", threads)
    n_fast, n_base = (6, 2) if quick else (30, 6)
    d, length, batch = 8, 1024, 16
    old_threads = torch.get_num_threads()
    torch.set_num_threads(threads)  # the CPU figures (and the CPU side of an accelerator run)
    try:
        results = {"trainer": _time_trainer(dev, n_fast, d, length, batch)}
        if dev.type != "cpu":
            results["trainer_cpu"] = _time_trainer(torch.device("cpu"), n_fast, d, length, batch)
        # -- the baseline -----------------------------------------------------------------------------------
        chain = MarkovChain(0.5, 0.8)
        model = MarkovTransformer(d, length, attention="softmax", reference_impl=True, dtype=torch.float32)
        model.init_weights("standard", std=0.02, seed=0)
        model = model.to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=2e-3, betas=(0.9, 0.95), weight_decay=1e-3)
        seeds = iter(range(10**6))

        def base_step():
            x = multinomial_loop_sampler(chain, batch, length + 1, seed=next(seeds)).to(dev)
            loss = model.loss(x)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()

        base_step()
        _sync(dev)
        with _PeakMemory(dev) as mem:
            t0 = time.perf_counter()
            for _ in range(n_base):
                base_step()
            _sync(dev)
            dt = time.perf_counter() - t0
        results["baseline"] = {"steps_per_s": n_base / dt, "tokens_per_s": n_base * batch * length / dt,
                               "peak_bytes": mem.peak, "memory_kind": mem.kind}
    finally:
        torch.set_num_threads(old_threads)
    speedup = results["trainer"]["steps_per_s"] / results["baseline"]["steps_per_s"]
    results.update(speedup=speedup, device=str(dev), threads=threads,
                   config={"d": d, "length": length, "batch": batch, "trainer_steps": n_fast,
                           "baseline_steps": n_base})
    where = f"{dev}" + (f", {threads} thread(s)" if dev.type == "cpu" else "")
    print(f"bench train: d={d}, length={length}, batch={batch}, AdamW, float32 ({where})")
    print(f"{'':34s} {'steps/s':>9s} {'tokens/s':>11s} {'peak memory':>13s}")
    rows = [("trainer", f"Trainer on {dev} (fused attention)")]
    if "trainer_cpu" in results:
        rows.append(("trainer_cpu", f"Trainer on cpu ({threads} thread(s))"))
    rows.append(("baseline", f"baseline on {dev} (per-position)"))
    for name, label in rows:
        r = results[name]
        mem = f"{r['peak_bytes'] / 2**20:9.1f} MiB" if r["peak_bytes"] is not None else "n/a"
        print(f"{label:34s} {r['steps_per_s']:9.2f} {r['tokens_per_s']:11.0f} {mem:>13s}")
    print(f"speed-up: {speedup:.1f}x over the baseline  (memory: {results['trainer']['memory_kind']})")
    if "trainer_cpu" in results:
        ratio = results["trainer"]["steps_per_s"] / results["trainer_cpu"]["steps_per_s"]
        results["device_over_cpu"] = ratio
        print(f"{dev} / cpu: {ratio:.1f}x the Trainer's CPU steps/s")
    return results
