"""Exact population loss by enumeration (markovlib.transformer.exact.exact_loss and helpers)."""
import itertools
import math

import numpy as np
import pytest
import torch

from markovlib.markov.chain import MarkovChain
from markovlib.transformer.exact import all_sequences, exact_loss, sequence_probabilities
from markovlib.transformer.model import MarkovTransformer
from markovlib.transformer.readout import optimal_canonical_bias

torch.set_num_threads(1)


def test_all_sequences_lexicographic_and_complete():
    x = all_sequences(4)
    assert x.shape == (16, 4) and x.dtype == torch.int64
    assert [tuple(r) for r in x.tolist()] == list(itertools.product((0, 1), repeat=4))
    x3 = all_sequences(3, n_states=3)
    assert [tuple(r) for r in x3.tolist()] == list(itertools.product((0, 1, 2), repeat=3))
    with pytest.raises(ValueError):
        all_sequences(0)
    with pytest.raises(ValueError):
        all_sequences(21)


@pytest.mark.parametrize("p, q", [(0.2, 0.3), (0.9, 0.6)])
def test_sequence_probabilities_sum_to_one_and_match_product(p, q):
    chain = MarkovChain(p, q)
    x = all_sequences(6)
    probs = sequence_probabilities(chain, x)
    assert float(probs.sum()) == pytest.approx(1.0, abs=1e-14)
    P, pi = chain.kernel, chain.stationary
    for row, pr in zip(x.tolist()[::7], probs.tolist()[::7]):
        ref = pi[row[0]] * np.prod([P[a, b] for a, b in zip(row[:-1], row[1:])])
        assert pr == pytest.approx(ref, rel=1e-13)


def test_exact_loss_equals_naive_sum_for_a_random_model():
    p, q, n = 0.3, 0.6, 4
    chain = MarkovChain(p, q)
    model = MarkovTransformer.standard(d=4, max_len=8, std=0.7, seed=3)
    got = float(exact_loss(model, chain, n).detach())
    ref = 0.0
    P, pi = chain.kernel, chain.stationary
    for seq in itertools.product((0, 1), repeat=n):
        prob = pi[seq[0]] * np.prod([P[a, b] for a, b in zip(seq[:-1], seq[1:])])
        logits = model(torch.tensor([seq[:-1]])).detach().numpy()[0]
        f = 1 / (1 + np.exp(-logits))
        ce = [-math.log(f[i]) if seq[i + 1] == 1 else -math.log(1 - f[i]) for i in range(n - 1)]
        ref += prob * np.mean(ce)
    assert got == pytest.approx(ref, rel=1e-12)


def test_exact_loss_is_the_mean_of_sampled_losses():
    chain = MarkovChain(0.7, 0.6)
    model = MarkovTransformer.standard(d=4, max_len=8, std=0.8, seed=1)
    exact = float(exact_loss(model, chain, 6).detach())
    x = chain.sample(20000, 6, seed=0, backend="torch")
    with torch.no_grad():
        logits = model(x[:, :-1])
        per_seq = torch.nn.functional.binary_cross_entropy_with_logits(
            logits, x[:, 1:].double(), reduction="none").mean(1)
    se = float(per_seq.std()) / math.sqrt(x.shape[0])
    assert abs(float(per_seq.mean()) - exact) < 5 * se


def test_exact_loss_yardsticks_and_gradient():
    p, q, n = 0.5, 0.8, 7
    chain = MarkovChain(p, q)
    c_star = math.log((1 - p) * (1 - q) / (p * q))
    w = -math.sqrt((1 - c_star) / 2)  # e = 1: 1 + 2w|w| = c*
    model = MarkovTransformer(4, 8).init_weights("canonical", e=1.0, w=w, b=optimal_canonical_bias(1.0, w, 0.0, p, q))
    loss = exact_loss(model, chain, n)
    assert float(loss.detach()) == pytest.approx(chain.entropy_rate, abs=1e-12)
    loss.backward()
    assert max(float(prm.grad.abs().max()) for prm in model.parameters()) < 1e-10
    pi1 = p / (p + q)
    const = MarkovTransformer(4, 8).init_weights("canonical", e=0.0, w=0.3, b=math.log(pi1 / (1 - pi1)))
    assert float(exact_loss(const, chain, n).detach()) == pytest.approx(chain.marginal_entropy, abs=1e-12)


def test_exact_loss_k_states_and_errors():
    P = np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25], [0.3, 0.3, 0.4]])
    chain = MarkovChain.from_kernel(P)
    model = MarkovTransformer(4, 8, n_states=3)  # zero weights: uniform prediction
    assert float(exact_loss(model, chain, 4).detach()) == pytest.approx(math.log(3), abs=1e-12)
    with pytest.raises(ValueError):
        exact_loss(model, MarkovChain(0.2, 0.3), 4)
    with pytest.raises(ValueError):
        exact_loss(MarkovTransformer(4, 8), MarkovChain(0.2, 0.3), 1)


def test_authors_rank_one_init_is_rank_one_on_the_hypercube_but_not_canonical():
    """Sec. 5.1's random rank-one start: W_V, W_O, W_1, W_2 exactly rank one along one alpha in {+-1}^d/sqrt(d),
    e = |0.1 z| >= 0 along alpha, W_1 and W_2 not tied (off the canonical manifold), W_Q, W_K full rank."""
    import numpy as np

    from markovlib.transformer.model import MarkovTransformer
    from markovlib.transformer.readout import top_singular_fraction

    d = 8
    for seed in range(3):
        m = MarkovTransformer(d, 16, dtype=torch.float64).init_weights("authors_rank_one", std=1e-3, seed=seed)
        W = {k: v.detach().numpy() for k, v in m.named_parameters()}
        e = W["embedding"]
        alpha = e / np.linalg.norm(e)
        assert np.allclose(np.abs(alpha), 1 / np.sqrt(d), atol=1e-12)  # on the hypercube
        assert 0 < np.linalg.norm(e) < 1.0  # |0.1 z| is small
        for name, side in (("W_V", "both"), ("W_O", "both"), ("W_1", "right"), ("W_2", "left")):
            assert top_singular_fraction(torch.as_tensor(W[name])) > 1 - 1e-12, name
            U, S, Vh = np.linalg.svd(W[name])
            if side in ("both", "right"):
                assert abs(abs(Vh[0] @ alpha) - 1) < 1e-12, name
            if side in ("both", "left"):
                assert abs(abs(U[:, 0] @ alpha) - 1) < 1e-12, name
        u1 = W["W_1"] @ alpha
        u2 = alpha @ W["W_2"]
        assert abs(abs(u1 @ u2) / (np.linalg.norm(u1) * np.linalg.norm(u2)) - 1) > 1e-3  # not tied
        for name in ("W_Q", "W_K"):
            assert top_singular_fraction(torch.as_tensor(W[name])) < 0.9, name


def test_evaluation_rows_carry_the_singular_fractions():
    from markovlib.transformer.config import RANK_COLUMNS
    from markovlib.transformer.training import Trainer

    t = Trainer(p=0.2, q=0.3, d=4, length=8, batch=2, steps=2, init="rank_one", eval_every=1, progress=False,
                device="cpu")
    t.train()
    row = t.history[0]
    for name in ("W_V", "W_O", "W_1", "W_2"):
        assert abs(row[f"top_fraction_{name}"] - 1) < 1e-5
    assert {f"top_fraction_{k}" for k in t.model.weight_matrices()} <= set(RANK_COLUMNS)
