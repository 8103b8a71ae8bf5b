"""Part II, App. C.1 of "Get rich quick" (Kunin et al., NeurIPS 2024): the surface of a deep ReLU network.

A fully connected ReLU network with hidden widths h_1, ..., h_L and a scalar readout,
z_1 = W_1 x + c_1, z_l = W_l relu(z_{l-1}) + c_l (l = 2..L), f(x) = W_{L+1} relu(z_L) + c_{L+1}, at the standard
(PyTorch default) initialization: every W_l and c_l uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)]; without biases
all c_l = 0. The activation pattern of x (Def. C.1) is the sign vector of all N = sum h_l pre-activations
(True: z > 0). On the activation region of a pattern A the network is affine, f(x) = g_A^T x + e_A with
g_A^T = W_{L+1} D_L W_L ... D_1 W_1 (D_l = diag of the pattern of layer l) and e_A from the biases; without
biases e_A = 0 and f is positively homogeneous, f(s x) = s f(x) for s > 0, so the regions are cones from the
origin. Prop. C.2: coloured by the parity of the number of active neurons, neighbouring regions differ in colour,
because (generically) a boundary is the zero set of a single pre-activation, so crossing it flips one neuron.
:func:`boundary_flips` checks that last point on segments by bisection.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks


def init_mlp(d, widths, seed, bias=True):
    """Layers [(W_1, c_1), ..., (W_{L+1}, c_{L+1})] of a ReLU network R^d -> R with hidden ``widths`` at the
    standard initialization (module docstring); ``bias=False`` sets every c_l to 0. Reproducible from ``seed``."""
    d = checks.positive_int("d", d)
    if isinstance(widths, (int, np.integer)) or len(widths) == 0:
        raise ValueError(f"widths must be a non-empty list of positive integers, got {widths!r}")
    widths = [checks.positive_int("widths", h) for h in widths]
    rng = np.random.default_rng(checks.nonnegative_int("seed", seed))
    layers, fan_in = [], d
    for h in widths + [1]:
        bound = 1.0 / np.sqrt(fan_in)
        W = rng.uniform(-bound, bound, (h, fan_in))
        c = rng.uniform(-bound, bound, h)  # drawn either way: the weights agree with and without biases
        layers.append((W, c if bias else np.zeros(h)))
        fan_in = h
    return layers


def _check_layers(layers):
    if not isinstance(layers, (list, tuple)) or len(layers) < 2:
        raise ValueError("layers must be a list of at least two (W, c) pairs (one hidden layer and the readout)")
    out, fan_in = [], None
    for k, layer in enumerate(layers):
        if len(layer) != 2:
            raise ValueError(f"layers[{k}] must be a pair (W, c)")
        W = checks.finite_array(f"layers[{k}] W", layer[0])
        c = checks.finite_array(f"layers[{k}] c", layer[1])
        if W.ndim != 2 or c.shape != (W.shape[0],) or (fan_in is not None and W.shape[1] != fan_in):
            raise ValueError(f"layers[{k}] must be (W of shape (h, fan_in), c of shape (h,)) chaining with the "
                             f"previous layer, got {W.shape} and {c.shape}")
        out.append((W, c))
        fan_in = W.shape[0]
    if fan_in != 1:
        raise ValueError(f"the last layer must have one output, got {fan_in}")
    return out


def _check_x(X, d):
    X = checks.finite_array("X", X)
    if X.ndim < 1 or X.shape[-1] != d:
        raise ValueError(f"X must have shape (..., d) with d = {d} (the first layer's fan-in), got {X.shape}")
    if np.any(np.abs(X) > 1e150):
        raise ValueError("X must have entries of size at most 1e150")
    return X


def forward(X, layers):
    """(f, pattern): the network's output f(x) (shape X.shape[:-1]) and the activation pattern, a boolean array
    (..., N) of all hidden pre-activations z > 0, layer after layer (Def. C.1)."""
    layers = _check_layers(layers)
    X = _check_x(X, layers[0][0].shape[1])
    z, pats = X, []
    for W, c in layers[:-1]:
        pre = z @ W.T + c
        pats.append(pre > 0)
        z = np.maximum(pre, 0.0)
    W, c = layers[-1]
    return (z @ W.T + c)[..., 0], np.concatenate(pats, axis=-1)


def local_affine(X, layers):
    """(g, e) with f(y) = g . y + e for every y in the activation region of x (shape (..., d) and (...)):
    g^T = W_{L+1} D_L W_L ... D_1 W_1 and e the same product applied to the biases, from the pattern of x."""
    layers = _check_layers(layers)
    X = _check_x(X, layers[0][0].shape[1])
    d = X.shape[-1]
    G = np.broadcast_to(np.eye(d), X.shape[:-1] + (d, d))  # d z / d x, rows: units of the current layer
    e = np.zeros(X.shape[:-1] + (d,))
    z = X
    for W, c in layers[:-1]:
        pre = z @ W.T + c
        on = (pre > 0).astype(float)
        G = on[..., :, None] * (W @ G)  # (..., h, d)
        e = on * (e @ W.T + c)
        z = np.maximum(pre, 0.0)
    W, c = layers[-1]
    return (W @ G)[..., 0, :], (e @ W.T + c)[..., 0]


def boundary_flips(x1, x2, layers, tol=1e-10, max_depth=60, relative=False):
    """Bisect the segments [x1, x2] (shapes (m, d)) until every piece has endpoints whose patterns differ in at
    most one neuron or is shorter than ``tol``. Returns (flips, where): for each piece whose endpoints differ,
    the number of neurons that flip across it (1 everywhere for a partition that Prop. C.2 two-colours; a value
    >= 2 is a point where two pre-activations vanish at once, e.g. the origin of a network without biases, where
    all of them do, or a crossing not resolved after ``max_depth`` halvings) and the piece's midpoint (k, d) (a
    piece that flips one neuron is not halved further; one that flips more is halved down to ``tol``).

    With ``relative=True`` a piece is short when its length is below ``tol`` times the norm of its midpoint: the
    resolution is then an angle as seen from the origin, the natural one for a network without biases, whose
    regions are cones from the origin (with an absolute length, two boundary rays a small angle apart cannot be
    told apart where a segment passes near the origin)."""
    layers = _check_layers(layers)
    d = layers[0][0].shape[1]
    A = _check_x(x1, d).reshape(-1, d)
    B = _check_x(x2, d).reshape(-1, d)
    if A.shape != B.shape:
        raise ValueError(f"x1 and x2 must have the same shape, got {A.shape} and {B.shape}")
    tol = checks.positive_real("tol", tol)
    max_depth = checks.positive_int("max_depth", max_depth)
    if not isinstance(relative, bool):
        raise ValueError(f"relative must be True or False, got {relative!r}")
    PA, PB = forward(A, layers)[1], forward(B, layers)[1]
    done, mids = [], []
    for _ in range(max_depth):
        ham = np.sum(PA != PB, axis=1)
        length = np.linalg.norm(B - A, axis=1)
        short = length < (tol * np.linalg.norm((A + B) / 2, axis=1) if relative else tol)
        final = (ham <= 1) | short
        done.append(ham[final & (ham > 0)])
        mids.append(((A + B) / 2)[final & (ham > 0)])
        A, B, PA, PB = A[~final], B[~final], PA[~final], PB[~final]
        if A.shape[0] == 0:
            break
        M = (A + B) / 2
        PM = forward(M, layers)[1]
        A, B = np.concatenate([A, M]), np.concatenate([M, B])
        PA, PB = np.concatenate([PA, PM]), np.concatenate([PM, PB])
    if A.shape[0]:
        done.append(np.sum(PA != PB, axis=1))
        mids.append((A + B) / 2)
    return np.concatenate(done), np.concatenate(mids)


def neighbour_pairs(points, patterns):
    """The neighbouring cells of a grid of ``points`` (g1, g2, d) with activation ``patterns`` (g1, g2, N), along
    both axes: the number of pairs whose patterns differ in exactly one neuron, whether every such pair has
    different parities (the arithmetic of Prop. C.2: one flip changes the count of active neurons by 1), and the
    endpoints (a, b) of the pairs that differ in two or more neurons (to be bisected by :func:`boundary_flips`).
    Returns (n_one, parities_differ, a (m, d), b (m, d))."""
    X = checks.finite_array("points", points, ndim=3)
    P = np.asarray(patterns)
    if P.ndim != 3 or P.shape[:2] != X.shape[:2]:
        raise ValueError(f"patterns must have shape (g1, g2, N) on the grid {X.shape[:2]}, got {P.shape}")
    parity = np.sum(P, axis=-1) % 2
    one, one_ok, multi_a, multi_b = 0, True, [], []
    for axis in (0, 1):
        Pa, Pb = (P[:-1], P[1:]) if axis == 0 else (P[:, :-1], P[:, 1:])
        pa, pb = (parity[:-1], parity[1:]) if axis == 0 else (parity[:, :-1], parity[:, 1:])
        xa, xb = (X[:-1], X[1:]) if axis == 0 else (X[:, :-1], X[:, 1:])
        ham = np.sum(Pa != Pb, axis=-1)
        one += int(np.sum(ham == 1))
        one_ok &= bool(np.all(pa[ham == 1] != pb[ham == 1]))
        multi_a.append(xa[ham >= 2])
        multi_b.append(xb[ham >= 2])
    return one, one_ok, np.concatenate(multi_a), np.concatenate(multi_b)
