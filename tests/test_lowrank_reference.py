"""markovlib.transformer.lowrank_reference: singular values, top fraction, excess loss over the bigram predictor."""
import math

import numpy as np
import pytest
import torch

from markovlib.markov.chain import MarkovChain
from markovlib.transformer import lowrank_reference as ref


def test_spectrum_measures():
    W = np.diag([3.0, 4.0, 0.0])
    assert ref.spectrum(W) == pytest.approx([4.0, 3.0, 0.0])
    assert ref.top_fraction(W) == pytest.approx(16 / 25)
    assert ref.s2_over_s1(W) == pytest.approx(0.75)
    assert ref.off_rank_one(W) == pytest.approx(3.0)
    u, v = np.arange(1.0, 5.0), np.array([1.0, -2.0, 0.5])
    assert ref.top_fraction(np.outer(u, v)) == pytest.approx(1.0)
    assert ref.off_rank_one(np.outer(u, v)) < 1e-12
    assert np.isnan(ref.spectrum(np.full((2, 2), np.inf))).all()
    with pytest.raises(ValueError, match="W must be"):
        ref.spectrum(np.ones(3))
    with pytest.raises(ValueError, match="two singular values"):
        ref.s2_over_s1(np.ones((1, 3)))


class Logits(torch.nn.Module):
    """A model whose logit is a fixed function of the current symbol."""

    def __init__(self, on0, on1):
        super().__init__()
        self.on0, self.on1 = on0, on1

    def forward(self, x):
        return torch.where(x == 1, self.on1, self.on0).to(torch.float32)


def test_excess_loss_zero_at_the_bigram_predictor_and_gap_at_the_unigram_point():
    p, q = 0.2, 0.3
    bigram = Logits(math.log(p / (1 - p)), math.log((1 - q) / q))
    assert abs(ref.excess_loss(bigram, p, q, sequences=8, length=64, seed=0)) < 1e-6
    pi1 = p / (p + q)
    unigram = Logits(math.log(pi1 / (1 - pi1)), math.log(pi1 / (1 - pi1)))
    chain = MarkovChain(p, q)
    gap = chain.marginal_entropy - chain.entropy_rate
    assert ref.excess_loss(unigram, p, q, sequences=64, length=256, seed=1) == pytest.approx(gap, rel=0.1)
    with pytest.raises(ValueError, match="sequences"):
        ref.excess_loss(bigram, p, q, sequences=0, length=8, seed=0)
