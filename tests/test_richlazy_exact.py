"""Basins of attraction of the whitened single neuron (markovlib.richlazy.minimal_exact, App. A.2.5): independent
integration (scipy solve_ivp on the full flow), the closed form, rounding checks and validation."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from markovlib.richlazy import minimal_exact as RE


# independent reference: the whitened flow da/dt = -(a w - beta*) . w, dw/dt = -a (a w - beta*), many inits at once
def _flow(a0, W0, bstar, T, n_eval=400):
    N, d = W0.shape

    def rhs(_, y):
        a, W = y[:N], y[N:].reshape(N, d)
        r = a[:, None] * W - bstar
        return np.concatenate([-np.sum(r * W, axis=1), (-a[:, None] * r).ravel()])

    sol = solve_ivp(rhs, (0, T), np.concatenate([a0, W0.ravel()]), method="DOP853", rtol=1e-11, atol=1e-13,
                    t_eval=np.linspace(0, T, n_eval))
    assert sol.success
    return sol.y[:N], sol.y[N:].reshape(N, d, -1)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_basin_sign_predicts_the_branch_reached(d):
    rng = np.random.default_rng(d)
    bstar = rng.uniform(0.3, 2.0) * rng.standard_normal(d) / 1.0
    bstar /= max(np.linalg.norm(bstar), 1e-3) / rng.uniform(0.3, 2.0)
    a0 = rng.uniform(-2, 2, 200)
    W0 = rng.uniform(-2, 2, (200, d))
    m = RE.basin_margin(a0, W0, bstar)
    keep = np.abs(m) > 0.02
    a, _ = _flow(a0[keep], W0[keep], bstar, 60.0)
    assert keep.sum() > 150
    assert np.array_equal(np.sign(a[:, -1]), np.sign(m[keep]))
    assert np.all(np.abs(a[:, -1]) > 0.1)  # settled on a branch, not near the saddle set a = 0
    # Lemma A.1: at most one zero crossing of a
    assert np.max(np.sum(np.diff(np.sign(a), axis=1) != 0, axis=1)) <= 1


def test_margin_is_the_c1_of_the_closed_form():
    # a(t) e^{-lambda+ t} -> c1 h_inf-type limit: the sign of a(T) from exact_parameters equals the margin's sign,
    # and the closed form's a(T) -> sign(m) sqrt((delta + S)/2)
    rng = np.random.default_rng(5)
    b = 1.3
    for _ in range(50):
        a0, u0, s0 = rng.uniform(-2, 2), rng.uniform(-2, 2), rng.uniform(0, 2)
        delta = a0**2 - u0**2 - s0**2
        wn = np.hypot(u0, s0)
        m = RE.basin_margin(a0, np.array([u0, s0]), np.array([b, 0.0]))
        if abs(m) < 1e-3:
            continue
        a_T = RE.exact_parameters(np.array([80.0]), delta, b, a0 * wn, u0 / wn)[0][0]
        assert np.sign(a_T) == np.sign(m)
        assert abs(abs(a_T) - np.sqrt((delta + np.hypot(delta, 2 * b)) / 2)) < 1e-8


def test_separating_surface_points_have_zero_margin_and_their_delta():
    b = 0.8
    delta, tau = np.meshgrid(np.array([-50.0, -3.0, -1.0, -0.1, -1e-9, 0.0]), np.linspace(-2, 2, 9))
    a, u, s = RE.separating_surface(delta, tau, b)
    W = np.stack([u, s], axis=-1)
    scale = 1 + a**2 + u**2 + s**2
    assert np.max(np.abs(RE.basin_margin(a, W, np.array([b, 0.0]))) / scale) < 1e-13
    assert np.max(np.abs(a**2 - u**2 - s**2 - delta) / scale) < 1e-12
    # delta = 0: the line u = -a, s = 0 with r = sqrt(b)
    a0, u0, s0 = RE.separating_surface(0.0, 1.0, b)
    assert abs(a0 - np.sqrt(b) * np.sinh(1.0)) < 1e-14 and abs(u0 + a0) < 1e-14 and s0 == 0


def test_flow_from_the_surface_goes_to_a_saddle():
    b = 1.0
    deltas = np.array([-0.5, -0.25, 0.0])
    a0, u0, s0 = RE.separating_surface(deltas, 0.7, b)
    a, W = _flow(a0, np.stack([u0, s0], axis=1), np.array([b, 0.0]), 14.0, n_eval=1401)
    # the saddle point reached: a = 0, u = 0, s = sqrt(-delta) (delta is conserved)
    dist = np.sqrt(a**2 + W[:, 0] ** 2 + (W[:, 1] - np.sqrt(-deltas)[:, None]) ** 2)
    assert np.all(dist.min(axis=1) < 1e-3)


def test_basin_margin_extremes_and_broadcasting():
    m = RE.basin_margin(np.array([1e150, -1e150, 0.0]), np.array([[1.0], [1.0], [1e150]]), np.array([1.0]))
    assert np.all(np.isfinite(m)) and m[0] > 0 and m[1] < 0 and m[2] > 0
    assert RE.basin_margin(np.ones((3, 4)), np.ones((3, 4, 2)), np.array([0.0, 1.0])).shape == (3, 4)


def test_validation():
    with pytest.raises(ValueError, match="beta_star"):
        RE.basin_margin(1.0, np.array([1.0, 0.0]), np.zeros(2))
    with pytest.raises(ValueError, match="w must"):
        RE.basin_margin(1.0, np.array([1.0, 0.0]), np.ones(3))
    with pytest.raises(ValueError, match="a"):
        RE.basin_margin(np.nan, np.array([1.0]), np.ones(1))
    with pytest.raises(ValueError, match="delta"):
        RE.separating_surface(0.5, 0.0, 1.0)
    with pytest.raises(ValueError, match="beta_star_norm"):
        RE.separating_surface(-0.5, 0.0, 0.0)
    with pytest.raises(ValueError, match="tau"):
        RE.separating_surface(-0.5, 400.0, 1.0)


def test_crossing_cosine_decides_the_zero_crossing_of_the_authors_init():
    """crossing_cosine (the chapter's eq. grq-eq-cos-c): with a0 > 0 and a0 w0 = beta0, the flow crosses a = 0
    exactly when cos(beta0, beta*) is below it; checked against the sign of c1 and an independent integration."""
    rng = np.random.default_rng(5)
    bstar = np.array([0.0, rng.uniform(0.5, 1.5)])
    b = np.linalg.norm(bstar)
    deltas = rng.uniform(-5, 2, 120)
    cosines = rng.uniform(-0.9, 0.9, 120)
    r0 = rng.uniform(0.5, 1.5, 120)
    beta0 = r0[:, None] * np.column_stack([np.sqrt(1 - cosines**2), cosines])
    a0 = np.sqrt((deltas + np.sqrt(deltas**2 + 4 * r0**2)) / 2)
    W0 = beta0 / a0[:, None]
    c1 = RE.basin_margin(a0, W0, bstar)
    pred = np.array([c < RE.crossing_cosine(dl, r, b) for c, dl, r in zip(cosines, deltas, r0)])
    keep = np.abs(c1) > 1e-6
    assert np.array_equal(pred[keep], (c1 < 0)[keep]) and pred.sum() > 10
    a_t, _ = _flow(a0[keep], W0[keep], bstar, 40.0, n_eval=2000)
    crossed = np.any(np.sign(a_t) != np.sign(a_t[:, :1]), axis=1)
    assert np.array_equal(crossed, pred[keep])


def test_crossing_cosine_limits_and_validation():
    assert RE.crossing_cosine(0.0, 0.7, 1.3) == pytest.approx(-1.0, abs=1e-15)
    assert np.all(RE.crossing_cosine(np.array([0.1, 1.0, 50.0]), 1.0, 1.0) < -1)
    big = -1e6
    assert RE.crossing_cosine(big, 0.8, 1.2) == pytest.approx(-0.8 * 1.2 / big**2, rel=1e-5)
    vals = RE.crossing_cosine(-np.logspace(-2, 3, 30), 1.0, 0.9)
    assert np.all(np.diff(vals) > 0) and np.all(vals < 0)  # rises towards 0 as delta -> -infinity
    assert RE.crossing_cosine(-2.0, 0.6, 1.4) == pytest.approx(RE.crossing_cosine(-2.0, 1.4, 0.6), rel=1e-14)
    with pytest.raises(ValueError, match="beta0_norm"):
        RE.crossing_cosine(-1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="delta"):
        RE.crossing_cosine(np.nan, 1.0, 1.0)
