"""data_checks and data_drawings (the chapter markov_data's steps)."""
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from markovlib.markov import data_checks, data_drawings  # noqa: E402
from markovlib.markov.chain import MarkovChain  # noqa: E402


def test_closed_forms_and_the_reference_loss():
    st = data_checks.stationary(0.5, 0.8)
    assert np.allclose(st.pi, [0.8 / 1.3, 0.5 / 1.3]) and st.err_eig < 1e-12 and st.err_lib < 1e-14
    ent = data_checks.entropies(0.5, 0.8)
    chain = MarkovChain(0.5, 0.8)
    assert ent.rate == pytest.approx(chain.entropy_rate, abs=1e-14) and ent.err_pi < 1e-14
    # the reference loss at the kernel's logits is the entropy rate, at pi_1's the marginal entropy
    logit = lambda t: np.log(t / (1 - t))  # noqa: E731
    assert data_checks.expected_loss(logit(0.5), logit(0.2), 0.5, 0.8) == pytest.approx(ent.rate, abs=1e-14)
    u = logit(0.5 / 1.3)
    assert data_checks.expected_loss(u, u, 0.5, 0.8) == pytest.approx(ent.marginal, abs=1e-14)
    with pytest.raises(ValueError, match="p"):
        data_checks.entropies(1.5, 0.8)


def test_minimizers_and_gap():
    mins = data_checks.loss_minimizers(0.3, 0.6, n=301)
    assert mins.steps <= 0.5 + 1e-9 and mins.steps_d <= 0.5 + 1e-9
    assert -1e-14 <= mins.ex_rate <= mins.tol and -1e-14 <= mins.ex_pi <= mins.tol
    gap = data_checks.yardstick_gap(0.05, n=49)
    assert gap.neg > -1e-12 and gap.on_line < 1e-12 and gap.off_line > 0 and gap.err_mi < 1e-12
    assert gap.gap.shape == (49, 49)


def test_gap_off_the_line_keeps_the_points_at_exactly_the_margin():
    # grid point k is (k + 1) / 100, so |p + q - 1| = |i + j - 98| / 100 exactly: select in integers, not floats
    gap = data_checks.yardstick_gap(0.05, n=99)
    i, j = np.meshgrid(np.arange(99), np.arange(99), indexing="ij")
    assert np.count_nonzero(np.abs(i + j - 98) == 5) == 188
    assert gap.off_line == pytest.approx(gap.gap[np.abs(i + j - 98) >= 5].min(), rel=1e-12)
    assert gap.off_line == pytest.approx(gap.gap[0, 93], rel=1e-12)  # (p, q) = (0.01, 0.94), at distance 0.05


def test_sampler_tests_pass_for_the_chain_and_fail_for_another():
    chain = MarkovChain(0.3, 0.6)
    x = chain.sample(512, 128, seed=0)
    losses = data_checks.yardstick_losses(x, 0.3, 0.6)
    assert losses.z < 5 and len(losses.pvalues) == 2
    assert data_checks.yardstick_losses(x, 0.6, 0.3).z > 5  # the swapped chain's yardsticks are rejected
    freq = data_checks.sampler_frequencies(chain, 512, 128, 1)
    assert min(freq.pv_trans + freq.pv_marg) > 1e-6 and len(freq.pvalues) == 10
    runs = data_checks.run_lengths(x, 0.3, 0.6, 6)
    assert runs.p_min > 1e-6 and len(runs.pvalues) == 14 and len(runs.measured[0]) == 6
    assert data_checks.run_lengths(x, 0.6, 0.3, 6).p_min < 1e-6  # Geom(p) and Geom(q) swapped
    P3 = [[0.1, 0.6, 0.3], [0.5, 0.25, 0.25], [0.3, 0.3, 0.4]]
    three = data_checks.kernel_frequencies(P3, 256, 128, 0)
    assert three.pv.min() > 1e-6 and len(three.pvalues) == 9
    with pytest.raises(ValueError, match="x must be"):
        data_checks.yardstick_losses(np.zeros(5), 0.3, 0.6)


def test_data_figures():
    assert len(data_drawings.loss_surface_figure(0.5, 0.8, n=51).axes) == 2  # with its colorbar
    gap = data_checks.yardstick_gap(0.05, n=21)
    assert len(data_drawings.gap_figure(gap.grid, gap.gap, 0.5, 0.8).axes) == 2
    runs = data_checks.run_lengths(MarkovChain(0.5, 0.8).sample(64, 64, seed=0), 0.5, 0.8, 4)
    assert data_drawings.runs_figure(runs, 0.5, 0.8, 4).axes[0].get_yscale() == "log"
    with pytest.raises(ValueError, match="gap must have shape"):
        data_drawings.gap_figure(gap.grid, gap.gap[:3], 0.5, 0.8)
