"""markovlib.topology.toy_checks, obstruction_drawings and torch_reference (the chapter topo_obstruction: the Sec. 6
toy of Nurisso et al., Fig. 3 and Fig. 5)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from markovlib.topology import obstruction_drawings, torch_reference, toy, toy_checks, width_checks  # noqa: E402


@pytest.fixture(scope="module")
def problem():
    X, F = toy.toy_data(np.random.default_rng(0), 400)
    bound = 0.5 * np.mean(F**2)
    runs = toy_checks.arm_runs(0, 3, X, F, c_abs=0.1, lr=0.01, steps=1000, learned_below=0.01 * bound)
    return X, F, bound, runs


def test_torch_sgd_reference_on_the_mse(problem):
    X, F, _, _ = problem
    W1, a = toy.toy_draw(0, 0, [-0.1, 0.1], active=True)
    assert torch_reference.sgd_difference(W1, a, X, F, lr=0.01, steps=20, kind="mse") < 1e-10
    with pytest.raises(ValueError, match="kind"):
        torch_reference.sgd_difference(W1, a, X, F, lr=0.01, steps=20, kind="l1")


def test_arms_and_the_obstructed_bound(problem):
    X, F, bound, runs = problem
    assert list(runs) == list(toy_checks.ARMS) and all(len(v) == 3 for v in runs.values())
    assert runs["obstructed"][0].c == [-0.1, -0.1] and runs["unobstructed, active start"][0].c == [-0.1, 0.1]
    tau = toy.sum_rounding_tolerance(bound, len(F))
    obs = toy_checks.obstructed_summary(runs["obstructed"], bound, tau)
    assert obs["pos"] == obs["above"] == obs["n"] == 3 and obs["a_min"] > 0  # Prop. 3 and the bound 0.5 mean F^2
    assert obs["margin"] >= -tau and obs["text"].count("\n") == 1 and "3/3" in obs["text"]
    with pytest.raises(ValueError, match="runs"):
        toy_checks.obstructed_summary([], bound, tau)


def test_unobstructed_and_the_drift(problem):
    X, F, bound, runs = problem
    U = toy_checks.unobstructed_summary(runs["unobstructed, paper's draw"], runs["unobstructed, active start"], 0.05)
    assert U["learn_a"] == sum(r.learned for r in runs["unobstructed, active start"]) and U["dead0_learned"] == 0
    assert U["fails"] == 6 - U["learn_p"] - U["learn_a"] and U["lo_a"] <= U["learn_a"] / 3 <= U["hi_a"]
    assert U["text"].count("\n") == 2
    all_runs = [r for k in toy_checks.ARMS for r in runs[k]]
    D = toy_checks.drift_recheck(all_runs, X, F, c_abs=0.1, lr=0.01, steps=1000, target=0.01, n_recheck=1)
    assert D["worst"] == pytest.approx(max(r.rel_drift for r in all_runs)) and len(D["star"]) == 1
    assert D["h_star"] <= 0.01 and D["steps_star"] * D["h_star"] >= 10 - 1e-9
    if D["h_star"] < 0.01:  # the O(h) scaling: halving-or-more the step cuts the drift of the worst run
        assert D["drift_star"] < D["worst"] and D["ratio"] < 1
    with pytest.raises(ValueError, match="n_recheck"):
        toy_checks.drift_recheck(all_runs, X, F, c_abs=0.1, lr=0.01, steps=10, target=0.01, n_recheck=0)


def test_drawings(problem):
    _, _, bound, runs = problem
    fig = obstruction_drawings.draw_toy(runs, c_abs=0.1, bound=bound)
    assert len(fig.axes) == 3 and len(fig.axes[2].lines) == 9 + 1  # every run's loss, and the bound
    plt.close(fig)
    with pytest.raises(ValueError, match="three arms"):
        obstruction_drawings.draw_toy({"obstructed": runs["obstructed"]}, c_abs=0.1, bound=bound)
    cells = [(s, d, w) for s in ("kaiming", "xavier") for d in (1, 5) for w in (1, 10)]
    mc = width_checks.monte_carlo(cells, 500, 3.0, np.random.default_rng(0))
    fig = obstruction_drawings.draw_fig5(mc, 500, [1, 5], [1, 10], max_dim=10)
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) >= 2
    plt.close(fig)
