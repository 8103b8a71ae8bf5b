"""The steps and figures of the chapter grq_relu_dynamics: relu_dynamics_steps, relu_dynamics_drawings,
relu_reference.torch_velocities and relu_drawings.fig1a_figure's panels."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.richlazy import (  # noqa: E402
    relu_checks,
    relu_drawings,
    relu_dynamics,
    relu_reference,  # noqa: E402
)
from markovlib.richlazy import relu_dynamics_drawings as dyn_drawings  # noqa: E402
from markovlib.richlazy import relu_dynamics_steps as steps  # noqa: E402


def test_torch_velocities_against_finite_differences():
    X, y, a, W = relu_checks.random_network(np.random.default_rng(2), 10, 3, 4)
    vb, vm, vbeta = relu_reference.torch_velocities(X, y, a, W, 0.2, 0.5, 2.0)
    d = relu_dynamics.flow_velocities(X, y, a, W, 0.2, 0.5, 2.0)
    assert np.allclose(vbeta, d[2], atol=1e-10) and np.allclose(vm, d[1], atol=1e-10)
    assert np.allclose(np.sum(vb * (W / np.linalg.norm(W, axis=1)[:, None]), axis=1), 0, atol=1e-12)  # unit sphere
    with pytest.raises(ValueError, match="eta_a"):
        relu_reference.torch_velocities(X, y, a, W, 0.0, 0.0, 1.0)


def test_flow_and_regime_checks():
    rng = np.random.default_rng(0)
    err, seen = steps.ode_check(rng, [0.0, 0.5], 12, 3, 5, 0.5, 2.0)
    assert err < 1e-10 and len(seen) == 2 * 3 * 5 and min(seen) < 0 < max(seen)
    R = steps.regime_check(rng, [10.0, 100.0], 12, 3, 5, 1e-10)
    assert R["checked"] == 2 * 2 * 5 and R["within"] == R["checked"] and R["balanced"] < 1e-10 and R["worst"] <= 1


@pytest.fixture(scope="module")
def xor():
    return steps.xor_runs([0, 1], 16, 0.3, 16, 0.1, 2e-4, 300, 0.01, 1200)


def test_xor_runs_readouts_and_partitions(xor):
    T = len(xor["times"])
    assert xor["run"]["a"].shape == (T, 2, 3, 16) and np.isclose(xor["times"][-1], 300 * 2e-4 + 1200 * 0.01)
    assert np.all(np.diff(xor["times"]) > 0)
    rel_a, bound_, drift = steps.readout_changes(xor)
    assert rel_a.shape == (2, 3) and np.all(rel_a[:, 0] < rel_a[:, 2])  # upstream readouts move least
    assert np.all(rel_a[:, 0] <= bound_[:, 0] * (1 + 10 * drift) + 10 * drift)  # Cor. grq-cor-upstream-readout
    part = steps.partitions(xor, 360, 0.5)
    assert np.all(part["ham"][0] == 0) and part["ham"].shape == (T, 2, 3)
    assert np.all(part["ham"][part["early"], np.arange(2)[:, None], np.arange(3)] >= 0.5 * part["ham"][-1])
    fig = dyn_drawings.fig5a_figure(xor, [0.0, 1.0], "t", grid=11)
    assert len(fig.axes) == 6
    plt.close(fig)
    fig = dyn_drawings.partition_curves(xor["times"], part["ham"], part["fmax"])
    assert len(fig.axes[0].lines) == 6
    plt.close(fig)
    with pytest.raises(ValueError, match="ham_frac"):
        steps.partitions(xor, 360, 1.5)


def test_fig1a_left_rich_against_lazy():
    f1 = steps.fig1a_left([100, 101], 200, 0.05, 0.0125)
    assert f1["turn"].shape == (2, 2) and np.all(f1["turn"][:, 0] > f1["turn"][:, 1])
    assert np.all(f1["kd"][:, 0] > f1["kd"][:, 1])
    fig = relu_drawings.fig1a_figure(f1["problems"][0], {"a": f1["run"]["a"][:, 0], "W": f1["run"]["W"][:, 0]},
                                     [(0, "rich"), (1, "lazy")], circle=None, teacher=":", suptitle="s")
    assert [ax.get_title() for ax in fig.axes] == ["rich", "lazy"]
    plt.close(fig)


def test_explorer_check_finds_a_wrong_frame():
    grid = {"tau": [0.1, 2.0], "alpha": [0.5, 2.0]}
    frames = [relu_drawings.draw_relu_training(t, al, steps=1000)
              for t in grid["tau"] for al in grid["alpha"]]
    plt.close("all")
    E = steps.explorer_check(frames, grid)
    assert E["gap"] < 1e-7 and E["texts"] == 4 and E["small_S"] > E["large_S"]
    frames[0] = dict(frames[0], test_loss_end=frames[0]["test_loss_end"] + 1.0)
    assert steps.explorer_check(frames, grid)["gap"] > 0.5
