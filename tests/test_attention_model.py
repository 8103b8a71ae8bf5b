"""markovlib.markov.attention_model and attention_landscape: the attention chapter's checks of the full model, of
Lemma 13, Thm 10, Remark 5 and the root searches (Thms 9, 10), each against what it must find."""
import numpy as np
import pytest
import sympy as sp
import torch

from markovlib.markov import attention_landscape, attention_model, canonical, reference
from markovlib.transformer.model import MarkovTransformer

P, Q = 0.9, 0.9


@pytest.fixture(scope="module")
def lin():
    # d = 8 as in the chapter: on Sigma (a kink of the full model) d = 4 lands on its other side by rounding
    return attention_model.LinearModel(np.random.default_rng(0), MarkovTransformer(8, 1, attention="linear"))


def test_full_model_check_matches_the_scalar_a():
    build = MarkovTransformer.canonical
    res = attention_model.full_model_check([2], [3], np.random.default_rng(1), build)
    assert len(res.rows) == 10 and res.worst < 1e-10
    assert "10 configurations" in res.report()
    with pytest.raises(ValueError, match="rng"):
        attention_model.full_model_check([2], [3], 1, build)
    with pytest.raises(ValueError, match="dims"):
        attention_model.full_model_check([], [3], np.random.default_rng(1), build)
    with pytest.raises(ValueError, match="model must"):
        attention_model.LinearModel(np.random.default_rng(0), MarkovTransformer(4, 1))  # softmax attention


def test_linear_model_loss_is_the_reduced_loss_at_the_optimal_bias(lin):
    for e, w, a in [(0.8, -0.4, 0.5), (-0.6, -1.1, -4.0)]:  # both signs of e (1 + a e^2)
        b = reference.optimal_bias_full(e, w, a, P, Q)
        t = [torch.tensor(v, dtype=torch.float64) for v in (e, w, a, b)]
        assert float(lin.loss(*t, P, Q)) == pytest.approx(float(canonical.loss(e, w, P, Q, a=a)), abs=1e-12)
    assert lin.grad_norm_at_optimal_bias(0.0, 0.4, -0.7, P, Q) < 1e-12  # the plane e = 0 is critical
    assert lin.grad_norm_at_optimal_bias(0.5, 0.5, 0.0, P, Q) > 1e-3  # a regular point is not


def test_gradient_check_agrees_and_skips_the_other_bias_convention(lin):
    res = attention_model.gradient_check(lin, [(P, Q), (0.2, 0.3)])
    assert len(res.rows) == 8 and max(res.worst_b, res.worst_r) < 1e-8 and res.worst_db < 1e-10
    assert sum(np.isnan(r[6]) for r in res.rows) == 4  # e (1 + a e^2) < 0 at two of the four points per chain


def test_hessian_check_on_the_three_sets(lin):
    for p, q in [(P, Q), (0.1, 0.1)]:
        for name, (e, w, a) in attention_model.critical_points(p, q):
            if name == "global minimum":
                assert float(canonical.coefficient(e, w, a)) == pytest.approx(canonical.c_star(p, q), abs=1e-12)
    res = attention_model.hessian_check(lin, [(P, Q)])
    assert res.ok and res.n_ev == 18 and res.worst_fd < 1e-3 and res.worst_g < 1e-10


def test_perturbation_verdicts():
    rng = np.random.default_rng(0)
    assert attention_landscape.perturbation_verdict((0.0, 0.3, 0.5), P, Q, rng)[0] == "local_min"
    assert attention_landscape.perturbation_verdict((0.0, -1.2, 0.2), P, Q, rng)[0] == "local_max"
    assert attention_landscape.perturbation_verdict((0.0, 0.3, 0.5), 0.1, 0.1, rng)[0] == "local_max"  # other side
    res = attention_landscape.perturbation_check([(0.1, 0.1)], rng)
    assert res.ok and res.n_agree == res.n_points == 6
    with pytest.raises(ValueError, match="r must"):
        attention_landscape.perturbation_verdict((0.0, 0.3, 0.5), P, Q, rng, r=0.0)


def test_bias_kink_jumps_in_the_full_model_only(lin):
    k = attention_landscape.bias_kink(lin, P, Q)
    assert abs(k.d_plus - k.pred_plus) < 1e-4 and abs(k.d_minus - k.pred_minus) < 1e-4
    assert k.pred_plus == pytest.approx(-0.25 * 1.1)  # pi0 = pi1 = 1/2
    assert k.red_jump < 1e-2 and k.red_col < 1e-2
    assert max(k.path["negative"]) < 0 < min(k.path["positive"])


def test_root_search_finds_only_the_critical_sets():
    res = attention_landscape.root_search([(P, Q)], 8, 2.0, 1e-5, np.random.default_rng(8))
    tot = res.totals()
    assert tot["elsewhere"] == 0 and res.agrees and res.g_worst < 1e-9
    assert res.n_starts == 2 * (8 + 2 + 2) and sum(tot[k] for k in attention_landscape.SETS) == res.n_roots
    assert "elsewhere" in res.report()


def test_energy_identity_is_zero_but_not_for_a_wrong_energy():
    assert all(expr == 0 for expr in attention_landscape.energy_identity().values())
    e, a, W = sp.symbols("e a W", real=True)  # with 2a^2 replaced by a^2 the product does not vanish
    c = e**2 * (1 + a * e**2) * (1 + 2 * W**2)
    E = e**2 - a**2 - W**2 - sp.log(W)
    assert sp.simplify(sum(sp.diff(E, v) * sp.diff(c, v) for v in (e, W, a))) != 0
