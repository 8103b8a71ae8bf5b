"""markovlib.topology.homology_checks and homology_drawings (the chapter topo_homology: Thm 1, Cor. 1, Lemmas 2-3,
Prop. 3 of Nurisso et al.)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.topology import homology, homology_checks, homology_drawings  # noqa: E402


def test_cor1_grid_agrees_everywhere():
    assert homology_checks.cor1_grid(max_dim=2, neurons=2) == (36, 36)
    with pytest.raises(ValueError, match="neurons"):
        homology_checks.cor1_grid(neurons=0)


def test_lemma2_paths_stay_on_the_cone():
    err = homology_checks.lemma2_paths(np.random.default_rng(0), dims=((2, 1),), pairs=5)
    assert err < 1e-12
    with pytest.raises(ValueError, match="rng"):
        homology_checks.lemma2_paths(0)


def test_sampled_betti_reads_the_circle_and_the_two_sheets():
    rows, res = homology_checks.sampled_betti(
        [[2, 1, "+"], [2, 1, "-"]], np.random.default_rng(0), c_abs=1.0, trunc=0.1, cone_radius=0.5,
        n_landmarks=150, raw_factor=5, persist_min=0.6, noise_factor=2.0, edge_factor=2.0)
    assert [(r["sampler"], r["counts"]) for r in rows] == [("param", [1, 1, 0]), ("newton", [1, 1, 0]),
                                                           ("param", [2, 0, 0]), ("newton", [2, 0, 0])]
    assert all(r["counts"] == r["want"] and r["b0_graph"] == r["P"][0] and r["noise"] < 1 < r["signal"] for r in rows)
    assert res < 1e-9 and all(r["theta"] >= 0.6 for r in rows)
    table = homology_checks.betti_table(rows).splitlines()
    assert len(table) == 5 and "newton" in table[2] and table[1].split()[-3] == "<" and table[1].endswith("0.60")


def test_torus_sample_and_its_b2():
    torus, n1, n2 = homology_checks.torus_sample([1.0, 2.0], 400, np.random.default_rng(1))
    assert torus.shape == (n1 * n2, 4) and n1 < n2  # the larger circle gets more angles
    assert np.allclose((torus[:, :2] ** 2).sum(1), 1.0) and np.allclose((torus[:, 2:] ** 2).sum(1), 2.0)
    counts, noise, signal = homology.alpha_betti(torus, 2, 0.4, 1.0)
    assert counts == [1, 2, 1] and noise < 0.4 < signal
    with pytest.raises(ValueError, match="torus_c"):
        homology_checks.torus_sample([1.0, -1.0], 400, np.random.default_rng(1))


def test_autograd_gradient_agrees():
    assert homology_checks.autograd_gradient(np.random.default_rng(2), 4) < 1e-12


def test_prop3_runs_keep_the_pathological_signs():
    runs = homology_checks.prop3_runs([2], 2, 0, width=4, n_patho=2, c_train=0.5, n_data=100, lr=0.01, steps=300)
    assert set(runs) == {(2, 0), (2, 1)} and runs[2, 0]["a"].shape == (301, 4)
    R = homology_checks.prop3_summary(runs, 2)
    assert R["n_kept"] == R["n_runs"] == 2 and R["min_abs"] ** 2 >= 0.5 - R["drift"] - 1e-12
    assert R["drift"] < 0.05 and 0 < R["lo"] < 1 and R["hi"] == pytest.approx(1.0)
    fig = homology_drawings.draw_prop3(runs, (2, 0), n_patho=2, c_train=0.5)
    assert len(fig.axes) == 2 and len(fig.axes[1].lines) == 2
    plt.close(fig)
    with pytest.raises(ValueError, match="show"):
        homology_drawings.draw_prop3(runs, (3, 0), n_patho=2, c_train=0.5)
    with pytest.raises(ValueError, match="runs"):
        homology_checks.prop3_summary({}, 2)


def test_lemma3_normal_form_is_exact_bookkeeping():
    err, fun = homology_checks.lemma3_normal_form(np.random.default_rng(3), trials=5, actions=8)
    assert err < 1e-12 and fun < 1e-10


def test_drawings():
    fig = homology_drawings.draw_quadrics(1.0)
    assert len(fig.axes) == 3 and "cone" in fig.axes[1].get_title()
    plt.close(fig)
    fig = homology_drawings.draw_component_counts([(1, 2), (2, 3)], max_lm=5)
    assert list(fig.axes[0].lines[2].get_xdata()) == [1, 2]
    assert list(fig.axes[0].lines[0].get_ydata()) == [2, 4, 8, 16, 32]
    plt.close(fig)
    with pytest.raises(ValueError, match="rho"):
        homology_drawings.draw_quadrics(0.0)


def test_effective_table_and_explorer_counts():
    from markovlib.topology import components

    rows = components.enumerate_effective((2,), 2, np.random.default_rng(5))
    table = homology_checks.effective_table(rows).splitlines()
    assert len(table) == 3 and table[1].split() == ["2", "1", "2", "2", "2", "2"]
    points = [dict(d=2, e=1, l_plus=1, l_minus=2), dict(d=1, e=2, l_plus=2, l_minus=1)]
    results = [dict(components=4, effective=3, drift=0.01, sign_kept=[True, True, True], c=[1.0, -1.0, -1.0]),
               dict(components=4, effective=1)]
    E = homology_checks.explorer_counts(points, results)
    assert E == dict(n_cor1=2, e1=[(True, True)], n_flows=1, n_sheet=1, drift=0.01)
    results[1]["components"] = 2  # Cor. 1 says 2^(l_+) = 4 at d = 1, e = 2
    assert homology_checks.explorer_counts(points, results)["n_cor1"] == 1
    with pytest.raises(ValueError, match="points and results"):
        homology_checks.explorer_counts(points, results[:1])
