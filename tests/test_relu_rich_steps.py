"""The step functions of the chapter grq_relu_rich: relu_reference, relu_conservation, relu_rich, relu_surface_checks,
relu_stored and the chapter's figures in relu_drawings."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.richlazy import (  # noqa: E402
    relu_conservation,
    relu_drawings,
    relu_networks,
    relu_reference,
    relu_rich,
    relu_stored,
    relu_surface,
    relu_surface_checks,
)
from markovlib.richlazy.minimal_model import conserved_delta  # noqa: E402
from markovlib.richlazy.relu_batch import METRICS  # noqa: E402
from markovlib.richlazy.relu_grid import train_grid  # noqa: E402


@pytest.fixture(scope="module")
def problems():
    return relu_conservation.random_problems(np.random.default_rng(0), [0.0, 0.3], 12, 3, 6, per_gamma=2)


def test_references_agree_with_finite_differences_and_the_package(problems):
    gamma, X, y, a, W = problems[-1]
    loss, ga, gW = relu_reference.torch_loss_and_grads(X, y, a, W, gamma)
    eps = 1e-6
    e = np.zeros_like(a)
    e[2] = eps
    fd = (relu_networks.mse(X, y, a + e, W, gamma) - relu_networks.mse(X, y, a - e, W, gamma)) / (2 * eps)
    assert abs(fd - ga[2]) < 1e-6 and abs(loss - relu_networks.mse(X, y, a, W, gamma)) < 1e-12
    theta = np.concatenate([a, W.ravel()])
    assert np.allclose(relu_reference.flow_rhs(theta, X, y, gamma), -np.concatenate([ga, gW.ravel()]), atol=1e-12)
    K = relu_reference.torch_ntk(X, a, W, gamma, 2.0, 0.5)
    assert np.allclose(K, relu_networks.ntk(X, a, W, gamma, 2.0, 0.5), atol=1e-12)
    # RK4 lowers the loss along the flow and keeps delta_k to high order
    th = relu_reference.rk4(0.5 * theta, X, y, gamma, 0.5, 400)
    loss_end = relu_networks.mse(X, y, th[:6], th[6:].reshape(6, 3), gamma)
    assert loss_end < relu_networks.mse(X, y, 0.5 * a, 0.5 * W, gamma)
    assert np.max(np.abs(conserved_delta(th[:6], th[6:].reshape(6, 3)) - conserved_delta(0.5 * a, 0.5 * W))) < 1e-6
    layers = relu_surface.init_mlp(2, [5, 5], 1)
    P = np.random.default_rng(1).uniform(-1, 1, (20, 2))
    f, g = relu_reference.torch_mlp(P, layers)
    assert np.allclose(f, relu_surface.forward(P, layers)[0], atol=1e-12)
    assert np.allclose(g, relu_surface.local_affine(P, layers)[0], atol=1e-12)
    with pytest.raises(ValueError, match="gamma"):
        relu_reference.torch_loss_and_grads(X, y, a, W, 2.0)


def test_conservation_checks(problems):
    assert len(problems) == 4 and problems[0][0] == 0.0 and problems[2][0] == 0.3
    again = relu_conservation.random_problems(np.random.default_rng(0), [0.0, 0.3], 12, 3, 6, per_gamma=2)
    assert np.array_equal(again[3][4], problems[3][4])
    assert max(relu_conservation.autograd_errors(problems)) < 1e-12
    first, step = relu_conservation.step_errors(problems)
    assert first < 1e-12 and step < 1e-6
    rows, ratios = relu_conservation.gd_drift(problems[::2], [0.02, 0.01], 0.5)
    assert len(rows) == 2 and all(abs(r - 2) < 0.3 for r in ratios)  # O(lr) drift: halves with the step
    drift, converges, factor = relu_conservation.flow_drift(problems[::2], 0.5, 200)
    assert drift < 1e-6 and converges and factor > 3
    with pytest.raises(ValueError, match="lrs"):
        relu_conservation.gd_drift(problems, [0.01], 1.0)
    with pytest.raises(ValueError, match="rng"):
        relu_conservation.random_problems(0, [0.0], 3, 2, 2)


def test_live_grid_metrics_and_flags():
    taus, deltas = np.array([0.1, 1.0]), np.array([-1.0, 0.0, 1.0])
    live = relu_rich.train_live(4, 20, 6, 2, taus, deltas, [3, 4], 50, 0.005, [0, 10, 100])
    assert max(live["init_err"]) < 1e-12 and live["A"].shape == (3, 2, 2, 3, 6)
    m = relu_rich.live_metrics(live)
    assert np.all(m["kdist"][0] == 0) and np.all(m["hamming"][0] == 0) and np.all(m["pdist"][0] == 0)
    p = live["probs"][1]
    assert np.isclose(m["test_loss"][2, 1, 0, 2], relu_networks.mse(p["X_test"], p["y_test"], live["A"][2, 1, 0, 2],
                                                                     live["W"][2, 1, 0, 2]))
    first = relu_rich.first_kernel_distances(m, live, 3, 4, 20, 6, 2, 0.005, 3)
    assert first.shape == (3, 3) and np.allclose(first[:2], m["kdist"][1, :, 0])
    # synthetic corners: upstream fastest in seed 0 only; Fig. 5(b) holds in seed 1 only
    T = np.ones((2, 2, 2, 3))
    T[1, 0, 0] = [0.9, 0.8, 0.1]
    T[1, 1, 0] = [0.1, 0.8, 0.9]
    kd, ham, pd = np.zeros_like(T), np.zeros_like(T), np.ones_like(T)
    ham[-1, 1, 0] = [0.01, 0, 0.1]
    pd[-1, 1, 0] = [1.0, 1, 0.1]
    F = relu_rich.corner_flags(dict(test_loss=T, kdist=kd, hamming=ham, pdist=pd), 1, 0.5, 10, 2)
    assert F["fastest"].tolist() == [True, False] and F["fig5b"].tolist() == [False, True]
    assert F["below"].tolist() == [True, False] and F["kd_lazy"] == 0
    runs = relu_rich.fig1a_runs(2, [5, 6], 40, snapshots=4)
    assert runs["turn"].shape == (2, 2) and runs["run"]["a"].shape[0] == 5
    for fig in (relu_drawings.fig5b_figure(taus, deltas, m["hamming"], m["pdist"], 100, "t"),
                relu_drawings.fig1a_figure(runs["problem"], runs["run"])):
        assert len(fig.axes) >= 2
        plt.close(fig)


def test_surface_checks():
    nets = {b: relu_surface.init_mlp(2, [8, 8], 2, bias=b) for b in (True, False)}
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (50, 2))
    hom = relu_surface_checks.homogeneity(nets, X)
    assert hom[False]["homog"] < 1e-12 and hom[False]["cones"] == 1.0 and hom[True]["homog"] > 1e-3
    aff, ga, pairs = relu_surface_checks.affine(nets, X, rng, 1e-3)
    assert aff < 1e-12 and ga < 1e-12 and pairs > 50
    surf = relu_surface_checks.two_colouring(nets, 1.0, 40, 20, rng)
    for b in (True, False):
        assert surf[b]["one_ok"] and surf[b]["regions"] > 1 and np.all(surf[b]["flips"] == 1)
    plt.close(relu_drawings.fig9_figure(surf, 1.0, [8, 8]))
    with pytest.raises(ValueError, match="nets"):
        relu_surface_checks.homogeneity({True: nets[True]}, X)


@pytest.fixture(scope="module")
def small_grid():
    settings = dict(d=3, n=10, h=4, n_teacher=2, n_test=20, taus=[0.1, 0.5, 1.0], deltas=[-1.0, 0.0, 1.0],
                    base_lr=0.005)
    G = train_grid(settings, [7, 8], [0, 10, 20, 50, 100])
    G.update(taus=np.array(settings["taus"]), deltas=np.array(settings["deltas"]))
    return settings, G


def test_stored_readings(small_grid):
    settings, G = small_grid
    err, cps, points = relu_stored.grid_slice_error(G, settings, 20)
    assert err < 1e-12 and cps == [0, 10, 20] and points == 9
    GC = relu_stored.grid_counts(G, 10, 2.0)
    TL = G["test_loss"]
    assert GC["fastest"].tolist() == [bool(TL[1, s, 0, 2] < min(TL[1, s, 0, 0], TL[1, s, 0, 1])) for s in range(2)]
    assert GC["kd_lazy"] == G["kernel_distance"][:, :, 2].max() and GC["H"] == 100
    # a size study made of the grid's own runs at tau = 0.1: the cross check is exact, a perturbation is seen
    SZ = {m: np.stack([G[m][:, :, 0]] * 2) for m in METRICS}
    SZ.update(sizes=np.array([[2, 10], [3, 10]]), steps=G["steps"], seeds=G["seeds"], deltas=G["deltas"], tau=0.1)
    assert relu_stored.sizes_cross_check(G, SZ, (3, 10))["cross"] == 0.0
    SZ["hamming"] = SZ["hamming"] * 1.01 + 1e-3
    assert relu_stored.sizes_cross_check(G, SZ, (3, 10))["cross"] > 1e-3
    study = relu_stored.size_study(SZ, [50, 100, 7])
    assert study["horizons"] == [50, 100] and study["n_tests"] == 4
    up_wins = int(np.sum(TL[-1, :, 0, 2] < TL[-1, :, 0, 1]))
    assert study["cells"][(3, 10, 100)]["upstream below balanced"] == f"{up_wins}/2"
    assert study["bal_wins"] == f"{int(np.sum(TL[-1, :, 0, 1] < TL[-1, :, 0, 2]))}/2"
    fig = relu_drawings.stored_heat_rows(G, [10, 100], ["test_loss", "hamming"], "t")
    assert len(fig.axes) == 6
    plt.close(fig)
    with pytest.raises(ValueError, match="checkpoints"):
        relu_drawings.stored_heat_rows(G, [11], ["test_loss"], "t")
    fig = relu_drawings.stored_heat_rows(G, [100], ["test_loss"], "t", statistic="median")
    assert "seed median" in fig.axes[-1].get_ylabel()   # the colour bar says which statistic is drawn
    plt.close(fig)
    with pytest.raises(ValueError, match="statistic"):
        relu_drawings.stored_heat_rows(G, [100], ["test_loss"], "t", statistic="max")
