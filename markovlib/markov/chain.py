"""Markov sources: the binary chain of Sec. 2 and K-state chains, with their two loss yardsticks.

Binary kernel (Sec. 2):  P = [[1 - p, p], [q, 1 - q]],  p = P(1 | 0),  q = P(0 | 1),  0 < p, q < 1.
Stationary law pi = (q, p) / (p + q). Entropy rate (the bigram loss, Thm 4) sum_i pi_i h(P_i);
marginal entropy (the unigram loss, Thm 5) H(pi). All entropies in nats.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.sparse.csgraph import connected_components

from ..numerics import checks


def binary_entropy(x):
    """h(x) = -x log x - (1 - x) log(1 - x) in nats, with h(0) = h(1) = 0; broadcasts."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -(np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)
                + np.where(x < 1, (1 - x) * np.log(np.where(x < 1, 1 - x, 1.0)), 0.0))
    return out[()] if out.ndim == 0 else out


def entropy(dist, axis=-1):
    """Shannon entropy -sum_i d_i log d_i (nats) of a probability vector (0 log 0 = 0)."""
    d = np.asarray(dist, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(d > 0, -d * np.log(np.where(d > 0, d, 1.0)), 0.0)
    return terms.sum(axis=axis)


class MarkovChain:
    """A homogeneous first-order Markov chain; sequences start from the stationary law.

    ``MarkovChain(p, q)`` is the binary chain of the paper; ``MarkovChain.from_kernel(P)`` any irreducible
    K-state kernel (a 2 x 2 kernel with off-diagonal entries in (0, 1) gives the binary chain).
    """

    def __init__(self, p, q):
        self.p = checks.probability("p", p)
        self.q = checks.probability("q", q)
        self.kernel = np.array([[1 - self.p, self.p], [self.q, 1 - self.q]])
        self.n_states = 2

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def from_kernel(cls, kernel) -> "MarkovChain":
        P = np.asarray(kernel, dtype=float)
        if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] < 2:
            raise ValueError(f"kernel must be a square K x K matrix with K >= 2, got shape {P.shape}")
        if not np.all(np.isfinite(P)) or np.any(P < 0) or np.any(P > 1):
            raise ValueError("kernel entries must be finite probabilities in [0, 1]")
        if not np.allclose(P.sum(axis=1), 1.0, atol=1e-9, rtol=0):
            raise ValueError(f"kernel rows must sum to 1, got row sums {P.sum(axis=1)}")
        if P.shape[0] == 2 and 0 < P[0, 1] < 1 and 0 < P[1, 0] < 1:
            return cls(P[0, 1], P[1, 0])
        obj = cls.__new__(cls)
        obj.p = obj.q = None
        obj.kernel = P / P.sum(axis=1, keepdims=True)
        obj.n_states = P.shape[0]
        obj._stationary_general()  # raises for reducible kernels
        return obj

    @property
    def is_binary(self) -> bool:
        return self.p is not None

    def __repr__(self):
        if self.is_binary:
            return f"MarkovChain(p={self.p:g}, q={self.q:g})"
        return f"MarkovChain.from_kernel(<{self.n_states} x {self.n_states}>)"

    # -- the two yardsticks -------------------------------------------------------------------------
    def _stationary_general(self) -> np.ndarray:
        K = self.n_states
        A = np.vstack([self.kernel.T - np.eye(K), np.ones((1, K))])
        # the stationary law is unique iff the transition graph has exactly one closed communicating class; decided
        # on the graph of P > 0, exactly (a numerical rank of P^T - I misjudges rounding-level singular values)
        n_classes, label = connected_components(self.kernel > 0, directed=True, connection="strong")
        closed = [c for c in range(n_classes) if not np.any((self.kernel[label == c] > 0) & (label[None, :] != c))]
        if len(closed) != 1:
            raise ValueError("kernel must be irreducible (a unique stationary law is required)")
        rhs = np.zeros(K + 1)
        rhs[-1] = 1.0
        pi, *_ = np.linalg.lstsq(A, rhs, rcond=None)
        return np.clip(pi, 0.0, None) / np.clip(pi, 0.0, None).sum()

    @property
    def stationary(self) -> np.ndarray:
        """pi with pi P = pi; binary closed form pi = (q, p) / (p + q) (Sec. 2)."""
        if self.is_binary:
            s = self.p + self.q
            return np.array([self.q / s, self.p / s])
        return self._stationary_general()

    @property
    def entropy_rate(self) -> float:
        """H(x_{n+1} | x_n) = sum_i pi_i H(P_i); binary: (q h(p) + p h(q)) / (p + q). The bigram loss."""
        return float(np.dot(self.stationary, entropy(self.kernel, axis=1)))

    @property
    def marginal_entropy(self) -> float:
        """H(pi); binary: h(p / (p + q)). The unigram loss."""
        return float(entropy(self.stationary))

    # -- sampling -----------------------------------------------------------------------------------
    def sample(self, batch, length, *, seed=None, backend="numpy", device=None):
        """Draw ``batch`` sequences of ``length`` symbols, the first from pi.

        Returns an array of shape (batch, length): numpy gives a compact integer dtype (``state_dtype``: int8 up
        to 127 states, 8x less memory than int64, which is what makes the binary sampler fast); torch gives an
        int64 tensor on ``device``, ready for embedding lookups.
        The binary sampler is vectorized over positions: a sequence is a string of alternating runs whose
        lengths are independent geometric variables, Geom(p) for runs of 0 and Geom(q) for runs of 1.
        """
        batch = checks.positive_int("batch", batch)
        length = checks.positive_int("length", length)
        checks.choice("backend", backend, {"numpy", "torch"})
        if backend == "numpy":
            if device is not None:
                raise ValueError("device is only meaningful with backend='torch'")
            rng = np.random.default_rng(seed)
            if self.is_binary:
                return _binary_runs_numpy(self.p, self.q, batch, length, rng)
            return _kernel_numpy(self.kernel, self.stationary, batch, length, rng)
        import torch

        device = torch.device(device) if device is not None else torch.device("cpu")
        gen = torch.Generator(device=device)
        if seed is None:
            gen.seed()  # fresh OS entropy; torch's global generator is left untouched
        else:
            gen.manual_seed(int(seed))
        if self.is_binary:
            return _binary_runs_torch(self.p, self.q, batch, length, gen, device)
        return _kernel_torch(self.kernel, self.stationary, batch, length, gen, device)


def _runs_needed(p, q, length):
    """Runs to draw so that their total length covers ``length`` with overwhelming probability."""
    rate = 2 * p * q / (p + q)  # expected number of switches per step (stationary)
    mean = length * rate
    return int(mean + 8 * math.sqrt(mean + 1) + 8) + 1


def _geometric_scales(p, q):
    """Geom(r) = ceil(E / -log(1 - r)) for E ~ Exp(1): P(ceil(E/lam) >= k) = exp(-(k-1) lam) = (1-r)^(k-1)."""
    return -1.0 / math.log1p(-p), -1.0 / math.log1p(-q)


def _binary_runs_numpy(p, q, batch, length, rng):
    n_runs = _runs_needed(p, q, length)
    scale = np.array(_geometric_scales(p, q))
    while True:
        first = (rng.random(batch) < p / (p + q)).astype(np.int8)
        # run k of a row has state first XOR (k mod 2); its length is Geom(p) in state 0, Geom(q) in state 1
        state = first[:, None] ^ (np.arange(n_runs) & 1).astype(np.int8)[None, :]
        runs = rng.standard_exponential((batch, n_runs))
        runs *= scale[state]
        np.ceil(runs, out=runs)
        runs = np.maximum(runs, 1).astype(np.int32)  # int32: lengths < 2**31
        ends = np.cumsum(runs, axis=1)
        if np.all(ends[:, -1] >= length):
            break
        n_runs *= 2  # astronomically rare; redraw everything so the law stays exact
    # keep the part of each run before the sequence end: min(run, max(length - start, 0)), start = end - run
    counts = np.minimum(runs, np.maximum(length - ends + runs, 0))
    return np.repeat(state.ravel(), counts.ravel()).reshape(batch, length)


def _binary_runs_torch(p, q, batch, length, gen, device):
    import torch

    n_runs = _runs_needed(p, q, length)
    scale = torch.tensor(_geometric_scales(p, q), dtype=torch.float64, device=device)
    while True:
        first = (torch.rand(batch, generator=gen, device=device, dtype=torch.float64) < p / (p + q)).long()
        state = (first[:, None] + torch.arange(n_runs, device=device)[None, :]) & 1
        runs = torch.empty(batch, n_runs, dtype=torch.float64, device=device).exponential_(generator=gen)
        runs = torch.ceil(runs * scale[state]).clamp(min=1).long()
        ends = torch.cumsum(runs, dim=1)
        if bool((ends[:, -1] >= length).all()):
            break
        n_runs *= 2
    ends = ends.clamp(max=length)
    counts = torch.diff(ends, dim=1, prepend=torch.zeros(batch, 1, dtype=ends.dtype, device=device))
    return torch.repeat_interleave(state.reshape(-1), counts.reshape(-1)).reshape(batch, length)


def state_dtype(n_states: int):
    """The numpy integer dtype of samples: the smallest signed type that holds the states (int8 up to 127)."""
    return np.min_scalar_type(-n_states)


def _kernel_numpy(P, pi, batch, length, rng):
    cdf = np.cumsum(P, axis=1)
    cdf[:, -1] = 1.0
    out = np.empty((batch, length), dtype=state_dtype(len(pi)))
    u = rng.random((batch, length))
    out[:, 0] = np.searchsorted(np.cumsum(pi), u[:, 0], side="right").clip(max=len(pi) - 1)
    for n in range(1, length):  # loop over positions, never over the batch
        out[:, n] = (u[:, n, None] >= cdf[out[:, n - 1]]).sum(axis=1)
    return out


def _kernel_torch(P, pi, batch, length, gen, device):
    import torch

    cdf = torch.as_tensor(np.cumsum(P, axis=1), dtype=torch.float64, device=device)
    cdf[:, -1] = 1.0
    pi_cdf = torch.as_tensor(np.cumsum(pi), dtype=torch.float64, device=device)
    pi_cdf[-1] = 1.0
    u = torch.rand(batch, length, generator=gen, device=device, dtype=torch.float64)
    out = torch.empty(batch, length, dtype=torch.long, device=device)
    out[:, 0] = (u[:, 0, None] >= pi_cdf[None, :]).sum(dim=1)
    for n in range(1, length):
        out[:, n] = (u[:, n, None] >= cdf[out[:, n - 1]]).sum(dim=1)
    return out
