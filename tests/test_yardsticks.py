"""markovlib.transformer.yardsticks: Thm 4's construction, kappa, the perturbation study, the explicit directions."""
import math

import numpy as np
import pytest
import torch
from scipy.special import logit

from markovlib.markov.canonical import c_star
from markovlib.markov.chain import MarkovChain
from markovlib.transformer import yardsticks
from markovlib.transformer.exact import exact_loss
from markovlib.transformer.model import canonical_full_model

torch.set_num_threads(1)


@pytest.mark.parametrize("p,q", [(0.5, 0.8), (0.2, 0.3), (0.9, 0.9)])
def test_global_min_weights_solve_the_construction_and_reach_the_entropy_rate(p, q):
    cs, w, b = yardsticks.global_min_weights(p, q)
    assert cs == pytest.approx(c_star(p, q))
    assert 1 + 2 * w * abs(w) == pytest.approx(cs, abs=1e-12)
    assert b - 0.5 == pytest.approx(logit(p), abs=1e-12)  # b - e^2/2 = logit(p)
    ch = MarkovChain(p, q)
    model = canonical_full_model(1.0, w, b, d=4, max_len=5, seed=0)
    assert float(exact_loss(model, ch, 6).detach()) == pytest.approx(ch.entropy_rate, abs=1e-12)


def test_kappa():
    assert yardsticks.kappa(0.3) == 1.0
    assert yardsticks.kappa(-0.25) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="w"):
        yardsticks.kappa(float("nan"))


def test_perturbation_study_is_seeded_and_restores_the_model():
    ch = MarkovChain(0.5, 0.8)
    model = canonical_full_model(0.0, 0.5, logit(0.5 / 1.3), d=4, max_len=4, seed=0)
    before = [prm.detach().clone() for prm in model.parameters()]
    dL, a2 = yardsticks.perturbation_study(model, ch, 1e-2, 5, 3, 5)
    dL2, _ = yardsticks.perturbation_study(model, ch, 1e-2, 5, 3, 5)
    assert np.array_equal(dL, dL2) and dL.shape == a2.shape == (5,)
    assert (dL > 0).all() and (a2 > 0).all()  # Thm 5: p + q > 1, w > -1/2
    assert all(torch.equal(x, y) for x, y in zip(before, model.parameters()))
    with pytest.raises(ValueError, match="radius"):
        yardsticks.perturbation_study(model, ch, 0.0, 5, 3, 5)


def test_direction_c_beta_closed_forms():
    c, beta = yardsticks.direction_c_beta("canonical", 0.1, -0.6, 0.2)
    assert float(c) == pytest.approx(0.01 * (1 - 2 * 0.36)) and float(beta) == pytest.approx(0.2 - 0.005)
    c, _ = yardsticks.direction_c_beta("positional-free", 0.1, -0.6, 0.2)
    assert float(c) == pytest.approx(0.01 * (1 - 4 * 0.36))
    c, _ = yardsticks.direction_c_beta("positional-free", -0.1, -0.6, 0.2)
    assert float(c) == pytest.approx(0.01)
    with pytest.raises(ValueError, match="kind"):
        yardsticks.direction_c_beta("sideways", 0.1, 0.0, 0.0)


def test_direction_losses_match_the_closed_form():
    out = yardsticks.direction_losses(MarkovChain(0.2, 0.3), 0.5, 0.05, 0, d=4, n_exact=6)
    assert [name for name, _, _ in out] == list(yardsticks.DIRECTIONS)
    for _, pred, meas in out:
        assert abs(pred - meas) < 1e-12
    assert out[2][2] < 0  # p + q < 1: the orthogonal direction lowers the loss
    with pytest.raises(ValueError, match="d must be at least 2"):
        yardsticks.direction_losses(MarkovChain(0.2, 0.3), 0.5, 0.05, 0, d=1, n_exact=6)


def test_best_bias_loss_reaches_the_marginal_entropy_without_embedding():
    ch = MarkovChain(0.3, 0.4)
    best = yardsticks.best_bias_loss(lambda b: canonical_full_model(0.0, 0.5, b, d=2, max_len=4, seed=0), ch, 5)
    assert best == pytest.approx(ch.marginal_entropy, abs=1e-9)
    with pytest.raises(ValueError, match="model_at_b"):
        yardsticks.best_bias_loss(3.0, ch, 5)


def test_min_slope_on_range():
    g = yardsticks.min_slope_on_range(0.02, points=97)
    p = q = 0.02  # a corner of the range is far from p + q = 1: the minimum is on the margin or at a corner
    assert 0 < g <= p * q * abs(p + q - 1) / (p + q) ** 2 + 1e-15
    assert math.isfinite(g)
    with pytest.raises(ValueError, match="margin"):
        yardsticks.min_slope_on_range(0.0)
