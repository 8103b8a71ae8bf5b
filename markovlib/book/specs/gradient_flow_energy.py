"""The declared parameters of the chapter gradient_flow_energy (Gradient flow and the energy)."""
from __future__ import annotations

import math

from markovlib.book import params
from markovlib.book.inference import wilson_lower_z

RANGE, POS = "Part I's theory range at the margin from p + q = 1 (the claims depend on its side)", dict(closed=False)
decreasing = lambda xs, least: len(xs) >= least and all(b < a for a, b in zip(xs, xs[1:]))  # noqa: E731
n_mc_min = lambda v: math.ceil(1.25 * wilson_lower_z(0.05, len(v["sigmas"]) * len(v["pq_mc"])) ** 2  # noqa: E731
                               * v["mc_rate"] / (1 - v["mc_rate"]))
SPEC = params.declare(
    margin=params.Real(0.1, 1.0, why="the stated margin of the claims"),
    margin_good=params.Real(0.05, 1.0, why="the data-agnostic region's stated margin"),
    pq_main=params.Chains(0.1, params.THEORY_RANGE, why=RANGE + "; the panels of Fig. 1: p + q > 1, then < 1"),
    pq_extra=params.Chains(0.1, params.THEORY_RANGE, why=RANGE),
    pq_mc=params.Chains(0.1, params.THEORY_RANGE, why=RANGE),
    pq_good=params.Chains(0.05, params.THEORY_RANGE, why="checked down to margin_good from the line"),
    seed=params.Int(0, why="any seed"), n_traj=params.Int(1, why="any number"), n_indep=params.Int(1, why="any number"),
    t_eff=params.Real(200.0, 1e6, why="the asymptote law's next order, log(4t)/(4t), is <= 0.0084 there"),
    n_grid=params.Int(2, multiple_of=2, why="even: the grid then avoids the lines e = 0 and w = 0"),
    grid_box=params.Real(0.0, math.inf, **POS, why="a half-width"), max_disagree=params.Real(
        0.0, 1.0, why="a share, fixed before the data"),
    separatrix_kappa=params.Real(0.0, math.inf, **POS, why="the band law's constant, fixed before the data"),
    sigmas=params.RealList(0.0, 100.0, **POS, why="increasing, the first at most 0.1: the small-sigma limit (below)"),
    n_mc=params.Int(1, why="at least 1.25 z^2 mc_rate / (1 - mc_rate) (below)"),
    n_criterion=params.Int(1, why="any number"),
    mc_alpha=params.Real(0.0, 0.5, **POS, why="a family-wise error, fixed before the data"),
    mc_rate=params.Real(0.5, 0.9999, why="a rate, fixed before the data"),
    n_good=params.Int(1, why="any number"), gd_pq=params.Chain(0.1, params.THEORY_RANGE, why=RANGE),
    gd_init=params.Pair(-3.0, 3.0, why="a start near the drawn square"),
    gd_time=params.Real(0.0, math.inf, **POS, why="a horizon"),
    gd_lrs=params.RealList(0.0, 1.0, **POS, why="at least three decreasing step sizes (below), for a slope"),
    gd_slope_tol=params.Real(0.0, math.inf, **POS, why="fixed before the data"), gd_ratio_tol=params.Real(
        0.0, math.inf, **POS, why="fixed before the data"),
    iid_pq=params.Chain(0.0, params.THEORY_RANGE, why="p + q = 1 exactly (below): the i.i.d. section"),
    iid_init=params.Pair(-3.0, 3.0, why="near the square"), explorer_init=params.Pair(-2.0, 2.0, why="in the square"),
    n_free=params.Int(2, multiple_of=2, why="even: the grid avoids e = 0 and w = 0"),
    free_agree_min=params.Real(0.0, 1.0, why="a share, fixed before the data"),
    bias_caught=params.Real(0.0, math.inf, **POS, why="a gradient tolerance"),
    free_gd_n=params.Int(2, multiple_of=2, why="even: the grid avoids e = 0 and w = 0"),
    free_gd_time=params.Real(0.0, math.inf, **POS, why="a horizon"),
    free_gd_lrs=params.RealList(0.0, 0.05, why="at least two decreasing step sizes (below), small enough to track"),
    free_gd_order=params.Real(0.0, math.inf, **POS, why="fixed before the data (the estimate gives order 2)"),
    free_gd_gap=params.Real(0.0, math.inf, **POS, why="fixed before the data"),
    require=[
        ("|p + q - 1| >= margin for pq_main, pq_extra, pq_mc, gd_pq",
         lambda v: all(abs(a + b - 1) >= v["margin"] - 1e-12
                       for a, b in v["pq_main"] + v["pq_extra"] + v["pq_mc"] + [v["gd_pq"]]), "the stated margin"),
        ("|p + q - 1| >= margin_good for pq_good",
         lambda v: all(abs(a + b - 1) >= v["margin_good"] - 1e-12 for a, b in v["pq_good"]), "the region's margin"),
        ("pq_main: two chains, p + q > 1 then p + q < 1", lambda v: len(v["pq_main"]) == 2
         and sum(v["pq_main"][0]) > 1 > sum(v["pq_main"][1]), "the panels of Fig. 1"),
        ("sigmas increase, sigmas[0] <= 0.1", lambda v: v["sigmas"][0] <= 0.1 and decreasing(v["sigmas"][::-1], 1),
         "the first is the small-sigma limit"),
        ("n_mc >= 1.25 z^2 mc_rate / (1 - mc_rate)", lambda v: v["n_mc"] >= n_mc_min(v),
         "else even a perfect record cannot pass the Bonferroni-corrected Wilson test"),
        ("gd_lrs: >= 3, decreasing", lambda v: decreasing(v["gd_lrs"], 3), "a log-log slope"),
        ("iid_pq: p + q = 1", lambda v: abs(sum(v["iid_pq"]) - 1.0) < 1e-12, "the i.i.d. section"),
        ("free_gd_lrs: >= 2, decreasing", lambda v: decreasing(v["free_gd_lrs"], 2), "an order of convergence"),
    ],
)
