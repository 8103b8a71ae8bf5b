"""Part II, Sec. 5 of "Get rich quick" (Fig. 1b, Fig. 5b): many two-layer ReLU networks trained as one computation.

The networks of a (seed, tau, delta, ...) grid are stacked: readouts ``a0`` (S, *grid, h) and first layers ``W0``
(S, *grid, h, d), with each seed's inputs ``X`` (S, n, d) and labels ``y`` (S, n) shared by its grid. Without the
seed axis (``X`` (n, d)) the leading axes are the grid alone, and one network (``a0`` (h,), ``W0`` (h, d)) is a
batch of one: the same code. :func:`train_networks` runs full-batch gradient descent on the authors' loss
L = (1/n) sum_i (f(x_i) - y_i)^2 with the gradients of :func:`markovlib.richlazy.relu_networks.gradient_descent`
(the same terms; the BLAS blocking of the two matrix products and where the readout's factor enters differ, so
float64 runs agree to rounding), in float64 by default, in float32 on request (``dtype``), with numpy or with torch
on the CPU or CUDA (``backend``, ``device``: :mod:`markovlib.richlazy.relu_torch`), and records at every
checkpoint, in float64 from the weights whatever the arithmetic of the steps:

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

from functools import partial

import numpy as np

from ..numerics import checks

METRICS = ("train_loss", "test_loss", "kernel_distance", "hamming", "param_distance")
DTYPES = ("float64", "float32")
BACKENDS = ("numpy", "torch")
_ARRAY = 2**17      # doubles in one (n, block * h) array of a block (1 MiB: a core's L2 holds a block's arrays)
_KERNELS = 2**22    # doubles in one stack of (n, n) kernels of a block (32 MiB)
_TEST = 2**21       # doubles in one chunk of test pre-activations


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


def _blocks(S, G, n, h, block, kernel, array=_ARRAY):
    """Rectangles (seeds, grid points) of at most ``block`` networks (default: ``array`` elements in one (n, block *
    h) array, sized for the L2 cache); with ``kernel`` at most as many as keep their initial kernels within
    _KERNELS doubles."""
    block = max(1, array // (n * h)) if block is None else checks.positive_int("block", block)
    if kernel:
        block = min(block, max(1, _KERNELS // (n * n)))
    gb = min(G, block)
    sb = max(1, min(S, block // gb))
    return [(slice(s0, min(S, s0 + sb)), slice(g0, min(G, g0 + gb)))
            for s0 in range(0, S, sb) for g0 in range(0, G, gb)]


class _Block:
    """The networks of seeds ``X`` (Sb, n, d) times grid points (Gb): readouts ``a`` (Sb, Gb, h) and first layers
    stored transposed, ``Wt`` (Sb, d, Gb * h), so that X @ Wt is every pre-activation of the block at once."""

    def __init__(self, X, y, a0, W0, lr, gamma, eta_a, eta_w, dtype="float64"):
        dt = np.dtype(dtype)
        self.Sb, self.Gb, self.h = a0.shape
        self.n, self.d = X.shape[1:]
        self.X, self.y, self.g = X.astype(dt, copy=False), y.astype(dt, copy=False), gamma
        self.XT = np.ascontiguousarray(np.swapaxes(self.X, 1, 2))
        self.eta_a, self.eta_w = eta_a, eta_w
        self.a0 = a0
        self.Wt0 = np.ascontiguousarray(W0.transpose(0, 3, 1, 2)).reshape(self.Sb, self.d, self.Gb * self.h)
        self.a, self.Wt = a0.astype(dt), self.Wt0.astype(dt)
        self.la = (lr * eta_a)[..., None].astype(dt)              # (Sb, Gb, 1), as relu_networks: lr * eta_a
        self.lw = (lr * eta_w)[:, None, :, None].astype(dt)       # (Sb, 1, Gb, 1) against Wt as (Sb, d, Gb, h)
        self.Z = np.empty((self.Sb, self.n, self.Gb * self.h), dtype=dt)   # pre-activations, then activations
        self.P = np.empty(self.Z.shape, dtype=bool if gamma == 0 else dt)   # slopes sigma'(z)
        self.B = np.empty_like(self.Z)
        self.gWt = np.empty_like(self.Wt)
        self.XX = None                                    # X X^T, for the kernels

    def _4(self, M):
        """(Sb, rows, Gb * h) -> (Sb, rows, Gb, h) view."""
        return M.reshape(M.shape[0], M.shape[1], self.Gb, self.h)

    def _activate(self, Z, P=None):
        """Z <- sigma(Z) in place; with ``P``, P <- sigma'(Z) (1 above 0, gamma below)."""
        if P is not None:
            if self.g == 0:
                np.greater(Z, 0.0, out=P)
            else:
                np.copyto(P, np.where(Z > 0, 1.0, self.g))
        if self.g == 0:
            np.maximum(Z, 0.0, out=Z)
        else:
            np.maximum(Z, self.g * Z, out=Z)

    def _outputs(self, Z):
        """f (Sb, Gb, rows) from the activations Z (Sb, rows, Gb * h)."""
        return np.matmul(self._4(Z).transpose(0, 2, 1, 3), self.a[..., None])[..., 0]

    def forward(self, slopes=True):
        """Residuals r = f - y (Sb, Gb, n); leaves the activations in Z and (with ``slopes``) the slopes in P."""
        np.matmul(self.X, self.Wt, out=self.Z)
        self._activate(self.Z, self.P if slopes else None)
        return self._outputs(self.Z) - self.y[:, None, :]

    def step(self):
        """One GD step with the gradients of relu_networks._gradients, dL/da = (2/n) sigma(Z)^T r and dL/dW^T =
        (2/n) (X^T (r sigma'(Z))) a: the factor a_k of neuron k's column scales the (d, h) product rather than the
        (n, h) array it is summed from (one pass fewer over the largest arrays; the same terms, other rounding)."""
        r = self.forward(slopes=False)
        c = 2.0 / self.n
        ga = c * np.matmul(self._4(self.Z).transpose(0, 2, 3, 1), r[..., None])[..., 0]
        if self.g == 0:
            np.sign(self.Z, out=self.B)     # sigma'(z) from sigma(z) = max(z, 0) >= 0: 1 above 0, 0 below
        else:
            np.copyto(self.B, np.where(self.Z > 0, 1.0, self.g))
        self._4(self.B)[...] *= np.swapaxes(r, 1, 2)[..., None]            # r_i sigma'(z_ik)
        np.matmul(self.XT, self.B, out=self.gWt)
        gW4 = self.gWt.reshape(self.Sb, self.d, self.Gb, self.h)
        gW4 *= c * self.a[:, None]                                          # ... times a_k, times 2/n
        self.a -= self.la * ga
        Wt4 = self.Wt.reshape(gW4.shape)
        Wt4 -= self.lw * gW4

    def run(self, steps: int):
        """``steps`` GD steps."""
        for _ in range(steps):
            self.step()

    def weights(self):
        """The current ``a`` (Sb, Gb, h) and ``Wt`` (Sb, d, Gb * h) as float64 arrays (copies)."""
        return self.a.astype(np.float64), self.Wt.astype(np.float64)

    def set_weights(self, a, Wt):
        """Put the weights ``a`` (Sb, Gb, h) and ``Wt`` (Sb, d, Gb * h) in place of the current ones."""
        np.copyto(self.a, a)
        np.copyto(self.Wt, Wt)

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


class _Metrics:
    """The metrics of a trained block's networks, computed in float64 numpy from their weights whatever the backend
    and dtype of the training: sub-block by sub-block (:func:`_blocks`' default size), each a float64 :class:`_Block`
    that holds the initial weights and is given the current ones. The initial activation patterns are kept; the
    initial kernels too while the block's fit in _KERNELS doubles (always for the numpy backend's blocks), else
    they are recomputed at each checkpoint."""

    def __init__(self, X, y, a0, W0, lr, Xt, yt, gamma, eta_a, eta_w, names):
        self.data, self.par, self.Xt, self.yt, self.names = (X, y, a0, W0, lr), (gamma, eta_a, eta_w), Xt, yt, names
        (Sb, Gb, h), n = a0.shape, X.shape[1]
        self.kernel = "kernel_distance" in names
        self.subs = _blocks(Sb, Gb, n, h, None, self.kernel)
        self.keep = len(self.subs) == 1 or Sb * Gb * n * n <= _KERNELS
        self.C0, self.K0 = {}, {}

    def __call__(self, a, Wt) -> dict:
        """The metrics, (Sb, Gb) arrays, of the networks with weights ``a`` (Sb, Gb, h), ``Wt`` (Sb, d, Gb * h)."""
        X, y, a0, W0, lr = self.data
        Sb, Gb, h = a.shape
        Wt4 = Wt.reshape(Sb, -1, Gb, h)
        out = {m: np.empty((Sb, Gb)) for m in self.names}
        for i, (s, g) in enumerate(self.subs):
            blk = _Block(X[s], y[s], a0[s, g], W0[s, g], lr[s, g], *self.par)
            if i not in self.C0 or (self.kernel and i not in self.K0):
                blk.forward()   # the initial pattern and kernels
                self.C0[i] = blk.pattern()
                K0 = blk.normalized_kernels() if self.kernel else None
                if self.keep:
                    self.K0[i] = K0
            else:
                K0 = self.K0.get(i)
            blk.set_weights(a[s, g], Wt4[s, :, g].reshape(blk.Wt.shape))
            r = blk.forward()
            W4, W04 = blk._4(blk.Wt), blk._4(blk.Wt0)
            vals = {"train_loss": np.mean(r**2, axis=-1),
                    "hamming": np.mean(blk._4(blk.pattern()) != blk._4(self.C0[i]), axis=(1, 3)),
                    "param_distance": np.sqrt(np.sum((blk.a - blk.a0) ** 2, axis=-1) +
                                              np.sum((W4 - W04) ** 2, axis=(1, 3)))}
            if self.Xt is not None:
                vals["test_loss"] = blk.test_loss(self.Xt[s], self.yt[s])
            if self.kernel:
                (K0, N0), (Kt, Nt) = K0, blk.normalized_kernels()
                inner = np.sum(K0 * Kt, axis=(-2, -1))
                # as minimal_model.kernel_distance: two zero kernels are at distance 0, one zero kernel at 1
                vals["kernel_distance"] = np.where((N0 == 0) & (Nt == 0), 0.0, 1.0 - inner)
            for m, v in vals.items():
                out[m][s, g] = v
        return out


def _backend(dtype, backend, device):
    """Check the arithmetic arguments; returns (dtype name, backend, device: "cpu" or "cuda")."""
    dtype = np.dtype(checks.choice("dtype", dtype, DTYPES)).name
    backend = checks.choice("backend", backend, BACKENDS)
    if device is not None and device not in ("cpu", "cuda"):
        raise ValueError(f"device must be None, 'cpu' or 'cuda', got {device!r}")
    if backend == "numpy":
        if device == "cuda":
            raise ValueError("device='cuda' needs backend='torch' (the numpy backend runs on the CPU)")
        return dtype, backend, "cpu"
    from .relu_torch import resolve_device

    return dtype, backend, resolve_device(device)


def _plan(S, G, n, h, block, kernel, dtype, backend, device):
    """The blocks (seed slice, grid slice) that train_networks steps one after the other, and the class that steps
    one (called with X, y, a0, W0, lr, gamma, eta_a, eta_w of the block)."""
    if backend == "numpy":   # cache-sized: _ARRAY doubles' worth of bytes
        return _blocks(S, G, n, h, block, kernel, _ARRAY * 8 // np.dtype(dtype).itemsize), partial(_Block, dtype=dtype)
    from .relu_torch import ARRAY, TorchBlock

    return _blocks(S, G, n, h, block, False, ARRAY[device]), partial(TorchBlock, dtype=dtype, device=device)


def train_networks(X, y, a0, W0, lr, checkpoints, *, X_test=None, y_test=None, gamma=0.0, eta_a=1.0, eta_w=1.0,
                   kernel=True, keep_weights=False, block=None, progress=None, dtype="float64", backend="numpy",
                   device=None) -> dict:
    """Train every network of the batch by full-batch GD: a <- a - lr eta_a dL/da, W <- W - lr eta_w dL/dW.

    ``X`` (S, n, d) or (n, d), ``y`` its leading axes plus n; ``a0`` (S, *grid, h) or (*grid, h), ``W0`` the same
    plus d (module docstring); ``lr`` broadcasts to the networks' axes; ``checkpoints``: increasing step counts
    >= 0 at which the metrics are recorded. ``block``: most networks trained side by side (default: sized for the
    cache, or for the device with torch on CUDA; any value gives the same runs to rounding). ``progress(done,
    total)`` is called after each block. ``dtype``: the arithmetic of the steps, "float64" (default) or "float32";
    ``backend``: "numpy" (default) or "torch", on ``device`` None (CUDA when torch sees it, else the CPU), "cpu"
    or "cuda". Whatever the three, the metrics are computed in float64 numpy from the weights at each checkpoint
    and every array returned is float64.

    Returns a dict: ``steps`` (T,), each metric of :data:`METRICS` it computed, shape (T, *lead) with lead the
    networks' axes (``test_loss`` only with X_test, ``kernel_distance`` only with kernel=True); the final ``a``,
    ``W``; ``finite`` (*lead), False for a network whose iterates overflowed (its later metrics are NaN); with
    keep_weights, the snapshots ``a_t`` (T, *lead, h) and ``W_t`` (T, *lead, h, d)."""
    (X, y, a0, W0, lr, Xt, yt, g, eta_a, eta_w), lead, steps = _inputs(X, y, a0, W0, lr, checkpoints, X_test,
                                                                        y_test, gamma, eta_a, eta_w)
    dtype, backend, device = _backend(dtype, backend, device)
    S, G, h = a0.shape
    n, d = X.shape[1:]
    T = len(steps)
    names = [m for m in METRICS if (m != "test_loss" or Xt is not None) and (m != "kernel_distance" or kernel)]
    out = {m: np.full((T, S, G), np.nan) for m in names}
    fin = np.ones((S, G), dtype=bool)
    a_end, W_end = np.empty_like(a0), np.empty_like(W0)
    if keep_weights:
        a_t, W_t = np.empty((T,) + a0.shape), np.empty((T,) + W0.shape)
    blocks, stepper = _plan(S, G, n, h, block, kernel, dtype, backend, device)
    for b, (ss, gs) in enumerate(blocks):
        part = (X[ss], y[ss], a0[ss, gs], W0[ss, gs], lr[ss, gs])
        run = stepper(*part, g, eta_a, eta_w)
        metrics = _Metrics(*part, None if Xt is None else Xt[ss], None if yt is None else yt[ss], g, eta_a, eta_w,
                           names)
        done = 0
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for t, target in enumerate(steps):
                run.run(target - done)
                done = target
                a, Wt = run.weights()
                W = Wt.reshape(run.Sb, d, run.Gb, h).transpose(0, 2, 3, 1)
                ok = np.all(np.isfinite(a), axis=-1) & np.all(np.isfinite(W), axis=(2, 3))
                for m, v in metrics(a, Wt).items():
                    out[m][t, ss, gs] = np.where(ok, v, np.nan)
                fin[ss, gs] &= ok
                if keep_weights:
                    a_t[t, ss, gs], W_t[t, ss, gs] = a, W
        a_end[ss, gs], W_end[ss, gs] = a, W
        if progress is not None:
            progress(b + 1, len(blocks))
    res = {"steps": np.array(steps), **{m: v.reshape((T,) + lead) for m, v in out.items()},
           "a": a_end.reshape(lead + (h,)), "W": W_end.reshape(lead + (h, d)), "finite": fin.reshape(lead)}
    if keep_weights:
        res.update(a_t=a_t.reshape((T,) + lead + (h,)), W_t=W_t.reshape((T,) + lead + (h, d)))
    return res
