import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from markovlib.markov.chain import MarkovChain, binary_entropy

probs = st.floats(0.02, 0.98)


@given(probs, probs)
@settings(max_examples=50, deadline=None)
def test_binary_closed_forms(p, q):
    mc = MarkovChain(p, q)
    pi = mc.stationary
    assert np.allclose(pi @ mc.kernel, pi, atol=1e-14)
    assert np.isclose(pi.sum(), 1.0)
    assert np.isclose(mc.entropy_rate, (q * binary_entropy(p) + p * binary_entropy(q)) / (p + q))
    assert np.isclose(mc.marginal_entropy, binary_entropy(p / (p + q)))
    # conditioning reduces entropy; equality exactly for i.i.d. data (p + q = 1)
    assert mc.entropy_rate <= mc.marginal_entropy + 1e-12


def test_iid_case_yardsticks_coincide():
    mc = MarkovChain(0.3, 0.7)
    assert np.isclose(mc.entropy_rate, mc.marginal_entropy)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("p,q", [(0.2, 0.3), (0.9, 0.9), (0.5, 0.8), (0.03, 0.6)])
def test_sampler_statistics(backend, p, q):
    mc = MarkovChain(p, q)
    x = mc.sample(2000, 300, seed=1, backend=backend)
    assert str(x.dtype) == ("int8" if backend == "numpy" else "torch.int64")
    x = np.asarray(x)
    assert x.shape == (2000, 300) and set(np.unique(x)) <= {0, 1}
    prev, nxt = x[:, :-1].ravel(), x[:, 1:].ravel()
    n0, n1 = (prev == 0).sum(), (prev == 1).sum()
    p_hat = ((prev == 0) & (nxt == 1)).sum() / n0
    q_hat = ((prev == 1) & (nxt == 0)).sum() / n1
    # 5 binomial standard errors
    assert abs(p_hat - p) < 5 * np.sqrt(p * (1 - p) / n0)
    assert abs(q_hat - q) < 5 * np.sqrt(q * (1 - q) / n1)
    pi1 = p / (p + q)
    for col in (0, 150, 299):  # already mixed: every position has the stationary marginal
        assert abs(x[:, col].mean() - pi1) < 5 * np.sqrt(pi1 * (1 - pi1) / 2000)


def test_sampler_seeded_and_lengths():
    mc = MarkovChain(0.4, 0.1)
    a, b = mc.sample(8, 5000, seed=3), mc.sample(8, 5000, seed=3)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, mc.sample(8, 5000, seed=4))
    assert mc.sample(1, 1, seed=0).shape == (1, 1)
    t1, t2 = mc.sample(4, 64, seed=9, backend="torch"), mc.sample(4, 64, seed=9, backend="torch")
    assert bool((t1 == t2).all())


def test_kernel_chain():
    P = np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25], [0.3, 0.3, 0.4]])
    mc = MarkovChain.from_kernel(P)
    pi = mc.stationary
    assert np.allclose(pi @ P, pi) and not mc.is_binary
    H = -(P * np.log(P)).sum(1)
    assert np.isclose(mc.entropy_rate, pi @ H)
    for backend in ("numpy", "torch"):
        x = np.asarray(mc.sample(3000, 200, seed=2, backend=backend))
        counts = np.zeros((3, 3))
        np.add.at(counts, (x[:, :-1].ravel(), x[:, 1:].ravel()), 1)
        P_hat = counts / counts.sum(1, keepdims=True)
        assert np.abs(P_hat - P).max() < 0.01
        assert np.abs(np.bincount(x[:, 0], minlength=3) / 3000 - pi).max() < 0.04
    two = MarkovChain.from_kernel([[0.7, 0.3], [0.6, 0.4]])
    assert two.is_binary and (two.p, two.q) == (0.3, 0.6)


@pytest.mark.parametrize("K", [3, 5, 10])
@pytest.mark.parametrize("p", [0.05, 0.5, 0.95])
def test_symmetric_kernels_have_the_uniform_law(K, p):
    """Regression: the symmetric K-state kernel (1 - p on the diagonal, p / (K - 1) elsewhere) is irreducible for
    every p in (0, 1); a numerical rank test of P^T - I once rejected K = 5, p = 0.05 (a rounding-level singular
    value above numpy's default tolerance). Its stationary law is uniform (the kernel is doubly stochastic)."""
    P = np.full((K, K), p / (K - 1))
    np.fill_diagonal(P, 1 - p)
    pi = MarkovChain.from_kernel(P).stationary
    assert np.abs(pi - 1 / K).max() < 1e-12


def test_transient_states_keep_a_unique_law():
    """One closed class plus a transient state: the stationary law is unique (zero on the transient state)."""
    P = np.array([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0], [0.3, 0.3, 0.4]])
    pi = MarkovChain.from_kernel(P).stationary
    assert np.allclose(pi @ P, pi, atol=1e-12) and np.allclose(pi, [2 / 7, 5 / 7, 0.0], atol=1e-12)


@pytest.mark.parametrize("p,q", [(0.0, 0.5), (1.0, 0.5), (0.5, -0.1), (0.5, 1.2), (np.nan, 0.5), (0.5, np.inf),
                                 ("a", 0.5)])
def test_bad_probabilities(p, q):
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        MarkovChain(p, q)


@pytest.mark.parametrize("kernel,msg", [
    ([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]], "square"),
    ([[0.5, 0.4], [0.5, 0.5]], "sum to 1"),
    ([[1.5, -0.5], [0.5, 0.5]], r"\[0, 1\]"),
    ([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.3, 0.3, 0.4]], "irreducible"),
    ([[0.5, 0.5], [0.5, np.nan]], r"\[0, 1\]"),
])
def test_bad_kernels(kernel, msg):
    with pytest.raises(ValueError, match=msg):
        MarkovChain.from_kernel(kernel)


@pytest.mark.parametrize("kwargs,msg", [
    (dict(batch=0, length=5), "batch"), (dict(batch=2, length=-1), "length"), (dict(batch=2.5, length=3), "batch"),
    (dict(batch=2, length=3, backend="jax"), "backend"), (dict(batch=2, length=3, device="cpu"), "device"),
])
def test_bad_sample_arguments(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        MarkovChain(0.3, 0.4).sample(**kwargs)
