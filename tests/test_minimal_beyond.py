"""The steps, references and figures of the chapter grq_exact_dynamics (minimal_beyond, minimal_beyond_drawings and
the references of minimal_reference it uses)."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.richlazy import (  # noqa: E402
    minimal_beyond,
    minimal_beyond_drawings,
    minimal_crossing,
    minimal_exact,
    minimal_reference,
)

RANGES = dict(delta_range=(-4.0, -1.0), sv_range=(0.6, 1.4), beta_norm_range=(0.5, 1.5))


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    draws = minimal_crossing.draw_family(rng, 1, 2, 4, 2, minimal_reference.crossing_flow, 1500.0, 1e-7, **RANGES)
    draws += minimal_crossing.draw_family(rng, 1, 3, 3, 1, minimal_reference.crossing_flow, 1500.0, 1e-7, family=1,
                                          **RANGES)
    return [minimal_crossing.predict(r) for r in draws]


def test_crossing_flow_counts_the_zero_crossings_of_a():
    # one sample, x = (0.5, 1), y = 1.1: from -beta0 downstream a crosses (App. A.4.4's remark), upstream it cannot
    x, y = np.array([0.5, 1.0]), 1.1
    a0, W0 = np.array([0.3, 2.0]), np.array([[-0.9, -0.2], [-0.1, -0.05]])
    sol, a, W, n = minimal_reference.crossing_flow(a0, W0, np.array([np.outer(x, x)] * 2), np.array([y * x] * 2), 50.0,
                                                   n_eval=501, dense=True)
    assert list(n) == [int(np.any(np.sign(a[i]) != np.sign(a0[i]))) for i in range(2)] and n[1] == 0
    assert np.abs(sol.sol(50.0)[:2] - a[:, -1]).max() < 1e-9
    assert minimal_reference.crossing_flow(a0, W0, np.array([np.eye(2)] * 2), np.zeros((2, 2)), 1.0)[0] is None


def test_a44_closed_form_is_argmin_psi_and_azulay_q_is_q_delta():
    x, y, b0 = np.array([0.5, 1.0]), 1.1, np.array([0.4, 0.05])
    for delta in (-2.0, 0.0, 2.0):
        form = minimal_reference.a44_closed_form(x, y, b0, delta)
        assert np.abs(form - minimal_exact.implicit_bias_limit(x[None, :], np.array([y]), b0, delta)).max() < 1e-10
    with pytest.raises(ValueError, match="nonzero"):
        minimal_reference.a44_closed_form(x, y, np.zeros(2), 1.0)
    xs = np.geomspace(1e-2, 10, 50)
    for delta in (-1.0, 0.0, 3.0):
        assert np.allclose(minimal_reference.q_azulay(xs, delta),
                           minimal_exact.q_delta(xs, delta) - 0.5 * max(delta, 0.0) ** 1.5, rtol=1e-11, atol=1e-12)
    assert minimal_beyond.azulay_constant_error([0.0, 2.0, -1.0]) < 1e-12


def test_azulay_argmin_and_its_error_step():
    rng = np.random.default_rng(1)
    X, y, bls, N = minimal_crossing.random_problem(rng, 1, 3)
    b0 = np.array([0.3, -0.5, 0.6])
    arg = minimal_reference.azulay_argmin(bls, N, b0, 1.0)
    assert np.abs(arg - minimal_exact.implicit_bias_limit(X, y, b0, 1.0)).max() < 1e-5
    err, crossed = minimal_beyond.azulay_argmin_error(rng, [0.0, 2.0], 1500.0)
    assert err < 1e-5 and not crossed


def test_fd_M_derivative_is_fourth_order():
    def path(t):  # a(t) = cos t, w(t) = (sin t, t): M = a^2 I + w w^T
        t = np.asarray(t, float)
        return np.array([np.cos(t), np.sin(t), t])

    t = np.array([0.3, 1.1])
    fd = minimal_reference.fd_M_derivative(path, t, 1e-3)
    a, da = np.cos(t), -np.sin(t)
    w, dw = np.array([np.sin(t), t]), np.array([np.cos(t), np.ones_like(t)])
    exact = (2 * a * da)[:, None, None] * np.eye(2) + np.einsum("it,jt->tij", dw, w) + np.einsum("it,jt->tij", w, dw)
    assert np.abs(fd - exact).max() < 1e-10
    with pytest.raises(ValueError, match="h"):
        minimal_reference.fd_M_derivative(path, t, 0.0)


def test_counts_basin_rule_and_limits(rows):
    cc = minimal_beyond.crossing_counts(rows)
    assert cc["null_drift"] < 1e-8 and cc["max_crossings"] <= 1 and cc["energy"] == 3 and cc["energy_crossings"] == 0
    assert cc["prone"] == 7 and cc["cross"] == cc["prone"] - cc["prone_nocross"]
    assert cc["nocross_R"] <= cc["prone_nocross"]
    agree, n, n_cross = minimal_beyond.basin_rule(rows)
    assert agree == n == len(rows) and n_cross == cc["cross"]  # one sample: the rule is exact
    lim = minimal_beyond.limit_summary(rows, 1e-6, 0.05)
    assert lim["confirmed"] == lim["cross_settled"] and lim["miss_law_err"] < 1e-6 and lim["thm_err"] < 1e-6
    assert lim["closed_err"] < 1e-6 and lim["fl_err"] < 1e-6 and lim["sign_agree"] == len(rows)
    assert sum(lim["routes"].values()) == len(rows) and lim["misses"].size == lim["cross"]
    table = minimal_beyond.family_table(rows, [(1, 2), (1, 3)]).splitlines()
    assert len(table) == 3 and table[1].split()[:2] == ["1", "x"]
    white = minimal_crossing.draw_family(np.random.default_rng(2), 2, 3, 2, 0, minimal_reference.crossing_flow,
                                         1500.0, 1e-7, whitened=True, **RANGES)
    assert minimal_beyond.whitened_error(white) < 1e-10 and minimal_beyond.whitened_error([]) == 0.0
    general = minimal_crossing.draw_family(np.random.default_rng(4), 2, 3, 1, 0, minimal_reference.crossing_flow,
                                           1500.0, 1e-7, **RANGES)
    assert minimal_beyond.whitened_error(general) > 1e-3  # two distinct eigenvalues: not a multiple of P_R


def test_fig4_mirror_kernel_and_fig8(rows):
    fig4 = minimal_beyond.fig4_mirror([0.5, 1.0], 1.1, [-0.4, -0.05], [-4.0, -0.5], 1500.0)
    assert list(fig4["cross"]) == [1, 0] and fig4["flip_err"] < 1e-6 and fig4["a44_vs_psi"] < 1e-10
    assert len(fig4["misses"]) == 1 and fig4["misses"][0] > 0.05 and len(fig4["table"].splitlines()) == 3
    X, y, C, c, b0 = minimal_crossing.kernel_problem(np.random.default_rng(3))
    kern = minimal_beyond.kernel_dynamics(C, c, b0, [-8.0, 0.0, 8.0], 20.0, 4e-4, n_fd=(4, 6), n_t=801)
    assert kern["err"] < 1e-6 and kern["n_fd"] == 10
    assert kern["changes"][8.0] < 0.1 and kern["ratios"][-8.0] > 10 and 0.1 < kern["ratios"][0.0] < 10
    fig8 = minimal_beyond.fig8_runs([0.5, 0.5], [1.5, 0.25], [-2.0, 0.0, 2.0], 10.0)
    assert fig8["err"] < 1e-7 and fig8["crossings"] >= 1 and len(fig8["runs"]) == 6
    assert len(minimal_beyond_drawings.draw_mirror(fig4, [0.5, 1.0], 1.1, [-0.4, -0.05], [-4.0, -0.5], rows).axes) == 2
    assert len(minimal_beyond_drawings.draw_mdot_terms(kern).axes) == 3
    fig = minimal_beyond_drawings.draw_fig8(fig8, [1.5, 0.25], [-2.0, 0.0, 2.0], [0.5, 0.5])
    assert fig.axes[0].get_title() == "$a(t)$" and len(fig.axes) == 6
    with pytest.raises(ValueError, match="beta_star"):
        minimal_beyond.fig8_runs([0.0, 0.0], [0.25], [0.0], 1.0)
    with pytest.raises(ValueError, match="limit_tol"):
        minimal_beyond.limit_summary(rows, 0.0, 0.05)
    with pytest.raises(ValueError, match="fd_step"):
        minimal_beyond.kernel_dynamics(C, c, b0, [0.0], 20.0, 0.0)
    plt.close("all")
