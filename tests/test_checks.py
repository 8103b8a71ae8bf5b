"""Tests of markovlib.markov.checks: the exact frequency tests of the Markov sampler and their bookkeeping."""
import numpy as np
import pytest
from scipy import stats

from markovlib.markov import checks
from markovlib.markov.chain import MarkovChain


def test_binom_pvalue_is_twice_the_smaller_tail():
    assert checks.binom_pvalue(5, 10, 0.5) == pytest.approx(1.0)
    k, n, prob = 2, 50, 0.3
    ref = 2 * stats.binom.cdf(k, n, prob)
    assert checks.binom_pvalue(k, n, prob) == pytest.approx(ref)
    assert checks.binom_pvalue(48, 50, 0.3) == pytest.approx(2 * stats.binom.sf(47, 50, 0.3))
    out = checks.binom_pvalue(np.array([1, 2]), np.array([10, 10]), np.array([0.1, 0.2]))
    assert out.shape == (2,) and np.all(out <= 1)
    with pytest.raises(ValueError, match="prob"):
        checks.binom_pvalue(1, 10, 1.5)
    with pytest.raises(ValueError, match="k and n"):
        checks.binom_pvalue(11, 10, 0.5)


def test_transition_counts_by_hand():
    x = np.array([[0, 1, 1, 0, 0], [1, 1, 0, 1, 0]])
    # pairs: (0,1) (1,1) (1,0) (0,0) | (1,1) (1,0) (0,1) (1,0): 0 -> 1 twice in 3 visits of 0, 1 -> 0 thrice in 5
    assert checks.transition_counts(x) == ((2, 3), (3, 5))
    with pytest.raises(ValueError, match="x must be"):
        checks.transition_counts(np.zeros(5))


def test_runs_from_start_by_hand_and_in_law():
    x = np.array([[0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1]])
    lengths, states = checks.runs_from_start(x, 3)
    # switches at 1, 4, 6; starts allowed at s <= 12 - 1 - 3 = 8: runs of 1 (length 3), of 0 (2), of 1 (capped 4)
    assert lengths.tolist() == [3, 2, 4] and states.tolist() == [1, 0, 1]
    chain = MarkovChain(0.3, 0.6)
    lengths, states = checks.runs_from_start(chain.sample(2000, 64, seed=3), 6)
    for state, r in ((0, 0.3), (1, 0.6)):
        lens = lengths[states == state]
        counts = np.bincount(lens, minlength=8)[1:]
        assert checks.binom_pvalue(counts, lens.size, checks.geometric_bins(r, 6)).min() > 1e-6
    with pytest.raises(ValueError, match="kmax"):
        checks.runs_from_start(x, 11)


def test_geometric_bins_sum_to_one():
    law = checks.geometric_bins(0.25, 5)
    assert law.shape == (6,) and law.sum() == pytest.approx(1.0)
    assert law[0] == pytest.approx(0.25) and law[-1] == pytest.approx(0.75 ** 5)
    with pytest.raises(ValueError, match="r"):
        checks.geometric_bins(0.0, 5)


def test_n_sigma_min_and_round_up():
    n = checks.n_sigma_min(55, 0.01)
    assert 55 * 2 * stats.norm.sf(n) == pytest.approx(0.01)
    assert checks.n_sigma_min(1, 0.05) == pytest.approx(1.959964, abs=1e-6)
    assert checks.round_up(5.71e-5) == pytest.approx(5.8e-5)
    assert checks.round_up(3.1e-5) == pytest.approx(3.1e-5) and checks.round_up(3.1e-5) >= 3.1e-5
    assert checks.round_up(0.123, 1) == pytest.approx(0.2)
    for bad in (0, -1.0, np.nan):
        with pytest.raises(ValueError, match="x"):
            checks.round_up(bad)
    with pytest.raises(ValueError, match="n_tests"):
        checks.n_sigma_min(0, 0.01)


def test_min_over_bias_is_the_closed_form_optimal_bias():
    import torch

    from markovlib.transformer.exact import exact_loss
    from markovlib.transformer.model import canonical_full_model
    from markovlib.transformer.readout import optimal_canonical_bias

    chain = MarkovChain(0.5, 0.8)
    for e, w in ((1.3, 0.6), (-0.7, -0.4)):
        def loss_b(b, e=e, w=w):
            with torch.no_grad():
                return float(exact_loss(canonical_full_model(e, w, b, max_len=4, seed=0), chain, 4))
        value, b = checks.min_over_bias(loss_b)
        assert b == pytest.approx(optimal_canonical_bias(e, w, 0.0, 0.5, 0.8), abs=1e-4)
    assert checks.min_over_bias(lambda b: (b - 1.0) ** 2 + 2.0) == pytest.approx((2.0, 1.0), abs=1e-8)
    with pytest.raises(ValueError, match="bracket"):
        checks.min_over_bias(lambda b: b * b, bracket=(1.0, -1.0))
    with pytest.raises(ValueError, match="loss_of_b"):
        checks.min_over_bias(3.0)


def test_disc_and_ball_are_uniform_inside_the_radius():
    rng = np.random.default_rng(0)
    dx, dy = checks.disc(rng, 20000, 0.5)
    r2 = dx ** 2 + dy ** 2
    assert r2.max() <= 0.25 and abs(np.mean(r2 <= 0.125) - 0.5) < 0.02  # half the area inside r / sqrt 2
    x = checks.ball(rng, 20000, 2.0)
    r = np.linalg.norm(x, axis=1)
    assert x.shape == (20000, 3) and r.max() <= 2.0 and abs(np.mean(r <= 2.0 * 0.5 ** (1 / 3)) - 0.5) < 0.02
    with pytest.raises(ValueError, match="r"):
        checks.disc(rng, 10, 0.0)
    with pytest.raises(ValueError, match="n"):
        checks.ball(rng, 0, 1.0)


def test_floor_text():
    assert checks.floor_text(3e-3) == "3.0e-03"
    assert checks.floor_text(-1e-16) == "|min| < 2e-15"
    assert checks.floor_text(-1e-3).startswith("|min| 1.00e-03 (not")
    with pytest.raises(ValueError, match="x"):
        checks.floor_text(np.nan)


def test_place_roots_sorts_points_onto_the_critical_sets():
    from markovlib.markov import canonical

    p, q = 0.9, 0.9
    cs = canonical.c_star(p, q)
    w = -1.5
    e = float(np.sqrt(cs / (1 + 2 * w * abs(w))))  # on Gamma* at a = 0
    R = np.array([[0.0, 0.3, 1.0], [1.0, -1 / np.sqrt(2), -1.0], [e, w, 0.0], [0.5, 0.5, 0.5]])
    where = checks.place_roots(R, p, q, 1e-8)
    assert where["plane e=0"].tolist() == [True, False, False, False]
    assert where["Sigma"].tolist() == [False, True, False, False]
    assert where["Gamma*"].tolist() == [False, False, True, False]
    assert where["elsewhere"].tolist() == [False, False, False, True]
    with_b = np.column_stack([R, np.full(4, 100.0)])  # a bias far from its optimum: on no lifted set
    assert checks.place_roots(with_b, p, q, 1e-8)["elsewhere"].all()
    with pytest.raises(ValueError, match="R must"):
        checks.place_roots(np.zeros((2, 5)), p, q, 1e-8)
