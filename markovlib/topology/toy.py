"""The toy of Nurisso et al. (NeurIPS 2024), Sec. 6 and Fig. 3: F(x1, x2) = -(x1 + x2) on points uniform on [0, 1]^2,
two ReLU neurons without biases, MSE, gradient descent, weights U(-sqrt 2, sqrt 2) with positive output weights,
rescaled (Prop. 4) onto balances c = (-|c|, -|c|) (obstructed: Prop. 3 keeps both a_k > 0, so f >= 0 >= F and
L >= mean(F^2) / 2) or (-|c|, +|c|) (unobstructed).

* :func:`toy_data` -- the sample X and the target F;
* :func:`sum_rounding_tolerance` -- the rounding slack of comparing two floating-point means of n nonnegative terms
  (Higham, *Accuracy and Stability*, Thm 4.4 / Eq. 3.5);
* :func:`toy_draw` -- the paper's draw of one seed, rescaled onto c;
* :func:`toy_run` -- one gradient-descent run and what the chapter reads from it (:class:`ToyRun`).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ..numerics import checks
from . import invariant_set, shallow_relu

__all__ = ["toy_data", "sum_rounding_tolerance", "toy_draw", "toy_run", "ToyRun", "UNIT_ROUNDOFF"]

UNIT_ROUNDOFF = 2.0**-53  # u of IEEE double precision


def _int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def toy_data(rng, n_points):
    """(X, F): ``n_points`` points uniform on [0, 1]^2 drawn from ``rng``, and F = -(x1 + x2) <= 0 on each."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    X = rng.uniform(0, 1, size=(_int("n_points", n_points, 1), 2))
    return X, -(X[:, 0] + X[:, 1])


def sum_rounding_tolerance(value, n) -> float:
    """tau = (2 gamma_n + 2 u) value, gamma_n = n u / (1 - n u): two floating-point sums of the same n nonnegative
    terms in different orders, each with relative error at most gamma_n (and one rounding of the division each),
    differ by at most tau when their exact value is ``value`` >= 0."""
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"value must be a finite real >= 0, got {value!r}")
    n = _int("n", n, 1)
    if n * UNIT_ROUNDOFF >= 1:
        raise ValueError(f"n must be below 1/u = 2^53, got {n}")
    gamma_n = n * UNIT_ROUNDOFF / (1 - n * UNIT_ROUNDOFF)
    return (2 * gamma_n + 2 * UNIT_ROUNDOFF) * value


def toy_draw(seed, s, c, active=False):
    """The paper's draw for seed ``s`` (generator [seed, s]): W1 (2, 2) and a (2,) uniform on (-sqrt 2, sqrt 2),
    output weights made positive, rescaled onto the balances ``c`` (Prop. 4, :func:`invariant_set.rescale_to`). With
    ``active`` the second neuron's input weights are made nonnegative, so that it is active on all of [0, 1]^2."""
    seed, s = _int("seed", seed, 0), _int("s", s, 0)
    if not isinstance(active, bool):
        raise ValueError(f"active must be True or False, got {active!r}")
    r_ = np.random.default_rng([seed, s])
    W1 = r_.uniform(-np.sqrt(2), np.sqrt(2), size=(2, 2))
    a = np.abs(r_.uniform(-np.sqrt(2), np.sqrt(2), size=2))
    if active:
        W1[1] = np.abs(W1[1])
    return invariant_set.rescale_to(W1, a, c)


@dataclass(frozen=True)
class ToyRun:
    """One toy run: ``res`` the :class:`shallow_relu.GDResult`; ``W1_0``, ``a_0``, ``c`` the start; ``loss_min`` the
    smallest loss over the steps; ``loss_end`` the final loss; ``learned`` final loss below ``learned_below``;
    ``dead_end`` f = 0 on every point at the end; ``dead0_2`` the second neuron inactive on every point at the start
    (it never receives a gradient); ``active_2`` the fraction of points on which the second neuron is active at
    the end; ``rel_drift`` max over steps and neurons of |c_k(t) - c_k(0)| / ``c_abs``."""
    res: shallow_relu.GDResult
    W1_0: np.ndarray
    a_0: np.ndarray
    c: list
    loss_min: float
    loss_end: float
    learned: bool
    dead_end: bool
    dead0_2: bool
    active_2: float
    rel_drift: float


def toy_run(W1, a, X, F, *, c, lr, steps, learned_below, c_abs, save_path=False) -> ToyRun:
    """Gradient descent (:func:`shallow_relu.gradient_descent`, MSE) from (W1, a) for ``steps`` steps of size ``lr``
    on (X, F), every iterate saved when ``save_path``; the outcome as a :class:`ToyRun`."""
    if not (np.isfinite(learned_below) and learned_below > 0):
        raise ValueError(f"learned_below must be a finite real > 0, got {learned_below!r}")
    if not (np.isfinite(c_abs) and c_abs > 0):
        raise ValueError(f"c_abs must be a finite real > 0, got {c_abs!r}")
    W1 = checks.finite_array("W1", W1, ndim=(2,))
    if W1.shape[0] < 2:
        raise ValueError(f"W1 must have at least two neurons (rows), got shape {W1.shape}")
    res = shallow_relu.gradient_descent(W1, a, X, F, lr=lr, steps=steps, kind="mse",
                                        save_every=1 if save_path else None)
    loss_end = float(shallow_relu.loss(res.W1, res.W2, X, F))
    return ToyRun(res=res, W1_0=W1, a_0=np.asarray(a), c=c, loss_min=float(res.losses.min()), loss_end=loss_end,
                  learned=bool(loss_end < learned_below),
                  dead_end=bool(np.all(shallow_relu.forward(res.W1, res.W2, X) == 0)),
                  dead0_2=bool(np.max(X @ W1[1]) <= 0), active_2=float(np.mean(X @ res.W1[1] > 0)),
                  rel_drift=float(res.balance_drift.max() / c_abs))
