"""Random problems for the zero crossings of the single neuron (markovlib.richlazy.minimal_crossing) and the
kernel's own dynamics (markovlib.richlazy.minimal_model.mdot_terms): the drawn data have the stated spectra, norms
and null spaces; the control draws have L(beta0) < L(0); the flow given to draw_family is used; predict agrees
with an independent long integration; mdot_terms sums to finite differences of M(t); validation."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from markovlib.book.inference import wilson_interval, wilson_lower_z
from markovlib.richlazy import minimal_crossing, minimal_model


# independent reference: the flow of many neurons at once, da/dt = -w^T g, dw/dt = -a g, g = C a w - c
def _flow(a0, W0, Cs, cs, T):
    N, d = W0.shape

    def rhs(_, z):
        a, W = z[:N], z[N:].reshape(N, d)
        g = np.einsum("nij,nj->ni", Cs, a[:, None] * W) - cs
        return np.concatenate([-np.sum(W * g, axis=1), (-a[:, None] * g).ravel()])

    events = [lambda _, z, i=i: z[i] for i in range(N)]
    sol = solve_ivp(rhs, (0, T), np.concatenate([a0, W0.ravel()]), method="DOP853", rtol=1e-11, atol=1e-13,
                    t_eval=np.linspace(0, T, 201), events=events)
    assert sol.success
    return sol, sol.y[:N], sol.y[N:].reshape(N, d, -1), np.array([te.size for te in sol.t_events])


def test_crossings_needed_is_the_smallest_passing_count():
    for rate, family in [(0.75, 1), (0.6, 3), (0.9, 1)]:
        n = minimal_crossing.crossings_needed(rate, family)
        z = wilson_lower_z(0.05, family)
        lower = lambda k: k / (k + z**2)  # noqa: E731 - the Wilson lower end at k = n
        assert lower(n) > rate >= lower(n - 1)
        assert wilson_interval(n, n, z)[0] > rate - 1e-12
    assert minimal_crossing.crossings_needed(0.75) == 9
    with pytest.raises(ValueError, match="rate"):
        minimal_crossing.crossings_needed(1.0)


@pytest.mark.parametrize("n, d, whitened", [(1, 2, False), (2, 4, False), (3, 4, True)])
def test_random_problem_has_the_stated_spectrum_norm_and_null_space(n, d, whitened):
    rng = np.random.default_rng(n + d)
    X, y, beta_ls, N = minimal_crossing.random_problem(rng, n, d, sv_range=(0.7, 1.2), beta_norm_range=(0.5, 0.9),
                                                       whitened=whitened)
    ev = np.linalg.eigvalsh(X.T @ X / n)[-n:]
    assert np.all((ev > 0.7 - 1e-12) & (ev < 1.2 + 1e-12))
    if whitened:
        assert np.ptp(ev) < 1e-12
    assert 0.5 - 1e-12 < np.linalg.norm(beta_ls) < 0.9 + 1e-12
    assert np.allclose(X @ beta_ls, y) and np.allclose(N.T @ beta_ls, 0, atol=1e-12)
    assert np.allclose(X @ N, 0, atol=1e-12) and np.allclose(N.T @ N, np.eye(d - n), atol=1e-12)
    with pytest.raises(ValueError, match="n must be at most d"):
        minimal_crossing.random_problem(rng, 3, 2)
    with pytest.raises(ValueError, match="sv_range"):
        minimal_crossing.random_problem(rng, 1, 2, sv_range=(1.0, 0.5))


def test_draw_family_controls_cannot_cross_and_predictions_match_the_flow():
    rng = np.random.default_rng(3)
    rows = minimal_crossing.draw_family(rng, 1, 2, 4, 3, _flow, 1500.0, 1e-7, delta_range=(-3.0, -1.0))
    assert len(rows) == 7 and sum(r["prone"] for r in rows) == 4
    for r in rows:
        assert (r["dL0"] > 0) == r["prone"]  # prone: L(beta0) > L(0); control: below
        assert -3.0 <= r["delta"] <= -1.0
        assert abs(r["a0"] ** 2 - r["w0"] @ r["w0"] - r["delta"]) < 1e-12
        assert r["null_drift"] < 1e-8 and r["crossings"] <= 1
        if not r["prone"]:
            assert r["crossings"] == 0
        minimal_crossing.predict(r)
        assert r["settled"]
        target = r["psi_flip"] if r["crossings"] else r["psi"]
        assert minimal_crossing.max_error(r["beta_T"], target) < 1e-6
        assert minimal_crossing.max_error(r["beta_T"], r["flow_limit"]) < 1e-6
        assert minimal_crossing.max_error(r["beta_T"], r["closed"]) < 1e-6
        assert r["route"][0] == r["sign_end"]
        # one sample: the basin rule decides the crossing
        assert minimal_crossing.basin_predicts_crossing(r) == (r["crossings"] == 1)
        if r["crossings"]:
            assert abs(minimal_crossing.max_error(r["beta_T"], r["psi"]) - r["miss_pred"]) < 1e-6


def test_draw_families_tops_up_and_refuses_a_range_without_crossings():
    rows, topped = minimal_crossing.draw_families(np.random.default_rng(0), [(1, 2)], 2, 0, _flow, 300.0, 1e-3,
                                                  top_up_rng=np.random.default_rng(1), crossings=3,
                                                  delta_range=(-3.0, -2.0))
    assert sum(r["crossings"] == 1 for r in rows) >= 3 and len(rows) == 2 + topped
    with pytest.raises(ValueError, match="too few zero crossings"):
        minimal_crossing.draw_families(np.random.default_rng(0), [(1, 2)], 1, 0, _flow, 50.0, 1e-3,
                                       crossings=5, delta_range=(-3.0, -2.0))


def test_kernel_problem_and_mdot_terms_against_finite_differences():
    X, y, C, c, beta0 = minimal_crossing.kernel_problem(np.random.default_rng(1))
    assert X.shape == (6, 3) and beta0 @ (C @ beta0 / 2 - c) < 0
    assert abs(beta0 @ c / (np.linalg.norm(beta0) * np.linalg.norm(c)) - 0.3) < 1e-12
    for delta in (-4.0, 0.0, 4.0):
        a2 = (delta + np.hypot(delta, 2 * np.linalg.norm(beta0))) / 2
        a0 = np.sqrt(a2)
        sol = solve_ivp(lambda _, z: np.concatenate(([-(z[1:] @ (C @ (z[0] * z[1:]) - c))],
                                                     -z[0] * (C @ (z[0] * z[1:]) - c))),
                        (0, 3), np.concatenate(([a0], beta0 / a0)), method="DOP853", rtol=1e-13, atol=1e-15,
                        dense_output=True)
        M = lambda t: sol.sol(t)[0] ** 2 * np.eye(3) + np.outer(sol.sol(t)[1:], sol.sol(t)[1:])  # noqa: E731
        h = 1e-3
        for t in (0.5, 1.5, 2.5):
            fd = (-M(t + 2 * h) + 8 * M(t + h) - 8 * M(t - h) + M(t - 2 * h)) / (12 * h)
            z = sol.sol(t)
            norm_term, dir_term = minimal_model.mdot_terms(z[0], z[1:], delta, C, c)
            assert np.abs(norm_term + dir_term - fd).max() < 1e-7 * max(1.0, np.abs(fd).max())
            assert np.allclose(norm_term, norm_term.T) and np.allclose(dir_term, dir_term.T)
    with pytest.raises(ValueError, match="nonzero"):
        minimal_model.mdot_terms(0.0, np.ones(3), 0.0, C, c)
    with pytest.raises(ValueError, match="C must be"):
        minimal_model.mdot_terms(1.0, np.ones(3), 0.0, np.eye(2), c)
    with pytest.raises(ValueError, match="n must exceed d"):
        minimal_crossing.kernel_problem(np.random.default_rng(0), 3, 3)
