"""energy_reference, energy_checks, energy_basins, energy_small, energy_bias and energy_drawings (the chapter
gradient_flow_energy's steps), on small grids and short horizons."""
import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from markovlib.markov import drawings as markov_drawings  # noqa: E402
from markovlib.markov import (  # noqa: E402
    energy_basins,
    energy_bias,
    energy_checks,
    energy_drawings,
    energy_reference,
    energy_small,
)
from markovlib.markov.energy import SADDLE_ENERGY, energy  # noqa: E402


def test_reference_formulas_agree_with_the_package_and_each_other():
    rng = np.random.default_rng(0)
    e, w = rng.uniform(-2, 2, (2, 200))
    assert np.allclose(energy_reference.energy_formula(e, w), energy(e, w), rtol=1e-14, atol=1e-14)
    assert energy_reference.E_SAD == pytest.approx(SADDLE_ENERGY, abs=1e-15)
    gE, gc = energy_reference.energy_gradient(e, w), energy_reference.coefficient_gradient(e, w)
    assert np.abs((gE * gc).sum(0)).max() < 1e-12 * np.abs(gE * gc).sum(0).max()
    h = 1e-6  # grad E by central differences of the formula
    fd = (energy_reference.energy_formula(e, w + h) - energy_reference.energy_formula(e, w - h)) / (2 * h)
    assert np.max(np.abs(fd - gE[1]) / (1 + np.abs(gE[1]))) < 1e-4
    with pytest.raises(ValueError, match="w must be nonzero"):
        energy_reference.energy_formula(1.0, 0.0)


def test_theorem_rule_reads_thms_2_and_8():
    # p + q > 1: w0 > 0 local; w0 < -1/sqrt2 global; -1/sqrt2 < w0 < 0 local iff E0 < E_sad
    out = energy_reference.theorem_rule(np.array([0.5, 0.5, 0.1, 2.0]), np.array([0.3, -1.5, -0.5, -0.5]), 0.9, 0.9)
    assert out.tolist() == ["local_min", "global_min", "local_min", "global_min"]
    # p + q < 1: local iff w0 < -1/sqrt2 and E0 < E_sad
    out = energy_reference.theorem_rule(np.array([0.1, 3.0, 0.5]), np.array([-1.5, -1.5, 0.3]), 0.1, 0.1)
    assert out.tolist() == ["local_min", "global_min", "global_min"]
    with pytest.raises(ValueError, match="p \\+ q must differ from 1"):
        energy_reference.theorem_rule(1.0, 1.0, 0.4, 0.6)


def test_p_local_exact_matches_monte_carlo_of_the_rule_and_its_limits():
    rng = np.random.default_rng(1)
    sigma = 0.6
    e0, w0 = rng.normal(0, sigma, (2, 200_000))
    for above, pq in ((True, (0.9, 0.9)), (False, (0.1, 0.1))):
        mc = np.mean(energy_reference.theorem_rule(e0, w0, *pq) == "local_min")
        assert energy_reference.p_local_exact(sigma, above) == pytest.approx(mc, abs=0.005)
    lim = energy_small.sigma_limits(0.05)
    assert lim.ok and lim.small[0] > 0.99 and lim.big[1] == pytest.approx(0.25, abs=0.01)
    assert not energy_small.sigma_limits(0.5).ok
    with pytest.raises(ValueError, match="sigma"):
        energy_reference.p_local_exact(0.0, True)


def test_energy_balance_and_frobenius_references():
    rng = np.random.default_rng(2)
    x = np.column_stack([rng.uniform(-1.5, 1.5, (30, 2)), rng.uniform(-2, 2, 30)])
    assert energy_reference.energy_balance_error(x, 0.9, 0.9) < 1e-10
    err, nonzero = energy_reference.frobenius_error(x)
    assert err < 1e-10 and nonzero
    assert not energy_reference.frobenius_error(np.array([[0.0, 0.5, 0.0], [1.0, 0.5, 0.0]]))[1]  # e = 0: zero
    with pytest.raises(ValueError, match="rows"):
        energy_reference.energy_balance_error(x[:, :2], 0.9, 0.9)


def test_energy_checks_on_small_runs():
    rng = np.random.default_rng(3)
    ident = energy_checks.gradient_identity(rng, n=40)
    assert ident.ortho < 1e-10 and ident.fd_err < 1e-3 and "40 random points" in ident.text
    indep = energy_checks.independent_flows([(0.9, 0.9)], 1, 200.0, rng)
    assert indep.n == 1 and indep.err < 1e-6 and indep.drift < 1e-6
    cons = energy_checks.conservation([(0.9, 0.9), (0.1, 0.1)], 2, 200.0, rng)
    assert cons.ok and cons.n == 4 and cons.kept == 4 and cons.axis_w == 0 and cons.drift < 1e-6
    lem12 = energy_checks.axis_energy(n=40001)
    assert all(lem12.checks.values()) and lem12.n_sols == [2, 2, 2, 0, 0]
    assert lem12.w_at_max == pytest.approx(-1 / math.sqrt(2), abs=1e-3)
    with pytest.raises(ValueError, match="pq"):
        energy_checks.conservation([(1.5, 0.5)], 1, 200.0, rng)
    with pytest.raises(ValueError, match="n_traj"):
        energy_checks.conservation([(0.9, 0.9)], 0, 200.0, rng)


def test_basins_arms_region_and_guideline():
    maps = energy_basins.basin_maps([(0.9, 0.9), (0.1, 0.1)], 6, 2.0, 200.0, 1e4, 0.5)
    assert maps.n_total == 72 and maps.n_rule_pred == 0 and maps.ok_limits
    assert maps.band == pytest.approx(1e4 / 200.0 ** 2)
    res, pred, rule = maps.basins[(0.9, 0.9)]
    assert res.outcome.shape == (6, 6) and (rule == pred.outcome).all()
    arms = energy_basins.separatrix_arms([(0.9, 0.9)], 4000.0)
    assert arms.ok and arms.ok_arms and arms.n_arms == 4 and arms.n_flows == 10 and arms.law_dev < 0.02
    good = energy_basins.good_region([(0.9, 0.9), (0.1, 0.1)], 15, 200.0, np.random.default_rng(4))
    assert good.k_good == good.n == 30 and good.drift < 1e-6
    guide = energy_basins.guideline_points([(0.9, 0.9), (0.1, 0.1)], 200.0)
    assert guide.n_as_stated == guide.n_cases == 4
    assert "local_min/local_min" in guide.text  # (-2 sqrt2, -16) is bad for p + q < 1
    with pytest.raises(ValueError, match="max_disagree"):
        energy_basins.basin_maps([(0.9, 0.9)], 4, 2.0, 200.0, 1e4, 1.5)


def test_small_init_gd_drift_and_iid():
    sm = energy_small.small_init([0.05, 1.0], [(0.9, 0.9), (0.1, 0.1)], 60, 2000, 0.01, 200.0,
                                 np.random.default_rng(5))
    assert sm.n_cells == 4 and sm.n_tests == 8 and sm.inside == 4 and sm.crit_inside == 4
    assert sm.small[(0.9, 0.9)] >= 57 and sm.small[(0.1, 0.1)] >= 57  # sigma -> 0: local / global
    assert sm.agree_min[0] >= 57
    gd = energy_small.gd_drift((0.9, 0.9), (0.8, -0.5), 10.0, [0.1, 0.05, 0.025], 0.1, 0.1)
    assert abs(gd.slope - 1) < 0.1 and abs(gd.ratio_last - 1) < 0.1 and gd.K1 != 0
    with pytest.raises(ValueError, match="lrs"):
        energy_small.gd_drift((0.9, 0.9), (0.8, -0.5), 10.0, [0.1], 0.1, 0.1)
    iid = energy_small.iid_flow((0.4, 0.6), (1.0, 0.5), 4000.0)
    assert iid.ok and abs(iid.ratio - 1) < 0.01
    with pytest.raises(ValueError, match="p \\+ q = 1"):
        energy_small.iid_flow((0.4, 0.5), (1.0, 0.5), 4000.0)


def test_free_bias_grids_and_extra_step():
    fb = energy_bias.free_bias_grids([(0.9, 0.9)], 4, 2.0, 200.0, 1e-3, n_times=40)
    assert fb.worst_bal < 1e-3 and fb.n_cross == fb.n_dis and fb.n_flows == 32 and fb.n_times == 41
    assert 0 <= fb.lowest[0] <= 1 and set(k[2] for k in fb.free) == {"b*", "0"}
    xb = energy_bias.extra_bias_step([(0.9, 0.9)], 2, 1.0, 2.0, [0.02, 0.01], 1.7, 10.0)
    assert xb.ok and xb.orders[0] >= 1.7 and xb.min_ratio >= 10
    with pytest.raises(ValueError, match="lrs"):
        energy_bias.extra_bias_step([(0.9, 0.9)], 2, 1.0, 2.0, [0.02], 1.7, 10.0)


def test_drawings_return_figures(monkeypatch):
    maps = energy_basins.basin_maps([(0.9, 0.9), (0.1, 0.1)], 4, 2.0, 200.0, 1e4, 0.5)
    fig = energy_drawings.fig1([(0.9, 0.9), (0.1, 0.1)], maps.grid, maps.basins, 2.0)
    assert len(fig.axes) >= 4 and "Fig. 1" in fig._suptitle.get_text()
    with pytest.raises(ValueError, match="outcome must have shape"):
        energy_drawings.basin_panel(fig.axes[0], maps.grid, np.array(["global_min"]), 2.0)
    with pytest.raises(ValueError, match="one shape"):
        energy_drawings.loglog_figure([1, 2], [1, 2, 3], [1, 2], labels=("a", "b"), xlabel="x", ylabel="y", title="t")
    fig, outs, text = energy_drawings.energy_panels([(0.9, 0.9), (0.1, 0.1)], (0.5, -0.3))
    assert len(outs) == 2 and len(text.splitlines()) == 2 and all(o["predicted"] == o["reached"] for o in outs)
    monkeypatch.setattr(energy_drawings, "STATIC_GRID", {"p": [0.9], "q": [0.9], "e0": [0.75], "w0": [-0.75]})
    static, agree, n = energy_drawings.flow_explorer(markov_drawings.draw_energy, "test_flow", "t")
    assert (agree, n) == (1, 1)
