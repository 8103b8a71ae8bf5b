"""The steps, references and figures of the chapter grq_minimal_model (minimal_steps, minimal_bias,
minimal_reference, minimal_drawings)."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.richlazy import (  # noqa: E402
    minimal_bias,
    minimal_drawings,
    minimal_exact,
    minimal_model,
    minimal_reference,
    minimal_regimes,
    minimal_steps,
)

BSTAR = np.array([0.0, 1.0])
X_W, Y_W = minimal_regimes.whitened_data(np.random.default_rng(0), 4, BSTAR)
T = np.linspace(0.0, 10.0, 101)


def test_neuron_flows_matches_single_neuron_flow_and_counts_crossings():
    a0, W0 = np.array([0.8, 0.3]), np.array([[-0.9, 0.1], [0.4, 0.5]])
    a, W, n_cross = minimal_reference.neuron_flows(a0, W0, np.eye(2), BSTAR, 10.0, 101, rtol=1e-11,
                                                   count_crossings=True)
    for i in range(2):
        a_ref, w_ref = minimal_model.single_neuron_flow(a0[i], W0[i], X_W, Y_W, T)
        assert np.abs(a[i] - a_ref).max() < 1e-7 and np.abs(W[i].T - w_ref).max() < 1e-7
    # per-neuron C and c give the same flows; crossings agree with the basin rule (sign c1 != sign a0)
    a2, _ = minimal_reference.neuron_flows(a0, W0, np.array([np.eye(2)] * 2), np.array([BSTAR] * 2), 10.0, 101,
                                           rtol=1e-11)
    assert np.abs(a2 - a).max() < 1e-9
    predicted = np.sign(minimal_exact.basin_margin(a0, W0, BSTAR)) != np.sign(a0)
    assert list(n_cross > 0) == list(predicted)
    with pytest.raises(ValueError, match="C must be"):
        minimal_reference.neuron_flows(a0, W0, np.eye(3), BSTAR, 1.0)
    with pytest.raises(ValueError, match="W0"):
        minimal_reference.neuron_flows(a0, W0[:1], np.eye(2), BSTAR, 1.0)


def test_torch_rk4_conserves_delta_and_matches_the_flow():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(5, 3)), rng.normal(size=5)
    a0, W0 = np.array([0.7]), np.array([[0.2, -0.4, 0.3]])
    drift, end = minimal_reference.torch_rk4_delta_drift(X, y, a0, W0, 2.0, 0.005, eta_a=0.5, eta_w=2.0)
    a_f, w_f = minimal_model.single_neuron_flow(a0[0], W0[0], X, y, np.linspace(0, 2.0, 11), eta_a=0.5, eta_w=2.0)
    assert drift < 1e-8
    assert np.abs(end[0] - np.concatenate(([a_f[-1]], w_f[-1]))).max() < 1e-7
    with pytest.raises(ValueError, match="X must be"):
        minimal_reference.torch_rk4_delta_drift(X[:, :2], y, a0, W0, 1.0, 0.01)


def test_autograd_references_agree_with_the_closed_forms():
    a, w = 0.7, np.array([0.3, -0.5])
    dmu, dphi = minimal_reference.reduced_field_autograd(X_W, Y_W, BSTAR, a, w)
    mu, phi = minimal_regimes.mu_phi(a, w, BSTAR)
    ref = minimal_model.reduced_vector_field(mu, phi, minimal_model.conserved_delta(a, w), 1.0)
    assert abs(dmu - ref[0]) < 1e-12 and abs(dphi - ref[1]) < 1e-12
    JJ, beta_dot = minimal_reference.function_space_autograd(X_W, Y_W, a, w)
    M = minimal_model.function_space_M(a * w, minimal_model.conserved_delta(a, w))
    assert np.abs(JJ - M).max() < 1e-12
    assert np.abs(beta_dot + M @ (X_W.T @ (X_W @ (a * w) - Y_W) / 4)).max() < 1e-12


def test_psi_null_root_and_threshold_reference():
    x, y, b0 = np.array([0.5, 1.0]), 1.1, np.array([0.4, 0.05])
    for delta in (-2.0, 0.0, 3.0):
        lim = minimal_exact.implicit_bias_limit(x[None, :], np.array([y]), b0, delta)
        assert np.abs(minimal_reference.psi_null_root(x, y, b0, delta) - lim).max() < 1e-10
        assert x @ minimal_reference.psi_null_root(x, y, b0, delta) == pytest.approx(y)
    with pytest.raises(ValueError, match="nonzero"):
        minimal_reference.psi_null_root(np.zeros(2), y, b0, 1.0)
    assert minimal_reference.crossing_cosine_reference(0.0) == pytest.approx(-1.0)
    for delta in (-4.0, -1.0, 2.0):
        assert minimal_reference.crossing_cosine_reference(delta, 0.8, 1.25) == pytest.approx(
            minimal_exact.crossing_cosine(delta, 0.8, 1.25))


def test_drift_sheets_reduced_and_exact_steps():
    rng = np.random.default_rng(2)
    d = minimal_steps.delta_drift(rng, 3, T)
    assert d["drift"] < 1e-9 and d["X"].shape == (6, 3) and d["end"].shape == (3, 4)
    assert np.linalg.eigvalsh(d["X"].T @ d["X"] / 6).max() == pytest.approx(1.0)
    runs, worst = minimal_steps.sheet_runs([-1.0, 0.0], [2.0, 0.0, -2.0], X_W, Y_W, T)
    assert set(runs) == {2.0, 0.0, -2.0} and worst < 1e-9
    assert minimal_steps.reduced_field_error(rng, X_W, Y_W, BSTAR, 5.0, n=10) < 1e-11
    inits = [minimal_regimes.random_whitened_init(rng, BSTAR, 5.0) for _ in range(3)]
    assert minimal_steps.reduced_system_error(inits, X_W, Y_W, BSTAR, T) < 1e-6
    err, crossings, au = minimal_steps.random_exact_error(inits, BSTAR, T)
    assert err < 1e-6 and au <= 1 and 0 <= crossings <= 3
    assert minimal_steps.tanh_law_error(1.0, T) < 1e-12
    runs, (a_ind, _), err, drift, table = minimal_steps.paper_runs([-1.0, 0.0], [-2.0, 0.0, 2.0], X_W, Y_W, BSTAR, T)
    assert err < 1e-6 and drift < 1e-9 and a_ind.shape == (3, T.size) and len(table.splitlines()) == 4
    S_err, S_th, S_fl, beta_th = minimal_steps.kernel_curves(runs, X_W, BSTAR, T)
    assert S_err < 1e-6 and S_th[0.0][0] == pytest.approx(0.0, abs=1e-12) and beta_th[0.0].shape == (T.size, 2)
    text = minimal_steps.regime_table([-2.0, 0.0, 2.0], S_fl, {d: 0.1 for d in runs}, {-2.0: 3.0},
                                      {d: 0.5 for d in runs}, [True, False, False], 1.0, 1.0)
    assert len(text.splitlines()) == 4 and "< -1" in text.splitlines()[3] and "yes" in text.splitlines()[1]
    with pytest.raises(ValueError, match="beta_star"):
        minimal_steps.kernel_curves(runs, X_W, [0, 0], T)


def test_basins_and_the_separating_surface():
    basin = minimal_steps.basin_flows(np.random.default_rng(3), BSTAR, 2.0, 20, 4, 0.5, 4, 30.0)
    assert basin["a"].shape == (20 + 16 + 4, 601)
    ag = minimal_steps.basin_agreement(basin, 0.05)
    for k, n, _ in ag["rows"].values():
        assert k == n > 0
    assert ag["changed"] == ag["predicted"] and ag["max_cross"] <= 1 and ag["n_sheet_kept"] == ag["n_up"]
    surf = minimal_steps.surface_to_saddle([-1.0, 0.0], BSTAR, 8.0)
    assert surf["residual"] < 1e-10 and surf["excess"] < 1e-3 and np.all(surf["predicted"] > 0)
    sc = minimal_steps.scan_crossings(np.linspace(-0.6, 0.6, 3), [-1.0, 0.0], BSTAR, [-4.0, -1.0, 0.0, 2.0], 20.0)
    assert sc["flows"] == 6 and sc["agree"] == sc["kept"] and sc["crossed"] >= 1
    with pytest.raises(ValueError, match="surface_deltas"):
        minimal_steps.surface_to_saddle([0.5], BSTAR, 8.0)
    with pytest.raises(ValueError, match="margin_min"):
        minimal_steps.basin_agreement(basin, -1.0)
    with pytest.raises(ValueError, match="box"):
        minimal_steps.basin_flows(np.random.default_rng(3), BSTAR, 0.0, 2, 2, 0.5, 2, 30.0)


def test_explorer_branches_counts_frames_against_the_threshold():
    results = [dict(delta=-2.0, cos=0.5, branch="a > 0", crossed=False),
               dict(delta=-2.0, cos=-0.9, branch="a < 0", crossed=True),
               dict(delta=1.0, cos=-0.9, branch="a > 0", crossed=False)]
    br = minimal_steps.explorer_branches(results, [-2.0, 1.0])
    assert br["on_branch"] == 3 and br["crossed"] == 1 and br["both_sides"]
    results[1]["branch"] = "a > 0"
    assert minimal_steps.explorer_branches(results, [-2.0, 1.0])["on_branch"] == 2
    assert not minimal_steps.explorer_branches(results[:1], [-2.0])["both_sides"]


def test_function_space_steps():
    rng = np.random.default_rng(4)
    M_err, flow_err = minimal_bias.function_space_error(rng, X_W, Y_W, n=5)
    assert M_err < 1e-12 and flow_err < 1e-12
    up, down = minimal_bias.lazy_limit_slopes(np.array([0.6, -0.8]), 10.0 ** np.arange(1, 7))
    assert up == pytest.approx(-2, abs=0.05) and down == pytest.approx(-2, abs=0.05)
    with pytest.raises(ValueError, match="unit"):
        minimal_bias.lazy_limit_slopes(np.array([1.0, 1.0]), [10.0])
    assert minimal_bias.hessian_identity_error(rng, n=3) < 1e-6


def test_lowrank_limits_and_asymptotes():
    x, y, b0 = [0.5, 1.0], 1.1, [0.4, 0.05]
    lr = minimal_bias.lowrank_limits(x, y, b0, [-2.0, 2.0], 300.0)
    assert lr["bias_err"] < 1e-7 and lr["root_err"] < 1e-10 and lr["converged"] < 1e-8
    assert len(lr["table"].splitlines()) == 3
    asym = minimal_bias.asymptotes(x, y, b0, 1e6, 1e-10, 21)
    assert asym["ok"] and asym["monotone"] and asym["sweep"].size == 21
    assert np.asarray(x) @ asym["near"] == pytest.approx(y) and np.asarray(x) @ asym["along"] == pytest.approx(y)
    with pytest.raises(ValueError, match="extreme_delta"):
        minimal_bias.asymptotes(x, y, b0, -1.0, 1e-10, 21)


def test_drawings_return_the_figures():
    runs, _ = minimal_steps.sheet_runs([-1.0, 0.0], [2.0, 0.0, -2.0], X_W, Y_W, T)
    assert len(minimal_drawings.draw_sheets(runs, BSTAR, 4.0).axes) == 3
    basin = minimal_steps.basin_flows(np.random.default_rng(5), BSTAR, 2.0, 6, 4, 0.5, 4, 30.0)
    surf = minimal_steps.surface_to_saddle([-1.0], BSTAR, 8.0)
    assert len(minimal_drawings.draw_separating_surface(basin, surf, BSTAR).axes) == 1
    assert len(minimal_drawings.draw_basin_planes(basin, BSTAR, 0.5, 0.05).axes) == 2
    pr, *_ = minimal_steps.paper_runs([-1.0, 0.0], [-2.0, 2.0], X_W, Y_W, BSTAR, T)
    _, S_th, S_fl, beta_th = minimal_steps.kernel_curves(pr, X_W, BSTAR, T)
    fig = minimal_drawings.draw_fig3(T, pr, S_fl, S_th, 4.0)
    assert len(fig.axes) == 3 and len(fig.axes[0].lines) == 4
    lr = minimal_bias.lowrank_limits([0.5, 1.0], 1.1, [0.4, 0.05], [-2.0, 2.0], 50.0)
    asym = minimal_bias.asymptotes([0.5, 1.0], 1.1, [0.4, 0.05], 1e6, 1e-10, 11)
    assert len(minimal_drawings.draw_fig4(pr, beta_th, BSTAR, [-1.0, 0.0], lr, asym, [0.4, 0.05], 4.0).axes) == 2
    assert len(minimal_drawings.draw_fig4_sweep(asym, lr, 4.0).axes[0].collections) == 2
    with pytest.raises(ValueError, match="beta_star"):
        minimal_drawings.draw_sheets(runs, [0.0, 0.0], 4.0)
    plt.close("all")
