"""markovlib.richlazy.linear_networks against independent references: torch autograd on the network, finite differences
of the integrated flow, closed forms."""
import numpy as np
import pytest
import torch

from markovlib.numerics.numdiff import fd_gradient
from markovlib.richlazy import linear_networks as L
from markovlib.richlazy.minimal_model import conserved_delta

SHAPES = [(3, 4, 2), (2, 5, 3), (4, 2, 1), (1, 3, 2)]


def _jacobian_M(A, W, eta_a, eta_w):
    """M = J diag(eta) J^T with J = d vec(A W) / d(A, W) by torch autograd (vec stacks columns)."""
    c, h = A.shape
    d = W.shape[1]

    def beta_vec(theta):
        a = theta[: c * h].reshape(c, h)
        w = theta[c * h:].reshape(h, d)
        return (a @ w).T.reshape(-1)  # column stacking

    theta = torch.tensor(np.concatenate([A.ravel(), W.ravel()]), dtype=torch.float64)
    J = torch.autograd.functional.jacobian(beta_vec, theta).numpy()
    eta = np.concatenate([np.full(c * h, eta_a), np.full(h * d, eta_w)])
    return (J * eta) @ J.T, J


@pytest.mark.parametrize("d,h,c", SHAPES)
def test_thm41_preconditioner_matches_autograd_and_beta_form(d, h, c):
    rng = np.random.default_rng(d * 100 + h * 10 + c)
    A, W = rng.standard_normal((c, h)), rng.standard_normal((h, d))
    eta_a, eta_w = 0.7, 1.9
    M = L.preconditioner(A, W, eta_a, eta_w)
    MJ, _ = _jacobian_M(A, W, eta_a, eta_w)
    assert np.max(np.abs(M - MJ)) < 1e-12 * (1 + np.abs(MJ).max())
    betas = np.einsum("ik,kj->kij", A, W)
    Mb = L.preconditioner_from_beta(betas, L.neuron_deltas(A, W, eta_a, eta_w), eta_a, eta_w)
    assert np.max(np.abs(Mb - M)) < 1e-12 * (1 + np.abs(M).max())


def test_beta_form_is_stable_at_extreme_deltas():
    for delta in (1e8, -1e8, 1e-12, -1e-12):
        A, W = L.init_with_deltas(3, 2, [delta] * 4, [0.3, 1.0, 2.0, 0.01], seed=1)
        M = L.preconditioner(A, W)
        Mb = L.preconditioner_from_beta(np.einsum("ik,kj->kij", A, W), np.full(4, delta))
        assert np.all(np.isfinite(Mb))
        assert np.max(np.abs(Mb - M)) < 1e-10 * np.abs(M).max()


def test_deltas_and_conserved_matrix():
    A, W = L.init_with_deltas(4, 3, [1.0, -2.0, 0.3, 0.0], [0.5, 0.2, 1.0, 0.1], seed=0, eta_a=2.0, eta_w=0.5)
    assert np.allclose(L.neuron_deltas(A, W, 2.0, 0.5), [1.0, -2.0, 0.3, 0.0], atol=1e-12)
    assert np.allclose(np.linalg.norm(A, axis=0) * np.linalg.norm(W, axis=1), [0.5, 0.2, 1.0, 0.1], atol=1e-12)
    assert np.allclose(np.diag(L.conserved_matrix(A, W, 2.0, 0.5)), L.neuron_deltas(A, W, 2.0, 0.5))
    # c = 1: the per-neuron delta is the single-neuron delta of markovlib.richlazy.minimal_model
    A1, W1 = np.random.default_rng(1).standard_normal((1, 5)), np.random.default_rng(2).standard_normal((5, 3))
    assert np.allclose(L.neuron_deltas(A1, W1, 0.3, 1.7), conserved_delta(A1[0], W1, 0.3, 1.7))


def test_flow_conserves_matrix_and_follows_preconditioned_gradient():
    rng = np.random.default_rng(5)
    d, h, c, n = 3, 4, 2, 7
    X, Y = rng.standard_normal((n, d)), rng.standard_normal((n, c))
    A0, W0 = 0.5 * rng.standard_normal((c, h)), 0.5 * rng.standard_normal((h, d))
    eta_a, eta_w = 1.3, 0.6
    t = np.linspace(0, 3, 7)
    A, W = L.gradient_flow(A0, W0, X, Y, t, eta_a, eta_w)
    C0 = L.conserved_matrix(A0, W0, eta_a, eta_w)
    drift = max(np.abs(L.conserved_matrix(a, w, eta_a, eta_w) - C0).max() for a, w in zip(A, W))
    assert drift < 1e-9
    # d vec(beta)/dt by central differences of the integrated flow against -M vec(grad L)
    tc, eps = 1.5, 1e-4
    (Am, Ap), (Wm, Wp) = L.gradient_flow(A0, W0, X, Y, [tc - eps, tc + eps], eta_a, eta_w)
    (Ac,), (Wc,) = L.gradient_flow(A0, W0, X, Y, [tc], eta_a, eta_w)
    dbeta = (L.vec(Ap @ Wp) - L.vec(Am @ Wm)) / (2 * eps)
    G = L.beta_gradient(X, Y, Ac @ Wc)
    pred = -L.preconditioner(Ac, Wc, eta_a, eta_w) @ L.vec(G)
    assert np.max(np.abs(dbeta - pred)) < 1e-6 * (1 + np.abs(pred).max())
    # the beta gradient against autograd on the loss
    b = torch.tensor(Ac @ Wc, requires_grad=True)
    loss = ((torch.tensor(X) @ b.T - torch.tensor(Y)) ** 2).sum() / (2 * n)
    loss.backward()
    assert np.max(np.abs(b.grad.numpy() - G)) < 1e-13


def test_ntk_matches_output_jacobian():
    rng = np.random.default_rng(8)
    d, h, c, n = 3, 5, 2, 4
    X = rng.standard_normal((n, d))
    A, W = rng.standard_normal((c, h)), rng.standard_normal((h, d))
    K = L.ntk(X, A, W, 0.4, 2.5)
    Xk = np.kron(X, np.eye(c))
    assert np.allclose(K, Xk @ L.preconditioner(A, W, 0.4, 2.5) @ Xk.T, atol=1e-12)

    def outputs(theta):  # sample-major outputs f(x_i)_j
        a = theta[: c * h].reshape(c, h)
        w = theta[c * h:].reshape(h, d)
        return (torch.tensor(X) @ (a @ w).T).reshape(-1)

    theta = torch.tensor(np.concatenate([A.ravel(), W.ravel()]))
    J = torch.autograd.functional.jacobian(outputs, theta).numpy()
    eta = np.concatenate([np.full(c * h, 0.4), np.full(h * d, 2.5)])
    assert np.allclose(K, (J * eta) @ J.T, atol=1e-11)


@pytest.mark.parametrize("d,h,c,delta", [(3, 3, 3, 0.8), (3, 3, 3, -0.8), (3, 3, 3, 0.0), (2, 3, 3, 1.5),
                                         (4, 4, 2, -1.2)])
def test_thm42_isotropic(d, h, c, delta):
    A, W = L.isotropic_init(d, h, c, delta, scale=0.7, seed=4, eta_a=1.5, eta_w=0.8)
    assert np.max(np.abs(L.conserved_matrix(A, W, 1.5, 0.8) - delta * np.eye(h))) < 1e-12
    M = L.preconditioner(A, W, 1.5, 0.8)
    assert np.max(np.abs(L.isotropic_preconditioner(A @ W, delta, 1.5, 0.8) - M)) < 1e-11


def test_thm42_needs_h_equal_d_when_delta_negative():
    A, W = L.isotropic_init(4, 2, 3, -1.0, scale=0.7, seed=4)  # h < d: W^T W is rank deficient
    assert np.max(np.abs(L.isotropic_preconditioner(A @ W, -1.0) - L.preconditioner(A, W))) > 0.1


def test_singular_value_rates_against_flow():
    d = h = c = 3
    delta = -0.6
    rng = np.random.default_rng(11)
    X, Y = rng.standard_normal((6, d)), rng.standard_normal((6, c))
    A0, W0 = L.isotropic_init(d, h, c, delta, scale=0.4, seed=2)
    tc, eps = 0.7, 1e-4
    A, W = L.gradient_flow(A0, W0, X, Y, [tc - eps, tc, tc + eps])
    s = [np.linalg.svd(a @ w, compute_uv=False) for a, w in zip(A, W)]
    fd = (s[2] - s[0]) / (2 * eps)
    pred = L.singular_value_rates(A[1] @ W[1], L.beta_gradient(X, Y, A[1] @ W[1]), delta)
    assert np.max(np.abs(fd - pred)) < 1e-6


def test_hyperbolic_entropy_gradient_and_hessian():
    sig = np.array([0.1, 0.7, 2.0])
    for delta in (0.5, -3.0):
        g = fd_gradient(lambda s: L.hyperbolic_entropy(s, delta, 0.6, 1.4), sig, h=1e-6)
        assert np.allclose(g, L.hyperbolic_entropy_grad(sig, delta, 0.6, 1.4), atol=1e-8)
        hdiag = np.array([fd_gradient(lambda s, i=i: L.hyperbolic_entropy_grad(s, delta, 0.6, 1.4)[i], sig, h=1e-6)[i]
                          for i in range(sig.size)])
        assert np.allclose(hdiag, 1 / np.sqrt(delta**2 + 4 * 0.84 * sig**2), atol=1e-8)
    assert np.isfinite(L.hyperbolic_entropy(np.array([1e8]), 1e-8))


def test_vec_convention():
    B = np.arange(6.0).reshape(2, 3)
    P, Q = np.arange(4.0).reshape(2, 2), np.arange(9.0).reshape(3, 3)
    assert np.allclose(L.vec(P @ B @ Q), np.kron(Q.T, P) @ L.vec(B))
    assert np.array_equal(L.unvec(L.vec(B), 2, 3), B)


def test_validation():
    A, W = np.ones((2, 3)), np.ones((3, 4))
    with pytest.raises(ValueError, match="eta_a"):
        L.preconditioner(A, W, eta_a=0.0)
    with pytest.raises(ValueError, match="eta_w"):
        L.conserved_matrix(A, W, eta_w=-1.0)
    with pytest.raises(ValueError, match="share h"):
        L.preconditioner(A, np.ones((2, 4)))
    with pytest.raises(ValueError, match="A must be finite"):
        L.neuron_deltas(np.full((2, 3), np.nan), W)
    with pytest.raises(ValueError, match="X must be"):
        L.gradient_flow(A, W, np.ones((5, 3)), np.ones((5, 2)), [0.0, 1.0])
    with pytest.raises(ValueError, match="t must be"):
        L.gradient_flow(A, W, np.ones((5, 4)), np.ones((5, 2)), [1.0, 0.5])
    with pytest.raises(ValueError, match="h must be <= c"):
        L.isotropic_init(3, 4, 2, 1.0)
    with pytest.raises(ValueError, match="h must be <= d"):
        L.isotropic_init(3, 4, 5, -1.0)
    with pytest.raises(ValueError, match="betas"):
        L.preconditioner_from_beta(np.zeros((2, 2, 3)), [1.0, 1.0])
    with pytest.raises(ValueError, match="deltas"):
        L.preconditioner_from_beta(np.ones((2, 2, 3)), [1.0])
    with pytest.raises(ValueError, match="products"):
        L.init_with_deltas(3, 2, [1.0], [0.0])
    with pytest.raises(ValueError, match="delta"):
        L.hyperbolic_entropy([1.0], 0.0)
    with pytest.raises(ValueError, match="d must be"):
        L.isotropic_init(0, 1, 1, 0.0)


def _balanced_chain(d, L, s, rng):
    v = [x / np.linalg.norm(x) for x in rng.standard_normal((L + 1, d))]
    return s * v[L], [s * np.outer(v[k + 1], v[k]) for k in range(L)]


@pytest.mark.parametrize("L", [1, 2, 3])
def test_deep_balanced_preconditioner_matches_autograd(L):
    d = 3
    rng = np.random.default_rng(L)
    a, Ws = _balanced_chain(d, L, 0.9, rng)

    def beta_of(z):
        b = z[:d]
        for k in reversed(range(L)):
            b = z[d + k * d * d: d + (k + 1) * d * d].reshape(d, d).T @ b
        return b

    z = torch.tensor(np.concatenate([a] + [W.ravel() for W in Ws]))
    J = torch.autograd.functional.jacobian(beta_of, z).numpy()
    beta = beta_of(z).numpy()
    from markovlib.richlazy.linear_networks import deep_balanced_preconditioner

    assert np.allclose(deep_balanced_preconditioner(beta, L), J @ J.T, atol=1e-12)


def test_deep_rich_bias_two_layers_is_thm31_at_delta_zero():
    rng = np.random.default_rng(2)
    b, b0 = rng.standard_normal(4), rng.standard_normal(4)
    r0 = np.linalg.norm(b0)
    expected = np.linalg.norm(b) ** 1.5 - 1.5 * np.sqrt(r0) * (b0 / r0) @ b
    assert abs(L.deep_rich_bias(b, b0, 1) - expected) < 1e-12
    with pytest.raises(ValueError, match="L must be"):
        L.deep_rich_bias(b, b0, 0)
    with pytest.raises(ValueError, match="beta0"):
        L.deep_rich_bias(b, np.zeros(4), 2)
    assert np.array_equal(L.deep_balanced_preconditioner(np.zeros(3), 2), np.zeros((3, 3)))
