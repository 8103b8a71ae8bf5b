"""markovlib.richlazy.drawings: the minimal-model explorer draws headless and reports what it shows."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

from markovlib.richlazy import drawings  # noqa: E402
from markovlib.richlazy.minimal_exact import crossing_cosine  # noqa: E402


def _independent_flow(delta, angle, t, b=1.0, r0=1.0):
    """Reference written out here: the whitened flow da/dt = -(a w - beta*)^T w, dw/dt = -a (a w - beta*) from the
    authors' initialization (a0 > 0, a0 w0 = beta0, a0^2 - |w0|^2 = delta), scipy's Radau (an implicit method,
    unlike the package's DOP853); returns mu, phi and S(0, t) computed from M = a^2 I + w w^T."""
    th = np.deg2rad(angle)
    beta0 = r0 * np.array([-np.sin(th), np.cos(th)])
    bstar = np.array([0.0, b])
    a0 = np.sqrt((delta + np.sqrt(delta**2 + 4 * r0**2)) / 2)
    w0 = beta0 / a0

    def rhs(_, y):
        r = y[0] * y[1:] - bstar
        return np.concatenate([[-(r @ y[1:])], -y[0] * r])

    sol = solve_ivp(rhs, (0, t[-1]), np.concatenate([[a0], w0]), method="Radau", t_eval=t, rtol=1e-11, atol=1e-13)
    a, w = sol.y[0], sol.y[1:].T
    wn = np.linalg.norm(w, axis=1)
    M = a[:, None, None] ** 2 * np.eye(2) + w[:, :, None] * w[:, None, :]
    S = 1 - np.einsum("ij,kij->k", M[0], M) / (np.linalg.norm(M[0]) * np.linalg.norm(M, axis=(1, 2)))
    return a, a * wn, w[:, 1] / wn, S


@pytest.mark.parametrize("delta, angle", [(-4.0, 90.0), (-1.0, 135.0), (0.0, 90.0), (0.0, 165.0), (2.0, 45.0),
                                          (4.0, 0.0), (-2.0, 165.0)])
def test_closed_form_curves_match_an_independent_integration(delta, angle):
    import matplotlib.pyplot as plt

    out = drawings.draw_minimal(delta, angle)
    plt.close("all")
    a, mu, phi, S = _independent_flow(delta, angle, out["t"])
    assert np.abs(out["mu"] - mu).max() < 1e-6
    assert np.abs(out["phi"] - phi).max() < 1e-6
    assert np.abs(out["S"] - S).max() < 1e-6
    assert out["gap"] < 1e-6  # the drawing's own flow (DOP853) against its closed form
    assert out["S_T"] == out["S"][-1]
    assert out["crossed"] == bool(np.any(np.sign(a) != np.sign(a[0])))


@pytest.mark.parametrize("delta", [-4.0, -1.0, -0.5, 0.0, 1.0, 4.0])
@pytest.mark.parametrize("angle", [0.0, 90.0, 120.0, 135.0, 165.0])
def test_outcome_follows_the_theory(delta, angle):
    """Sheet and regime from the sign of delta (Fig. 2, Sec. 3); the branch where the flow ends from the threshold
    cosine of App. A.2.5 (a crosses 0 iff cos(beta0, beta*) < cos_c(delta)); at these points |cos - cos_c| > 0.03."""
    import matplotlib.pyplot as plt

    out = drawings.draw_minimal(delta, angle, T=30.0)
    plt.close("all")
    cos, cos_c = np.cos(np.deg2rad(angle)), float(crossing_cosine(delta, 1.0, 1.0))
    assert abs(cos - cos_c) > 0.03
    assert out["sheet"] == {1: "two sheets", 0: "double cone", -1: "one sheet"}[int(np.sign(delta))]
    assert out["regime"].startswith({1: "upstream", 0: "balanced", -1: "downstream"}[int(np.sign(delta))])
    assert out["crossed"] == (cos < cos_c)
    assert out["branch"] == ("a < 0" if cos < cos_c else "a > 0")
    assert np.sign(out["c1"]) == (-1 if cos < cos_c else 1)


def test_balanced_end_distance_and_upstream_laziness():
    """Balanced (delta = 0, |beta0| = |beta*|): S(0, inf) = (1 - cos^2)/5 (the chapter's closed form); upstream at
    delta = 4 the kernel hardly moves."""
    import matplotlib.pyplot as plt

    for angle in (45.0, 90.0):
        out = drawings.draw_minimal(0.0, angle, T=40.0)
        assert out["S_T"] == pytest.approx((1 - np.cos(np.deg2rad(angle)) ** 2) / 5, abs=1e-6)
    assert drawings.draw_minimal(4.0, 90.0)["S_T"] < 0.01
    plt.close("all")


@pytest.mark.parametrize("kw, message", [(dict(delta=9.0, angle=90.0), "delta must be"),
                                         (dict(delta=0.0, angle=180.0), "angle must be"),
                                         (dict(delta=0.0, angle=-1.0), "angle must be"),
                                         (dict(delta=float("nan"), angle=90.0), "delta"),
                                         (dict(delta=0.0, angle=90.0, T=0.5), "T must"),
                                         (dict(delta=0.0, angle=90.0, n_times=5), "n_times"),
                                         (dict(delta=0.0, angle=90.0, beta0_norm=10.0), "beta0_norm")])
def test_bad_arguments_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        drawings.draw_minimal(**kw)
