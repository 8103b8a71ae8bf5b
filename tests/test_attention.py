"""Tests of markovlib.markov.attention: the 3-D canonical model with the attention scalar (Sec. 4.1, App. G)."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from markovlib.markov import attention, canonical
from markovlib.markov.energy import SADDLE_ENERGY, energy
from markovlib.markov.flow import integrate, integrate_batch

PQ = [(0.9, 0.9), (0.5, 0.8), (0.1, 0.1), (0.2, 0.3)]


def _fd_hessian(e, w, a, p, q, h=1e-4):
    x0 = np.array([e, w, a], dtype=float)
    H = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            def L(di, dj):
                x = x0.copy()
                x[i] += di
                x[j] += dj
                return float(canonical.loss(x[0], x[1], p, q, a=x[2]))
            H[i, j] = (L(h, h) - L(h, -h) - L(-h, h) + L(-h, -h)) / (4 * h * h)
    return H


@pytest.mark.parametrize("p,q", PQ)
def test_hessian_matches_finite_differences(p, q):
    rng = np.random.default_rng(0)
    for e, w, a in rng.uniform(-1.2, 1.2, size=(6, 3)):
        w = w if abs(w) > 0.1 else 0.3
        H = attention.hessian(e, w, a, p, q)
        Hfd = _fd_hessian(e, w, a, p, q)
        assert np.allclose(H, H.T)
        assert np.allclose(H, Hfd, rtol=1e-5, atol=1e-6)


def test_coefficient_grad_matches_canonical_grad():
    rng = np.random.default_rng(1)
    e, w, a = rng.normal(size=(3, 50))
    gc = attention.coefficient_grad(e, w, a)
    ref = np.stack(canonical.coefficient_grad_unchecked(e, w, a), axis=-1)
    assert np.allclose(gc, ref, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("p,q", [(0.9, 0.9), (0.2, 0.3)])
def test_critical_sets_and_their_hessians(p, q):
    cs = canonical.c_star(p, q)
    g1 = float(canonical.reduced_loss_grad(0.0, p, q))
    # the saddle curve Sigma: m = 0, k = 0; grad L = 0 and eigenvalues (-lam, 0, lam)
    for e in (0.5, 1.0, -1.7):
        a = -1 / e**2
        assert attention.classify(e, canonical.W_SADDLE, a, p, q) == "saddle"
        assert np.allclose(canonical.grad(e, canonical.W_SADDLE, p, q, a=a), 0.0, atol=1e-12)
        ev = np.linalg.eigvalsh(attention.hessian(e, canonical.W_SADDLE, a, p, q))
        lam = abs(g1) * 2 * np.sqrt(2) * np.sqrt(4 * e**2 + e**8)
        assert np.allclose(ev, [-lam, 0.0, lam], atol=1e-9 * max(1, lam))
    # the plane e = 0: Hessian diag(2 g'(0) m(w), 0, 0)
    for w, a in ((0.4, -1.0), (-1.5, 2.0)):
        H = attention.hessian(0.0, w, a, p, q)
        assert np.allclose(H, np.diag([2 * g1 * (1 + 2 * w * abs(w)), 0, 0]), atol=1e-14)
    kinds = {attention.classify(0.0, w, 0.3, p, q) for w in (0.2, -1.5)}
    assert kinds == {"local_min", "local_max"}
    assert attention.classify(0.0, canonical.W_SADDLE, 0.3, p, q) == "saddle"
    # a global minimum: pick e, a and solve m = c*/f for w
    e, a = 1.1, 0.2 if cs > 0 else -2.0
    f = e * e * (1 + a * e * e)
    t = cs / f - 1
    w = np.sign(t) * np.sqrt(abs(t) / 2)
    assert attention.classify(e, w, a, p, q, atol=1e-9) == "global_min"
    ev = np.linalg.eigvalsh(attention.hessian(e, w, a, p, q))
    assert abs(ev[0]) < 1e-10 and abs(ev[1]) < 1e-10 and ev[2] > 0
    assert attention.classify(0.7, 0.7, 0.7, p, q) == "regular"


def _A_reference(e, a):
    """A by scipy in u = e^2: da/du = u / (4 (1 + 2 a u)) from u0 down to 0 (only for lines above Gamma)."""
    sol = solve_ivp(lambda u, y: [u / (4 * (1 + 2 * y[0] * u))], (e * e, 0.0), [a], rtol=1e-12, atol=1e-14)
    return sol.y[0, -1]


def test_planar_label_against_scipy_and_symmetry():
    rng = np.random.default_rng(2)
    e, a = rng.normal(0, 1, (2, 300))
    lab = attention.planar_label(e, a)
    lab_neg = attention.planar_label(-e, a)
    assert np.array_equal(lab.reaches_axis, lab_neg.reaches_axis)
    assert np.allclose(lab.A, lab_neg.A, equal_nan=True) and np.allclose(lab.a_gamma, lab_neg.a_gamma, equal_nan=True)
    assert np.all(np.isfinite(lab.A) == lab.reaches_axis) and np.all(np.isfinite(lab.a_gamma) != lab.reaches_axis)
    inside = np.flatnonzero(lab.reaches_axis)[:40]
    ref = np.array([_A_reference(e[i], a[i]) for i in inside])
    assert np.allclose(lab.A[inside], ref, atol=1e-8)
    assert np.all(lab.A[inside] <= a[inside])  # a decreases along a descending line
    # below Gamma (1 + 2 a e^2 < 0) nothing reaches the axis
    below = 1 + 2 * a * e * e < 0
    assert below.any() and not lab.reaches_axis[below].any()
    # scalar input and the axis itself
    s = attention.planar_label(0.0, 0.7)
    assert s.reaches_axis and s.A == 0.7


def test_separatrix_is_asymptotic_to_gamma_and_separates():
    a = np.array([-50.0, -2.0, 0.0, 1.0])
    eS = attention.separatrix(a)
    assert abs(eS[0] ** 2 * 2 * 50 - 1) < 1e-4  # u_S ~ 1 / (2|a|) as a -> -inf
    assert np.all(np.diff(eS) > 0)
    inside = attention.planar_label(eS * (1 - 1e-6), a).reaches_axis
    outside = attention.planar_label(eS * (1 + 1e-6), a).reaches_axis
    assert inside.all() and not outside.any()
    assert abs(float(attention.separatrix(0.0)) - eS[2]) < 1e-12


def test_planar_line_and_energy_are_invariants_of_the_flow():
    rng = np.random.default_rng(3)
    for p, q in [(0.9, 0.9), (0.1, 0.1)]:
        for e0, w0, a0 in rng.normal(0, 0.8, (4, 3)):
            tr = integrate(e0, w0, p, q, a0=a0, t_max=2e3, n_points=60)
            assert tr.energy_drift < 1e-6
            sel = np.abs(tr.e) > 1e-3
            lab = attention.planar_label(tr.e[sel], tr.a[sel])
            assert np.all(lab.reaches_axis == lab.reaches_axis[0])
            vals = lab.A if lab.reaches_axis[0] else lab.a_gamma
            assert np.max(np.abs(vals - vals[0])) < 1e-6
            Et = attention.reduced_energy(tr.e[sel], tr.w[sel], tr.a[sel], label=lab)
            if lab.reaches_axis[0]:
                assert np.max(np.abs(Et - Et[0])) < 1e-6


def test_predict_outcome_matches_integrated_flows():
    rng = np.random.default_rng(2024)
    total = mismatches = 0
    for p, q in PQ:
        e0, w0, a0 = rng.normal(0, 1.0, (3, 150))
        res = integrate_batch(e0, w0, p, q, a0=a0, max_steps=20000)
        pred = attention.predict_outcome(e0, w0, a0, p, q)
        total += e0.size
        bad = pred.outcome != res.outcome
        mismatches += int(bad.sum())
        uni = (pred.outcome == "unigram") & ~bad
        assert np.allclose(res.w[uni], pred.w[uni], atol=1e-5) and np.allclose(res.a[uni], pred.a[uni], atol=1e-5)
        assert np.all(np.abs(res.e[uni]) < 1e-5)
    assert total >= 600 and mismatches <= 0.005 * total


def test_outcomes_depend_only_on_the_side_of_p_plus_q():
    rng = np.random.default_rng(5)
    th = rng.normal(0, 1.0, (3, 300))
    outcome = lambda p, q: attention.predict_outcome(*th, p, q).outcome  # noqa: E731
    assert np.array_equal(outcome(0.9, 0.9), outcome(0.5, 0.8))
    assert np.array_equal(outcome(0.1, 0.1), outcome(0.2, 0.3))
    assert np.all(attention.predict_outcome(*th, 0.4, 0.6).outcome == "global_min")  # p + q = 1


def test_predict_outcome_special_cases_and_2d_limit():
    # e0 = 0 is critical
    r = attention.predict_outcome(0.0, 0.5, 0.3, 0.9, 0.9)
    assert r.outcome == "unigram" and (r.e, r.w, r.a) == (0.0, 0.5, 0.3)
    # far side of the separatrix: global for both sides, even with w0 > 0 (where 2-D Thm 2 says local minimum)
    eS = float(attention.separatrix(0.0))
    for p, q in [(0.9, 0.9), (0.1, 0.1)]:
        assert attention.predict_outcome(1.05 * eS, 0.5, 0.0, p, q).outcome == "global_min"
    assert attention.predict_outcome(0.95 * eS, 0.5, 0.0, 0.9, 0.9).outcome == "unigram"
    # small a0 and e0: A ~ a0 and the reduced energy ~ E, so the 2-D rule applies
    lab = attention.planar_label(0.05, 0.01)
    assert abs(lab.A - 0.01) < 1e-5
    assert abs(float(attention.reduced_energy(0.05, -0.3, 0.01)) - float(energy(0.05, -0.3, 0.01)) - 2e-4) < 1e-6
    assert SADDLE_ENERGY < 0


def test_bad_input():
    with pytest.raises(ValueError):
        attention.predict_outcome(np.nan, 0.1, 0.1, 0.9, 0.9)
    with pytest.raises(ValueError):
        attention.hessian(0.1, 0.1, 0.1, 1.2, 0.5)


def test_basin_boundary_surfaces():
    rng = np.random.default_rng(9)
    e, a = rng.uniform(-1, 1, (2, 200))
    lab = attention.planar_label(e, a)
    w_low, w_high = attention.basin_boundary(e, a, label=lab)
    inside = lab.reaches_axis
    assert np.all(np.isnan(w_low[~inside])) and np.all(np.isnan(w_high[~inside]))
    assert np.all(w_low[inside] <= canonical.W_SADDLE + 1e-12) and np.all(w_high[inside] >= canonical.W_SADDLE - 1e-12)
    assert np.all(w_high[inside] < 0)
    for w in (w_low, w_high):  # both lie on {E~ = E_sad}
        Et = attention.reduced_energy(e[inside], w[inside], a[inside],
                                      label=attention.PlanarLabel(*(x[inside] for x in lab)))
        assert np.allclose(Et, SADDLE_ENERGY, atol=1e-10)
    # the unigram basins are the regions beyond them
    for p, q, side in ((0.9, 0.9, "high"), (0.1, 0.1, "low")):
        i = np.flatnonzero(inside)[:20]
        w_b = w_high[i] if side == "high" else w_low[i]
        step = 1e-3 if side == "high" else -1e-3
        assert np.all(attention.predict_outcome(e[i], w_b + step, a[i], p, q).outcome == "unigram")
        assert np.all(attention.predict_outcome(e[i], w_b - step, a[i], p, q).outcome == "global_min")
    # at e = 0 both surfaces meet at the saddle line
    lo, hi = attention.basin_boundary(0.0, 0.4)
    assert abs(lo - canonical.W_SADDLE) < 1e-6 and abs(hi - canonical.W_SADDLE) < 1e-6


def test_separatrix_gap_resolves_the_asymptotic_series():
    """1 - 2|a| e_S^2 = t^3/16 - 5 t^6/256 + 11 t^9/1024 - ..., t = 1/|a| (the chapter's sympy series): the gap
    integration resolves the t^9 term at a = -10 (where 1 - 2|a| separatrix(a)^2 has lost it to cancellation),
    and agrees with separatrix() where that one is well conditioned."""
    a = np.array([-5.0, -10.0, -40.0, -80.0])
    t = 1 / np.abs(a)
    g = attention.separatrix_gap(a)
    scaled = 16 * np.abs(a) ** 3 * g  # 1 - 5 t^3/16 + 11 t^6/64 - 539 t^9/4096 + ...
    resid = scaled - (1 - 5 * t**3 / 16 + 11 * t**6 / 64)
    assert abs(resid[0] / t[0] ** 9 + 539 / 4096) < 0.01 and abs(resid[1] / t[1] ** 9 + 539 / 4096) < 0.01
    assert np.all(np.abs(scaled - (1 - 5 * t**3 / 16)) < 11 / 32 * t**6 + 1e-9)
    a_mid = np.array([-3.0, -2.0, -1.0])
    assert np.allclose(1 - 2 * np.abs(a_mid) * attention.separatrix(a_mid) ** 2, attention.separatrix_gap(a_mid),
                       rtol=1e-8)
    assert isinstance(attention.separatrix_gap(-4.0), float)
    for bad in (0.5, 0.0, -300.0):
        with pytest.raises(ValueError, match="a must"):
            attention.separatrix_gap(bad)


def test_a_very_stiff_start_is_integrated_not_stuck():
    """From (-6.53, 4.95, 1.23) (c ~ 1e5) the first trial steps overflow; dopri54_step used to return a NaN step
    factor there, and the flow never left t = 0 ("undecided"). Rejected and retried shorter, it reaches Gamma*."""
    import warnings

    e0, w0, a0 = np.array([-6.53130149]), np.array([4.95436042]), np.array([1.23271861])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warnings escape either
        res = integrate_batch(e0, w0, 0.12, 0.98, a0=a0, t_max=4e5, max_steps=3000, gtol="data")
    assert res.outcome[0] == "global_min" and res.t[0] > 0 and res.steps < 3000
