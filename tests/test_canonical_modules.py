"""markovlib.markov.canonical_reference, canonical_checks, canonical_drawings; transformer.canonical_fullmodel."""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from markovlib.markov import (  # noqa: E402
    canonical,
    canonical_checks,
    canonical_drawings,
    canonical_reference,
)
from markovlib.markov.chain import MarkovChain  # noqa: E402
from markovlib.transformer import canonical_fullmodel  # noqa: E402

torch.set_num_threads(1)
CHAINS = [(0.5, 0.8), (0.2, 0.3), (0.8, 0.3)]


@pytest.mark.parametrize("p, q", CHAINS)
def test_reference_formulas_agree_with_markovlib(p, q):
    c, beta = np.array([-2.0, 0.0, 1.5]), np.array([0.3, -0.7, 1.1])
    assert np.allclose(canonical_reference.lemma2_rhs(c, beta, p, q), canonical.logistic_loss(c, beta, p, q))
    assert np.allclose(canonical_reference.textbook_beta(c, p, q), canonical.optimal_beta(c, p, q))
    assert not np.isfinite(canonical_reference.textbook_beta(800.0, p, q))
    assert canonical_reference.c_star_closed(p, q) == pytest.approx(canonical.c_star(p, q))
    ch = MarkovChain(p, q)
    assert canonical_reference.entropy_rate_closed(p, q) == pytest.approx(ch.entropy_rate)
    assert canonical_reference.marginal_entropy_closed(p, q) == pytest.approx(ch.marginal_entropy)
    c_min, value = canonical_reference.bfgs_minimum(p, q)
    assert c_min == pytest.approx(canonical.c_star(p, q), abs=1e-4) and value == pytest.approx(ch.entropy_rate)
    beta_star = canonical.optimal_beta(c, p, q)
    assert np.abs(canonical_reference.dL_dbeta(beta_star, c, p, q)).max() < 1e-12
    with pytest.raises(ValueError, match="p must"):
        canonical_reference.lemma2_rhs(0.0, 0.0, 1.0, 0.5)


def test_numpy_checks_pass_and_report():
    L5 = canonical_checks.lemma5_table(CHAINS[1:], 0.5, 0.8)
    assert L5["err"] < 1e-9 and L5["res"] < 1e-12 and L5["curv"] > 0 and L5["special"] < 1e-12
    assert L5["n_chains"] == 3 and L5["table"].count("\n") == 4
    NB = canonical_checks.bias_numerics(800.0, -40.0, 0.5, 0.8)
    assert NB["ok"] and NB["overflows"] and NB["rel"] < 1e-11 and NB["n"] == 3
    G = canonical_checks.g_table(CHAINS)
    assert G["yard"] < 1e-12 and G["second"] > 0 and G["g1"] < 1e-7 and G["argmin_off"] <= 0.5 + 1e-9
    BF = canonical_checks.bfgs_table(CHAINS)
    assert BF["n_sign"] == 3 and BF["c_err"] < 1e-4
    ax = np.linspace(-2, 2, 41)
    SF = canonical_checks.surface_check(0.5, 0.8, ax, ax)
    assert 0 <= SF["excess"] <= SF["tol"] and SF["axis"] < 1e-12
    with pytest.raises(ValueError, match="e = 0"):
        canonical_checks.surface_check(0.5, 0.8, np.linspace(-2, 2, 40), ax)
    with pytest.raises(ValueError, match="chains"):
        canonical_checks.g_table([])


def test_fullmodel_checks_hold_at_small_sizes():
    chain = MarkovChain(0.5, 0.8)
    LS = canonical_fullmodel.logit_streams(chain, [2, 8], [1.3, -0.7], [0.6, -1.2], 0.25, 0)
    assert LS["worst"] < 1e-11 and LS["rank_one"] < 1e-12 and LS["n"] == 8
    SC = canonical_fullmodel.scalars_roundtrip([1.3, -0.7], [0.6, 0.0], 0.25, 16, 0)
    assert SC["err"] < 1e-12 and SC["neg"] == 0
    ex = dict(n_exact=6, seed=0)
    SE = canonical_fullmodel.sign_of_e(chain, [1.3], [0.6], 0.25, length=16, batch=4, **ex)
    assert SE["logit"] < 1e-11 and SE["sign"] < 1e-11 and SE["gap"] > 1e-9 and SE["opt"] < 1e-12
    L2 = canonical_fullmodel.lemma2_points(chain, [(1.3, 0.6, 0.25), (-0.7, -0.4, 0.25)], length=32, batch=8, **ex)
    assert L2["exact"] < 1e-12 and L2["lib"] < 1e-12 and L2["pvalue"] > 1e-7
    BS = canonical_fullmodel.bias_stationarity(chain, [(1.3, 0.6)], **ex)
    assert BS["grad"] < 1e-12 and BS["rise"] > 0
    LV = canonical_fullmodel.level_sets(chain, (canonical.c_star(0.5, 0.8), 1.5), (0.5, -2.0), **ex)
    assert LV["min"] < 1e-10 and LV["lib"] < 1e-12 and LV["n"] == 4
    EN = canonical_fullmodel.envelope(chain, [(1.3, 0.6), (1.0, -0.4)], **ex)
    assert EN["err"] < 1e-10
    WA = canonical_fullmodel.w_axis(chain, (-1 / math.sqrt(2), 0.8), **ex)
    assert WA["loss"] < 1e-12 and WA["grad"] < 1e-12
    # a wrong bias is caught: the loss away from the optimal bias exceeds g(c)
    assert canonical_fullmodel.full_loss(1.3, 0.6, 3.0, chain, 6, 0) > float(canonical.reduced_loss(
        canonical.coefficient(1.3, 0.6), 0.5, 0.8)) + 1e-3


def test_drawings_return_figures():
    f = canonical_drawings.reduced_loss_panels([(0.5, 0.8), (0.2, 0.3), (0.9, 0.9), (0.1, 0.1)])
    assert len(f.axes) == 4
    f = canonical_drawings.loss_surfaces(((0.5, 0.8), (0.2, 0.3)), np.linspace(-2, 2, 21), np.linspace(-2, 2, 21))
    assert len(f.axes) == 4  # two panels, two colour bars
    with pytest.raises(ValueError, match="four"):
        canonical_drawings.reduced_loss_panels([(0.5, 0.8)])
    plt.close("all")
