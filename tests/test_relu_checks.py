"""markovlib.richlazy.relu_checks: the counts and measurements of the ReLU chapters, against direct computations
(Wilson intervals, torch autograd for the flow velocities, the regime bounds of Sec. 5) and their argument checks."""
from __future__ import annotations

import numpy as np
import pytest

from markovlib.book.inference import wilson_interval
from markovlib.richlazy import relu_checks, relu_dynamics
from markovlib.richlazy.minimal_model import conserved_delta
from markovlib.richlazy.relu_reference import torch_velocities


def test_seed_count_is_the_count_with_its_wilson_interval():
    flags = np.array([True] * 7 + [False] * 3)
    k, n, text = relu_checks.seed_count(flags)
    lo, hi = wilson_interval(7, 10)
    assert (k, n) == (7, 10)
    assert text == f"7/10 (95 % Wilson [{lo:.2f}, {hi:.2f}])"
    assert relu_checks.seed_count(flags, "seeds")[2].startswith("7/10 seeds (95 % Wilson [")


@pytest.mark.parametrize("gamma", [0.0, 0.4])
def test_random_network_spans_both_signs_and_flow_velocities_match_autograd(gamma):
    rng = np.random.default_rng(3)
    X, y, a, W = relu_checks.random_network(rng, 12, 3, 8)
    assert X.shape == (12, 3) and y.shape == (12,) and a.shape == (8,) and W.shape == (8, 3)
    ref = torch_velocities(X, y, a, W, gamma, 0.5, 2.0)
    mine = relu_dynamics.flow_velocities(X, y, a, W, gamma, 0.5, 2.0)
    mu = relu_dynamics.spherical_coordinates(a, W)[1]
    assert relu_checks.velocity_error(mine, ref, mu) < 1e-11
    # a wrong velocity is seen on its joint scale
    wrong = (mine[0], 1.01 * mine[1], mine[2])
    assert relu_checks.velocity_error(wrong, ref, mu) > 1e-4
    # the same generator state gives the same draw
    again = relu_checks.random_network(np.random.default_rng(3), 12, 3, 8)
    assert all(np.array_equal(u, v) for u, v in zip((X, y, a, W), again))


@pytest.mark.parametrize("sign, regime", [(1.0, "upstream"), (-1.0, "downstream"), (0.0, "balanced")])
def test_regime_network_and_errors_within_the_derived_bounds(sign, regime):
    rng = np.random.default_rng(0)
    X, y, a, W = relu_checks.regime_network(rng, 15, 3, 6, 100.0, sign)
    bhat, mu = relu_dynamics.spherical_coordinates(a, W)
    delta = conserved_delta(a, W)
    assert np.allclose(np.abs(delta), 100.0 * abs(sign) * np.abs(mu), rtol=1e-10, atol=1e-12)
    assert np.all((np.abs(mu) >= 0.05) & (np.abs(mu) <= 0.5))
    xi = relu_dynamics.driving_vector(X, y, a, W)
    exact = torch_velocities(X, y, a, W, 0.0, 1.0, 1.0)[:2]
    approx = relu_dynamics.regime_velocity(bhat, mu, delta, xi, regime)
    out = relu_checks.regime_errors(bhat, mu, delta, xi, exact, approx, regime, 1e-10)
    if regime == "balanced":
        assert out["balanced_err"] < 1e-10
    else:
        assert 0 < out["worst"] <= 1 + 1e-10 and out["within"] == 6 and out["idle"] == 0
        # a grossly wrong approximation of d mu/dt breaks its bound
        bad = relu_checks.regime_errors(bhat, mu, delta, xi, exact, (approx[0], 1.5 * approx[1]), regime, 1e-10)
        assert bad["worst"] > 1 and bad["within"] < 6


def test_idle_neuron_counts_as_within_when_both_velocities_vanish():
    bhat = np.array([[1.0, 0.0], [0.0, 1.0]])
    mu, delta = np.array([0.1, 0.2]), np.array([10.0, 20.0])
    xi = np.array([[0.0, 0.0], [0.3, 0.1]])
    exact = (np.array([[0.0, 0.0], [-1.0, 0.0]]), np.array([0.0, -2.0]))
    approx = relu_dynamics.regime_velocity(bhat, mu, delta, xi, "upstream")
    out = relu_checks.regime_errors(bhat, mu, delta, xi, exact, approx, "upstream", 1e-10)
    assert out["idle"] == 1 and out["within"] >= 1


def test_direction_turn_and_teacher_alignment():
    W0 = np.array([[[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]])
    W1 = np.array([[[0.0, 3.0], [0.0, 1.0], [1.0, 1.0]]])
    assert relu_checks.direction_turn(W0, W1)[0] == pytest.approx(0.0, abs=1e-7)  # median of (pi/2, 0, 0), arccos
    assert relu_checks.direction_turn(W0, -W0)[0] == pytest.approx(np.pi)
    a = np.array([[[1.0, 3.0]]])
    W = np.array([[[[1.0, 0.0], [0.0, 1.0]]]])
    W_star = np.array([[[1.0, 0.0]]])
    # weights |mu| = 1 and 3, cosines 1 and 0: (1 * 1 + 3 * 0) / 4
    assert relu_checks.teacher_alignment(a, W, W_star)[0, 0] == pytest.approx(0.25)


@pytest.mark.parametrize("call", [
    lambda: relu_checks.seed_count([1, 0]),
    lambda: relu_checks.seed_count(np.array([], dtype=bool)),
    lambda: relu_checks.random_network(0, 3, 2, 2),
    lambda: relu_checks.random_network(np.random.default_rng(0), 0, 2, 2),
    lambda: relu_checks.random_network(np.random.default_rng(0), 3, 2, 2, scales=[0.0, 1.0]),
    lambda: relu_checks.regime_network(np.random.default_rng(0), 3, 2, 2, 10.0, 2),
    lambda: relu_checks.regime_network(np.random.default_rng(0), 3, 2, 2, -1.0, 1),
    lambda: relu_checks.velocity_error((1, 2), (1, 2, 3), [1.0]),
    lambda: relu_checks.regime_errors(np.eye(2), [1.0, 1.0], [1.0, 1.0], np.eye(2), (np.eye(2), np.ones(2)),
                                      (np.eye(2), np.ones(2)), "sideways", 0.0),
    lambda: relu_checks.regime_errors(np.eye(2), [1.0, 1.0], [1.0, 1.0], np.eye(2), (np.eye(2), np.ones(2)),
                                      (np.eye(2), np.ones(2)), "upstream", 2.0),
    lambda: relu_checks.direction_turn(np.ones((2, 3)), np.ones((3, 3))),
    lambda: relu_checks.teacher_alignment(np.ones((1, 1, 2)), np.ones((1, 1, 2, 2)), np.ones((2, 1, 2))),
])
def test_bad_arguments_raise_value_errors(call):
    with pytest.raises(ValueError):
        call()


def test_load_stored_and_step_index(tmp_path):
    import hashlib
    import json

    from markovlib.book.stored import data_dir

    G, man = relu_checks.load_stored(data_dir("relu_grid"), "grid.npz")
    assert G["complete"].all() and "settings" in man
    assert relu_checks.step_index(G["steps"], int(G["steps"][-1])) == len(G["steps"]) - 1
    with pytest.raises(ValueError):
        relu_checks.step_index(G["steps"], -5)
    # a set with a diverged run is refused
    np.savez(tmp_path / "x.npz", complete=np.array([True]), finite=np.array([False]))
    digest = hashlib.sha256((tmp_path / "x.npz").read_bytes()).hexdigest()
    (tmp_path / "manifest.json").write_text(json.dumps({"provenance": {"files": {"x.npz": {"sha256": digest}}}}))
    with pytest.raises(ValueError, match="diverged"):
        relu_checks.load_stored(tmp_path, "x.npz")


def test_size_ranking_decides_by_two_sided_family_wise_wilson():
    # two sizes, one horizon, 20 seeds, deltas (down, bal, up): upstream lower in 20/20 at the first size, 0/20 at the
    # second, 10/20 would be undecided
    TL = np.ones((3, 1, 20, 3))
    TL[0, 0, :, 2] = 0.5
    TL[1, 0, :, 2] = 2.0
    TL[2, 0, :10, 2] = 0.5
    TL[2, 0, 10:, 2] = 2.0
    rows, verdicts, z = relu_checks.size_ranking(TL, [[10, 100], [20, 200], [40, 400]], [1000], [1000], 2, 1)
    assert verdicts == {(10, 100, 1000): "upstream ends lower", (20, 200, 1000): "balanced ends lower",
                        (40, 400, 1000): "not decided"}
    assert z > 1.96 and rows[0]["upstream below balanced"] == "20/20"
    with pytest.raises(ValueError):
        relu_checks.size_ranking(TL, [[10, 100]], [1000], [1000], 2, 1)
