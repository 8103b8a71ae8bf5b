"""The regimes of the whitened single neuron in closed form (markovlib.richlazy.minimal_regimes), the asymptotes of
Thm 3.1's limits (minimal_exact.asymptote_constants) and the colour of a delta (drawings.delta_colour): against
independent integrations of the flow, the closed forms written out, and validation."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from markovlib.richlazy import drawings, minimal_exact, minimal_regimes
from markovlib.richlazy.minimal_limits import init_from_product
from markovlib.richlazy.minimal_model import kernel_distance


# independent reference: the whitened flow da/dt = -(a w - beta*)^T w, dw/dt = -a (a w - beta*)
def _flow(a0, w0, bstar, t):
    def rhs(_, z):
        r = z[0] * z[1:] - bstar
        return np.concatenate(([-(r @ z[1:])], -z[0] * r))

    sol = solve_ivp(rhs, (0, t[-1]), np.concatenate(([a0], w0)), method="DOP853", rtol=1e-11, atol=1e-13, t_eval=t)
    assert sol.success
    return sol.y[0], sol.y[1:].T


def test_whitened_data_and_mu_phi():
    X, y = minimal_regimes.whitened_data(np.random.default_rng(0), 5, [0.3, 1.1])
    assert np.allclose(X.T @ X / 5, np.eye(2)) and np.allclose(X.T @ y / 5, [0.3, 1.1])
    mu, phi = minimal_regimes.mu_phi(2.0, np.array([[3.0, 4.0]]), [0.0, 2.0])
    assert np.allclose(mu, 10.0) and np.allclose(phi, 0.8)
    with pytest.raises(ValueError, match="n_samples"):
        minimal_regimes.whitened_data(np.random.default_rng(0), 1, [0.0, 1.0])
    with pytest.raises(ValueError, match="beta_star"):
        minimal_regimes.mu_phi(1.0, np.ones(2), [0.0, 0.0])


def test_random_whitened_init_is_consistent():
    rng = np.random.default_rng(1)
    for _ in range(50):
        delta, mu0, phi0, a0, w0 = minimal_regimes.random_whitened_init(rng, [0.6, 0.8], 5.0)
        assert abs(delta) <= 5 and abs(a0**2 - w0 @ w0 - delta) < 1e-10
        assert np.isclose(mu0, a0 * np.linalg.norm(w0)) and -1 <= phi0 <= 1
    with pytest.raises(ValueError, match="delta_max"):
        minimal_regimes.random_whitened_init(rng, [0.0, 1.0], -1.0)


@pytest.mark.parametrize("delta", [-3.0, 0.0, 2.0])
def test_kernel_distance_curve_and_end_value_against_the_flow(delta):
    bstar, beta0 = np.array([0.0, 1.0]), np.array([-0.8, 0.3])
    t = np.linspace(0, 30, 301)
    a0, w0 = init_from_product(beta0, delta)
    mu0, phi0 = minimal_regimes.mu_phi(a0, w0, bstar)
    S, beta = minimal_regimes.kernel_distance_curve(t, delta, bstar, mu0, phi0, w0)
    a, W = _flow(a0, w0, bstar, t)
    M = lambda k: a[k] ** 2 * np.eye(2) + np.outer(W[k], W[k])  # noqa: E731
    S_flow = np.array([kernel_distance(M(0), M(k)) for k in range(t.size)])
    assert np.abs(S - S_flow).max() < 1e-6 and np.abs(beta - a[:, None] * W).max() < 1e-6
    S_end = minimal_regimes.end_kernel_distance(delta, a0, w0, bstar)
    assert abs(S_end - S_flow[-1]) < 1e-3  # nearly settled by t = 30
    S_late = minimal_regimes.kernel_distance_curve(np.array([0.0, 400.0]), delta, bstar, mu0, phi0, w0)[0][1]
    assert abs(S_end - S_late) < 1e-9
    if delta == 0:  # the closed form (1 - cos^2)/5 of the balanced end distance
        c = beta0 @ bstar / np.linalg.norm(beta0)
        assert abs(S_end - (1 - c**2) / 5) < 1e-12


def test_regime_stats_and_scans_at_the_paper_setting():
    bstar, beta0, deltas = np.array([0.0, 1.0]), np.array([-1.0, 0.0]), [-4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0]
    t = np.linspace(0, 20, 201)
    S, S_end = {}, {}
    for d in deltas:
        a0, w0 = init_from_product(beta0, d)
        S[d] = minimal_regimes.kernel_distance_curve(t, d, bstar, *minimal_regimes.mu_phi(a0, w0, bstar), w0)[0]
        S_end[d] = minimal_regimes.end_kernel_distance(d, a0, w0, bstar)
    st = minimal_regimes.regime_stats(beta0, S, S_end, t, deltas, bstar, 1.0, 0.02, exact=True)
    assert st["cos"] == 0 and st["up"] < 0.05 and st["bal"] > 0.1 and st["early"] < 0.05 and st["down_end"] > 0.1
    assert st["grows"] and st["mono"] and not st["crossing"] and abs(st["bal"] - st["bal_closed"]) < 1e-6
    for d in (-4.0, -2.0, -1.0):  # the refined half-rise time is where S reaches half its end value
        a0, w0 = init_from_product(beta0, d)
        mu0, phi0 = minimal_regimes.mu_phi(a0, w0, bstar)
        S_h = minimal_regimes.kernel_distance_curve(np.array([0.0, st["half"][d]]), d, bstar, mu0, phi0, w0)[0][1]
        assert abs(S_h - 0.5 * S_end[d]) < 1e-9
    fail, n_rich, n_order, rows = minimal_regimes.cosine_scan(np.linspace(-0.6, 0.6, 5), beta0, bstar, t, deltas,
                                                              lazy_window=1.0, c1_min=0.02, lazy_S_max=0.05,
                                                              rich_S_min=0.1)
    assert not any(fail.values()) and n_rich >= 4 and n_order >= 2 and len(rows) == 5
    assert rows[0]["crossing"]  # cosine -0.6 is below cos_c(-4): the most downstream flow crosses a = 0
    c = minimal_regimes.beta0_at_cosine(-0.6, beta0, bstar)
    assert np.isclose(c @ bstar, -0.6) and np.isclose(np.linalg.norm(c), 1.0) and c[0] < 0


def test_kernel_distance_at_and_corner_scan():
    S, c1 = minimal_regimes.kernel_distance_at(20.0, -4.0, 1.0, 1.0, 0.0)
    a0, w0 = init_from_product(np.array([0.0, 1.0]), -4.0)  # beta* along the first axis, beta0 at cosine 0
    a, W = _flow(a0, w0, np.array([1.0, 0.0]), np.linspace(0, 20, 201))
    M = lambda k: a[k] ** 2 * np.eye(2) + np.outer(W[k], W[k])  # noqa: E731
    assert abs(S - kernel_distance(M(0), M(-1))) < 1e-6
    assert np.isclose(c1, minimal_exact.basin_margin(a0, w0, np.array([1.0, 0.0])))
    fails, n = minimal_regimes.corner_scan(0.1, n_cos=9)
    assert n == 2 * 2 * 2 * 2 * 9 and all(f < 0.02 for f in fails)


def test_saddle_distance_decreases_and_matches_a_flow_from_the_surface():
    b = 1.0
    for delta in (-1.0, -0.3):
        a_s, u_s, s_s = minimal_exact.separating_surface(np.array([delta]), 0.7, b)
        a, W = _flow(a_s[0], np.array([u_s[0], s_s[0]]) @ np.array([[0.0, 1.0], [-1.0, 0.0]]), np.array([0.0, b]),
                     np.linspace(0, 6, 61))
        d_flow = np.sqrt(a**2 + np.sum((W - np.sqrt(-delta) * np.array([-1.0, 0.0])) ** 2, axis=1))
        d_closed = [minimal_regimes.saddle_distance(delta, a_s[0], tt, b) for tt in np.linspace(0, 6, 61)]
        assert np.all(np.diff(d_closed) <= 1e-15) and np.abs(d_flow - d_closed).max() < 1e-5
    with pytest.raises(ValueError, match="delta"):
        minimal_regimes.saddle_distance(0.5, 1.0, 1.0, b)


def test_asymptote_constants_match_the_limits_at_large_delta():
    x, y, beta0 = np.array([0.5, 1.0]), 1.1, np.array([0.4, 0.05])
    C_up, C_down, near, along = minimal_exact.asymptote_constants(x, y, beta0)
    assert np.isclose(x @ near, y) and np.isclose(x @ along, y) and np.isclose(along[0] * beta0[1], along[1] * beta0[0])
    n = np.array([-x[1], x[0]]) / np.linalg.norm(x)
    for d in (1e3, 1e4):
        up = np.abs(minimal_exact.implicit_bias_limit(x[None], [y], beta0, d) - near).max()
        down = np.abs(minimal_exact.implicit_bias_limit(x[None], [y], beta0, -d) - along).max()
        assert abs(up - C_up * np.abs(n).max() / d**2) < 0.1 * C_up / d**2 + 1e-12
        assert abs(down - C_down * np.abs(n).max() / d**2) < 0.1 * C_down / d**2 + 1e-12
    with pytest.raises(ValueError, match="y x"):
        minimal_exact.asymptote_constants(x, -y, beta0)


def test_delta_colour():
    assert drawings.delta_colour(0.0, 4.0) == "k"
    up, down = drawings.delta_colour(4.0, 4.0), drawings.delta_colour(-4.0, 4.0)
    assert len(up) == 4 and up != down and drawings.delta_colour(1.0, 4.0) != up
    with pytest.raises(ValueError, match="scale"):
        drawings.delta_colour(1.0, 0.0)
