"""markovlib.topology.toy: the Sec. 6 toy's data, draw, rounding tolerance and one run."""
import numpy as np
import pytest

from markovlib.topology import invariant_set, toy


def test_data_and_draw():
    X, F = toy.toy_data(np.random.default_rng(0), 500)
    assert X.shape == (500, 2) and np.all((0 <= X) & (X <= 1)) and np.allclose(F, -X.sum(1))
    W1, a = toy.toy_draw(0, 3, [-0.1, 0.1], active=True)
    assert np.allclose(invariant_set.neuron_balances(W1, a), [-0.1, 0.1]) and np.all(a > 0) and np.all(W1[1] >= 0)


def test_rounding_tolerance_covers_two_summation_orders():
    rng = np.random.default_rng(1)
    v = rng.uniform(0, 1, 100000) ** 2
    exact = 0.5 * np.mean(v)
    tau = toy.sum_rounding_tolerance(exact, v.size)
    assert abs(0.5 * np.mean(v[::-1]) - exact) <= tau and abs(0.5 * np.sum(np.sort(v)) / v.size - exact) <= tau
    assert toy.sum_rounding_tolerance(0.0, 10) == 0.0


def test_obstructed_run_stays_above_the_bound_and_unobstructed_can_learn():
    X, F = toy.toy_data(np.random.default_rng(0), 400)
    bound = 0.5 * np.mean(F**2)
    W1, a = toy.toy_draw(0, 0, [-0.1, -0.1])
    run = toy.toy_run(W1, a, X, F, c=[-0.1, -0.1], lr=0.01, steps=300, learned_below=0.01 * bound, c_abs=0.1)
    assert np.all(run.res.W2_min > 0) and run.loss_min >= bound - toy.sum_rounding_tolerance(bound, 400)
    assert not run.learned and run.rel_drift < 1
    learned = [toy.toy_run(*toy.toy_draw(0, s, [-0.1, 0.1], active=True), X, F, c=[-0.1, 0.1], lr=0.01, steps=2000,
                           learned_below=0.01 * bound, c_abs=0.1, save_path=s == 0) for s in range(4)]
    assert any(r.learned for r in learned) and learned[0].res.W1_path is not None


def test_arguments_are_validated():
    with pytest.raises(ValueError, match="rng"):
        toy.toy_data(0, 10)
    with pytest.raises(ValueError, match="n_points"):
        toy.toy_data(np.random.default_rng(0), 0)
    with pytest.raises(ValueError, match="value"):
        toy.sum_rounding_tolerance(-1.0, 10)
    with pytest.raises(ValueError, match="active"):
        toy.toy_draw(0, 0, [-0.1, 0.1], active=1)
    X, F = toy.toy_data(np.random.default_rng(0), 10)
    W1, a = toy.toy_draw(0, 0, [-0.1, 0.1])
    with pytest.raises(ValueError, match="learned_below"):
        toy.toy_run(W1, a, X, F, c=[-0.1, 0.1], lr=0.01, steps=1, learned_below=0.0, c_abs=0.1)
    with pytest.raises(ValueError, match="c_abs"):
        toy.toy_run(W1, a, X, F, c=[-0.1, 0.1], lr=0.01, steps=1, learned_below=1.0, c_abs=np.nan)
