"""GPU smoke test (issue 9.5): runs where CUDA is present, skipped elsewhere.

Tolerances: float64 forward/backward on CUDA equal the CPU to 1e-10 relative (different kernels, same
mathematics); float32 to 1e-4 relative; a 20-step float32 training run (same data and initialization on both
devices: both are drawn with CPU generators) matches the CPU losses to 1e-3 absolute (losses ~0.6 nats; the
kernels' rounding differences grow over the steps but stay far below that). Part II's batched ReLU trainer
(relu_batch.train_networks, backend="torch"): on CUDA in float64 every returned array equals the numpy run to 1e-10
relative (as torch on the CPU, tests/test_relu_batch.py); in float32 (cuBLAS without TF32, torch's default) within
the 1e-5 relative set for float32 on the CPU from the measured 1e-6 (tests/test_relu_batch.py).
"""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from markovlib.richlazy import relu_networks as RN
from markovlib.richlazy.relu_batch import train_networks
from markovlib.richlazy.relu_grid import bench_relu_grid
from markovlib.richlazy.relu_speed import time_steps
from markovlib.transformer.model import MarkovTransformer
from markovlib.transformer.training import Trainer

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]

TINY = dict(p=0.2, q=0.7, d=8, length=64, batch=8, steps=20, eval_every=10, eval_batches=2, lr=1e-2)


def _rel(a, b):
    return float((a - b).abs().max() / max(float(b.abs().max()), 1e-30))


@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-10), (torch.float32, 1e-4)])
@pytest.mark.parametrize("attention", ["softmax", "linear", None])
def test_forward_backward_on_cuda_equal_cpu(dtype, tol, attention):
    cpu = MarkovTransformer(8, 64, attention=attention, dtype=dtype).init_weights("standard", std=0.3, seed=3)
    gpu = MarkovTransformer(8, 64, attention=attention, dtype=dtype).init_weights("standard", std=0.3, seed=3)
    gpu = gpu.to("cuda")
    x = torch.randint(0, 2, (8, 65), generator=torch.Generator().manual_seed(0))
    lc, lg = cpu.loss(x), gpu.loss(x.to("cuda"))
    lc.backward()
    lg.backward()
    assert abs(float(lc) - float(lg)) <= tol * abs(float(lc))
    assert _rel(gpu(x[:, :-1].to("cuda")).cpu(), cpu(x[:, :-1])) <= tol
    for (name, pc), (_, pg) in zip(cpu.named_parameters(), gpu.named_parameters()):
        assert _rel(pg.grad.cpu(), pc.grad) <= 10 * tol, name


def test_trainer_picks_cuda_and_matches_the_cpu_run():
    on_gpu = Trainer(**TINY, progress=False)
    assert on_gpu.device.type == "cuda"  # by itself
    on_cpu = Trainer(**TINY, device="cpu", progress=False)
    assert torch.equal(on_gpu.get_batch(3).cpu(), on_cpu.get_batch(3))  # same data on both devices
    on_gpu.train()
    on_cpu.train()
    for key in ("train_loss", "eval_loss"):
        g = [r[key] for r in on_gpu.history if key in r]
        c = [r[key] for r in on_cpu.history if key in r]
        assert len(g) == len(c) and max(abs(a - b) for a, b in zip(g, c)) <= 1e-3, key


def test_bench_train_on_cuda_prints_the_cpu_figure_beside_it():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "markovlib", "bench", "train", "--quick", "--device", "cuda"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    print(out)  # the figures, for the record (pytest -s)
    assert "steps/s" in out and "Trainer on cuda" in out and "Trainer on cpu" in out and "cuda / cpu:" in out


def _relu_problem(seed=9):
    taus, deltas = np.logspace(-1, 0.3, 4), np.linspace(-1, 1, 3)
    p = RN.teacher_student(6, 40, 10, 3, taus, deltas, seed, n_test=50)
    return p, (5e-3 / taus**2)[:, None] * np.ones((1, deltas.size))


@pytest.mark.parametrize("dtype, tol", [("float64", 1e-10), ("float32", 1e-5)])
@pytest.mark.parametrize("gamma", [0.0, 0.3])
def test_relu_batch_on_cuda_equals_numpy(dtype, tol, gamma):
    p, lr = _relu_problem()
    kw = dict(X_test=p["X_test"], y_test=p["y_test"], keep_weights=True, gamma=gamma)
    cps = [0, 1, 10, 60, 300]
    ref = train_networks(p["X"], p["y"], p["a0"], p["W0"], lr, cps, **kw)
    res = train_networks(p["X"], p["y"], p["a0"], p["W0"], lr, cps, dtype=dtype, backend="torch", device="cuda", **kw)
    assert set(res) == set(ref)
    for k in ref:
        assert res[k].dtype == ref[k].dtype and res[k].shape == ref[k].shape, k
        if k in ("steps", "finite"):
            assert np.array_equal(res[k], ref[k]), k
        elif k == "hamming":
            assert np.max(np.abs(res[k] - ref[k])) <= (0 if dtype == "float64" else 1 / (40 * 10)), k
        else:
            assert np.max(np.abs(res[k] - ref[k])) <= tol * np.max(np.abs(ref[k])), k


def test_relu_batch_picks_cuda_by_itself():
    p, lr = _relu_problem()
    ts = time_steps(p["X"], p["y"], p["a0"], p["W0"], lr, 20, backend="torch")
    ref = train_networks(p["X"], p["y"], p["a0"], p["W0"], lr, [20], kernel=False)
    assert ts["device"] == "cuda" and np.max(np.abs(ts["W"] - ref["W"])) <= 1e-10 * np.max(np.abs(ref["W"]))


def test_bench_relu_grid_reports_the_cuda_rows(capsys):
    rows = bench_relu_grid(quick=True)
    out = capsys.readouterr().out
    print(out)  # the figures, for the record (pytest -s)
    paper = [r for r in rows if r["size"] == "paper size"][0]
    assert set(paper["peaks"]["cuda"]) == {"float64", "float32"} and "on cuda the fraction" in out
    for dtype in ("float64", "float32"):
        t = paper["trainers"][f"batched, torch cuda {dtype}"]
        assert t["rate"] > 0 and t["fraction"] > 0 and f"batched, torch cuda {dtype}" in out
    assert paper["trainers"]["batched, torch cuda float64"]["rel_diff"] < 1e-10
