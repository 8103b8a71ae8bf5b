"""markovlib.topology.components: the Prop. 3 teacher and the enumeration behind Thm 2."""
import itertools

import numpy as np
import pytest

from markovlib.topology import components


def test_teacher():
    X = np.array([[1.0, 2.0, 5.0], [-1.0, -1.0, 0.0]])
    assert np.allclose(components.prop3_teacher(X), [-3 + 1.5, 0.0])


@pytest.mark.parametrize("bias", [False, True])
def test_reached_sign_vectors_keep_the_sign_sum_from_hard_probes(bias):
    rng = np.random.default_rng(0)
    c = np.array([-0.5, -0.7, 0.6])
    for s in itertools.product((-1, 1), repeat=2):
        reach, err, generic = components.reached_components(c, s, 0, rng, bias=bias)
        assert not generic and err < 1e-12 and s in reach and {sum(t) for t in reach} == {sum(s)}
    generic_sums = [components.reached_components(c, (1, 1), p, rng, bias=bias) for p in range(1, 20, 2)]
    assert all(g and e < 1e-12 for _, e, g in generic_sums)
    assert any(len({sum(t) for t in r}) > 1 for r, _, _ in generic_sums)   # some generic point reaches other sums


def test_arguments_are_validated():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="s must"):
        components.reached_components([-1.0, 1.0], (1, 1), 0, rng)
    with pytest.raises(ValueError, match="probe"):
        components.reached_components([-1.0, 1.0], (1,), -1, rng)
    with pytest.raises(ValueError, match="bias"):
        components.reached_components([-1.0, 1.0], (1,), 0, rng, bias=None)
    with pytest.raises(ValueError, match="X must"):
        components.prop3_teacher(np.zeros((3, 1)))
