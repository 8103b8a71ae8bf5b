import numpy as np
import pytest

from markovlib.markov import canonical
from markovlib.markov.chain import MarkovChain
from markovlib.markov.energy import SADDLE_ENERGY, energy, predict_limit
from markovlib.markov.flow import gradient_descent, integrate, integrate_batch

PQ = [(0.9, 0.9), (0.5, 0.8), (0.1, 0.1), (0.2, 0.3)]


def test_saddle_energy_and_lemma12():
    assert np.isclose(SADDLE_ENERGY, energy(0.0, canonical.W_SADDLE))
    w = np.linspace(-3, -0.01, 2000)
    E = energy(0.0, w)
    assert np.isclose(E.max(), SADDLE_ENERGY, atol=1e-5)
    assert abs(w[np.argmax(E)] - canonical.W_SADDLE) < 2e-3
    assert np.isnan(energy(1.0, 0.0))


def test_energy_is_orthogonal_to_grad_c():
    """Lemma 1/9 (and App. G): grad E . grad c = 0, so E is constant along -g'(c) grad c."""
    rng = np.random.default_rng(0)
    e, w, a = rng.normal(size=(3, 1000))
    w = np.where(np.abs(w) < 0.05, 0.05, w)
    grad_E = np.array([2 * e, -2 * w - 1 / np.abs(w), -4 * a])  # derivative of E(e, w, a), checked next
    h = 1e-6
    fd = np.array([(energy(e + h, w, a) - energy(e - h, w, a)) / (2 * h),
                   (energy(e, w + h, a) - energy(e, w - h, a)) / (2 * h),
                   (energy(e, w, a + h) - energy(e, w, a - h)) / (2 * h)])
    assert np.allclose(grad_E, fd, rtol=1e-6, atol=1e-6)
    for aa in (np.zeros_like(a), a):  # a = 0 is the plane of Sec. 3 (with dE/da = 0 there)
        grad_c = np.array(canonical.coefficient_grad_unchecked(e, w, aa))
        terms = np.array([2 * e, -2 * w - 1 / np.abs(w), -4 * aa]) * grad_c
        assert np.max(np.abs(terms.sum(0)) / (np.abs(terms).sum(0) + 1e-300)) < 1e-12


@pytest.mark.parametrize("p,q", PQ)
def test_energy_conserved_along_solve_ivp(p, q):
    rng = np.random.default_rng(1)
    for e0, w0 in rng.uniform(-1.5, 1.5, size=(4, 2)):
        tr = integrate(e0, w0, p, q, t_max=2e3)
        assert tr.energy_drift < 1e-6
        lim = predict_limit(e0, w0, p, q)
        assert abs(tr.e[-1] - lim.e) < 1e-4 and abs(tr.w[-1] - lim.w) < 1e-4


def test_predict_limit_agrees_with_integrated_flows():
    """>= 400 random initializations over several (p, q) on both sides of p + q = 1, plus p + q = 1."""
    rng = np.random.default_rng(2024)
    disagreements = []
    total = 0
    for p, q in PQ:
        e0 = rng.normal(0, 1.0, 120)
        w0 = rng.normal(0, 1.0, 120)
        res = integrate_batch(e0, w0, p, q)
        pred = predict_limit(e0, w0, p, q)
        assert np.nanmax(res.energy_drift) < 1e-6
        total += e0.size
        for i in np.flatnonzero(res.outcome != pred.outcome):
            disagreements.append((p, q, e0[i], w0[i], res.outcome[i], pred.outcome[i],
                                  abs(energy(e0[i], w0[i]) - SADDLE_ENERGY)))
        same = res.outcome == pred.outcome
        assert np.allclose(res.e[same], pred.e[same], atol=1e-4) and np.allclose(res.w[same], pred.w[same], atol=1e-4)
    assert total >= 400
    for d in disagreements:  # listed in the report; each must sit on a separatrix
        print("disagreement (p, q, e0, w0, integrated, predicted, |E0 - E_sad|):", d)
        assert d[-1] < 1e-3
    assert len(disagreements) <= 0.01 * total


def test_iid_data_flows_converge_algebraically():
    """p + q = 1: c* = 0 and every limit is global, but the minima on the w-axis are degenerate: near e = 0,
    g'(c) ~ g''(0) c, so de/dt ~ -2 g''(0) m^2 e^3 and e(t) ~ 1 / (2 |m| sqrt(g''(0) t)) instead of exponentially."""
    p, q = 0.4, 0.6
    rng = np.random.default_rng(7)
    e0, w0 = rng.normal(0, 1.0, (2, 100))
    pred = predict_limit(e0, w0, p, q)
    assert np.all(pred.outcome == "global_min")
    res = integrate_batch(e0, w0, p, q, t_max=1e4)
    assert np.nanmax(res.energy_drift) < 1e-6
    gap = canonical.reduced_loss(canonical.coefficient(res.e, res.w), p, q) - MarkovChain(p, q).entropy_rate
    assert np.all(gap < 1e-6)
    # the limits on the line w = -1/sqrt2 (m = 0) are degenerate too; away from it, test the t^(-1/2) law
    to_axis = (pred.e == 0) & (np.abs(1 + 2 * pred.w * np.abs(pred.w)) > 0.3)
    assert to_axis.sum() >= 20
    assert np.allclose(res.w[to_axis], pred.w[to_axis], atol=1e-2)
    m = 1 + 2 * pred.w[to_axis] * np.abs(pred.w[to_axis])
    rate_law = 1 / (2 * np.abs(m) * np.sqrt(canonical.reduced_loss_hess(0.0, p, q) * res.t[to_axis]))
    ratio = (np.abs(res.e[to_axis]) / rate_law)[~res.converged[to_axis]]  # flows still running at t_max
    assert abs(np.median(ratio) - 1) < 0.05 and np.mean(np.abs(ratio - 1) < 0.2) > 0.8, ratio


def test_theorem_rules_by_region():
    # Thm 2 (p + q > 1) and Thm 8 (p + q < 1) stated as rules on (w0, E0)
    rng = np.random.default_rng(5)
    e0, w0 = rng.uniform(-2, 2, (2, 3000))
    E0 = energy(e0, w0)
    for p, q in [(0.9, 0.9), (0.6, 0.7)]:
        out = predict_limit(e0, w0, p, q).outcome
        local = (w0 > 0) | ((w0 > canonical.W_SADDLE) & (E0 < SADDLE_ENERGY))
        assert np.all((out == "local_min") == local)
        assert np.all((out == "global_min") == ~local)
    for p, q in [(0.1, 0.1), (0.2, 0.3)]:
        out = predict_limit(e0, w0, p, q).outcome
        local = (w0 < canonical.W_SADDLE) & (E0 < SADDLE_ENERGY)
        assert np.all((out == "local_min") == local) and np.all((out == "global_min") == ~local)
    # the data-agnostic good region {w < 0, E > E_sad}
    good = (w0 < 0) & (E0 > SADDLE_ENERGY)
    for p, q in [(0.9, 0.9), (0.1, 0.1), (0.5, 0.8), (0.3, 0.7)]:
        assert np.all(predict_limit(e0[good], w0[good], p, q).outcome == "global_min")


def test_special_lines_and_saddle():
    assert predict_limit(0.5, 0.0, 0.9, 0.9) == ("local_min", 0.0, 0.0)
    out = predict_limit(0.5, 0.0, 0.1, 0.1)
    assert out.outcome == "global_min" and np.isclose(out.e ** 2, canonical.c_star(0.1, 0.1))
    assert predict_limit(0.0, -1.0, 0.9, 0.9).outcome == "local_max"
    # a point on the saddle asymptote E = E_sad, -1/sqrt2 < w0 < 0
    w0 = -0.4
    e0 = np.sqrt(SADDLE_ENERGY + w0 ** 2 - np.log(abs(w0)))
    out = predict_limit(e0, w0, 0.9, 0.9)
    assert out.outcome == "saddle" and np.isclose(out.w, canonical.W_SADDLE)


def test_gradient_descent_energy_drift_shrinks_with_step():
    drifts = []
    for lr in (0.2, 0.1, 0.05):
        th = gradient_descent(0.8, -0.5, 0.9, 0.9, lr=lr, steps=int(20 / lr), record_every=int(20 / lr))
        E = energy(th[:, 0, 0], th[:, 0, 1])
        drifts.append(abs(E[-1] - E[0]))
    assert drifts[0] > drifts[1] > drifts[2] > 0
    assert 1.5 < drifts[0] / drifts[1] < 2.5  # first order in the step size


@pytest.mark.parametrize("call,msg", [
    (lambda: predict_limit(1.0, 1.0, 1.0, 0.5), "p"),
    (lambda: predict_limit(np.nan, 1.0, 0.5, 0.5), "e0"),
    (lambda: integrate(1.0, 1.0, 0.5, 0.5, t_max=-1), "t_max"),
    (lambda: integrate_batch(1.0, np.inf, 0.5, 0.5), "w0"),
    (lambda: gradient_descent(1.0, 1.0, 0.5, 0.5, lr=0, steps=3), "lr"),
    (lambda: gradient_descent(1.0, 1.0, 0.5, 0.5, lr=0.1, steps=-3), "steps"),
    (lambda: energy(1.0, "x"), "w"),
])
def test_bad_input(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


def test_data_rate_and_horizon():
    """|g'(0)| = pq|p + q - 1|/(p + q)^2 sets the speed of the flow; the horizon keeps t_eff / |g'(0)| fixed."""
    from markovlib.markov.flow import HORIZON_CAP, data_rate, horizon

    for p, q in ((0.9, 0.9), (0.1, 0.1), (0.02, 0.93), (0.98, 0.12)):
        assert data_rate(p, q) == pytest.approx(p * q * abs(p + q - 1) / (p + q) ** 2, rel=1e-12)
        assert horizon(p, q, 100.0) * data_rate(p, q) == pytest.approx(100.0)
    assert horizon(0.9, 0.9) == pytest.approx(2e4)
    assert horizon(0.4, 0.6) == HORIZON_CAP  # p + q = 1: g'(0) = 0
    with pytest.raises(ValueError, match="t_eff"):
        horizon(0.5, 0.8, 0.0)


def test_slow_chains_need_the_data_scaled_stop_tolerance():
    """At (0.02, 0.88), |g'(0)| = 0.002: a fixed gtol = 1e-8 stops flows towards the local minimum while |e| is still
    above classify's 1e-6 ("undecided"); gtol="data" (1e-8 |g'(0)|) runs them to the axis."""
    p, q = 0.02, 0.88
    # w0 < -1/sqrt2 and E0 < E_sad: local minima
    e0, w0 = np.array([-1.5443038, -1.44303797, 1.5]), np.array([-2.0, -1.94936709, -2.0])
    assert np.all(predict_limit(e0, w0, p, q).outcome == "local_min")
    fixed = integrate_batch(e0, w0, p, q, t_max=2e6)
    scaled = integrate_batch(e0, w0, p, q, t_max=2e6, gtol="data")
    assert np.any(fixed.outcome == "undecided")
    assert np.all(scaled.outcome == "local_min")
    with pytest.raises(ValueError, match="gtol"):
        integrate_batch(e0, w0, p, q, gtol=-1.0)
