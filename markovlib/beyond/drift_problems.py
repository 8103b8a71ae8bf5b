"""The closing chapter's three problems, built once (``book/closing`` and its explorer, ``beyond.drift_drawings``).

Each problem is a loss with a symmetry, its gradient as a numpy callable ``grad(theta, idx=None)`` (rows of
``theta`` are initializations; ``idx`` selects a minibatch for SGD), the quantity that gradient flow conserves,
how initializations are drawn and where the theorem says training ends:

* :class:`MarkovProblem` (Part I): the canonical model's reduced loss L = g(c(e, w)) (Lemma 5 of "Local to
  Global", ``markov.canonical.grad``) on a chain (p, q); a minibatch of a pool of sampled transitions has the
  reduced loss of its empirical chain (smoothed counts), a function of c too. Conserved: the energy
  E(e, w) = e^2 - w^2 - sign(w) log|w| (Lemma 1); the end is the basin that ``energy.predict_limit`` reads off
  (Thm 2, Thm 8).
* :class:`NeuronProblem` (Part II): one neuron f(x) = a w^T x on L = |X a w - y|^2 / (2n) ("Get rich quick",
  Sec. 3); conserved: delta = a^2 - ||w||^2 (App. A.1); the end is the interpolant argmin Psi_delta
  (``richlazy.minimal_exact.implicit_bias_limit``, Thm 3.1) for beta_0 = a_0 w_0 with y_i x_i^T beta_0 > 0.
* :class:`ReluProblem` (Part III): f(x) = sum_k a_k relu(w_k^T x) on MSE/2 with a ReLU teacher of positive output
  weight (``topology.shallow_relu.loss_grad``); conserved: the balances c_k = ||w_k||^2 - a_k^2 (Eq. (10)-(12) of
  the topology paper); a neuron with c_k < 0 keeps the sign of a_k (the components of H(c)).

Every draw comes from a ``numpy.random.Generator`` passed in, in a documented order, so a caller that keeps drawing
from the same generator gets the same numbers as before. :func:`laws` builds the explorer's three problems at the
chapter's default sizes.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..markov import canonical
from ..markov.energy import energy, predict_limit
from ..numerics import checks
from ..richlazy.minimal_exact import implicit_bias_limit
from ..richlazy.minimal_model import conserved_delta
from ..topology import shallow_relu

LAWS = ("I", "II", "III")
NAMES = {"I": "E (Part I)", "II": "delta (Part II)", "III": "c_k (Part III)"}
OUTCOMES = {"I": "basin", "II": "interpolant", "III": "signs"}


def _rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {rng!r}")
    return rng


def theta_from(delta, beta0, sign=1.0):
    """The neuron (a, w) with a^2 - ||w||^2 = delta and a w = beta0: a = sign sqrt((delta + sqrt(delta^2 +
    4||beta0||^2)) / 2), w = beta0 / a. Rows: ``delta`` (m,), ``beta0`` (m x d), ``sign`` +-1 (m,) or a scalar."""
    delta = np.atleast_1d(checks.finite_array("delta", delta)).astype(float)
    beta0 = np.atleast_2d(checks.finite_array("beta0", beta0)).astype(float)
    sign = np.broadcast_to(checks.finite_array("sign", sign), delta.shape)
    if beta0.shape[0] != delta.shape[0] or delta.ndim != 1:
        raise ValueError(f"delta (m,) and beta0 (m x d) must have the same rows, got {delta.shape}, {beta0.shape}")
    if not np.all(np.abs(sign) == 1):
        raise ValueError("sign must be +1 or -1")
    if np.any(np.linalg.norm(beta0, axis=1) == 0):
        raise ValueError("beta0 must be nonzero (a = 0 would leave w undefined)")
    a0 = sign * np.sqrt((delta + np.hypot(delta, 2 * np.linalg.norm(beta0, axis=1))) / 2)
    return np.concatenate([a0[:, None], beta0 / a0[:, None]], axis=1)


class MarkovProblem:
    """Part I on the chain (p, q): draws the pool's current states, then its transitions (``n_pool`` each) from
    ``rng``. ``grad``, ``quantity`` (the energy), ``hessian`` (of E: diag(2, -2 + sign(w)/w^2)), ``inits``,
    ``predict`` (the basin, Thm 2) and ``agree``."""

    law = "I"

    def __init__(self, p, q, n_pool, rng):
        self.p, self.q = checks.probability("p", p), checks.probability("q", q)
        self.n_data = checks.positive_int("n_pool", n_pool)
        rng = _rng(rng)
        self.x_now = (rng.random(self.n_data) < self.p / (self.p + self.q)).astype(int)
        flip = rng.random(self.n_data) < np.where(self.x_now == 0, self.p, self.q)  # 0 -> 1 w.p. p, 1 -> 0 w.p. q
        self.x_next = np.where(flip, 1 - self.x_now, self.x_now)
        self.c_star = canonical.c_star(self.p, self.q)

    def grad(self, th, idx=None):
        """grad L of the reduced loss at the rows (e, w); for a minibatch ``idx`` the reduced loss of the batch's
        empirical chain, p_B = (#(0 -> 1) + 1/2) / (#0 + 1) and q_B likewise."""
        if idx is None:
            pb, qb = self.p, self.q
        else:
            x0, x1 = self.x_now[idx], self.x_next[idx]
            pb = (((x0 == 0) & (x1 == 1)).sum() + 0.5) / ((x0 == 0).sum() + 1.0)
            qb = (((x0 == 1) & (x1 == 0)).sum() + 0.5) / ((x0 == 1).sum() + 1.0)
        return np.stack(canonical.grad(th[:, 0], th[:, 1], pb, qb), axis=1)

    @staticmethod
    def quantity(th):
        """E(e, w) of Lemma 1 at each row."""
        return energy(th[:, 0], th[:, 1])

    @staticmethod
    def hessian(th):
        """The Hessian of E at each row: diag(2, -2 + sign(w)/w^2)."""
        H = np.zeros((len(th), 2, 2))
        H[:, 0, 0] = 2.0
        H[:, 1, 1] = -2.0 + np.sign(th[:, 1]) / th[:, 1] ** 2
        return H

    def predict(self, th):
        """The basin of each row read off the energy (``energy.predict_limit``)."""
        return predict_limit(th[:, 0], th[:, 1], self.p, self.q).outcome

    def inits(self, n, rng, w_min=0.0, minima_only=False):
        """``n`` rows uniform in [-1.5, 1.5]^2 with |w| >= max(w_min, 1e-3), drawn in rounds of 4n; with
        ``minima_only`` only those whose predicted limit is a minimum (not a saddle or a maximum)."""
        n = checks.positive_int("n", n)
        w_min = max(float(checks.finite_array("w_min", w_min)), 1e-3)
        if w_min >= 1.5:
            raise ValueError(f"w_min must be below 1.5, got {w_min!r}")
        out = np.empty((0, 2))
        while len(out) < n:
            th = _rng(rng).uniform(-1.5, 1.5, size=(4 * n, 2))
            th = th[np.abs(th[:, 1]) >= w_min]
            if minima_only:
                th = th[np.isin(self.predict(th), ["global_min", "local_min"])]
            out = np.concatenate([out, th])
        return out[:n]

    def agree(self, th, predicted):
        """Whether each final row ends in the ``predicted`` basin: global if its c is nearer c* than 0."""
        with np.errstate(over="ignore", invalid="ignore"):  # a diverged run's frozen iterate may be huge
            c = canonical.coefficient(th[:, 0], th[:, 1])
        return np.where(np.abs(c - self.c_star) < np.abs(c), "global_min", "local_min") == np.asarray(predicted)


class NeuronProblem:
    """Part II: one neuron on ``n`` points in dimension ``d``; draws X (n x d), then y (n) from ``rng``. Rows of
    theta are (a, w). ``S`` is the matrix of delta = theta^T S theta."""

    law = "II"

    def __init__(self, d, n, rng):
        self.d, self.n_data = checks.positive_int("d", d), checks.positive_int("n", n)
        rng = _rng(rng)
        self.X, self.y = rng.normal(size=(self.n_data, self.d)), rng.normal(size=self.n_data)
        self.S = np.diag([1.0] + [-1.0] * self.d)

    def grad(self, th, idx=None):
        """grad L at the rows (a, w): with r = X (a w) - y, dL/da = w^T X^T r / n, dL/dw = a X^T r / n."""
        Xb, yb = (self.X, self.y) if idx is None else (self.X[idx], self.y[idx])
        a, w = th[:, :1], th[:, 1:]
        gb = ((a * w) @ Xb.T - yb) @ Xb / len(yb)
        return np.concatenate([(gb * w).sum(1, keepdims=True), a * gb], axis=1)

    @staticmethod
    def quantity(th):
        """delta = a^2 - ||w||^2 at each row."""
        return conserved_delta(th[:, 0], th[:, 1:])

    def on_side(self, th):
        """Whether beta_0 = a w satisfies y_i x_i^T beta_0 > 0 for every i (the theorem's side)."""
        return np.all((self.X @ (th[:, :1] * th[:, 1:]).T).T * self.y > 0, axis=1)

    def inits(self, n, rng):
        """``n`` rows: per row beta_0 = 0.3 N(0, I) redrawn until on the theorem's side, then delta ~ U(-2, 2);
        after all rows one random sign of a per row (:func:`theta_from`)."""
        n = checks.positive_int("n", n)
        rng = _rng(rng)
        deltas, betas = [], []
        while len(betas) < n:
            b0 = 0.3 * rng.normal(size=self.d)
            if np.all((self.X @ b0) * self.y > 0):
                betas.append(b0)
                deltas.append(rng.uniform(-2, 2))
        return theta_from(np.array(deltas), np.array(betas), rng.choice([-1.0, 1.0], n))

    def inits_free(self, n, rng):
        """``n`` rows with beta_0 = 0.3 N(0, I) anywhere (not restricted to the theorem's side), delta ~ U(-2, 0)."""
        n = checks.positive_int("n", n)
        rng = _rng(rng)
        b0 = 0.3 * rng.normal(size=(n, self.d))
        dl = rng.uniform(-2, 0, n)
        return theta_from(dl, b0, rng.choice([-1.0, 1.0], n))

    def predict(self, th):
        """The interpolant argmin Psi_delta of Thm 3.1 for each row (beta_0 = a w, delta of the row)."""
        return np.array([implicit_bias_limit(self.X, self.y, t[0] * t[1:], dl) for t, dl in zip(th, self.quantity(th))])

    @staticmethod
    def agree(th, predicted, beta_tol):
        """Whether each final row's beta = a w is within ``beta_tol`` of the ``predicted`` interpolant."""
        beta_tol = checks.positive_real("beta_tol", beta_tol)
        with np.errstate(over="ignore", invalid="ignore"):  # a diverged run's frozen iterate may be huge
            return np.linalg.norm(th[:, :1] * th[:, 1:] - predicted, axis=1) < beta_tol


class ReluProblem:
    """Part III: a ReLU network of ``width`` neurons on ``n`` points in dimension ``d``; draws X (n x d), then the
    teacher's direction u (d) from ``rng``, y = 1.5 relu(X u). Rows of theta are (W flattened, a)."""

    law = "III"

    def __init__(self, d, width, n, rng):
        self.d, self.width = checks.positive_int("d", d), checks.positive_int("width", width)
        self.n_data = checks.positive_int("n", n)
        rng = _rng(rng)
        self.X = rng.normal(size=(self.n_data, self.d))
        self.y = 1.5 * np.maximum(self.X @ rng.normal(size=self.d), 0.0)
        self.dim = self.width * self.d + self.width
        self.S = np.diag([1.0] * (self.width * self.d) + [-1.0] * self.width)  # sum_k c_k = theta^T S theta

    def unpack(self, th):
        """(W: rows x width x d, a: rows x width)."""
        return th[:, :self.width * self.d].reshape(-1, self.width, self.d), th[:, self.width * self.d:]

    def grad(self, th, idx=None):
        """The package's batched ReLU-network gradient (``topology.shallow_relu.loss_grad``), one network per row."""
        Xb, yb = (self.X, self.y) if idx is None else (self.X[idx], self.y[idx])
        W, a = self.unpack(th)
        _, gW, ga = shallow_relu.loss_grad(W, a, Xb, yb)
        return np.concatenate([gW.reshape(len(th), -1), ga], axis=1)

    def quantity(self, th):
        """The balances c_k = ||w_k||^2 - a_k^2 (rows x width)."""
        W, a = self.unpack(th)
        return (W**2).sum(2) - a**2

    def inits(self, n, rng, pathological=False):
        """``n`` rows with every weight U(-1, 1); with ``pathological`` drawn in rounds of 4n and kept only when at
        least one neuron has c_k < 0."""
        n = checks.positive_int("n", n)
        rng = _rng(rng)
        if not pathological:
            return rng.uniform(-1, 1, size=(n, self.dim))
        out = np.empty((0, self.dim))
        while len(out) < n:
            th = rng.uniform(-1, 1, size=(4 * n, self.dim))
            out = np.concatenate([out, th[(self.quantity(th) < 0).any(axis=1)]])
        return out[:n]

    def agree(self, th, theta0):
        """Whether every pathological neuron of ``theta0`` (c_k < 0) keeps the sign of its output weight in ``th``."""
        path, sign = self.quantity(theta0) < 0, np.sign(self.unpack(theta0)[1])
        return np.all(~path | (np.sign(self.unpack(th)[1]) == sign), axis=1)


# The explorer's problems: the chapter's defaults (book/closing's parameters cell)
P, Q = 0.9, 0.9  # Part I's chain
D2, N2, D3, WIDTH, N3 = 3, 2, 2, 4, 20  # Part II and Part III sizes
N_POOL, BATCHES = 4096, {"I": 64, "II": 1, "III": 5}  # SGD: Part I's pool of transitions; minibatch per law
N_INITS = 8  # initializations per law
T_END = {"I": 50.0, "II": 200.0, "III": 20.0}  # training times (the chapter's t_pred1, t_pred2, t_pred3)
BETA_TOL = 0.05  # Part II: the run ends at the predicted interpolant if |beta - beta_pred| < this


@dataclass(frozen=True)
class Law:
    """One problem with its initializations ``theta0``, its SGD minibatch, training time and predicted ends."""

    problem: object
    theta0: np.ndarray
    batch: int
    t_end: float
    predicted: object

    def agree(self, th):
        """Per initialization: does the final iterate ``th`` end where the theorem predicts?"""
        if self.problem.law == "I":
            return self.problem.agree(th, self.predicted)
        if self.problem.law == "II":
            return self.problem.agree(th, self.predicted, BETA_TOL)
        return self.problem.agree(th, self.theta0)


@functools.lru_cache(maxsize=4)
def laws(seed=0) -> dict:
    """The explorer's three problems at the chapter's defaults, law -> :class:`Law`, ``N_INITS`` initializations
    each, all drawn from one generator ``default_rng([seed, 11])`` in the order Part I (pool, then inits with
    |w| >= 0.2 and a predicted minimum), Part II (data, inits), Part III (data, inits with a pathological neuron).
    Cached (read-only use)."""
    seed = checks.nonnegative_int("seed", seed)
    rng = np.random.default_rng([seed, 11])
    one = MarkovProblem(P, Q, N_POOL, rng)
    th1 = one.inits(N_INITS, rng, w_min=0.2, minima_only=True)
    two = NeuronProblem(D2, N2, rng)
    th2 = two.inits(N_INITS, rng)
    three = ReluProblem(D3, WIDTH, N3, rng)
    th3 = three.inits(N_INITS, rng, pathological=True)
    return {"I": Law(one, th1, BATCHES["I"], T_END["I"], one.predict(th1)),
            "II": Law(two, th2, BATCHES["II"], T_END["II"], two.predict(th2)),
            "III": Law(three, th3, BATCHES["III"], T_END["III"], None)}
