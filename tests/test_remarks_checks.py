"""markovlib.topology.bias_checks, width_checks, outputs_checks and remarks_drawings (the chapter
topo_beyond_remarks: App. E, F and G of Nurisso et al.), and components.enumerate_effective."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.topology import (  # noqa: E402
    bias_checks,
    components,
    invariant_set,
    outputs_checks,
    remarks_drawings,
    width_checks,
)


def test_autograd_balance_holds_with_the_bias_and_not_without():
    ident, scale, grad = bias_checks.autograd_balance(np.random.default_rng(0), trials=3)
    assert ident < 1e-12 and grad < 1e-12 and scale > 1e-3


def test_teacher_problem_shapes_and_draws_in_order():
    init, X, Y = bias_checks.teacher_problem(np.random.default_rng(1))
    assert [a.shape for a in init] == [(3, 2), (3,), (1, 3), (1,)] and X.shape == (200, 2) and Y.shape == (200, 1)
    assert np.allclose(Y[:, 0], np.maximum(X @ [1.0, -0.5] + 0.5, 0) - np.maximum(X @ [-0.3, 1.0] - 0.5, 0) - 0.2)
    with pytest.raises(ValueError, match="rng"):
        bias_checks.teacher_problem(1)


def test_sampled_topology_finds_the_circle_and_the_two_sheets():
    out = bias_checks.sampled_topology([[1, 1, "+"], [1, 1, "-"]], np.random.default_rng(0), c_abs=1.0, trunc=0.1,
                                       n_landmarks=150, raw_factor=5, persist_min=0.6, max_edge=1.2, graph_radius=0.5)
    assert [r[4] for r in out["rows"]] == [[1, 1, 0], [2, 0, 0]]  # S^1 x R and R^2 x S^0 (Prop. 5)
    assert [r[6] for r in out["rows"]] == [2, 2]  # without the bias both have two pieces (d = e = 1)
    assert out["ph_ok"] and out["graph_ok"] and out["nobias_ok"] and out["max_res"] < 1e-9
    assert out["ph_equal"] == out["graph_with"] == out["graph_without"] == 2
    table = bias_checks.topology_table(out["rows"])
    assert table.splitlines()[0].split()[:3] == ["d", "e", "c"] and len(table.splitlines()) == 3
    with pytest.raises(ValueError, match="c_abs"):
        bias_checks.sampled_topology([[1, 1, "+"]], np.random.default_rng(0), c_abs=0.0, trunc=0.1, n_landmarks=10,
                                     raw_factor=2, persist_min=0.6, max_edge=1.2, graph_radius=0.5)


def test_closed_forms_and_student_t_are_app_f():
    ls = width_checks.widths(200, 10**5)
    assert ls[0] == 1 and ls[-1] == 10**5 and np.all(np.diff(ls) > 0)
    for (scheme, d), cf in width_checks.closed_forms(ls).items():
        assert np.abs(cf - invariant_set.obstruction_probability(d, ls.astype(int), scheme)).max() < 1e-12
    for scheme in ("kaiming", "xavier"):
        P = invariant_set.obstruction_probability(4, np.arange(1, 50), scheme)
        assert np.abs(width_checks.student_t_probability(4, np.arange(1.0, 50.0), scheme) - P).max() < 1e-12
    assert width_checks.student_t_probability(1, 1, "xavier") == pytest.approx(0.5)
    with pytest.raises(ValueError, match="scheme"):
        width_checks.student_t_probability(3, 5, "he")


def test_limits_hold_at_large_width():
    ls = width_checks.widths(200, 10**5)
    K = width_checks.kaiming_limits(ls, 10**5)
    assert K["k1_ok"] and K["kd_ok"] and abs(K["k1_ratio"] - 1) < 1e-2
    assert abs(K["k2_scaled"] - np.exp(-1)) < 2e-5 and [r[0] for r in K["kd_rows"]] == [3, 4, 5, 10]
    X = width_checks.xavier_limits(12, ls, 10**5, 200)
    assert X["bound_ok"] and X["half_ok"] and X["x10_ok"] and X["x10_rising"] and X["inf"].min() > 0.5
    assert X["x10"].shape == (200,) and X["half"][1] == (2, pytest.approx(0.75))  # p_inf = 1/2 at d = 1


def test_width_map_shapes():
    falls = width_checks.width_map(12, 1000)
    assert len(falls) == 24 and falls["kaiming", 1].shape == (1000,)
    assert not falls["kaiming", 1].any() and falls["kaiming", 12].all()  # rises at d = 1, falls at d = 12
    S = width_checks.map_shapes(falls)
    assert S["shapes_ok"] and S["k_rise"] == [1, 2] and S["x_window"] == [12] and S["n_cells"] == 12000
    assert S["k_frac"] == sum(int(falls["kaiming", d].sum()) for d in range(1, 13))
    with pytest.raises(ValueError, match="falls"):
        width_checks.map_shapes({("kaiming", 1): falls["kaiming", 1]})


def test_monte_carlo_brackets_the_formula_and_decides_directions():
    mc = width_checks.monte_carlo([("xavier", 1, 1), ("xavier", 1, 8)], 4000, 3.0, np.random.default_rng(2))
    k1, lo1, hi1, P1 = mc["xavier", 1, 1]
    assert P1 == pytest.approx(0.5) and lo1 <= 0.5 <= hi1 and 1500 < k1 < 2500
    assert mc["xavier", 1, 8][1] <= 1 - 2.0**-8 <= mc["xavier", 1, 8][2]
    assert width_checks.mc_directions(mc) == [("xavier", 1, 1, 8, "rises", "rises")]
    fake = {("kaiming", 3, 1): (0, 0.4, 0.5, 0.45), ("kaiming", 3, 9): (0, 0.45, 0.6, 0.5),
            ("kaiming", 3, 99): (0, 0.1, 0.2, 0.15)}
    assert [p[4:] for p in width_checks.mc_directions(fake)] == [("undecided", "rises"), ("falls", "falls")]
    with pytest.raises(ValueError, match="n_mc"):
        width_checks.monte_carlo([("xavier", 1, 1)], 0, 3.0, np.random.default_rng(0))


def test_population_check_and_flow_runs():
    rng = np.random.default_rng(3)
    z, ag = outputs_checks.population_check(rng, 2, 2, -0.5, points=2, samples=50_000)
    assert z < 4.5 and ag < 1e-12
    runs = outputs_checks.flow_runs(rng, 2, 2, 2, -0.5, horizon=40.0, n_data=400, lr=0.02)
    assert len(runs) == 2 and runs[0]["tt"].shape == (801,) and runs[0]["Z"].shape == (4, 801)
    for r in runs:
        assert r["drift"] < 1e-7 and r["min_a1_single"] > 0  # c kept; one output keeps the sign (App. G)
        assert np.all(r["rest"] >= 1 - 1e-6)
    G = outputs_checks.summarize(runs, -0.5)
    assert G["n_keep"] == 2 and G["single_ratio"] >= 1 - 1e-7 and G["n_up"] == 0
    assert G["n_cross"] == sum(len(r["t_down"]) == 1 for r in runs)
    with pytest.raises(ValueError, match="runs"):
        outputs_checks.summarize([], -0.5)
    fig = remarks_drawings.draw_outputs(runs, d=2, e=2, c=-0.5, horizon=40.0, lr=0.02)
    assert len(fig.axes) == 2 and fig.axes[1].get_xlabel() == "$a_1$"
    plt.close(fig)
    with pytest.raises(ValueError, match="c must"):
        remarks_drawings.draw_outputs(runs, d=2, e=2, c=0.5, horizon=40.0, lr=0.02)


def test_drawings_return_their_figures():
    fig = remarks_drawings.draw_one_neuron(1.0)
    assert len(fig.axes) == 3 and "Fig. 2a" in fig._suptitle.get_text()
    plt.close(fig)
    falls = width_checks.width_map(12, 100)
    mc = width_checks.monte_carlo([("kaiming", 1, 1), ("kaiming", 1, 10)], 200, 3.0, np.random.default_rng(0))
    fig = remarks_drawings.draw_width(mc, 200, falls, l_asym=10**5, l_grid_max=100)
    assert len(fig.axes) == 4 and fig.axes[2].images[0].get_array().shape == (12, 100)
    plt.close(fig)
    with pytest.raises(ValueError, match="c_abs"):
        remarks_drawings.draw_one_neuron(-1.0)


@pytest.mark.parametrize("bias", [False, True])
def test_enumerate_effective_counts_thm2_classes(bias):
    rows = components.enumerate_effective((3,), 2, np.random.default_rng(4), bias=bias)
    assert [(r["l"], r["lm"]) for r in rows] == [(3, 1), (3, 2), (3, 3)]
    for r in rows:
        assert r["classes"] == invariant_set.n_effective_components(1 if bias else 2, 1, r["c"], bias=bias)
        assert r["classes"] == r["lm"] + 1 and r["sums_ok"] and r["symmetric"] and r["fun_err"] < 1e-12
        assert r["n_signs"] == 2 ** r["lm"]
    with pytest.raises(ValueError, match="n_probes"):
        components.enumerate_effective((3,), 0, np.random.default_rng(0))
