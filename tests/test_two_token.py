"""The authors' 2-token model (markovlib.transformer.two_token): equivalence with the binary model, gradient dynamics,
inits."""
import math

import pytest
import torch

from markovlib.markov.chain import MarkovChain
from markovlib.transformer import two_token as TT
from markovlib.transformer.model import MarkovTransformer
from markovlib.transformer.readout import canonical_scalars


def _random_two_state(d, n, attention, seed):
    g = torch.Generator().manual_seed(seed)
    m = MarkovTransformer(d, n, attention=attention, n_states=2)
    with torch.no_grad():
        for prm in m.parameters():
            prm.copy_(torch.randn(prm.shape, generator=g, dtype=torch.float64) * 0.7)
    return m


@pytest.mark.parametrize("attention", ["softmax", "linear", None])
@pytest.mark.parametrize("d,n", [(2, 3), (4, 16), (8, 64)])
def test_two_state_and_binary_logits_agree(d, n, attention):
    m2 = _random_two_state(d, n, attention, seed=d * 100 + n)
    m1 = TT.binary_equivalent(m2)
    x = MarkovChain(0.3, 0.6).sample(5, n + 1, seed=1, backend="torch")
    with torch.no_grad():
        l2 = m2(x[:, :-1])
        l1 = m1(x[:, :-1])
        assert float((l1 - (l2[..., 1] - l2[..., 0])).abs().max()) < 1e-12
        assert abs(float(m1.loss(x)) - float(m2.loss(x))) < 1e-12
        back = TT.two_state_from_binary(m1, E0=torch.randn(d, dtype=torch.float64), b0=0.3)
        l3 = back(x[:, :-1])
        assert float(((l3[..., 1] - l3[..., 0]) - l1).abs().max()) < 1e-12


def test_gradient_flow_in_two_state_parameters_moves_e_p_by_the_induced_metric():
    m2 = _random_two_state(4, 8, "softmax", seed=3)
    m1 = TT.binary_equivalent(m2)
    x = MarkovChain(0.2, 0.7).sample(6, 9, seed=2, backend="torch")
    m2.loss(x).backward()
    m1.loss(x).backward()
    gE, gP = m2.embedding.grad, m2.positional.grad
    # velocity of e = E_1 - E_0 and p_n = P_n + E_0 under -grad in (E, P), from autograd on the 2-state model
    v_e = -(gE[1] - gE[0])
    v_p = -(gP + gE[0])
    pred_e, pred_p = TT.induced_binary_gradient(m1.embedding.grad, m1.positional.grad)
    assert torch.allclose(v_e, pred_e, atol=1e-12) and torch.allclose(v_p, pred_p, atol=1e-12)
    # ... which is not the binary parameterization's own flow
    assert float((pred_e + m1.embedding.grad).abs().max()) > 1e-6


def test_authors_public_init_starts_on_the_unigram_line_with_dead_relus():
    d, n = 8, 64
    m2 = TT.init_authors_public(MarkovTransformer(d, n, attention="softmax", n_states=2), seed=0)
    m1 = TT.binary_equivalent(m2)
    assert float(m1.embedding.detach().abs().max()) == 0.0  # e = 0 exactly
    x = MarkovChain(0.5, 0.8).sample(8, n + 1, seed=0, backend="torch")
    with torch.no_grad():
        _, hidden = m2(x[:, :-1], return_hidden=True)
        assert float((hidden["y"] @ m2.W_1.T).max()) < 0  # every ReLU is dead
        assert abs(float(m2.loss(x)) - math.log(2)) < 1e-12  # logits equal: the loss is log 2
    s = canonical_scalars(m1)
    assert abs(s.e) < 1e-12 and abs(s.w - (-2 * d)) < 1e-9
    assert abs(TT.constant_ffn_scalar(2.0, d) - 2 * d) < 1e-12


def test_authors_submission_init_reads_as_w_minus_d():
    d = 8
    m2 = TT.init_authors_submission(MarkovTransformer(d, 32, n_states=2), seed=1)
    s = canonical_scalars(TT.binary_equivalent(m2))
    assert abs(s.w - (-d)) < 1e-9 and abs(s.e) < 0.2  # e = <E_1 - E_0, alpha>, N(0, 2 * 0.02^2) per entry


def test_bad_models_are_rejected():
    with pytest.raises(ValueError, match="n_states=2"):
        TT.binary_equivalent(MarkovTransformer(4, 8))
    with pytest.raises(ValueError, match="binary"):
        TT.two_state_from_binary(MarkovTransformer(4, 8, n_states=2))
    with pytest.raises(ValueError, match="E0"):
        TT.two_state_from_binary(MarkovTransformer(4, 8), E0=[1.0, 2.0])
