"""Tests of markovlib.topology.invariant_set against independent references: torch autograd (conservation of c_k),
numpy polynomial products (Thm 1), closed forms (Cor. 1, F(1, 1) CDF), Monte Carlo (App. F), forward passes
(Prop. 4 keeps f), and a brute-force enumeration of rescalings and permutations (Thm 2 / Cor. 3)."""
import itertools

import numpy as np
import pytest
import torch

from markovlib.topology import invariant_set as T


def _relu_net(W1, W2, X):
    return np.maximum(X @ W1.T, 0.0) @ W2.T


def test_balances_match_squares_and_are_conserved_by_autograd_gradient():
    rng = np.random.default_rng(1)
    l, d, e, n = 5, 3, 2, 40
    W1, W2 = rng.normal(size=(l, d)), rng.normal(size=(e, l))
    np.testing.assert_allclose(T.neuron_balances(W1, W2), (W1**2).sum(1) - (W2**2).sum(0), rtol=1e-13)
    # independent reference: autograd gradient of an MSE loss; dc_k/dt = -2 (w_k . g_wk - a_k . g_ak) = 0
    X, Y = torch.tensor(rng.normal(size=(n, d))), torch.tensor(rng.normal(size=(n, e)))
    t1 = torch.tensor(W1, requires_grad=True)
    t2 = torch.tensor(W2, requires_grad=True)
    loss = ((torch.relu(X @ t1.T) @ t2.T - Y) ** 2).mean()
    g1, g2 = torch.autograd.grad(loss, (t1, t2))
    dc = (t1 * g1).sum(1) - (t2 * g2).sum(0)
    assert float(dc.detach().abs().max()) < 1e-12


def test_balances_input_checks_and_extremes():
    with pytest.raises(ValueError, match="W2"):
        T.neuron_balances(np.ones((3, 2)), np.ones((1, 4)))
    with pytest.raises(ValueError, match="W1"):
        T.neuron_balances(np.array([[np.nan, 1.0]]), np.ones((1, 1)))
    with pytest.raises(ValueError, match="W1"):
        T.neuron_balances(np.ones(3), np.ones(3))
    c = T.neuron_balances([[1e200, 0.0], [1e200, 1e200]], [[1e200, 1e-300]])
    assert c[0] == 0.0 and c[1] == np.inf
    assert np.array_equal(T.neuron_balances(np.ones((2, 2)), np.ones(2)),
                          T.neuron_balances(np.ones((2, 2)), np.ones((1, 2))))


def _poly_numpy(d, e, c):
    c = np.asarray(c, float)
    p = np.array([1.0])
    for deg, count in ((d - 1, (c > 0).sum()), (e - 1, (c < 0).sum())):
        f = np.zeros(deg + 1)
        f[0] += 1
        f[deg] += 1
        for _ in range(count):
            p = np.polynomial.polynomial.polymul(p, f)
    return [int(round(x)) for x in p]


@pytest.mark.parametrize("d,e", [(1, 1), (1, 3), (2, 1), (3, 1), (2, 2), (4, 3)])
def test_poincare_polynomial_and_cor1(d, e):
    for c in ([1.0], [-1.0], [0.0], [1.0, -2.0, 0.0], [1.0, 1.0, -1.0, -1.0, -1.0], [0.5] * 4):
        poly = T.poincare_polynomial(d, e, c)
        assert poly == _poly_numpy(d, e, c)
        assert T.betti_numbers(d, e, c) == tuple(poly)
        assert all(isinstance(b, int) and b >= 0 for b in poly)
        assert T.n_components(d, e, c) == poly[0]
        lp, lm = sum(x > 0 for x in c), sum(x < 0 for x in c)
        # Euler characteristic of a product: chi(S^{n-1} x R^m) = 1 + (-1)^{n-1}
        euler = (1 + (-1) ** (d - 1)) ** lp * (1 + (-1) ** (e - 1)) ** lm
        assert sum((-1) ** i * b for i, b in enumerate(poly)) == euler


def test_poincare_closed_cases_and_errors():
    assert T.poincare_polynomial(2, 1, [1.0]) == [1, 1]          # cylinder S^1 x R
    assert T.poincare_polynomial(2, 1, [-1.0]) == [2]            # two discs S^0 x R^2
    assert T.poincare_polynomial(3, 2, [1.0, -1.0]) == [1, 1, 1, 1]
    assert T.n_components(2, 1, [-1.0] * 40) == 2**40            # exact integers
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="d"):
            T.poincare_polynomial(bad, 1, [1.0])
    with pytest.raises(ValueError, match="c"):
        T.betti_numbers(2, 1, [np.inf])
    with pytest.raises(ValueError, match="e"):
        T.n_components(2, 0, [1.0])


def test_pathological_is_negative_balance():
    rng = np.random.default_rng(2)
    W1, W2 = rng.normal(size=(50, 3)), rng.normal(size=(1, 50)) * 2
    assert np.array_equal(T.pathological(W1, W2), (W2[0] ** 2 > (W1**2).sum(1)))
    assert T.pathological(W1, W2).any() and not T.pathological(W1, W2).all()


def test_rescale_to_reaches_quadric_and_keeps_function():
    rng = np.random.default_rng(3)
    W1, W2 = rng.uniform(-2, 2, size=(4, 3)), rng.uniform(-2, 2, size=(2, 4))
    X = rng.normal(size=(30, 3))
    c = np.array([-0.1, 0.1, 3.0, -7.0])
    A, B = T.rescale_to(W1, W2, c)
    np.testing.assert_allclose((A**2).sum(1) - (B**2).sum(0), c, atol=1e-12)
    np.testing.assert_allclose(_relu_net(A, B, X), _relu_net(W1, W2, X), rtol=1e-12, atol=1e-12)
    s = np.linalg.norm(A, axis=1) / np.linalg.norm(W1, axis=1)
    assert np.all(s > 0)
    np.testing.assert_allclose(np.linalg.norm(B, axis=0), np.linalg.norm(W2, axis=0) / s, rtol=1e-12)
    # uniqueness: c' = s^2 |w|^2 - |a|^2 / s^2 is increasing in s, so a second root search finds the same s
    from scipy.optimize import brentq
    for k in range(4):
        f = lambda t: t**2 * (W1[k] ** 2).sum() - (W2[:, k] ** 2).sum() / t**2 - c[k]
        assert abs(brentq(f, 1e-6, 1e6, xtol=1e-14) - s[k]) < 1e-9 * s[k]
    a1, b1 = T.rescale_to(W1, W2[0], 0.5)                # 1-D W2, scalar c
    assert b1.ndim == 1 and np.allclose((a1**2).sum(1) - b1**2, 0.5)


def test_rescale_to_degenerate_and_extreme():
    with pytest.raises(ValueError, match="neuron 1"):
        T.rescale_to([[1.0, 0.0], [0.0, 0.0]], [[1.0, 2.0]], [0.5, 0.5])   # w_1 = 0 reaches only c < 0
    with pytest.raises(ValueError, match="neuron 0"):
        T.rescale_to([[1.0, 0.0]], [[0.0]], [-0.5])                         # a_0 = 0 reaches only c > 0
    with pytest.raises(ValueError, match="neuron 0"):
        T.rescale_to([[0.0, 0.0]], [[0.0]], [1.0])
    A, B = T.rescale_to([[0.0, 0.0], [2.0, 0.0]], [[3.0, 0.0]], [-1.0, 1.0])
    np.testing.assert_allclose([(A[0] ** 2).sum() - B[0, 0] ** 2, (A[1] ** 2).sum()], [-1.0, 1.0])
    with pytest.raises(ValueError, match="c"):
        T.rescale_to(np.ones((2, 2)), np.ones((1, 2)), [1.0, 2.0, 3.0])
    A, B = T.rescale_to([[1e200, 0.0]], [[1e-200]], [-1.0])
    assert np.all(np.isfinite(A)) and abs(A[0, 0] ** 2 - B[0, 0] ** 2 + 1.0) < 1e-12
    A, B = T.rescale_to([[1e-150, 0.0]], [[1e150]], [1e-10])
    assert np.all(np.isfinite(A)) and abs((A[0, 0] ** 2 - B[0, 0] ** 2) / 1e-10 - 1.0) < 1e-6


def test_obstruction_probability_closed_form_and_monte_carlo():
    # d = 1, Kaiming: F_{1,1}(x) = (2/pi) arctan(sqrt x), so p = 1 - (2/pi) arctan(sqrt l)
    for l in (1, 2, 7):
        p = 1 - 2 / np.pi * np.arctan(np.sqrt(l))
        assert abs(T.obstruction_probability(1, l, "kaiming") - (1 - (1 - p) ** l)) < 1e-13
    rng = np.random.default_rng(4)
    n = 20000
    for scheme in ("kaiming", "xavier"):
        for d, l in ((2, 3), (5, 4), (10, 2)):
            sw2, sa2 = (2 / d, 2 / l) if scheme == "kaiming" else (2 / (d + l), 2 / (l + 1))
            w = rng.normal(scale=np.sqrt(sw2), size=(n, l, d))
            a = rng.normal(scale=np.sqrt(sa2), size=(n, l))
            mc = np.mean(np.any(a**2 > (w**2).sum(-1), axis=1))
            P = T.obstruction_probability(d, l, scheme)
            assert abs(mc - P) < 5 * np.sqrt(P * (1 - P) / n) + 1e-3
    grid = T.obstruction_probability(np.arange(1, 6)[:, None], np.arange(1, 5)[None, :], "xavier")
    assert grid.shape == (5, 4) and np.all((grid > 0) & (grid < 1))
    # tiny probabilities keep their digits: F(1, d) = t_d^2, so p = 2 P[t_d > sqrt(l)] and P ~ l p
    from scipy import stats
    p = 2 * stats.t.sf(np.sqrt(500), 500)
    P = T.obstruction_probability(500, 500, "kaiming")
    assert 0 < p < 1e-70 and abs(P / (500 * p) - 1) < 1e-8


def test_obstruction_probability_errors():
    with pytest.raises(ValueError, match="scheme"):
        T.obstruction_probability(2, 2, "he")
    with pytest.raises(ValueError, match="l"):
        T.obstruction_probability(2, 0)
    with pytest.raises(ValueError, match="d"):
        T.obstruction_probability(2.5, 2)


def _effective_classes(d, c, seed):
    """Brute force (Def. 2 / Thm 2): sign vectors s, s' of the pathological output weights are related when,
    for every probe theta in C_s, some permutation followed by the Prop. 4 rescaling back onto c lands in C_s'.
    Probes: random points, and the hardest ones (non-pathological output weights 0)."""
    rng = np.random.default_rng(seed)
    c = np.asarray(c, float)
    l = c.size
    patho = np.flatnonzero(c < 0)
    X = rng.normal(size=(20, d))
    rel = {}
    signs = list(itertools.product((-1, 1), repeat=patho.size))
    for s in signs:
        reach_all = None
        for probe in range(4):
            W1 = rng.normal(size=(l, d))
            a = rng.normal(size=l)
            if probe % 2 == 0:
                a[c > 0] = 0.0
            a[patho] = np.abs(a[patho]) * np.array(s) + np.sign(np.array(s)) * 1e-3
            W1, a = T.rescale_to(W1, a, c)
            reach = set()
            for perm in itertools.permutations(range(l)):
                P1, Pa = W1[list(perm)], a[list(perm)]
                try:
                    Q1, Qa = T.rescale_to(P1, Pa, c)
                except ValueError:
                    continue
                assert np.allclose(_relu_net(Q1, Qa[None], X), _relu_net(W1, a[None], X))
                reach.add(tuple(np.sign(Qa[patho]).astype(int)))
            reach_all = reach if reach_all is None else reach_all & reach
        rel[s] = reach_all
    # classes of the relation (it is an equivalence: check symmetry)
    for s in signs:
        for t in rel[s]:
            assert s in rel[t]
    classes = {frozenset(rel[s]) for s in signs}
    return classes, signs


@pytest.mark.parametrize("c", [[-1.0, -0.5, 0.3], [-1.0, -1.0, -2.0], [-0.2, 0.4, 0.1, -0.3]])
def test_effective_components_by_enumeration(c):
    classes, signs = _effective_classes(2, c, seed=5)
    assert len(classes) == T.n_effective_components(2, 1, c)
    for cl in classes:   # Thm 2: same class iff same sum
        assert len({sum(s) for s in cl}) == 1
    assert T.n_components(2, 1, c) == len(signs)
