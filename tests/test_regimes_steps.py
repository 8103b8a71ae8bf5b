"""The steps, references and figures of the chapter grq_regimes: regimes_steps, regimes_reference, regimes_drawings."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.richlazy import (  # noqa: E402
    linear_networks,
    linear_regimes,
    regimes_checks,
    regimes_drawings,
    regimes_reference,
    regimes_steps,
)


def test_iso_starts_isotropic_where_possible_refused_elsewhere():
    out = regimes_steps.iso_starts(([6, 3, 2], [2, 3, 6]), [3.0, 10.0], 0.3)
    assert out["iso_err"] < 1e-12
    assert len(out["lam"]) == 4 and out["refused"] == 4 and max(out["lam"]) <= 1e-12  # the two lazy sides
    assert regimes_steps.iso_starts(([2, 2, 2],), [3.0], 0.3)["lam"] == []  # h <= min(d, c): always isotropic


@pytest.fixture(scope="module")
def small_sweep():
    abs_deltas = [3.0, 10.0, 30.0]
    return abs_deltas, regimes_steps.sweep([6, 3, 2], [2, 3, 6], abs_deltas, 2, 0, 0.3, 1e-5, 5000.0)


def test_sweep_counts_and_independent_fit(small_sweep):
    abs_deltas, results = small_sweep
    assert list(results) == list(regimes_steps.CELL_NAMES)
    T, S = regimes_checks.fit_sweep([6, 3, 2], -1, abs_deltas, 2, 0, 0.3, 1e-5, 5000.0)
    assert np.array_equal(results["narrow_rich"]["T"], T) and np.array_equal(results["narrow_rich"]["S"], S)
    table = regimes_steps.sweep_table(results, abs_deltas).splitlines()
    assert len(table) == 1 + 4 * len(abs_deltas) and "narrow_rich" in table[4]
    counts, slopes = regimes_steps.counts_and_slopes(results, abs_deltas, 0.02, 2.0, 0.1)
    assert slopes["narrow_rich"] > 0 > slopes["narrow_lazy"]  # delayed rich slows with |delta|, lazy speeds up
    assert all(0 <= c <= 2 for c in counts.values())
    err_t, err_s = regimes_steps.independent_fits(results, abs_deltas, 0, 0.3, 1e-5, 5000.0)
    assert err_t < 1e-5 and err_s < 1e-5


def test_references_against_the_package():
    rng = np.random.default_rng(3)
    X, A0, W0 = rng.standard_normal((8, 3)), rng.standard_normal((2, 2)), rng.standard_normal((2, 3))
    Y = X @ rng.standard_normal((2, 3)).T
    t = np.linspace(0, 1.0, 5)
    A_ref, W_ref = regimes_reference.raw_flow(A0, W0, X, Y, t, 1e-12)
    A_pkg, W_pkg = linear_networks.gradient_flow(A0, W0, X, Y, t, rtol=1e-12, atol=1e-12)
    assert np.allclose(A_ref, A_pkg, atol=1e-8) and np.allclose(W_ref, W_pkg, atol=1e-8)
    t1, A1, W1 = regimes_reference.raw_fit(A0, W0, X, Y, 1e-3, 1000.0)
    t_pkg, A1p, W1p = linear_regimes.flow_to_fit(A0, W0, X, Y, 1e-3, 1000.0)
    assert abs(t1 - t_pkg) < 1e-5 * t_pkg
    S = regimes_reference.linear_ntk_distance(X, A0, W0, A1, W1)
    assert 0 < S < 1 and regimes_reference.linear_ntk_distance(X, A0, W0, A0, W0) < 1e-14
    with pytest.raises(ValueError, match="control"):
        regimes_reference.nu_c_flow(np.eye(2), np.eye(2), np.eye(2), 1.0, t, 1e-10, control="wrong")
    # the Bernoulli closed form solves c' = 2 c (n + delta - c) with n from the scalar Riccati equation
    c0, n0, s2, dl = np.array([0.7, 1.3]), np.array([0.2, -0.1]), np.array([0.5, 2.0]), 0.8
    tt = np.linspace(0, 2.0, 2001)
    c = regimes_reference.bernoulli_closed(c0, n0, s2, dl, tt)
    n = linear_regimes.scalar_riccati(n0, s2, dl, tt)
    dc = np.gradient(c, tt, axis=0)
    assert np.allclose(c[0], c0)
    assert np.max(np.abs(dc - 2 * c * (n + dl - c))[5:-5]) < 1e-4  # central differences: O(dt^2)


def test_riccati_bernoulli_and_b14_checks():
    P = regimes_steps.whitened_problem(0, 3)
    assert np.allclose(P["X"].T @ P["X"] / 6, np.eye(3)) and np.allclose(P["Y"], P["X"] @ P["b_star"].T)
    t = np.linspace(0.0, 2.0, 5)
    ric = regimes_steps.riccati_flows(P, [[0.8, 0.5, -0.3]], [0.8], t, 0)
    assert len(ric["flows"]) == 2 and max(ric["err_scalar"], ric["err_lin"]) < 1e-7 and ric["comm"] < 1e-12
    along = regimes_steps.bernoulli_along(ric["flows"], P["Qs"], t)
    assert max(along["bern"]) < 1e-7 and min(along["ctrl"].values()) > 1e-3 and len(along["general"]) == 1
    shared = regimes_steps.bernoulli_shared(P, [[0.8, 0.5, -0.3]], t, 0)
    assert max(shared["cf"]) < 1e-7 and max(shared["start"]) < 1e-12
    b14 = regimes_steps.b14_check([[0.7, 1.5, -2.0]], 1.0, 1.0, 3.0, 0)
    assert b14["err"] < 1e-7 and b14["err_M"] < 1e-9 and len(b14["runs"]) == 1
    for fig in (regimes_drawings.riccati_figure(ric, P, t, 2.0),
                regimes_drawings.bernoulli_figure(shared, along, P["Qs"], t, 2.0),
                regimes_drawings.b14_figure(b14, 1.0, 1.0, 3.0)):
        assert fig.axes and fig.axes[0].get_legend() is not None
        plt.close(fig)
    with pytest.raises(ValueError, match="horizon"):
        regimes_steps.b14_check([[0.7, 1.5, -2.0]], 1.0, 1.0, 0.0, 0)


def test_sweep_figures(small_sweep):
    abs_deltas, results = small_sweep
    fig = regimes_drawings.sweep_figure(results, abs_deltas)
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 4 * 3  # 2 draws and a median per cell
    plt.close(fig)
    fig = regimes_drawings.plateau_figure([6, 3, 2], 50.0, abs_deltas, 0, 0.3, 1e-5)
    assert len(fig.axes[0].lines) == len(abs_deltas) + 1
    plt.close(fig)
