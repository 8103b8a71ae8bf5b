"""Tests of markovlib.markov.reference: the torch re-derivation of the canonical loss agrees with canonical."""
import numpy as np
import pytest
import torch

from markovlib.markov import canonical, reference

PQ = [(0.9, 0.9), (0.1, 0.1), (0.5, 0.8), (0.8, 0.3), (0.02, 0.98)]


@pytest.mark.parametrize("p, q", PQ)
def test_reference_matches_canonical(p, q):
    rng = np.random.default_rng(1)
    th = rng.uniform(-1.5, 1.5, (50, 2))
    b = rng.uniform(-2, 2, 50)
    T = torch.tensor(th, dtype=torch.float64)
    assert np.allclose(reference.reduced_loss(T, p, q).numpy(), canonical.loss(th[:, 0], th[:, 1], p, q), rtol=1e-13)
    T3 = torch.tensor(np.column_stack([th, b]), dtype=torch.float64)
    assert np.allclose(reference.loss_with_bias(T3, p, q).numpy(), canonical.loss(th[:, 0], th[:, 1], p, q, b=b),
                       rtol=1e-13)
    c = torch.linspace(-20, 20, 41, dtype=torch.float64)
    assert np.allclose(reference.optimal_beta(c, p, q).numpy(), canonical.optimal_beta(c.numpy(), p, q), atol=1e-10)
    g = reference.autograd_grad(th, p, q)
    assert np.allclose(g, np.stack(canonical.grad(th[:, 0], th[:, 1], p, q), -1), rtol=1e-9, atol=1e-12)
    g3 = reference.autograd_grad(np.column_stack([th, b]), p, q)
    assert np.allclose(g3, np.stack(canonical.grad(th[:, 0], th[:, 1], p, q, b=b), -1), rtol=1e-9, atol=1e-12)


def test_reference_rejects_bad_input():
    with pytest.raises(ValueError, match="p"):
        reference.optimal_beta(torch.zeros(2, dtype=torch.float64), 1.5, 0.5)
    with pytest.raises(ValueError, match="theta"):
        reference.reduced_loss(torch.zeros(4, 3, dtype=torch.float64), 0.5, 0.5)
    with pytest.raises(ValueError, match="x must hold"):
        reference.autograd_grad(np.zeros((3, 4)), 0.5, 0.5)


def test_flow_field_jacobian_and_normal():
    p, q = 0.9, 0.9
    y = np.array([0.7, -0.3])
    f = reference.flow_field(0.0, y, p, q)
    assert np.allclose(f, -np.array(canonical.grad(0.7, -0.3, p, q)), rtol=1e-10, atol=1e-14)
    J = reference.flow_jacobian(0.0, y, p, q)
    assert np.allclose(J, -canonical.hessian(0.7, -0.3, p, q), rtol=1e-8, atol=1e-12)
    x = torch.tensor([[0.5, -0.4, 0.1], [1.2, 0.8, -1.0]], dtype=torch.float64)
    n = reference.frobenius_normal(x).numpy()
    for (e, w, _), nk in zip(x.numpy(), n):
        grad_c = np.array([2 * e * (1 + 2 * w * abs(w)), 4 * e ** 2 * abs(w), 0.0])
        assert np.allclose(nk, np.cross(grad_c, np.array([-e, 0.0, 1.0])))


def test_attention_references_match_canonical_and_the_full_model():
    from markovlib.transformer.model import MarkovTransformer

    p, q = 0.5, 0.8
    for e, w, a in [(0.8, -0.4, 0.5), (1.2, 0.5, -0.3)]:
        g = reference.attention_grad([e, w, a], p, q)
        assert np.allclose(g, np.array(canonical.grad(e, w, p, q, a=a), dtype=float), rtol=1e-8, atol=1e-12)
        assert reference.attention_loss_np([e, w, a], p, q) == pytest.approx(float(canonical.loss(e, w, p, q, a=a)))
    assert reference.attention_loss_np(np.array([[0.8, -0.4, 0.0]]), p, q)[0] == pytest.approx(
        float(canonical.loss(0.8, -0.4, p, q)))
    d = 4
    model = MarkovTransformer(d, 1, attention="linear")
    alpha = torch.full((d,), 0.5, dtype=torch.float64)
    u = torch.full((4 * d,), 2 / np.sqrt(4 * d), dtype=torch.float64)
    e, w, a = 0.8, -0.4, 0.5
    b = reference.optimal_bias_full(e, w, a, p, q)
    t = lambda v: torch.tensor(v, dtype=torch.float64)  # noqa: E731
    L = reference.full_model_loss(model, t(e), t(w), t(a), t(b), alpha, u, p, q)
    assert float(L) == pytest.approx(float(canonical.loss(e, w, p, q, a=a)), abs=1e-12)
    with pytest.raises(ValueError, match="x must"):
        reference.attention_grad([1.0, 2.0], p, q)
