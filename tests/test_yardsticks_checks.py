"""markovlib.transformer.yardsticks_reference, yardsticks_checks and yardsticks_thm5: the transformer_yardsticks
chapter's steps, each against what it must find (and, where a check could pass vacuously, against a case it must
reject)."""
import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from scipy.special import logit  # noqa: E402

from markovlib.markov.chain import MarkovChain  # noqa: E402
from markovlib.transformer import yardsticks_checks, yardsticks_reference, yardsticks_thm5  # noqa: E402
from markovlib.transformer.model import MarkovTransformer, canonical_full_model  # noqa: E402

torch.set_num_threads(1)
CH = MarkovChain(0.5, 0.8)


@pytest.fixture(scope="module")
def demo():
    model = MarkovTransformer.standard(4, 8, std=0.5, seed=0, attention="softmax")
    return model, CH.sample(3, 6, seed=0, backend="torch")


def test_streams_by_hand_agree_with_the_module_and_see_a_changed_weight(demo):
    model, x = demo
    res = yardsticks_checks.stream_check(model, x)
    assert [n for n, _ in res.rows][-1] == "loss" and res.worst < 1e-12 and 0 < res.relu_on < res.relu_n
    ref = yardsticks_reference.streams_by_hand(model, x)
    assert ref["attention"].sum(-1).sub(1).abs().max() < 1e-12  # rows of the causal softmax sum to 1
    with torch.no_grad():
        model.W_O.mul_(2.0)
    try:
        assert yardsticks_checks.stream_check(model, x).worst < 1e-12  # both follow the weights
        changed = yardsticks_reference.streams_by_hand(model, x)
        assert float((changed["y"] - ref["y"]).abs().max()) > 1e-3
    finally:
        with torch.no_grad():
            model.W_O.mul_(0.5)
    with pytest.raises(ValueError, match="x must"):
        yardsticks_reference.streams_by_hand(model, torch.full((2, 3), 2))


def test_exact_vs_sampled(demo):
    model, _ = demo
    L, mt = yardsticks_checks.exact_vs_sampled(model, CH, 6, 2000, 1)
    assert mt.pvalue > 1e-6 and abs(mt.mean - L) < 5 * mt.std_err
    with pytest.raises(ValueError, match="n_seq"):
        yardsticks_checks.exact_vs_sampled(model, CH, 6, 0, 1)


def test_thm4_check_at_the_construction():
    res = yardsticks_checks.thm4_check([[0.5, 0.8], [0.2, 0.3]], 4, 32, 8, 5, 0)
    assert len(res.rows) == 2 and max(res.worst(k) for k in ("err_f", "gap", "gmax")) < 1e-10
    assert res.rows[0]["w"] < -1 / np.sqrt(2) < res.rows[1]["w"]  # p + q > 1 needs w < -1/sqrt2
    assert "c*" in res.report()
    with pytest.raises(ValueError, match="chains"):
        yardsticks_checks.thm4_check([], 4, 32, 8, 5, 0)


def test_w_search_finds_the_construction_blind():
    res = yardsticks_checks.w_search([[0.5, 0.8], [0.2, 0.3]], 2, 4, 0)
    assert res.n_side == 2 and res.worst("w") < 1e-3 and res.worst("loss") < 1e-9 and res.worst("saddle") < 1e-9


def test_lower_bound_gaps_are_nonnegative():
    gaps = yardsticks_checks.lower_bound_gaps(0.5, 0.8, 2, 4, 0, n=3)
    assert len(gaps) == 12 and min(gaps) >= -1e-14 and max(gaps) > 1e-3


def test_theta_pi_check():
    res = yardsticks_checks.theta_pi_check(0.5, 0.8, 0.5, 4, 32, 8, 5, 0)
    assert res.err_pred < 1e-12 and abs(res.L_pi - CH.marginal_entropy) < 1e-12
    assert max(res.grads.values()) < 1e-12
    assert res.excess == pytest.approx(CH.marginal_entropy - CH.entropy_rate, abs=1e-12) and res.excess > 0
    assert res.b_pi == pytest.approx(logit(0.5 / 1.3))


def test_perturbation_studies_separate_the_sides():
    low = MarkovChain(0.2, 0.3)
    hi = canonical_full_model(0.0, 0.5, logit(0.5 / 1.3), d=2, max_len=3, seed=0)
    lo = canonical_full_model(0.0, 0.5, logit(0.2 / 0.5), d=2, max_len=3, seed=0)
    st = yardsticks_thm5.perturbation_studies([("a > 1", hi, CH), ("b < 1", lo, low)], 0.5, [1e-2], 40, 0, 4)
    assert st.n_high == 40 and st.ratio_ok and st.n_low[0] > 0 and st.kappa_w == 1.0
    assert len(st.ratio_min) == 1 and st.C_hat == pytest.approx(1.0 * (1 - st.ratio_min[0]) / 1e-2)


def test_direction_table_and_slices():
    cases = [("hi", CH, -0.6, "canonical min only")]
    signs, abs_max, pred_min, text = yardsticks_thm5.direction_table(cases, 1e-2, 0, 2, 4)
    assert abs_max < 1e-12 and pred_min > 1e-10 and text.count("\n") == 4
    assert signs[("hi", -0.6, "canonical")] > 0 > signs[("hi", -0.6, "positional-free")]  # the trap
    sl = yardsticks_thm5.trap_slices(CH, -0.6, float(logit(0.5 / 1.3)), 2, 4, 0, eps=np.linspace(-0.3, 0.3, 5))
    assert sl.err < 1e-12 and len(sl.curves["canonical"]) == 5 and sl.predicted["canonical"][1].size == 301


def test_evidence_figure():
    hi = canonical_full_model(0.0, 0.5, logit(0.5 / 1.3), d=2, max_len=3, seed=0)
    st = yardsticks_thm5.perturbation_studies([("a > 1", hi, CH), ("b < 1", hi, CH)], 0.5, [1e-2], 5, 0, 4)
    sl = yardsticks_thm5.trap_slices(CH, -0.6, float(logit(0.5 / 1.3)), 2, 4, 0, eps=np.linspace(-0.3, 0.3, 5))
    fig = yardsticks_thm5.evidence_figure(st, ("a > 1", "b < 1"), 1e-2, 0.5, sl, "title")
    assert len(fig.axes) == 2 and len(fig.axes[1].lines) == 5  # 2 closed forms, 2 measured, the zero line
