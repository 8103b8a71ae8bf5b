"""The steps, references and figures of the chapter grq_wide_deep (linear_steps, linear_deep, linear_reference,
linear_drawings)."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from markovlib.richlazy import (  # noqa: E402
    linear_deep,
    linear_drawings,
    linear_lazy,
    linear_networks,
    linear_reference,
    linear_steps,
)
from markovlib.richlazy.linear_checks import relative_error  # noqa: E402


def test_torch_flow_and_autograd_M_agree_with_linear_networks():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    A0, W0 = 0.5 * rng.standard_normal((2, 4)), 0.5 * rng.standard_normal((4, 3))
    t = np.linspace(0.0, 1.0, 3)
    At, Wt = linear_reference.torch_flow(A0, W0, X, Y, t, 0.5, 2.0)
    Am, Wm = linear_networks.gradient_flow(A0, W0, X, Y, t, 0.5, 2.0)
    assert relative_error(Am, At) < 1e-8 and relative_error(Wm, Wt) < 1e-8
    M, vel, G = linear_reference.autograd_M_and_velocity(A0, W0, X, Y, 0.5, 2.0)
    assert relative_error(M, linear_networks.preconditioner(A0, W0, 0.5, 2.0)) < 1e-12
    assert relative_error(vel, -M @ linear_networks.vec(G)) < 1e-12
    assert relative_error(linear_reference.autograd_M(A0, W0, 0.5, 2.0), M) < 1e-14
    with pytest.raises(ValueError, match="share h"):
        linear_reference.autograd_M(A0, W0.T)


def test_aligned_singular_values_reference_solves_its_ode():
    t = np.linspace(0.0, 15.0, 51)
    s = linear_reference.aligned_singular_values(0.0, [2.0, 0.5], 0.01, t)
    assert s.shape == (51, 2) and np.allclose(s[0], 0.01) and np.all(np.abs(s[-1] - [2.0, 0.5]) < 0.05)
    # at delta = 0 the equation is sigma' = -2 sigma (sigma - s*): a logistic curve
    s_star, s0 = 2.0, 0.01
    logistic = s_star / (1 + (s_star / s0 - 1) * np.exp(-2 * s_star * t))
    assert np.abs(s[:, 0] - logistic).max() < 1e-9


def test_deep_reference_gradient_is_autograd():
    rng = np.random.default_rng(1)
    L, d = 2, 3
    X, y = rng.standard_normal((4, d)), rng.standard_normal(4)
    z = rng.standard_normal(d + L * d * d)
    zt = torch.tensor(z, requires_grad=True)
    (g,) = torch.autograd.grad(((torch.tensor(X) @ linear_reference.deep_beta(zt, L, d) - torch.tensor(y)) ** 2).sum()
                               / 8, zt)
    assert relative_error(linear_reference.deep_velocity(z, L, X, y), -g.numpy()) < 1e-12
    a, Ws = linear_reference.deep_unpack(z, L, d)
    assert np.allclose(linear_reference.deep_beta(z, L, d), Ws[0].T @ Ws[1].T @ a)
    Z = linear_reference.deep_flow(z, L, X, y, np.array([0.0, 0.5]))
    assert Z.shape == (2, z.size) and np.allclose(Z[0], z)


def test_wide_steps():
    rng = np.random.default_rng(2)
    drift, agree, text = linear_steps.conservation(rng, [[2, 3, 2], [1, 2, 1]], 12, 0.5, 2.0)
    assert drift < 1e-9 and agree < 1e-8 and len(text.splitlines()) == 2 and text.count("yes") == 2
    t41 = linear_steps.thm41(rng, [[2, 3, 2]], 2, 12)
    assert t41["n"] == 2 and max(t41[k] for k in ("formula", "beta", "dyn", "ntk")) < 1e-12
    cases = [[2, 2, 2, -0.5], [3, 3, 2, -0.5], [2, 2, 2, 0.7]]
    t42 = linear_steps.thm42(rng, cases, [4, 2, 3, -1.0], 12, 0.5, 1.0, 0)
    assert t42["iso_C"] < 1e-9 and t42["iso"] < 1e-9 and t42["pair"] < 1e-9
    assert t42["gap_noniso"] > 0.01 and t42["gap_violating"] > 0.01
    err_sv, err_mirror, n = linear_steps.singular_value_law(rng, cases, 12, 0.5, 1.0, 1e-4)
    assert n == 4 and err_sv < 1e-6 and err_mirror < 1e-6
    assert linear_steps.entropy_derivatives([-4.0, 0.0, 4.0]) < 1e-7
    al = linear_steps.aligned_case(0, 16, [2.0, 1.0], [-4.0, 0.0], 0.01, 4.0)
    assert al["aligned"] < 1e-8 and al["sign"] < 1e-8 and set(al["curves"]) == {-4.0, 0.0}
    assert list(al["s_star"]) == [2.0, 1.0]


def test_lazy_problem_and_sweep_table():
    X, Y, init_seed = linear_steps.lazy_problem(0, 8, [6, 8, 3], 1)
    assert X.shape == (8, 6) and Y.shape == (8, 3) and np.linalg.matrix_rank(Y) == 1 and isinstance(init_seed, int)
    table = linear_steps.sweep_table([-1.0, 0.0], dict(S=[1e-9, 0.3], to_plus=[0.2, 0.1], to_minus=[1e-12, 0.5]))
    lines = table.splitlines()
    assert len(lines) == 3 and "< 1e-08" in lines[1] and "3.0e-01" in lines[2]


def test_deep_steps():
    rng = np.random.default_rng(3)
    iso, bal = linear_deep.deep_draws(rng, [1, 2], 3, 8, [1, 2], 0.8)
    assert len(iso) == 2 and len(bal) == 4 and bal[0][2].size == 3 + 9
    drift, lemma, grad = linear_deep.isotropic_checks(iso, 3, -0.5)
    assert drift < 1e-9 and lemma < 1e-9 and grad < 1e-12
    runs = linear_deep.balanced_runs(bal[:2], 3, 200.0)
    M_err, warp = linear_deep.balanced_M_and_warp(runs, 3, 1e-4)
    assert M_err < 1e-9 and warp < 1e-6
    lim = linear_deep.balanced_limits(runs, 3)
    assert lim["bias_err"] < 1e-6 and lim["gap_eq_err"] < 1e-6 and 0 < lim["null_frac"] <= 1
    assert len(lim["table"].splitlines()) == 3
    with pytest.raises(ValueError, match="T"):
        linear_deep.balanced_runs(bal[:1], 3, -1.0)


def test_linear_drawings():
    al = linear_steps.aligned_case(0, 16, [2.0, 1.0], [-4.0, 0.0, 4.0], 0.01, 2.0)
    fig = linear_drawings.draw_singular_values(al, [-4.0, 0.0, 4.0])
    assert len(fig.axes) == 3 and len(fig.axes[0].lines) == 6
    X, Y, seed = linear_steps.lazy_problem(0, 8, [6, 8, 3], 1)
    deltas = [-100.0, -10.0, 0.0, 10.0, 100.0]
    sweep = linear_lazy.lazy_sweep(X, Y, 8, deltas, 1e-3, seed, 200.0, 1e-6)
    fig = linear_drawings.draw_lazy_sweep(deltas, sweep, [6, 8, 3])
    assert len(fig.axes) == 2 and fig.axes[0].get_xscale() == "symlog"
    plt.close("all")
