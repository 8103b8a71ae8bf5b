"""Part II: the steps of the chapter grq_minimal_model, one call each (Kunin et al., NeurIPS 2024, Sec. 3, App. A).

Each function computes one step of the chapter on the whitened single neuron f(x) = a w^T x (d = 2, X^T X / n = I,
beta* = X^T y / n): delta's drift along ``single_neuron_flow`` (App. A.1), the three surfaces of Fig. 2, the reduced
(mu, phi) system of eq. (2) against autograd and the full flow, the closed form of App. A.2 against an independent
integration (:mod:`markovlib.richlazy.minimal_reference`), the two basins of App. A.2.5 (Fig. 7) and the flows
started on the separating surface, and the kernel distances of Fig. 3. Numbers are returned; the chapter prints
them (only stable digits) and records the claims.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from ..book.formatting import bound, fixed
from ..numerics import checks
from .minimal_exact import basin_margin, crossing_cosine, exact_mu_phi, separating_surface
from .minimal_limits import init_from_product
from .minimal_model import conserved_delta, kernel_distance, ntk, reduced_vector_field, single_neuron_flow
from .minimal_reference import crossing_cosine_reference, neuron_flows, reduced_field_autograd
from .minimal_regimes import beta0_at_cosine, kernel_distance_curve, mu_phi, random_whitened_init, saddle_distance


def _beta_star(beta_star):
    bstar = checks.finite_array("beta_star", beta_star, ndim=1)
    if bstar.shape != (2,) or not np.any(bstar):
        raise ValueError(f"beta_star must be a nonzero vector of length 2, got {beta_star!r}")
    return bstar, float(np.linalg.norm(bstar)), bstar / np.linalg.norm(bstar)


def delta_drift(rng, n_random, t, eta_a=0.5, eta_w=2.0):
    """App. A.1 on random non-whitened data: a 6 x 3 Gaussian X scaled so that the largest eigenvalue of X^T X / n
    is 1, y Gaussian, n_random initializations with |a0| <= 1.5, ||w0|| in [0.1, 1.5]; each integrated by
    ``single_neuron_flow`` at rates (eta_a, eta_w). Returns dict(drift: max |delta(t) - delta(0)|, X, y, a0, W0,
    end: the flows' end points (n_random, 4) as [a, w])."""
    n_random = checks.positive_int("n_random", n_random)
    t = checks.finite_array("t", t, ndim=1)
    X = rng.normal(size=(6, 3))
    X /= np.sqrt(np.linalg.eigvalsh(X.T @ X / 6).max())
    y = rng.normal(size=6)
    a0 = rng.uniform(-1.5, 1.5, n_random)
    W0 = rng.normal(size=(n_random, 3))
    W0 *= rng.uniform(0.1, 1.5, (n_random, 1)) / np.linalg.norm(W0, axis=1, keepdims=True)
    drift, ends = 0.0, []
    for a0_, w0_ in zip(a0, W0):
        a_, w_ = single_neuron_flow(a0_, w0_, X, y, t, eta_a=eta_a, eta_w=eta_w)
        d_ = conserved_delta(a_, w_, eta_a, eta_w)
        drift = max(drift, float(np.max(np.abs(d_ - d_[0]))))
        ends.append(np.concatenate(([a_[-1]], w_[-1])))
    return dict(drift=drift, X=X, y=y, a0=a0, W0=W0, end=np.array(ends))


def sheet_runs(beta0, sheet_deltas, X, y, t):
    """Fig. 2: the flow from the product beta0 (a0 > 0) on the surface a^2 - ||w||^2 = delta of each delta.
    Returns ({delta: (a0, w0, a(t), w(t))}, max |a^2 - ||w||^2 - delta| along them)."""
    runs, worst = {}, 0.0
    for delta in sheet_deltas:
        a0, w0 = init_from_product(beta0, delta)
        a_, w_ = single_neuron_flow(a0, w0, X, y, t)
        worst = max(worst, float(np.abs(a_**2 - (w_**2).sum(1) - delta).max()))
        runs[delta] = (a0, w0, a_, w_)
    return runs, worst


def reduced_field_error(rng, X, y, beta_star, delta_max, n=200):
    """Eq. (2): the largest relative error of ``reduced_vector_field`` against the autograd chain rule
    (:func:`~markovlib.richlazy.minimal_reference.reduced_field_autograd`) at n random whitened initializations
    (``random_whitened_init``), |err| / (1 + |reference|)."""
    bstar, b, _ = _beta_star(beta_star)
    worst = 0.0
    for _ in range(checks.positive_int("n", n)):
        delta, mu0, phi0, a0, w0 = random_whitened_init(rng, bstar, delta_max)
        dmu_ref, dphi_ref = reduced_field_autograd(X, y, bstar, a0, w0)
        dmu, dphi = reduced_vector_field(mu0, phi0, delta, b)
        worst = max(worst, abs(dmu - dmu_ref) / (1 + abs(dmu_ref)), abs(dphi - dphi_ref) / (1 + abs(dphi_ref)))
    return worst


def reduced_system_error(inits, X, y, beta_star, t):
    """Eq. (2) integrated (scipy DOP853, rtol 1e-11) from each (delta, mu0, phi0, a0, w0) of ``inits`` against
    (mu, phi) of the full flow ``single_neuron_flow``: the largest |difference| on the times t."""
    bstar, b, _ = _beta_star(beta_star)
    t = checks.finite_array("t", t, ndim=1)
    worst = 0.0
    for delta, mu0, phi0, a0, w0 in inits:
        mu_f, phi_f = mu_phi(*single_neuron_flow(a0, w0, X, y, t), bstar)
        sol = solve_ivp(lambda _, z, d=delta: np.array(reduced_vector_field(z[0], np.clip(z[1], -1, 1), d, b)),
                        (0, t[-1]), [mu0, phi0], method="DOP853", t_eval=t, rtol=1e-11, atol=1e-13)
        worst = max(worst, float(np.abs(sol.y[0] - mu_f).max()), float(np.abs(sol.y[1] - phi_f).max()))
    return worst


def paper_runs(beta0, deltas, X, y, beta_star, t, print_tol=1e-6, drift_tol=1e-9):
    """App. A.2 at the paper's deltas: for each delta the flow (``single_neuron_flow``) from the product beta0 and
    its closed form (``exact_mu_phi``), and an independent integration of all of them (DOP853, rtol 1e-11).
    Returns (runs {delta: dict(a, w, mu, phi, mu_e, phi_e, a0, w0)}, the independent (a (N, m), W (N, 2, m)),
    the largest |closed form - independent flow|, the largest drift of delta, the table as text (errors as bounds
    of ``print_tol``, drifts of ``drift_tol``))."""
    bstar, b, _ = _beta_star(beta_star)
    runs = {}
    for delta in deltas:
        a0, w0 = init_from_product(beta0, delta)
        a_, w_ = single_neuron_flow(a0, w0, X, y, t)
        mu_f, phi_f = mu_phi(a_, w_, bstar)
        mu_e, phi_e = exact_mu_phi(t, delta, b, mu_f[0], phi_f[0])
        runs[delta] = dict(a=a_, w=w_, mu=mu_f, phi=phi_f, mu_e=mu_e, phi_e=phi_e, a0=a0, w0=w0)
    a_ind, W_ind = neuron_flows(np.array([runs[d]["a0"] for d in deltas]), np.array([runs[d]["w0"] for d in deltas]),
                                np.eye(2), bstar, t[-1], t.size, rtol=1e-11)
    lines = [f"{'delta':>6}{'max |mu err|':>15}{'max |phi err|':>15}{'drift':>10}"]
    err, drift = 0.0, 0.0
    for i, delta in enumerate(deltas):
        run = runs[delta]
        mu_i, phi_i = mu_phi(a_ind[i], W_ind[i].T, bstar)
        em, ep = float(np.abs(mu_i - run["mu_e"]).max()), float(np.abs(phi_i - run["phi_e"]).max())
        dr = float(np.abs(conserved_delta(run["a"], run["w"]) - delta).max())
        err, drift = max(err, em, ep), max(drift, dr)
        lines.append(f"{delta:>6g}{bound(em, print_tol):>15}{bound(ep, print_tol):>15}{bound(dr, drift_tol):>10}")
    return runs, (a_ind, W_ind), err, drift, "\n".join(lines)


def random_exact_error(inits, beta_star, t):
    """App. A.2 and Lemma A.1 at random initializations (delta, mu0, phi0, a0, w0): the closed form against an
    independent integration (rtol 1e-11). Returns (largest |error| of mu and phi, flows whose a changes sign, most
    sign changes of a u along one flow, u = w . beta* / |beta*|)."""
    bstar, b, e = _beta_star(beta_star)
    a_r, W_r = neuron_flows(np.array([r[3] for r in inits]), np.array([r[4] for r in inits]), np.eye(2), bstar,
                            t[-1], t.size, rtol=1e-11)
    err, crossings, au_changes = 0.0, 0, 0
    for (delta, mu0, phi0, a0, _), a_, W_ in zip(inits, a_r, W_r):
        mu_f, phi_f = mu_phi(a_, W_.T, bstar)
        mu_e, phi_e = exact_mu_phi(t, delta, b, mu0, phi0)
        err = max(err, float(np.abs(mu_f - mu_e).max()), float(np.abs(phi_f - phi_e).max()))
        crossings += bool(np.any(np.sign(a_) != np.sign(a0)))
        au_changes = max(au_changes, int(np.count_nonzero(np.diff(np.sign(a_ * (W_.T @ e))) != 0)))
    return err, crossings, au_changes


def tanh_law_error(beta_star_norm, t, starts=((0.05, -0.9), (1.0, 0.0), (2.0, 0.7))):
    """App. A.2.2: the largest |phi(t) - tanh(b t + artanh phi0)| of the balanced closed form (delta = 0, mu0 > 0)
    at the starts (mu0, phi0)."""
    b = checks.positive_real("beta_star_norm", beta_star_norm)
    return max(float(np.abs(exact_mu_phi(t, 0.0, b, mu0, phi0)[1] - np.tanh(b * t + np.arctanh(phi0))).max())
               for mu0, phi0 in starts)


def basin_flows(rng, beta_star, box, n_mc, n_grid, slice_s, n_plane, T):
    """Fig. 7 (App. A.2.5): initializations uniform in [-box, box]^3 (n_mc), on an n_grid x n_grid grid of (u, a)
    in the plane where the part of w across beta* is slice_s, and n_plane on a circle of radius 1.9 in the plane
    s = 0; each integrated independently to T (step 0.05 for the zero crossings). Returns a dict of the
    initializations, their basin margins c1 (``basin_margin``), deltas, the flows, the branch sign a(T) and the
    zero crossings of a, with slices ``mc``, ``grid``, ``plane`` into them."""
    bstar, _, e = _beta_star(beta_star)
    box, T = checks.positive_real("box", box), checks.positive_real("T", T)
    n_mc, n_grid, n_plane = (checks.positive_int(k, v) for k, v in (("n_mc", n_mc), ("n_grid", n_grid),
                                                                     ("n_plane", n_plane)))
    e_perp = np.array([-e[1], e[0]])
    a_mc = rng.uniform(-box, box, n_mc)
    W_mc = rng.uniform(-box, box, (n_mc, 2))
    grid_1d = np.linspace(-box, box, n_grid)
    U_g, A_g = np.meshgrid(grid_1d, grid_1d)
    W_g = U_g[..., None] * e + slice_s * e_perp
    ring = np.linspace(0, 2 * np.pi, n_plane, endpoint=False) + np.pi / n_plane
    a_all = np.concatenate([a_mc, A_g.ravel(), 1.9 * np.sin(ring)])
    W_all = np.concatenate([W_mc, W_g.reshape(-1, 2), 1.9 * np.cos(ring)[:, None] * e])
    a_tr, W_tr = neuron_flows(a_all, W_all, np.eye(2), bstar, T, int(round(T / 0.05)) + 1)
    return dict(a0=a_all, W0=W_all, margin=basin_margin(a_all, W_all, bstar), delta=a_all**2 - np.sum(W_all**2, 1),
                a=a_tr, W=W_tr, branch=np.sign(a_tr[:, -1]), settled=np.abs(a_tr[:, -1]) > 0.1,
                crossings=np.sum(np.diff(np.sign(a_tr), axis=1) != 0, axis=1), grid_1d=grid_1d, U=U_g, A=A_g,
                mc=slice(0, n_mc), grid=slice(n_mc, n_mc + n_grid**2), plane=slice(n_mc + n_grid**2, None))


def basin_agreement(basin, margin_min):
    """App. A.2.5 on :func:`basin_flows`: for the Monte Carlo draws and the grid, (k, n) of the initializations
    outside the margin |c1| >= margin_min whose flow settles on the branch sign c1, and the count excluded; the
    Monte Carlo flows where a changes sign, observed and predicted (c1 a0 < 0); the most zero crossings of a along
    one flow; the flows with delta > 0 and those that end on their starting sheet."""
    if not float(margin_min) >= 0:
        raise ValueError(f"margin_min must be >= 0, got {margin_min!r}")
    m, branch = basin["margin"], basin["branch"]
    rows = {}
    for name in ("mc", "grid"):
        sl = basin[name]
        keep = np.abs(m[sl]) >= margin_min
        agree = (branch[sl] == np.sign(m[sl])) & basin["settled"][sl]
        rows[name] = (int(np.sum(agree[keep])), int(np.sum(keep)), int(np.sum(~keep)))
    out_mc = np.abs(m[basin["mc"]]) >= margin_min
    up = basin["delta"] > 0
    return dict(rows=rows, changed=int(np.sum((basin["crossings"][basin["mc"]] == 1) & out_mc)),
                predicted=int(np.sum((m[basin["mc"]] * basin["a0"][basin["mc"]] < 0) & out_mc)),
                max_cross=int(basin["crossings"].max()), n_up=int(up.sum()),
                n_sheet_kept=int(np.sum(branch[up] == np.sign(basin["a0"][up]))))


def surface_to_saddle(surface_deltas, beta_star, T, tau=0.7):
    """App. A.2.5, item 4: points of the separating surface (``separating_surface`` at parameter tau) integrated
    independently to T, their closest approach to the saddle (0, sqrt(-delta) e_perp) and the closed-form distance
    at T (``saddle_distance``). Returns dict(a, W (flows), closest, predicted, excess = max(closest - predicted),
    residual = max |c1| of the points)."""
    bstar, b, e = _beta_star(beta_star)
    e_perp = np.array([-e[1], e[0]])
    deltas = np.array(surface_deltas, dtype=float)
    if deltas.ndim != 1 or np.any(deltas > 0):
        raise ValueError(f"surface_deltas must be a list of deltas <= 0 (the surface is empty above 0), got "
                         f"{surface_deltas!r}")
    a_s, u_s, s_s = separating_surface(deltas, tau, b)
    W_s = u_s[:, None] * e + s_s[:, None] * e_perp
    a_sd, W_sd = neuron_flows(a_s, W_s, np.eye(2), bstar, T, 1401)
    w_inf = np.sqrt(-deltas)[:, None, None] * e_perp[None, :, None]
    closest = np.sqrt(a_sd**2 + np.sum((W_sd - w_inf) ** 2, axis=1)).min(axis=1)
    pred = np.array([saddle_distance(dl, a0, T, b) for dl, a0 in zip(deltas, a_s)])
    return dict(a=a_sd, W=W_sd, closest=closest, predicted=pred, excess=float(np.max(closest - pred)),
                residual=float(np.abs(basin_margin(a_s, W_s, bstar)).max()))


def kernel_curves(runs, X, beta_star, t):
    """Fig. 3: S(0, t) of each run of :func:`paper_runs` from the closed form (``kernel_distance_curve``) and from
    ``ntk`` on the flow. Returns (largest |difference|, {delta: closed-form S}, {delta: flow S},
    {delta: closed-form beta(t)})."""
    bstar, _, _ = _beta_star(beta_star)
    err, S_th, S_fl, beta_th = 0.0, {}, {}, {}
    for delta, run in runs.items():
        S_th[delta], beta_th[delta] = kernel_distance_curve(t, delta, bstar, run["mu"][0], run["phi"][0], run["w0"])
        K0 = ntk(X, run["a"][0], run["w"][0])
        S_fl[delta] = np.array([kernel_distance(K0, ntk(X, ak, wk)) for ak, wk in zip(run["a"], run["w"])])
        err = max(err, float(np.abs(S_th[delta] - S_fl[delta]).max()))
    return err, S_th, S_fl, beta_th


def regime_table(deltas, S_flow, S_end, half_times, c1, crossed, beta0_norm, beta_star_norm):
    """Fig. 3's table at one beta0, as text: per delta S(0, T) of the flow, the closed-form S(0, inf), the
    half-rise time (where defined), the basin margin c1, the threshold cosine cos_c(delta) (``crossing_cosine``,
    eq. grq-eq-cos-c; "< -1" for delta >= 0) and whether a crosses zero."""

    lines = [f"{'delta':>6}{'S(0, T) flow':>14}{'S(0, inf) closed form':>23}{'half-rise time':>16}{'c1':>9}"
             f"{'cos_c':>8}{'a crosses 0':>13}"]
    for i, d in enumerate(deltas):
        ht = fixed(half_times[d], 1) if d in half_times and np.isfinite(half_times[d]) else "-"
        cc = fixed(crossing_cosine(d, beta0_norm, beta_star_norm), 3) if d < 0 else "< -1"
        lines.append(f"{d:>6g}{fixed(S_flow[d][-1], 3):>14}{fixed(S_end[d], 4):>23}{ht:>16}{fixed(c1[d], 3):>9}"
                     f"{cc:>8}{'yes' if crossed[i] else 'no':>13}")
    return "\n".join(lines)


def scan_crossings(cosines, beta0, beta_star, deltas, T, surface_min=1e-4):
    """Eq. grq-eq-cos-c over a scan: for every cosine of beta0 to beta* (``beta0_at_cosine``) and every delta < 0,
    the flow from the product (a0 > 0) integrated independently to T (step 0.05); a crosses zero iff
    cos < cos_c(delta) (``crossing_cosine``). Starts within ``surface_min`` of the surface (|c1| small) go to the
    saddle and are left out. Returns dict(agree, kept, crossed, excluded, flows)."""

    bstar, b, _ = _beta_star(beta_star)
    r0 = float(np.linalg.norm(beta0))
    inits = [(c, d, *init_from_product(beta0_at_cosine(c, beta0, bstar), d)) for c in cosines for d in deltas if d < 0]
    a_sc, _ = neuron_flows(np.array([x[2] for x in inits]), np.array([x[3] for x in inits]), np.eye(2), bstar, T,
                           int(round(T / 0.05)) + 1)
    c1 = np.array([float(basin_margin(x[2], x[3], bstar)) for x in inits])
    obs = np.any(np.sign(a_sc) != np.sign(a_sc[:, :1]), axis=1)
    pred = np.array([x[0] < crossing_cosine(x[1], r0, b) for x in inits])
    keep = np.abs(c1) >= surface_min
    return dict(agree=int(np.sum((obs == pred)[keep])), kept=int(keep.sum()), crossed=int(obs.sum()),
                excluded=int((~keep).sum()), flows=len(inits))


def explorer_branches(results, grid_deltas):
    """The explorer's frames (``static_explorer`` results with delta, cos, branch, crossed) against the threshold
    cosine written out (:func:`~markovlib.richlazy.minimal_reference.crossing_cosine_reference`): frames on the
    predicted branch, frames where a crosses 0, the closest cosine to a threshold, and whether every downstream row
    of the grid has frames on both sides of its threshold."""

    pred = ["a < 0" if r["cos"] < crossing_cosine_reference(r["delta"]) else "a > 0" for r in results]
    both = all(len({p for r, p in zip(results, pred) if r["delta"] == d}) == 2 for d in grid_deltas if d < 0)
    return dict(on_branch=sum(r["branch"] == p for r, p in zip(results, pred)),
                crossed=sum(bool(r["crossed"]) for r in results), both_sides=both,
                closest=min(abs(r["cos"] - crossing_cosine_reference(r["delta"])) for r in results))
