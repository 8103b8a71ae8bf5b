"""Topology of the invariant set of shallow ReLU networks (Nurisso et al., "Topological obstruction to the
training of shallow ReLU neural networks", NeurIPS 2024).

The network is f(x) = W2 sigma(W1 x) with W1 the l x d input weights (row k = w_k) and W2 the e x l output
weights (column k = a_k), sigma positively homogeneous. Gradient flow conserves the neuron balances
c_k = ||w_k||^2 - ||a_k||^2 (paper Eq. (10)-(12)), so a trajectory stays on the invariant set
H(c) = Q_1(c_1) x ... x Q_l(c_l) (Lemma 1). This module gives:

* :func:`neuron_balances` -- c_k (Eq. (12));
* :func:`poincare_polynomial`, :func:`betti_numbers` -- Thm 1, P(x) = (1 + x^{d-1})^{l+} (1 + x^{e-1})^{l-};
* :func:`n_components` -- Cor. 1 (b_0);
* :func:`n_effective_components` -- Thm 2 / Cor. 3 (components up to rescalings and permutations);
* with ``bias=True`` the last four are App. E's network f(x) = W2 sigma(W1 x + b1) + b2: the bias b_k joins the
  input weights (c_k = ||w_k||^2 + b_k^2 - ||a_k||^2), so d becomes d + 1 (Prop. 5, Prop. 6, Cor. 4); b2 adds a
  contractible factor R^e;
* :func:`pathological` -- the neurons with ||a_k|| > ||w_k|| (Cor. 2, Prop. 3);
* :func:`rescale_to` -- the rescaling of Prop. 4 (App. D.5) onto prescribed quadrics;
* :func:`obstruction_probability` -- App. F, P[at least one pathological neuron at initialization].

Every public function validates its arguments once and raises ValueError naming the argument.
"""
from __future__ import annotations

import numbers

import numpy as np
from scipy import stats

from ..numerics import checks

__all__ = ["neuron_balances", "poincare_polynomial", "betti_numbers", "n_components", "n_effective_components",
           "pathological", "rescale_to", "obstruction_probability"]

_SCHEMES = ("kaiming", "xavier")


# ------------------------------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------------------------------
def _size(name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _weights(W1, W2):
    """(W1 of shape (l, d), W2 of shape (e, l)); a 1-D W2 of length l is the e = 1 output row."""
    W1 = checks.finite_array("W1", W1, ndim=(2,))
    W2 = checks.finite_array("W2", W2, ndim=(1, 2))
    if W2.ndim == 1:
        W2 = W2[None, :]
    l, d = W1.shape
    if l < 1 or d < 1:
        raise ValueError(f"W1 must have shape (l, d) with l >= 1 and d >= 1, got {W1.shape}")
    if W2.shape[1] != l or W2.shape[0] < 1:
        raise ValueError(f"W2 must have shape (e, l) = (e, {l}) with e >= 1 (l from W1 of shape {W1.shape}), "
                         f"got {W2.shape}")
    return W1, W2


def _balances(name, c, l=None):
    c = checks.finite_array(name, c, ndim=(0, 1))
    c = np.atleast_1d(c)
    if l is not None:
        if c.size == 1:
            c = np.full(l, float(c[0]))
        elif c.size != l:
            raise ValueError(f"{name} must be a scalar or have one entry per neuron (l = {l}), got {c.size}")
    if c.size < 1:
        raise ValueError(f"{name} must have at least one entry (one per neuron)")
    return c


def _norms(M, axis):
    """Euclidean norms along ``axis`` without overflow (scaled by the largest entry)."""
    scale = np.max(np.abs(M), axis=axis, keepdims=True)
    safe = np.where(scale > 0, scale, 1.0)
    return np.squeeze(safe, axis=axis) * np.sqrt(np.sum((M / safe) ** 2, axis=axis))


def _bias(bias):
    if not isinstance(bias, (bool, np.bool_)):
        raise ValueError(f"bias must be True or False, got {bias!r}")
    return bool(bias)


def _signs(c):
    return int(np.sum(c > 0)), int(np.sum(c < 0)), int(np.sum(c == 0))


# ------------------------------------------------------------------------------------------------------------
# balances and topology
# ------------------------------------------------------------------------------------------------------------
def neuron_balances(W1, W2) -> np.ndarray:
    """c_k = ||w_k||^2 - ||a_k||^2 for each hidden neuron k (paper Eq. (12)), conserved by gradient flow.

    W1: (l, d) input weights (row k is w_k); W2: (e, l) output weights (column k is a_k), or a length-l vector
    when e = 1. Computed as (||w_k|| - ||a_k||)(||w_k|| + ||a_k||) from overflow-safe norms, so huge weights give
    a signed (possibly infinite) balance, never NaN."""
    W1, W2 = _weights(W1, W2)
    nw, na = _norms(W1, 1), _norms(W2, 0)
    with np.errstate(over="ignore"):
        return (nw - na) * (nw + na)


def poincare_polynomial(d, e, c, *, bias=False) -> list[int]:
    """Coefficients (lowest degree first) of the Poincare polynomial of H(c) (Thm 1, Kunneth):

        P(x) = (1 + x^{d-1})^{l+} (1 + x^{e-1})^{l-},

    l+ / l- the numbers of positive / negative balances c_k (zero balances give contractible cones, factor 1;
    S^0 has P = 2, so d = 1 or e = 1 contributes factors 2). Exact Python integers. ``bias=True``: the network
    with biases of App. E, where (w_k, b_k) in R^{d+1} plays the role of w_k, so
    P(x) = (1 + x^d)^{l+} (1 + x^{e-1})^{l-} (Prop. 6; the output bias adds a factor R^e, P = 1)."""
    d, e = _size("d", d), _size("e", e)
    d += _bias(bias)
    lp, lm, _ = _signs(_balances("c", c))
    poly = [1]
    for deg, count in ((d - 1, lp), (e - 1, lm)):
        factor = [0] * (deg + 1)
        factor[0] += 1
        factor[deg] += 1
        for _ in range(count):
            out = [0] * (len(poly) + deg)
            for i, p in enumerate(poly):
                if p:
                    for j, f in enumerate(factor):
                        out[i + j] += p * f
            poly = out
    return poly


def betti_numbers(d, e, c, *, bias=False) -> tuple[int, ...]:
    """The Betti numbers b_0, b_1, ..., b_top of H(c): the coefficients of :func:`poincare_polynomial` (Thm 1;
    with ``bias=True`` Prop. 6 of App. E, d replaced by d + 1)."""
    return tuple(poincare_polynomial(d, e, c, bias=bias))


def n_components(d, e, c, *, bias=False) -> int:
    """b_0(H(c)), the number of connected components (Cor. 1): 1 if d > 1 and e > 1; 2^{l-} if e = 1 < d;
    2^{l+} if d = 1 < e; 2^{l+ + l-} if d = e = 1. (Written out, not read off Thm 1, so the two can be
    compared.) ``bias=True`` (App. E, Cor. 4): 1 if e > 1 and 2^{l-} if e = 1, for every d >= 1 (the input side
    has dimension d + 1 >= 2, so a single input no longer disconnects)."""
    d, e = _size("d", d), _size("e", e)
    lp, lm, _ = _signs(_balances("c", c))
    if _bias(bias):
        return 1 if e > 1 else 2 ** lm
    if d > 1 and e > 1:
        return 1
    if e == 1 and d > 1:
        return 2 ** lm
    if d == 1 and e > 1:
        return 2 ** lp
    return 2 ** (lp + lm)


def n_effective_components(d, e, c, *, bias=False) -> int:
    """Number of effective components of H(c) (Def. 2): components identified up to rescalings and
    permutations of neurons. Thm 2 / Cor. 3 (e = 1 < d): l- + 1, the possible sums of the l- pathological
    output signs. By the symmetric argument (the roles of w and a exchanged) d = 1 < e gives l+ + 1; d = e = 1
    gives (l+ + 1)(l- + 1) (the multiset of the signs of w over the positive neurons and of a over the negative
    ones, each invariant under rescaling); d, e > 1 gives 1 (H(c) is connected). ``bias=True`` (App. E): the
    rescaling also scales b_k, so d + 1 >= 2 takes the place of d: l- + 1 if e = 1, else 1."""
    d, e = _size("d", d), _size("e", e)
    d += _bias(bias)
    lp, lm, _ = _signs(_balances("c", c))
    if d > 1 and e > 1:
        return 1
    if e == 1 and d > 1:
        return lm + 1
    if d == 1 and e > 1:
        return lp + 1
    return (lp + 1) * (lm + 1)


def pathological(W1, W2) -> np.ndarray:
    """Boolean mask of the pathological neurons, ||a_k|| > ||w_k|| (c_k < 0; Cor. 2). With e = 1 each of them
    splits H(c) in two (the sign of a_k, Prop. 3)."""
    W1, W2 = _weights(W1, W2)
    return _norms(W2, 0) > _norms(W1, 1)


def rescale_to(W1, W2, c):
    """Rescale neuron k, (w_k, a_k) -> (s_k w_k, a_k / s_k) with s_k > 0, onto the quadric
    ||w||^2 - ||a||^2 = c_k (Prop. 4, App. D.5). The function f is unchanged (positive homogeneity).

    s_k^2 is the positive root of ||w||^2 u^2 - c_k u - ||a||^2 = 0, computed without cancellation:
    s_k = sqrt((c_k + r) / 2) / ||w|| for c_k >= 0 and sqrt(2) ||a|| / sqrt(r - c_k) for c_k < 0, with
    r = sqrt(c_k^2 + 4 ||w||^2 ||a||^2). Degenerate neurons (App. D.5): w_k = 0 reaches only c_k < 0, a_k = 0
    only c_k > 0, w_k = a_k = 0 only c_k = 0 (kept as is); otherwise ValueError naming the neuron.
    ``c``: a scalar or one value per neuron. Returns (W1', W2') with the shapes given (a 1-D W2 stays 1-D)."""
    one_d = np.ndim(W2) == 1
    W1, W2 = _weights(W1, W2)
    l = W1.shape[0]
    c = _balances("c", c, l)
    nw, na = _norms(W1, 1), _norms(W2, 0)
    for k in range(l):
        if nw[k] == 0 and na[k] == 0 and c[k] != 0:
            raise ValueError(f"neuron {k} has w_{k} = 0 and a_{k} = 0: it lies only on the quadric c = 0, "
                             f"not c[{k}] = {c[k]!r}")
        if nw[k] == 0 and na[k] > 0 and c[k] >= 0:
            raise ValueError(f"neuron {k} has w_{k} = 0: it can be rescaled only onto c < 0, not c[{k}] = {c[k]!r}")
        if na[k] == 0 and nw[k] > 0 and c[k] <= 0:
            raise ValueError(f"neuron {k} has a_{k} = 0: it can be rescaled only onto c > 0, not c[{k}] = {c[k]!r}")
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        r = np.hypot(c, 2.0 * nw * na)
        pos = np.sqrt((c + r) / 2.0) / np.where(nw > 0, nw, 1.0)
        neg = np.sqrt(2.0) * na / np.sqrt(np.where(r - c > 0, r - c, 1.0))
        s = np.where(c >= 0, pos, neg)
    s = np.where((nw == 0) & (na == 0), 1.0, s)
    W1n, W2n = W1 * s[:, None], W2 / s[None, :]
    return W1n, (W2n[0] if one_d else W2n)


# ------------------------------------------------------------------------------------------------------------
# App. F
# ------------------------------------------------------------------------------------------------------------
def obstruction_probability(d, l, scheme="kaiming"):
    """P[at least one pathological neuron] at initialization with i.i.d. Gaussian weights, e = 1 (App. F):

        P = 1 - (1 - p)^l,   p = P[a^2 > ||w||^2] = 1 - F_{1,d}(d s_w^2 / s_a^2),

    since a^2 / s_a^2 ~ chi2_1 and ||w||^2 / s_w^2 ~ chi2_d make (a^2/s_a^2) / (||w||^2/(d s_w^2)) ~ F(1, d).
    Kaiming normal (s_w^2 = 2/d, s_a^2 = 2/l): the argument is l; Xavier normal (s_w^2 = 2/(d+l),
    s_a^2 = 2/(l+1)): d(l+1)/(d+l). ``d``, ``l``: integers >= 1 or integer arrays (broadcast). Returns a float or an
    array; computed as -expm1(l log1p(-p)) with p from the survival function, so tiny probabilities keep their
    digits."""
    if scheme not in _SCHEMES:
        raise ValueError(f"scheme must be one of {list(_SCHEMES)}, got {scheme!r}")
    arrays = []
    for name, v in (("d", d), ("l", l)):
        a = np.asarray(v)
        if a.dtype == bool or not np.issubdtype(a.dtype, np.integer):
            if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
                a = a.astype(np.int64)
            else:
                raise ValueError(f"{name} must be an integer >= 1 or an array of them, got {v!r}")
        if np.any(a < 1):
            raise ValueError(f"{name} must be an integer >= 1 or an array of them, got {v!r}")
        arrays.append(a.astype(float))
    dd, ll = np.broadcast_arrays(*arrays)
    arg = ll if scheme == "kaiming" else dd * (ll + 1.0) / (dd + ll)
    p = stats.f.sf(arg, 1.0, dd)
    out = -np.expm1(ll * np.log1p(-p))
    return float(out) if out.ndim == 0 else out
