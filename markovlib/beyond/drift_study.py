"""The closing chapter's prediction study (``book/closing``): which initializations are judged, for how long
training runs, and up to which step size a theorem's predicted end still demonstrably holds.

The theorems of the three parts (Thm 2 of "Local to Global", Thm 3.1 of "Get rich quick", the sign rule of the
topology paper's balances) predict the limit t -> infinity of gradient flow, so an initialization is judged only
once its run has one: :func:`gd_converged` (GD at step h has a gradient norm below ``conv_tol`` by ``t_end``),
:func:`training_time` (the time doubled until half the runs have converged) and :func:`draw_until` (draw until
``n`` initializations are accepted, counting how many were drawn). :func:`largest_holding` reads off the largest
grid value at which the count of agreeing initializations clears a rate with its one-sided Wilson lower end.
"""
from __future__ import annotations

import numpy as np

from ..book.inference import wilson_interval, wilson_lower_z
from ..numerics import checks
from .conservation import run_optimizer


def _first_column(th):
    return th[:, :1]


def gd_converged(grad, theta, h, t_end, conv_tol):
    """Per row of ``theta``: GD at step ``h`` for round(t_end / h) steps did not diverge and ends with
    ||grad L|| < ``conv_tol``."""
    h, t_end = checks.positive_real("h", h), checks.positive_real("t_end", t_end)
    conv_tol = checks.positive_real("conv_tol", conv_tol)
    run = run_optimizer(grad, theta, h, int(round(t_end / h)), quantity=_first_column, optimizer="gd")
    with np.errstate(over="ignore", invalid="ignore"):
        return ~run.diverged & (np.linalg.norm(grad(run.theta[-1]), axis=1) < conv_tol)


def training_time(grad, theta, h, t0, conv_tol, doublings=5):
    """The smallest t0 2^k (k <= ``doublings``) by which GD at step ``h`` has converged (:func:`gd_converged`'s
    rule) for at least half of the rows of ``theta``; the runs continue from where the shorter time left them.
    Raises ValueError when none does (the chains near the edge of Part I's range need up to 16 times ``t0``)."""
    h, t0 = checks.positive_real("h", h), checks.positive_real("t0", t0)
    conv_tol = checks.positive_real("conv_tol", conv_tol)
    doublings = checks.nonnegative_int("doublings", doublings)
    cur, t = theta, 0.0
    for k in range(doublings + 1):
        run = run_optimizer(grad, cur, h, int(round((t0 * 2**k - t) / h)), quantity=_first_column, optimizer="gd")
        cur, t = run.theta[-1], t0 * 2**k
        with np.errstate(over="ignore", invalid="ignore"):
            if np.mean(~run.diverged & (np.linalg.norm(grad(cur), axis=1) < conv_tol)) >= 0.5:
                return t
    raise ValueError(f"t0 = {t0:g} is too short: GD at h = {h} has not converged for half of the initializations "
                     f"by t = {t:g}")


def draw_until(n, draw, keep, what, rounds=20):
    """The first ``n`` rows of successive ``draw(n)`` (rounds of n) that ``keep(theta)`` accepts, and how many rows
    were drawn up to the n-th accepted one (so every claim counts over exactly n initializations). Raises
    ValueError, naming ``what`` was looked for, when ``rounds`` rounds do not give n."""
    n = checks.positive_int("n", n)
    rounds = checks.positive_int("rounds", rounds)
    out, drawn = [], 0
    for _ in range(rounds):
        th = draw(n)
        ok = np.asarray(keep(th), dtype=bool)
        need = n - len(out)
        if ok.sum() >= need:
            last = int(np.flatnonzero(ok)[need - 1])
            out.extend(th[:last + 1][ok[:last + 1]])
            return np.array(out), drawn + last + 1
        out.extend(th[ok])
        drawn += len(th)
    raise ValueError(f"n = {n}: fewer than {n} of {drawn} drawn initializations are {what}: lengthen the training "
                     f"time")


def largest_holding(counts, n, rate, z):
    """The largest key of ``counts`` (grid value -> count of agreeing initializations out of ``n``) whose Wilson
    lower end at ``z`` standard deviations exceeds ``rate``; None when no key does."""
    n = checks.positive_int("n", n)
    rate = float(checks.finite_array("rate", rate))
    z = checks.positive_real("z", z)
    if not 0 <= rate < 1:
        raise ValueError(f"rate must lie in [0, 1), got {rate!r}")
    ok = [key for key, k in counts.items() if float(wilson_interval(k, n, z)[0]) > rate]
    return max(ok) if ok else None


def largest_text(values, names) -> str:
    """``"v (name), ..."`` for the largest holding values (None prints as "no grid value")."""
    return ", ".join(f"{v if v is not None else 'no grid value'} ({name})" for v, name in zip(values, names))


def fewest_inits(rate, alpha, family):
    """The fewest initializations n for which an all-agreeing count n/n clears ``rate`` with its one-sided Wilson
    lower end at family-wise error ``alpha`` over ``family`` cells (Bonferroni): below it no cell of the grid can
    show that a prediction holds."""
    rate = float(checks.finite_array("rate", rate))
    if not 0 <= rate < 1:
        raise ValueError(f"rate must lie in [0, 1), got {rate!r}")
    z = wilson_lower_z(alpha, checks.positive_int("family", family))
    return next(n for n in range(1, 10**7) if float(wilson_interval(n, n, z)[0]) > rate)
