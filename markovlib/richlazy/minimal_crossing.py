"""Part II: random problems for the zero crossings of the single neuron (the book's chapter grq_exact_dynamics).

Kunin et al. (NeurIPS 2024), Thm 3.1 and App. A.4.4, for f(x) = a w^T x with eta_a = eta_w = 1 on
L = ||X (a w) - y||^2 / (2n). The chapter checks, on random data, that a crosses zero at most once, only when
L(beta0) > L(0) (the book's extension of Lemma A.1), and that a crossing flow ends at argmin Psi_delta with -beta0
(:mod:`markovlib.richlazy.minimal_limits`). This module draws those problems and initializations, runs a flow given
by the caller (the chapter passes its independent integrator), and evaluates the package's predictions on each
draw. It also draws the general data of App. A.3.1's kernel check.

A flow ``flow(a0, W0, Cs, cs, T)`` takes N initial a (N,), W (N, d), matrices C = X^T X / n (N, d, d), vectors
c = X^T y / n (N, d) and a horizon T, and returns (solution, a(t) (N, m), W(t) (N, d, m), zero crossings of each a)
on m equally spaced times in [0, T].
"""
from __future__ import annotations

import numpy as np

from ..book.inference import wilson_lower_z
from ..numerics import checks
from .minimal_exact import basin_margin, implicit_bias_limit
from .minimal_limits import flow_limit, init_from_product, limit_sign


def max_error(u, v) -> float:
    """max |u - v| over all entries (the max norm of the difference)."""
    return float(np.abs(np.asarray(u, dtype=float) - np.asarray(v, dtype=float)).max())


def crossings_needed(rate: float, family: int = 1, alpha: float = 0.05) -> int:
    """The smallest n for which a count n/n can pass a one-sided Wilson test against ``rate``: with k = n the
    lower end is n / (n + z^2), which exceeds rate iff n > rate z^2 / (1 - rate) (z the one-sided 1 - alpha / family
    quantile). 9 at rate 0.75, family 1."""
    rate = float(rate)
    if not 0 < rate < 1:
        raise ValueError(f"rate must lie in (0, 1), got {rate!r}")
    family = checks.positive_int("family", family)
    z = wilson_lower_z(alpha, family)
    return int(np.floor(rate * z**2 / (1 - rate))) + 1


def _range(name, value, positive=False):
    lo, hi = (float(v) for v in value)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi) or (positive and lo <= 0):
        above = " above 0" if positive else ""
        raise ValueError(f"{name} must be a pair lo <= hi of finite reals{above}, got {value!r}")
    return lo, hi


def random_problem(rng, n, d, *, sv_range=(0.6, 1.4), beta_norm_range=(0.5, 1.5), whitened=False):
    """(X, y, beta_ls, N): X (n x d, rank n <= d) whose X^T X / n has eigenvalues uniform in ``sv_range``
    on a random row space (``whitened``: one such eigenvalue, repeated, so X^T X / n = lambda P_R), y = X beta_ls with
    beta_ls in the row space and ||beta_ls|| uniform in ``beta_norm_range``, and N an orthonormal basis (d x (d - n))
    of the null space. ``rng``: a numpy Generator."""
    n, d = checks.positive_int("n", n), checks.positive_int("d", d)
    if n > d:
        raise ValueError(f"n must be at most d (X has rank n), got n = {n}, d = {d}")
    sv = _range("sv_range", sv_range, positive=True)
    bn = _range("beta_norm_range", beta_norm_range, positive=True)
    U, _ = np.linalg.qr(rng.normal(size=(n, n)))
    V, _ = np.linalg.qr(rng.normal(size=(d, d)))
    ev = np.full(n, rng.uniform(*sv)) if whitened else rng.uniform(*sv, n)
    X = U @ np.diag(np.sqrt(n * ev)) @ V[:, :n].T
    beta_ls = V[:, :n] @ rng.normal(size=n)
    beta_ls *= rng.uniform(*bn) / np.linalg.norm(beta_ls)
    return X, X @ beta_ls, beta_ls, V[:, n:]


def draw_family(rng, n, d, n_prone, n_control, flow, T, settle_tol, *, family=0, delta_range=(-4.0, -1.0),
                sv_range=(0.6, 1.4), beta_norm_range=(0.5, 1.5), whitened=False) -> list[dict]:
    """``n_prone`` crossing-prone draws (c^T beta0 < 0, so L(beta0) > L(0); delta uniform in ``delta_range``) and
    ``n_control`` control draws (L(beta0) < L(0): c^T beta0 > 0 and ||beta0|| a fraction in [0.2, 0.8] of
    2 c^T b / b^T C b along the direction b) on random problems (:func:`random_problem`), each with a random sign of
    a0, integrated together by ``flow`` (module docstring) to T. One dict per draw: the problem (X, y, beta_ls, N),
    the start (beta0, delta, a0, w0), ``prone``, dL0 = L(beta0) - L(0), and from the flow beta_T, ``settled``
    (|beta(T) - beta(0.9 T)| < settle_tol), ``crossings``, ``sign_end`` and ``null_drift`` = max |P_N w(t) - P_N w0|
    (lemma grq-lem-null-frozen)."""
    n_prone, n_control = checks.nonnegative_int("n_prone", n_prone), checks.nonnegative_int("n_control", n_control)
    dl_lo, dl_hi = _range("delta_range", delta_range)
    bn = _range("beta_norm_range", beta_norm_range, positive=True)
    T, settle_tol = checks.positive_real("T", T), checks.positive_real("settle_tol", settle_tol)
    if n_prone + n_control == 0:
        raise ValueError("n_prone + n_control must be at least 1")
    info = []
    for k in range(n_prone + n_control):
        X, y, beta_ls, N = random_problem(rng, n, d, sv_range=sv_range, beta_norm_range=bn, whitened=whitened)
        C, c = X.T @ X / n, X.T @ y / n
        direction = rng.normal(size=d)
        direction /= np.linalg.norm(direction)
        if k < n_prone:
            beta0 = -np.sign(c @ direction) * rng.uniform(*bn) * direction
        else:
            direction *= np.sign(c @ direction)
            beta0 = rng.uniform(0.2, 0.8) * 2 * (c @ direction) / (direction @ C @ direction) * direction
        delta = rng.uniform(dl_lo, dl_hi)
        a0, w0 = init_from_product(beta0, delta, rng.choice([-1.0, 1.0]))
        info.append(dict(family=family, n=n, d=d, X=X, y=y, C=C, c=c, beta_ls=beta_ls, N=N, beta0=beta0,
                         delta=delta, a0=a0, w0=w0, prone=k < n_prone, dL0=float(beta0 @ (C @ beta0 / 2 - c))))
    _, a_t, W_t, n_cross = flow(np.array([r["a0"] for r in info]), np.array([r["w0"] for r in info]),
                                np.array([r["C"] for r in info]), np.array([r["c"] for r in info]), T)
    i90 = int(round(0.9 * (a_t.shape[1] - 1)))
    for j, r in enumerate(info):
        beta_T, beta_90 = a_t[j, -1] * W_t[j, :, -1], a_t[j, i90] * W_t[j, :, i90]
        P_N = r["N"] @ r["N"].T
        r.update(beta_T=beta_T, settled=max_error(beta_T, beta_90) < settle_tol, crossings=int(n_cross[j]),
                 sign_end=float(np.sign(a_t[j, -1])),
                 null_drift=float(np.abs(P_N @ W_t[j] - (P_N @ r["w0"])[:, None]).max()))
    return info


def draw_families(rng, families, n_prone, n_control, flow, T, settle_tol, *, top_up_rng=None, crossings=0,
                  **ranges) -> tuple[list[dict], int]:
    """:func:`draw_family` for each (n, d) of ``families`` in turn, then, while fewer than ``crossings`` draws cross
    zero once, one more crossing-prone draw per family from ``top_up_rng`` (its own stream). Returns (draws, number
    of extra draws). ValueError if 20 n_prone len(families) extra draws do not reach ``crossings`` (the delta range
    gives too few crossings)."""
    rows = []
    for fam, (n, d) in enumerate(families):
        rows += draw_family(rng, n, d, n_prone, n_control, flow, T, settle_tol, family=fam, **ranges)
    topped = 0
    while sum(r["crossings"] == 1 for r in rows) < crossings:
        if top_up_rng is None or topped >= 20 * n_prone * len(families):
            raise ValueError(f"delta_range {ranges.get('delta_range')!r} gives too few zero crossings: "
                             f"{sum(r['crossings'] == 1 for r in rows)} after {topped} extra draws, {crossings} "
                             f"needed for the counts (take the delta range further below 0)")
        for fam, (n, d) in enumerate(families):
            rows += draw_family(top_up_rng, n, d, 1, 0, flow, T, settle_tol, family=fam, **ranges)
            topped += 1
    return rows, topped


def predict(draw: dict) -> dict:
    """The package's predictions for one draw of :func:`draw_family` (added to it and returned): ``psi`` =
    argmin Psi_delta at beta0 (Thm 3.1 as stated), ``psi_flip`` = at -beta0 (the mirror minimizer of App. A.4.4's
    remark, for any X), ``delta_R`` = a0^2 - ||P_R w0||^2, ``miss_pred`` = 2 |a_inf| max|P_N w0| (how far
    Thm 3.1 misses a crossing flow, eq. grq-eq-limit), ``closed`` = beta_ls + sign(a(T)) |a_inf| P_N w0
    (grq-eq-limit with the observed sign), ``flow_limit`` and ``route`` = (sign, how) from
    :func:`markovlib.richlazy.minimal_limits.limit_sign`."""
    r = draw
    X, y, beta0, delta, a0, w0 = r["X"], r["y"], r["beta0"], r["delta"], r["a0"], r["w0"]
    P_N = r["N"] @ r["N"].T
    delta_R = a0**2 - float(w0 @ (np.eye(r["d"]) - P_N) @ w0)
    a_inf = float(np.sqrt((delta_R + np.hypot(delta_R, 2 * np.linalg.norm(r["beta_ls"]))) / 2))  # grq-eq-limit
    r.update(psi=implicit_bias_limit(X, y, beta0, delta), psi_flip=implicit_bias_limit(X, y, -beta0, delta),
             delta_R=delta_R, miss_pred=2 * a_inf * float(np.abs(P_N @ w0).max()),
             closed=r["beta_ls"] + r["sign_end"] * a_inf * (P_N @ w0), flow_limit=flow_limit(X, y, a0, w0),
             route=limit_sign(X, y, a0, w0))
    return r


def basin_predicts_crossing(draw: dict) -> bool:
    """Whether the basin rule of App. A.2.5 on the row space predicts a zero crossing: sign(c1) a0 < 0 for the
    basin margin c1 of (a0, P_R w0) with beta* = beta_ls (exact where X^T X / n is a multiple of P_R)."""
    w_R = draw["w0"] - draw["N"] @ (draw["N"].T @ draw["w0"])
    return bool(basin_margin(draw["a0"], w_R, draw["beta_ls"]) * draw["a0"] < 0)


def kernel_problem(rng, n=6, d=3, *, sv_range=(0.6, 1.4), cosine=0.3, beta0_max=0.8):
    """General data for the kernel check of App. A.3.1: (X, y, C, c, beta0) with X (n x d, n > d) whose X^T X / n
    has eigenvalues uniform in ``sv_range``, y = X b + 0.3 u (b a random unit vector, u a unit vector off the range
    of X), and beta0 at cosine ``cosine`` with c = X^T y / n (so beta_hat must turn), of norm min(beta0_max,
    c^T b / b^T C b): then L(beta0) < L(0) and a keeps its sign."""
    n, d = checks.positive_int("n", n), checks.positive_int("d", d)
    if n <= d:
        raise ValueError(f"n must exceed d (y off the range of X), got n = {n}, d = {d}")
    sv = _range("sv_range", sv_range, positive=True)
    if not -1 < float(cosine) < 1:
        raise ValueError(f"cosine must lie in (-1, 1), got {cosine!r}")
    beta0_max = checks.positive_real("beta0_max", beta0_max)
    U, _ = np.linalg.qr(rng.normal(size=(n, n)))
    V, _ = np.linalg.qr(rng.normal(size=(d, d)))
    X = U[:, :d] @ np.diag(np.sqrt(n * rng.uniform(*sv, d))) @ V.T
    b = rng.normal(size=d)
    y = X @ (b / np.linalg.norm(b)) + 0.3 * U[:, d]
    C, c = X.T @ X / n, X.T @ y / n
    c_hat = c / np.linalg.norm(c)
    perp = rng.normal(size=d)
    perp -= (perp @ c_hat) * c_hat
    direction = cosine * c_hat + np.sqrt(1 - cosine**2) * perp / np.linalg.norm(perp)
    beta0 = min(beta0_max, (c @ direction) / (direction @ C @ direction)) * direction
    return X, y, C, c, beta0
