"""Part II: the steps of the chapter grq_exact_dynamics, one call each (Kunin et al., NeurIPS 2024, Thm 3.1,
App. A.3.1, A.4.3, A.4.4 and Fig. 8, beyond the paper's hypothesis beta(t) != 0).

On the random draws of :mod:`markovlib.richlazy.minimal_crossing` (each with the package's predictions added by
``predict``): the counts of the frozen null part, of the zero crossings and of the energy condition; the basin rule
on the row space; where the flows end against Thm 3.1, its mirror form (argmin Psi_delta with -beta0) and
eq. grq-eq-limit. Then the Fig. 4 problem from -beta0 against App. A.4.4's closed form, the kernel dynamics dM/dt
of App. A.3.1 against finite differences, Azulay et al.'s Thm 2 and the exact trajectories of Fig. 8, each against
the independent references of :mod:`markovlib.richlazy.minimal_reference`.
"""
from __future__ import annotations

import numpy as np

from ..book.formatting import bound, fixed
from ..numerics import checks
from .minimal_crossing import basin_predicts_crossing, max_error, random_problem
from .minimal_exact import exact_parameters, implicit_bias_limit, q_delta
from .minimal_limits import init_from_product
from .minimal_model import mdot_terms
from .minimal_reference import a44_closed_form, azulay_argmin, crossing_flow, fd_M_derivative, q_azulay


def crossing_counts(rows) -> dict:
    """The counts over the draws: the largest drift of the null-space part of w, the most zero crossings of a along
    one flow, the draws with L(beta0) < L(0) and how many of them cross, the crossing-prone draws, those of them
    that do not cross, and how many of those have delta_R >= 0 (cannot cross)."""
    energy = [r for r in rows if r["dL0"] < 0]
    prone = [r for r in rows if r["prone"]]
    prone_nocross = [r for r in prone if r["crossings"] == 0]
    return dict(null_drift=max(r["null_drift"] for r in rows), max_crossings=max(r["crossings"] for r in rows),
                cross=sum(r["crossings"] == 1 for r in rows), energy=len(energy),
                energy_crossings=sum(r["crossings"] > 0 for r in energy), prone=len(prone),
                prone_nocross=len(prone_nocross), nocross_R=sum(r["delta_R"] >= 0 for r in prone_nocross))


def basin_rule(rows) -> tuple[int, int, int]:
    """Lemma grq-lem-one-crossing's exact case: (draws where the basin rule on the row space
    (``basin_predicts_crossing``) agrees with the observed crossing, draws, draws that cross)."""
    agree = sum(basin_predicts_crossing(r) == (r["crossings"] == 1) for r in rows)
    return agree, len(rows), sum(r["crossings"] == 1 for r in rows)


def whitened_error(rows) -> float:
    """max |C - lambda_max P_R| over whitened draws (X^T X / n a multiple of the row-space projector); 0 if none."""
    return max((max_error(r["C"], np.linalg.eigvalsh(r["C"]).max() * (np.eye(r["d"]) - r["N"] @ r["N"].T))
                for r in rows), default=0.0)


def limit_summary(rows, limit_tol, miss_min) -> dict:
    """Where the flows end: of the crossing draws, those settled and within ``limit_tol`` of the mirror minimizer
    (``confirmed``), the misses |flow - Thm 3.1 as stated| and how many exceed ``miss_min``, and the largest
    |miss - 2 |a_inf| |P_N w0|| (eq. grq-eq-limit) of the settled ones; of the settled flows without a crossing,
    the largest |flow - Thm 3.1|; over all settled flows the errors of the closed form (grq-eq-limit, observed sign)
    and of ``flow_limit``; the draws where ``limit_sign`` gives the observed sign, and the count of each route."""
    limit_tol, miss_min = checks.positive_real("limit_tol", limit_tol), checks.positive_real("miss_min", miss_min)
    settled = [r for r in rows if r["settled"]]
    cross = [r for r in rows if r["crossings"] == 1]
    cross_settled = [r for r in cross if r["settled"]]
    nocross_settled = [r for r in settled if r["crossings"] == 0]
    misses = np.array([max_error(r["beta_T"], r["psi"]) for r in cross])
    routes = {}
    for r in rows:
        routes[r["route"][1]] = routes.get(r["route"][1], 0) + 1
    return dict(
        settled=len(settled), cross=len(cross), cross_settled=len(cross_settled), nocross_settled=len(nocross_settled),
        confirmed=sum(max_error(r["beta_T"], r["psi_flip"]) < limit_tol for r in cross_settled), misses=misses,
        missed=int(np.sum(misses > miss_min)),
        miss_law_err=max((abs(m - r["miss_pred"]) for m, r in zip(misses, cross) if r["settled"]), default=0.0),
        thm_err=max((max_error(r["beta_T"], r["psi"]) for r in nocross_settled), default=0.0),
        closed_err=max(max_error(r["beta_T"], r["closed"]) for r in settled),
        fl_err=max(max_error(r["beta_T"], r["flow_limit"]) for r in settled),
        sign_agree=sum(r["route"][0] == r["sign_end"] for r in rows), routes=dict(sorted(routes.items())))


def family_table(rows, families) -> str:
    """Family by family (text): settled flows, crossing flows, max |flow - argmin Psi(-beta0)| over the crossing
    flows, the range of Thm 3.1's misses on them, max |flow - argmin Psi(beta0)| over the others."""
    lines = [f"{'family':>8}{'flows':>7}{'cross':>7}{'max |flow - Psi(-b0)|, cross':>31}{'A.4.4 miss, cross':>20}"
             f"{'max |flow - Psi(b0)|, no cross':>32}"]
    for fam, (n, d) in enumerate(families):
        fr = [r for r in rows if r["settled"] and r["family"] == fam]
        fc = [r for r in fr if r["crossings"] == 1]
        e_flip = bound(max((max_error(r["beta_T"], r["psi_flip"]) for r in fc), default=0.0), 1e-8)
        fm = [max_error(r["beta_T"], r["psi"]) for r in fc]
        miss = f"{fixed(min(fm), 2)} to {fixed(max(fm), 2)}" if fc else "-"
        e_thm = bound(max((max_error(r["beta_T"], r["psi"]) for r in fr if r["crossings"] == 0), default=0.0), 1e-8)
        lines.append(f"{f'{n} x {d}':>8}{len(fr):>7}{len(fc):>7}{e_flip:>31}{miss:>20}{e_thm:>32}")
    return "\n".join(lines)


def fig4_mirror(x, y, beta0, deltas, T_limit) -> dict:
    """The paper's Fig. 4 problem (one sample x, label y, d = 2) from beta0 at each delta: independent flows to
    T_limit (6001 times) against App. A.4.4's closed form beta* + alpha v (``a44_closed_form``) and its mirror
    beta* - alpha v. Returns dict(beta (N, 2, m), cross (N,), forms, flips, misses (|end - form| of the crossing
    flows), flip_err (max |end - the prediction for its side|), a44_vs_psi (max |form - implicit_bias_limit|),
    table (text))."""
    x, beta0 = checks.finite_array("x", x, ndim=1), checks.finite_array("beta0", beta0, ndim=1)
    T_limit = checks.positive_real("T_limit", T_limit)
    X, yv = x[None, :], np.array([float(y)])
    bstar = float(y) * x / (x @ x)
    inits = [init_from_product(beta0, dl) for dl in deltas]
    _, a4, W4, cross = crossing_flow(np.array([i[0] for i in inits]), np.array([i[1] for i in inits]),
                                     np.array([X.T @ X] * len(deltas)), np.array([X[0] * float(y)] * len(deltas)),
                                     T_limit, n_eval=6001)
    beta = a4[:, None, :] * W4
    out = dict(beta=beta, cross=cross, forms=[], flips=[], misses=[], flip_err=0.0, a44_vs_psi=0.0)
    lines = [f"{'delta':>6}{'crosses':>9}{'A.4.4 form':>20}{'flip: beta* - alpha v':>24}{'flow limit':>20}{'miss':>7}"
             f"{'|flow - flip|':>15}{'|A.4.4 - Psi|':>15}"]
    for j, dl in enumerate(deltas):
        form = a44_closed_form(x, y, beta0, dl)
        flip, end = 2 * bstar - form, beta[j, :, -1]
        pred = flip if cross[j] else form
        out["a44_vs_psi"] = max(out["a44_vs_psi"], max_error(form, implicit_bias_limit(X, yv, beta0, dl)))
        out["flip_err"] = max(out["flip_err"], max_error(end, pred))
        miss = float(np.linalg.norm(end - form))
        out["forms"].append(form)
        out["flips"].append(flip)
        if cross[j]:
            out["misses"].append(miss)
        lines.append(f"{dl:>6g}{int(cross[j]):>9}   ({fixed(form[0], 3)}, {fixed(form[1], 3)})   ({fixed(flip[0], 3)}, "
                     f"{fixed(flip[1], 3)})   ({fixed(end[0], 3)}, {fixed(end[1], 3)}){fixed(miss, 2):>7}"
                     f"{bound(max_error(end, pred), 1e-8):>15}{bound(out['a44_vs_psi'], 1e-12):>15}")
    out["table"] = "\n".join(lines)
    return out


def kernel_dynamics(C, c, beta0, deltas, T, fd_step, n_fd=(15, 25), n_t=4001) -> dict:
    """App. A.3.1 on data (C, c): at each delta the flow from the product beta0 (independent, rtol 1e-13, dense
    output; a must keep its sign), eq. grq-eq-mdot (``mdot_terms``) against fourth-order finite differences of
    M(t) (``fd_M_derivative``, step fd_step) at n_fd[0] log-spaced times in [4 fd_step, 1] and n_fd[1] in
    [1, T - 4 fd_step] (the largest error relative to max |dM/dt|), and the norms of the two terms on n_t times:
    their integrals I_norm, I_dir, the share I_dir / (I_norm + I_dir), the ratio I_dir / I_norm, the path length
    (I_norm + I_dir) / |M(0)|, and the curves relative to |M(0)|."""
    C, c = checks.finite_array("C", C, ndim=2), checks.finite_array("c", c, ndim=1)
    fd_step, T = checks.positive_real("fd_step", fd_step), checks.positive_real("T", T)
    d = C.shape[0]
    t_k = np.linspace(0.0, T, n_t)
    t_fd = np.concatenate([np.geomspace(4 * fd_step, 1.0, n_fd[0]), np.linspace(1.0, T - 4 * fd_step, n_fd[1])])
    out = dict(t=t_k, n_fd=t_fd.size, err=0.0, shares={}, ratios={}, changes={}, curves={})
    for dl in deltas:
        a0, w0 = init_from_product(beta0, dl)
        sol, _, _, ncross = crossing_flow(np.array([a0]), w0[None, :], C[None], c[None], T, n_eval=2, rtol=1e-13,
                                          atol=1e-15, dense=True)
        if ncross[0]:
            raise ValueError(f"a crosses zero at delta = {dl}: the kernel check needs L(beta0) < L(0)")
        fd = fd_M_derivative(sol.sol, t_fd, fd_step)
        Zf = sol.sol(t_fd)
        formula = np.array([sum(mdot_terms(Zf[0, i], Zf[1:, i], dl, C, c)) for i in range(t_fd.size)])
        out["err"] = max(out["err"], float(np.abs(formula - fd).max()) / float(np.abs(fd).max()))
        Z = sol.sol(t_k)
        T1, T2 = np.array([[np.linalg.norm(m) for m in mdot_terms(Z[0, i], Z[1:, i], dl, C, c)]
                           for i in range(t_k.size)]).T
        I1, I2 = np.trapezoid(T1, t_k), np.trapezoid(T2, t_k)
        M0 = np.linalg.norm(Z[0, 0] ** 2 * np.eye(d) + np.outer(Z[1:, 0], Z[1:, 0]))
        out["shares"][dl], out["ratios"][dl], out["changes"][dl] = I2 / (I1 + I2), I2 / I1, (I1 + I2) / M0
        out["curves"][dl] = (T1 / M0, T2 / M0)
    return out


def azulay_constant_error(deltas, xs=None) -> float:
    """Prop. grq-prop-a-4-3: max |q^A_delta - q_delta + max(delta, 0)^(3/2) / 2| / (1 + max |q_delta|) over x in
    ``xs`` (default 400 log-spaced in [1e-3, 30]) at each delta (``q_azulay`` written out against ``q_delta``)."""
    xs = np.geomspace(1e-3, 30.0, 400) if xs is None else checks.finite_array("xs", xs, ndim=1)
    worst = 0.0
    for dl in deltas:
        q = q_delta(xs, dl)
        worst = max(worst, float(np.abs(q_azulay(xs, dl) - q + 0.5 * max(dl, 0.0) ** 1.5).max()) / (1 + float(
            np.abs(q).max())))
    return worst


def azulay_argmin_error(rng, deltas, T_limit, sv_range=(0.6, 1.4), beta_norm_range=(0.5, 1.5)):
    """Thm A.2 (Azulay et al.'s Thm 2) on one random one-sample problem in d = 3 per delta (``random_problem``,
    beta0 Gaussian with norm uniform in beta_norm_range): the largest distance of its minimizer (``azulay_argmin``,
    BFGS) to ``implicit_bias_limit`` and to the independent flow limit at T_limit. Returns (error, whether any of
    those flows crosses zero)."""
    rows = []
    for dl in deltas:
        X, y, bls, N = random_problem(rng, 1, 3, sv_range=sv_range, beta_norm_range=beta_norm_range)
        b0 = rng.normal(size=3)
        b0 *= rng.uniform(*beta_norm_range) / np.linalg.norm(b0)
        rows.append((X, y, b0, dl, azulay_argmin(bls, N, b0, dl)))
    inits = [init_from_product(r[2], r[3]) for r in rows]
    _, a, W, cr = crossing_flow(np.array([p[0] for p in inits]), np.array([p[1] for p in inits]),
                                np.array([r[0].T @ r[0] for r in rows]), np.array([r[0][0] * r[1][0] for r in rows]),
                                T_limit)
    err = max(max(max_error(r[4], implicit_bias_limit(r[0], r[1], r[2], r[3])), max_error(r[4], a[j, -1] * W[j, :, -1]))
              for j, r in enumerate(rows))
    return err, bool(np.any(cr))


def fig8_runs(beta_star, angles, deltas, T, n_t=401) -> dict:
    """The paper's Fig. 8: for unit beta0 at each angle (units of pi) and each delta, a(t) and w(t) =
    u(t) beta*_hat + s(t) v0_hat from the closed form (``exact_parameters``) against an independent integration
    (rtol 1e-12) of the whitened flow. Returns dict(t, err (max |closed - flow|), crossings, runs: (row, delta,
    closed a, closed w, flow a, flow W, crosses))."""
    bstar = checks.finite_array("beta_star", beta_star, ndim=1)
    if bstar.shape != (2,) or not np.any(bstar):
        raise ValueError(f"beta_star must be a nonzero vector of length 2, got {beta_star!r}")
    e = bstar / np.linalg.norm(bstar)
    t = np.linspace(0.0, checks.positive_real("T", T), n_t)
    out = dict(t=t, err=0.0, crossings=0, runs=[])
    for row, ang in enumerate(angles):
        inits = [init_from_product(np.array([np.cos(np.pi * ang), np.sin(np.pi * ang)]), dl) for dl in deltas]
        _, a_f, W_f, cr = crossing_flow(np.array([p[0] for p in inits]), np.array([p[1] for p in inits]),
                                        np.array([np.eye(2)] * len(deltas)), np.array([bstar] * len(deltas)), T,
                                        n_eval=n_t, rtol=1e-12, atol=1e-14)
        out["crossings"] += int(np.sum(cr))
        for j, dl in enumerate(deltas):
            a0, w0 = inits[j]
            wn0 = np.linalg.norm(w0)
            a_c, u_c, s_c = exact_parameters(t, dl, np.linalg.norm(bstar), a0 * wn0, float(w0 @ e) / wn0)
            v0 = w0 - (w0 @ e) * e
            v_hat = v0 / np.linalg.norm(v0) if np.linalg.norm(v0) > 1e-12 else np.zeros(2)
            w_c = u_c[:, None] * e + s_c[:, None] * v_hat
            out["err"] = max(out["err"], max_error(a_c, a_f[j]), max_error(w_c, W_f[j].T))
            out["runs"].append((row, dl, a_c, w_c, a_f[j], W_f[j], bool(cr[j])))
    return out
