"""How discrete optimizers break a conservation law of gradient flow (the closing chapter, ``book/closing``).

The three parts of the book each have a quantity Q that gradient flow conserves because the loss has a symmetry:
the energy E(e, w) of Part I (Lemma 1 of "Local to Global"), delta = eta_w a^2 - eta_a ||w||^2 of Part II
(App. A.1 of "Get rich quick") and the neuron balances c_k = ||w_k||^2 - ||a_k||^2 of Part III (Eq. (10)-(12) of
the topology paper). In each case grad Q . grad L = 0 at every point, so along theta' = -grad L, dQ/dt = 0.

A discrete optimizer replaces the flow by steps theta <- theta - h u. This module runs one on a loss given as a
numpy gradient callable and records Q along the iterates (:func:`run_optimizer`):

* ``"gd"``: u = grad L. Since grad Q . grad L = 0, Taylor's theorem gives Q(theta') - Q(theta) =
  (h^2 / 2) u^T (hess Q) u + O(h^3) (exactly h^2 u^T S u for a quadratic form Q = theta^T S theta), so over a fixed
  time T = n h the drift is (h / 2) int_0^T grad L^T (hess Q) grad L dt + O(h^2) = O(h) (:func:`second_order_change`);
* ``"sgd"``: u = the gradient of a minibatch loss. When every minibatch loss has the same symmetry, the same
  identity holds step by step with the minibatch gradient, and the drift is again O(h);
* ``"adam"``: u = m_hat / (sqrt(v_hat) + eps) (Kingma & Ba), a per-coordinate rescaling of the gradient, which is
  no longer orthogonal to grad Q: Q changes at first order in h per step, so the drift over a fixed time does not
  vanish as h -> 0;
* ``weight_decay`` lambda (any optimizer; coupled L2, u + lambda theta): under the flow
  theta' = -grad L - lambda theta a quadratic Q = theta^T S theta with theta^T S grad L = 0 obeys
  dQ/dt = -2 lambda Q, so Q(t) = Q(0) exp(-2 lambda t) exactly (:func:`decay_law`).

Runs are vectorized over a leading axis of initializations. An initialization whose iterate overflows (a step
size beyond the stability limit) is frozen at its last finite iterate and flagged in ``Run.diverged``, so a run
never returns NaN.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..numerics import checks

OPTIMIZERS = ("gd", "sgd", "adam")
_BLOW_UP = 1e100  # an iterate beyond this (or non-finite) counts as diverged


@dataclass(frozen=True)
class Run:
    """A run of :func:`run_optimizer`: the recorded steps and times, the iterates ``theta`` (records x inits x dim),
    the conserved quantity ``quantity`` (records x inits [x components]) and the ``diverged`` flags (inits)."""

    steps: np.ndarray
    times: np.ndarray
    theta: np.ndarray
    quantity: np.ndarray
    diverged: np.ndarray

    def drift(self) -> np.ndarray:
        """max over the recorded steps (and components) of |Q(t) - Q(0)|, one value per initialization."""
        d = np.abs(self.quantity - self.quantity[:1])
        return d.reshape(d.shape[0], d.shape[1], -1).max(axis=(0, 2))

    def final_drift(self) -> np.ndarray:
        """max over components of |Q(T) - Q(0)| at the last recorded step, one value per initialization."""
        d = np.abs(self.quantity[-1] - self.quantity[0])
        return d.reshape(d.shape[0], -1).max(axis=1)


def _theta(theta0) -> np.ndarray:
    theta = checks.finite_array("theta0", theta0)
    if theta.ndim == 1:
        theta = theta[None, :]
    if theta.ndim != 2 or theta.size == 0:
        raise ValueError(f"theta0 must be a non-empty vector or an (inits x dim) array, got shape {theta.shape}")
    return theta.astype(float).copy()


def _betas(betas):
    b = tuple(float(x) for x in betas)
    if len(b) != 2 or not all(0.0 <= x < 1.0 for x in b):
        raise ValueError(f"betas must be two numbers in [0, 1), got {betas!r}")
    return b


def run_optimizer(grad, theta0, h, steps, *, quantity, optimizer="gd", weight_decay=0.0, n_data=None, batch=None,
                  seed=0, betas=(0.9, 0.999), eps=1e-8, record_every=None) -> Run:
    """Run a named optimizer from ``theta0`` and record the conserved quantity along it (module docstring).

    ``grad(theta, idx)``: the loss gradient at ``theta`` (inits x dim), same shape; ``idx`` is None for the full
    loss and, for ``optimizer="sgd"``, an index array of ``batch`` samples out of ``n_data`` drawn without
    replacement at each step by ``np.random.default_rng(seed)`` (the same minibatch for every initialization).
    ``quantity(theta)``: the conserved quantity, an array with the inits as leading axis. ``h`` > 0 the step size,
    ``steps`` >= 0 the number of steps (time T = steps h), ``weight_decay`` >= 0 the coupled L2 coefficient,
    ``betas``/``eps`` Adam's constants, ``record_every`` (default: only the first and the last step).
    Returns a :class:`Run`.
    """
    if not callable(grad) or not callable(quantity):
        raise ValueError("grad and quantity must be callables")
    optimizer = checks.choice("optimizer", optimizer, set(OPTIMIZERS))
    h = checks.positive_real("h", h)
    steps = checks.nonnegative_int("steps", steps)
    lam = float(checks.finite_array("weight_decay", weight_decay))
    if lam < 0:
        raise ValueError(f"weight_decay must be a finite real number >= 0, got {weight_decay!r}")
    b1, b2 = _betas(betas)
    eps = checks.positive_real("eps", eps)
    every = steps if record_every is None else checks.positive_int("record_every", record_every)
    if optimizer == "sgd":
        n_data = checks.positive_int("n_data", n_data)
        batch = checks.positive_int("batch", batch)
        if batch > n_data:
            raise ValueError(f"batch must be at most n_data = {n_data}, got {batch}")
    rng = np.random.default_rng(checks.nonnegative_int("seed", seed))
    theta = _theta(theta0)
    alive = np.ones(theta.shape[0], dtype=bool)
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    rec_steps, rec_theta = [0], [theta.copy()]
    for s in range(1, steps + 1):
        idx = rng.choice(n_data, batch, replace=False) if optimizer == "sgd" else None
        with np.errstate(over="ignore", invalid="ignore"):
            g = np.asarray(grad(theta, idx), dtype=float)
            if g.shape != theta.shape:
                raise ValueError(f"grad must return an array of shape {theta.shape}, got {g.shape}")
            g = g + lam * theta
            if optimizer == "adam":
                m = b1 * m + (1 - b1) * g
                v = b2 * v + (1 - b2) * g * g
                u = (m / (1 - b1**s)) / (np.sqrt(v / (1 - b2**s)) + eps)
            else:
                u = g
            new = theta - h * u
        ok = alive & np.all(np.isfinite(new) & (np.abs(new) < _BLOW_UP), axis=1)
        alive &= ok
        theta = np.where(ok[:, None], new, theta)
        if s % max(every, 1) == 0 or s == steps:
            rec_steps.append(s)
            rec_theta.append(theta.copy())
    thetas = np.stack(rec_theta)
    with np.errstate(over="ignore", invalid="ignore"):
        q = np.stack([np.asarray(quantity(t), dtype=float) for t in thetas])
    q = np.nan_to_num(q, nan=np.inf)  # a frozen iterate where Q itself overflows reads as an infinite drift
    rec = np.asarray(rec_steps)
    return Run(rec, rec * h, thetas, q, ~alive)


def loglog_slope(h, drift) -> float:
    """The least-squares slope of log(drift) against log(h): 1 for a drift O(h), 0 for one that does not vanish."""
    h = checks.finite_array("h", h).ravel()
    drift = checks.finite_array("drift", drift).ravel()
    if h.shape != drift.shape or h.size < 2:
        raise ValueError(f"h and drift must be two vectors of the same length >= 2, got {h.shape} and {drift.shape}")
    if np.any(h <= 0) or np.any(drift <= 0):
        raise ValueError("h and drift must be > 0 (a log-log fit)")
    if np.ptp(np.log(h)) == 0:
        raise ValueError("h must hold at least two different step sizes")
    return float(np.polyfit(np.log(h), np.log(drift), 1)[0])


def second_order_change(hess_q, g, h):
    """(h^2 / 2) g^T (hess Q) g: the leading change of Q in one step theta -> theta - h g when grad Q . g = 0
    (exact for a quadratic Q). ``hess_q``: (dim x dim) or (inits x dim x dim); ``g``: (dim,) or (inits x dim)."""
    H = checks.finite_array("hess_q", hess_q)
    g = checks.finite_array("g", g)
    h = checks.positive_real("h", h)
    if H.shape[-2:] != (g.shape[-1], g.shape[-1]):
        raise ValueError(f"hess_q must be square of size {g.shape[-1]}, got shape {H.shape}")
    return 0.5 * h * h * np.einsum("...i,...ij,...j->...", g, H, g)


def decay_law(q0, weight_decay, t):
    """Q(t) = Q(0) exp(-2 lambda t): a quadratic conserved quantity of a rescaling symmetry (delta, c_k) under the
    flow with weight decay lambda, theta' = -grad L - lambda theta (module docstring). Broadcasts."""
    q0 = checks.finite_array("q0", q0)
    lam = float(checks.finite_array("weight_decay", weight_decay))
    if lam < 0:
        raise ValueError(f"weight_decay must be a finite real number >= 0, got {weight_decay!r}")
    t = checks.finite_array("t", t)
    if np.any(t < 0):
        raise ValueError("t must be >= 0")
    return q0 * np.exp(-2.0 * lam * t)
