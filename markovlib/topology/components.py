"""Components and effective components of H(c), checked by enumeration and along trained trajectories (Nurisso et
al., NeurIPS 2024: Prop. 3, Prop. 4, Def. 2, Thm 2, Cor. 3; App. E for the biases).

* :func:`prop3_teacher` -- the teacher y = -relu(x1) - relu(x2) + relu(x1 + x2) / 2 of the Prop. 3 runs, which
  needs negative output weights;
* :func:`reached_components` -- from one probe point of the component C_s of H(c) (e = 1), the pathological sign
  vectors reached by every permutation of the neurons followed by the Prop. 4 rescaling back onto c, with the
  largest change of the network function on random inputs (the symmetries keep it);
* :func:`enumerate_effective` -- for every width l and every number l_- of pathological neurons, the classes of the
  per-component relation (components reached from every probe) over all sign vectors, against Thm 2's sum rule.
"""
from __future__ import annotations

import itertools
import numbers

import numpy as np

from ..numerics import checks
from . import invariant_set

__all__ = ["prop3_teacher", "reached_components", "enumerate_effective"]


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


def enumerate_effective(widths, n_probes, rng, *, bias=False) -> list[dict]:
    """For each l in ``widths`` and l_- = 1..l: c with l_- balances in -[0.2, 1) then l - l_- in [0.2, 1) (from
    ``rng``), and for every pathological sign vector s, ``n_probes`` probes of :func:`reached_components`; the
    per-component relation keeps the components reached from every probe. Each row: l, lm, c, n_signs, classes (the
    number of its classes, Cor. 3 says l_- + 1 for e = 1, d > 1), symmetric (the relation is), sums_ok (each class has
    one sign sum, Thm 2), generic and generic_multi (generic probes with l_+ >= 1, and those reaching several sign
    sums: the per-point reading of Def. 2), fun_err (largest change of the network function)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    n_probes = checks.positive_int("n_probes", n_probes)
    rows = []
    for width in widths:
        width = checks.positive_int("widths[i]", width)
        for lm in range(1, width + 1):
            c = np.concatenate([-rng.uniform(0.2, 1.0, lm), rng.uniform(0.2, 1.0, width - lm)])
            signs = list(itertools.product((-1, 1), repeat=lm))
            rel, generic, multi, fun_err = {}, 0, 0, 0.0
            for s in signs:
                sets = []
                for probe in range(n_probes):
                    reach, ferr, is_generic = reached_components(c, s, probe, rng, bias=bias)
                    sets.append(reach)
                    fun_err = max(fun_err, ferr)
                    if is_generic and width - lm >= 1:
                        generic += 1
                        multi += len({sum(t) for t in reach}) > 1
                rel[s] = set.intersection(*sets)
            classes = {frozenset(v) for v in rel.values()}
            rows.append(dict(l=width, lm=lm, c=c, n_signs=len(signs), classes=len(classes),
                             symmetric=all(s in rel[t] for s in signs for t in rel[s]),
                             sums_ok=all(len({sum(s) for s in cl}) == 1 for cl in classes),
                             generic=generic, generic_multi=multi, fun_err=fun_err))
    return rows
