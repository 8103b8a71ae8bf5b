"""Components and effective components of H(c), checked by enumeration and along trained trajectories (Nurisso et
al., NeurIPS 2024: Prop. 3, Prop. 4, Def. 2, Thm 2, Cor. 3; App. E for the biases).

* :func:`prop3_teacher` -- the teacher y = -relu(x1) - relu(x2) + relu(x1 + x2) / 2 of the Prop. 3 runs, which
  needs negative output weights;
* :func:`reached_components` -- from one probe point of the component C_s of H(c) (e = 1), the pathological sign
  vectors reached by every permutation of the neurons followed by the Prop. 4 rescaling back onto c, with the
  largest change of the network function on random inputs (the symmetries keep it).
"""
from __future__ import annotations

import itertools
import numbers

import numpy as np

from ..numerics import checks
from . import invariant_set

__all__ = ["prop3_teacher", "reached_components"]


def prop3_teacher(X) -> np.ndarray:
    """y = -relu(x1) - relu(x2) + relu(x1 + x2) / 2 for each row of X (n, d), d >= 2."""
    X = checks.finite_array("X", X, ndim=(2,))
    if X.shape[1] < 2:
        raise ValueError(f"X must have at least two columns, got shape {X.shape}")
    return -np.maximum(X[:, 0], 0) - np.maximum(X[:, 1], 0) + 0.5 * np.maximum(X[:, 0] + X[:, 1], 0)


def reached_components(c, s, probe, rng, *, bias=False):
    """(reached sign vectors, largest |f' - f|, generic) for one probe of the component with pathological sign
    vector ``s``.

    The probe: input weights (l, 2) and output weights (l,) Gaussian from ``rng``; on even probes the
    non-pathological output weights are set to 0 (the hardest case of Thm 2's quantifier: such a neuron cannot be
    rescaled onto c_k < 0); the pathological ones get the signs ``s``; then :func:`invariant_set.rescale_to` puts the
    point on H(c). Without ``bias`` the two columns are the input weights (d = 2); with ``bias`` they are w (d = 1)
    and the bias b (App. E). Every permutation is applied and rescaled back onto c where Prop. 4 allows, the network
    function compared on 20 Gaussian inputs, and the sign vector of the pathological output weights recorded.
    ``generic`` is True on odd probes (every output weight nonzero)."""
    c = checks.finite_array("c", c, ndim=(1,))
    patho = np.flatnonzero(c < 0)
    if len(s) != len(patho) or any(v not in (-1, 1) for v in s):
        raise ValueError(f"s must hold one sign -1 or +1 per pathological neuron ({len(patho)}), got {s!r}")
    if isinstance(probe, bool) or not isinstance(probe, numbers.Integral) or probe < 0:
        raise ValueError(f"probe must be an integer >= 0, got {probe!r}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    if not isinstance(bias, bool):
        raise ValueError(f"bias must be True or False, got {bias!r}")
    n_neurons = len(c)
    W1 = rng.normal(size=(n_neurons, 2))
    a = rng.normal(size=n_neurons)
    if probe % 2 == 0:
        a[c > 0] = 0.0
    a[patho] = (np.abs(a[patho]) + 1e-3) * np.array(s)
    W1, a = invariant_set.rescale_to(W1, a, c)
    xt = rng.normal(size=(20, 1 if bias else 2))

    def f(V1, va):
        return (np.maximum(xt * V1[:, 0] + V1[:, 1], 0) if bias else np.maximum(xt @ V1.T, 0)) @ va

    f0 = f(W1, a)
    out, fun_err = set(), 0.0
    for perm in itertools.permutations(range(n_neurons)):
        try:
            Q1, Qa = invariant_set.rescale_to(W1[list(perm)], a[list(perm)], c)
        except ValueError:   # a zero output weight cannot be rescaled onto c_k < 0 (Prop. 4)
            continue
        fun_err = max(fun_err, np.abs(f(Q1, Qa) - f0).max())
        out.add(tuple(int(v) for v in np.sign(Qa[patho])))
    return out, fun_err, probe % 2 == 1
