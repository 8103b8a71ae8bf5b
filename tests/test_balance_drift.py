"""markovlib.topology.balance_drift: RK4 keeps the balances, GD's one-step identity, Adam's first-order drift,
weight decay's exponential, and the validation of every argument."""
import numpy as np
import pytest

from markovlib.topology import balance_drift


def _net(seed=0, d=3, width=4, n=30):
    return balance_drift.problem(np.random.default_rng(seed), d, width, n)


def test_problem_draws_in_order_and_teacher_is_relu():
    X, y, W1, a = _net()
    r = np.random.default_rng(0)
    X2 = r.normal(size=(30, 3))
    assert np.array_equal(X, X2) and np.array_equal(W1, r.uniform(-1, 1, size=(4, 3)))
    assert np.array_equal(a, r.uniform(-1, 1, size=4))
    x = np.array([[1.0, -2.0, 3.0]])
    assert balance_drift.teacher(x)[0] == pytest.approx(-1 + 3 - 0.5 * 2)


def test_rk4_keeps_balances_and_weight_decay_gives_exponential():
    X, y, W1, a = _net()
    c0 = (W1**2).sum(1) - a**2
    cs = balance_drift.rk4_balances(W1, a, X, y, 1.0, 400)
    assert cs.shape == (400, 4) and np.abs(cs - c0).max() < 1e-5
    lam = 0.1
    cw = balance_drift.rk4_balances(W1, a, X, y, 1.0, 400, weight_decay=lam)
    ts = np.linspace(0, 1, 401)[1:]
    assert np.abs(cw - c0 * np.exp(-2 * lam * ts)[:, None]).max() < 1e-5


def test_gd_identity_and_drift_order():
    X, y, W1, a = _net(1)
    d1, ident = balance_drift.optimizer_drift(W1, a, X, y, h=0.02, t=1.0, kind="gd")
    d2, _ = balance_drift.optimizer_drift(W1, a, X, y, h=0.01, t=1.0, kind="gd")
    assert ident < 1e-12 and 1.5 < d1 / d2 < 2.5          # O(h) over a fixed time
    ds, ids = balance_drift.optimizer_drift(W1, a, X, y, h=0.01, t=1.0, kind="sgd",
                                            rng=np.random.default_rng(3), batch=10)
    assert ids < 1e-12 and ds > 0
    dadam, zero = balance_drift.optimizer_drift(W1, a, X, y, h=0.01, t=1.0, kind="adam")
    assert zero == 0.0 and dadam > 5 * d2                 # first order: much larger than GD's


def test_arguments_are_validated():
    X, y, W1, a = _net()
    with pytest.raises(ValueError, match="kind"):
        balance_drift.optimizer_drift(W1, a, X, y, h=0.1, t=1.0, kind="rmsprop")
    with pytest.raises(ValueError, match="h must"):
        balance_drift.optimizer_drift(W1, a, X, y, h=0.0, t=1.0, kind="gd")
    with pytest.raises(ValueError, match="rng"):
        balance_drift.optimizer_drift(W1, a, X, y, h=0.1, t=1.0, kind="sgd", batch=5)
    with pytest.raises(ValueError, match="batch"):
        balance_drift.optimizer_drift(W1, a, X, y, h=0.1, t=1.0, kind="sgd", rng=np.random.default_rng(0),
                                      batch=100)
    with pytest.raises(ValueError, match="n_steps"):
        balance_drift.rk4_balances(W1, a, X, y, 1.0, 0)
    with pytest.raises(ValueError, match="weight_decay"):
        balance_drift.rk4_balances(W1, a, X, y, 1.0, 10, weight_decay=-1)
    with pytest.raises(ValueError, match="a must"):
        balance_drift.rk4_balances(W1, a[:2], X, y, 1.0, 10)
    with pytest.raises(ValueError, match="rng"):
        balance_drift.problem(0, 2, 3, 4)
    with pytest.raises(ValueError, match="width"):
        balance_drift.problem(np.random.default_rng(0), 2, 0, 4)
