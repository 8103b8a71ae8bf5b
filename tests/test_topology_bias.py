"""Tests of the ``bias`` keyword of markovlib.topology.invariant_set (App. E of Nurisso et al.: Prop. 5, Prop. 6,
Cor. 4) against independent references: torch autograd (the balance with the bias is conserved, the one without it
is not), the connected components of point samples of H(c) (a neighbour graph, no formula), and Cor. 4 written out."""
import itertools

import numpy as np
import pytest
import torch
from scipy.sparse.csgraph import connected_components
from sklearn.neighbors import radius_neighbors_graph

from markovlib.topology import invariant_set as T

SIGNS = [list(s) for n in (1, 2, 3) for s in itertools.product((-1.0, 0.0, 1.0), repeat=n)]


@pytest.mark.parametrize("d,e", [(1, 1), (1, 2), (2, 1), (3, 1), (2, 3), (4, 2)])
def test_bias_joins_the_input_weights(d, e):
    for c in SIGNS:
        assert T.poincare_polynomial(d, e, c, bias=True) == T.poincare_polynomial(d + 1, e, c)
        assert T.betti_numbers(d, e, c, bias=True) == T.betti_numbers(d + 1, e, c)
        assert T.n_effective_components(d, e, c, bias=True) == T.n_effective_components(d + 1, e, c)
        assert T.betti_numbers(d, e, c, bias=False) == T.betti_numbers(d, e, c)


def test_cor4_written_out_and_prop6_constant_term():
    for d, e in itertools.product(range(1, 5), range(1, 5)):
        for c in SIGNS:
            lm = sum(x < 0 for x in c)
            want = 1 if e > 1 else 2**lm  # Cor. 4: no dependence on d
            assert T.n_components(d, e, c, bias=True) == want
            assert T.poincare_polynomial(d, e, c, bias=True)[0] == want
            # Prop. 6 with x = -1: Euler characteristic of the product of S^d x R^e and R^{d+1} x S^{e-1}
            lp = sum(x > 0 for x in c)
            chi = sum((-1) ** i * b for i, b in enumerate(T.poincare_polynomial(d, e, c, bias=True)))
            assert chi == (1 + (-1) ** d) ** lp * (1 + (-1) ** (e - 1)) ** lm


def test_d1_obstruction_of_positive_neurons_disappears_with_bias():
    assert T.n_components(1, 1, [1.0, 1.0, -1.0]) == 8
    assert T.n_components(1, 1, [1.0, 1.0, -1.0], bias=True) == 2
    assert T.n_components(1, 3, [1.0, 1.0]) == 4
    assert T.n_components(1, 3, [1.0, 1.0], bias=True) == 1
    assert T.n_effective_components(1, 1, [1.0, 1.0, -1.0], bias=True) == 2
    assert T.n_effective_components(1, 1, [1.0, 1.0, -1.0]) == 3 * 2


def test_bias_keyword_is_validated():
    for bad in ("yes", 1, None, 0.0):
        for f in (T.poincare_polynomial, T.betti_numbers, T.n_components, T.n_effective_components):
            with pytest.raises(ValueError, match="bias"):
                f(2, 1, [1.0], bias=bad)
    assert T.n_components(2, 1, [-1.0], bias=np.bool_(True)) == 2


def test_balance_with_bias_is_conserved_by_the_autograd_gradient():
    # independent reference: d/dt (|w|^2 + b^2 - |a|^2) = -2 (w.g_w + b g_b - a.g_a) = 0 along the flow, while the
    # balance without the bias changes at the rate 2 b g_b
    rng = np.random.default_rng(3)
    width, d, e, n = 4, 2, 2, 30
    X, Y = torch.tensor(rng.normal(size=(n, d))), torch.tensor(rng.normal(size=(n, e)))
    W1, b1, W2, b2 = (torch.tensor(rng.normal(size=s), requires_grad=True) for s in ((width, d), width, (e, width), e))
    loss = ((torch.relu(X @ W1.T + b1) @ W2.T + b2 - Y) ** 2).mean()
    g1, gb1, g2, _ = torch.autograd.grad(loss, (W1, b1, W2, b2))
    with_bias = (W1 * g1).sum(1) + b1 * gb1 - (W2 * g2).sum(0)
    without = (W1 * g1).sum(1) - (W2 * g2).sum(0)
    assert float(with_bias.detach().abs().max()) < 1e-12
    assert float(without.detach().abs().max()) > 1e-3


def _sample_quadric(din, e, c, n, radius, rng):
    """Points of |u|^2 - |a|^2 = c in R^din x R^e within the ball of the given radius: random points of the ball
    moved onto the quadric by Newton steps along the gradient (uses the equation only)."""
    sgn = np.concatenate([np.ones(din), -np.ones(e)])
    out, have = [], 0
    while have < n:
        z = rng.normal(size=(4 * n, din + e))
        z *= radius * rng.uniform(size=(4 * n, 1)) ** (1 / (din + e)) / np.linalg.norm(z, axis=1, keepdims=True)
        for _ in range(60):
            g = 2 * sgn * z
            z = z - (((sgn * z**2).sum(1) - c) / (g**2).sum(1))[:, None] * g
        keep = (np.abs((sgn * z**2).sum(1) - c) < 1e-10) & (np.linalg.norm(z, axis=1) <= radius)
        out.append(z[keep])
        have += int(keep.sum())
    return np.vstack(out)[:n]


@pytest.mark.parametrize("d,e,c", [(1, 1, [1.0]), (1, 1, [1.0, 1.0]), (1, 1, [1.0, -1.0]), (1, 2, [1.0, 1.0]),
                                   (2, 1, [-1.0]), (1, 2, [-1.0])])
def test_components_of_sampled_invariant_sets_with_and_without_bias(d, e, c):
    rng = np.random.default_rng(7)
    for bias in (False, True):
        din = d + 1 if bias else d
        pts = np.hstack([_sample_quadric(din, e, ck, 1500, np.sqrt(abs(ck) + 0.02), rng) for ck in c])
        graph = radius_neighbors_graph(pts, 0.5, mode="connectivity")
        assert connected_components(graph, directed=False)[0] == T.n_components(d, e, c, bias=bias)
