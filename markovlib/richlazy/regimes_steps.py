"""Part II, Sec. 4 and App. B.1 of "Get rich quick" (Kunin et al., NeurIPS 2024): the steps of the chapter
``grq_regimes``, one call each.

- :func:`iso_starts`: Delta = delta I where it exists, and the remark after Assumption B.2 (Prop. grq-prop-iso-rank)
  where it does not;
- :func:`sweep`, :func:`sweep_table`, :func:`counts_and_slopes`: the lazy / delayed-rich sweep of Sec. 4 and App.
  B.1.5 (Cor. grq-cor-b-1-regimes) and its criterion per draw;
- :func:`independent_fits`: the sweep's first draws again by :mod:`regimes_reference` (DOP853, the kernel written
  out);
- :func:`whitened_problem`, :func:`riccati_flows`: the matrix Riccati equation of App. B.1.1
  (Prop. grq-prop-b-riccati) against flows on the raw parameters;
- :func:`bernoulli_along`, :func:`bernoulli_shared`: the matrix Bernoulli equation (Prop. grq-prop-b-bernoulli);
- :func:`b14_check`: App. B.1.4's closed-form time t(beta) for h = d = c = 1.
"""
from __future__ import annotations

import numpy as np

from ..numerics import checks
from . import linear_networks, linear_regimes, regimes_checks, regimes_reference

CELL_NAMES = ("narrow_lazy", "narrow_rich", "expand_lazy", "expand_rich")
LABEL = {"narrow_lazy": ("narrowing", "lazy", "delta >> 0"), "narrow_rich": ("narrowing", "delayed rich", "delta << 0"),
         "expand_lazy": ("expanding", "lazy", "delta << 0"), "expand_rich": ("expanding", "delayed rich", "delta >> 0")}


def iso_starts(shapes, abs_deltas, init_scale) -> dict:
    """Every start of the sweep (:func:`regimes_checks.regime_start`, seed 0) for the ``shapes`` on both sides:
    ``iso_err`` = max |Delta - delta I| / |delta| over the isotropic starts; for the others, ``lam`` = the extreme
    eigenvalue of Delta on the side of delta (at most 0 by Prop. grq-prop-iso-rank) and ``refused`` = how many of them
    ``linear_networks.isotropic_init`` refuses."""
    iso_err, lam, refused = 0.0, [], 0
    for shape in shapes:
        d_, h_, c_ = shape
        for sgn in (1, -1):
            for m in abs_deltas:
                A0, W0, iso = regimes_checks.regime_start(shape, sgn * m, 0, init_scale)
                Dm = linear_networks.conserved_matrix(A0, W0)
                if iso:
                    iso_err = max(iso_err, float(np.max(np.abs(Dm - sgn * m * np.eye(h_)))) / m)
                    continue
                lam.append(float(np.linalg.eigvalsh(Dm)[0] if sgn > 0 else -np.linalg.eigvalsh(Dm)[-1]))
                try:
                    linear_networks.isotropic_init(d_, h_, c_, sgn * m)
                except ValueError:
                    refused += 1
    return dict(iso_err=iso_err, lam=lam, refused=refused)


def sweep(narrowing, expanding, abs_deltas, n_seeds, seed, init_scale, fit_eps, t_max) -> dict:
    """The four cells {name: dict(T, S, shape, sgn)} of :data:`CELL_NAMES` (narrowing delta > 0 and < 0, expanding
    delta < 0 and > 0), each by :func:`regimes_checks.fit_sweep`: T and S (n_seeds, len(abs_deltas))."""
    cells = zip(CELL_NAMES, (narrowing, narrowing, expanding, expanding), (1, -1, -1, 1))
    out = {}
    for name, shape, sgn in cells:
        T, S = regimes_checks.fit_sweep(shape, sgn, abs_deltas, n_seeds, seed, init_scale, fit_eps, t_max)
        out[name] = dict(T=T, S=S, shape=shape, sgn=sgn)
    return out


def sweep_table(results, abs_deltas) -> str:
    """Per cell and |delta|: the median time to fit and the median and range of the kernel distance, as text."""
    lines = [f"{'cell':<12} {'(d, h, c)':<10} {'delta':>7} {'median t_fit':>13} {'median S':>9} {'range of S':>20}"]
    for name, r in results.items():
        for j, m in enumerate(abs_deltas):
            s_col = r["S"][:, j]
            lines.append(f"{name:<12} {str(tuple(r['shape'])):<10} {r['sgn'] * m:>7g} {np.median(r['T'][:, j]):>13.2g} "
                         f"{np.median(s_col):>9.1e} {f'{s_col.min():.1e} to {s_col.max():.1e}':>20}")
    return "\n".join(lines)


def counts_and_slopes(results, abs_deltas, s_lazy_max, delay_ratio_min, s_rich_ratio) -> tuple[dict, dict]:
    """({cell: draws meeting :func:`regimes_checks.regime_ok`}, {cell: :func:`regimes_checks.median_slope`})."""
    counts, slopes = {}, {}
    for name, r in results.items():
        ok = regimes_checks.regime_ok(r["T"], r["S"], name.endswith("lazy"), s_lazy_max, delay_ratio_min, s_rich_ratio)
        counts[name], slopes[name] = int(ok.sum()), regimes_checks.median_slope(r["T"], abs_deltas)
    return counts, slopes


def independent_fits(results, abs_deltas, seed, init_scale, fit_eps, t_max) -> tuple[float, float]:
    """The first draw of every cell at every |delta| again by :func:`regimes_reference.raw_fit` and
    :func:`regimes_reference.linear_ntk_distance`: (largest relative error of t_fit, largest error of S)."""
    err_t, err_s = 0.0, 0.0
    for r in results.values():
        X, Y, init_seed = regimes_checks.draw_problem(r["shape"], seed, 0)
        for j, m in enumerate(abs_deltas):
            A0, W0, _ = regimes_checks.regime_start(r["shape"], r["sgn"] * m, init_seed, init_scale)
            t1, A1, W1 = regimes_reference.raw_fit(A0, W0, X, Y, fit_eps, t_max)
            err_t = max(err_t, abs(t1 - r["T"][0, j]) / r["T"][0, j])
            err_s = max(err_s, abs(regimes_reference.linear_ntk_distance(X, A0, W0, A1, W1) - r["S"][0, j]))
    return float(err_t), float(err_s)


def whitened_problem(seed, d) -> dict:
    """The whitened problem of App. B.1.1 from ``np.random.default_rng([seed, 22, 1])``: X (2d, d) with X^T X / n = I,
    a Gaussian beta* (2, d), Y = X beta*^T; ``Qs`` = beta* beta*^T (the paper's beta*_p^T beta*_p), its eigenvalues
    ``ev`` and eigenbasis ``V``, and the singular values ``s_star`` of beta*."""
    seed, d = checks.nonnegative_int("seed", seed), checks.positive_int("d", d)
    if d < 2:
        raise ValueError(f"d must be at least c = 2, got {d}")
    rr = np.random.default_rng([seed, 22, 1])
    X = np.linalg.qr(rr.standard_normal((2 * d, d)))[0] * np.sqrt(2 * d)
    b_star = rr.standard_normal((2, d))
    Qs = b_star @ b_star.T
    ev, V = np.linalg.eigh(Qs)
    return dict(X=X, Y=X @ b_star.T, b_star=b_star, Qs=Qs, s_star=np.linalg.svd(b_star, compute_uv=False), ev=ev, V=V)


def _nu(At, Wt, b_star):
    return np.array([np.linalg.solve(a.T, w @ b_star.T) for a, w in zip(At, Wt)])  # nu = A_p^{-1} W beta*_p


def riccati_flows(P, cases, general, t, seed) -> dict:
    """The Riccati check: for each (delta, n0_1 / s_1, n0_2 / s_2) in ``cases`` a shared-eigenspace start
    (``linear_regimes.shared_eigenspace_init``) and for each delta in ``general`` a random isotropic one, the flow on
    the raw parameters at rtol 1e-12 and 1e-13 (:func:`regimes_reference.raw_flow`) and nu(t) from it. Returns
    ``flows`` [(kind, delta, A, W, A2, W2, nu)], ``err_scalar`` (``scalar_riccati`` against the flow, shared starts),
    ``err_lin`` (``riccati_linearized``, every start), ``err_prop`` (the integrator's error carried to nu to first
    order), ``comm`` (the relative commutator of nu(0) and Qs, shared starts)."""
    b_star, Qs, V, ev = P["b_star"], P["Qs"], P["V"], P["ev"]
    starts = [("shared", dl, np.array(fr) * P["s_star"]) for dl, *fr in cases]
    starts += [("general", dl, None) for dl in general]
    flows, err_scalar, err_lin, err_prop, comm = [], 0.0, 0.0, 0.0, 0.0
    for i, (kind, dl, n0) in enumerate(starts):
        if kind == "shared":
            A0, W0 = linear_regimes.shared_eigenspace_init(b_star, dl, n0, seed=seed + i)
        else:
            A0, W0 = linear_networks.isotropic_init(b_star.shape[1], 2, 2, dl, scale=0.5, seed=seed + i)
        At, Wt = regimes_reference.raw_flow(A0, W0, P["X"], P["Y"], t, 1e-12)
        At2, Wt2 = regimes_reference.raw_flow(A0, W0, P["X"], P["Y"], t, 1e-13)
        nus = _nu(At, Wt, b_star)
        flows.append((kind, dl, At, Wt, At2, Wt2, nus))
        inv = np.array([np.linalg.norm(np.linalg.inv(a), 2) for a in At])
        eA, eW = np.linalg.norm(At - At2, axis=(1, 2)), np.linalg.norm(Wt - Wt2, axis=(1, 2))
        prop = inv * (eW * np.linalg.norm(b_star, 2) + eA * np.linalg.norm(nus, 2, axis=(1, 2)))
        err_prop = max(err_prop, float(prop.max()))
        err_lin = max(err_lin, float(np.abs(nus - linear_regimes.riccati_linearized(nus[0], Qs, dl, t)).max()))
        if kind == "shared":
            comm = max(comm, float(np.abs(nus[0] @ Qs - Qs @ nus[0]).max() / (np.abs(nus[0]).max() * np.abs(Qs).max())))
            sc = linear_regimes.scalar_riccati(np.diag(V.T @ nus[0] @ V), ev, dl, t)
            err_scalar = max(err_scalar, float(np.abs(nus - np.einsum("ij,tj,kj->tik", V, sc, V)).max()))
    return dict(flows=flows, err_scalar=err_scalar, err_lin=err_lin, err_prop=err_prop, comm=comm)


def bernoulli_along(flows, Qs, t) -> dict:
    """Bernoulli (a): along each flow of :func:`riccati_flows`, up to the last sample before det A_p changes sign
    (skipped if fewer than 3 samples remain), C = A_p^T A_p against :func:`regimes_reference.nu_c_flow` at rtol
    1e-12 (``bern``: the largest error per flow; ``bern_est``: the integrator's error by the 1e-13 runs) and against
    the wrong equations (``ctrl``: {control: smallest miss}). Also ``n_cut`` (flows passing a singular A_p) and
    ``general`` [(delta, times, C, nu(0))] of the general starts."""
    out = dict(bern=[], bern_est=[], ctrl={k: np.inf for k in regimes_reference.CONTROLS}, n_cut=0, general=[])
    for kind, dl, At, Wt, At2, Wt2, nus in flows:
        det = np.linalg.det(At)
        k_inv = next((k for k in range(1, len(t)) if np.sign(det[k]) != np.sign(det[0])), len(t))
        out["n_cut"] += k_inv < len(t)
        if k_inv < 3:
            continue
        tk, At, At2, nus = t[:k_inv], At[:k_inv], At2[:k_inv], nus[:k_inv]
        Cs, Cs2 = At @ At.transpose(0, 2, 1), At2 @ At2.transpose(0, 2, 1)  # C = A_p^T A_p (A_p = A^T)
        sys1 = regimes_reference.nu_c_flow(nus[0], Cs[0], Qs, dl, tk, 1e-12)
        sys2 = regimes_reference.nu_c_flow(nus[0], Cs[0], Qs, dl, tk, 1e-13)
        out["bern"].append(np.abs(Cs - sys1).max())
        out["bern_est"].append(np.abs(Cs - Cs2).max() + np.abs(sys1 - sys2).max())
        for k in regimes_reference.CONTROLS:  # the miss up to the control's blow-up, if it blows up
            miss = float(np.nanmax(np.abs(Cs - regimes_reference.nu_c_flow(nus[0], Cs[0], Qs, dl, tk, 1e-12, k))))
            out["ctrl"][k] = min(out["ctrl"][k], miss)
        if kind == "general":
            out["general"].append((dl, tk, Cs, nus[0]))
    return out


def bernoulli_shared(P, cases, t, seed) -> dict:
    """Bernoulli (b): for each case a start with C(0) in the shared eigenspace
    (:func:`regimes_checks.bernoulli_shared_start`, rotations from ``np.random.default_rng([seed, 22, 3])``), its flow
    at rtol 1e-12 and 1e-13 against :func:`regimes_reference.bernoulli_closed`: ``cf`` and ``cf_est`` (error and
    integrator error per case), ``start`` (|Delta - delta I| and the off-diagonal of nu(0) and C(0) in the eigenbasis
    V_b), ``shared`` [(delta, C, c(0), n(0))], ``s_b``, ``V_b``."""
    b_star = P["b_star"]
    rs = np.random.default_rng([seed, 22, 3])
    _, s_b, Vt_b = np.linalg.svd(b_star.T)  # beta*_p = U diag(s) V^T
    V_b = Vt_b.T
    out = dict(cf=[], cf_est=[], start=[], shared=[], s_b=s_b, V_b=V_b)
    for dl, *fr in cases:
        A0, W0 = regimes_checks.bernoulli_shared_start(b_star, dl, fr, rs)
        At, _ = regimes_reference.raw_flow(A0, W0, P["X"], P["Y"], t, 1e-12)
        At2, _ = regimes_reference.raw_flow(A0, W0, P["X"], P["Y"], t, 1e-13)
        Cs, Cs2 = At @ At.transpose(0, 2, 1), At2 @ At2.transpose(0, 2, 1)
        nu0 = np.linalg.solve(A0.T, W0 @ b_star.T)
        Vn, Vc = V_b.T @ nu0 @ V_b, V_b.T @ Cs[0] @ V_b
        out["start"] += [np.abs(A0.T @ A0 - W0 @ W0.T - dl * np.eye(2)).max(), np.abs(Vn - np.diag(np.diag(Vn))).max(),
                         np.abs(Vc - np.diag(np.diag(Vc))).max()]
        cf = regimes_reference.bernoulli_closed(np.diag(Vc), np.diag(Vn), s_b**2, dl, t)
        out["cf"].append(np.abs(Cs - np.einsum("ij,tj,kj->tik", V_b, cf, V_b)).max())
        out["cf_est"].append(np.abs(Cs - Cs2).max())
        out["shared"].append((dl, Cs, np.diag(Vc), np.diag(Vn)))
    return out


def b14_check(cases, eta_a, eta_w, horizon, seed, samples=31) -> dict:
    """App. B.1.4: for each (delta, beta*, beta0) three inputs x from ``np.random.default_rng([seed, 22, 2])``, a start
    with that delta, the flow on (a, w) at rtol 1e-12 and 1e-13; ``err_M`` = max |eta_a w^2 + eta_w a^2 -
    sqrt(delta^2 + 4 eta_a eta_w beta^2)|, and at the samples with |beta - beta*| > 1e-3 |beta0 - beta*| ``err``
    = max |single_neuron_time(beta(t_i)) - t_i| and ``est`` = the integrator's error carried to t. Also ``runs``
    [(delta, beta*, beta0, t_i, beta(t_i))] and ``s_x`` = mean x^2."""
    if not horizon > 0 or not (eta_a > 0 and eta_w > 0):
        raise ValueError(f"horizon, eta_a and eta_w must be positive, got {horizon!r}, {eta_a!r}, {eta_w!r}")
    x1 = np.random.default_rng([seed, 22, 2]).standard_normal(3)
    s_x = float(np.mean(x1**2))
    out = dict(err=0.0, err_M=0.0, est=0.0, runs=[], s_x=s_x)
    t_b = np.linspace(0.0, horizon, samples)
    for dl, bs, b0 in cases:
        a0 = np.sqrt((np.hypot(dl, 2 * np.sqrt(eta_a * eta_w) * b0) + dl) / (2 * eta_w))
        runs = [regimes_reference.raw_flow(np.array([[a0]]), np.array([[b0 / a0]]), x1[:, None], bs * x1[:, None],
                                           t_b, tol, eta_a, eta_w) for tol in (1e-12, 1e-13)]
        A, W = [r[0][:, 0, 0] for r in runs], [r[1][:, 0, 0] for r in runs]
        beta, beta2 = A[0] * W[0], A[1] * W[1]
        M_of = lambda b: np.sqrt(dl**2 + 4 * eta_a * eta_w * b**2)
        out["err_M"] = max(out["err_M"], float(np.max(np.abs(eta_a * W[0] ** 2 + eta_w * A[0] ** 2 - M_of(beta)))))
        keep = np.abs(beta - bs) > 1e-3 * abs(b0 - bs)
        keep[0] = False
        out["est"] = max(out["est"], float(np.max(np.abs(beta[keep] - beta2[keep])
                                                  / (s_x * M_of(beta[keep]) * np.abs(beta[keep] - bs)))))
        t_closed = linear_regimes.single_neuron_time(beta[keep], b0, bs, dl, s_x, eta_a, eta_w)
        out["err"] = max(out["err"], float(np.max(np.abs(t_closed - t_b[keep]))))
        out["runs"].append((dl, bs, b0, t_b[keep], beta[keep]))
    return out
