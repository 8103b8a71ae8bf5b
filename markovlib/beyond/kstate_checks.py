"""The checks of ``book/beyond_two_states`` that are not closed forms: Monte Carlo tolerances of plug-in entropies,
the rounding scale of a gradient that is zero in exact arithmetic, and the read-out of a trained K-state model
against the lumped predictors of the ladder (``multistate.lumped_loss``, Prop. "beyond-prop-ladder").

* :func:`plugin_entropies`, :func:`mc_ratios`: the plug-in entropy of c cells from n draws is low by about
  (c - 1)/2n (Miller-Madow); the tolerance of an estimate is that bias bound plus ``z`` standard errors estimated
  from independent groups of sequences. :func:`mc_z_min` is the Bonferroni quantile (Student t, 9 degrees of freedom,
  10 groups) that keeps the family-wise false-alarm bound of ``n_tests`` such tests at ``alpha``. With ``cond_sd``
  (:func:`transition_log_sd`, a chain whose rows have equal entropies) the conditional estimate's standard error is
  at least the derived cond_sd / sqrt(n) (a martingale sum, below), not only the group estimate, whose 9-degree
  chi-square spread let it fall to 0.38 of the true one (K 6, p 0.1, 400 x 200 symbols: error 2.4 true standard
  errors, 1.2 tolerances).
* :func:`rounding_scale`: tau = 2 gamma_M max(1, max|z0|), gamma_M = M u / (1 - M u), M = N K^N (Higham, Sec. 4.2):
  a floating-point sum of at most M terms whose absolute values add up to at most 2 max(1, max|z0|).
* :func:`lumped_predictor`, :func:`readout`, :func:`best_lumped_tv`: the predictor that resolves a set of states and
  lumps the others, a model's mean predicted law given the current symbol, and their total variation.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import torch

from ..markov.chain import entropy
from ..numerics import checks
from .multistate import symmetric_chain, symmetric_kernel


def plugin_entropies(prev, nxt, n_states):
    """(plug-in H(next | prev), plug-in H of the pooled symbols) from paired samples of the same shape."""
    K = checks.positive_int("n_states", n_states)
    prev, nxt = np.asarray(prev), np.asarray(nxt)
    if prev.shape != nxt.shape or prev.size == 0:
        raise ValueError(f"prev and nxt must be non-empty arrays of the same shape, got {prev.shape}, {nxt.shape}")
    counts = np.zeros((K, K))
    np.add.at(counts, (prev.ravel(), nxt.ravel()), 1)
    joint = counts / counts.sum()
    marg = np.bincount(np.concatenate([prev.ravel(), nxt.ravel()]), minlength=K) / (2 * prev.size)
    return float(entropy(joint.ravel()) - entropy(joint.sum(axis=1))), float(entropy(marg))


def transition_log_sd(kernel):
    """The standard deviation of -log P(x_{t+1} | x_t) given x_t, for a kernel whose rows have equal entropies (then
    it is the same for every x_t, and the plug-in conditional entropy minus the entropy rate is, to first order, the
    mean of n martingale differences of this standard deviation)."""
    P = checks.finite_array("kernel", kernel)
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.min() <= 0:
        raise ValueError(f"kernel must be a square matrix with positive entries, got shape {P.shape}")
    logs = np.log(P)
    H = -(P * logs).sum(axis=1)
    if np.ptp(H) > 1e-12:
        raise ValueError("the rows' entropies differ: the standard error has a term from the marginal's fluctuation")
    return float(np.sqrt(((P * logs**2).sum(axis=1) - H**2).max()))


def mc_ratios(prev, nxt, n_states, want_cond, *, z, want_marg=None, lam=0.0, groups=10, cond_sd=None):
    """|estimate - closed form| / (bias bound + z standard errors) for the plug-in conditional entropy (and, with
    ``want_marg``, the marginal one, whose sample size is shrunk by (1 - |lam|)/(1 + |lam|) for the correlation);
    the standard errors from ``groups`` groups of rows, or, for the conditional entropy and with ``cond_sd``
    (:func:`transition_log_sd`), the larger of the derived cond_sd / sqrt(n) and the group estimate (cond_sd is 0 at
    uniform rows, where the error is second order). Returns (ratios, estimates)."""
    K = checks.positive_int("n_states", n_states)
    z = checks.positive_real("z", z)
    groups = checks.positive_int("groups", groups)
    if groups < 2 or len(prev) < groups:
        raise ValueError(f"groups must be at least 2 and at most the number of rows, got {groups}")
    if not -1 < float(lam) < 1:
        raise ValueError(f"lam must lie in (-1, 1), got {lam!r}")
    n = np.asarray(prev).size
    est = plugin_entropies(prev, nxt, K)
    per_group = np.array([plugin_entropies(a, b, K) for a, b in zip(np.array_split(prev, groups),
                                                                     np.array_split(nxt, groups))])
    se = per_group.std(axis=0, ddof=1) / np.sqrt(groups)
    if cond_sd is None:
        se_cond = se[0]
    elif not (math.isfinite(float(cond_sd)) and float(cond_sd) >= 0):
        raise ValueError(f"cond_sd must be a finite real number >= 0, got {cond_sd!r}")
    else:  # the first-order spread, derived; the group estimate still covers the second-order one (near p*, sd 0)
        se_cond = max(float(cond_sd) / np.sqrt(n), se[0])
    out = [abs(est[0] - want_cond) / ((K * K - 1) / (2 * n) + z * se_cond)]
    if want_marg is not None:
        n_eff = n * (1 - abs(lam)) / (1 + abs(lam))
        out.append(abs(est[1] - want_marg) / ((K - 1) / (2 * n_eff) + z * se[1]))
    return out, est


def mc_z_min(alpha, n_tests):
    """The smallest z for ``n_tests`` two-sided Monte Carlo tests at family-wise false-alarm bound ``alpha``: the
    Student t quantile (9 degrees of freedom) at alpha / (2 n_tests)."""
    from scipy import stats

    alpha = checks.probability("alpha", alpha)
    return float(stats.t(9).isf(alpha / (2 * checks.positive_int("n_tests", n_tests))))


def random_kernel(n_states, rng):
    """A random transition matrix with entries U(0, 1) + 0.2, rows normalized (every entry positive)."""
    K = checks.positive_int("n_states", n_states)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {rng!r}")
    P = rng.random((K, K)) + 0.2
    return P / P.sum(axis=1, keepdims=True)


def rounding_scale(length, n_states, z0_max):
    """tau = 2 gamma_M max(1, z0_max) with M = length n_states^length (module docstring)."""
    M = checks.positive_int("length", length) * checks.positive_int("n_states", n_states) ** length
    z0_max = float(checks.finite_array("z0_max", z0_max))
    u = np.finfo(np.float64).eps / 2
    if M * u >= 1:
        raise ValueError(f"length and n_states give M = {M} terms, too many for gamma_M")
    return 2 * M * u / (1 - M * u) * max(1.0, abs(z0_max))


def largest_gradient(model, chain, length):
    """(exact population loss, the largest |entry| of its gradient over all parameters)."""
    from ..transformer.exact import exact_loss

    loss = exact_loss(model, chain, checks.positive_int("length", length))
    return loss, max(float(g.abs().max()) for g in torch.autograd.grad(loss, list(model.parameters())))


def lumped_predictor(n_states, p, resolved):
    """Rows: the law of x_{n+1} given x_n for the predictor that resolves the states ``resolved`` and lumps the
    others (each lumped row is the mean of the lumped rows of P)."""
    P = symmetric_kernel(n_states, p)
    resolved = set(int(k) for k in resolved)
    if not resolved <= set(range(P.shape[0])):
        raise ValueError(f"resolved must be states in 0..{P.shape[0] - 1}, got {sorted(resolved)}")
    rest = [k for k in range(P.shape[0]) if k not in resolved]
    Q = P.copy()
    if rest:
        Q[rest] = P[rest].mean(axis=0)
    return Q


def readout(model, n_states, p, length, seed, batch=256):
    """The model's mean predicted law of x_{n+1} given x_n = k (rows k), on ``batch`` fresh sequences of the
    symmetric chain (``seed``)."""
    K = checks.positive_int("n_states", n_states)
    x = symmetric_chain(K, p).sample(checks.positive_int("batch", batch), checks.positive_int("length", length) + 1,
                                     seed=checks.nonnegative_int("seed", seed), backend="torch")
    with torch.no_grad():
        prob = torch.softmax(model(x[:, :-1]).double(), dim=-1)
    ctx = x[:, :-1]
    return np.stack([prob[ctx == k].mean(dim=0).numpy() for k in range(K)])


def best_lumped_tv(q_hat, n_states, p, level):
    """min over the resolved sets of ``level`` states of max over rows of the total variation between ``q_hat`` and
    :func:`lumped_predictor`."""
    level = checks.nonnegative_int("level", level)
    q_hat = checks.finite_array("q_hat", q_hat)
    return min(0.5 * np.abs(q_hat - lumped_predictor(n_states, p, S)).sum(axis=1).max()
               for S in itertools.combinations(range(int(n_states)), level))


def tv_text(tv, tol, step=0.01):
    """A trained run's total variation printed coarsely: the bound of the next multiple of ``step`` above it, or at
    3 decimals where that bound would reach the tolerance ``tol``."""
    from ..book.formatting import bound, fixed

    tv = float(checks.finite_array("tv", tv))
    lim = math.ceil(tv / step + 1e-9) * step
    return bound(tv, lim) if lim < tol else fixed(tv, 3)
