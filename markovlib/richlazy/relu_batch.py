"""Part II, Sec. 5 of "Get rich quick" (Fig. 1b, Fig. 5b): many two-layer ReLU networks trained as one computation.

The networks of a (seed, tau, delta, ...) grid are stacked: readouts ``a0`` (S, *grid, h) and first layers ``W0``
(S, *grid, h, d), with each seed's inputs ``X`` (S, n, d) and labels ``y`` (S, n) shared by its grid. Without the
seed axis (``X`` (n, d)) the leading axes are the grid alone, and one network (``a0`` (h,), ``W0`` (h, d)) is a
batch of one: the same code. :func:`train_networks` runs full-batch float64 gradient descent on the authors' loss
L = (1/n) sum_i (f(x_i) - y_i)^2 with the arithmetic of :func:`markovlib.richlazy.relu_networks.gradient_descent`
(the same products in the same order; only the BLAS blocking of the two matrix products differs, so the runs
agree to rounding) and records at every checkpoint:

- ``train_loss``, and ``test_loss`` on (``X_test``, ``y_test``) when given;
- ``kernel_distance`` S(0, t) = 1 - <K_0, K_t>_F / (||K_0||_F ||K_t||_F) of the NTK on the training inputs
  (:func:`markovlib.richlazy.relu_networks.ntk`; ``kernel=False`` skips it);
- ``hamming``: the fraction of (input, neuron) entries of the activation pattern [w_k^T x_i > 0] that differ from
  initialization (Fig. 5b; the authors' code reports h times this);
- ``param_distance``: sqrt(||a - a_0||^2 + ||W - W_0||_F^2) (Fig. 5b).

Why it is fast: the first layers of a block of networks of one seed form one matrix W^T (d, block * h), so a step
is two matrix products for the whole block (X W^T and X^T B) and a few elementwise passes over (n, block * h)
arrays, instead of a dozen small numpy calls per network. Blocks are sized to stay in a core's L2 cache and are
trained one after the other, every step of a block before the next; the result does not depend on the block size
beyond rounding (tested).
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks

METRICS = ("train_loss", "test_loss", "kernel_distance", "hamming", "param_distance")
_ARRAY = 2**17      # doubles in one (n, block * h) array of a block (1 MiB: a core's L2 holds a block's arrays)
_KERNELS = 2**22    # doubles in one stack of (n, n) kernels of a block (32 MiB)
_TEST = 2**21       # doubles in one chunk of test pre-activations


# ------------------------------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------------------------------
def _inputs(X, y, a0, W0, lr, checkpoints, X_test, y_test, gamma, eta_a, eta_w):
    """Check and bring everything to (S, G, ...) form. Returns the arrays, the leading shape and the steps."""
    X = checks.finite_array("X", X, ndim=(2, 3))
    y = checks.finite_array("y", y, ndim=(1, 2))
    a0 = checks.finite_array("a0", a0)
    W0 = checks.finite_array("W0", W0)
    seeded = X.ndim == 3
    if y.ndim != X.ndim - 1 or y.shape != X.shape[:-1]:
        raise ValueError(f"y must have shape {X.shape[:-1]} (X's leading axes), got {y.shape}")
    if a0.ndim < 1 + seeded or W0.shape != a0.shape + (X.shape[-1],):
        raise ValueError(f"a0 must have shape ({'S, ' if seeded else ''}..., h) and W0 the same plus d = "
                         f"{X.shape[-1]}, got {a0.shape} and {W0.shape}")
    if seeded and a0.shape[0] != X.shape[0]:
        raise ValueError(f"a0's first axis must be the seed axis of X ({X.shape[0]}), got {a0.shape}")
    lead = a0.shape[:-1]
    lr = checks.finite_array("lr", lr)
    if np.any(lr <= 0):
        raise ValueError(f"lr must be > 0, got {lr!r}")
    try:
        lr = np.broadcast_to(lr, lead)
    except ValueError:
        raise ValueError(f"lr (shape {lr.shape}) must broadcast to the networks' axes {lead}") from None
    gamma = float(checks.finite_array("gamma", gamma, ndim=0))
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be a real number in [0, 1] (0: ReLU, 1: linear), got {gamma!r}")
    eta_a = checks.positive_real("eta_a", eta_a)
    eta_w = checks.positive_real("eta_w", eta_w)
    steps = [checks.nonnegative_int("checkpoints", s) for s in np.atleast_1d(checkpoints).tolist()]
    if not steps or any(s1 >= s2 for s1, s2 in zip(steps, steps[1:])):
        raise ValueError(f"checkpoints must be a non-empty increasing list of integers >= 0, got {checkpoints!r}")
    if (X_test is None) != (y_test is None):
        raise ValueError("X_test and y_test go together: give both or neither")
    if X_test is not None:
        X_test = checks.finite_array("X_test", X_test, ndim=X.ndim)
        y_test = checks.finite_array("y_test", y_test, ndim=X.ndim - 1)
        if X_test.shape[-1] != X.shape[-1] or X_test.shape[:-2] != X.shape[:-2] or y_test.shape != X_test.shape[:-1]:
            raise ValueError(f"X_test must have shape ({'S, ' if seeded else ''}n_test, d) like X {X.shape} and "
                             f"y_test its leading axes, got {X_test.shape} and {y_test.shape}")
    if not seeded:  # one seed: add the seed axis
        X, y, a0, W0, lr = X[None], y[None], a0[None], W0[None], lr[None]
        if X_test is not None:
            X_test, y_test = X_test[None], y_test[None]
    S, h, d = X.shape[0], a0.shape[-1], X.shape[-1]
    G = int(np.prod(a0.shape[1:-1], dtype=int))
    flat = (a0.reshape(S, G, h), W0.reshape(S, G, h, d), np.ascontiguousarray(lr).reshape(S, G))
    return (X, y, *flat, X_test, y_test, gamma, eta_a, eta_w), lead, steps


def _blocks(S, G, n, h, block, kernel):
    """Rectangles (seeds, grid points) of at most ``block`` networks (default: sized for the L2 cache); with
    ``kernel`` at most as many as keep their initial kernels within _KERNELS doubles."""
    block = max(1, _ARRAY // (n * h)) if block is None else checks.positive_int("block", block)
    if kernel:
        block = min(block, max(1, _KERNELS // (n * n)))
    gb = min(G, block)
    sb = max(1, min(S, block // gb))
    return [(slice(s0, min(S, s0 + sb)), slice(g0, min(G, g0 + gb)))
            for s0 in range(0, S, sb) for g0 in range(0, G, gb)]


# ------------------------------------------------------------------------------------------------------------
# one block of networks
# ------------------------------------------------------------------------------------------------------------
class _Block:
    """The networks of seeds ``X`` (Sb, n, d) times grid points (Gb): readouts ``a`` (Sb, Gb, h) and first layers
    stored transposed, ``Wt`` (Sb, d, Gb * h), so that X @ Wt is every pre-activation of the block at once."""

    def __init__(self, X, y, a0, W0, lr, gamma, eta_a, eta_w):
        self.Sb, self.Gb, self.h = a0.shape
        self.n, self.d = X.shape[1:]
        self.X, self.XT, self.y, self.g = X, np.ascontiguousarray(np.swapaxes(X, 1, 2)), y, gamma
        self.eta_a, self.eta_w = eta_a, eta_w
        self.a0 = a0
        self.Wt0 = np.ascontiguousarray(W0.transpose(0, 3, 1, 2)).reshape(self.Sb, self.d, self.Gb * self.h)
        self.a, self.Wt = a0.copy(), self.Wt0.copy()
        self.la = (lr * eta_a)[..., None]                # (Sb, Gb, 1), as relu_networks: lr * eta_a
        self.lw = (lr * eta_w)[:, None, :, None]         # (Sb, 1, Gb, 1) against Wt as (Sb, d, Gb, h)
        self.Z = np.empty((self.Sb, self.n, self.Gb * self.h))   # pre-activations, then activations
        self.P = np.empty(self.Z.shape, dtype=bool if gamma == 0 else float)   # slopes sigma'(z)
        self.B = np.empty_like(self.Z)
        self.gWt = np.empty_like(self.Wt)
        self.XX = None                                    # X X^T, for the kernels

    def _4(self, M):
        """(Sb, rows, Gb * h) -> (Sb, rows, Gb, h) view."""
        return M.reshape(M.shape[0], M.shape[1], self.Gb, self.h)

    def _activate(self, Z, P):
        """Z <- sigma(Z) in place, P <- sigma'(Z) (1 above 0, gamma below)."""
        if self.g == 0:
            np.greater(Z, 0.0, out=P)
            np.maximum(Z, 0.0, out=Z)
        else:
            np.copyto(P, np.where(Z > 0, 1.0, self.g))
            np.maximum(Z, self.g * Z, out=Z)

    def _outputs(self, Z):
        """f (Sb, Gb, rows) from the activations Z (Sb, rows, Gb * h)."""
        return np.matmul(self._4(Z).transpose(0, 2, 1, 3), self.a[..., None])[..., 0]

    def forward(self):
        """Residuals r = f - y (Sb, Gb, n); leaves the activations in Z and the slopes in P."""
        np.matmul(self.X, self.Wt, out=self.Z)
        self._activate(self.Z, self.P)
        return self._outputs(self.Z) - self.y[:, None, :]

    def step(self):
        """One GD step, as relu_networks._gradients and gradient_descent compute it."""
        r = self.forward()
        c = 2.0 / self.n
        ga = c * np.matmul(self._4(self.Z).transpose(0, 2, 3, 1), r[..., None])[..., 0]
        B4 = self._4(self.B)
        np.multiply(np.swapaxes(r, 1, 2)[..., None], self._4(self.P), out=B4)   # r_i sigma'(z_ik)
        B4 *= self.a[:, None]                                                  # ... times a_k
        np.matmul(self.XT, self.B, out=self.gWt)
        self.gWt *= c
        self.a -= self.la * ga
        Wt4 = self.Wt.reshape(self.Sb, self.d, self.Gb, self.h)
        Wt4 -= self.lw * self.gWt.reshape(Wt4.shape)

    def pattern(self):
        """The activation pattern [z > 0] after :meth:`forward` (bool, (Sb, n, Gb * h)); sigma(z) > 0 iff z > 0."""
        return self.P.copy() if self.g == 0 else self.Z > 0

    def normalized_kernels(self):
        """(K / ||K||_F, ||K||_F) for every network of the block after :meth:`forward`, shapes (Sb, Gb, n, n) and
        (Sb, Gb), with K the NTK on the training inputs as relu_networks.ntk computes it: eta_a S S^T + eta_w
        (X X^T) * (D D^T), D = sigma'(z) a. A zero kernel stays zero."""
        S4 = self._4(self.Z).transpose(0, 2, 1, 3)
        D4 = self._4(self.P).transpose(0, 2, 1, 3) * self.a[:, :, None, :]
        if self.XX is None:
            self.XX = np.matmul(self.X, self.XT)
        XX = self.XX
        K = np.empty((self.Sb, self.Gb, self.n, self.n))
        for s in range(self.Sb):
            for g in range(self.Gb):
                S_, D = S4[s, g], D4[s, g]
                K[s, g] = self.eta_a * S_ @ S_.T + self.eta_w * XX[s] * (D @ D.T)
        norm = np.linalg.norm(K, axis=(-2, -1))
        return K / np.where(norm > 0, norm, 1.0)[..., None, None], norm

    def test_loss(self, Xt, yt):
        """(1/n_test) sum (f(x) - y)^2 on the test inputs (Sb, n_test, d), in chunks of rows."""
        nt = Xt.shape[1]
        rows = max(1, _TEST // (self.Sb * self.Gb * self.h))
        err = np.empty((self.Sb, self.Gb, nt))
        for i0 in range(0, nt, rows):
            Z = np.matmul(Xt[:, i0:i0 + rows], self.Wt)
            self._activate(Z, np.empty(Z.shape, dtype=self.P.dtype))
            err[..., i0:i0 + rows] = (self._outputs(Z) - yt[:, None, i0:i0 + rows]) ** 2
        return np.mean(err, axis=-1)


# ------------------------------------------------------------------------------------------------------------
# training
# ------------------------------------------------------------------------------------------------------------
def train_networks(X, y, a0, W0, lr, checkpoints, *, X_test=None, y_test=None, gamma=0.0, eta_a=1.0, eta_w=1.0,
                   kernel=True, keep_weights=False, block=None, progress=None) -> dict:
    """Train every network of the batch by full-batch float64 GD: a <- a - lr eta_a dL/da, W <- W - lr eta_w dL/dW.

    ``X`` (S, n, d) or (n, d), ``y`` its leading axes plus n; ``a0`` (S, *grid, h) or (*grid, h), ``W0`` the same
    plus d (module docstring); ``lr`` broadcasts to the networks' axes; ``checkpoints``: increasing step counts
    >= 0 at which the metrics are recorded. ``block``: most networks trained side by side (default: sized for the
    cache; any value gives the same runs to rounding). ``progress(done, total)`` is called after each block.

    Returns a dict: ``steps`` (T,), each metric of :data:`METRICS` it computed, shape (T, *lead) with lead the
    networks' axes (``test_loss`` only with X_test, ``kernel_distance`` only with kernel=True); the final ``a``,
    ``W``; ``finite`` (*lead), False for a network whose iterates overflowed (its later metrics are NaN); with
    keep_weights, the snapshots ``a_t`` (T, *lead, h) and ``W_t`` (T, *lead, h, d)."""
    (X, y, a0, W0, lr, Xt, yt, g, eta_a, eta_w), lead, steps = _inputs(X, y, a0, W0, lr, checkpoints, X_test,
                                                                        y_test, gamma, eta_a, eta_w)
    S, G, h = a0.shape
    n, d = X.shape[1:]
    T = len(steps)
    names = [m for m in METRICS if (m != "test_loss" or Xt is not None) and (m != "kernel_distance" or kernel)]
    out = {m: np.full((T, S, G), np.nan) for m in names}
    fin = np.ones((S, G), dtype=bool)
    a_end, W_end = np.empty_like(a0), np.empty_like(W0)
    if keep_weights:
        a_t, W_t = np.empty((T,) + a0.shape), np.empty((T,) + W0.shape)
    blocks = _blocks(S, G, n, h, block, kernel)
    for b, (ss, gs) in enumerate(blocks):
        blk = _Block(X[ss], y[ss], a0[ss, gs], W0[ss, gs], lr[ss, gs], g, eta_a, eta_w)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            blk.forward()   # the initial pattern and kernels
            C0 = blk.pattern()
            K0, N0 = blk.normalized_kernels() if kernel else (None, None)
            done = 0
            for t, target in enumerate(steps):
                for _ in range(target - done):
                    blk.step()
                done = target
                Wt4 = blk.Wt.reshape(blk.Sb, d, blk.Gb, h)
                ok = np.all(np.isfinite(blk.a), axis=-1) & np.all(np.isfinite(Wt4), axis=(1, 3))
                r = blk.forward()
                vals = {"train_loss": np.mean(r**2, axis=-1),
                        "hamming": np.mean(blk._4(blk.pattern()) != blk._4(C0), axis=(1, 3)),
                        "param_distance": np.sqrt(np.sum((blk.a - blk.a0) ** 2, axis=-1) + np.sum(
                            (Wt4 - blk.Wt0.reshape(Wt4.shape)) ** 2, axis=(1, 3)))}
                if Xt is not None:
                    vals["test_loss"] = blk.test_loss(Xt[ss], yt[ss])
                if kernel:
                    Kt, Nt = blk.normalized_kernels()
                    inner = np.sum(K0 * Kt, axis=(-2, -1))
                    # as minimal_model.kernel_distance: two zero kernels are at distance 0, one zero kernel at 1
                    vals["kernel_distance"] = np.where((N0 == 0) & (Nt == 0), 0.0, 1.0 - inner)
                for m, v in vals.items():
                    out[m][t, ss, gs] = np.where(ok, v, np.nan)
                fin[ss, gs] &= ok
                if keep_weights:
                    a_t[t, ss, gs] = blk.a
                    W_t[t, ss, gs] = Wt4.transpose(0, 2, 3, 1)
        a_end[ss, gs] = blk.a
        W_end[ss, gs] = blk.Wt.reshape(blk.Sb, d, blk.Gb, h).transpose(0, 2, 3, 1)
        if progress is not None:
            progress(b + 1, len(blocks))
    res = {"steps": np.array(steps), **{m: v.reshape((T,) + lead) for m, v in out.items()},
           "a": a_end.reshape(lead + (h,)), "W": W_end.reshape(lead + (h, d)), "finite": fin.reshape(lead)}
    if keep_weights:
        res.update(a_t=a_t.reshape((T,) + lead + (h,)), W_t=W_t.reshape((T,) + lead + (h, d)))
    return res
