"""The lazy limits of wide linear networks (markovlib.richlazy.linear_lazy) and the checks of the wide-network
chapter (markovlib.richlazy.linear_checks): the product split, the cancellation-free kernel distance, the sweep's
kernels and its O(|delta|^-4) tail, the balanced start's kernel distance, and the parameter converters."""
import numpy as np
import pytest

from markovlib.book import params
from markovlib.richlazy import linear_checks, linear_lazy, linear_networks
from markovlib.richlazy.minimal_model import kernel_distance


def test_relative_error():
    assert linear_checks.relative_error([1.0, 2.0], [1.0, 2.5]) == pytest.approx(0.5 / 2.5)
    assert linear_checks.relative_error([1e-3], [0.0]) == pytest.approx(1e-3)  # absolute below 1
    with pytest.raises(ValueError, match="shape"):
        linear_checks.relative_error([1.0], [1.0, 2.0])


def test_product_split_solves_the_two_equations():
    for eta_a, eta_w in [(1.0, 1.0), (0.5, 2.0)]:
        for delta in (-1e3, -2.0, 0.0, 0.7, 1e3):
            sigma = np.array([1e-3, 0.4, 3.0])
            x, y = linear_lazy.product_split(sigma, delta, eta_a, eta_w)
            assert np.allclose(x - y, delta, rtol=1e-12, atol=1e-12)
            assert np.allclose(x * y, eta_a * eta_w * sigma**2, rtol=1e-12)
            assert np.all(x >= 0) and np.all(y >= 0)
    with pytest.raises(ValueError, match="eta_a"):
        linear_lazy.product_split(1.0, 0.0, 0.0, 1.0)


def test_kernel_distance_small_agrees_and_keeps_tiny_distances():
    rng = np.random.default_rng(0)
    K1 = rng.standard_normal((4, 4))
    K2 = K1 + 0.3 * rng.standard_normal((4, 4))
    assert abs(linear_lazy.kernel_distance_small(K1, K2) - kernel_distance(K1, K2)) < 1e-14
    E = rng.standard_normal((4, 4))
    eps = 1e-7
    S = linear_lazy.kernel_distance_small(K1, K1 + eps * E)
    # to second order, 1 - cos = |E_perp|^2 eps^2 / (2 |K1|^2), E_perp the part of E orthogonal to K1
    E_perp = E - np.sum(E * K1) / np.sum(K1 * K1) * K1
    assert S == pytest.approx(eps**2 * np.sum(E_perp**2) / (2 * np.sum(K1 * K1)), rel=1e-5)
    with pytest.raises(ValueError, match="nonzero"):
        linear_lazy.kernel_distance_small(np.zeros((2, 2)), np.eye(2))


def test_lazy_sweep_freezes_the_predicted_kernels_at_the_rate_delta_minus_4():
    rng = np.random.default_rng(1)
    d, h, c, n = 3, 4, 2, 8
    X = rng.standard_normal((n, d))
    Y = X @ (rng.standard_normal((c, 1)) @ rng.standard_normal((1, d))).T
    deltas = [-300.0, -100.0, 0.0, 100.0, 300.0]
    out = linear_lazy.lazy_sweep(X, Y, h, deltas, 1e-3, 5, 200.0, 1e-6)
    assert np.all(out["conv"] < 1e-6) and out["kd_gap"] < 1e-13
    assert out["S"][2] > 100 * max(out["S"][0], out["S"][-1])  # rich at balance, lazy at the ends
    assert out["to_plus"][-1] < 1e-5 and out["to_minus"][0] < 1e-5
    tail = linear_lazy.tail_exponents(deltas, out["S"])
    assert abs(tail["upstream"] + 4) < 0.5 and abs(tail["downstream"] + 4) < 0.5
    with pytest.raises(ValueError, match="two values"):
        linear_lazy.tail_exponents([-1.0, 0.0, 1.0], [1.0, 1.0, 1.0])


def test_flow_to_convergence_and_balanced_kernel_distance():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((6, 3))
    Y = X @ rng.standard_normal((2, 3)).T
    A0, W0 = linear_networks.init_with_deltas(3, 2, np.zeros(4), np.full(4, 0.1), seed=3)
    At, Wt, ratio = linear_lazy.flow_to_convergence(A0, W0, X, Y, 20.0, 1e-8)
    assert ratio < 1e-8 and At.shape == (2, 2, 4)
    _, _, short = linear_lazy.flow_to_convergence(A0, W0, X, Y, 0.1, 1e-8, tries=1)  # one short run: not converged
    assert short > 1e-3
    S = linear_lazy.balanced_kernel_distance(np.random.default_rng(4), 12, [6, 8, 3], 1, 1e-3, 500.0, 1e-6)
    r = np.random.default_rng(4)  # the same draws, by hand
    X2 = r.standard_normal((12, 6))
    Y2 = X2 @ (r.standard_normal((3, 1)) @ r.standard_normal((1, 6))).T
    A2, W2 = linear_networks.init_with_deltas(6, 3, np.zeros(8), np.full(8, 1e-3), seed=int(r.integers(2**31)))
    At2, Wt2, ratio2 = linear_lazy.flow_to_convergence(A2, W2, X2, Y2, 500.0, 1e-6)
    assert ratio2 < 1e-6 and 0.1 < S < 1
    K0, KT = linear_networks.ntk(X2, At2[0], Wt2[0]), linear_networks.ntk(X2, At2[1], Wt2[1])
    assert S == pytest.approx(kernel_distance(K0, KT), abs=1e-12)
    with pytest.raises(ValueError, match="T"):
        linear_lazy.flow_to_convergence(A0, W0, X, Y, 0.0, 1e-8)


def test_converters_accept_papermill_forms_and_refuse_bad_values():
    assert linear_checks.dims_list("shapes", "[[3, 4, 2], [1, 1, 1]]") == [[3, 4, 2], [1, 1, 1]]
    assert linear_checks.dims("lazy_dims", (6.0, 8, 3)) == [6, 8, 3]
    assert linear_checks.iso_case_list("iso", [[3, 3, 3, -1]]) == [(3, 3, 3, -1.0)]
    for bad, match in [([[3, 4]], "3 integers"), ([[3, 0, 2]], r"shapes\[0\]\[1\]"), ("[[", "list"), ([], "non-empty")]:
        with pytest.raises(ValueError, match=match):
            linear_checks.dims_list("shapes", bad)
    with pytest.raises(ValueError, match="delta"):
        linear_checks.iso_case("iso_violating", [4, 2, 3, float("nan")])
    rule = params.Rule(linear_checks.dims_list, "list of (d, h, c)", why="w")
    with pytest.raises(ValueError, match="shapes.*w"):
        rule.check("shapes", [[1.5, 2, 3]], {})
    assert linear_checks.thm_4_2_applies(3, 3, 2, -0.5) and not linear_checks.thm_4_2_applies(4, 2, 3, -1.0)
    assert linear_checks.thm_4_2_applies(3, 2, 2, 0.8) and not linear_checks.thm_4_2_applies(3, 3, 2, 0.0)
