"""markovlib.topology.appendix: App. E's gradient with biases, App. F's log survival and runs, App. G's population
loss, its gradient and flow, and the declared Monte Carlo cells."""
import numpy as np
import pytest
import torch

from markovlib.topology import appendix, invariant_set


def test_bias_gradient_is_autograd_and_balance_with_bias_is_first_order():
    rng = np.random.default_rng(0)
    ws = [rng.normal(size=s) for s in ((3, 2), (3,), (2, 3), (2,))]
    X, Y = rng.normal(size=(30, 2)), rng.normal(size=(30, 2))
    tw = [torch.tensor(w, requires_grad=True) for w in ws]
    tl = 0.5 * ((torch.relu(torch.tensor(X) @ tw[0].T + tw[1]) @ tw[2].T + tw[3] - torch.tensor(Y)) ** 2).sum(1).mean()
    ref = torch.autograd.grad(tl, tw)
    assert max(np.abs(a.numpy() - b).max() for a, b in zip(ref, appendix.bias_mse_grads(*ws, X, Y))) < 1e-12
    d1, n1 = appendix.bias_gd_balances(ws, X, Y, 0.004, 250)
    d4, _ = appendix.bias_gd_balances(ws, X, Y, 0.001, 1000)
    assert 0.125 < d4 / d1 < 0.5 and n1 > d1


def test_log_survival_and_runs():
    ls = np.arange(1.0, 50.0)
    for scheme in ("kaiming", "xavier"):
        P = invariant_set.obstruction_probability(3, ls.astype(int), scheme)
        assert np.allclose(-np.expm1(appendix.log_survival(3, ls, scheme)), P, atol=1e-12)
    assert appendix.boolean_runs(np.array([False, False, True, False])) == [(False, 1, 2), (True, 3, 3), (False, 4, 4)]
    with pytest.raises(ValueError, match="scheme"):
        appendix.log_survival(3, ls, "he")
    with pytest.raises(ValueError, match="mask"):
        appendix.boolean_runs(np.array([1, 0]))


def test_population_loss_gradient_and_flow():
    rng = np.random.default_rng(1)
    u, v, w0, a0 = appendix.draw_construction(rng, 2, 2, -0.5)
    assert np.isclose(w0 @ w0 - a0 @ a0, -0.5) and v[0] < 0 and np.all(a0 > 0)
    xs = rng.normal(size=(400_000, 2))
    vals = 0.5 * ((np.maximum(xs @ w0, 0)[:, None] * a0 - np.maximum(xs @ u, 0)[:, None] * v) ** 2).sum(1)
    assert abs(vals.mean() - appendix.population_loss(w0, a0, u, v)) < 5 * vals.std() / np.sqrt(len(vals))
    h = 1e-6
    gw, ga = appendix.population_grad(w0, a0, u, v)
    num = [(appendix.population_loss(w0 + h * e, a0, u, v) - appendix.population_loss(w0 - h * e, a0, u, v)) / (2 * h)
           for e in np.eye(2)]
    assert np.allclose(gw, num, atol=1e-7)
    sol = appendix.population_flow(w0, a0, u, v, 5.0)
    Z = appendix.flow_at(sol, np.linspace(0, 5, 11))
    assert np.abs((Z[:2] ** 2).sum(0) - (Z[2:] ** 2).sum(0) + 0.5).max() < 1e-7


def test_mc_cells_rule_and_validation():
    rule = appendix.mc_cells_rule()
    cells = rule.check("mc_cells", [["kaiming", 1, 1], ["kaiming", 1, 10]], {})
    assert cells == [("kaiming", 1, 1), ("kaiming", 1, 10)]
    for bad, match in [([["he", 1, 1]], "scheme"), ([["kaiming", 1, 1]], "two widths"),
                       ([["kaiming", 100, 1000], ["kaiming", 100, 1]], "at most")]:
        with pytest.raises(ValueError, match=match):
            rule.check("mc_cells", bad, {})
    with pytest.raises(ValueError, match="c must"):
        appendix.draw_construction(np.random.default_rng(0), 2, 2, 0.5)
    with pytest.raises(ValueError, match="horizon"):
        appendix.population_flow(np.ones(2), np.ones(2), np.ones(2), np.ones(2), 0.0)
