"""Tests of markovlib.richlazy.minimal_model / minimal_exact against independent references (torch autograd,
independent integration, closed forms, finite differences, scalar root searches)."""
import numpy as np
import pytest
import torch
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from markovlib.numerics.numdiff import fd_gradient
from markovlib.richlazy import minimal_exact as RE
from markovlib.richlazy import minimal_model as R
from markovlib.richlazy.minimal_exact import exact_parameters, q_delta_prime

PAPER_DELTAS = [-4, -2, -1, 0, 1, 2, 4]


def _whitened(beta_star, n=5, seed=0):
    """X with X^T X / n = I (d = 2) and y with X^T y / n = beta_star, plus a residual orthogonal to range(X)."""
    rng = np.random.default_rng(seed)
    Qm, _ = np.linalg.qr(rng.normal(size=(n, n)))
    X = np.sqrt(n) * Qm[:, :2]
    y = X @ beta_star + 0.3 * Qm[:, 2]
    return X, y


def _init(beta0, delta):
    a0 = np.sqrt((delta + np.sqrt(delta**2 + 4 * beta0 @ beta0)) / 2)
    return a0, beta0 / a0


def _mu_phi(a, w, beta_star):
    wn = np.linalg.norm(w, axis=1)
    return a * wn, w @ beta_star / (wn * np.linalg.norm(beta_star))


def test_conserved_delta_kept_and_flow_matches_autograd_field():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(7, 3)), rng.normal(size=7)
    eta_a, eta_w = 0.7, 1.9
    a0, w0 = 0.8, rng.normal(size=3)
    t = np.linspace(0, 15, 61)
    a, w = R.single_neuron_flow(a0, w0, X, y, t, eta_a=eta_a, eta_w=eta_w)
    assert a.shape == (61,) and w.shape == (61, 3)
    d = R.conserved_delta(a, w, eta_a, eta_w)
    assert np.max(np.abs(d - d[0])) < 1e-9

    # independent reference: torch autograd gradient of the loss, integrated by LSODA
    Xt, yt = torch.tensor(X), torch.tensor(y)

    def rhs(_, th):
        p = torch.tensor(th, requires_grad=True)
        loss = ((Xt @ (p[0] * p[1:]) - yt) ** 2).sum() / (2 * len(y))
        (g,) = torch.autograd.grad(loss, p)
        g = g.numpy()
        return np.concatenate(([-eta_a * g[0]], -eta_w * g[1:]))

    ref = solve_ivp(rhs, (0, 15), np.concatenate(([a0], w0)), method="LSODA", t_eval=t, rtol=1e-12, atol=1e-14)
    assert np.max(np.abs(ref.y[0] - a)) < 1e-7 and np.max(np.abs(ref.y[1:].T - w)) < 1e-7


@pytest.mark.parametrize("delta", PAPER_DELTAS)
def test_exact_mu_phi_matches_flow_paper_settings(delta):
    beta_star, beta0 = np.array([0.0, 1.0]), np.array([-1.0, 0.0])
    X, y = _whitened(beta_star, seed=delta + 10)
    a0, w0 = _init(beta0, delta)
    t = np.linspace(0, 20, 81)
    a, w = R.single_neuron_flow(a0, w0, X, y, t)
    mu, phi = _mu_phi(a, w, beta_star)
    mu_e, phi_e = RE.exact_mu_phi(t, delta, 1.0, mu[0], phi[0])
    assert np.max(np.abs(mu - mu_e)) < 1e-8 and np.max(np.abs(phi - phi_e)) < 1e-8


def test_exact_random_cases_including_zero_crossings_of_a():
    rng = np.random.default_rng(7)
    t = np.linspace(0, 12, 49)
    crossings = 0
    for _ in range(25):
        delta, mu0, phi0, b = rng.uniform(-5, 5), rng.uniform(-2, 2), rng.uniform(-1, 1), rng.uniform(0.3, 2)
        beta_star = b * np.array([0.6, 0.8])
        X, y = _whitened(beta_star, seed=1)
        e = beta_star / b
        a02, wn02 = RE.orbit_squares(abs(mu0), delta)
        a0 = np.sign(mu0) * np.sqrt(a02)
        w0 = np.sqrt(wn02) * (phi0 * e + np.sqrt(1 - phi0**2) * np.array([-0.8, 0.6]))
        a, w = R.single_neuron_flow(a0, w0, X, y, t)
        mu, phi = _mu_phi(a, w, beta_star)
        mu_e, phi_e = RE.exact_mu_phi(t, delta, b, mu0, phi0)
        assert np.max(np.abs(mu - mu_e)) < 1e-7 and np.max(np.abs(phi - phi_e)) < 1e-7
        crossings += bool(np.any(np.sign(a) != np.sign(a0)))
    assert crossings >= 3  # the zero crossing of a (Lemma A.1) is exercised


def test_balanced_tanh_law_and_reduced_field():
    t = np.linspace(0, 5, 11)
    for b, phi0, mu0 in [(1.0, 0.3, 0.1), (2.0, -0.5, 0.7)]:
        _, phi = RE.exact_mu_phi(t, 0.0, b, mu0, phi0)
        assert np.max(np.abs(phi - np.tanh(b * t + np.arctanh(phi0)))) < 1e-12
    # the reduced field is the time derivative of the exact solution (central differences)
    h = 1e-5
    for delta, mu0, phi0 in [(-3.0, 0.4, -0.2), (0.0, 0.2, 0.1), (2.5, 1.2, 0.6), (1e4, 0.5, 0.3)]:
        ts = np.array([0.3, 1.0, 2.0])
        mu, phi = RE.exact_mu_phi(ts, delta, 1.3, mu0, phi0)
        mp, pp = RE.exact_mu_phi(ts + h, delta, 1.3, mu0, phi0)
        mm, pm = RE.exact_mu_phi(ts - h, delta, 1.3, mu0, phi0)
        dmu, dphi = R.reduced_vector_field(mu, phi, delta, 1.3)
        scale = 1 + abs(delta)
        assert np.max(np.abs((mp - mm) / (2 * h) - dmu)) < 1e-5 * scale
        assert np.max(np.abs((pp - pm) / (2 * h) - dphi)) < 1e-5 * scale


def test_extreme_inputs_are_stable():
    t = np.array([0.0, 1e3, 1e300])
    for delta in [1e8, -1e8, 0.0, 3.0, -3.0]:
        for phi0 in [-1.0, 1.0, 0.0]:
            for mu0 in [0.0, 0.5, -2.0]:
                mu, phi = RE.exact_mu_phi(t, delta, 1.5, mu0, phi0)
                assert np.all(np.isfinite(mu)) and np.all(np.isfinite(phi))
                assert np.all(np.abs(phi) <= 1)
    # generic initial conditions converge to |mu| = ||beta*||, |phi| = 1
    mu, phi = RE.exact_mu_phi([1e300], -2.0, 1.5, 0.3, 0.4)
    assert abs(abs(mu[0]) - 1.5) < 1e-12 and abs(abs(phi[0]) - 1) < 1e-12
    # a saddle (a = 0, w orthogonal to beta*) stays there
    a, u, s = exact_parameters([0.0, 10.0, 1e300], -2.0, 1.0, 0.0, 0.0)
    assert np.all(a == 0) and np.all(u == 0) and np.allclose(s, np.sqrt(2.0))


def test_ntk_and_M_against_autograd_jacobian():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(6, 3))
    for _ in range(5):
        a, w = rng.normal(), rng.normal(size=3)
        eta_a, eta_w = rng.uniform(0.2, 2), rng.uniform(0.2, 2)
        th = torch.tensor(np.concatenate(([a], w)))
        J = torch.autograd.functional.jacobian(lambda p: torch.tensor(X) @ (p[0] * p[1:]), th).numpy()
        K_ref = J @ np.diag([eta_a] + [eta_w] * 3) @ J.T
        assert np.max(np.abs(R.ntk(X, a, w, eta_a, eta_w) - K_ref)) < 1e-12 * (1 + np.abs(K_ref).max())
        # M(beta, delta) from beta alone equals a^2 I + w w^T (eta = 1): the Jacobian of beta = a w
        Jb = torch.autograd.functional.jacobian(lambda p: p[0] * p[1:], th).numpy()
        M = R.function_space_M(a * w, R.conserved_delta(a, w))
        assert np.max(np.abs(M - Jb @ Jb.T)) < 1e-12 * (1 + np.abs(M).max())
    assert np.allclose(R.function_space_M(np.zeros(2), 2.0), 2 * np.eye(2))
    with pytest.raises(ValueError, match="beta"):
        R.function_space_M(np.zeros(2), -1.0)


def test_kernel_distance_lazy_and_rich():
    K = np.array([[2.0, 1.0], [1.0, 3.0]])
    assert R.kernel_distance(K, 5 * K) < 1e-15
    assert abs(R.kernel_distance(np.diag([1.0, 0]), np.diag([0, 1.0])) - 1) < 1e-15


def test_q_delta_closed_form():
    r = np.linspace(0.05, 3, 9)
    for delta in [-1e6, -5, -1, 0, 1, 5, 1e6]:
        fd = np.array([fd_gradient(lambda x: RE.q_delta(x[0], delta), [ri], h=1e-6)[0] for ri in r])
        ref = 1.5 * np.sqrt(np.sqrt(r**2 + delta**2 / 4) - delta / 2) if abs(delta) < 1e3 else q_delta_prime(r, delta)
        assert np.max(np.abs(fd - ref) / ref) < 1e-6
        assert RE.q_delta(0.0, delta) == 0
    assert np.max(np.abs(RE.q_delta(r, 0.0) - r**1.5)) < 1e-14
    # delta -> +infinity: q ~ (3/4) r^2 / sqrt(delta), no cancellation
    assert np.max(np.abs(RE.q_delta(r, 1e12) / (0.75 * r**2 / 1e6) - 1)) < 1e-9


def test_implicit_bias_limit_against_flow_and_scalar_root():
    X, y, beta0 = np.array([[0.5, 1.0]]), np.array([1.1]), np.array([0.4, 0.05])
    n_vec = np.array([-1.0, 0.5]) / np.sqrt(1.25)
    beta_p = np.array([0.44, 0.88])
    for delta in [-4.0, -1.0, 0.0, 1.0, 4.0]:
        lim = RE.implicit_bias_limit(X, y, beta0, delta)
        a0, w0 = _init(beta0, delta)
        a, w = R.single_neuron_flow(a0, w0, X, y, [0.0, 300.0])
        assert np.max(np.abs(a[-1] * w[-1] - lim)) < 1e-8

        def dpsi(z):  # independent reference: derivative of Psi along the 1-D null space
            beta = beta_p + z * n_vec
            r = np.linalg.norm(beta)
            qp = 1.5 * np.sqrt(np.sqrt(r**2 + delta**2 / 4) - delta / 2)
            qp0 = 1.5 * np.sqrt(np.sqrt(beta0 @ beta0 + delta**2 / 4) - delta / 2)
            return qp * (beta @ n_vec) / r - qp0 * (beta0 @ n_vec) / np.linalg.norm(beta0)

        z = brentq(dpsi, -5, 5, xtol=1e-14)
        assert np.max(np.abs(beta_p + z * n_vec - lim)) < 1e-9
    # the two limits of delta: min ||beta - beta0|| (delta -> +inf) and the direction of beta0 (delta -> -inf)
    lazy_limit = beta0 + (1.1 - X[0] @ beta0) * X[0] / 1.25
    assert np.max(np.abs(RE.implicit_bias_limit(X, y, beta0, 1e8) - lazy_limit)) < 1e-5
    assert np.max(np.abs(RE.implicit_bias_limit(X, y, beta0, -1e8) - 1.1 / (X[0] @ beta0) * beta0)) < 1e-5
    # full rank: the OLS solution; a 2-D null space: stationarity of Psi on the null space
    Xf = np.array([[1.0, 0.2], [0.3, 2.0]])
    assert np.allclose(RE.implicit_bias_limit(Xf, [1.0, 2.0], beta0, 1.0), np.linalg.solve(Xf, [1.0, 2.0]))
    X3 = np.array([[1.0, 2.0, -0.5]])
    b3 = np.array([0.3, -0.2, 0.4])
    lim = RE.implicit_bias_limit(X3, [0.7], b3, -2.0)
    assert abs(X3[0] @ lim - 0.7) < 1e-12
    g = fd_gradient(lambda v: RE.psi_delta(v, b3, -2.0), lim, h=1e-6)
    N = np.linalg.svd(X3)[2][1:].T
    assert np.max(np.abs(N.T @ g)) < 1e-7


def test_validation():
    X, y = np.eye(2), np.ones(2)
    with pytest.raises(ValueError, match="eta_a"):
        R.single_neuron_flow(1.0, [1.0, 0.0], X, y, [0, 1], eta_a=0)
    with pytest.raises(ValueError, match="w0"):
        R.single_neuron_flow(1.0, [1.0, 0.0, 0.0], X, y, [0, 1])
    with pytest.raises(ValueError, match="y"):
        R.single_neuron_flow(1.0, [1.0, 0.0], X, np.ones(3), [0, 1])
    with pytest.raises(ValueError, match="t"):
        R.single_neuron_flow(1.0, [1.0, 0.0], X, y, [1, 0])
    with pytest.raises(ValueError, match="a0"):
        R.single_neuron_flow(np.nan, [1.0, 0.0], X, y, [0, 1])
    with pytest.raises(ValueError, match="phi0"):
        RE.exact_mu_phi([0, 1], 0.0, 1.0, 0.5, 1.5)
    with pytest.raises(ValueError, match="beta_star_norm"):
        RE.exact_mu_phi([0, 1], 0.0, 0.0, 0.5, 0.5)
    with pytest.raises(ValueError, match="t"):
        RE.exact_mu_phi([np.inf], 0.0, 1.0, 0.5, 0.5)
    with pytest.raises(ValueError, match="eta_w"):
        R.ntk(X, 1.0, [1.0, 0.0], eta_w=-1)
    with pytest.raises(ValueError, match="beta0"):
        RE.implicit_bias_limit([[0.5, 1.0]], [1.1], [0.0, 0.0], 1.0)
    with pytest.raises(ValueError, match="y"):
        RE.implicit_bias_limit([[0.5, 1.0]], [1.1, 2.0], [0.4, 0.05], 1.0)
    with pytest.raises(ValueError, match="delta"):
        RE.implicit_bias_limit([[0.5, 1.0]], [1.1], [0.4, 0.05], np.nan)
