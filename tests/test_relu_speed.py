"""The speed tools of Part II's batched ReLU trainer (markovlib.richlazy.relu_speed) and ``bench relu-grid``'s
flop-rate table: the flop count, the timed steps (the same runs as train_networks) and the measured peak. No
figure is asserted: the machine's load decides them."""
import numpy as np
import pytest

from markovlib.richlazy import relu_networks as RN
from markovlib.richlazy.relu_batch import train_networks
from markovlib.richlazy.relu_grid import bench_relu_grid
from markovlib.richlazy.relu_speed import matmul_peak, step_flops, time_steps


def test_step_flops_counts_the_two_products_and_the_passes_of_a_step():
    n, d, h = 1000, 100, 50
    products = 2 * (2 * n * d * h)   # X W^T and X^T (r sigma'), a multiply-add counted as two
    rest = step_flops(n, d, h) - products
    assert rest == 5 * n * h + n + 3 * d * h + 4 * h and rest < 0.02 * products
    with pytest.raises(ValueError, match="h"):
        step_flops(n, d, 0)


@pytest.mark.parametrize("dtype,backend", [("float64", "numpy"), ("float32", "numpy"), ("float64", "torch"),
                                           ("float32", "torch")])
def test_time_steps_runs_the_steps_of_train_networks(dtype, backend):
    taus, deltas = np.logspace(-1, 0.3, 3), np.linspace(-1, 1, 3)
    p = RN.teacher_student(5, 30, 8, 3, taus, deltas, 2, n_test=1)
    lr = (5e-3 / taus**2)[:, None] * np.ones((1, deltas.size))
    kw = dict(dtype=dtype, backend=backend, device="cpu" if backend == "torch" else None, block=4)
    ts = time_steps(p["X"], p["y"], p["a0"], p["W0"], lr, 25, **kw)
    ref = train_networks(p["X"], p["y"], p["a0"], p["W0"], lr, [25], kernel=False, **kw)
    assert ts["seconds"] > 0 and ts["device"] == "cpu"
    assert np.array_equal(ts["W"], ref["W"]) and np.array_equal(ts["a"], ref["a"])
    assert ts["W"].dtype == np.float64 and ts["W"].shape == p["W0"].shape
    with pytest.raises(ValueError, match="steps"):
        time_steps(p["X"], p["y"], p["a0"], p["W0"], lr, 0, **kw)


def test_matmul_peak_is_a_positive_rate_and_checks_its_arguments():
    assert 0 < matmul_peak(64, "float32", "numpy", repeats=2) < np.inf
    assert 0 < matmul_peak(64, "float64", "torch", repeats=1) < np.inf
    for kw, name in [(dict(size=0), "size"), (dict(size=8, dtype="int8"), "dtype"),
                     (dict(size=8, library="jax"), "library")]:
        with pytest.raises(ValueError, match=name):
            matmul_peak(**kw)


@pytest.mark.slow
def test_bench_relu_grid_quick_reports_rates_and_fractions_of_the_measured_peak(capsys):
    rows = bench_relu_grid(quick=True)
    out = capsys.readouterr().out
    assert "fraction of the measured one-thread BLAS peak" in out
    paper = [r for r in rows if r["size"] == "paper size"][0]
    names = {f"batched, {b} cpu {dt}" for b in ("numpy", "torch") for dt in ("float64", "float32")}
    assert names | {"loop, batch of one (numpy float64)", "loop, relu_networks"} <= set(paper["trainers"])
    for name, t in paper["trainers"].items():
        assert t["rate"] > 0 and t["gflops"] > 0 and t["fraction"] > 0, name
        assert f"  paper size    {name}" in out, name
    assert set(paper["peaks"]["cpu"]) == {"float64", "float32"}
    assert paper["trainers"]["batched, numpy cpu float64"]["rel_diff"] == 0
    assert paper["trainers"]["batched, torch cpu float64"]["rel_diff"] < 1e-12
    assert 0 < paper["trainers"]["batched, numpy cpu float32"]["rel_diff"] < 1e-3
