"""Independent reference: the canonical model's formulas written out (reference App. C; the paper's Lemmas 2, 5, 6),
without the markovlib functions they check (``markovlib.markov.canonical``), for the chapter canonical_model.

- :func:`lemma2_rhs`: Lemma 2's logistic form in (c, beta); :func:`dL_dbeta`: its derivative in beta.
- :func:`textbook_beta`: the optimal intercept beta*(c) of Lemma 5 as printed (overflows and cancels).
- :func:`c_star_closed`, :func:`entropy_rate_closed`, :func:`marginal_entropy_closed`: c*, the entropy rate and
  H(pi) written out.
- :func:`bfgs_minimum`: the minimum of Lemma 2's form over (c, beta) jointly, by BFGS with its written-out gradient.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit as sigmoid

from ..numerics import checks
from .chain import binary_entropy


def _chain(p, q):
    return checks.probability("p", p), checks.probability("q", q)


def lemma2_rhs(c, beta, p, q):
    """Independent reference: Lemma 2's right-hand side written out, with l(z) = log(1 + e^-z) = logaddexp(0, -z):
    pi_0 [p l(beta) + (1-p) l(-beta)] + pi_1 [(1-q) l(c + beta) + q l(-c - beta)]."""
    p, q = _chain(p, q)
    a0, a1 = q / (p + q), p / (p + q)

    def ell(z):
        return np.logaddexp(0.0, -z)

    return a0 * (p * ell(beta) + (1 - p) * ell(-beta)) + a1 * ((1 - q) * ell(c + beta) + q * ell(-c - beta))


def dL_dbeta(beta, c, p, q):
    """Independent reference: dL/dbeta of Lemma 2 written out, pi_0 (s(beta) - p) + pi_1 (s(c + beta) - (1 - q))."""
    return q / (p + q) * (sigmoid(beta) - p) + p / (p + q) * (sigmoid(c + beta) - (1 - q))


def textbook_beta(c, p, q):
    """Independent reference: Lemma 5's beta*(c) = log(2p / ((q - p) + sqrt((q - p)^2 + 4pq e^c))) evaluated as
    written (it overflows for large c and cancels for q < p and very negative c; for comparison)."""
    p, q = _chain(p, q)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return np.log(2 * p / ((q - p) + np.sqrt((q - p) ** 2 + 4 * p * q * np.exp(c))))


def c_star_closed(p, q) -> float:
    """Independent reference: c* = log((1-p)(1-q)/(pq)) (Lemma 6)."""
    p, q = _chain(p, q)
    return math.log((1 - p) * (1 - q) / (p * q))


def entropy_rate_closed(p, q) -> float:
    """Independent reference: the entropy rate (q h(p) + p h(q)) / (p + q), h the binary entropy in nats."""
    p, q = _chain(p, q)
    return float((q * binary_entropy(p) + p * binary_entropy(q)) / (p + q))


def marginal_entropy_closed(p, q) -> float:
    """Independent reference: H(pi) = h(pi_1), pi_1 = p / (p + q)."""
    p, q = _chain(p, q)
    return float(binary_entropy(p / (p + q)))


def bfgs_minimum(p, q):
    """Independent reference: BFGS on :func:`lemma2_rhs` jointly in (c, beta) from (0, 0), with the gradient
    (pi_1 (s(c + beta) - (1 - q)), dL/dbeta) written out (gtol 1e-12). Returns (argmin c, minimum value)."""
    p, q = _chain(p, q)

    def jac(x):
        return np.array([p / (p + q) * (sigmoid(x[0] + x[1]) - (1 - q)), dL_dbeta(x[1], x[0], p, q)])

    res = minimize(lambda x: float(lemma2_rhs(x[0], x[1], p, q)), x0=np.zeros(2), jac=jac, method="BFGS",
                   options={"gtol": 1e-12})
    return float(res.x[0]), float(res.fun)
