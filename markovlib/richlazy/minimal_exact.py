"""Part II: closed forms of the single-neuron model (Kunin et al., NeurIPS 2024, App. A.2 and Thm 3.1).

Used by :mod:`markovlib.richlazy.minimal_model`. Whitened input (X^T X / n = I), eta_a eta_w = 1 (a time
rescaling), beta* the OLS solution, b = ||beta*||, w = u beta*/b + v with v orthogonal to beta*, s = ||v||. Then

    da/dt = u b - a (u^2 + s^2),   du/dt = a b - a^2 u,   dv/dt = -a^2 v,   delta = a^2 - u^2 - s^2.

zeta = u / a obeys the constant-coefficient Riccati equation dzeta/dt = b - delta zeta - b zeta^2 (App. A.2.3;
its inverse a / u obeys the same with -delta, A.2.4). Writing zeta = g' / (b g) linearizes it:
g'' + delta g' - b^2 g = 0, g = c1 e^{lambda+ t} + c2 e^{lambda- t}, lambda+- = (-delta +- S*)/2,
S* = sqrt(delta^2 + 4 b^2). With a = g h, u = g' h / b the Bernoulli equation of a becomes dh/dt = h (delta - g^2 h^2),
solved by 1/h^2 = e^{-2 delta t} (1 + 2 int_0^t e^{2 delta s} g(s)^2 ds) (g(0) = a0, h(0) = 1), and
s(t) = s0 e^{-delta t} h(t). g, g' and h stay finite through a zero of a (g = 0) or of u (g' = 0), so one formula
covers the balanced, upstream and downstream cases and the zero crossing of a (Lemma A.1) without a switch of
variables. Every exponential is evaluated after factoring out e^{lambda+ t}, so huge t and huge |delta| are stable.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks


def orbit_squares(r, delta):
    """(a^2, ||w||^2) on the rescaling orbit with ||beta|| = ||a w|| = r and conserved delta = a^2 - ||w||^2
    (eta_a = eta_w = 1, Sec. 3): a^2 = (S + delta)/2, ||w||^2 = (S - delta)/2, S = sqrt(delta^2 + 4 r^2), each
    computed without cancellation (the smaller one as 2 r^2 / (larger)). Arrays broadcast; no validation (an
    inner formula of the module's public functions)."""
    r = np.asarray(r, dtype=float)
    delta = np.asarray(delta, dtype=float)
    S = np.hypot(delta, 2 * r)
    big = np.where(delta >= 0, S + delta, S - delta)  # the sum without cancellation
    big_safe = np.where(big > 0, big, 1.0)
    small = np.where(big > 0, 2 * r**2 / big_safe, 0.0)  # the other one: (S+d)(S-d) = 4 r^2
    a2 = np.where(delta >= 0, big / 2, small)
    wn2 = np.where(delta >= 0, small, big / 2)
    return a2, wn2


def _scalar(name, x) -> float:
    arr = checks.finite_array(name, x)
    if arr.size != 1:
        raise ValueError(f"{name} must be a scalar, got shape {arr.shape}")
    return float(arr.reshape(()))



def exact_parameters(t, delta, beta_star_norm, mu0, phi0):
    """(a(t), u(t), s(t)) of the whitened single neuron (module docstring), from mu0 = a0 ||w0|| and
    phi0 = cos(w0, beta*), with sign(a0) = sign(mu0) (a0 > 0 when mu0 = 0 and delta > 0). Vectorized over t >= 0."""
    t = checks.finite_array("t", t)
    if np.any(t < 0):
        raise ValueError("t must be >= 0")
    delta = _scalar("delta", delta)
    b = _scalar("beta_star_norm", beta_star_norm)
    if b <= 0:
        raise ValueError(f"beta_star_norm must be > 0, got {beta_star_norm!r}")
    mu0 = _scalar("mu0", mu0)
    phi0 = _scalar("phi0", phi0)
    if not -1.0 <= phi0 <= 1.0:
        raise ValueError(f"phi0 is a cosine and must lie in [-1, 1], got {phi0!r}")
    a02, wn02 = orbit_squares(abs(mu0), delta)
    a0 = (1.0 if mu0 >= 0 else -1.0) * float(np.sqrt(a02))
    wn0 = float(np.sqrt(wn02))
    u0, s0 = phi0 * wn0, wn0 * float(np.sqrt((1 - phi0) * (1 + phi0)))
    S = float(np.hypot(delta, 2 * b))
    P, Q = (S + delta, 4 * b * b / (S + delta)) if delta >= 0 else (4 * b * b / (S - delta), S - delta)
    lam_p, lam_m = Q / 2, -P / 2  # lambda+ = (S - delta)/2 > 0, lambda- = -(S + delta)/2 < 0
    c1 = (b * u0 + P * a0 / 2) / S
    c2 = (Q * a0 / 2 - b * u0) / S
    with np.errstate(over="ignore", under="ignore"):
        if c1 != 0.0:  # everything times e^{-lambda+ t}; Z = e^{-2 lambda+ t} / h^2 >= 2 c1^2 (1 - e^{-Pt}) / P
            e1, E = np.exp(-S * t), np.exp(-P * t)
            if delta > 0:
                mid = e1 * (-np.expm1(-delta * t)) / delta
            elif delta < 0:
                mid = E * np.expm1(delta * t) / delta
            else:
                mid = t * e1
            G = c1 + c2 * e1
            Gp = lam_p * c1 + lam_m * c2 * e1
            Z = E + 2 * c1**2 * (-np.expm1(-P * t)) / P + 4 * c1 * c2 * mid + 2 * c2**2 * E * (-np.expm1(-Q * t)) / Q
            root_E = np.exp(-P * t / 2)
        else:  # the stable manifold of a saddle: everything times e^{-lambda+ t + P t / 2}
            G = c2 * np.exp(-Q * t / 2)
            Gp = lam_m * G
            Z = 1 + 2 * c2**2 * (-np.expm1(-Q * t)) / Q
            root_E = np.ones_like(t)
    rZ = np.sqrt(Z)
    return G / rZ, Gp / (b * rZ), s0 * root_E / rZ


def exact_mu_phi(t, delta, beta_star_norm, mu0, phi0):
    """The exact (mu(t), phi(t)) of App. A.2 (whitened input, eta_a eta_w = 1): mu = a ||w||, phi = cos(w, beta*),
    from the closed form of :func:`exact_parameters` (balanced delta = 0: phi = tanh(b t + artanh phi0); upstream,
    downstream and a zero crossing of a by the same formula). Vectorized over t. Where w = 0 (possible only at an
    instant for phi0 = +-1 and delta > 0, or for mu0 = 0, delta >= 0) phi is undefined and 0 is returned."""
    a, u, s = exact_parameters(t, delta, beta_star_norm, mu0, phi0)
    wn = np.hypot(u, s)
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(wn > 0, u / np.where(wn > 0, wn, 1.0), 0.0)
    return a * wn, np.clip(phi, -1.0, 1.0)


def q_delta(r, delta):
    """q_delta of Thm 3.1 in closed form: q(r) = int_0^r (3/2) sqrt(sqrt(s^2 + delta^2/4) - delta/2) ds
    = |a|^3 - (3/2) delta |a| + (1/2) max(delta, 0)^{3/2} with a^2 = (sqrt(delta^2 + 4 r^2) + delta)/2 (substitute
    v = a^2 = ||w||^2 + delta, r = ||w|| sqrt(v): q'(r) dr = (3/4)(2 v - delta) v^{-1/2} dv). For delta > 0 evaluated as
    delta^{3/2} e (3/2 + 3 e + e^2), e = |a|/sqrt(delta) - 1 = ||w||^2 / (sqrt(delta)(|a| + sqrt(delta))).
    q(r) = r^{3/2} at delta = 0. Broadcasts over r >= 0."""
    r = checks.finite_array("r", r)
    if np.any(r < 0):
        raise ValueError("r must be >= 0 (a norm)")
    delta = _scalar("delta", delta)
    a2, wn2 = orbit_squares(r, delta)
    absa = np.sqrt(a2)
    if delta > 0:
        sd = np.sqrt(delta)
        e = wn2 / (sd * (absa + sd))
        return delta * sd * e * (1.5 + 3 * e + e * e)
    return absa**3 - 1.5 * delta * absa


def q_delta_prime(r, delta):
    """q_delta'(r) = (3/2) sqrt(sqrt(r^2 + delta^2/4) - delta/2) = (3/2) ||w|| (Thm 3.1)."""
    return 1.5 * np.sqrt(orbit_squares(np.asarray(r, dtype=float), float(delta))[1])


def psi_delta(beta, beta0, delta):
    """Psi_delta(beta) = q_delta(||beta||) - q_delta'(||beta0||) beta0_hat^T beta (Thm 3.1); ``beta`` may carry
    leading axes, ``beta0`` is a nonzero vector."""
    beta = checks.finite_array("beta", beta)
    beta0 = _check_beta0(beta0, beta.shape[-1] if beta.ndim else 0)
    delta = _scalar("delta", delta)
    r0 = float(np.linalg.norm(beta0))
    return q_delta(np.linalg.norm(beta, axis=-1), delta) - q_delta_prime(r0, delta) * (beta @ beta0) / r0


def _check_beta0(beta0, d):
    beta0 = checks.finite_array("beta0", beta0)
    if beta0.shape != (d,):
        raise ValueError(f"beta0 must be a vector of length d = {d}, got shape {beta0.shape}")
    if not np.any(beta0):
        raise ValueError("beta0 must be nonzero (Thm 3.1 needs its direction)")
    return beta0


def _grad_hess(beta, beta0, delta):
    r, r0 = np.linalg.norm(beta), np.linalg.norm(beta0)
    lin = q_delta_prime(r0, delta) * beta0 / r0
    d = beta.size
    if r == 0:
        return -lin, np.eye(d)
    a2, wn2 = orbit_squares(r, delta)
    bh = beta / r
    qp = 1.5 * np.sqrt(wn2)
    qpp = 1.5 * np.sqrt(a2) / np.hypot(delta, 2 * r)  # q'' = (3/2)|a| / S
    qp_r = 1.5 / np.sqrt(a2) if a2 > 0 else 1.5 * np.sqrt(wn2) / r  # q'(r)/r = (3/2)/|a|
    P = np.outer(bh, bh)
    return qp * bh - lin, qpp * P + qp_r * (np.eye(d) - P)


def implicit_bias_limit(X, y, beta0, delta):
    """The minimizer of Psi_delta(beta) over the least-squares solutions {beta: X^T X beta = X^T y} (Thm 3.1;
    = {X beta = y} when y is in the range of X). Parametrized as beta = beta_ls + N z (N an orthonormal basis of the
    null space of X, from the SVD), Psi is strictly convex in z; damped Newton with backtracking from z = N^T beta0.
    ``X``: n x d (a 1-D X is one sample). Returns a vector of length d."""
    X = checks.finite_array("X", X)
    if X.ndim == 1:
        X = X[None, :]
    y = np.atleast_1d(checks.finite_array("y", y))
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be n x d and y of length n, got shapes {X.shape} and {y.shape}")
    d = X.shape[1]
    beta0 = _check_beta0(beta0, d)
    delta = _scalar("delta", delta)
    U, sv, Vt = np.linalg.svd(X)
    rank = int(np.sum(sv > sv.max() * max(X.shape) * np.finfo(float).eps)) if sv.size else 0
    if rank == 0:
        raise ValueError("X must be nonzero")
    beta_ls = Vt[:rank].T @ ((U[:, :rank].T @ y) / sv[:rank])
    N = Vt[rank:].T
    if N.shape[1] == 0:
        return beta_ls
    z = N.T @ beta0

    def f(z_):
        return float(psi_delta(beta_ls + N @ z_, beta0, delta))

    fz = f(z)
    for _ in range(200):
        g, H = _grad_hess(beta_ls + N @ z, beta0, delta)
        gz, Hz = N.T @ g, N.T @ H @ N
        p = -np.linalg.solve(Hz, gz)
        dec = -float(gz @ p)  # Newton decrement squared
        if dec <= 1e-26 * (1.0 + abs(fz)):
            break
        if dec <= 1e-10 * (1.0 + abs(fz)):  # quadratic convergence region: the decrease is below rounding of f
            z = z + p
            fz = f(z)
            continue
        step = 1.0
        while step > 1e-12:
            z_new = z + step * p
            f_new = f(z_new)
            if f_new <= fz - 1e-4 * step * dec:
                break
            step /= 2
        else:
            break
        z, fz = z_new, f_new
    return beta_ls + N @ z


def _lambda_minus_abs(delta, b):
    """-lambda_- = (delta + S*)/2 with S* = sqrt(delta^2 + 4 b^2), without cancellation for delta < 0."""
    S = np.hypot(delta, 2 * b)
    return np.where(delta >= 0, (delta + S) / 2, 2 * b * b / np.where(delta >= 0, 1.0, S - delta)), S


def _basin_inputs(a, w, beta_star):
    a = checks.finite_array("a", a)
    w = checks.finite_array("w", w)
    bstar = checks.finite_array("beta_star", beta_star)
    if bstar.ndim != 1 or w.ndim < 1 or w.shape[-1] != bstar.size:
        raise ValueError(f"w must have shape (..., d) and beta_star shape (d,), got {w.shape} and {bstar.shape}")
    try:
        np.broadcast_shapes(a.shape, w.shape[:-1])
    except ValueError:
        raise ValueError(f"a {a.shape} and the leading axes of w {w.shape[:-1]} must broadcast") from None
    b = float(np.linalg.norm(bstar))
    if not 0 < b <= 1e150:
        raise ValueError(f"beta_star must be nonzero with norm at most 1e150, got norm {b!r}")
    if np.any(np.abs(a) > 1e150) or np.any(np.abs(w) > 1e150):
        raise ValueError("a and w must have entries of size at most 1e150 (their squares enter delta)")
    return a, w, bstar, b


def basin_margin(a, w, beta_star):
    """The basin of attraction of (a, w) (paper's App. A.2.5, Fig. 7): whitened input, eta_a = eta_w = 1.

    Returns m = (w^T beta* - lambda_-(delta) a) / S*, with delta = a^2 - ||w||^2, S* = sqrt(delta^2 + 4 b^2),
    lambda_- = -(delta + S*)/2, b = ||beta*||. m is the coefficient c1 of e^{lambda+ t} in g(t), whose sign is the
    sign of a(t) (:func:`exact_parameters`, ``c1 = (b u0 - lambda_- a0) / S*``), so m > 0: the flow ends on the
    a > 0 branch of the minima a w = beta*; m < 0: the a < 0 branch; m = 0 (the separating surface, the hyperplane
    w^T beta* = lambda_-(delta) a met with the hyperboloid of the same delta; empty for delta > 0): the flow goes
    to a saddle. Broadcasts ``a`` (...) against ``w`` (..., d); ``beta_star`` (d,) nonzero."""
    a, w, bstar, b = _basin_inputs(a, w, beta_star)
    delta = a**2 - np.sum(w * w, axis=-1)
    S = np.hypot(delta, 2 * b)
    ratio = np.where(delta >= 0, (delta + S) / (2 * S), (2 * b * b / S) / np.where(delta >= 0, 1.0, S - delta))
    return (w @ bstar) / S + ratio * a  # ratio = -lambda_- / S* in (0, 1], no overflow for huge entries


def crossing_cosine(delta, beta0_norm, beta_star_norm):
    """The cosine below which the whitened flow from the authors' initialization crosses a = 0 (App. A.2.5 with
    Fig. 3's init: a0 > 0, a0 w0 = beta0, a0^2 - ||w0||^2 = delta). With
    A(delta, r) = (delta + sqrt(delta^2 + 4 r^2))/2, a0^2 = A(delta, ||beta0||) and -lambda_- = A(delta, ||beta*||), so
    c1 S* = ||beta*|| ||beta0|| cos / a0 - lambda_- a0 is negative iff
    cos(beta0, beta*) < -A(delta, ||beta0||) A(delta, ||beta*||) / (||beta*|| ||beta0||). Returns that threshold: -1
    at delta = 0, below -1 for delta > 0 (no crossing), rising to 0 as delta -> -infinity (about
    -||beta*|| ||beta0|| / delta^2). Broadcasts over delta; A is evaluated without cancellation."""
    delta = checks.finite_array("delta", delta)
    r0 = _scalar("beta0_norm", beta0_norm)
    b = _scalar("beta_star_norm", beta_star_norm)
    if not (0 < r0 <= 1e150 and 0 < b <= 1e150):
        raise ValueError(f"beta0_norm and beta_star_norm must lie in (0, 1e150], got {beta0_norm!r} and "
                         f"{beta_star_norm!r}")
    if np.any(np.abs(delta) > 1e150):
        raise ValueError("delta must have size at most 1e150")
    a2_0 = orbit_squares(r0, delta)[0]  # A(delta, r0)
    a2_b = orbit_squares(b, delta)[0]  # A(delta, b)
    return -(a2_0 / r0) * (a2_b / b)


def separating_surface(delta, tau, beta_star_norm):
    """Points (a, u, s) of the separating surface of App. A.2.5 at conserved delta <= 0 (u = w^T beta*/b, s the
    norm of w's part orthogonal to beta*): u = zeta_- a with zeta_- = lambda_-/b, and a^2 - u^2 - s^2 = delta, i.e.
    a = r sinh(tau), s = sqrt(-delta) cosh(tau), r^2 = -delta / (1 - zeta_-^2) evaluated as
    2b(2b + S*) / ((1 - zeta_-)(2b + S* + delta)) (finite at delta = 0, where the surface is the line u = -a,
    s = 0 and r = sqrt(b)). For delta > 0 the surface is empty (|zeta_-| > 1 would need a^2 - u^2 < 0 < delta + s^2):
    ValueError. Broadcasts delta against tau."""
    delta = checks.finite_array("delta", delta)
    tau = checks.finite_array("tau", tau)
    b = _scalar("beta_star_norm", beta_star_norm)
    if not 0 < b <= 1e150:
        raise ValueError(f"beta_star_norm must lie in (0, 1e150], got {beta_star_norm!r}")
    if np.any(delta > 0) or np.any(delta < -1e150):
        raise ValueError("delta must lie in [-1e150, 0]: the separating surface is empty for delta > 0")
    if np.any(np.abs(tau) > 300):
        raise ValueError("tau must lie in [-300, 300] (sinh(tau) overflows beyond)")
    lam_abs, S = _lambda_minus_abs(delta, b)
    zeta = -lam_abs / b
    r = np.sqrt(2 * b * (2 * b + S) / ((1 - zeta) * (2 * b + S + delta)))
    a = r * np.sinh(tau)
    return a, zeta * a, np.sqrt(-delta) * np.cosh(tau)


def asymptote_constants(x, y, beta0):
    """The one-sample problem x^T beta = y (d = 2) from beta0: (C_up, C_down, near, along) with ``near`` the
    interpolant closest to beta0 (the limit of Thm 3.1 as delta -> +inf), ``along`` = (y / x^T beta0) beta0 (the
    limit as delta -> -inf, needs y x^T beta0 > 0), and C_+- the constants of their distances C_+- / delta^2 along
    the unit normal n of x (the book's expansion of q_delta' in 1/delta^2, chapter grq_minimal_model):
    C_up = |n^T beta0| | ||near||^2 - ||beta0||^2 | / 2 and
    C_down = ||along|| |n^T beta0_hat| | ||along||^2 - ||beta0||^2 | / (2 cos^2(x, beta0))."""
    x = checks.finite_array("x", x, ndim=1)
    beta0 = checks.finite_array("beta0", beta0, ndim=1)
    y = _scalar("y", y)
    if x.shape != (2,) or beta0.shape != (2,) or not np.any(x) or not np.any(beta0):
        raise ValueError(f"x and beta0 must be nonzero vectors of length 2, got {x!r} and {beta0!r}")
    if not y * float(x @ beta0) > 0:
        raise ValueError(f"y x^T beta0 must be > 0 (the interpolant along beta0 exists), got {y * float(x @ beta0)!r}")
    n = np.array([-x[1], x[0]]) / np.linalg.norm(x)
    near = beta0 + (y - x @ beta0) * x / (x @ x)
    along = y / (x @ beta0) * beta0
    cos_x = (x @ beta0) / (np.linalg.norm(x) * np.linalg.norm(beta0))
    C_up = abs(n @ beta0) * abs(near @ near - beta0 @ beta0) / 2
    C_down = np.linalg.norm(along) * abs(n @ beta0) / np.linalg.norm(beta0) * abs(along @ along - beta0 @ beta0) / (
        2 * cos_x**2)
    return float(C_up), float(C_down), near, along
