"""markovlib.beyond.kstate_checks and kstate_stored: the K-state chapter's Monte Carlo tolerances, rounding scale,
read-out, and the reading of its stored runs."""
import math

import numpy as np
import pandas as pd
import pytest
import torch

from markovlib.beyond import kstate_checks, kstate_stored, multistate
from markovlib.book.stored import data_dir


def test_plugin_entropies_of_a_known_table():
    prev = np.array([0, 0, 1, 1])
    nxt = np.array([0, 1, 1, 1])
    cond, marg = kstate_checks.plugin_entropies(prev, nxt, 2)
    # written out: H(next | prev = 0) = log 2 (half the mass), H(next | prev = 1) = 0; pooled symbols 3 zeros, 5 ones
    assert math.isclose(cond, 0.5 * math.log(2))
    assert math.isclose(marg, -(3 / 8) * math.log(3 / 8) - (5 / 8) * math.log(5 / 8))


def test_mc_ratios_hold_for_samples_of_the_chain():
    K, p = 3, 0.3
    x = multistate.symmetric_chain(K, p).sample(200, 120, seed=1, backend="numpy").astype(np.int64)
    lam = multistate.symmetric_eigenvalue(K, p)
    ratios, est = kstate_checks.mc_ratios(x[:, :-1], x[:, 1:], K, multistate.symmetric_entropy_rate(K, p),
                                          z=5.0, want_marg=math.log(K), lam=lam)
    assert len(ratios) == 2 and max(ratios) < 1
    wrong, _ = kstate_checks.mc_ratios(x[:, :-1], x[:, 1:], K, multistate.symmetric_entropy_rate(K, p) + 0.2, z=5.0)
    assert wrong[0] > 1


def test_mc_ratios_with_the_derived_standard_error():
    # issue 35: at K 6, p 0.1 (the chapter's default sample and seed) the 10-group standard error of the entropy rate
    # fell to 0.38 of the derived one and the check failed at 1.2; with the derived one it passes
    K, p = 6, 0.1
    P = multistate.symmetric_kernel(K, p)
    sd = kstate_checks.transition_log_sd(P)
    h = multistate.symmetric_entropy_rate(K, p)
    assert math.isclose(sd**2, float((P[0] * np.log(P[0]) ** 2).sum()) - h**2)
    x = multistate.symmetric_chain(K, p).sample(400, 200, seed=1000 * K, backend="numpy").astype(np.int64)
    lam = multistate.symmetric_eigenvalue(K, p)
    old, _ = kstate_checks.mc_ratios(x[:, :-1], x[:, 1:], K, h, z=5.0, want_marg=math.log(K), lam=lam)
    new, _ = kstate_checks.mc_ratios(x[:, :-1], x[:, 1:], K, h, z=5.0, want_marg=math.log(K), lam=lam, cond_sd=sd)
    assert old[0] > 1 and max(new) < 1
    # uniform rows (p = p*): the derived first-order spread is 0 and the group estimate is used
    assert kstate_checks.transition_log_sd(multistate.symmetric_kernel(4, 0.75)) < 1e-7
    with pytest.raises(ValueError):
        kstate_checks.transition_log_sd(np.array([[0.5, 0.5], [0.9, 0.1]]))


def test_mc_z_min_is_the_bonferroni_t_quantile():
    from scipy import stats

    assert math.isclose(kstate_checks.mc_z_min(0.05, 22), float(stats.t(9).isf(0.05 / 44)))
    assert kstate_checks.mc_z_min(0.05, 40) > kstate_checks.mc_z_min(0.05, 4)


def test_random_kernel_and_rounding_scale():
    P = kstate_checks.random_kernel(4, np.random.default_rng(0))
    assert np.allclose(P.sum(1), 1) and P.min() > 0
    u = np.finfo(float).eps / 2
    M = 5 * 3**5
    assert math.isclose(kstate_checks.rounding_scale(5, 3, 7.0), 2 * M * u / (1 - M * u) * 7.0)
    assert kstate_checks.rounding_scale(5, 3, 0.1) == kstate_checks.rounding_scale(5, 3, 1.0)


def test_largest_gradient_vanishes_on_the_critical_set():
    chain = multistate.symmetric_chain(3, 0.2)
    model = multistate.zero_embedding_model(chain, d=4, max_len=3, std=0.5, seed=0)
    loss, g = kstate_checks.largest_gradient(model, chain, 3)
    assert abs(float(loss.detach()) - math.log(3)) < 1e-12 and g < 1e-12


def test_lumped_predictor_and_its_tv():
    K, p = 3, 0.9
    P = multistate.symmetric_kernel(K, p)
    assert np.allclose(kstate_checks.lumped_predictor(K, p, range(K)), P)
    Q0 = kstate_checks.lumped_predictor(K, p, [])
    assert np.allclose(Q0, 1 / K)
    assert kstate_checks.best_lumped_tv(P, K, p, K) < 1e-15
    Q1 = kstate_checks.lumped_predictor(K, p, [2])
    assert kstate_checks.best_lumped_tv(Q1, K, p, 1) < 1e-15 and kstate_checks.best_lumped_tv(Q1, K, p, 0) > 0.1
    # the loss of the lumped predictor is the ladder's L_m
    pi = np.full(K, 1 / K)
    loss = -float((pi[:, None] * P * np.log(Q1)).sum())
    assert math.isclose(loss, multistate.lumped_loss(K, p, 1), rel_tol=1e-12)


def test_readout_of_a_uniform_model():
    model = multistate.zero_embedding_model(multistate.symmetric_chain(3, 0.5), d=4, max_len=8, std=0.1, seed=0)
    with torch.no_grad():
        model.bias.zero_()
    q = kstate_checks.readout(model, 3, 0.5, 8, seed=0, batch=16)
    assert q.shape == (3, 3) and np.allclose(q, 1 / 3)


def test_tv_text():
    assert kstate_checks.tv_text(0.012, 0.05) == "< 2e-02"
    assert kstate_checks.tv_text(0.0456, 0.05) == "0.046"


def test_ladder_classification():
    K, p = 3, 0.967
    L = kstate_stored.ladder(K, p)
    assert L[0] == pytest.approx(math.log(3)) and L[-1] == pytest.approx(multistate.symmetric_entropy_rate(K, p))
    assert kstate_stored.ladder_class(K, p, L[0], 0.02)[:3] == (True, False, 0)
    assert kstate_stored.ladder_class(K, p, L[-1], 0.02)[:3] == (False, True, K - 1)
    assert kstate_stored.ladder_class(K, p, L[1], 0.02)[2] == 1


def test_stored_runs_classify_and_count():
    folder = data_dir("beyond_two_states")
    runs, curves = pd.read_csv(folder / "runs.csv"), pd.read_csv(folder / "curves.csv")
    out = kstate_stored.classify_runs(runs.head(6), curves, 0.02)
    assert {"at_unigram", "at_bigram", "level", "resolvable", "fell", "side"} <= set(out.columns)
    assert set(out.side) <= {"p < p*", "p > p*"}
    assert kstate_stored.count_text([True, True, False]).startswith("2/3 [")
    cell = kstate_stored.stored_cell(runs, 3, 0.967, 0)
    assert len(cell) > 0
    with pytest.raises(ValueError, match="slice_K"):
        kstate_stored.stored_cell(runs, 4, 0.5, 0)
    phase = pd.DataFrame({"arm": ["a"] * 3, "side": ["p > p*"] * 3, "resolvable": [True] * 3,
                          "capacity": [True] * 3, "K": [3] * 3, "p": [0.9] * 3, "at_bigram": [True, False, True]})
    rows = kstate_stored.cells_counts(phase, "a", "p > p*", "at_bigram")
    assert rows == [(3, 0.9, 2, 3)] and kstate_stored.counts_text(rows) == "2/3 at K = 3, p = 0.9"


def test_check_phase_set():
    arms = {("adam", 1, "standard")}
    good = {"provenance": {"complete": True}, "runs_planned": 2, "failed_runs": [],
            "arms": [{"optimizer": "adam", "tied": True, "init": "standard"}]}
    kstate_stored.check_phase_set(good, [0, 1], arms)
    with pytest.raises(ValueError, match="incomplete"):
        kstate_stored.check_phase_set(good, [0], arms)
    with pytest.raises(ValueError, match="arms"):
        kstate_stored.check_phase_set(good, [0, 1], {("sgd", 1, "standard")})


@pytest.mark.parametrize("call", [
    lambda: kstate_checks.plugin_entropies([0, 1], [0], 2),
    lambda: kstate_checks.mc_ratios(np.zeros((4, 3), int), np.zeros((4, 3), int), 2, 0.1, z=-1.0),
    lambda: kstate_checks.random_kernel(3, 0),
    lambda: kstate_checks.lumped_predictor(3, 0.5, [5]),
    lambda: kstate_stored.ladder_class(3, 0.5, 1.0, 0.0),
])
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_stored_facts_match_the_stored_runs():
    folder = data_dir("beyond_two_states")
    facts = kstate_stored.stored_facts(folder)
    runs = pd.read_csv(folder / "runs.csv")
    assert sorted(set(runs.K)) == sorted(facts["grid"]) and sorted(set(runs.seed)) == facts["seeds"]
    assert kstate_stored.is_stored_cell(facts, 3, 0.967, 0) and not kstate_stored.is_stored_cell(facts, 3, 0.5, 0)
    assert not kstate_stored.is_stored_cell(facts, 3, 0.967, 99)
    assert facts["phase_steps"] % facts["phase_eval_every"] == 0 and facts["prefix_steps"] > 0
    assert 1 in facts["lags"] and facts["steps"] == 500
