"""Where the single-neuron flow ends for general data (markovlib.richlazy.minimal_limits): flow_limit against
independent long integrations (scipy solve_ivp on the full flow), crossing or not, with unequal rates and a chosen
delta; its agreement with Thm 3.1 (at beta0 without a crossing, at -beta0 with one); init_from_product; validation."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from markovlib.richlazy import minimal_exact as RE
from markovlib.richlazy.minimal_limits import flow_limit, init_from_product, limit_sign


# independent reference: the full flow da/dt = -eta_a w^T g, dw/dt = -eta_w a g, g = X^T (X a w - y) / n
def _flow(X, y, a0, w0, T=2000.0, eta_a=1.0, eta_w=1.0):
    X = np.atleast_2d(X)
    n = X.shape[0]
    C, c = X.T @ X / n, X.T @ y / n

    def rhs(_, th):
        g = C @ (th[0] * th[1:]) - c
        return np.concatenate(([-eta_a * (th[1:] @ g)], -eta_w * th[0] * g))

    sol = solve_ivp(rhs, (0, T), np.concatenate(([a0], w0)), method="DOP853", rtol=1e-11, atol=1e-13,
                    events=lambda _, th: th[0], dense_output=True)
    assert sol.success
    end = sol.y[:, -1]
    before = sol.sol(0.9 * T)
    assert np.abs(end[0] * end[1:] - before[0] * before[1:]).max() < 1e-8  # settled
    return end[0] * end[1:], sol.t_events[0].size


def _problem(rng, n, d, lo=0.6, hi=1.4):
    U, _ = np.linalg.qr(rng.normal(size=(n, n)))
    V, _ = np.linalg.qr(rng.normal(size=(d, d)))
    r = min(n, d)
    S = np.zeros((n, d))
    S[:r, :r] = np.diag(np.sqrt(n * rng.uniform(lo, hi, r)))
    X = U @ S @ V.T
    return X, rng.normal(size=n)


@pytest.mark.parametrize("n, d", [(1, 2), (1, 3), (2, 3), (2, 4), (3, 3), (5, 3)])
def test_flow_limit_matches_independent_flows_crossing_or_not(n, d):
    rng = np.random.default_rng(10 * n + d)
    crossed, kept = 0, 0
    for k in range(8):
        X, y = _problem(rng, n, d)
        c = X.T @ y / n
        beta0 = rng.normal(size=d)
        beta0 *= rng.uniform(0.5, 1.5) / np.linalg.norm(beta0)
        if k % 2 == 0:
            beta0 *= -np.sign(c @ beta0)  # prone to a crossing
        delta = [-3.0, -1.5, 0.0, 1.0][k % 4]
        a0, w0 = init_from_product(beta0, delta, [1.0, -1.0][k % 3 == 0])
        ref, crossings = _flow(X, y, a0, w0)
        assert crossings <= 1
        lim = flow_limit(X, y, a0, w0)
        assert lim.shape == (d,)
        assert np.abs(lim - ref).max() < 1e-7
        sign, how = limit_sign(X, y, a0, w0)
        assert sign == np.sign(a0) * (-1) ** crossings
        # Thm 3.1 as stated without a crossing; with beta0 -> -beta0 after one (the book's correction)
        psi = RE.implicit_bias_limit(X, y, (-1) ** crossings * beta0, delta)
        assert np.abs(lim - psi).max() < 1e-7
        crossed += crossings
        kept += 1 - crossings
    if n < d:
        assert crossed > 0 and kept > 0


def test_every_route_is_taken_and_agrees_with_the_flow():
    rng = np.random.default_rng(0)
    seen = set()
    cases = []
    # energy: L(beta0) < L(0); row-space delta >= 0; basin: one sample with delta_R < 0; integration: anisotropic
    X1, y1 = np.array([[0.5, 1.0]]), np.array([1.1])
    cases.append((X1, y1, *init_from_product(np.array([0.3, 0.4]), -2.0)))  # c^T beta0 > 0, small: energy
    cases.append((X1, y1, *init_from_product(np.array([-0.4, -0.05]), 1.0)))  # row-space delta
    cases.append((X1, y1, *init_from_product(np.array([-0.4, -0.05]), -2.0)))  # basin (crosses)
    X2, y2 = _problem(rng, 2, 3, 0.5, 1.5)
    b0 = rng.normal(size=3)
    b0 *= -np.sign((X2.T @ y2) @ b0)
    cases.append((X2, y2, *init_from_product(b0, -3.0)))  # integration
    for X, y, a0, w0 in cases:
        seen.add(limit_sign(X, y, a0, w0)[1])
        ref, _ = _flow(X, y, a0, w0)
        assert np.abs(flow_limit(X, y, a0, w0) - ref).max() < 1e-7
    assert seen == {"energy", "row-space delta", "basin", "integration"}


def test_energy_and_basin_rules_agree_where_both_apply():
    # one sample: no crossing when L(beta0) < L(0), so the basin margin of the row-space problem has the sign of a0
    rng = np.random.default_rng(3)
    x = np.array([0.8, -0.6, 0.3])
    y = np.array([0.9])
    c = x * y[0]
    P_R = np.outer(x, x) / (x @ x)
    beta_ls = c / (x @ x)
    for _ in range(200):
        a0, w0 = rng.uniform(-2, 2), rng.normal(size=3)
        beta0 = a0 * w0
        if beta0 @ (np.outer(x, x) @ beta0 / 2 - c) < 0:
            assert np.sign(RE.basin_margin(a0, P_R @ w0, beta_ls)) == np.sign(a0)


def test_unequal_rates_and_a_chosen_delta():
    rng = np.random.default_rng(7)
    X, y = _problem(rng, 2, 4)
    for eta_a, eta_w in [(0.5, 2.0), (3.0, 0.7)]:
        for delta in [None, -2.0, 0.5]:
            a0, w0 = 0.7, rng.normal(size=4)
            if delta is not None:  # move (a0, w0) along (a0 / s, s w0) to eta_w a^2 - eta_a |w|^2 = delta
                wn2 = w0 @ w0
                u = (-delta + np.sqrt(delta**2 + 4 * eta_a * eta_w * a0**2 * wn2)) / (2 * eta_a * wn2)
                a1, w1 = a0 / np.sqrt(u), w0 * np.sqrt(u)
                assert abs(eta_w * a1**2 - eta_a * w1 @ w1 - delta) < 1e-12
            else:
                a1, w1 = a0, w0
            ref, _ = _flow(X, y, a1, w1, eta_a=eta_a, eta_w=eta_w)
            lim = flow_limit(X, y, a0, w0, delta, eta_a=eta_a, eta_w=eta_w)
            assert np.abs(lim - ref).max() < 1e-7


def test_delta_keyword_is_thm_3_1s_parametrization():
    # the result depends on (beta0, delta, sign a0) only: any point of the orbit with the same delta gives it
    X, y = np.array([[0.5, 1.0]]), np.array([1.1])
    beta0 = np.array([-0.4, -0.05])
    for delta in [-4.0, -1.0, 0.0, 2.0]:
        a0, w0 = init_from_product(beta0, delta)
        for s in [0.3, 1.0, 4.0]:
            assert np.allclose(flow_limit(X, y, a0 / s, s * w0, delta=delta), flow_limit(X, y, a0, w0), atol=1e-12)
    # the A.4.4 crossing: argmin Psi_delta with -beta0
    for delta in [-4.0, -2.0, -1.0]:
        lim = flow_limit(X, y, 1.0, beta0, delta=delta)
        assert np.allclose(lim, RE.implicit_bias_limit(X, y, -beta0, delta), atol=1e-9)
        assert np.linalg.norm(lim - RE.implicit_bias_limit(X, y, beta0, delta)) > 1.5


def test_init_from_product():
    beta0 = np.array([0.6, -0.8, 0.2])
    for delta in [-1e8, -3.0, 0.0, 2.0, 1e8]:
        for sign in (1, -1):
            a0, w0 = init_from_product(beta0, delta, sign)
            assert np.sign(a0) == sign
            assert np.allclose(a0 * w0, beta0, rtol=1e-14, atol=0)
            assert abs(a0**2 - w0 @ w0 - delta) <= 1e-12 * max(1.0, abs(delta))
    with pytest.raises(ValueError, match="beta0"):
        init_from_product(np.zeros(2), 1.0)
    with pytest.raises(ValueError, match="sign"):
        init_from_product(beta0, 1.0, 0)
    with pytest.raises(ValueError, match="delta"):
        init_from_product(beta0, [1.0, 2.0])


def test_saddle_and_one_sample_vector():
    X = np.array([1.0, 2.0, 0.0])  # one sample as a 1-D X
    y = np.array([1.0])
    w0 = np.array([2.0, -1.0, 3.0])  # w0 . x = 0 and a0 = 0: an equilibrium
    assert limit_sign(X, y, 0.0, w0) == (0.0, "saddle")
    assert np.array_equal(flow_limit(X, y, 0.0, w0), np.zeros(3))
    # a0 = 0 but w0 . c != 0: a leaves zero with the sign of w0 . c, and the limit is reached
    w1 = np.array([1.0, 0.5, 0.2])
    ref, _ = _flow(X[None, :], y, 0.0, w1)
    assert np.abs(flow_limit(X, y, 0.0, w1) - ref).max() < 1e-7


@pytest.mark.parametrize("kwargs, name", [
    (dict(X=np.array([[np.nan, 1.0]])), "X"),
    (dict(X=np.ones((1, 2, 2))), "X"),
    (dict(y=np.array([1.0, 2.0])), "y"),
    (dict(a0=np.array([1.0, 2.0])), "a0"),
    (dict(a0=np.inf), "a0"),
    (dict(w0=np.ones(3)), "w0"),
    (dict(eta_a=0.0), "eta_a"),
    (dict(eta_w=-1.0), "eta_w"),
    (dict(delta=[1.0, 2.0]), "delta"),
    (dict(delta=np.nan), "delta"),
    (dict(a0=0.0, delta=-5.0), "delta"),
    (dict(y=np.array([0.0])), "X\\^T y"),
    (dict(X=np.zeros((1, 2))), "X"),
    (dict(a0=1e120), "1e100"),
])
def test_bad_input_names_the_argument(kwargs, name):
    args = dict(X=np.array([[0.5, 1.0]]), y=np.array([1.1]), a0=1.0, w0=np.array([0.3, 0.1]))
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        flow_limit(**args)
    with pytest.raises(ValueError, match=name):
        limit_sign(**args)
