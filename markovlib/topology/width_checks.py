"""App. F of Nurisso et al. (NeurIPS 2024) against its Sec. 7: the obstruction probability P = 1 - (1 - p)^l and the
width, checked by closed forms, large-width limits, Student's t and Monte Carlo draws. Used by the chapter
``topo_beyond_remarks``.

* :func:`closed_forms` -- Independent reference: the chapter's closed forms of P at d = 1, 2 (Kaiming, Xavier);
* :func:`student_t_probability` -- Independent reference: P with p = 2 P[T_d > sqrt(x)], F(1, d) = T_d^2 (scipy);
* :func:`kaiming_limits`, :func:`xavier_limits` -- the large-width limits of the chapter's proposition;
* :func:`width_map` and :func:`map_shapes` -- where P(l + 1) < P(l) for every d and l, and the shape of each row;
* :func:`monte_carlo` and :func:`mc_directions` -- Gaussian draws of the weights per cell, their Wilson intervals,
  and the direction (rises, falls) that the Monte Carlo alone decides between neighbouring widths.
"""
from __future__ import annotations

import numpy as np

from ..book.inference import wilson_interval
from ..numerics import checks
from . import appendix, invariant_set

__all__ = ["widths", "closed_forms", "student_t_probability", "kaiming_limits", "xavier_limits", "width_map",
           "map_shapes", "monte_carlo", "mc_directions"]


def widths(l_grid_max, l_asym) -> np.ndarray:
    """Every width 1..l_grid_max and 200 log-spaced widths up to l_asym, sorted, as floats."""
    l_grid_max, l_asym = checks.positive_int("l_grid_max", l_grid_max), checks.positive_int("l_asym", l_asym)
    return np.unique(np.concatenate([np.arange(1, l_grid_max + 1), np.round(np.logspace(0, np.log10(l_asym), 200))]))


def closed_forms(ls) -> dict:
    """Independent reference (no markovlib): P = 1 - exp(log(1 - P)) at the widths ``ls`` for (scheme, d) in
    (kaiming, 1): p = (2/pi) arctan(l^(-1/2)); (kaiming, 2): (1 - P) = (1 + 2/l)^(-l/2); (xavier, 1): p = 1/2;
    (xavier, 2): 1 - p = sqrt((l + 1) / (2 l + 3)) (the chapter's proposition of closed forms)."""
    ls = np.asarray(ls, dtype=float)
    if ls.ndim != 1 or np.any(ls < 1):
        raise ValueError("ls must be a 1-D array of widths >= 1")
    return {("kaiming", 1): -np.expm1(ls * np.log1p(-2 / np.pi * np.arctan(ls ** -0.5))),
            ("kaiming", 2): -np.expm1(-ls / 2 * np.log1p(2 / ls)),
            ("xavier", 1): -np.expm1(ls * np.log(0.5)),
            ("xavier", 2): -np.expm1(ls / 2 * np.log((ls + 1) / (2 * ls + 3)))}


def student_t_probability(d, ls, scheme, *, log=False):
    """Independent reference (scipy only): a / s_a over ||w|| / (sqrt(d) s_w) is Student-t with d degrees of freedom,
    so p = 2 P[T_d > sqrt(x)], x = l (Kaiming) or d (l + 1) / (d + l) (Xavier), and P = 1 - (1 - p)^l; with ``log``
    the value log(1 - P) = l log(1 - p), which does not round to 0."""
    from scipy import stats

    d = checks.positive_int("d", d)
    checks.choice("scheme", scheme, appendix.SCHEMES)
    ls = np.asarray(ls, dtype=float)
    if np.any(ls < 1):
        raise ValueError("ls must be widths >= 1")
    x = ls if scheme == "kaiming" else d * (ls + 1) / (d + ls)
    log_surv = ls * np.log1p(-2 * stats.t.sf(np.sqrt(x), d))
    return log_surv if log else -np.expm1(log_surv)


def kaiming_limits(ls, l_asym) -> dict:
    """The Kaiming limits at l = ``l_asym``: k1_ok (1 - P <= exp(-(2/pi)(sqrt l - 1/(3 sqrt l))) at every width of
    ``ls``, d = 1), k1_ratio (-log(1 - P) / (2 sqrt(l) / pi) at d = 1, from the closed form), k2_scaled (l (1 - 1/e - P)
    at d = 2, tends to 1/e), and kd_rows (d, P / (C_d d^(d/2) l^(1 - d/2)), tolerance twice the next-order terms
    A_d / l + l p / 2) for d in 3, 4, 5, 10, with kd_ok."""
    from scipy import special

    ls, L = np.asarray(ls, dtype=float), float(checks.positive_int("l_asym", l_asym))
    P_k1 = invariant_set.obstruction_probability(1, ls.astype(int), "kaiming")
    k1_bound = np.exp(-(2 / np.pi) * (np.sqrt(ls) - 1 / (3 * np.sqrt(ls))))   # (1 - p)^l <= exp(-l p)
    out = dict(k1_ok=bool(np.all(1 - P_k1 <= k1_bound + 1e-15)),
               k1_ratio=-(L * np.log1p(-2 / np.pi * np.arctan(L ** -0.5))) / (2 * np.sqrt(L) / np.pi),
               k2_scaled=L * (1 - np.exp(-1) - invariant_set.obstruction_probability(2, l_asym, "kaiming")),
               kd_rows=[], kd_ok=True)
    for d_ in (3, 4, 5, 10):
        C_d = special.gamma((d_ + 1) / 2) / (np.sqrt(np.pi) * special.gamma(d_ / 2 + 1))
        lead = C_d * d_ ** (d_ / 2) * L ** (1 - d_ / 2)
        ratio = invariant_set.obstruction_probability(d_, l_asym, "kaiming") / lead
        tol_d = 2 * (d_**2 * (d_ + 1) / (2 * (d_ + 2)) / L + lead / 2)   # twice the next-order terms of the proof
        out["kd_ok"] &= bool(abs(ratio - 1) < tol_d)
        out["kd_rows"].append((d_, ratio, tol_d))
    return out


def xavier_limits(map_dims, ls, l_asym, l_grid_max) -> dict:
    """The Xavier limits: bound_ok (P >= 1 - (1 - p_inf)^l, p_inf = I_1/2(d/2, 1/2), at every width of ``ls`` and
    every d <= ``map_dims``), half (d -> (l = ceil(ln 2 / p_inf), P there)), half_ok (every such P >= 1/2), inf (P at
    ``l_asym`` for each d), and at d = 10 for l = 1..``l_grid_max``: x10 (P), x10_log_steps (steps of log(1 - P)),
    x10_t_err (largest difference to :func:`student_t_probability`), x10_t_log (its log(1 - P)), x10_rising (P and
    log(1 - P) rise at every step), x10_ok (that, the Student-t route rising too and x10_t_err < 1e-12)."""
    from scipy import special

    map_dims, l_grid_max = checks.positive_int("map_dims", map_dims), checks.positive_int("l_grid_max", l_grid_max)
    ls, dims = np.asarray(ls, dtype=float), np.arange(1, map_dims + 1)
    p_inf = special.betainc(dims / 2, 0.5, 0.5)   # I_{1/2}(d/2, 1/2) = P(Z^2 > chi2_d)
    out = dict(bound_ok=True, half={})
    for d_ in dims:
        Px = invariant_set.obstruction_probability(int(d_), ls.astype(int), "xavier")
        out["bound_ok"] &= bool(np.all(Px >= -np.expm1(ls * np.log1p(-p_inf[d_ - 1])) - 1e-12))
        l_b = int(np.ceil(np.log(2) / p_inf[d_ - 1]))
        out["half"][int(d_)] = (l_b, invariant_set.obstruction_probability(int(d_), l_b, "xavier"))
    out["half_ok"] = all(P_ >= 0.5 for _, P_ in out["half"].values())
    out["inf"] = invariant_set.obstruction_probability(dims, l_asym, "xavier")
    l10 = np.arange(1, l_grid_max + 1, dtype=float)
    x10 = invariant_set.obstruction_probability(10, l10.astype(int), "xavier")
    out.update(x10=x10, x10_log_steps=np.diff(appendix.log_survival(10, l10, "xavier")),
               x10_t_log=student_t_probability(10, l10, "xavier", log=True))
    out["x10_t_err"] = float(np.max(np.abs(x10 - -np.expm1(out["x10_t_log"]))))
    out["x10_rising"] = bool(np.all(np.diff(x10) >= 0) and np.all(out["x10_log_steps"] < 0))
    out["x10_ok"] = bool(out["x10_t_err"] < 1e-12 and out["x10_rising"] and np.all(np.diff(out["x10_t_log"]) < 0))
    return out


def width_map(map_dims, l_grid_max) -> dict:
    """(scheme, d) -> boolean array over l = 1..``l_grid_max``: P(l + 1) < P(l), from the steps of
    :func:`appendix.log_survival` (log(1 - P), which still works where P rounds to 1), d = 1..``map_dims``."""
    map_dims, l_grid_max = checks.positive_int("map_dims", map_dims), checks.positive_int("l_grid_max", l_grid_max)
    l_map = np.arange(1, l_grid_max + 2, dtype=float)
    return {(s, d_): np.diff(appendix.log_survival(d_, l_map, s)) > 0
            for s in appendix.SCHEMES for d_ in range(1, map_dims + 1)}


def map_shapes(falls) -> dict:
    """The shape of each row of :func:`width_map` (its runs, :func:`appendix.boolean_runs`): k_rise, k_peak, k_fall
    (Kaiming d where P rises everywhere, rises then falls, falls everywhere), x_rise, x_window (Xavier d where P
    rises everywhere, or rises, falls on a window and rises again), peak_at (d -> width of the largest P), window
    (d -> the first and last l of P(l + 1) < P(l)), k_frac and x_frac (falling steps), n_cells, and shapes_ok (one
    of these shapes per d, Kaiming rising exactly at d = 1, 2, peaks at l <= 3, Xavier rising below the window)."""
    dims = sorted({d_ for _, d_ in falls})
    if not dims or any((s, d_) not in falls for s in appendix.SCHEMES for d_ in dims):
        raise ValueError("falls must be a width_map: both schemes for every d")
    shape = {key: [v for v, _, _ in appendix.boolean_runs(m)] for key, m in falls.items()}
    o = {name: [d_ for d_ in dims if shape[s, d_] == want] for name, s, want in (
        ("k_rise", "kaiming", [False]), ("k_peak", "kaiming", [False, True]), ("k_fall", "kaiming", [True]),
        ("x_rise", "xavier", [False]), ("x_window", "xavier", [False, True, False]))}
    o["peak_at"] = {d_: appendix.boolean_runs(falls["kaiming", d_])[0][2] + 1 for d_ in o["k_peak"]}
    o["window"] = {d_: appendix.boolean_runs(falls["xavier", d_])[1][1:] for d_ in o["x_window"]}
    o["k_frac"] = sum(int(falls["kaiming", d_].sum()) for d_ in dims)
    o["x_frac"] = sum(int(falls["xavier", d_].sum()) for d_ in dims)
    o["n_cells"] = len(dims) * len(falls["kaiming", dims[0]])
    o["shapes_ok"] = (len(o["k_rise"]) + len(o["k_peak"]) + len(o["k_fall"]) == len(dims)
                      and len(o["x_rise"]) + len(o["x_window"]) == len(dims) and o["k_rise"] == [1, 2]
                      and min(o["k_peak"] + o["k_fall"]) == 3 and max(o["peak_at"].values(), default=0) <= 3
                      and o["x_rise"] == list(range(1, min(o["x_window"]) if o["x_window"] else dims[-1] + 1)))
    return o


def monte_carlo(cells, n_mc, z, rng) -> dict:
    """(scheme, d, l) -> (k, Wilson low, Wilson high at ``z``, App. F's P): in each cell ``n_mc`` networks with
    Gaussian weights of the scheme's variances (Kaiming 2/d, 2/l; Xavier 2/(d + l), 2/(l + 1)), k of them with some
    a_k^2 > ||w_k||^2 (no formula on the path). Draws from ``rng`` in chunks of about 2e6 numbers."""
    n_mc, z = checks.positive_int("n_mc", n_mc), checks.positive_real("z", z)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    mc = {}
    for scheme, d_, l_ in cells:
        checks.choice("scheme", scheme, appendix.SCHEMES)
        sw2, sa2 = (2 / d_, 2 / l_) if scheme == "kaiming" else (2 / (d_ + l_), 2 / (l_ + 1))
        k, chunk = 0, max(1, 2_000_000 // (l_ * d_))
        for start in range(0, n_mc, chunk):
            m = min(chunk, n_mc - start)
            w = rng.normal(scale=np.sqrt(sw2), size=(m, l_, d_))
            a = rng.normal(scale=np.sqrt(sa2), size=(m, l_))
            k += int(np.sum(np.any(a**2 > (w**2).sum(-1), axis=1)))
        lo, hi = wilson_interval(k, n_mc, z=z)
        mc[scheme, d_, l_] = (k, lo, hi, invariant_set.obstruction_probability(d_, l_, scheme))
    return mc


def mc_directions(mc) -> list:
    """Between neighbouring widths l1 < l2 of the same scheme and d in a :func:`monte_carlo` result: (scheme, d, l1,
    l2, the Monte Carlo's direction ("rises" or "falls" when the intervals do not overlap, else "undecided"), the
    formula's direction)."""
    pairs = []
    for (s1, d1, l1), v1 in mc.items():
        for (s2, d2, l2), v2 in mc.items():
            if (s1, d1) == (s2, d2) and l1 < l2 and not any(s == s1 and dd == d1 and l1 < ll < l2 for s, dd, ll in mc):
                mc_dir = "rises" if v2[1] > v1[2] else "falls" if v2[2] < v1[1] else "undecided"
                pairs.append((s1, d1, l1, l2, mc_dir, "rises" if v2[3] > v1[3] else "falls"))
    return pairs
