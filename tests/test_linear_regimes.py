"""markovlib.richlazy.linear_regimes against independent references: scipy solve_ivp on the raw parameters (DOP853,
not flow_to_fit's LSODA), finite differences of the closed forms, the conserved matrix."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from markovlib.richlazy import linear_regimes as LR


def _raw_flow(A0, W0, XtX, YtX, t, eta_a=1.0, eta_w=1.0):
    c, h = A0.shape
    d = W0.shape[1]

    def rhs(_, z):
        A, W = z[: c * h].reshape(c, h), z[c * h:].reshape(h, d)
        G = A @ W @ XtX - YtX
        return np.concatenate([(-eta_a * G @ W.T).ravel(), (-eta_w * A.T @ G).ravel()])

    sol = solve_ivp(rhs, (0, t[-1]), np.concatenate([A0.ravel(), W0.ravel()]), method="DOP853", t_eval=t,
                    rtol=1e-12, atol=1e-13)
    return sol.y.T[:, : c * h].reshape(-1, c, h), sol.y.T[:, c * h:].reshape(-1, h, d)


def _whitened(rng, n, d, c):
    X = np.linalg.qr(rng.standard_normal((n, d)))[0] * np.sqrt(n)
    beta_star = rng.standard_normal((c, d))
    return X, X @ beta_star.T, beta_star


@pytest.mark.parametrize("delta,frac", [(0.8, [0.5, -0.3]), (-0.6, [1.2, 1.5]), (2.0, [0.0, 0.9])])
def test_shared_eigenspace_init_and_riccati_closed_forms(delta, frac):
    rng = np.random.default_rng(5)
    X, Y, bs = _whitened(rng, 6, 3, 2)
    s = np.linalg.svd(bs, compute_uv=False)
    A, W = LR.shared_eigenspace_init(bs, delta, np.array(frac) * s, seed=2)
    assert np.max(np.abs(A.T @ A - W @ W.T - delta * np.eye(2))) < 1e-13
    nu0 = LR.riccati_nu(A, W, bs)
    Q = bs @ bs.T
    ev, V = np.linalg.eigh(Q)
    assert np.max(np.abs(nu0 @ Q - Q @ nu0)) < 1e-12
    t = np.linspace(0, 3, 7)
    At, Wt = _raw_flow(A, W, X.T @ X / 6, Y.T @ X / 6, t)
    nus = np.array([LR.riccati_nu(a, w, bs) for a, w in zip(At, Wt)])
    lin = LR.riccati_linearized(nu0, Q, delta, t)
    sc = LR.scalar_riccati(np.diag(V.T @ nu0 @ V), ev, delta, t)
    assert np.max(np.abs(nus - lin)) < 1e-8
    assert np.max(np.abs(nus - np.einsum("ij,tj,kj->tik", V, sc, V))) < 1e-8


def test_scalar_riccati_solves_its_equation_and_rejects_blowup():
    t = np.linspace(0, 2, 21)
    n = LR.scalar_riccati(np.array([0.3, -0.1]), np.array([1.5, 0.2]), -0.7, t)
    h = 1e-5
    dn = (LR.scalar_riccati(np.array([0.3, -0.1]), np.array([1.5, 0.2]), -0.7, t + h) - n) / h
    rhs = np.array([1.5, 0.2]) + 0.7 * n - n**2
    assert np.max(np.abs(dn - rhs)) < 1e-4
    assert np.allclose(n[0], [0.3, -0.1])
    with pytest.raises(ValueError, match="n0"):
        LR.scalar_riccati(-5.0, 1.0, 1.0, t)
    with pytest.raises(ValueError, match="s2"):
        LR.scalar_riccati(0.0, -1.0, 1.0, t)


def test_riccati_linearized_general_start():
    rng = np.random.default_rng(1)
    Q = rng.standard_normal((3, 3))
    Q = Q @ Q.T
    nu0 = rng.standard_normal((3, 3)) * 0.3
    t = np.linspace(0, 1, 5)
    sol = solve_ivp(lambda _, v: (Q - 0.4 * v.reshape(3, 3) - v.reshape(3, 3) @ v.reshape(3, 3)).ravel(), (0, 1),
                    nu0.ravel(), t_eval=t, rtol=1e-12, atol=1e-13, method="LSODA")
    assert np.max(np.abs(LR.riccati_linearized(nu0, Q, 0.4, t) - sol.y.T.reshape(-1, 3, 3))) < 1e-8


def test_single_neuron_time_matches_the_flow():
    eta_a, eta_w, s = 0.5, 2.0, 1.3
    for delta, bs, b0 in [(0.7, 1.5, -2.0), (-1.2, -0.9, 2.5), (2.0, 1.0, 0.1)]:
        t = np.linspace(0, 2, 9)

        def rhs(_, z):
            a, w = z
            r = s * (a * w - bs)
            return [-eta_a * r * w, -eta_w * r * a]

        a0 = np.sqrt((delta + np.hypot(delta, 2 * np.sqrt(eta_a * eta_w) * b0)) / (2 * eta_w))
        z0 = [a0, b0 / a0]
        sol = solve_ivp(rhs, (0, 2), z0, t_eval=t, rtol=1e-12, atol=1e-14, method="LSODA")
        beta = sol.y[0] * sol.y[1]
        assert abs(eta_w * a0**2 - eta_a * z0[1] ** 2 - delta) < 1e-12
        keep = np.abs(beta - bs) > 1e-3 * abs(b0 - bs)
        tt = LR.single_neuron_time(beta[keep], b0, bs, delta, s, eta_a, eta_w)
        assert np.max(np.abs(tt - t[keep])) < 1e-6


def test_flow_to_fit_event_and_errors():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((8, 3))
    Y = X @ rng.standard_normal((2, 3)).T + 0.1 * rng.standard_normal((8, 2))  # not realizable: L_min > 0
    A0, W0 = 0.5 * rng.standard_normal((2, 2)), 0.5 * rng.standard_normal((2, 3))
    t_fit, A, W = LR.flow_to_fit(A0, W0, X, Y, 1e-2, 100.0)
    beta_ls = np.linalg.lstsq(X, Y, rcond=None)[0].T

    def excess(a, w):
        return np.sum((X @ (a @ w).T - Y) ** 2) / 16 - np.sum((X @ beta_ls.T - Y) ** 2) / 16

    assert abs(excess(A, W) - 1e-2 * excess(A0, W0)) < 1e-8 * excess(A0, W0)
    At, Wt = _raw_flow(A0, W0, X.T @ X / 8, Y.T @ X / 8, np.array([0.0, t_fit]))
    assert np.max(np.abs(At[1] - A)) < 1e-6 and np.max(np.abs(Wt[1] - W)) < 1e-6
    with pytest.raises(RuntimeError, match="t_max"):
        LR.flow_to_fit(A0, W0, X, Y, 1e-2, 1e-3)
    with pytest.raises(ValueError, match="eps"):
        LR.flow_to_fit(A0, W0, X, Y, 1.5, 10.0)


def test_validation():
    bs = np.array([[1.0, 0.0, 0.2], [0.0, 0.5, 0.1]])
    s = np.linalg.svd(bs, compute_uv=False)
    with pytest.raises(ValueError, match="n0"):
        LR.shared_eigenspace_init(bs, 1.0, 1.1 * s)
    with pytest.raises(ValueError, match="delta"):
        LR.shared_eigenspace_init(bs, 0.0, 0.5 * s)
    with pytest.raises(ValueError, match="d >= c"):
        LR.shared_eigenspace_init(bs.T, 1.0, 0.5 * np.ones(3))
    with pytest.raises(ValueError, match="c = h"):
        LR.riccati_nu(np.ones((2, 3)), np.ones((3, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="delta"):
        LR.single_neuron_time(0.5, 0.1, 1.0, 0.0)
    with pytest.raises(ValueError, match="side"):
        LR.single_neuron_time(2.0, 0.1, 1.0, 1.0)


def test_riccati_linearized_long_time():
    # one-shot expm(tH)(I, nu0) is numerically singular by t ~ 40 (both columns of Z align with the dominant mode);
    # stepwise propagation stays on the flow and reaches the stable fixed point of Q - delta nu - nu^2 = 0
    rng = np.random.default_rng(2)
    B = rng.standard_normal((2, 3))
    Q = B @ B.T
    nu0 = np.array([[0.4, 0.2], [-0.1, 0.3]])
    for delta in (-1.0, 0.8, 2.0):
        t = np.array([0.0, 5.0, 40.0, 60.0, 100.0])
        sol = solve_ivp(lambda _, v: (Q - delta * v.reshape(2, 2) - v.reshape(2, 2) @ v.reshape(2, 2)).ravel(),
                        (0, 100), nu0.ravel(), t_eval=t, rtol=1e-12, atol=1e-13, method="LSODA")
        lin = LR.riccati_linearized(nu0, Q, delta, t)
        assert np.max(np.abs(lin - sol.y.T.reshape(-1, 2, 2))) < 1e-8
        ev, V = np.linalg.eigh(Q)
        fixed = V @ np.diag((-delta + np.sqrt(delta**2 + 4 * ev)) / 2) @ V.T  # the stable root, nu Q = Q nu
        assert np.max(np.abs(lin[-1] - fixed)) < 1e-10
        assert np.allclose(LR.riccati_linearized(nu0, Q, delta, t[::-1]), lin[::-1], atol=1e-12)  # any order


def test_single_neuron_time_small_delta_against_50_digits():
    # near beta = -beta*, N = delta^2 + 4 k beta* beta + D* M(beta) is 2 delta^2 while its terms are of order 1:
    # evaluated naively it loses about 1e-5 of t at delta = 1e-6 (the naive formula below is a control)
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    eta_a, eta_w, s = 0.5, 2.0, 1.3
    k = eta_a * eta_w

    def reference(b, b0, bs, delta):
        dl, bs_, k_ = mpmath.mpf(delta), mpmath.mpf(bs), mpmath.mpf(k)
        D = mpmath.sqrt(dl**2 + 4 * k_ * bs_**2)

        def lnE(x):
            x = mpmath.mpf(x)
            N = dl**2 + 4 * k_ * bs_ * x + D * mpmath.sqrt(dl**2 + 4 * k_ * x**2)
            return mpmath.log(N) - mpmath.log(abs(x - bs_))

        return float((lnE(b) - lnE(b0)) / (mpmath.mpf(s) * D))

    def naive(b, b0, bs, delta):
        D = np.sqrt(delta**2 + 4 * k * bs**2)

        def lnE(x):
            return np.log(delta**2 + 4 * k * bs * x + D * np.sqrt(delta**2 + 4 * k * x**2)) - np.log(np.abs(x - bs))

        return (lnE(b) - lnE(b0)) / (s * D)

    worst_naive = 0.0
    for delta, bs, b0 in [(1e-6, 1.0, -1.0), (-1e-6, 1.0, -1.0), (1e-6, -0.5, 2.0), (1e-6, 2.0, -1e-3),
                          (1e-4, 1.0, -1.0), (0.7, 1.5, -2.0)]:
        beta = np.linspace(b0, bs, 41)[1:-1]
        ref = np.array([reference(b, b0, bs, delta) for b in beta])
        got = LR.single_neuron_time(beta, b0, bs, delta, s, eta_a, eta_w)
        assert np.max(np.abs(got - ref)) < 1e-12 * max(1.0, np.max(np.abs(ref)))
        worst_naive = max(worst_naive, float(np.max(np.abs(naive(beta, b0, bs, delta) - ref))))
    assert worst_naive > 1e-6  # the control: the cancellation is real, so the test can fail
