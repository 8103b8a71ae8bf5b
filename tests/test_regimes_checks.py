"""markovlib.richlazy.regimes_checks: the parameter rules, the printed bounds, the starts and the sweep of the
chapter grq_regimes (Sec. 4 / App. B.1), and the shared-eigenspace start of App. B.1.1 with C(0) free."""
from __future__ import annotations

import numpy as np
import pytest

from markovlib.book import params
from markovlib.richlazy import linear_networks, regimes_checks


def test_shape_rule_accepts_the_stated_shapes_and_names_the_parameter():
    spec = params.declare(narrowing=regimes_checks.shape_rule(True), expanding=regimes_checks.shape_rule(False))
    out = spec.check({"narrowing": "[6, 3, 2]", "expanding": [2, 4, 6]})
    assert out == {"narrowing": [6, 3, 2], "expanding": [2, 4, 6]}
    for bad in ([2, 3, 6], [6, 5, 2], [6, 3], [8, 3, 2]):
        with pytest.raises(ValueError, match="narrowing"):
            spec.check({"narrowing": bad, "expanding": [2, 3, 6]})


def test_case_rules():
    ric = params.declare(ric_cases=regimes_checks.riccati_cases_rule())
    assert ric.check({"ric_cases": [[0.8, 0.5, -0.3]]})["ric_cases"] == [[0.8, 0.5, -0.3]]
    assert ric.check({"ric_cases": "[[-0.6, 1.2, 1.5]]"})["ric_cases"] == [[-0.6, 1.2, 1.5]]
    for bad in ([[0.0, 0.5, 0.5]], [[0.8, 1.5, 0.5]], [[-0.6, 0.5, 1.5]], [[0.8, 0.5]], [], [[3.0, 0.1, 0.1]]):
        with pytest.raises(ValueError, match="ric_cases"):
            ric.check({"ric_cases": bad})
    b14 = params.declare(b14_cases=regimes_checks.b14_cases_rule())
    assert b14.check({"b14_cases": [[1e-6, 1.0, -1.0]]})["b14_cases"] == [[1e-6, 1.0, -1.0]]
    for bad in ([[1e-7, 1.0, -1.0]], [[1.0, 1.0, 1.0]], [[1.0, 11.0, 1.0]]):
        with pytest.raises(ValueError, match="b14_cases"):
            b14.check({"b14_cases": bad})


def test_printed_bound_follows_the_measurement_upward():
    assert regimes_checks.printed_bound(1e-14, 5e-13) == "< 5e-13"
    assert regimes_checks.printed_bound(1e-11, 5e-13) == "< 3e-11"  # 3 x 1e-11, on the 1-2-3-5-7 ladder
    assert regimes_checks.printed_bound(4e-8, 5e-10, tol=1e-7) == "4.0e-08"  # the step would reach the tolerance
    assert regimes_checks.printed_bound(float("nan"), 1e-9) == "nan"
    with pytest.raises(ValueError):
        regimes_checks.printed_bound(1e-3, 0.0)


@pytest.mark.parametrize("shape, delta, iso", [([6, 3, 2], -3.0, True), ([6, 3, 2], 3.0, False),
                                               ([2, 3, 6], 10.0, True), ([2, 3, 6], -10.0, False)])
def test_regime_start_is_isotropic_where_the_proposition_allows(shape, delta, iso):
    A0, W0, got = regimes_checks.regime_start(shape, delta, 4, 0.3)
    assert got is iso
    D = linear_networks.conserved_matrix(A0, W0)
    if iso:
        assert np.max(np.abs(D - delta * np.eye(shape[1]))) < 1e-12 * abs(delta)
    else:
        assert np.allclose(np.diag(D), delta, rtol=1e-12)
        assert np.allclose(np.linalg.norm(A0.T[:, :, None] * W0[:, None, :], axis=(1, 2)), 0.3)


def test_sweep_criteria_and_slope():
    X, Y, s = regimes_checks.draw_problem([6, 3, 2], 0, 1)
    assert X.shape == (12, 6) and Y.shape == (12, 2) and isinstance(s, int)
    assert np.array_equal(X, regimes_checks.draw_problem([6, 4, 2], 0, 1)[0])  # both sides of a shape share a draw
    T, S = regimes_checks.fit_sweep([6, 3, 2], 1, [3.0, 30.0], 2, 0, 0.3, 1e-5, 5000.0)
    assert T.shape == S.shape == (2, 2) and np.all(T > 0) and np.all(S >= 0)
    assert np.all(T[:, 1] < T[:, 0])  # lazy side: faster with |delta|
    T = np.array([[1.0, 3.0, 9.0], [2.0, 1.0, 4.0]])
    S = np.array([[0.5, 0.4, 0.3], [0.5, 0.4, 0.01]])
    assert regimes_checks.median_slope(T, [1.0, 3.0, 9.0]) == pytest.approx(np.median([1.0, np.log(4) / np.log(3)]))
    assert regimes_checks.regime_ok(T, S, False, 0.02, 2.0, 0.1).tolist() == [True, False]
    assert regimes_checks.regime_ok(T[:, ::-1], S, True, 0.5, 2.0, 0.1).tolist() == [True, False]
    with pytest.raises(ValueError):
        regimes_checks.fit_sweep([6, 3, 2], 0, [3.0], 1, 0, 0.3, 1e-5, 5000.0)
    with pytest.raises(ValueError):
        regimes_checks.regime_ok(T, S[:1], True, 0.02, 2.0, 0.1)


@pytest.mark.parametrize("d, delta, fr", [(3, 0.8, [0.5, -0.3]), (3, -0.6, [1.2, 1.5]), (2, 2.0, [0.0, 0.9])])
def test_bernoulli_shared_start(d, delta, fr):
    rng = np.random.default_rng(7)
    b_star = rng.standard_normal((2, d))
    A0, W0 = regimes_checks.bernoulli_shared_start(b_star, delta, fr, np.random.default_rng(1))
    assert np.max(np.abs(A0.T @ A0 - W0 @ W0.T - delta * np.eye(2))) < 1e-12
    _, s, Vt = np.linalg.svd(b_star.T)
    V = Vt.T
    nu0 = np.linalg.solve(A0.T, W0 @ b_star.T)
    assert np.allclose(V.T @ nu0 @ V, np.diag(np.array(fr) * s), atol=1e-12)
    Vc = V.T @ (A0 @ A0.T) @ V
    assert np.max(np.abs(Vc - np.diag(np.diag(Vc)))) < 1e-12
    with pytest.raises(ValueError):
        regimes_checks.bernoulli_shared_start(b_star, delta, [5.0, 0.1], np.random.default_rng(1))
