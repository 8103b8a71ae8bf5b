"""GPU smoke test (issue 9.5): runs where CUDA is present, skipped elsewhere.

Tolerances: float64 forward/backward on CUDA equal the CPU to 1e-10 relative (different kernels, same
mathematics); float32 to 1e-4 relative; a 20-step float32 training run (same data and initialization on both
devices: both are drawn with CPU generators) matches the CPU losses to 1e-3 absolute (losses ~0.6 nats; the
kernels' rounding differences grow over the steps but stay far below that).
"""
import os
import subprocess
import sys

import pytest
import torch

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
