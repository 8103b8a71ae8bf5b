"""The batched trainer of two-layer ReLU networks (markovlib.richlazy.relu_batch): it reproduces relu_networks'
single runs to rounding, a batch equals its members trained alone, and its metrics equal the package's
per-network definitions; torch autograd is the independent reference for the training itself. The float32 option
and the torch backend against the float64 numpy runs (the CUDA comparison: tests/test_gpu.py)."""
import numpy as np
import pytest
import torch

from markovlib.richlazy import relu_networks as RN
from markovlib.richlazy.minimal_model import kernel_distance
from markovlib.richlazy.relu_batch import METRICS, train_networks

TAUS = np.logspace(-1, 0.3, 4)
DELTAS = np.linspace(-1, 1, 3)
CPS = [0, 1, 10, 60, 300]


def _problem(seed=1, d=6, n=40, h=10, n_test=50):
    p = RN.teacher_student(d, n, h, 3, TAUS, DELTAS, seed, n_test=n_test)
    return p, (5e-3 / TAUS**2)[:, None] * np.ones((1, DELTAS.size))


def test_a_batch_of_one_and_a_grid_reproduce_relu_networks_gradient_descent_to_rounding():
    p, lr = _problem()
    ref = RN.gradient_descent(p["X"], p["y"], p["a0"], p["W0"], lr, CPS)
    for block in (None, 1, 5, 100):
        res = train_networks(p["X"], p["y"], p["a0"], p["W0"], lr, CPS, keep_weights=True, block=block)
        assert res["a_t"].shape == ref["a"].shape and res["W_t"].shape == ref["W"].shape
        assert np.max(np.abs(res["a_t"] - ref["a"])) < 1e-13
        assert np.max(np.abs(res["W_t"] - ref["W"])) < 1e-13
        assert np.max(np.abs(res["train_loss"] - ref["loss"])) < 1e-14
        assert np.all(res["finite"])
    one = train_networks(p["X"], p["y"], p["a0"][0, 2], p["W0"][0, 2], lr[0, 2], CPS, keep_weights=True)
    assert one["train_loss"].shape == (len(CPS),) and one["a"].shape == p["a0"][0, 2].shape
    assert np.max(np.abs(one["a_t"] - ref["a"][:, 0, 2])) < 1e-13
    assert np.max(np.abs(one["W_t"] - ref["W"][:, 0, 2])) < 1e-13
    assert np.array_equal(one["W"], one["W_t"][-1]) and one["steps"].tolist() == CPS


def test_seeds_are_a_leading_axis_and_each_network_alone_gives_the_same_run():
    ps = [_problem(seed=s)[0] for s in (3, 4)]
    lr = _problem()[1]
    X, y = np.stack([q["X"] for q in ps]), np.stack([q["y"] for q in ps])
    Xt, yt = np.stack([q["X_test"] for q in ps]), np.stack([q["y_test"] for q in ps])
    a0, W0 = np.stack([q["a0"] for q in ps]), np.stack([q["W0"] for q in ps])
    res = train_networks(X, y, a0, W0, lr[None], CPS, X_test=Xt, y_test=yt, block=7)
    assert set(res) >= set(METRICS) and res["kernel_distance"].shape == (len(CPS), 2, TAUS.size, DELTAS.size)
    for s in range(2):
        for i in range(TAUS.size):
            for j in range(DELTAS.size):
                one = train_networks(X[s], y[s], a0[s, i, j], W0[s, i, j], lr[i, j], CPS, X_test=Xt[s], y_test=yt[s])
                for m in METRICS:
                    assert np.max(np.abs(one[m] - res[m][:, s, i, j])) < 1e-12, m


def test_metrics_are_the_per_network_definitions_of_relu_networks():
    p, lr = _problem(seed=5)
    res = train_networks(p["X"], p["y"], p["a0"], p["W0"], lr, CPS, X_test=p["X_test"], y_test=p["y_test"],
                         keep_weights=True)
    for i in range(TAUS.size):
        for j in range(DELTAS.size):
            a0, W0 = p["a0"][i, j], p["W0"][i, j]
            K0 = RN.ntk(p["X"], a0, W0)
            C0 = RN.activation_pattern(p["X"], W0)
            for t in range(len(CPS)):
                a, W = res["a_t"][t, i, j], res["W_t"][t, i, j]
                want = {"train_loss": RN.mse(p["X"], p["y"], a, W), "test_loss": RN.mse(p["X_test"], p["y_test"], a, W),
                        "kernel_distance": kernel_distance(K0, RN.ntk(p["X"], a, W)),
                        "hamming": RN.hamming_distance(C0, RN.activation_pattern(p["X"], W)),
                        "param_distance": RN.parameter_distance(a, W, a0, W0)}
                for m, v in want.items():
                    assert abs(res[m][t, i, j] - v) < 1e-12, (m, t, i, j)
    assert np.all(res["kernel_distance"][0] == 0) or np.max(np.abs(res["kernel_distance"][0])) < 1e-15
    assert np.all(res["hamming"][0] == 0) and np.all(res["param_distance"][0] == 0)
    # the small-tau upstream corner moves its kernel; the largest tau stays near its kernel
    assert res["kernel_distance"][-1, 0, -1] > 10 * res["kernel_distance"][-1, -1].max()


@pytest.mark.parametrize("gamma,eta_a,eta_w", [(0.2, 1.0, 1.0), (0.0, 2.0, 0.5), (1.0, 1.0, 1.0)])
def test_leaky_activations_and_layer_learning_rates_follow_relu_networks(gamma, eta_a, eta_w):
    p, lr = _problem(seed=6)
    ref = RN.gradient_descent(p["X"], p["y"], p["a0"], p["W0"], lr, CPS, gamma=gamma, eta_a=eta_a, eta_w=eta_w)
    res = train_networks(p["X"], p["y"], p["a0"], p["W0"], lr, CPS, gamma=gamma, eta_a=eta_a, eta_w=eta_w,
                         keep_weights=True)
    assert np.max(np.abs(res["W_t"] - ref["W"])) < 1e-12 and np.max(np.abs(res["a_t"] - ref["a"])) < 1e-12
    K = RN.ntk(p["X"], res["a"][1, 1], res["W"][1, 1], gamma, eta_a, eta_w)
    K0 = RN.ntk(p["X"], p["a0"][1, 1], p["W0"][1, 1], gamma, eta_a, eta_w)
    assert abs(res["kernel_distance"][-1, 1, 1] - kernel_distance(K0, K)) < 1e-12


def test_training_equals_a_torch_autograd_gradient_descent_loop():
    """Independent reference: the network, the loss and its gradient in torch, and a plain GD loop."""
    p, lr = _problem(seed=7)
    i, j, steps = 1, 2, 80
    Xt, yt = torch.tensor(p["X"]), torch.tensor(p["y"])
    a = torch.tensor(p["a0"][i, j], requires_grad=True)
    W = torch.tensor(p["W0"][i, j], requires_grad=True)
    for _ in range(steps):
        loss = torch.mean((torch.relu(Xt @ W.T) @ a - yt) ** 2)
        ga, gW = torch.autograd.grad(loss, (a, W))
        with torch.no_grad():
            a -= lr[i, j] * ga
            W -= lr[i, j] * gW
    res = train_networks(p["X"], p["y"], p["a0"][i, j], p["W0"][i, j], lr[i, j], [steps], kernel=False)
    assert np.max(np.abs(res["a"] - a.detach().numpy())) < 1e-12
    assert np.max(np.abs(res["W"] - W.detach().numpy())) < 1e-12


def test_an_overflowing_network_is_marked_and_leaves_the_others_alone():
    p, lr = _problem(seed=8)
    lr = lr.copy()
    lr[0, 0] = 1e4
    res = train_networks(p["X"], p["y"], p["a0"], p["W0"], lr, [0, 50, 200])
    assert not res["finite"][0, 0] and np.all(res["finite"].ravel()[1:])
    assert np.isnan(res["train_loss"][-1, 0, 0]) and np.all(np.isfinite(res["train_loss"][:, 1:]))
    alone = train_networks(p["X"], p["y"], p["a0"][1], p["W0"][1], lr[1], [0, 50, 200])
    assert np.max(np.abs(alone["train_loss"] - res["train_loss"][:, 1])) < 1e-14


def test_bad_arguments_raise_value_errors_naming_them():
    p, lr = _problem()
    X, y, a0, W0 = p["X"], p["y"], p["a0"], p["W0"]
    cases = [(dict(lr=-1.0), "lr"), (dict(lr=np.ones(5)), "lr"), (dict(checkpoints=[3, 2]), "checkpoints"),
             (dict(gamma=2.0), "gamma"), (dict(eta_a=0.0), "eta_a"), (dict(y=y[:-1]), "y"),
             (dict(W0=W0[..., :-1]), "W0"), (dict(X_test=p["X_test"]), "X_test"), (dict(block=0), "block"),
             (dict(a0=np.full_like(a0, np.nan)), "a0"), (dict(dtype="float16"), "dtype.*float32"),
             (dict(dtype=np.float32), "dtype"), (dict(backend="jax"), "backend.*numpy"),
             (dict(device="gpu"), "device.*cuda"), (dict(device="cuda"), "backend='torch'")]
    for change, name in cases:
        kw = dict(X=X, y=y, a0=a0, W0=W0, lr=lr, checkpoints=CPS)
        kw.update(change)
        with pytest.raises(ValueError, match=name):
            train_networks(**kw)
    with pytest.raises(ValueError, match="seed axis"):
        train_networks(np.stack([X, X]), np.stack([y, y]), a0, W0, lr, CPS)


def test_float32_agrees_with_float64_on_a_slice():
    """float32 steps against float64 on the slice of _problem (d = 6, n = 40, h = 10, 4 tau x 3 delta, 300 steps),
    numpy and torch: measured (this machine, OpenBLAS and MKL), as max |x32 - x64| / max |x64| over the slice, a_t
    7.5e-7 and W_t 6.0e-7, train loss 8.9e-7, test loss 9.5e-7, kernel distance 3.7e-7, parameter distance 1.5e-7,
    and no activation-pattern entry differs (a 1e-7 relative change of W0 in float64 moves them by 1e-8 to 1e-7 and
    flips no entry either: the slice is not at a kink). Tolerance 1e-5: 10x the largest, for other BLAS kernels;
    the Hamming distance within one entry of the n h of a network. (At the paper's size, d = 100 and n = 1000, the
    differences are far larger: ``bench relu-grid`` prints W's; float32 is for runs whose claims' margins are far
    above the differences measured at their size.)"""
    p, lr = _problem()
    kw = dict(X_test=p["X_test"], y_test=p["y_test"], keep_weights=True)
    ref = train_networks(p["X"], p["y"], p["a0"], p["W0"], lr, CPS, **kw)
    for backend in ("numpy", "torch"):
        res = train_networks(p["X"], p["y"], p["a0"], p["W0"], lr, CPS, dtype="float32", backend=backend,
                             device="cpu", **kw)
        assert all(res[k].dtype == ref[k].dtype and res[k].shape == ref[k].shape for k in ref)
        for m in ("a_t", "W_t", "train_loss", "test_loss", "kernel_distance", "param_distance"):
            rel = np.max(np.abs(res[m] - ref[m])) / np.max(np.abs(ref[m]))
            assert 0 < rel < 1e-5, (backend, m, rel)   # > 0: the steps did run in float32
        assert np.max(np.abs(res["hamming"] - ref["hamming"])) <= 1 / (40 * 10), backend


@pytest.mark.parametrize("gamma", [0.0, 0.3])
def test_torch_on_the_cpu_in_float64_equals_numpy(gamma):
    p, lr = _problem(seed=9)
    X, y, a0, W0 = (p[k].copy() for k in ("X", "y", "a0", "W0"))
    kw = dict(X_test=p["X_test"], y_test=p["y_test"], keep_weights=True, gamma=gamma, block=5)
    ref = train_networks(X, y, a0, W0, lr, CPS, **kw)
    res = train_networks(X, y, a0, W0, lr, CPS, backend="torch", device="cpu", **kw)
    assert set(res) == set(ref)
    for k in ref:
        assert res[k].dtype == ref[k].dtype and res[k].shape == ref[k].shape, k
        if k in ("steps", "finite"):
            assert np.array_equal(res[k], ref[k]), k
        else:
            assert np.max(np.abs(res[k] - ref[k])) <= 1e-10 * np.max(np.abs(ref[k])), k
    # the steps work in place on their own copies: the caller's arrays are untouched
    assert all(np.array_equal(u, p[k]) for u, k in zip((X, y, a0, W0), ("X", "y", "a0", "W0")))


def test_torch_backend_leaves_the_global_generator_alone():
    p, lr = _problem(seed=10)
    state = torch.get_rng_state()
    train_networks(p["X"], p["y"], p["a0"], p["W0"], lr, [0, 5], backend="torch", device="cpu")
    assert torch.equal(torch.get_rng_state(), state)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error without CUDA")
def test_torch_on_cuda_without_cuda_is_a_value_error_and_none_means_the_cpu():
    p, lr = _problem()
    with pytest.raises(ValueError, match="CUDA"):
        train_networks(p["X"], p["y"], p["a0"], p["W0"], lr, CPS, backend="torch", device="cuda")
    one = train_networks(p["X"], p["y"], p["a0"][1, 1], p["W0"][1, 1], lr[1, 1], [0, 3], backend="torch")
    ref = train_networks(p["X"], p["y"], p["a0"][1, 1], p["W0"][1, 1], lr[1, 1], [0, 3])
    assert np.max(np.abs(one["W"] - ref["W"])) < 1e-14
