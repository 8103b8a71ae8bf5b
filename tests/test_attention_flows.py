"""markovlib.markov.attention_flows and attention_basins: the attention chapter's checks along integrated flows (Lemmas
14-16, Thm 3, the second invariant, the separatrix) and of the 3-D basins and Thm 11, each against what it must find."""
import numpy as np
import pytest

from markovlib.markov import attention_basins, attention_flows
from markovlib.markov.energy import SADDLE_ENERGY, energy

P, Q = 0.9, 0.9
T_EFF = 4000.0


@pytest.fixture(scope="module")
def flows():
    return attention_flows.flow_checks([(P, Q), (0.2, 0.3)], [(P, Q)], T_EFF, np.random.default_rng(2), n=1)


def test_flow_checks_conserve_energy_and_end_critical(flows):
    assert flows.ok and len(flows.traj) == 2 and flows.worst.max() < 1e-6
    assert flows.plane_ok and flows.plane_max == 0.0
    assert "w0 = 0: w(t) = 0 exactly" in flows.report()


def test_independent_integration_agrees(flows):
    err, n = attention_flows.independent_integration(flows.traj)
    assert n == 2 and err < 1e-6


def test_line_checks_pass_on_flows_and_fail_on_the_control(flows):
    cks, text = attention_flows.line_checks(flows.traj, 1e-8)
    assert all(ck["ratio"] < 1 and ck["bracketed"] for ck in cks) and text.count("\n") == 2
    p, q, th0, tr = flows.traj[0]
    ctrl = attention_flows.control_flow(p, q, th0, tr.t, 1.05)
    from markovlib.markov import invariant
    ck = invariant.line_check(ctrl, 1e-8)
    assert ck["ratio"] > 1 and ck["n_out"] > 0
    with pytest.raises(ValueError, match="theta0"):
        attention_flows.control_flow(p, q, th0[:2], tr.t, 1.05)


def test_labelled_flow_of_the_example_is_outside_r0():
    tr, ck = attention_flows.labelled_flow((0.35, 0.25), (-0.71, 0.62, -1.69), T_EFF, 1e-8)
    assert not ck["inside"] and ck["ratio"] < 1 and tr.e.size > 1


def test_same_energy_starts_share_e_and_split():
    e0s, a0s, target, res, text = attention_flows.same_energy_starts(P, Q, T_EFF, 3000)
    assert target == pytest.approx(SADDLE_ENERGY - 0.4)
    assert np.allclose(energy(e0s, -0.3, a0s), target) and set(res.outcome) == {"global_min", "unigram"}


def test_separatrix_asymptote():
    sep = attention_flows.separatrix_asymptote([-3.0, -10.0], 100.0)
    assert sep.ok and sep.n_within == sep.n_resolved == 2
    assert float(16 * sep.g9) == pytest.approx(16 * 11 / 1024)  # the t^9 coefficient derived in the chapter
    with pytest.raises(ValueError, match="sep_a"):
        attention_flows.separatrix_asymptote([3.0], 100.0)


def test_basin_check_and_rules():
    basins = attention_basins.basin_check([(P, Q), (0.5, 0.8), (0.1, 0.1)], 40, T_EFF, 3000, np.random.default_rng(3))
    assert basins.n_bad == 0 and basins.max_lim_err < 1e-5 and all(basins.same_side.values())
    assert basins.chains == {">1": [(P, Q), (0.5, 0.8)], "<1": [(0.1, 0.1)]}
    table, text = attention_basins.rule_table(basins)
    fails, n = table["w0 < 0 and E > E_sad  =>  global (any p, q)"]
    assert fails == 0 and n > 0 and len(table) == 5
    # the rule 'p+q>1: w0 > 0 => unigram' fails on starts beyond S
    assert table["p+q>1: w0 > 0  =>  unigram"][0] > 0


def test_slice_outcomes_agree_with_the_rule():
    EG, WG, outcome, bad = attention_basins.slice_outcomes(P, Q, 0.0, 6, T_EFF, 3000)
    assert EG.shape == outcome.shape == (6, 6) and bad == 0
    assert {"global_min", "unigram"} <= set(outcome.ravel())


def test_separatrix_escape():
    esc = attention_basins.separatrix_escape(P, Q, T_EFF)
    assert esc.ok and esc.trend_ok and len(esc.flows) == 4 and np.all(np.diff(esc.A) < 0)


def test_rule_probability_and_thm11():
    assert attention_basins.rule_probability(P, Q, 0.05, 2000, np.random.default_rng(0)) > 0.95
    assert attention_basins.rule_probability(0.1, 0.1, 0.05, 2000, np.random.default_rng(0)) < 0.05
    mc = attention_basins.thm11_monte_carlo([(P, Q), (0.1, 0.1)], [0.1, 1.0], 40, 2000, 0.001, 3.0, T_EFF, 3000,
                                            np.random.default_rng(5))
    assert len(mc.rows) == 4 and mc.ok and mc.trend and mc.n_undecided == 0
    assert mc.side(True)[0][2] >= 36 and mc.side(False)[0][2] <= 4  # the small-sigma limits
    with pytest.raises(ValueError, match="n"):
        attention_basins.thm11_monte_carlo([(P, Q)], [0.1], 0, 10, 0.001, 3.0, T_EFF, 3000, np.random.default_rng(5))


def test_reference_spot_check():
    text, prob_sd = attention_basins.reference_spot_check(6, 4000)
    assert text.count("p=q=") == 3 and prob_sd > 0.95  # sd 0.25: nearly every start ends unigram for p = q = 0.9
