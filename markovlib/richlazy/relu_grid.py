"""Part II, Fig. 1(b) and Fig. 5(b) of "Get rich quick" at the paper's grid, the size study of the end ranking,
and ``python -m markovlib bench relu-grid``.

:data:`PAPER` holds the settings of the authors' ``two-layer-relu/run_grid.py`` (read for its settings,
re-implemented here): inputs on the unit sphere of R^d with d = 100, n = 1000 training points, a teacher of 3 ReLU
units, a symmetric student of h = 50 neurons (their ``m``) at the (tau, delta) initialization, 17 log-spaced tau in
[10^-1, 10^0.3] times 17 delta in [-1, 1], seeds 100 to 115, full-batch float64 GD at lr = 5e-3 / tau^2, 10,000
test points, checkpoints 0, 10, 100, ... up to 10^5 steps (their Fig. 1b; 10^6 in supporting runs). The draws follow
:func:`markovlib.richlazy.relu_networks.teacher_student` (numpy streams spawned from the seed: teacher, data,
student, test), where the authors draw with torch and one fixed test seed. :func:`train_grid` trains the grid of
given seeds as one computation (:func:`markovlib.richlazy.relu_batch.train_networks`): a dask task of
``tools/run_relu_grid.py``.
"""
from __future__ import annotations

import time

import numpy as np

from ..numerics import checks
from . import relu_networks as RN
from .relu_batch import DTYPES, METRICS, train_networks

PAPER = dict(d=100, n=1000, h=50, n_teacher=3, n_test=10_000, taus=np.logspace(-1, 0.3, 17).tolist(),
             deltas=np.linspace(-1, 1, 17).tolist(), base_lr=5e-3, seeds=list(range(100, 116)), steps=100_000)


def schedule(steps, every=None):
    """Checkpoints: 0, then 1, 2 and 5 times the powers of ten below ``steps``, and ``steps`` (with ``every``: the
    multiples of ``every`` too)."""
    steps = checks.positive_int("steps", steps)
    out = {0, steps} | {m * 10**k for k in range(1, 12) for m in (1, 2, 5) if m * 10**k < steps}
    if every is not None:
        out |= set(range(0, steps, checks.positive_int("every", every)))
    return sorted(out)


def settings_check(settings) -> dict:
    """The run's settings with their types checked (ValueError naming the bad one)."""
    s = dict(settings)
    for name in ("d", "n", "h", "n_teacher", "n_test"):
        s[name] = checks.positive_int(name, s[name])
    if s["h"] % 2:
        raise ValueError(f"h must be even (the symmetric student), got {s['h']}")
    s["base_lr"] = checks.positive_real("base_lr", s["base_lr"])
    for name in ("taus", "deltas"):
        s[name] = [float(v) for v in checks.finite_array(name, s[name], ndim=1)]
        if not s[name]:
            raise ValueError(f"{name} must not be empty")
    if min(s["taus"]) <= 0:
        raise ValueError(f"taus must be > 0, got {s['taus']}")
    s["dtype"] = checks.choice("dtype", s.get("dtype", "float64"), DTYPES)   # the steps' arithmetic
    return s


def problems(settings, seeds):
    """The stacked teacher-student problems of ``seeds``: X (S, n, d), y (S, n), X_test, y_test, a0 (S, n_tau,
    n_delta, h), W0 (..., h, d) and lr (n_tau, n_delta) = base_lr / tau^2."""
    s = settings_check(settings)
    ps = [RN.teacher_student(s["d"], s["n"], s["h"], s["n_teacher"], s["taus"], s["deltas"],
                             checks.nonnegative_int("seed", seed), n_test=s["n_test"]) for seed in seeds]
    stack = {k: np.stack([p[k] for p in ps]) for k in ("X", "y", "X_test", "y_test", "a0", "W0")}
    taus = np.asarray(s["taus"])
    stack["lr"] = (s["base_lr"] / taus**2)[:, None] * np.ones((1, len(s["deltas"])))
    return stack


def train_grid(settings, seeds, checkpoints) -> dict:
    """Train the (tau, delta) grid of every seed in ``seeds`` as one computation, in the arithmetic of
    ``settings["dtype"]`` (default float64; the metrics are float64 whatever it is); a dask task of
    tools/run_relu_grid.py. Returns the metrics (T, S, n_tau, n_delta), ``finite`` (S, n_tau, n_delta), the
    ``seeds``, the ``steps`` and ``cpu_seconds`` (this process's CPU time)."""
    from threadpoolctl import threadpool_limits

    c0 = time.process_time()
    with threadpool_limits(limits=1):   # one BLAS thread per task: tasks run side by side
        p = problems(settings, seeds)
        res = train_networks(p["X"], p["y"], p["a0"], p["W0"], p["lr"][None], checkpoints, X_test=p["X_test"],
                             y_test=p["y_test"], dtype=settings_check(settings)["dtype"])
    out = {m: res[m] for m in METRICS}
    out.update(finite=res["finite"], seeds=np.asarray(seeds), steps=res["steps"],
               cpu_seconds=time.process_time() - c0)
    return out


# ------------------------------------------------------------------------------------------------------------
# python -m markovlib bench relu-grid
# ------------------------------------------------------------------------------------------------------------
def _cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def _loops(label, d, n, S, steps, lr, k):
    """The first table's line of one size: the batched trainer (train_networks, one checkpoint) beside per-network
    loops over a sample of ``k`` networks and relu_networks on the whole grid; returns the row and the problem."""
    p = problems(dict(PAPER, d=d, n=n, n_test=1), list(range(S)))
    lr_ = p["lr"] if lr is None else np.full(p["lr"].shape, lr)
    nets = S * lr_.size
    t_b, res = _cpu(lambda: train_networks(p["X"], p["y"], p["a0"], p["W0"], lr_[None], [steps], kernel=False))
    picks = [divmod(int(i), lr_.size) for i in np.linspace(0, nets - 1, k).round()]
    err, t_1, t_rn = 0.0, 0.0, 0.0
    for s, g in picks:
        i, j = divmod(g, lr_.shape[1])
        t, one = _cpu(lambda: train_networks(p["X"][s], p["y"][s], p["a0"][s, i, j], p["W0"][s, i, j], lr_[i, j],
                                             [steps], kernel=False))
        t_1 += t
        err = max(err, float(np.max(np.abs(one["W"] - res["W"][s, i, j]))))
        t, _ = _cpu(lambda: RN.gradient_descent(p["X"][s], p["y"][s], p["a0"][s, i, j], p["W0"][s, i, j], lr_[i, j],
                                                [steps]))
        t_rn += t
    t_bc, _ = _cpu(lambda: RN.gradient_descent(p["X"][:1, None, None], p["y"][:1, None, None], p["a0"][:1],
                                               p["W0"][:1], lr_[None], [steps]))
    rate = {"batched": nets * steps / t_b, "loop": k * steps / t_1, "loop_rn": k * steps / t_rn,
            "broadcast": lr_.size * steps / t_bc}

    def cell(key, width):
        text = f"{rate[key]:,.0f}" if key == "batched" else f"{rate[key]:,.0f} (x{rate['batched'] / rate[key]:.1f})"
        return f"{text:>{width}}"
    print(f"{label:<13} {d:>4} {n:>5} {nets:>8} {steps:>6}  {cell('batched', 11)}  {cell('loop', 18)}  "
          f"{cell('loop_rn', 19)}  {cell('broadcast', 25)}  {err:>10.1e}", flush=True)
    return dict(size=label, d=d, n=n, networks=nets, steps=steps, agreement=err, **rate), (p, lr_)


def _rates(row, p, lr, peaks, cuda_steps):
    """The second table's lines of one size: the GD steps alone (relu_speed.time_steps) of the batched trainer in
    each backend and dtype, and the loops of the first table; network-steps/s, GFLOP/s, fraction of the peak."""
    from .relu_speed import step_flops, time_steps

    flops, nets = step_flops(row["n"], row["d"], PAPER["h"]), row["networks"]
    trainers = [(backend, "cpu", dt) for backend in ("numpy", "torch") for dt in ("float64", "float32")]
    trainers += [("torch", "cuda", dt) for dt in ("float64", "float32") if "cuda" in peaks]
    out, W64 = {}, None
    for backend, device, dtype in trainers:
        def run(steps):
            return time_steps(p["X"], p["y"], p["a0"], p["W0"], lr[None], steps, dtype=dtype, backend=backend,
                              device=device)
        ts = run(row["steps"])
        W64 = ts["W"] if W64 is None else W64
        diff = float(np.max(np.abs(ts["W"] - W64)) / np.max(np.abs(W64)))
        steps = row["steps"] if device == "cpu" else cuda_steps
        if steps != row["steps"]:
            ts = run(steps)   # timed again with more steps: the device is fast
        out[f"batched, {backend} {device} {dtype}"] = (steps, nets * steps / ts["seconds"], peaks[device][dtype], diff)
    out["loop, batch of one (numpy float64)"] = (row["steps"], row["loop"], peaks["cpu"]["float64"], None)
    out["loop, relu_networks"] = (row["steps"], row["loop_rn"], peaks["cpu"]["float64"], None)
    for name, (steps, rate, peak, diff) in out.items():
        gf = rate * flops / 1e9
        print(f"  {row['size']:<13} {name:<35} {flops:>10.3g} {steps:>6} {rate:>12,.0f} {gf:>8.2f} {gf / peak:>8.3f}  "
              f"{'-' if diff is None else f'{diff:.1e}':>10}", flush=True)
    return {name: dict(steps=v[0], rate=v[1], gflops=v[1] * flops / 1e9, fraction=v[1] * flops / 1e9 / v[2],
                       rel_diff=v[3]) for name, v in out.items()}


def bench_relu_grid(quick: bool = False) -> list[dict]:
    """Networks x steps per CPU second of :func:`train_networks` on whole (tau, delta) grids, beside per-network
    loops measured in the same run: the same trainer on one network at a time (a batch of one), and
    relu_networks.gradient_descent on one network at a time; plus relu_networks.gradient_descent called once on the
    whole grid by broadcasting (the chapter's call). One BLAS thread; CPU time of this process (the figures do not
    depend on other load on the machine, apart from shared caches and memory bandwidth).

    Then the flop rates: network-steps per second of the GD steps alone (relu_speed.time_steps) of the batched
    trainer in numpy and in torch on the CPU, float64 and float32, and on CUDA when torch sees it, and of the loops
    above; as GFLOP/s (relu_speed.step_flops per network-step) and as the fraction of the peak measured in the same
    run: the best rate of a large square A @ B in the same dtype on one thread (numpy's BLAS or torch's, CPU time),
    on CUDA of torch's A @ B there (wall time); with ``quick`` at the paper's size only. Each row's dict gains
    ``trainers`` (those figures; empty where not measured) and ``peaks``."""
    import torch
    from threadpoolctl import threadpool_limits

    from .relu_speed import matmul_peak

    # (label, d, n, seeds, steps, lr: None for base_lr / tau^2, networks timed in the loops); at d = 2, n = 20 a
    # constant lr 0.02 (0.05 or base_lr / tau^2 overflow in a few networks of the grid)
    cases = [("Fig. 1a size", 2, 20, 4, 200 if quick else 1000, 0.02, 12 if quick else 40),
             ("chapter size", 10, 100, 4, 40 if quick else 200, None, 8 if quick else 24),
             ("paper size", 100, 1000, 1, 2 if quick else 10, None, 2 if quick else 6)]
    size, cuda_steps = (1000, 100) if quick else (2000, 1000)
    print("relu-grid benchmark: two-layer ReLU teacher-student networks, h = 50, a 17 x 17 (tau, delta) grid per "
          "seed, full-batch float64 GD, metrics off; one BLAS thread, CPU time")
    print(f"{'size':<13} {'d':>4} {'n':>5} {'networks':>8} {'steps':>6}  {'batched':>11}  {'loop, batch of one':>18}  "
          f"{'loop, relu_networks':>19}  {'relu_networks on the grid':>25}  {'agreement':>10}")
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        with threadpool_limits(limits=1):
            done = [_loops(*case) for case in cases]
            print("figures: networks x steps per CPU second; (xN): how many times faster the batched trainer is. The "
                  "loops time a sample of the grid's networks; agreement: the largest |W| difference between the "
                  "batched run and the same networks trained alone.")
            peaks = {"cpu": {dt: max(matmul_peak(size, dt, lib) for lib in ("numpy", "torch"))
                             for dt in ("float64", "float32")}}
            if torch.cuda.is_available():
                peaks["cuda"] = {dt: matmul_peak(2 * size, dt, "cuda") for dt in ("float64", "float32")}
            print(f"\nflop rates of the GD steps alone (relu_speed.time_steps; the loops: whole calls, as above): "
                  f"network-steps per second, GFLOP/s (relu_speed.step_flops flops per network-step) and the fraction "
                  f"of the measured one-thread BLAS peak: the best of numpy's and torch's {size} x {size} A @ B on "
                  f"one thread, CPU time: float64 {peaks['cpu']['float64']:.1f}, float32 "
                  f"{peaks['cpu']['float32']:.1f} GFLOP/s" + ("" if "cuda" not in peaks else
                  f"; on cuda the fraction of torch's {2 * size} x {2 * size} A @ B there, wall time: float64 "
                  f"{peaks['cuda']['float64']:.1f}, float32 {peaks['cuda']['float32']:.1f} GFLOP/s"))
            print(f"  {'size':<13} {'trainer':<35} {'flops/step':>10} {'steps':>6} {'net-steps/s':>12} {'GFLOP/s':>8} "
                  f"{'of peak':>8}  {'W rel diff':>10}")
            rows = []
            for row, (p, lr) in done:   # --quick: the paper's size alone
                timed = not quick or row["size"] == "paper size"
                rows.append(dict(row, trainers=_rates(row, p, lr, peaks, cuda_steps) if timed else {}, peaks=peaks))
    finally:
        torch.set_num_threads(threads)
    print("W rel diff: max |W - W(batched, numpy cpu float64)| / max |W(batched, numpy cpu float64)| after the same "
          "steps. The batched rows time the steps alone; the loops time whole train_networks and "
          "relu_networks.gradient_descent calls (a metric evaluation included).")
    return rows
