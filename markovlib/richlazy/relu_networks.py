"""Part II, Sec. 5 of "Get rich quick" (Kunin et al., NeurIPS 2024): two-layer piecewise-linear networks.

f(x) = sum_k a_k sigma(w_k^T x) with sigma(z) = max(z, gamma z), 0 <= gamma <= 1 (gamma = 0: ReLU), no biases.
Because sigma(z) = sigma'(z) z, the rescaling a_k -> a_k / s, w_k -> s w_k (s > 0) leaves f unchanged and
gradient flow conserves the per-neuron delta_k = eta_w a_k^2 - eta_a ||w_k||^2 (Sec. 5; computed by
:func:`markovlib.richlazy.minimal_model.conserved_delta`).

Fig. 1 protocol (after Chizat et al.; settings of the authors' public code, re-implemented): inputs uniform on
the unit sphere of R^d; a teacher with ``n_teacher`` ReLU units (unit directions, output weights +-1); a student
of even width h made symmetric (h/2 neurons, duplicated with opposite a_k) so that it outputs 0 at
initialization; the student's neurons start with |a_k| = tau * alpha and ||w_k|| = tau / alpha, so
delta_k = tau^2 (alpha^2 - alpha^-2) (the paper's alpha; the authors' code calls 1/alpha ``alpha``). The loss is
L = (1/n) sum_i (f(x_i) - y_i)^2 and training is float64 full-batch gradient descent.

Everything is vectorized over leading "run" axes: ``a`` (..., h), ``W`` (..., h, d), ``X`` (..., n, d), so one
call trains a whole (seed, tau, delta) grid at once.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks


# ------------------------------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------------------------------
def check_gamma(gamma) -> float:
    """The leaky slope gamma as a float in [0, 1] (0: ReLU, 1: linear); ValueError naming ``gamma`` otherwise."""
    g = checks.finite_array("gamma", gamma)
    if g.ndim != 0 or not 0.0 <= float(g) <= 1.0:
        raise ValueError(f"gamma must be a real number in [0, 1] (0: ReLU, 1: linear), got {gamma!r}")
    return float(g)


def check_params(a, W, X=None):
    """The readouts ``a`` (..., h), first layer ``W`` (..., h, d) and optionally inputs ``X`` (..., n, d) as finite
    float arrays with matching axes; ValueError naming the argument otherwise."""
    a = checks.finite_array("a", a)
    W = checks.finite_array("W", W)
    if a.ndim < 1 or W.ndim < 2 or W.shape[:-1] != a.shape:
        raise ValueError(f"a must have shape (..., h) and W shape (..., h, d) with the same leading axes, got "
                         f"{a.shape} and {W.shape}")
    if X is None:
        return a, W
    X = checks.finite_array("X", X)
    if X.ndim < 2 or X.shape[-1] != W.shape[-1]:
        raise ValueError(f"X must have shape (..., n, d) with d = {W.shape[-1]} (W's last axis), got {X.shape}")
    try:
        np.broadcast_shapes(X.shape[:-2], a.shape[:-1])
    except ValueError:
        raise ValueError(f"the leading axes of X {X.shape[:-2]} and of a {a.shape[:-1]} must broadcast") from None
    return a, W, X


def _rng(seed):
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(checks.nonnegative_int("seed", seed))


# ------------------------------------------------------------------------------------------------------------
# the network
# ------------------------------------------------------------------------------------------------------------
def activation(z, gamma=0.0):
    """sigma(z) = max(z, gamma z) (Sec. 5); gamma = 0 is the ReLU."""
    return np.maximum(z, check_gamma(gamma) * np.asarray(z, dtype=float))


def activation_slope(z, gamma=0.0):
    """sigma'(z): 1 for z > 0, gamma for z <= 0 (the convention at the kink; sigma(0) = sigma'(0) * 0 holds for
    either choice, which is all the conservation of delta_k needs)."""
    return np.where(np.asarray(z, dtype=float) > 0, 1.0, check_gamma(gamma))


def forward(X, a, W, gamma=0.0):
    """f(x_i) = sum_k a_k sigma(w_k^T x_i), shape (..., n)."""
    a, W, X = check_params(a, W, X)
    return (activation(X @ np.swapaxes(W, -1, -2), gamma) @ a[..., None])[..., 0]


def mse(X, y, a, W, gamma=0.0):
    """L = (1/n) sum_i (f(x_i) - y_i)^2, the authors' loss (shape: the leading run axes)."""
    y = checks.finite_array("y", y)
    f = forward(X, a, W, gamma)
    if y.shape[-1:] != f.shape[-1:]:
        raise ValueError(f"y must have shape (..., n) with n = {f.shape[-1]}, got {y.shape}")
    return np.mean((f - y) ** 2, axis=-1)


def gradients(X, y, a, W, gamma=0.0):
    """(dL/da, dL/dW, r) of :func:`mse`: dL/da_k = (2/n) sum_i r_i sigma(z_ik), dL/dw_k = (2/n) sum_i r_i a_k
    sigma'(z_ik) x_i, and the residuals r = f - y (z_ik = w_k^T x_i)."""
    a, W, X = check_params(a, W, X)
    y = checks.finite_array("y", y)
    g = check_gamma(gamma)
    return _gradients(X, y, a, W, g)


def _gradients(X, y, a, W, g):
    Z = X @ np.swapaxes(W, -1, -2)                      # (..., n, h)
    S = np.maximum(Z, g * Z)
    r = (S @ a[..., None])[..., 0] - y                   # (..., n)
    n = X.shape[-2]
    ga = (2.0 / n) * (np.swapaxes(S, -1, -2) @ r[..., None])[..., 0]
    B = (r[..., :, None] * np.where(Z > 0, 1.0, g)) * a[..., None, :]
    gW = (2.0 / n) * (np.swapaxes(B, -1, -2) @ X)       # (..., h, d)
    return ga, gW, r


def ntk(X, a, W, gamma=0.0, eta_a=1.0, eta_w=1.0):
    """The NTK matrix on the inputs X (Sec. 5): K = J diag(eta) J^T with J the Jacobian of (f(x_i))_i in all
    parameters, i.e. K_ij = eta_a sum_k sigma(z_ik) sigma(z_jk) + eta_w (x_i^T x_j) sum_k a_k^2 sigma'(z_ik)
    sigma'(z_jk). Shape (..., n, n)."""
    a, W, X = check_params(a, W, X)
    g = check_gamma(gamma)
    eta_a = checks.positive_real("eta_a", eta_a)
    eta_w = checks.positive_real("eta_w", eta_w)
    Z = X @ np.swapaxes(W, -1, -2)
    S = np.maximum(Z, g * Z)
    D = np.where(Z > 0, 1.0, g) * a[..., None, :]
    return eta_a * S @ np.swapaxes(S, -1, -2) + eta_w * (X @ np.swapaxes(X, -1, -2)) * (D @ np.swapaxes(D, -1, -2))


def activation_pattern(X, W):
    """C_ik = [w_k^T x_i > 0], the activation pattern (Sec. 5), boolean of shape (..., n, h)."""
    W = checks.finite_array("W", W)
    X = checks.finite_array("X", X)
    if W.ndim < 2 or X.ndim < 2 or X.shape[-1] != W.shape[-1]:
        raise ValueError(f"X (..., n, d) and W (..., h, d) must share d, got {X.shape} and {W.shape}")
    return X @ np.swapaxes(W, -1, -2) > 0


def hamming_distance(C1, C2):
    """Fraction of (input, neuron) entries where two activation patterns differ (Fig. 5b; the authors' code
    sums over neurons instead, i.e. multiplies this by h). Shape: the leading axes."""
    C1, C2 = np.asarray(C1, dtype=bool), np.asarray(C2, dtype=bool)
    if C1.ndim < 2:
        raise ValueError(f"C1 must have shape (..., n, h), got {C1.shape}")
    try:
        return np.mean(C1 != C2, axis=(-2, -1))
    except ValueError:
        raise ValueError(f"C1 {C1.shape} and C2 {C2.shape} must broadcast") from None


def parameter_distance(a, W, a0, W0):
    """sqrt(||a - a0||^2 + ||W - W0||_F^2), the distance from initialization (Fig. 5b)."""
    a, W = check_params(a, W)
    a0, W0 = check_params(a0, W0)
    return np.sqrt(np.sum((a - a0) ** 2, axis=-1) + np.sum((W - W0) ** 2, axis=(-2, -1)))


# ------------------------------------------------------------------------------------------------------------
# the teacher-student protocol of Fig. 1
# ------------------------------------------------------------------------------------------------------------
def alpha_for_delta(delta, tau):
    """The paper's relative scale alpha > 0 with tau^2 (alpha^2 - alpha^-2) = delta, i.e. alpha^2 =
    (D + sqrt(D^2 + 4)) / 2 with D = delta / tau^2 (written without cancellation for D < 0)."""
    delta = checks.finite_array("delta", delta)
    tau = checks.finite_array("tau", tau)
    if np.any(tau <= 0):
        raise ValueError(f"tau must be > 0 (the overall scale), got {tau!r}")
    D = delta / tau**2
    root = np.hypot(D, 2.0)
    with np.errstate(over="ignore", divide="ignore"):
        a2 = np.where(D >= 0, (D + root) / 2.0, 2.0 / (root - D))
        a2 = np.where(np.isfinite(D), a2, np.where(D > 0, np.inf, 0.0))
    return np.sqrt(a2)


def layer_scales(delta, tau):
    """(|a_k|, ||w_k||) = (tau alpha, tau / alpha) for the alpha of :func:`alpha_for_delta`, computed without
    forming alpha: |a|^2 = (delta + sqrt(delta^2 + 4 tau^4)) / 2 and ||w||^2 = (sqrt(delta^2 + 4 tau^4) -
    delta) / 2 (so |a|^2 - ||w||^2 = delta and |a| ||w|| = tau^2), each written without cancellation; finite
    for every finite delta and tau > 0. Broadcasts delta against tau."""
    delta = checks.finite_array("delta", delta)
    tau = checks.finite_array("tau", tau)
    if np.any(tau <= 0):
        raise ValueError(f"tau must be > 0 (the overall scale), got {tau!r}")
    delta, tau = np.broadcast_arrays(delta, tau)
    t2 = tau**2
    root = np.hypot(delta, 2.0 * t2)                 # sqrt(delta^2 + 4 tau^4) without overflow
    big = np.where(root + np.abs(delta) > 0, (root + np.abs(delta)) / 2.0, 0.0)   # the larger of |a|^2, ||w||^2
    with np.errstate(divide="ignore", invalid="ignore"):
        small = np.where(big > 0, (t2 / np.sqrt(big))**2, 0.0)   # |a|^2 ||w||^2 = tau^4: the smaller one
    a2 = np.where(delta >= 0, big, small)
    w2 = np.where(delta >= 0, small, big)
    return np.sqrt(a2), np.sqrt(w2)


def sphere_inputs(n, d, seed):
    """n inputs uniform on the unit sphere of R^d (Gaussian draws normalized), shape (n, d)."""
    n = checks.positive_int("n", n)
    d = checks.positive_int("d", d)
    x = _rng(seed).standard_normal((n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def teacher(d, n_teacher, seed):
    """(a*, W*): ``n_teacher`` ReLU units with unit directions and output weights +-1 (Fig. 1, after Chizat)."""
    d = checks.positive_int("d", d)
    n_teacher = checks.positive_int("n_teacher", n_teacher)
    rng = _rng(seed)
    W = rng.standard_normal((n_teacher, d))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    a = np.where(rng.standard_normal(n_teacher) >= 0, 1.0, -1.0)
    return a, W


def student_init(d, h, tau, delta, seed):
    """The symmetric (tau, alpha) initialization of Fig. 1: h/2 unit directions u_k and signs s_k, then
    w_k = (tau / alpha) u_k, a_k = s_k tau alpha, duplicated with a_k negated, so f = 0 at init and every
    delta_k = a_k^2 - ||w_k||^2 equals ``delta``. ``tau`` and ``delta`` broadcast to a grid shape G; the random
    draws are shared across the grid (one seed); returns a (*G, h), W (*G, h, d)."""
    d = checks.positive_int("d", d)
    h = checks.positive_int("h", h)
    if h % 2:
        raise ValueError(f"h must be even (the student is symmetric: pairs of neurons with opposite a), got {h}")
    a_norm, w_norm = layer_scales(delta, tau)
    rng = _rng(seed)
    U = rng.standard_normal((h // 2, d))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    s = np.where(rng.standard_normal(h // 2) >= 0, 1.0, -1.0)
    U, s = np.concatenate([U, U]), np.concatenate([s, -s])
    a = a_norm[..., None] * s
    W = w_norm[..., None, None] * U
    return a, W


def teacher_student(d, n, h, n_teacher, taus, deltas, seed, n_test=0):
    """One seed of the Fig. 1 protocol: a dict with the teacher (``a_star``, ``W_star``), training inputs ``X``
    (n, d) and labels ``y`` (n,), test inputs ``X_test`` / ``y_test`` (n_test fresh points; none for 0) and the
    student initializations ``a0`` (len(taus), len(deltas), h), ``W0`` (..., h, d) on the (tau, delta) grid.
    The four draws use independent streams spawned from ``seed``."""
    seed = checks.nonnegative_int("seed", seed)
    n_test = checks.nonnegative_int("n_test", n_test)
    taus = checks.finite_array("taus", taus).ravel()
    deltas = checks.finite_array("deltas", deltas).ravel()
    if taus.size == 0 or deltas.size == 0:
        raise ValueError("taus and deltas must be non-empty")
    s_teacher, s_data, s_student, s_test = (np.random.default_rng(s)
                                            for s in np.random.SeedSequence(seed).spawn(4))
    a_star, W_star = teacher(d, n_teacher, s_teacher)
    X = sphere_inputs(n, d, s_data)
    a0, W0 = student_init(d, h, taus[:, None], deltas[None, :], s_student)
    out = {"a_star": a_star, "W_star": W_star, "X": X, "y": forward(X, a_star, W_star), "a0": a0, "W0": W0}
    if n_test:
        Xt = sphere_inputs(n_test, d, s_test)
        out.update(X_test=Xt, y_test=forward(Xt, a_star, W_star))
    return out


# ------------------------------------------------------------------------------------------------------------
# training
# ------------------------------------------------------------------------------------------------------------
def gradient_descent(X, y, a0, W0, lr, save_steps, gamma=0.0, eta_a=1.0, eta_w=1.0):
    """Full-batch float64 GD on :func:`mse`: a <- a - lr eta_a dL/da, W <- W - lr eta_w dL/dW, for all runs of
    the leading axes at once (``lr`` broadcasts to them). Returns a dict with the snapshots after each number of
    steps in ``save_steps`` (sorted, distinct, >= 0): ``steps``, ``a`` (T, ..., h), ``W`` (T, ..., h, d) and the
    training ``loss`` (T, ...). Raises FloatingPointError if the iterates overflow (lr too large)."""
    a, W, X = check_params(a0, W0, X)
    y = checks.finite_array("y", y)
    if y.shape[-1] != X.shape[-2]:
        raise ValueError(f"y must have shape (..., n) with n = {X.shape[-2]}, got {y.shape}")
    g = check_gamma(gamma)
    eta_a = checks.positive_real("eta_a", eta_a)
    eta_w = checks.positive_real("eta_w", eta_w)
    lr = checks.finite_array("lr", lr)
    if np.any(lr <= 0):
        raise ValueError(f"lr must be > 0, got {lr!r}")
    try:
        lr = np.broadcast_to(lr, a.shape[:-1]).copy()
    except ValueError:
        raise ValueError(f"lr (shape {lr.shape}) must broadcast to the run axes {a.shape[:-1]}") from None
    steps = [checks.nonnegative_int("save_steps", s) for s in np.atleast_1d(save_steps).tolist()]
    if not steps or any(s1 >= s2 for s1, s2 in zip(steps, steps[1:])):
        raise ValueError(f"save_steps must be a non-empty increasing list of integers >= 0, got {save_steps!r}")
    a, W = a.copy(), W.copy()
    la, lw = (lr * eta_a)[..., None], (lr * eta_w)[..., None, None]
    snaps_a, snaps_W, losses = [], [], []
    done = 0
    for target in steps:
        with np.errstate(over="ignore", invalid="ignore"):
            for _ in range(target - done):
                ga, gW, _r = _gradients(X, y, a, W, g)
                a -= la * ga
                W -= lw * gW
        done = target
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(W))):
            raise FloatingPointError(f"gradient descent overflowed before step {target}: lr is too large")
        snaps_a.append(a.copy())
        snaps_W.append(W.copy())
        losses.append(mse(X, y, a, W, g))
    return {"steps": np.array(steps), "a": np.stack(snaps_a), "W": np.stack(snaps_W), "loss": np.stack(losses)}


def delta_step_change(X, y, a, W, lr, gamma=0.0, eta_a=1.0, eta_w=1.0):
    """The exact change of delta_k in one GD step (derived in the chapter): since sigma(z) = sigma'(z) z the
    first-order term cancels and delta_k' - delta_k = lr^2 (eta_w eta_a^2 (dL/da_k)^2 - eta_a eta_w^2
    ||dL/dw_k||^2). Shape (..., h)."""
    a, W, X = check_params(a, W, X)
    y = checks.finite_array("y", y)
    lr = checks.positive_real("lr", lr)
    eta_a = checks.positive_real("eta_a", eta_a)
    eta_w = checks.positive_real("eta_w", eta_w)
    ga, gW, _r = _gradients(X, y, a, W, check_gamma(gamma))
    return lr**2 * (eta_w * eta_a**2 * ga**2 - eta_a * eta_w**2 * np.sum(gW**2, axis=-1))
