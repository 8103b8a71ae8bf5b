"""The paper's remarks beyond the main text (Nurisso et al., NeurIPS 2024): App. E (biases), App. F against Sec. 7
(the obstruction probability and the width), App. G for several outputs. Used by the chapter ``topo_beyond_remarks``.

App. E, the network f(x) = W2 relu(W1 x + b1) + b2 with the MSE L = mean ||f - y||^2 / 2:

* :func:`bias_mse_grads` -- its gradient (W1, b1, W2, b2);
* :func:`bias_gd_balances` -- plain gradient descent, and the largest change of the balance with the bias,
  ||w_k||^2 + b_k^2 - ||a_k||^2 (conserved by the flow), and of the one without it.

App. F:

* :func:`log_survival` -- log(1 - P) = l log(1 - p), p from scipy's F(1, d) (App. F), where P rounds to 1;
* :func:`boolean_runs` -- the maximal runs of a boolean array (where P falls with the width);
* :func:`mc_cells_rule` -- the declared parameter (``markovlib.book.params``) of the Monte Carlo cells.

App. G, one neuron, Gaussian inputs, teacher x -> relu(u . x) v with ||u|| = 1 (population loss):

* :func:`arc_kernel`, :func:`population_loss`, :func:`population_grad` -- L(w, a) = ||a||^2 ||w||^2 / 4 -
  (a . v) ||w|| kappa(theta) / (2 pi) + ||v||^2 / 4, kappa(theta) = sin(theta) + (pi - theta) cos(theta) (the
  arc-cosine kernel of degree 1), theta the angle between w and u;
* :func:`draw_construction` -- one draw of the constructed family (u, v with v_1 < 0, w0 within 120 degrees of u, a0
  with positive components within 75 degrees of v, on the balance c);
* :func:`population_flow` and :func:`flow_at` -- the gradient flow integrated by scipy's DOP853 with the zero events
  of a_1 and the switch-off |w| = 1e-6.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks

__all__ = ["bias_mse_grads", "bias_gd_balances", "log_survival", "boolean_runs", "mc_cells_rule", "arc_kernel",
           "population_loss", "population_grad", "draw_construction", "population_flow", "flow_at"]

SCHEMES = ("kaiming", "xavier")


def _dims(d, e):
    """d >= 2 and e >= 1 of App. G's construction."""
    d, e = checks.positive_int("d", d), checks.positive_int("e", e)
    if d < 2:
        raise ValueError(f"d must be an integer >= 2, got {d!r}")
    return d, e


def bias_mse_grads(W1, b1, W2, b2, X, Y):
    """(dL/dW1, dL/db1, dL/dW2, dL/db2) of L = mean_i ||W2 relu(W1 x_i + b1) + b2 - y_i||^2 / 2; W1 (l, d), b1 (l,),
    W2 (e, l), b2 (e,), X (n, d), Y (n, e)."""
    W1, W2 = checks.finite_array("W1", W1, ndim=(2,)), checks.finite_array("W2", W2, ndim=(2,))
    X, Y = checks.finite_array("X", X, ndim=(2,)), checks.finite_array("Y", Y, ndim=(2,))
    if X.shape[1] != W1.shape[1] or W2.shape[1] != W1.shape[0] or Y.shape != (X.shape[0], W2.shape[0]):
        raise ValueError(f"W1, W2, X and Y must have shapes (l, d), (e, l), (n, d), (n, e), got {W1.shape}, "
                         f"{W2.shape}, {X.shape}, {Y.shape}")
    P = X @ W1.T + b1
    H = np.maximum(P, 0.0)
    R = (H @ W2.T + b2 - Y) / len(X)  # dL/df for L = 0.5 mean ||f - y||^2
    G = (R @ W2) * (P > 0)
    return G.T @ X, G.sum(0), R.T @ H, R.sum(0)


def bias_gd_balances(init, X, Y, lr, steps):
    """Gradient descent with step ``lr`` for ``steps`` steps from ``init`` = (W1, b1, W2, b2) on the MSE of
    :func:`bias_mse_grads`; returns (max_t max_k |c_k(t) - c_k(0)| of c_k = ||w_k||^2 + b_k^2 - ||a_k||^2, the same for
    ||w_k||^2 - ||a_k||^2). One step changes the first by lr^2 (||g_w~||^2 - ||g_a||^2): O(lr) over a fixed time."""
    lr, steps = checks.positive_real("lr", lr), checks.positive_int("steps", steps)
    W1, b1, W2, b2 = (np.array(x, dtype=float) for x in init)
    with_b, without_b = [], []
    for _ in range(steps + 1):
        with_b.append((W1**2).sum(1) + b1**2 - (W2**2).sum(0))
        without_b.append((W1**2).sum(1) - (W2**2).sum(0))
        g = bias_mse_grads(W1, b1, W2, b2, X, Y)
        W1, b1, W2, b2 = W1 - lr * g[0], b1 - lr * g[1], W2 - lr * g[2], b2 - lr * g[3]
    with_b, without_b = np.array(with_b), np.array(without_b)
    return np.abs(with_b - with_b[0]).max(), np.abs(without_b - without_b[0]).max()


def log_survival(d, widths, scheme):
    """log(1 - P) = l log(1 - p) with p = P[F(1, d) > x] from scipy (App. F), x = l (Kaiming) or
    d (l + 1) / (d + l) (Xavier); ``widths`` the widths l, a float array. Its steps in l give the sign of
    P(l + 1) - P(l) where P rounds to 1."""
    from scipy import stats

    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {list(SCHEMES)}, got {scheme!r}")
    w = np.asarray(widths, dtype=float)
    if np.any(w < 1) or np.any(np.asarray(d) < 1):
        raise ValueError("d and widths must be at least 1")
    x = w if scheme == "kaiming" else d * (w + 1.0) / (d + w)
    return w * np.log1p(-stats.f.sf(x, 1, d))


def boolean_runs(mask):
    """The maximal runs of equal values of a boolean array, as (value, first index, last index), indices from 1."""
    mask = np.asarray(mask)
    if mask.ndim != 1 or mask.size < 1 or mask.dtype != bool:
        raise ValueError(f"mask must be a non-empty 1-D boolean array, got {mask!r}")
    cuts = np.flatnonzero(np.diff(mask.astype(int))) + 1
    starts, ends = np.r_[0, cuts], np.r_[cuts, mask.size] - 1
    return [(bool(mask[a]), int(a) + 1, int(b) + 1) for a, b in zip(starts, ends)]


def mc_cells_rule(max_product=50000, *, why=""):
    """A ``markovlib.book.params`` rule for the Monte Carlo cells: a non-empty list of [scheme, d, l], scheme kaiming
    or xavier, d, l integers >= 1 with d l <= ``max_product``, and at least two widths for each (scheme, d). Returns
    a list of (scheme, d, l) tuples; papermill's text form (YAML) is accepted."""
    from ..book import params

    def convert(name, value):
        if isinstance(value, str):
            import yaml

            value = yaml.safe_load(value)
        if not isinstance(value, (list, tuple)) or not value:
            raise ValueError(f"{name} must be a non-empty list of [scheme, d, l], got {value!r}")
        for i, cell in enumerate(value):
            if not isinstance(cell, (list, tuple)) or len(cell) != 3 or cell[0] not in SCHEMES:
                raise ValueError(f"{name}[{i}] must be [scheme, d, l] with scheme kaiming or xavier, got {cell!r}")
            params.positive_int(f"{name}[{i}][1] (d)", cell[1])
            params.positive_int(f"{name}[{i}][2] (l)", cell[2])
            if cell[1] * cell[2] > max_product:
                raise ValueError(f"{name}[{i}] = {cell!r}: d * l must be at most {max_product} (time budget)")
        cells = [(str(s), int(d), int(w)) for s, d, w in value]
        for s, d in sorted({(s, d) for s, d, _ in cells}):
            if len({w for t, e, w in cells if (t, e) == (s, d)}) < 2:
                raise ValueError(f"{name} must hold at least two widths l for each (scheme, d) (the rise-and-fall "
                                 f"check compares widths), got one for ({s!r}, {d})")
        return cells

    return params.Rule(convert, f"list of [scheme, d, l], d l <= {max_product}, two widths per (scheme, d)", why)


def arc_kernel(cos_t):
    """(kappa(theta), theta) with kappa(theta) = sin(theta) + (pi - theta) cos(theta), theta = arccos(cos_t)."""
    t = np.arccos(np.clip(cos_t, -1.0, 1.0))
    return np.sin(t) + (np.pi - t) * np.cos(t), t


def population_loss(w, a, u, v):
    """L(w, a) = E_x ||a relu(w . x) - v relu(u . x)||^2 / 2 over x ~ N(0, I), ||u|| = 1 (closed form)."""
    nw = np.linalg.norm(w)
    k, _ = arc_kernel(w @ u / nw)
    return 0.25 * (a @ a) * nw**2 - (a @ v) * nw * k / (2 * np.pi) + 0.25 * (v @ v)


def population_grad(w, a, u, v):
    """(dL/dw, dL/da) of :func:`population_loss` (w != 0)."""
    nw = np.linalg.norm(w)
    k, t = arc_kernel(w @ u / nw)
    ga = 0.5 * nw**2 * a - nw * k / (2 * np.pi) * v
    gw = 0.5 * (a @ a) * w - (a @ v) / (2 * np.pi) * (np.sin(t) * w / nw + (np.pi - t) * u)
    return gw, ga


def draw_construction(rng, d, e, c):
    """(u, v, w0, a0) of the constructed family: u uniform on S^{d-1}; v uniform in [0.5, 1.5]^e with v_1 negated;
    w0 within 120 degrees of u, of norm uniform in [0.5, 1]; a0 with positive components within 75 degrees of v and
    ||a0||^2 = ||w0||^2 - c (the balance c < 0: a pathological neuron)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    d, e = _dims(d, e)
    if not (np.isfinite(c) and c < 0):
        raise ValueError(f"c must be a finite real < 0 (a pathological neuron), got {c!r}")
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    v = rng.uniform(0.5, 1.5, size=e)
    v[0] = -v[0]
    while True:  # w0 within 120 degrees of u
        w0 = rng.normal(size=d)
        if w0 @ u / np.linalg.norm(w0) >= -0.5:
            break
    w0 *= rng.uniform(0.5, 1.0) / np.linalg.norm(w0)
    while True:  # a0 with positive components within 75 degrees of v
        ad = rng.uniform(0.05, 1.0, size=e)
        ad /= np.linalg.norm(ad)
        if ad @ v / np.linalg.norm(v) >= np.cos(np.radians(75)):
            break
    return u, v, w0, ad * np.sqrt(w0 @ w0 - c)


def population_flow(w0, a0, u, v, horizon):
    """The gradient flow of :func:`population_loss` from (w0, a0) to t = ``horizon`` (scipy DOP853, rtol 1e-10, atol
    1e-12, dense output), with the events a_1 = 0 downward, a_1 = 0 upward, and |w| = 1e-6 (terminal: the neuron
    switched off, w = 0 is then a rest point)."""
    from scipy.integrate import solve_ivp

    horizon = checks.positive_real("horizon", horizon)
    dw = len(w0)

    def rhs(_, z):
        return -np.concatenate(population_grad(z[:dw], z[dw:], u, v))

    def down(_, z):
        return z[dw]

    def up(_, z):
        return z[dw]

    def dead(_, z):
        return np.linalg.norm(z[:dw]) - 1e-6

    down.direction, up.direction, dead.terminal = -1.0, 1.0, True
    sol = solve_ivp(rhs, (0.0, horizon), np.concatenate([w0, a0]), method="DOP853", rtol=1e-10, atol=1e-12,
                    events=[down, up, dead], dense_output=True)
    if not sol.success:
        raise RuntimeError(f"the population flow failed: {sol.message}")
    return sol


def flow_at(sol, tt):
    """The flow of :func:`population_flow` at the times tt, held at its last state after a switch-off."""
    return sol.sol(np.minimum(tt, sol.t[-1]))
