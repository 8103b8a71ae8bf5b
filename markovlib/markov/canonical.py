"""The canonical low-rank model of Sec. 3 and App. B-E, as vectorized numpy functions.

With rank-one weights along a unit direction alpha, the single-layer transformer's logit at position n is

    logit_n = c x_n + beta,    c(e, w, a) = e^2 (1 + a e^2)(1 + 2 w|w|),    beta = b - e^2 (1 + a e^2) / 2

(App. B/C for a = 0; the attention scalar a of Sec. 4.1 / App. G multiplies e^2 by 1 + a e^2). Lemma 2 (logistic
form): the loss is E[ l((2 x_{n+1} - 1)(c x_n + beta)) ] with l(z) = log(1 + e^{-z}) and (x_n, x_{n+1}) drawn
from (pi, P). Everything below depends on the parameters only through (c, beta); Lemma 5 minimizes over beta in
closed form, giving the reduced loss L(e, w) = g(c(e, w)).

Every function broadcasts over array arguments for (e, w, a, b); (p, q) are scalars.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..numerics import checks
from .chain import MarkovChain

W_SADDLE = -1.0 / np.sqrt(2.0)  # 1 + 2 w|w| = 0 here: the saddle of Thm 1 sits at (0, W_SADDLE)


def is_iid(p, q) -> bool:
    """p + q = 1 up to rounding: i.i.d. data, c* = 0, both yardsticks coincide and every critical point is global."""
    return abs(p + q - 1.0) < 1e-12


def check_pq(p, q):
    """(p, q) validated as probabilities in (0, 1) (ValueError naming p or q otherwise)."""
    return checks.probability("p", p), checks.probability("q", q)


def softplus(z):
    """log(1 + e^z), stable for any finite z."""
    return np.logaddexp(0.0, z)


def sigmoid(z):
    """1 / (1 + e^-z) without overflow warnings."""
    z = np.asarray(z, dtype=float)
    out = np.exp(-np.logaddexp(0.0, -z))
    return out[()] if out.ndim == 0 else out


def feed_forward_factor(w):
    """m(w) = 1 + 2 w|w|, the feed-forward factor (App. C)."""
    return 1.0 + 2.0 * w * np.abs(w)


# Unchecked kernels (suffix _unchecked): the validating functions below check their arguments once and call these;
# energy, flow and attention call them with arguments they have already validated. Same formulas, no checks.
def pre_coefficient_unchecked(e, a):
    """f(e, a) = e^2 (1 + a e^2) (App. G)."""
    e2 = e * e
    return e2 * (1.0 + a * e2)


def coefficient_unchecked(e, w, a=0.0):
    """c(e, w, a) = f(e, a) m(w), unchecked."""
    return pre_coefficient_unchecked(e, a) * feed_forward_factor(w)


def c_star_unchecked(p, q):
    """c* = log((1-p)(1-q)/(pq)) for validated (p, q)."""
    return float(np.log1p(-p) + np.log1p(-q) - np.log(p) - np.log(q))


def coefficient(e, w, a=0.0):
    """c(e, w, a) = e^2 (1 + a e^2)(1 + 2 w|w|): the coefficient of x_n in the logit (App. C; App. G for a)."""
    e, w, a = (checks.finite_array(n, v) for n, v in (("e", e), ("w", w), ("a", a)))
    return coefficient_unchecked(e, w, a)


def w_on_level_set(c0, e):
    """The w with c(e, w) = e^2 (1 + 2 w|w|) = c0 (App. C): w = sign(t) sqrt(|t| / 2), t = c0 / e^2 - 1. Every
    c0 is reached for every e != 0, since w -> 1 + 2 w|w| is a bijection of the real line."""
    c0, e = checks.finite_array("c0", c0), checks.finite_array("e", e)
    if np.any(e == 0):
        raise ValueError("e must be nonzero (c = 0 for every w on the w-axis)")
    t = c0 / (e * e) - 1
    out = np.sign(t) * np.sqrt(np.abs(t) / 2)
    return out[()] if np.ndim(out) == 0 else out


def c_star(p, q):
    """The optimal coefficient c* = log((1-p)(1-q)/(pq)) (then sigma(beta*) = p, sigma(c*+beta*) = 1-q)."""
    return c_star_unchecked(*check_pq(p, q))


def optimal_beta(c, p, q):
    """beta*(c) = log(2p / ((q - p) + sqrt((q - p)^2 + 4pq e^c))), Lemma 5, evaluated in the log domain.

    The textbook form overflows once e^c does (c > ~709). Write D = (q - p) + S with S = sqrt((q-p)^2 + 4pq e^c);
    log S = logaddexp(2 log|q - p|, log 4pq + c) / 2. For q >= p, log D = logaddexp(log(q - p), log S); for q < p
    the sum cancels, and D = 4pq e^c / (S + (p - q)) is used instead.
    """
    p, q = check_pq(p, q)
    return optimal_beta_unchecked(checks.finite_array("c", c), p, q)


def optimal_beta_unchecked(c, p, q):
    """beta*(c) of Lemma 5 (see :func:`optimal_beta`) for validated arguments."""
    d = q - p
    log4pq = np.log(4 * p * q)
    with np.errstate(divide="ignore"):
        log_abs_d = np.log(abs(d)) if d != 0 else -np.inf
    log_s = 0.5 * np.logaddexp(2 * log_abs_d, log4pq + c)
    if d >= 0:
        log_den = np.logaddexp(log_abs_d, log_s)
    else:
        log_den = log4pq + c - np.logaddexp(log_s, log_abs_d)
    out = np.log(2 * p) - log_den
    return out[()] if np.ndim(out) == 0 else out


def optimal_bias(e, w, p, q, a=0.0):
    """b*(e, w) = e^2 (1 + a e^2)/2 + beta*(c(e, w, a))  (Lemma 5)."""
    p, q = check_pq(p, q)
    e, w, a = (checks.finite_array(n, v) for n, v in (("e", e), ("w", w), ("a", a)))
    return pre_coefficient_unchecked(e, a) / 2.0 + optimal_beta_unchecked(coefficient_unchecked(e, w, a), p, q)


def logistic_loss(c, beta, p, q):
    """Lemma 2: E[l((2x' - 1)(c x + beta))] with x ~ pi, x' | x ~ P, l(z) = log(1 + e^-z). Stable."""
    p, q = check_pq(p, q)
    return logistic_loss_unchecked(checks.finite_array("c", c), checks.finite_array("beta", beta), p, q)


def logistic_loss_unchecked(c, beta, p, q):
    """Lemma 2's loss (see :func:`logistic_loss`) for validated arguments."""
    pi0, pi1 = q / (p + q), p / (p + q)
    from_0 = p * softplus(-beta) + (1 - p) * softplus(beta)  # x = 0: next is 1 with prob. p
    from_1 = (1 - q) * softplus(-(c + beta)) + q * softplus(c + beta)  # x = 1: next is 1 with prob. 1 - q
    return pi0 * from_0 + pi1 * from_1


def reduced_loss(c, p, q):
    """g(c) = min_beta E[l(...)] = logistic_loss(c, beta*(c)); convex in c, minimum c* (Lemma 5)."""
    p, q = check_pq(p, q)
    return reduced_loss_unchecked(checks.finite_array("c", c), p, q)


def reduced_loss_unchecked(c, p, q):
    """g(c), Lemma 5 (see :func:`reduced_loss`) for validated arguments."""
    return logistic_loss_unchecked(c, optimal_beta_unchecked(c, p, q), p, q)


def reduced_loss_grad(c, p, q):
    """g'(c) = pi1 (sigma(c + beta*(c)) - (1 - q)) by the envelope theorem (Lemma 5)."""
    p, q = check_pq(p, q)
    return reduced_loss_grad_unchecked(checks.finite_array("c", c), p, q)


def reduced_loss_grad_unchecked(c, p, q):
    """g'(c), Lemma 5 (see :func:`reduced_loss_grad`) for validated arguments."""
    return p / (p + q) * (sigmoid(c + optimal_beta_unchecked(c, p, q)) - (1 - q))


def reduced_loss_hess(c, p, q):
    """g''(c) = pi1 s1 q s0 / (q s0 + p s1), s0 = sigma'(beta*), s1 = sigma'(c + beta*) (implicit function thm)."""
    p, q = check_pq(p, q)
    return reduced_loss_hess_unchecked(checks.finite_array("c", c), p, q)


def reduced_loss_hess_unchecked(c, p, q):
    """g''(c), Lemma 5 (see :func:`reduced_loss_hess`) for validated arguments."""
    beta = optimal_beta_unchecked(c, p, q)
    s0 = sigmoid(beta) * sigmoid(-beta)
    s1 = sigmoid(c + beta) * sigmoid(-(c + beta))
    return p / (p + q) * s1 * q * s0 / (q * s0 + p * s1)


def loss(e, w, p, q, a=0.0, b=None):
    """The canonical loss. ``b=None``: the reduced loss L(e, w, a) = g(c(e, w, a)) (optimal bias, Lemma 5);
    otherwise the loss at bias b with beta = b - e^2(1 + a e^2)/2 (Lemma 2)."""
    p, q = check_pq(p, q)
    e, w, a = (checks.finite_array(n, v) for n, v in (("e", e), ("w", w), ("a", a)))
    c = coefficient_unchecked(e, w, a)
    if b is None:
        return reduced_loss_unchecked(c, p, q)
    return logistic_loss_unchecked(c, checks.finite_array("b", b) - pre_coefficient_unchecked(e, a) / 2.0, p, q)


def coefficient_grad_unchecked(e, w, a):
    """Gradient of c(e, w, a) = e^2 (1 + a e^2) m(w): (dc/de, dc/dw, dc/da)."""
    e2 = e * e
    m = feed_forward_factor(w)
    return (2 * e + 4 * a * e2 * e) * m, e2 * (1 + a * e2) * 4 * np.abs(w), e2 * e2 * m


def grad(e, w, p, q, a=None, b=None):
    """Gradient of the canonical loss (Lemmas 3, 7; App. G for a).

    Without b (optimal bias): dL/dtheta = g'(c) dc/dtheta, i.e. dL/de = g'(c) 2e(1 + 2w|w|) and
    dL/dw = g'(c) 4|w| e^2 at a = 0. Returns (dL/de, dL/dw), plus dL/da when ``a`` is given, plus dL/db when ``b``
    is given (then the partial derivatives of the loss at that bias, Lemma 3).
    """
    p, q = check_pq(p, q)
    has_a = a is not None
    e, w = checks.finite_array("e", e), checks.finite_array("w", w)
    a_ = checks.finite_array("a", a) if has_a else np.zeros(())
    e, w, a_ = np.broadcast_arrays(e, w, a_)
    c = coefficient_unchecked(e, w, a_)
    dc = coefficient_grad_unchecked(e, w, a_)
    if b is None:
        gp = reduced_loss_grad_unchecked(c, p, q)
        out = [gp * dc[0], gp * dc[1]] + ([gp * dc[2]] if has_a else [])
        return tuple(out)
    b = checks.finite_array("b", b)
    e2 = e * e
    beta = b - pre_coefficient_unchecked(e, a_) / 2
    pi0, pi1 = q / (p + q), p / (p + q)
    Fc = pi1 * (sigmoid(c + beta) - (1 - q))  # dL/dc at fixed beta
    Fb = pi0 * (sigmoid(beta) - p) + Fc  # dL/dbeta
    dbeta = (-(e + 2 * a_ * e2 * e), 0.0, -e2 * e2 / 2)  # d beta / d(e, w, a)
    out = [Fc * dc[0] + Fb * dbeta[0], Fc * dc[1]]
    if has_a:
        out.append(Fc * dc[2] + Fb * dbeta[2])
    out.append(Fb * np.ones_like(c))
    return tuple(out)


def hessian(e, w, p, q, b=None):
    """Hessian of the canonical loss at a = 0 (Lemma 4 with bias, Lemmas 7-8 without).

    ``b=None``: the 2 x 2 Hessian of L(e, w) = g(c): H = g''(c) grad c grad c^T + g'(c) hess c; on the w-axis this
    is diag(2 g'(0)(1 + 2w|w|), 0). With ``b``: the 3 x 3 Hessian in (e, w, b). Returns shape (..., 2, 2) or
    (..., 3, 3). (d^2 c / dw^2 = 4 e^2 sign(w), which jumps at w = 0; there the value 0 is used.)
    """
    p, q = check_pq(p, q)
    e, w = np.broadcast_arrays(checks.finite_array("e", e), checks.finite_array("w", w))
    m = feed_forward_factor(w)
    c = coefficient_unchecked(e, w)
    gc = np.stack([2 * e * m, 4 * e * e * np.abs(w)], axis=-1)
    hc = np.stack([np.stack([2 * m, 8 * e * np.abs(w)], -1),
                   np.stack([8 * e * np.abs(w), 4 * e * e * np.sign(w)], -1)], -2)
    if b is None:
        g1, g2 = reduced_loss_grad_unchecked(c, p, q), reduced_loss_hess_unchecked(c, p, q)
        return g2[..., None, None] * gc[..., :, None] * gc[..., None, :] + g1[..., None, None] * hc
    b = np.broadcast_to(checks.finite_array("b", b), e.shape)
    beta = b - e * e / 2
    pi0, pi1 = q / (p + q), p / (p + q)
    s0 = sigmoid(beta) * sigmoid(-beta)
    s1 = sigmoid(c + beta) * sigmoid(-(c + beta))
    Fc = pi1 * (sigmoid(c + beta) - (1 - q))
    Fb = pi0 * (sigmoid(beta) - p) + Fc
    Fcc, Fcb, Fbb = pi1 * s1, pi1 * s1, pi0 * s0 + pi1 * s1
    zeros = np.zeros_like(e)
    gc3 = np.stack([gc[..., 0], gc[..., 1], zeros], -1)
    gb3 = np.stack([-e, zeros, np.ones_like(e)], -1)
    hc3 = np.zeros(e.shape + (3, 3))
    hc3[..., :2, :2] = hc
    hb3 = np.zeros(e.shape + (3, 3))
    hb3[..., 0, 0] = -1.0
    outer = lambda u, v: u[..., :, None] * v[..., None, :]  # noqa: E731
    return (Fcc[..., None, None] * outer(gc3, gc3) + Fcb[..., None, None] * (outer(gc3, gb3) + outer(gb3, gc3))
            + Fbb[..., None, None] * outer(gb3, gb3) + Fc[..., None, None] * hc3 + Fb[..., None, None] * hb3)


@dataclass(frozen=True)
class CriticalSets:
    """The critical points of L(e, w) (Thm 1; Thm 6/7 with the optimal bias), for one (p, q).

    - global minima Gamma* = {e^2 (1 + 2w|w|) = c*}, loss = entropy rate;
    - the w-axis {e = 0}: every point critical, loss = H(pi); split at W_SADDLE into local minima and maxima;
    - the saddle (0, -1/sqrt 2). For p + q = 1, c* = 0 and every critical point is a global minimum.
    """

    p: float
    q: float
    c_star: float
    global_min_loss: float  # entropy rate
    axis_loss: float  # H(pi)
    local_min_w: tuple  # interval of w on the w-axis, (lo, hi); empty for p + q = 1
    local_max_w: tuple
    saddle: tuple  # (e, w) point; None for p + q = 1

    def global_min_e(self, w):
        """e >= 0 on Gamma* over the given w: sqrt(c* / (1 + 2w|w|)), NaN where Gamma* has no point."""
        w = np.asarray(w, dtype=float)
        m = feed_forward_factor(w)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(m != 0, self.c_star / m, np.nan)
            out = np.where(r >= 0, np.sqrt(np.abs(r)), np.nan)
        if self.c_star == 0:
            out = np.where(m == 0, np.nan, 0.0)
        return out


def critical_sets(p, q) -> CriticalSets:
    """The loci of Thm 1 with their loss values."""
    p, q = check_pq(p, q)
    chain = MarkovChain(p, q)
    cs = c_star_unchecked(p, q)
    if is_iid(p, q):
        lmin = lmax = ()
    elif p + q > 1:
        lmin, lmax = (W_SADDLE, np.inf), (-np.inf, W_SADDLE)
    else:
        lmin, lmax = (-np.inf, W_SADDLE), (W_SADDLE, np.inf)
    return CriticalSets(p=p, q=q, c_star=cs, global_min_loss=chain.entropy_rate, axis_loss=chain.marginal_entropy,
                        local_min_w=lmin, local_max_w=lmax, saddle=None if is_iid(p, q) else (0.0, W_SADDLE))


def classify(e, w, p, q, atol=1e-8, a=None):
    """Classify (e, w) for L(e, w) (Thm 1), or (e, w, a) with the attention scalar (Thm 10): one of
    "global_min", "local_min", "local_max", "saddle" or "regular".

    A point is critical when c = c* (within ``atol``) or e = 0 (|e| <= atol); with ``a`` also on the curve
    Sigma = {1 + 2w|w| = 0, 1 + a e^2 = 0}, a curve of strict saddles. On the w-axis (the plane e = 0), p + q > 1
    gives local minima for w > -1/sqrt 2 and local maxima below; p + q < 1 the reverse; p + q = 1 makes every
    critical point a global minimum (both yardsticks coincide). Broadcasts; returns a str for scalar input, else an
    array of str.
    """
    p, q = check_pq(p, q)
    a = None if a is None else checks.finite_array("a", a)
    return classify_unchecked(checks.finite_array("e", e), checks.finite_array("w", w), p, q, atol, a)


def classify_unchecked(e, w, p, q, atol=1e-8, a=None):
    """:func:`classify` for validated arrays (Thm 1; Thm 10 with ``a``)."""
    a = np.zeros(()) if a is None else a
    e, w, a = np.broadcast_arrays(e, w, a)
    cs = c_star_unchecked(p, q)
    k, m = 1 + a * e * e, feed_forward_factor(w)
    c = coefficient_unchecked(e, w, a)
    on_axis = np.abs(e) <= atol
    on_sigma = ~on_axis & (np.abs(m) <= atol) & (np.abs(k) <= atol)
    at_gamma = ~on_axis & (np.abs(c - cs) <= atol * max(1.0, abs(cs)))
    out = np.full(e.shape, "regular", dtype=object)
    if is_iid(p, q):
        out[on_axis | on_sigma | at_gamma] = "global_min"
    else:
        s = 1.0 if p + q > 1 else -1.0
        above = s * (w - W_SADDLE)
        out[on_axis & (above > atol)] = "local_min"
        out[on_axis & (above < -atol)] = "local_max"
        out[on_axis & (np.abs(w - W_SADDLE) <= atol)] = "saddle"
        out[on_sigma] = "saddle"
        out[at_gamma] = "global_min"
    out = out.astype(str)
    return str(out[()]) if out.ndim == 0 else out
