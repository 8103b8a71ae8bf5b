"""markovlib.beyond.drift_reference, drift_checks, closing_drawings and topology.balance_drift.rk4_path: the closing
chapter's references and steps, one call each, at the chapter's default sizes (fewer initializations)."""
import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from markovlib.beyond import closing_drawings, drift_checks, drift_problems, drift_reference  # noqa: E402
from markovlib.markov.energy import energy as energy_pkg  # noqa: E402
from markovlib.topology.balance_drift import rk4_path  # noqa: E402


@pytest.fixture(scope="module")
def problems():
    one = drift_problems.MarkovProblem(0.9, 0.9, 4096, np.random.default_rng([0, 1]))
    rng2, rng3 = np.random.default_rng([0, 2]), np.random.default_rng([0, 3])
    return one, drift_problems.NeuronProblem(3, 2, rng2), drift_problems.ReluProblem(2, 4, 20, rng3), rng2, rng3


def test_energy_references():
    th = np.array([[0.3, -1.5], [0.5, 0.7]])
    assert np.allclose(drift_reference.energy(th), energy_pkg(th[:, 0], th[:, 1]))
    value = float(drift_reference.energy_torch(torch.tensor([0.5, 0.7])))
    assert math.isclose(value, energy_pkg(0.5, 0.7), rel_tol=1e-6)
    with pytest.raises(ValueError, match="rows"):
        drift_reference.energy(np.ones((2, 3)))


def test_loss_reference_and_integrate(problems):
    _, two, _, _, _ = problems
    t = np.array([0.5, 1.0, -1.0, 2.0])
    assert math.isclose(drift_reference.loss(two, t), 0.5 * np.mean((two.X @ (0.5 * t[1:]) - two.y) ** 2))
    with pytest.raises(ValueError, match="problem"):
        drift_reference.loss(object(), t)
    sol = drift_reference.integrate(lambda th: th, np.array([1.0, -2.0]), 1.5, lam=0.5)  # y' = -1.5 y
    assert np.allclose(sol.y[:, -1], np.array([1.0, -2.0]) * math.exp(-2.25), atol=1e-10)


def test_rk4_path_on_a_linear_field():
    path = rk4_path(lambda y: -y, np.array([[1.0, 2.0]]), 1.0, 0.01)
    assert path.shape == (101, 1, 2) and np.allclose(path[-1, 0], np.array([1.0, 2.0]) * math.exp(-1), atol=1e-9)
    with pytest.raises(ValueError, match="dt"):
        rk4_path(lambda y: -y, np.ones(2), 1.0, 0.0)


def test_gradient_checks_and_drawn_flows(problems):
    one, two, three, _, _ = problems
    grad_err, noether, hess_err = drift_checks.gradient_checks(one, two, three, np.random.default_rng(4))
    assert grad_err < 1e-6 and noether < 1e-6 and hess_err < 1e-10
    flows = drift_checks.drawn_flows(one, two, three, np.random.default_rng(2), np.random.default_rng(3), t3=1.0,
                                     rk4_dt=0.002)
    assert flows["drift"] < 1e-8 and flows["drift3"] < 1e-4 and len(flows["paths1"]) == 3
    assert set(flows["ends1"]) <= {"global_min", "local_min", "saddle", "maximum"}
    fig = closing_drawings.invariant_sets(two, three, flows, 0.9, 0.9)
    assert len(fig.axes) >= 3
    plt.close(fig)
    with pytest.raises(ValueError, match="flows"):
        closing_drawings.invariant_sets(two, three, {}, 0.9, 0.9)


@pytest.mark.slow
def test_decay_and_drift_study(problems):
    one, two, three, _, _ = problems
    laws = drift_checks.drift_laws(one, two, three, 3, np.random.default_rng(5), (64, 1, 5))
    assert [laws[k][2].shape[0] for k in laws] == [3, 3, 3]
    err2, err3, err_E = drift_checks.decay_flows(laws, 0.1, 1.0, 0.002)
    assert err2 < 1e-9 and err3 < 1e-4 and err_E < 1e-8
    lrs = [0.04, 0.02, 0.01]
    drift = drift_checks.drift_runs(laws, lrs, 1.0, 0.1, 2, 0, 0.002)
    ds = drift_checks.drift_slopes(drift, lrs)
    assert all(abs(ds["slopes"][law]["gd"] - 1) < 0.3 for law in laws) and ds["adam_ratio"] > 5
    assert ds["text"]["gd"].count("(") == 3
    fig = closing_drawings.drift_study_figure(drift, lrs, 0.1, 1.0)
    assert len(fig.axes) == 3
    plt.close(fig)


def test_one_step_identities(problems):
    one, two, three, _, _ = problems
    rng = np.random.default_rng(6)
    assert drift_checks.one_step_quadratic(two, three, 3, [0.04, 0.01], rng, (1, 5)) < 1e-12
    ratio, th0 = drift_checks.third_order_ratio(one, 3, 0.005, rng, 64)
    assert 6 < ratio < 10 and th0.shape == (3, 2)
    r = drift_checks.adam_first_step(((one.grad, drift_reference.energy, th0),), 0.005)
    assert 1.6 < r[0] < 2.4


@pytest.mark.slow
def test_prediction_study(problems):
    one, two, three, _, _ = problems
    ini = drift_checks.prediction_inits(one, two, three, 4, np.random.default_rng(7), 0.05, 50.0, 200.0, 1e-6)
    assert ini["th1"].shape == (4, 2) and ini["drawn3"] >= 4 and (three.quantity(ini["th3"]) < 0).any(axis=1).all()
    settings = [("gd", 0.05, 0.0), ("adam", 0.05, 0.0)]
    agree, count = drift_checks.prediction_runs(one, two, three, ini, settings, beta_tol=0.05, t3=20.0,
                                                batches=(64, 1, 5), seed=0)
    assert list(count) == list(drift_checks.LAW_SHORT) and count["Part I: basin"][("gd", 0.05, 0.0)] == 4
    fig = closing_drawings.prediction_figure({law: {**c, **{("sgd", 0.05, 0.0): 0, ("gd", 0.05, 0.1): 4}}
                                              for law, c in count.items()}, [0.05], [0.1], 4, 0.9, 0.05)
    assert len(fig.axes) == 4
    plt.close(fig)


def test_largest_steps_and_most_fragile():
    count = {"Part I: basin": {("gd", 0.05, 0.0): 100, ("gd", 0.1, 0.0): 100, ("gd", 0.05, 0.01): 100},
             "Part II: interpolant": {("gd", 0.05, 0.0): 100, ("gd", 0.1, 0.0): 50, ("gd", 0.05, 0.01): 40}}
    for law in count:
        count[law].update({(k, h, 0.0): 0 for k in ("sgd", "adam") for h in (0.05, 0.1)})
    summary, texts = drift_checks.largest_steps(count, [0.05, 0.1], [0.01], 0.05, 100, 0.9, 1.645)
    assert summary[("Part I: basin", "gd")] == 0.1 and summary[("Part II: interpolant", "gd")] == 0.05
    assert summary[("Part II: interpolant", "wd")] is None and texts["gd"] == "0.1 (I), 0.05 (II)"
    assert drift_checks.most_fragile(summary, list(count)) == "Part II: interpolant (largest GD step 0.05)"
    summary[("Part I: basin", "gd")] = None
    assert drift_checks.most_fragile(summary, list(count)).startswith("Part I: basin (its prediction holds")
