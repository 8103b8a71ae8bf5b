"""The shallow ReLU network of Part III (Nurisso et al., "Topological obstruction to the training of shallow ReLU
neural networks", NeurIPS 2024, Sec. 3): f(x) = W2 relu(W1 x), no biases, its MSE and BCE-with-logits losses with
their gradients, and plain full-batch gradient descent.

Shapes. X is (n, d), shared by every network. W1 is (*batch, l, d) (row k = w_k). W2 is either (*batch, e, l)
(column k = a_k), or (*batch, l): the one-output form e = 1, written as a vector a (the paper's Sec. 6 and the
breast-cancer study). ``batch`` is any number of leading axes of independent networks (many initializations
trained at once); each network sees the same data. Predictions are (*batch, n, e), or (*batch, n) in the vector
form, and the targets y broadcast against them: (n, e) or (n,).

Losses (one value per network):

* ``"mse"``: L = (1 / 2n) sum_i ||f(x_i) - y_i||^2 (the Sec. 6 toy; 0.5 mean r^2 when e = 1);
* ``"bce"``: L = (1 / (n e)) sum_i,j [log(1 + exp(f_ij)) - y_ij f_ij], the binary cross-entropy of the logits f
  with labels y in [0, 1], written as a sum of nonnegative terms (see _value_and_residual) so that huge logits
  give finite losses without cancellation; its gradient
  is (sigmoid(f) - y) / (n e), with the sigmoid from scipy's overflow-free ``expit``.

Gradients (chain rule through the ReLU, relu'(0) taken as 0, as torch does): with r = dL/df (n, e) and the
pre-activations P = X W1^T, grad_W2 = r^T relu(P) and grad_W1 = ((r W2) * [P > 0])^T X. The balances
c_k = ||w_k||^2 - ||a_k||^2 are conserved by the flow because w_k . grad_{w_k} L = a_k . grad_{a_k} L
(Eq. (10)-(12)); one GD step of size h changes c_k by h^2 (||grad_{w_k}||^2 - ||grad_{a_k}||^2).

Public functions validate their arguments once (ValueError naming the argument); :func:`gradient_descent` then
runs its loop without re-validating.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ..numerics import checks

__all__ = ["forward", "loss", "loss_grad", "gradient_descent", "GDResult"]

_LOSSES = ("mse", "bce")


# ------------------------------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------------------------------
def _check(W1, W2, X, y=None, kind=None):
    """Validated float arrays (W1, W2, X, y) and the flag ``vector`` (W2 given as the e = 1 vector form)."""
    W1, W2, X = checks.finite_array("W1", W1), checks.finite_array("W2", W2), checks.finite_array("X", X)
    if W1.ndim < 2 or W1.shape[-1] < 1 or W1.shape[-2] < 1:
        raise ValueError(f"W1 must have shape (*batch, l, d) with l, d >= 1, got {W1.shape}")
    batch, (l, d) = W1.shape[:-2], W1.shape[-2:]
    if X.ndim != 2 or X.shape[1] != d or X.shape[0] < 1:
        raise ValueError(f"X must have shape (n, d) = (n, {d}) with n >= 1 (d from W1 of shape {W1.shape}), "
                         f"got {X.shape}")
    vector = W2.ndim == W1.ndim - 1
    if vector:
        if W2.shape != batch + (l,):
            raise ValueError(f"W2 must have shape {batch + (l,)} (vector form) or {batch + ('e', l)}, got {W2.shape}")
    elif W2.ndim != W1.ndim or W2.shape[:-2] != batch or W2.shape[-1] != l or W2.shape[-2] < 1:
        raise ValueError(f"W2 must have shape {batch + ('e', l)} with e >= 1, or {batch + (l,)} (e = 1), "
                         f"got {W2.shape}")
    if kind is not None and kind not in _LOSSES:
        raise ValueError(f"loss must be one of {list(_LOSSES)}, got {kind!r}")
    if y is not None:
        y = checks.finite_array("y", y)
        want = (X.shape[0],) if vector else (X.shape[0], W2.shape[-2])
        if y.shape != want:
            raise ValueError(f"y must have shape {want} (one target per sample{'' if vector else ' and output'}), "
                             f"got {y.shape}")
        if kind == "bce" and (np.any(y < 0) or np.any(y > 1)):
            raise ValueError("y must lie in [0, 1] for the BCE loss (labels or probabilities)")
    return W1, W2, X, y, vector


# ------------------------------------------------------------------------------------------------------------
# the network and its losses (internal: no validation)
# ------------------------------------------------------------------------------------------------------------
def _flat(W1, W2, vector):
    """W1 as (B, l, d) and W2 as (B, e, l), B the product of the batch axes."""
    l, d = W1.shape[-2:]
    A = W2[..., None, :] if vector else W2
    return W1.reshape(-1, l, d), A.reshape(-1, A.shape[-2], l)


def _pre(W1f, X):
    """Pre-activations (n, B, l), by ONE matrix product X (B l, d)^T so that many networks cost one GEMM."""
    B, l, d = W1f.shape
    return (X @ W1f.reshape(B * l, d).T).reshape(X.shape[0], B, l)


def _out(H, Af):
    """Predictions (n, B, e) = relu(P) W2^T."""
    if Af.shape[1] == 1:
        return (H * Af[None, :, 0, :]).sum(-1)[..., None]
    return np.einsum("nbl,bel->nbe", H, Af)


def _value_and_residual(F, y, kind):
    """Per-network loss (B,) and r = dL/dF times n (MSE) or n e (BCE), shape (n, B, e);
    F: predictions (n, B, e), y: targets (n, 1, e)."""
    if kind == "mse":
        r = F - y
        return 0.5 * np.einsum("nbe,nbe->b", r, r) / F.shape[0], r  # L = 1/(2n) sum ||r||^2
    # log(1 + e^F) - y F = (1 - y) max(F, 0) + y max(-F, 0) + log1p(e^{-|F|}): every term >= 0, no cancellation
    # of huge logits (a term whose coefficient is 0 is dropped, so a confident correct logit costs exactly 0)
    pos = np.where(y < 1, (1.0 - y) * np.maximum(F, 0.0), 0.0)
    neg = np.where(y > 0, y * np.maximum(-F, 0.0), 0.0)
    value = np.mean(pos + neg + np.log1p(np.exp(-np.abs(F))), axis=(0, 2))
    return value, expit(F) - y


def _single_mse(W1, a, X, y):
    """One network, one output, MSE: the plain 2-D products (the common small case, without batch overhead)."""
    pre = X @ W1.T
    H = np.maximum(pre, 0.0)
    r = H @ a - y
    n = len(y)
    return 0.5 * (r @ r) / n, ((r[:, None] * a[None, :]) * (pre > 0)).T @ X / n, H.T @ r / n


def _forward_grad(W1f, Af, X, y, kind, need_grad=True):
    n = X.shape[0]
    if need_grad and kind == "mse" and W1f.shape[0] == 1 and Af.shape[1] == 1:
        value, gW1, ga = _single_mse(W1f[0], Af[0, 0], X, y[:, 0, 0])
        return np.array([value]), gW1[None], ga[None, None, :]
    pre = _pre(W1f, X)
    H = np.maximum(pre, 0.0)
    F = _out(H, Af)
    value, r = _value_and_residual(F, y, kind)
    if not need_grad:
        return value, None, None
    scale = n if kind == "mse" else n * F.shape[-1]
    gA = np.einsum("nbe,nbl->bel", r, H) / scale
    if Af.shape[1] == 1:
        G = (r[..., 0][..., None] * Af[None, :, 0, :]) * (pre > 0)
    else:
        G = np.einsum("nbe,bel->nbl", r, Af) * (pre > 0)
    B, l, d = W1f.shape
    gW1 = (G.reshape(n, B * l).T @ X).reshape(B, l, d) / scale
    return value, gW1, gA


def _shape_back(value, gW1, gA, W1, W2, vector):
    batch = W1.shape[:-2]
    value = value.reshape(batch)
    value = float(value) if value.ndim == 0 else value
    gW1 = gW1.reshape(W1.shape)
    gW2 = gA[:, 0, :].reshape(W2.shape) if vector else gA.reshape(W2.shape)
    return value, gW1, gW2


def _targets(y, vector):
    return y[:, None, None] if vector else y[:, None, :]


# ------------------------------------------------------------------------------------------------------------
# public functions
# ------------------------------------------------------------------------------------------------------------
def forward(W1, W2, X) -> np.ndarray:
    """f(x) = W2 relu(W1 x) for every row of X and every network of the batch: (*batch, n, e), or (*batch, n)
    when W2 is given in the vector form (*batch, l)."""
    W1, W2, X, _, vector = _check(W1, W2, X)
    W1f, Af = _flat(W1, W2, vector)
    F = _out(np.maximum(_pre(W1f, X), 0.0), Af)          # (n, B, e)
    F = np.moveaxis(F, 0, 1)                               # (B, n, e)
    batch = W1.shape[:-2]
    return F[..., 0].reshape(batch + (X.shape[0],)) if vector else F.reshape(batch + F.shape[1:])


def loss(W1, W2, X, y, kind="mse"):
    """The loss of each network (a float, or an array of the batch shape); ``kind`` "mse" or "bce"."""
    W1, W2, X, y, vector = _check(W1, W2, X, y, kind)
    W1f, Af = _flat(W1, W2, vector)
    value, _, _ = _forward_grad(W1f, Af, X, _targets(y, vector), kind, need_grad=False)
    value = value.reshape(W1.shape[:-2])
    return float(value) if value.ndim == 0 else value


def loss_grad(W1, W2, X, y, kind="mse"):
    """(L, grad_W1 L, grad_W2 L) for each network of the batch; the gradients have the shapes of W1 and W2.
    See the module docstring for the two losses and the chain rule."""
    W1, W2, X, y, vector = _check(W1, W2, X, y, kind)
    W1f, Af = _flat(W1, W2, vector)
    return _shape_back(*_forward_grad(W1f, Af, X, _targets(y, vector), kind), W1, W2, vector)


@dataclass(frozen=True)
class GDResult:
    """Outcome of :func:`gradient_descent`.

    W1, W2: the final weights (shapes as given). losses: (steps, *batch), the loss at the iterate BEFORE each
    step (losses[0] is the loss at initialization). W1_path, W2_path: (saved, *shape) weights at steps
    0, save_every, 2 save_every, ... and always the final step, or None when save_every is None. saved_steps:
    the step index of each saved weight (None likewise). W2_min, W2_max: the elementwise minimum and maximum of W2
    over every iterate 0..steps (shape of W2), so that a sign change of an output weight at ANY step shows
    without saving the path. balance_drift: max over iterates of |c_k(t) - c_k(0)|, c_k = ||w_k||^2 - ||a_k||^2,
    shape (*batch, l)."""
    W1: np.ndarray
    W2: np.ndarray
    losses: np.ndarray
    W1_path: np.ndarray | None
    W2_path: np.ndarray | None
    saved_steps: np.ndarray | None
    W2_min: np.ndarray
    W2_max: np.ndarray
    balance_drift: np.ndarray


def gradient_descent(W1, W2, X, y, *, lr, steps, kind="mse", save_every=None) -> GDResult:
    """Plain full-batch gradient descent theta <- theta - lr grad L(theta) for ``steps`` steps, every network of
    the batch at once (one GEMM per product for the whole batch). Gradient flow is its lr -> 0 limit; the
    balances drift by O(lr) over a fixed time (see the module docstring).

    ``lr`` > 0 finite; ``steps`` an integer >= 0; ``save_every`` None or an integer >= 1."""
    W1, W2, X, y, vector = _check(W1, W2, X, y, kind)
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not (np.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a finite real > 0, got {lr!r}")
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 0:
        raise ValueError(f"steps must be an integer >= 0, got {steps!r}")
    if save_every is not None and (isinstance(save_every, bool) or not isinstance(save_every, numbers.Integral)
                                   or save_every < 1):
        raise ValueError(f"save_every must be None or an integer >= 1, got {save_every!r}")
    W1f, Af = _flat(W1, W2, vector)
    W1f, Af = W1f.copy(), Af.copy()
    yt = _targets(y, vector)
    losses = np.empty((steps, W1f.shape[0]))
    path1, path2, saved = [], [], []

    def keep(i):
        path1.append(W1f.copy())
        path2.append(Af.copy())
        saved.append(i)

    def balances():
        return np.sum(W1f**2, axis=-1) - np.sum(Af**2, axis=-2)

    c0 = balances()
    drift = np.zeros_like(c0)
    a_min, a_max = Af.copy(), Af.copy()
    for i in range(steps):
        if save_every is not None and i % save_every == 0:
            keep(i)
        value, gW1, gA = _forward_grad(W1f, Af, X, yt, kind)
        losses[i] = value
        W1f -= lr * gW1
        Af -= lr * gA
        np.minimum(a_min, Af, out=a_min)
        np.maximum(a_max, Af, out=a_max)
        np.maximum(drift, np.abs(balances() - c0), out=drift)
    if save_every is not None and (not saved or saved[-1] != steps):
        keep(steps)
    batch = W1.shape[:-2]

    def back2(A):
        return A[:, 0, :].reshape(W2.shape) if vector else A.reshape(W2.shape)

    W1_path = W2_path = steps_saved = None
    if save_every is not None:
        W1_path = np.stack([p.reshape(W1.shape) for p in path1])
        W2_path = np.stack([back2(p) for p in path2])
        steps_saved = np.asarray(saved)
    return GDResult(W1=W1f.reshape(W1.shape), W2=back2(Af), losses=losses.reshape((steps,) + batch),
                    W1_path=W1_path, W2_path=W2_path, saved_steps=steps_saved, W2_min=back2(a_min),
                    W2_max=back2(a_max), balance_drift=drift.reshape(batch + (W1.shape[-2],)))
