"""markovlib.beyond.conservation: named optimizers against torch, the second-order step identity, the O(h) drift of GD,
the weight-decay law against an independent integration, and argument checks."""
import numpy as np
import pytest
import torch
from scipy.integrate import solve_ivp

from markovlib.beyond import conservation
from markovlib.numerics.numdiff import fd_hessian

RNG = np.random.default_rng(3)
X = RNG.normal(size=(12, 3))
Y = X @ np.array([1.0, -0.5, 0.3])


def neuron_grad(theta, idx=None):
    """f(x) = a w.x on L = |X a w - y|^2 / (2n); theta = (a, w), rows are initializations."""
    Xb, yb = (X, Y) if idx is None else (X[idx], Y[idx])
    a, w = theta[:, :1], theta[:, 1:]
    r = (a * w) @ Xb.T - yb  # inits x n
    gb = r @ Xb / len(yb)  # dL/dbeta
    return np.concatenate([(gb * w).sum(1, keepdims=True), a * gb], axis=1)


def delta(theta):
    return theta[:, 0] ** 2 - (theta[:, 1:] ** 2).sum(1)


THETA0 = np.array([[0.8, 0.3, -0.2, 0.5], [-0.4, 0.9, 0.1, -0.3]])


def test_gd_step_is_second_order_exactly():
    g = neuron_grad(THETA0)
    h = 0.05
    run = conservation.run_optimizer(neuron_grad, THETA0, h, 1, quantity=delta)
    S = np.diag([2.0, -2.0, -2.0, -2.0])  # hess of delta
    pred = conservation.second_order_change(S, g, h)
    assert np.allclose(run.quantity[1] - run.quantity[0], pred, rtol=1e-10, atol=1e-15)


def test_second_order_change_nonquadratic():
    # E(e, w) = e^2 - w^2 - log w (w > 0) with a step orthogonal to grad E: the remainder is O(h^3)
    E = lambda t: t[0] ** 2 - t[1] ** 2 - np.log(t[1])  # noqa: E731
    th = np.array([0.7, 0.6])
    gE = np.array([2 * th[0], -2 * th[1] - 1 / th[1]])
    g = np.array([-gE[1], gE[0]])
    H = fd_hessian(E, th)
    rem = [abs(E(th - h * g) - E(th) - conservation.second_order_change(H, g, h)) for h in (1e-2, 5e-3)]
    assert 6 < rem[0] / rem[1] < 10  # ~ 2^3


def test_gd_drift_is_first_order_and_sgd_too():
    hs = [0.04, 0.02, 0.01]
    T = 2.0
    for opt in ("gd", "sgd"):
        dr = [conservation.run_optimizer(neuron_grad, THETA0, h, int(round(T / h)), quantity=delta, optimizer=opt,
                                         n_data=12,
                              batch=4, seed=1).final_drift().max() for h in hs]
        assert 0.85 < conservation.loglog_slope(hs, dr) < 1.15, opt


def test_adam_matches_torch_and_breaks_at_first_order():
    h, n, lam = 0.01, 30, 0.1
    run = conservation.run_optimizer(neuron_grad, THETA0, h, n, quantity=delta, optimizer="adam", weight_decay=lam,
                          record_every=1)
    # independent reference: torch.optim.Adam (coupled L2 weight decay) on the same loss
    th = torch.tensor(THETA0, requires_grad=True)
    opt = torch.optim.Adam([th], lr=h, weight_decay=lam)
    Xt, Yt = torch.tensor(X), torch.tensor(Y)
    for _ in range(n):
        opt.zero_grad()
        a, w = th[:, :1], th[:, 1:]
        loss = (((a * w) @ Xt.T - Yt) ** 2).mean(1).sum() / 2
        loss.backward()
        opt.step()
    assert np.abs(run.theta[-1] - th.detach().numpy()).max() < 1e-10
    hs = [0.02, 0.01, 0.005]
    dr = [conservation.run_optimizer(neuron_grad, THETA0, h, int(round(1.0 / h)), quantity=delta,
                          optimizer="adam").final_drift().max() for h in hs]
    assert abs(conservation.loglog_slope(hs, dr)) < 0.3


def test_decay_law_against_independent_integration():
    lam = 0.3

    def rhs(t, y):
        return -neuron_grad(y[None, :])[0] - lam * y

    sol = solve_ivp(rhs, (0, 2.0), THETA0[0], rtol=1e-11, atol=1e-13, t_eval=[0.5, 1.0, 2.0])
    got = delta(sol.y.T)
    assert np.allclose(got, conservation.decay_law(delta(THETA0[:1])[0], lam, sol.t), rtol=1e-8, atol=1e-10)
    # and GD with weight decay approaches it at O(h)
    errs = []
    for h in (0.02, 0.01):
        run = conservation.run_optimizer(neuron_grad, THETA0[:1], h, int(round(2.0 / h)), quantity=delta,
                                         weight_decay=lam)
        errs.append(abs(run.quantity[-1, 0] - conservation.decay_law(run.quantity[0, 0], lam, 2.0)))
    assert 1.6 < errs[0] / errs[1] < 2.4


def test_sgd_reproducible_and_divergence_frozen():
    kw = dict(quantity=delta, optimizer="sgd", n_data=12, batch=3, seed=5)
    a = conservation.run_optimizer(neuron_grad, THETA0, 0.05, 20, **kw)
    b = conservation.run_optimizer(neuron_grad, THETA0, 0.05, 20, **kw)
    assert np.array_equal(a.theta, b.theta)
    quad = lambda t, idx: t * np.array([1.0, 100.0])  # noqa: E731  - h = 0.1 is unstable in the 2nd coordinate
    r = conservation.run_optimizer(quad, np.array([[1.0, 1.0], [1.0, 0.0]]), 0.1, 400, quantity=lambda t: (t**2).sum(1))
    assert r.diverged.tolist() == [True, False]
    assert np.all(np.isfinite(r.theta)) and not np.any(np.isnan(r.quantity))


def test_loglog_slope_and_checks():
    assert abs(conservation.loglog_slope([1, 2, 4], [3, 6, 12]) - 1) < 1e-12
    with pytest.raises(ValueError, match="optimizer"):
        conservation.run_optimizer(neuron_grad, THETA0, 0.1, 1, quantity=delta, optimizer="rmsprop")
    with pytest.raises(ValueError, match="h must"):
        conservation.run_optimizer(neuron_grad, THETA0, 0.0, 1, quantity=delta)
    with pytest.raises(ValueError, match="batch"):
        conservation.run_optimizer(neuron_grad, THETA0, 0.1, 1, quantity=delta, optimizer="sgd", n_data=3, batch=4)
    with pytest.raises(ValueError, match="theta0"):
        conservation.run_optimizer(neuron_grad, [[np.nan, 0, 0, 0]], 0.1, 1, quantity=delta)
    with pytest.raises(ValueError, match="weight_decay"):
        conservation.run_optimizer(neuron_grad, THETA0, 0.1, 1, quantity=delta, weight_decay=-1)
    with pytest.raises(ValueError, match="drift"):
        conservation.loglog_slope([1, 2], [0, 1])
    with pytest.raises(ValueError, match="weight_decay"):
        conservation.decay_law(1.0, -0.1, 1.0)
