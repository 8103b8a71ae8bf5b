"""markovlib.topology.homology: samples lie on their quadrics, persistence of a circle and of two points, graph
components, and the validation of the arguments."""
import numpy as np
import pytest

from markovlib.topology import homology


def _on_quadrics(P, d, e, c):
    blocks = P.reshape(len(P), len(c), d + e)
    return np.abs((blocks[..., :d] ** 2).sum(-1) - (blocks[..., d:] ** 2).sum(-1) - np.asarray(c)).max()


@pytest.mark.parametrize("c", [[1.0], [-1.0], [0.0], [1.0, -1.0]])
def test_samplers_land_on_the_quadrics_inside_the_ball(c):
    rng = np.random.default_rng(0)
    P = homology.sample_by_parametrization(2, 1, c, 500, rng, trunc=0.1, cone_radius=0.5)
    assert P.shape == (500, 3 * len(c)) and _on_quadrics(P, 2, 1, c) < 1e-12
    Q, res = homology.sample_by_projection(2, 1, c, 300, rng, trunc=0.1, cone_radius=0.5, batch=2000)
    assert Q.shape == (300, 3 * len(c)) and res < 1e-9 and _on_quadrics(Q, 2, 1, c) < 1e-9
    R = [homology.ball_radius(ck, 0.1, 0.5) for ck in c]
    assert all(np.linalg.norm(Q.reshape(300, len(c), 3)[:, k], axis=1).max() <= R[k] + 1e-12 for k in range(len(c)))
    S = homology.sample_invariant_set(2, 1, c, 200, 0.1, rng, bias=True)
    assert S.shape == (200, 4 * len(c) + 1) and _on_quadrics(S[:, :-1], 3, 1, c) < 1e-10


def test_closest_point_is_closest():
    rng = np.random.default_rng(1)
    W, A = rng.normal(size=(50, 2)), rng.normal(size=(50, 1))
    Wp, Ap = homology.closest_point(W, A, 0.5)
    assert np.abs((Wp**2).sum(1) - (Ap**2).sum(1) - 0.5).max() < 1e-12
    cand = homology.sample_by_parametrization(2, 1, [0.5], 20000, rng, trunc=3.0, cone_radius=0.5)
    dist = np.linalg.norm(np.hstack([Wp, Ap]) - np.hstack([W, A]), axis=1)
    brute = np.linalg.norm(cand[None, :, :] - np.hstack([W, A])[:, None, :], axis=2).min(1)
    assert np.all(dist <= brute + 1e-9)


def test_persistence_of_a_circle_and_two_points():
    t = np.linspace(0, 2 * np.pi, 120, endpoint=False)
    circle = np.column_stack([np.cos(t), np.sin(t)])
    counts, noise, signal = homology.rips_betti(circle, 1, 0.5, 2.0)
    assert counts == [1, 1] and noise < 0.5 < signal
    counts, _, _ = homology.alpha_betti(circle, 1, 0.5)
    assert counts == [1, 1]
    two = np.vstack([circle * 0.1, circle * 0.1 + 5])
    assert homology.graph_components(two, 0.5) == 2 and homology.rips_betti(two, 0, 0.5, 1.0)[0] == [2]


def test_arguments_are_validated():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="trunc"):
        homology.sample_by_parametrization(2, 1, [1.0], 10, rng, trunc=0.0, cone_radius=0.5)
    with pytest.raises(ValueError, match="rng"):
        homology.sample_by_projection(2, 1, [1.0], 10, 0, trunc=0.1, cone_radius=0.5)
    with pytest.raises(ValueError, match="max_edge"):
        homology.rips_betti(np.zeros((3, 2)), 0, 1.0, 0.5)
    with pytest.raises(ValueError, match="bias"):
        homology.sample_invariant_set(2, 1, [1.0], 10, 0.1, rng, bias=1)
    with pytest.raises(ValueError, match="W and A"):
        homology.closest_point(np.zeros((3, 2)), np.zeros((2, 1)), 1.0)
    with pytest.raises(ValueError, match="radius"):
        homology.graph_components(np.zeros((3, 2)), -1.0)


def test_cases_rule_checks_every_case():
    rule = homology.cases_rule("+-0", lambda d, e, sg: d + e <= 3, "d + e at most 3")
    assert rule.check("cases", "[[2, 1, '+-']]", {}) == [[2, 1, "+-"]]
    for bad, match in [([], "non-empty"), ([[2, 1]], r"cases\[0\] must be"), ([[0, 1, "+"]], r"cases\[0\]\[0\]"),
                       ([[2, 1, "+x"]], r"cases\[0\]\[2\]"), ([[3, 1, "+"]], "outside the stated range")]:
        with pytest.raises(ValueError, match=match):
            rule.check("cases", bad, {})
    with pytest.raises(ValueError, match="signs"):
        homology.cases_rule("x", lambda d, e, sg: True, "")
