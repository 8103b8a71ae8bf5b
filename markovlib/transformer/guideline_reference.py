"""Independent reference: the canonical model's reduced gradient flow, integrated to its end state without the
energy or the basin rules of the paper (Thm 2, Thm 8), for the chapter init_guideline.

The reduced loss is g(c) = min over beta of the logistic loss of Lemma 2, c = e^2 (1 + 2 w|w|). By the envelope
theorem g'(c) = pi_1 (sigma(c + beta*(c)) - (1 - q)), where e^{beta*} solves the quadratic
q e^c u^2 + (q - p) u - p = 0 of the optimal bias (Lemma 5), and the flow is
(de/dt, dw/dt) = -g'(c) (2e(1 + 2w|w|), 4|w| e^2). Nothing here calls the markovlib functions these results check
(``markovlib.markov.energy.predict_limit``, ``markovlib.markov.canonical``).

- :func:`reduced_grad`: g'(c), written in logs so that it neither overflows nor cancels.
- :func:`reduced_loss_numeric`: g(c) by a bounded scalar search over beta.
- :func:`envelope_error`: the largest difference of :func:`reduced_grad` to a central difference of
  :func:`reduced_loss_numeric`.
- :func:`flow_end`: "global", "trapped" or "unresolved" per initial point, by RK4 in (log|e|, log|w|).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import expit, log_expit

from ..numerics import checks


def _chain(p, q):
    return checks.probability("p", p), checks.probability("q", q)


def reduced_grad(c, p, q):
    """Independent reference: g'(c) by the envelope theorem (see the module), with e^(c + beta*) from the quadratic
    of the optimal bias (Lemma 5), in logs; p, q in (0, 1)."""
    p, q = _chain(p, q)
    c = np.asarray(c, dtype=float)
    log4pq = math.log(4 * p * q)
    log_root = 0.5 * np.logaddexp(2 * math.log(abs(q - p)) if q != p else -np.inf, log4pq + c)
    if q >= p:  # (q - p) + sqrt(D) without cancellation
        log_den = np.logaddexp(math.log(q - p) if q > p else -np.inf, log_root)
    else:  # (q - p) + sqrt(D) = 4 p q e^c / (sqrt(D) + (p - q))
        log_den = log4pq + c - np.logaddexp(log_root, math.log(p - q))
    return p / (p + q) * (expit(math.log(2 * p) + c - log_den) - (1 - q))


def reduced_loss_numeric(c, p, q):
    """Independent reference: g(c) = min over beta of the logistic loss of Lemma 2, by a bounded scalar search over
    beta in [-60, 60]; c a real number, p, q in (0, 1)."""
    p, q = _chain(p, q)
    c = float(c)
    pi1 = p / (p + q)
    pairs = [((1 - pi1) * (1 - p), 0, -1), ((1 - pi1) * p, 0, 1), (pi1 * q, 1, -1), (pi1 * (1 - q), 1, 1)]

    def loss(b):
        return -sum(w_ * log_expit(s_ * (c * x_ + b)) for w_, x_, s_ in pairs)

    return minimize_scalar(loss, bounds=(-60, 60), method="bounded", options={"xatol": 1e-12}).fun


def envelope_error(chains, cs=(-3.0, -0.5, 0.0, 0.5, 3.0), h=1e-4) -> float:
    """The largest |g'(c) - (g(c + h) - g(c - h)) / 2h| over ``chains`` ((p, q) pairs) and ``cs``: the envelope
    formula of :func:`reduced_grad` against the numerically minimized loss."""
    h = checks.positive_real("h", h)
    chains = [tuple(pq) for pq in chains]
    if not chains or any(len(pq) != 2 for pq in chains):
        raise ValueError(f"chains must be a non-empty list of (p, q) pairs, got {chains!r}")
    return max(abs(float(reduced_grad(c, *pq)) - (reduced_loss_numeric(c + h, *pq)
                                                  - reduced_loss_numeric(c - h, *pq)) / (2 * h))
               for pq in chains for c in cs)


def flow_end(e0, w0, p, q, t_end=1000.0, dt=1.0, u_stop=-12.0):
    """Independent reference: integrate the canonical gradient flow (see the module) from (e0, w0) and return
    "global" (c within 5 % of c*), "trapped" (|e| < e^u_stop and shrinking: the w-axis, loss H(pi)) or "unresolved"
    per point. Classical RK4 in (log|e|, log|w|), after the positive time change dt -> dt (1 + |c|)/(1 + |grad c|^2)
    (same trajectories and limits). No energy, no basin rule."""
    p, q = _chain(p, q)
    t_end, dt = checks.positive_real("t_end", t_end), checks.positive_real("dt", dt)
    cs = math.log((1 - p) * (1 - q) / (p * q))
    e0, w0 = np.broadcast_arrays(np.asarray(e0, dtype=float), np.asarray(w0, dtype=float))
    u, v, sw = np.log(np.abs(e0)).ravel().copy(), np.log(np.abs(w0)).ravel().copy(), np.sign(w0).ravel()

    def field(u, v, sw):
        e2, w2 = np.exp(2 * u), np.exp(2 * v)
        m = 1 + 2 * sw * w2
        c = e2 * m
        s = -reduced_grad(c, p, q) * (1 + np.abs(c)) / (1 + 4 * e2 * m * m + 16 * w2 * e2 * e2)
        return 2 * m * s, 4 * sw * e2 * s  # (d log|e| / dt, d log|w| / dt) after the time change

    def state(u, v, sw):
        c = np.exp(2 * u) * (1 + 2 * sw * np.exp(2 * v))
        return (u < u_stop) & (field(u, v, sw)[0] < 0), np.abs(c - cs) < 0.05 * abs(cs)

    active = np.arange(u.size)
    for k in range(int(round(t_end / dt))):
        uu, vv, ss = u[active], v[active], sw[active]
        k1 = field(uu, vv, ss)
        k2 = field(uu + dt / 2 * k1[0], vv + dt / 2 * k1[1], ss)
        k3 = field(uu + dt / 2 * k2[0], vv + dt / 2 * k2[1], ss)
        k4 = field(uu + dt * k3[0], vv + dt * k3[1], ss)
        u[active] = uu + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        v[active] = vv + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        if k % 25 == 24:  # points that have settled leave the integration
            trapped, at_global = state(u[active], v[active], sw[active])
            active = active[~(trapped | at_global)]
            if active.size == 0:
                break
    trapped, at_global = state(u, v, sw)
    return np.where(at_global, "global", np.where(trapped, "trapped", "unresolved")).reshape(e0.shape)
