"""Tests of markovlib.topology.shallow_relu against independent references: torch autograd of the same network and
losses (MSE, BCE with logits), central finite differences (markovlib.numerics.numdiff), the per-network loop against
the batched call, torch's own gradient-descent loop, and the conservation identity of one GD step."""
import numpy as np
import pytest
import torch

from markovlib.numerics.numdiff import fd_gradient
from markovlib.topology import shallow_relu as S


def _torch_loss(W1, W2, X, y, kind, vector):
    # independent reference: torch's network and torch's losses
    H = torch.relu(X @ W1.T)
    F = H @ W2 if vector else H @ W2.T
    if kind == "mse":
        return 0.5 * ((F - y) ** 2).sum(-1).mean() if not vector else 0.5 * ((F - y) ** 2).mean()
    return torch.nn.functional.binary_cross_entropy_with_logits(F, y)


@pytest.mark.parametrize("kind", ["mse", "bce"])
@pytest.mark.parametrize("e", [None, 1, 3])
def test_loss_grad_matches_autograd_batched(kind, e):
    rng = np.random.default_rng(3)
    batch, l, d, n = (2, 3), 4, 5, 30
    vector = e is None
    W1 = rng.normal(size=batch + (l, d))
    W2 = rng.normal(size=batch + ((l,) if vector else (e, l)))
    X = rng.normal(size=(n, d))
    y = rng.uniform(size=(n,) if vector else (n, e))
    if kind == "bce":
        y = (y > 0.5).astype(float)
    L, g1, g2 = S.loss_grad(W1, W2, X, y, kind)
    assert L.shape == batch and g1.shape == W1.shape and g2.shape == W2.shape
    np.testing.assert_allclose(S.loss(W1, W2, X, y, kind), L, rtol=1e-14, atol=0)
    for idx in np.ndindex(*batch):
        t1 = torch.tensor(W1[idx], requires_grad=True)
        t2 = torch.tensor(W2[idx], requires_grad=True)
        tl = _torch_loss(t1, t2, torch.tensor(X), torch.tensor(y), kind, vector)
        a1, a2 = torch.autograd.grad(tl, (t1, t2))
        assert abs(float(tl.detach()) - L[idx]) < 1e-13 * max(1.0, abs(L[idx]))
        assert np.abs(a1.numpy() - g1[idx]).max() < 1e-13
        assert np.abs(a2.numpy() - g2[idx]).max() < 1e-13
        # the unbatched call gives the same numbers
        Lu, u1, u2 = S.loss_grad(W1[idx], W2[idx], X, y, kind)
        assert isinstance(Lu, float) and abs(Lu - L[idx]) < 1e-14 * max(1.0, abs(Lu))
        np.testing.assert_allclose(u1, g1[idx], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kind", ["mse", "bce"])
def test_gradient_matches_finite_differences(kind):
    rng = np.random.default_rng(4)
    l, d, n, e = 3, 2, 25, 2
    W1, W2, X = rng.normal(size=(l, d)), rng.normal(size=(e, l)), rng.normal(size=(n, d))
    y = rng.integers(0, 2, size=(n, e)).astype(float)
    _, g1, g2 = S.loss_grad(W1, W2, X, y, kind)
    theta = np.concatenate([W1.ravel(), W2.ravel()])

    def f(t):
        return S.loss(t[: l * d].reshape(l, d), t[l * d:].reshape(e, l), X, y, kind)

    fd = fd_gradient(f, theta, 1e-6)
    assert np.abs(fd - np.concatenate([g1.ravel(), g2.ravel()])).max() < 1e-7


def test_forward_shapes_and_values():
    rng = np.random.default_rng(5)
    W1, a, X = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3)), rng.normal(size=(7, 4))
    F = S.forward(W1, a, X)
    assert F.shape == (2, 7)
    np.testing.assert_allclose(F[1], np.maximum(X @ W1[1].T, 0) @ a[1], rtol=1e-13)
    W2 = rng.normal(size=(2, 5, 3))
    assert S.forward(W1, W2, X).shape == (2, 7, 5)
    np.testing.assert_allclose(S.forward(W1, W2, X)[0], np.maximum(X @ W1[0].T, 0) @ W2[0].T, rtol=1e-13)


def test_bce_stable_for_huge_logits():
    X = np.array([[1.0], [-1.0]])
    W1 = np.array([[1e150]])
    for a in (1e150, -1e150):   # logits +-1e300
        for y in (np.array([1.0, 0.0]), np.array([0.0, 1.0])):
            L, g1, g2 = S.loss_grad(W1, np.array([a]), X, y, "bce")
            assert np.isfinite(L) and np.all(np.isfinite(g1)) and np.all(np.isfinite(g2))
    # correct and confident: loss exactly 0 in floating point, not NaN; wrong and confident: loss ~ |logit| / 2
    X2 = np.array([[1.0], [2.0]])                                   # logits 1000 and 2000
    L_good = S.loss(np.array([[1e3]]), np.array([1.0]), X2, np.array([1.0, 1.0]), "bce")
    L_bad = S.loss(np.array([[1e3]]), np.array([1.0]), X2, np.array([0.0, 0.0]), "bce")
    assert L_good == 0.0 and abs(L_bad - 1500.0) < 1e-9
    # torch's stable BCE agrees at moderate-to-large logits (independent reference)
    f = torch.tensor([-800.0, -30.0, 0.0, 30.0, 800.0], dtype=torch.float64)
    for lab in (0.0, 1.0, 0.3):
        yt = torch.full_like(f, lab)
        Xf = np.abs(f.numpy())[:, None]
        # one neuron with w = 1 on inputs |f|, two networks a = +-1 realise the logits +-|f|
        Lp = S.loss(np.ones((1, 1)), np.ones(1), Xf, yt.numpy(), "bce")
        Lm = S.loss(np.ones((1, 1)), -np.ones(1), Xf, yt.numpy(), "bce")
        refp = torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor(Xf[:, 0]), yt)
        refm = torch.nn.functional.binary_cross_entropy_with_logits(-torch.tensor(Xf[:, 0]), yt)
        assert abs(Lp - float(refp)) < 1e-12 * max(1.0, float(refp))
        assert abs(Lm - float(refm)) < 1e-12 * max(1.0, float(refm))


def test_gradient_descent_matches_torch_loop_and_conservation():
    rng = np.random.default_rng(6)
    B, l, d, n, h, steps = 4, 3, 5, 40, 0.05, 30
    W1, a, X = rng.normal(size=(B, l, d)), rng.normal(size=(B, l)), rng.normal(size=(n, d))
    y = (X[:, 0] > 0).astype(float)
    res = S.gradient_descent(W1, a, X, y, lr=h, steps=steps, kind="bce", save_every=7)
    assert res.losses.shape == (steps, B) and res.W1_path.shape == (6, B, l, d)
    assert list(res.saved_steps) == [0, 7, 14, 21, 28, 30]
    np.testing.assert_array_equal(res.W1_path[0], W1)
    np.testing.assert_array_equal(res.W2_path[-1], res.W2)
    every = S.gradient_descent(W1, a, X, y, lr=h, steps=steps, kind="bce", save_every=1)
    np.testing.assert_array_equal(every.W2_min, every.W2_path.min(0))
    np.testing.assert_array_equal(every.W2_max, every.W2_path.max(0))
    c_path = (every.W1_path**2).sum(-1) - every.W2_path**2
    np.testing.assert_allclose(every.balance_drift, np.abs(c_path - c_path[0]).max(0), rtol=1e-12, atol=1e-15)
    for b in range(B):
        # independent reference: torch's GD loop on the same loss
        t1, ta = torch.tensor(W1[b], requires_grad=True), torch.tensor(a[b], requires_grad=True)
        opt = torch.optim.SGD([t1, ta], lr=h)
        for i in range(steps):
            opt.zero_grad()
            tl = _torch_loss(t1, ta, torch.tensor(X), torch.tensor(y), "bce", True)
            assert abs(float(tl.detach()) - res.losses[i, b]) < 1e-12
            tl.backward()
            opt.step()
        assert np.abs(t1.detach().numpy() - res.W1[b]).max() < 1e-12
    # one GD step changes c_k by h^2 (|g_w|^2 - |g_a|^2) exactly (up to rounding)
    _, g1, ga = S.loss_grad(W1, a, X, y, "bce")
    c0 = (W1**2).sum(-1) - a**2
    one = S.gradient_descent(W1, a, X, y, lr=h, steps=1, kind="bce")
    c1 = (one.W1**2).sum(-1) - one.W2**2
    assert np.abs(c1 - c0 - h**2 * ((g1**2).sum(-1) - ga**2)).max() < 1e-13
    assert S.gradient_descent(W1, a, X, y, lr=h, steps=0).W1_path is None


def test_input_checks():
    W1, a, X, y = np.ones((3, 2)), np.ones(3), np.ones((5, 2)), np.zeros(5)
    with pytest.raises(ValueError, match="W2"):
        S.loss_grad(W1, np.ones(4), X, y)
    with pytest.raises(ValueError, match="X"):
        S.loss_grad(W1, a, np.ones((5, 3)), y)
    with pytest.raises(ValueError, match="W1"):
        S.loss_grad(np.ones(3), a, X, y)
    with pytest.raises(ValueError, match="y"):
        S.loss_grad(W1, a, X, np.zeros(4))
    with pytest.raises(ValueError, match="y"):
        S.loss_grad(W1, a, X, np.full(5, 2.0), "bce")
    with pytest.raises(ValueError, match="loss"):
        S.loss_grad(W1, a, X, y, "hinge")
    with pytest.raises(ValueError, match="X"):
        S.forward(W1, a, np.full((5, 2), np.nan))
    with pytest.raises(ValueError, match="lr"):
        S.gradient_descent(W1, a, X, y, lr=0.0, steps=3)
    with pytest.raises(ValueError, match="steps"):
        S.gradient_descent(W1, a, X, y, lr=0.1, steps=-1)
    with pytest.raises(ValueError, match="save_every"):
        S.gradient_descent(W1, a, X, y, lr=0.1, steps=3, save_every=0)
