import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from markovlib.markov import canonical
from markovlib.markov.chain import MarkovChain

probs = st.floats(0.05, 0.95)
params = st.floats(-1.5, 1.5)


@given(probs, probs, st.floats(-8, 8))
@settings(max_examples=60, deadline=None)
def test_optimal_beta_is_numeric_argmin(p, q, c):
    beta = canonical.optimal_beta(c, p, q)
    res = minimize_scalar(lambda b: canonical.logistic_loss(c, b, p, q), bounds=(beta - 30, beta + 30),
                          method="bounded", options={"xatol": 1e-10})
    assert canonical.logistic_loss(c, beta, p, q) <= res.fun + 1e-12
    assert abs(res.x - beta) < 1e-4
    # the first-order condition of Lemma 5: q sigma(beta) + p sigma(c + beta) = p
    assert abs(q * canonical.sigmoid(beta) + p * canonical.sigmoid(c + beta) - p) < 1e-12


@given(probs, probs)
@settings(max_examples=40, deadline=None)
def test_yardsticks(p, q):
    mc = MarkovChain(p, q)
    cs = canonical.c_star(p, q)
    assert np.isclose(canonical.reduced_loss(cs, p, q), mc.entropy_rate, atol=1e-12)
    assert np.isclose(canonical.reduced_loss(0.0, p, q), mc.marginal_entropy, atol=1e-12)
    beta = canonical.optimal_beta(cs, p, q)
    assert np.isclose(canonical.sigmoid(beta), p) and np.isclose(canonical.sigmoid(cs + beta), 1 - q)  # the kernel
    cs_grid = np.linspace(cs - 3, cs + 3, 61)
    assert np.all(canonical.reduced_loss(cs_grid, p, q) >= mc.entropy_rate - 1e-12)
    assert abs(canonical.reduced_loss_grad(cs, p, q)) < 1e-12


def _fd(f, x, h=1e-7):
    return (f(x + h) - f(x - h)) / (2 * h)


@given(probs, probs, params, params, st.floats(-1, 1), st.floats(-2, 2))
@settings(max_examples=60, deadline=None)
def test_gradients_match_finite_differences(p, q, e, w, a, b):
    ge, gw = canonical.grad(e, w, p, q)
    assert np.isclose(ge, _fd(lambda x: canonical.loss(x, w, p, q), e), atol=1e-6, rtol=1e-5)
    assert np.isclose(gw, _fd(lambda x: canonical.loss(e, x, p, q), w), atol=1e-6, rtol=1e-5)
    ge, gw, ga = canonical.grad(e, w, p, q, a=a)
    assert np.isclose(ga, _fd(lambda x: canonical.loss(e, w, p, q, a=x), a), atol=1e-6, rtol=1e-5)
    assert np.isclose(ge, _fd(lambda x: canonical.loss(x, w, p, q, a=a), e), atol=1e-6, rtol=1e-5)
    g = canonical.grad(e, w, p, q, a=a, b=b)
    for i, (name, f) in enumerate([("e", lambda x: canonical.loss(x, w, p, q, a=a, b=b)),
                                   ("w", lambda x: canonical.loss(e, x, p, q, a=a, b=b)),
                                   ("a", lambda x: canonical.loss(e, w, p, q, a=x, b=b)),
                                   ("b", lambda x: canonical.loss(e, w, p, q, a=a, b=x))]):
        x0 = dict(e=e, w=w, a=a, b=b)[name]
        assert np.isclose(g[i], _fd(f, x0), atol=1e-6, rtol=1e-5), name


@given(probs, probs, params, params, st.floats(-2, 2))
@settings(max_examples=40, deadline=None)
def test_hessians_match_finite_differences(p, q, e, w, b):
    assume(abs(w) > 1e-3)  # d^2c/dw^2 = 4e^2 sign(w) jumps at w = 0: L is not twice differentiable there
    H = canonical.hessian(e, w, p, q)
    h = 1e-5
    num = np.array([[(canonical.grad(e + h, w, p, q)[i] - canonical.grad(e - h, w, p, q)[i]) / (2 * h),
                     (canonical.grad(e, w + h, p, q)[i] - canonical.grad(e, w - h, p, q)[i]) / (2 * h)]
                    for i in range(2)])
    assert np.allclose(H, num, atol=1e-5, rtol=1e-4)
    H3 = canonical.hessian(e, w, p, q, b=b)
    num3 = np.zeros((3, 3))
    for j in range(3):
        d = np.zeros(3)
        d[j] = h
        num3[:, j] = (np.array(canonical.grad(e + d[0], w + d[1], p, q, b=b + d[2]))
                      - np.array(canonical.grad(e - d[0], w - d[1], p, q, b=b - d[2]))) / (2 * h)
    assert np.allclose(H3, num3, atol=1e-5, rtol=1e-4)


def test_hessian_on_w_axis_is_diag():
    p, q = 0.9, 0.9
    g0 = canonical.reduced_loss_grad(0.0, p, q)
    for w in (-1.5, -0.3, 0.8):
        H = canonical.hessian(0.0, w, p, q)
        assert np.allclose(H, np.diag([2 * g0 * (1 + 2 * w * abs(w)), 0.0]), atol=1e-14)


def test_extreme_coefficients_are_stable():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for p, q in [(0.2, 0.3), (0.8, 0.3), (0.5, 0.5), (0.3, 0.8)]:
            c = np.array([-1e3, -700.0, -50.0, 0.0, 50.0, 700.0, 1e3])
            for f in (canonical.optimal_beta, canonical.reduced_loss, canonical.reduced_loss_grad,
                      canonical.reduced_loss_hess):
                assert np.all(np.isfinite(f(c, p, q)))
            # the loss grows linearly in |c|: one of the two logits must be wrong by ~|c|. The slope is
            # min(pi0 (1-p), pi1 (1-q)) as c -> -inf and min(pi0 p, pi1 q) = pq/(p+q) as c -> +inf.
            L = canonical.reduced_loss(c, p, q)
            pi0, pi1 = q / (p + q), p / (p + q)
            assert np.isclose(L[0] / 1e3, min(pi0 * (1 - p), pi1 * (1 - q)), rtol=1e-2)
            assert np.isclose(L[-1] / 1e3, p * q / (p + q), rtol=1e-2)
            e = np.sqrt(1e3)
            assert np.all(np.isfinite(canonical.grad(e, 0.0, p, q)))
            assert np.isfinite(canonical.loss(e, 0.0, p, q, b=3.0))


def test_critical_sets_and_classify():
    for p, q in [(0.9, 0.9), (0.1, 0.1)]:
        cs = canonical.critical_sets(p, q)
        mc = MarkovChain(p, q)
        assert np.isclose(cs.global_min_loss, mc.entropy_rate) and np.isclose(cs.axis_loss, mc.marginal_entropy)
        assert cs.global_min_loss < cs.axis_loss  # the loss ordering of Thm 1
        w = np.linspace(-3, 3, 601)
        e = cs.global_min_e(w)
        ok = np.isfinite(e)
        assert np.allclose(canonical.coefficient(e[ok], w[ok]), cs.c_star)
        assert np.all(canonical.classify(e[ok], w[ok], p, q) == "global_min")
        g = np.array(canonical.grad(e[ok], w[ok], p, q))
        assert np.abs(g).max() < 1e-10
        if p + q > 1:
            assert np.all(w[ok] < canonical.W_SADDLE)  # Gamma* needs w < -1/sqrt 2 when p + q > 1
            assert canonical.classify(0.0, 0.3, p, q) == "local_min"
            assert canonical.classify(0.0, -1.0, p, q) == "local_max"
        else:
            assert canonical.classify(0.0, 0.3, p, q) == "local_max"
            assert canonical.classify(0.0, -1.0, p, q) == "local_min"
        assert canonical.classify(0.0, canonical.W_SADDLE, p, q) == "saddle"
        assert canonical.classify(0.5, 0.5, p, q) == "regular"
    assert canonical.classify(0.0, 0.4, 0.3, 0.7) == "global_min"  # p + q = 1: every critical point is global


@pytest.mark.parametrize("call,msg", [
    (lambda: canonical.loss(1.0, 1.0, 0.0, 0.5), "p"),
    (lambda: canonical.loss(1.0, 1.0, 0.5, 1.0), "q"),
    (lambda: canonical.loss(np.nan, 1.0, 0.5, 0.5), "e"),
    (lambda: canonical.grad(1.0, np.inf, 0.5, 0.5), "w"),
    (lambda: canonical.optimal_bias(1.0, 1.0, 0.5, 0.5, a=np.nan), "a"),
    (lambda: canonical.loss(1.0, 1.0, 0.5, 0.5, b=np.inf), "b"),
    (lambda: canonical.critical_sets(0.5, 2.0), "q"),
    (lambda: canonical.classify(0.0, 0.0, -0.1, 0.5), "p"),
])
def test_bad_input(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


def test_w_on_level_set_reaches_the_coefficient():
    for c0 in (-3.0, 0.0, 0.7, 12.0):
        for e in (0.5, -1.0, 2.0):
            assert float(canonical.coefficient(e, canonical.w_on_level_set(c0, e))) == pytest.approx(c0, abs=1e-12)
    assert canonical.w_on_level_set(0.0, 1.0) == pytest.approx(-1 / np.sqrt(2))
    with pytest.raises(ValueError, match="e must be nonzero"):
        canonical.w_on_level_set(1.0, 0.0)
