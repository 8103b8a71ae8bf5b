"""Tests of markovlib.markov.bias_flow: the gradient flow and gradient descent with the bias as a free parameter."""
import numpy as np
import pytest
import torch

from markovlib.markov import bias_flow, canonical
from markovlib.markov.energy import energy, predict_limit
from markovlib.markov.flow import gradient_descent


def _loss_torch(x, p, q):
    """independent reference (do not replace with markovlib): Lemma 2 written with torch's BCE."""
    e, w, b = x[..., 0], x[..., 1], x[..., 2]
    c = e**2 * (1 + 2 * w * torch.abs(w))
    beta = b - e**2 / 2
    pi0, pi1 = q / (p + q), p / (p + q)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    out = 0.0
    for x_, y, wt in ((0, 0, pi0 * (1 - p)), (0, 1, pi0 * p), (1, 0, pi1 * q), (1, 1, pi1 * (1 - q))):
        z = c * x_ + beta
        out = out + wt * bce(z, torch.full_like(z, float(y)), reduction="none")
    return out


def test_field_is_minus_autograd_gradient():
    rng = np.random.default_rng(1)
    x = rng.uniform(-1.5, 1.5, (50, 3))
    for p, q in ((0.9, 0.8), (0.2, 0.3)):
        T = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        (g,) = torch.autograd.grad(_loss_torch(T, p, q).sum(), T)
        f = np.stack(bias_flow.field(x[:, 0], x[:, 1], x[:, 2], p, q), -1)
        assert np.abs(f + g.numpy()).max() < 1e-12


def test_energy_balance_law_and_rate():
    """dE/dt = 2 e^2 dL/db: the rate equals grad E . (de/dt, dw/dt), and the integrated balance J = E(end) - E(0)."""
    rng = np.random.default_rng(2)
    e, w, b = rng.uniform(-1.5, 1.5, (3, 40))
    p, q = 0.3, 0.2
    de, dw, _ = bias_flow.field(e, w, b, p, q)
    direct = 2 * e * de + (-2 * w - 1 / np.abs(w)) * dw
    assert np.allclose(bias_flow.energy_rate(e, w, b, p, q), direct, atol=1e-12)
    r = bias_flow.integrate_free_bias(e[:10], w[:10], b[:10], p, q, t_max=200.0)
    assert np.abs(r.energy_drift - r.balance).max() < 1e-5
    assert np.abs(r.energy_drift).max() > 1e-3  # the energy really drifts with a free bias


def test_energy_balance_holds_where_w_approaches_zero():
    """From b0 = 0 at (0.02, 0.88) the flow from (-2, 0.087) runs to w ~ 1e-12 (E contains log|w|): w is held to
    relative accuracy, so the integrated balance still matches E(end) - E(0) (an absolute tolerance on w left 5e-5)."""
    p, q = 0.02, 0.88
    r = bias_flow.integrate_free_bias([-2.0, -2.0], [4 / 46, 12 / 46], 0.0, p, q, t_max=2e4)
    assert np.abs(r.w).min() < 1e-10
    assert np.abs(r.energy_drift - r.balance).max() < 1e-6 * (1 + np.abs(r.balance).max())


def test_flow_from_optimal_bias_on_the_axis_stays():
    """On the w-axis at b = log(p/q) every point is critical (Thm 6): the flow does not move."""
    p, q = 0.7, 0.6
    w0 = np.array([-1.5, -0.3, 0.8])
    r = bias_flow.integrate_free_bias(0.0, w0, np.log(p / q), p, q, t_max=100.0)
    assert np.allclose(r.w, w0) and np.allclose(r.e, 0) and np.allclose(r.b, np.log(p / q))


def test_free_bias_flow_reaches_the_predicted_basin_far_from_separatrices():
    p, q = 0.9, 0.9
    e0 = np.array([0.5, 1.0, 0.3])
    w0 = np.array([0.5, -1.5, -0.3])  # w0 > 0: local; w0 < -1/sqrt2: global; small energy near 0-: local
    r = bias_flow.integrate_free_bias(e0, w0, canonical.optimal_bias(e0, w0, p, q), p, q, t_max=2e4)
    assert list(r.outcome) == list(predict_limit(e0, w0, p, q).outcome)
    assert np.all(np.sign(r.w) == np.sign(w0))  # w = 0 stays a barrier (Lemma 9)
    assert np.allclose(r.b, canonical.optimal_bias(r.e, r.w, p, q), atol=1e-5)  # ends at b* (Thm 6)


def test_t_eval_path_shape():
    r = bias_flow.integrate_free_bias([0.5, 0.6], [0.4, -1.2], 0.0, 0.8, 0.7, t_max=10.0, t_eval=np.linspace(0, 5, 6))
    assert r.path.shape == (6, 4, 2) and r.t[-1] == 5.0
    assert np.allclose(energy(r.path[:, 0], r.path[:, 1]) - energy(r.path[0, 0], r.path[0, 1]), r.path[:, 3],
                       atol=1e-6)


def test_newton_bias_step_converges_to_b_star():
    rng = np.random.default_rng(3)
    e, w = rng.uniform(-1.5, 1.5, (2, 30))
    p, q = 0.25, 0.4
    b = np.zeros_like(e)
    for _ in range(40):
        b = bias_flow.bias_newton_step(e, w, b, p, q)
    assert np.allclose(b, canonical.optimal_bias(e, w, p, q), atol=1e-10)


def test_extra_bias_step_tracks_reduced_descent():
    """One Newton bias step per update keeps (e, w) on the reduced gradient descent; plain joint descent does not."""
    e0 = np.array([0.8, 1.1, -0.6])
    w0 = np.array([-0.5, 0.4, -1.3])
    p, q = 0.2, 0.3
    b0 = canonical.optimal_bias(e0, w0, p, q)
    red = gradient_descent(e0, w0, p, q, lr=0.01, steps=1000, record_every=1000)[-1]
    ext = bias_flow.gradient_descent_free_bias(e0, w0, b0, p, q, 0.01, 1000, bias_steps=1, record_every=1000)[-1]
    joint = bias_flow.gradient_descent_free_bias(e0, w0, b0, p, q, 0.01, 1000, bias_steps=0, record_every=1000)[-1]
    err_ext = np.abs(ext[:, :2] - red).max()
    err_joint = np.abs(joint[:, :2] - red).max()
    assert err_ext < 1e-5 and err_joint > 100 * err_ext


@pytest.mark.parametrize("kw, name", [({"p": 1.5}, "p"), ({"w0": 0.0}, "w0"), ({"t_max": -1.0}, "t_max"),
                                      ({"method": "RK45"}, "method")])
def test_argument_validation(kw, name):
    args = {"e0": 0.5, "w0": 0.5, "b0": 0.0, "p": 0.3, "q": 0.3, "t_max": 1.0}
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        bias_flow.integrate_free_bias(**args)


def test_gd_argument_validation():
    with pytest.raises(ValueError, match="lr"):
        bias_flow.gradient_descent_free_bias(0.5, 0.5, 0.0, 0.3, 0.3, lr=0.0, steps=3)
    with pytest.raises(ValueError, match="bias_steps"):
        bias_flow.gradient_descent_free_bias(0.5, 0.5, 0.0, 0.3, 0.3, lr=0.1, steps=3, bias_steps=-1)
    with pytest.raises(ValueError, match="max_step"):
        bias_flow.bias_newton_step(0.5, 0.5, 0.0, 0.3, 0.3, max_step=0.0)
