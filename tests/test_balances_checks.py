"""markovlib.topology.balances_checks and balances_drawings: the steps of topo_balances, one call each, on a few
small networks; each test fails if the quantity is wrong."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.topology import balance_drift, balances_checks, balances_drawings, shallow_relu  # noqa: E402

NETS = [(2, 0), (3, 1)]


def test_autograd_grads_match_finite_differences():
    X, y, W1, a = balance_drift.problem(np.random.default_rng(0), 3, 4, 20)
    g1, ga = balances_checks.autograd_mse_grads(X, y, W1, a)
    loss = lambda W, aa: 0.5 * np.mean((np.maximum(X @ W.T, 0) @ aa - y) ** 2)
    E = np.zeros_like(W1)
    E[1, 2] = 1e-6
    assert abs((loss(W1 + E, a) - loss(W1 - E, a)) / 2e-6 - g1[1, 2]) < 1e-7
    assert np.allclose(shallow_relu.loss_grad(W1, a, X, y)[2], ga, atol=1e-12)


def test_symmetry_checks_vanish_to_rounding():
    sym, noether, grad = balances_checks.symmetry_checks(NETS, 0, 4, 20)
    assert sym < 1e-12 and noether < 1e-12 and grad < 1e-12
    with pytest.raises(ValueError, match="networks"):
        balances_checks.symmetry_checks([], 0, 4, 20)


def test_flow_drifts_shrink_with_the_step():
    out = balances_checks.flow_drifts(NETS, 0, 4, 20, 0.5, [50, 400])
    assert out.shape == (2,) and out[1] < out[0] and out[1] < 1e-5


def test_optimizer_drifts_and_slopes():
    lrs = [0.04, 0.02, 0.01]
    drifts, ident = balances_checks.optimizer_drifts(NETS, 0, 4, 20, lrs, 1.0, 5)
    assert set(drifts) == {"gd", "sgd", "adam"} and drifts["gd"].shape == (3, 2) and ident < 1e-11
    st = balances_checks.slope_stats(drifts, lrs)
    assert st["gd_lo"] > 0.8 and st["adam_ratio"] > 5 and st["adam_mean"] < 0.8
    assert np.allclose(st["slopes"]["gd"], [np.polyfit(np.log(lrs), np.log(drifts["gd"][:, j]), 1)[0] for j in (0, 1)])
    assert st["text"].count("\n") == 2
    ts, c_wd, err = balances_checks.decay_check(0, 2, 4, 20, 1.0, 400, 0.05)
    assert c_wd.shape == (401, 4) and ts[-1] == 1.0 and err < 1e-5
    fig = balances_drawings.drift_figure(drifts, lrs, ts, c_wd, 0.05, 1.0)
    assert len(fig.axes) == 2 and len(fig.axes[1].lines) == 8  # 4 balances and 4 exponentials
    plt.close(fig)
    with pytest.raises(ValueError, match="drifts"):
        balances_drawings.drift_figure({"gd": drifts["gd"]}, lrs, ts, c_wd, 0.05, 1.0)
