"""markovlib.richlazy.relu_dynamics: the beta_k dynamics of Sec. 5 / App. C.2 against finite differences of the raw
gradient flow, the regime limits, the readout identity, the tasks and the argument checks."""
from __future__ import annotations

import numpy as np
import pytest

from markovlib.richlazy import relu_dynamics, relu_networks
from markovlib.richlazy.minimal_model import conserved_delta


def _problem(seed=0, n=12, d=3, h=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    a = rng.standard_normal(h) * rng.choice([0.2, 1.0, 3.0], h)
    W = rng.standard_normal((h, d)) * rng.choice([0.2, 1.0, 3.0], h)[:, None]
    return X, y, a, W


@pytest.mark.parametrize("gamma", [0.0, 0.3])
def test_spherical_velocity_matches_finite_differences(gamma):
    X, y, a, W = _problem(1)
    eta_a, eta_w = 0.7, 1.9
    ga, gW, _ = relu_networks.gradients(X, y, a, W, gamma)
    va, vW = -eta_a * ga, -eta_w * gW
    eps = 1e-6
    (bp, mp), (bm, mm) = (relu_dynamics.spherical_coordinates(a + s * eps * va, W + s * eps * vW) for s in (1, -1))
    bhat, mu = relu_dynamics.spherical_coordinates(a, W)
    xi = relu_dynamics.driving_vector(X, y, a, W, gamma)
    db, dm = relu_dynamics.spherical_velocity(bhat, mu, conserved_delta(a, W, eta_a, eta_w), xi, eta_a, eta_w)
    np.testing.assert_allclose(db, (bp - bm) / (2 * eps), atol=1e-6)
    np.testing.assert_allclose(dm, (mp - mm) / (2 * eps), atol=1e-6)
    beta_dot = va[:, None] * W + a[:, None] * vW
    M = relu_dynamics.preconditioner(a[:, None] * W, conserved_delta(a, W, eta_a, eta_w), eta_a, eta_w)
    np.testing.assert_allclose(-(M @ xi[..., None])[..., 0], beta_dot, rtol=1e-10, atol=1e-12)


def test_driving_vector_gives_the_gradients():
    X, y, a, W = _problem(2)
    ga, gW, _ = relu_networks.gradients(X, y, a, W)
    xi = relu_dynamics.driving_vector(X, y, a, W)
    np.testing.assert_allclose(np.sum(W * xi, axis=-1), ga, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a[:, None] * xi, gW, rtol=1e-12, atol=1e-14)


def test_regimes_are_limits():
    rng = np.random.default_rng(3)
    bhat = rng.standard_normal((4, 3))
    bhat /= np.linalg.norm(bhat, axis=-1, keepdims=True)
    mu = np.array([0.1, -0.2, 0.3, -0.05])
    xi = rng.standard_normal((4, 3))
    exact0 = relu_dynamics.spherical_velocity(bhat, mu, 0.0, xi)
    for e, b in zip(exact0, relu_dynamics.regime_velocity(bhat, mu, 0.0, xi, "balanced")):
        np.testing.assert_allclose(e, b, rtol=1e-12, atol=1e-15)
    for delta, regime in ((1e4, "upstream"), (-1e4, "downstream")):
        ex = relu_dynamics.spherical_velocity(bhat, mu, delta, xi)
        ap = relu_dynamics.regime_velocity(bhat, mu, delta, xi, regime)
        scale = abs(delta)
        np.testing.assert_allclose(ex[1], ap[1], rtol=1e-8)
        assert np.max(np.abs(ex[0] - ap[0])) < 1e-8 * scale / np.min(np.abs(mu))


def test_readout_size_identity():
    X, y, a, W = _problem(4)
    bhat, mu = relu_dynamics.spherical_coordinates(a, W)
    np.testing.assert_allclose(relu_dynamics.readout_size(mu, conserved_delta(a, W, 0.5, 2.0), 0.5, 2.0), np.abs(a),
                               rtol=1e-12)


def test_preconditioner_at_zero_and_errors():
    M = relu_dynamics.preconditioner(np.zeros(3), 2.0)
    np.testing.assert_allclose(M, 2.0 * np.eye(3))
    with pytest.raises(ValueError, match="delta_k < 0"):
        relu_dynamics.preconditioner(np.zeros(3), -1.0)
    with pytest.raises(ValueError, match="beta"):
        relu_dynamics.preconditioner(1.0, 1.0)


def test_small_init_and_tasks():
    a, W = relu_dynamics.small_init(2, 8, 0.1, np.array([1.0, 0.0, -1.0]), 0)
    assert a.shape == (3, 8) and W.shape == (3, 8, 2)
    np.testing.assert_allclose(conserved_delta(a, W), np.array([1.0, 0.0, -1.0])[:, None] * np.ones(8), atol=1e-12)
    np.testing.assert_allclose(np.abs(a) * np.linalg.norm(W, axis=-1), 0.01, rtol=1e-12)
    X, y = relu_dynamics.xor_task(20, 0.3, 1)
    assert X.shape == (20, 2) and np.all(np.sign(X[:, 0] * X[:, 1]) == y)
    G = relu_dynamics.circle_points(8)
    np.testing.assert_allclose(np.linalg.norm(G, axis=1), 1.0)


@pytest.mark.parametrize("call, match", [
    (lambda: relu_dynamics.xor_task(0, 0.1, 0), "n"),
    (lambda: relu_dynamics.xor_task(10, 1.0, 0), "jitter"),
    (lambda: relu_dynamics.circle_points(0), "m"),
    (lambda: relu_dynamics.spherical_coordinates(np.zeros(2), np.ones((2, 2))), "non-zero"),
    (lambda: relu_dynamics.spherical_velocity(np.ones((2, 2)), np.ones(2), 0.0, np.ones((2, 2))), "unit"),
    (lambda: relu_dynamics.spherical_velocity(np.eye(2), np.array([1.0, 0.0]), 0.0, np.ones((2, 2))), "mu"),
    (lambda: relu_dynamics.regime_velocity(np.eye(2), np.ones(2), 0.0, np.ones((2, 2)), "sideways"), "regime"),
    (lambda: relu_dynamics.readout_size(1.0, 1.0, eta_a=0.0), "eta_a"),
    (lambda: relu_dynamics.driving_vector(np.ones((3, 2)), np.ones(4), np.ones(2), np.ones((2, 2))), "y"),
    (lambda: relu_dynamics.small_init(2, 4, -0.1, 0.0, 0), "tau"),
])
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_flow_velocities_are_the_preconditioned_flow_in_spherical_coordinates():
    """flow_velocities = (spherical_velocity, -M xi) at the conserved delta, and d beta/dt is the raw flow's
    a' w + a w' (relu_networks.gradients)."""
    X, y, a, W = _problem(4)
    eta_a, eta_w = 0.6, 1.7
    dbhat, dmu, dbeta = relu_dynamics.flow_velocities(X, y, a, W, 0.2, eta_a, eta_w)
    ga, gW, _ = relu_networks.gradients(X, y, a, W, 0.2)
    raw = (-eta_a * ga)[:, None] * W + a[:, None] * (-eta_w * gW)
    assert np.max(np.abs(dbeta - raw)) < 1e-12 * np.max(np.abs(raw))
    bhat, mu = relu_dynamics.spherical_coordinates(a, W)
    assert np.max(np.abs(dmu - np.sum(bhat * raw, axis=-1))) < 1e-12 * np.max(np.abs(raw))
    with pytest.raises(ValueError):
        relu_dynamics.flow_velocities(X, y, a, W, 1.5)
