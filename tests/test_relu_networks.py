"""Two-layer piecewise-linear networks (markovlib.richlazy.relu_networks): autograd, finite differences, closed
forms."""
import numpy as np
import pytest
import torch
from scipy.integrate import solve_ivp

from markovlib.numerics.numdiff import fd_gradient
from markovlib.richlazy import relu_networks
from markovlib.richlazy.minimal_model import conserved_delta, kernel_distance


def _problem(seed=0, d=4, n=12, h=6, scale=0.8):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    a = rng.standard_normal(h) * scale
    W = rng.standard_normal((h, d)) * scale
    return X, y, a, W


# independent reference: the network and loss in torch
def _torch_loss(X, y, a, W, gamma):
    Xt, yt = torch.tensor(X), torch.tensor(y)
    at = torch.tensor(a, requires_grad=True)
    Wt = torch.tensor(W, requires_grad=True)
    z = Xt @ Wt.T
    f = torch.maximum(z, gamma * z) @ at
    return torch.mean((f - yt) ** 2), at, Wt, Xt


@pytest.mark.parametrize("gamma", [0.0, 0.2, 1.0])
def test_gradients_match_torch_autograd(gamma):
    X, y, a, W = _problem(seed=1)
    loss, at, Wt, _ = _torch_loss(X, y, a, W, gamma)
    loss.backward()
    ga, gW, _ = relu_networks.gradients(X, y, a, W, gamma)
    assert abs(float(relu_networks.mse(X, y, a, W, gamma)) - loss.item()) < 1e-13
    assert np.max(np.abs(ga - at.grad.numpy())) < 1e-13
    assert np.max(np.abs(gW - Wt.grad.numpy())) < 1e-13


def test_gradients_match_finite_differences():
    X, y, a, W = _problem(seed=2)
    h = a.size

    def loss(theta):
        return float(relu_networks.mse(X, y, theta[:h], theta[h:].reshape(W.shape)))

    ga, gW, _ = relu_networks.gradients(X, y, a, W)
    fd = fd_gradient(loss, np.concatenate([a, W.ravel()]), h=1e-6)
    assert np.max(np.abs(fd - np.concatenate([ga, gW.ravel()]))) < 1e-7


@pytest.mark.parametrize("gamma,eta_a,eta_w", [(0.0, 1.0, 1.0), (0.3, 2.0, 0.5)])
def test_ntk_is_jacobian_gram_from_autograd(gamma, eta_a, eta_w):
    X, _, a, W = _problem(seed=3, n=9)
    Xt = torch.tensor(X)

    def f(at, Wt):
        z = Xt @ Wt.T
        return torch.maximum(z, gamma * z) @ at

    Ja, JW = torch.func.jacrev(f, argnums=(0, 1))(torch.tensor(a), torch.tensor(W))
    J_a, J_W = Ja.numpy(), JW.numpy().reshape(X.shape[0], -1)
    K_ref = eta_a * J_a @ J_a.T + eta_w * J_W @ J_W.T
    K = relu_networks.ntk(X, a, W, gamma, eta_a, eta_w)
    assert np.max(np.abs(K - K_ref)) < 1e-12 * max(1.0, np.max(np.abs(K_ref)))


def test_batched_calls_agree_with_single_runs():
    X, y, a, W = _problem(seed=4)
    a2 = np.stack([a, 0.5 * a])
    W2 = np.stack([W, -W])
    out = relu_networks.gradient_descent(X, y, a2, W2, lr=np.array([0.01, 0.02]), save_steps=[0, 5, 9])
    for r, lr in enumerate([0.01, 0.02]):
        single = relu_networks.gradient_descent(X, y, a2[r], W2[r], lr, [0, 5, 9])
        assert np.max(np.abs(out["a"][:, r] - single["a"])) < 1e-14
        assert np.max(np.abs(out["W"][:, r] - single["W"])) < 1e-14
        assert np.max(np.abs(out["loss"][:, r] - single["loss"])) < 1e-14
    K = relu_networks.ntk(X, a2, W2)
    assert np.max(np.abs(K[1] - relu_networks.ntk(X, a2[1], W2[1]))) < 1e-13


def test_gd_step_is_the_explicit_update_and_delta_changes_by_lr_squared():
    X, y, a, W = _problem(seed=5)
    lr = 0.05
    out = relu_networks.gradient_descent(X, y, a, W, lr, [0, 1])
    ga, gW, _ = relu_networks.gradients(X, y, a, W)
    assert np.max(np.abs(out["a"][1] - (a - lr * ga))) < 1e-15
    change = conserved_delta(out["a"][1], out["W"][1]) - conserved_delta(a, W)
    pred = relu_networks.delta_step_change(X, y, a, W, lr)
    assert np.max(np.abs(change - pred)) < 1e-12 + 1e-9 * np.max(np.abs(pred))
    # layer-wise learning rates: delta = eta_w a^2 - eta_a |w|^2
    out = relu_networks.gradient_descent(X, y, a, W, lr, [0, 1], eta_a=2.0, eta_w=0.5)
    change = conserved_delta(out["a"][1], out["W"][1], 2.0, 0.5) - conserved_delta(a, W, 2.0, 0.5)
    pred = relu_networks.delta_step_change(X, y, a, W, lr, eta_a=2.0, eta_w=0.5)
    assert np.max(np.abs(change - pred)) < 1e-12 + 1e-9 * np.max(np.abs(pred))


def test_delta_drift_of_gd_halves_with_the_step_and_flow_conserves_it():
    X, y, a, W = _problem(seed=6, scale=0.5)
    T = 1.0
    drifts = []
    for lr in (0.02, 0.01, 0.005):
        out = relu_networks.gradient_descent(X, y, a, W, lr, [int(round(T / lr))])
        drifts.append(np.max(np.abs(conserved_delta(out["a"][-1], out["W"][-1]) - conserved_delta(a, W))))
    r1, r2 = drifts[0] / drifts[1], drifts[1] / drifts[2]
    assert 1.7 < r1 < 2.3 and 1.7 < r2 < 2.3

    # independent reference: gradient flow by scipy with a torch-free numpy right-hand side written here
    h, d = W.shape

    def rhs(_t, th):
        aa, WW = th[:h], th[h:].reshape(h, d)
        Z = X @ WW.T
        r = np.maximum(Z, 0) @ aa - y
        return -np.concatenate([2 * np.maximum(Z, 0).T @ r / len(y),
                                (2 * ((r[:, None] * (Z > 0)) * aa).T @ X / len(y)).ravel()])

    sol = solve_ivp(rhs, (0, T), np.concatenate([a, W.ravel()]), method="DOP853", rtol=1e-11, atol=1e-13)
    aT, WT = sol.y[:h, -1], sol.y[h:, -1].reshape(h, d)
    assert np.max(np.abs(conserved_delta(aT, WT) - conserved_delta(a, W))) < 1e-7


def test_symmetric_init_outputs_zero_and_has_the_requested_delta():
    taus = np.array([0.1, 1.0, 2.0])[:, None]
    deltas = np.array([-1.0, 0.0, 1.0])[None, :]
    a, W = relu_networks.student_init(5, 8, taus, deltas, seed=3)
    assert a.shape == (3, 3, 8) and W.shape == (3, 3, 8, 5)
    dk = conserved_delta(a, W)
    assert np.max(np.abs(dk - np.broadcast_to(deltas, (3, 3))[..., None])) < 1e-12
    X = relu_networks.sphere_inputs(7, 5, seed=1)
    assert np.max(np.abs(relu_networks.forward(X, a, W))) < 1e-15
    alpha = relu_networks.alpha_for_delta(deltas, taus)
    assert np.allclose(np.abs(a[..., 0]), taus * alpha) and np.allclose(np.linalg.norm(W[..., 0, :], axis=-1),
                                                                         taus / alpha)


def test_alpha_for_delta_is_stable_at_extremes():
    al = relu_networks.alpha_for_delta(np.array([-1e300, -1e6, 0.0, 1e6, 1e300]), 1.0)
    assert np.all(np.isfinite(al)) and np.all(al > 0)
    for delta, tau in [(1.0, 1e-200), (-1.0, 1e-200), (1e200, 1e100), (-3.0, 1e150), (0.0, 1e-300)]:
        an, wn = relu_networks.layer_scales(delta, tau)
        assert np.isfinite(an) and np.isfinite(wn)
        scale = max(an, wn) ** 2
        assert abs(an**2 - wn**2 - delta) <= 1e-12 * scale
        a, W = relu_networks.student_init(3, 4, tau, delta, seed=0)
        assert np.all(np.isfinite(a)) and np.all(np.isfinite(W))
    tau = 1e-3
    for delta in (-1.0, 1.0):
        al = relu_networks.alpha_for_delta(delta, tau)
        assert abs(tau**2 * (al**2 - al**-2) - delta) < 1e-9
    assert relu_networks.alpha_for_delta(0.0, 5.0) == 1.0


def test_patterns_hamming_parameter_distance_and_teacher_student():
    X = relu_networks.sphere_inputs(50, 3, seed=0)
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0)
    W = np.array([[1.0, 0, 0], [0, 1.0, 0]])
    C = relu_networks.activation_pattern(X, W)
    assert relu_networks.hamming_distance(C, C) == 0.0 and relu_networks.hamming_distance(C, ~C) == 1.0
    assert abs(relu_networks.hamming_distance(C, relu_networks.activation_pattern(X, W * [[1], [-1]])) - 0.5) < 1e-15
    a = np.array([1.0, 2.0])
    assert abs(relu_networks.parameter_distance(a + [3, 0], W + [[0, 4, 0], [0, 0, 0]], a, W) - 5.0) < 1e-15
    p = relu_networks.teacher_student(4, 30, 6, 3, [0.1, 1.0], [-1.0, 0.0, 1.0], seed=2, n_test=40)
    assert p["a0"].shape == (2, 3, 6) and p["W0"].shape == (2, 3, 6, 4) and p["X_test"].shape == (40, 4)
    assert set(np.abs(p["a_star"])) == {1.0} and np.allclose(np.linalg.norm(p["W_star"], axis=1), 1.0)
    assert np.allclose(p["y"], relu_networks.forward(p["X"], p["a_star"], p["W_star"]))
    K0 = relu_networks.ntk(p["X"], p["a0"][0, 0], p["W0"][0, 0])
    assert kernel_distance(K0, 3.0 * K0) < 1e-14


def test_invalid_arguments_raise_value_errors_naming_them():
    X, y, a, W = _problem()
    with pytest.raises(ValueError, match="gamma"):
        relu_networks.forward(X, a, W, gamma=1.5)
    with pytest.raises(ValueError, match="lr"):
        relu_networks.gradient_descent(X, y, a, W, lr=-1.0, save_steps=[1])
    with pytest.raises(ValueError, match="save_steps"):
        relu_networks.gradient_descent(X, y, a, W, lr=0.1, save_steps=[3, 2])
    with pytest.raises(ValueError, match="h must be even"):
        relu_networks.student_init(3, 5, 1.0, 0.0, seed=0)
    with pytest.raises(ValueError, match="tau"):
        relu_networks.alpha_for_delta(1.0, 0.0)
    with pytest.raises(ValueError, match="X"):
        relu_networks.forward(X[:, :2], a, W)
    with pytest.raises(ValueError, match="a"):
        relu_networks.forward(X, np.array([np.nan] * a.size), W)
    with pytest.raises(ValueError, match="seed"):
        relu_networks.sphere_inputs(3, 2, seed=-1)
    with pytest.raises(ValueError, match="eta_a"):
        relu_networks.ntk(X, a, W, eta_a=0.0)
    with pytest.raises(FloatingPointError, match="lr"):
        relu_networks.gradient_descent(X, y, a * 30, W * 30, lr=1e3, save_steps=[200])


def test_check_gamma_and_check_params():
    assert relu_networks.check_gamma(0) == 0.0 and relu_networks.check_gamma(1) == 1.0
    a, W, X = relu_networks.check_params([1, 2], [[1, 0], [0, 1]], [[1, 1]])
    assert a.dtype == float and W.shape == (2, 2) and X.shape == (1, 2)
    for bad in (-0.1, 1.5, [0.1, 0.2], float("nan")):
        with pytest.raises(ValueError, match="gamma"):
            relu_networks.check_gamma(bad)
    with pytest.raises(ValueError, match="a must have shape"):
        relu_networks.check_params([1, 2, 3], [[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="X must have shape"):
        relu_networks.check_params([1, 2], [[1, 0], [0, 1]], [[1, 1, 1]])
