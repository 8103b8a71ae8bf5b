"""markovlib.beyond.drift_problems and drift_study: the closing chapter's three problems and its prediction study."""
import numpy as np
import pytest

from markovlib.beyond import drift_problems, drift_study
from markovlib.book.inference import wilson_interval, wilson_lower_z


def fd(f, t, eps=1e-6):
    """Central finite differences of a scalar function of a vector (written out here)."""
    out = np.zeros_like(t)
    for i in range(len(t)):
        e = np.zeros_like(t)
        e[i] = eps
        out[i] = (f(t + e) - f(t - e)) / (2 * eps)
    return out


def problems(seed=3):
    rng = np.random.default_rng(seed)
    return (drift_problems.MarkovProblem(0.3, 0.4, 256, rng), drift_problems.NeuronProblem(3, 2, rng),
            drift_problems.ReluProblem(2, 3, 10, rng))


def test_gradients_against_losses_written_out():
    one, two, three = problems()
    rng = np.random.default_rng(0)

    def loss1(t):  # the package's reduced loss; its gradient is checked in test_canonical
        from markovlib.markov import canonical
        return float(canonical.loss(t[0], t[1], one.p, one.q))

    def loss2(t):
        return 0.5 * np.mean((two.X @ (t[0] * t[1:]) - two.y) ** 2)

    def loss3(t):
        W, a = three.unpack(t[None, :])
        return 0.5 * np.mean((np.maximum(three.X @ W[0].T, 0) @ a[0] - three.y) ** 2)

    for prob, loss, dim in ((one, loss1, 2), (two, loss2, 4), (three, loss3, three.dim)):
        for t in rng.uniform(-1, 1, size=(3, dim)) + np.r_[[0.0] * (dim - 1), 0.5]:
            assert np.abs(prob.grad(t[None])[0] - fd(loss, t)).max() < 1e-6
            # Noether: grad Q . grad L = 0 (for c_k: each balance along the gradient)
            g = prob.grad(t[None])
            dq = prob.quantity(t[None] + 1e-7 * g) - prob.quantity(t[None] - 1e-7 * g)
            assert np.abs(dq).max() / 2e-7 < 1e-6


def test_minibatch_gradients_keep_the_symmetry():
    one, two, three = problems()
    rng = np.random.default_rng(1)
    for prob, dim in ((one, 2), (two, 4), (three, three.dim)):
        t = rng.uniform(0.2, 1, size=(2, dim))
        idx = rng.choice(prob.n_data, 2, replace=False)
        g = prob.grad(t, idx)
        dq = prob.quantity(t + 1e-7 * g) - prob.quantity(t - 1e-7 * g)
        assert np.abs(dq).max() / 2e-7 < 1e-6


def test_energy_hessian_against_finite_differences():
    one = problems()[0]
    for t in (np.array([0.4, 0.7]), np.array([-1.1, -0.3])):
        E = lambda r: float(one.quantity(r[None])[0])  # noqa: E731
        H = np.array([fd(lambda s, i=i: fd(E, s)[i], t, 1e-4) for i in range(2)])
        assert np.abs(H - one.hessian(t[None])[0]).max() < 1e-5


def test_quadratic_laws_are_theta_S_theta():
    _, two, three = problems()
    t = np.random.default_rng(2).normal(size=(4, 4))
    assert np.allclose(two.quantity(t), np.einsum("ni,ij,nj->n", t, two.S, t))
    t3 = np.random.default_rng(2).normal(size=(4, three.dim))
    assert np.allclose(three.quantity(t3).sum(1), np.einsum("ni,ij,nj->n", t3, three.S, t3))


def test_theta_from_and_the_inits():
    th = drift_problems.theta_from([1.0, -0.5, 0.0], [[0.3, 0.1], [0.0, 0.2], [1.0, 1.0]], [1, -1, 1])
    assert np.allclose(th[:, 0] ** 2 - (th[:, 1:] ** 2).sum(1), [1.0, -0.5, 0.0])
    assert np.allclose(th[:, :1] * th[:, 1:], [[0.3, 0.1], [0.0, 0.2], [1.0, 1.0]]) and th[1, 0] < 0
    one, two, three = problems()
    rng = np.random.default_rng(5)
    th1 = one.inits(20, rng, w_min=0.2, minima_only=True)
    assert th1.shape == (20, 2) and np.all(np.abs(th1[:, 1]) >= 0.2)
    assert np.all(np.isin(one.predict(th1), ["global_min", "local_min"]))
    th2 = two.inits(10, rng)
    assert np.all(two.on_side(th2)) and np.all(np.abs(two.quantity(th2)) <= 2)
    assert np.all(two.quantity(two.inits_free(10, rng)) <= 0)
    th3 = three.inits(10, rng, pathological=True)
    assert np.all((three.quantity(th3) < 0).any(axis=1))
    assert three.inits(5, rng).shape == (5, three.dim)


def test_agreement_rules():
    one, two, three = problems()
    c_star = one.c_star
    e = np.sqrt(c_star / 3)  # c = e^2 (1 + 2 w|w|) = c* at w = 1
    assert list(one.agree(np.array([[e, 1.0], [0.0, 1.0]]), ["global_min", "global_min"])) == [True, False]
    th2 = two.inits(3, np.random.default_rng(0))
    pred = two.predict(th2)
    assert np.all(two.agree(np.concatenate([np.ones((3, 1)), pred], axis=1), pred, 0.05))
    th3 = three.inits(4, np.random.default_rng(0), pathological=True)
    assert np.all(three.agree(th3, th3))
    flipped = th3.copy()
    flipped[:, three.width * three.d:] *= -1
    assert not np.any(three.agree(flipped, th3))


def test_the_explorers_laws():
    spec = drift_problems.laws(0)
    assert set(spec) == set(drift_problems.LAWS)
    th1 = spec["I"].theta0
    assert th1.shape == (drift_problems.N_INITS, 2) and np.all(np.abs(th1[:, 1]) >= 0.2)
    assert np.all((spec["III"].problem.quantity(spec["III"].theta0) < 0).any(axis=1))
    for law in drift_problems.LAWS:  # at the start nobody has moved
        assert spec[law].agree(spec[law].theta0).shape == (drift_problems.N_INITS,)
    assert np.all(spec["III"].agree(spec["III"].theta0))


def test_prediction_study_helpers():
    two = problems()[1]
    th = two.inits(6, np.random.default_rng(7))
    t = drift_study.training_time(two.grad, th, 0.05, 10.0, 1e-6)
    assert t in [10.0 * 2**k for k in range(6)]
    ok = drift_study.gd_converged(two.grad, th, 0.05, t, 1e-6)
    assert ok.mean() >= 0.5
    rng = np.random.default_rng(0)
    got, drawn = drift_study.draw_until(5, lambda m: rng.normal(size=(m, 1)), lambda x: x[:, 0] > 0, "positive")
    assert got.shape == (5, 1) and np.all(got > 0) and drawn >= 5
    with pytest.raises(ValueError, match="n = 3"):
        drift_study.draw_until(3, lambda m: -np.ones((m, 1)), lambda x: x[:, 0] > 0, "positive", rounds=2)
    z = wilson_lower_z(0.05, 4)
    assert drift_study.largest_holding({0.1: 50, 0.2: 50, 0.4: 20}, 50, 0.9, z) == 0.2
    assert drift_study.largest_holding({0.1: 10}, 50, 0.9, z) is None
    n = drift_study.fewest_inits(0.9, 0.05, 57)
    z57 = wilson_lower_z(0.05, 57)
    assert wilson_interval(n, n, z57)[0] > 0.9 >= wilson_interval(n - 1, n - 1, z57)[0]
    assert drift_study.largest_text([0.1, None], ["I", "II"]) == "0.1 (I), no grid value (II)"


@pytest.mark.parametrize("call", [
    lambda: drift_problems.MarkovProblem(1.2, 0.5, 10, np.random.default_rng(0)),
    lambda: drift_problems.NeuronProblem(3, 0, np.random.default_rng(0)),
    lambda: drift_problems.ReluProblem(2, 3, 10, 0),
    lambda: drift_problems.theta_from([1.0], [[0.0, 0.0]]),
    lambda: drift_study.largest_holding({0.1: 1}, 2, 1.0, 1.0),
    lambda: drift_study.fewest_inits(1.0, 0.05, 3),
    lambda: drift_study.training_time(lambda t: t, np.ones((1, 1)), -0.1, 1.0, 1e-6),
])
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()
