"""The declared parameters of the chapter ``attention`` (the attention scalar, Sec. 4.1 and App. G)."""
from __future__ import annotations

import math

from markovlib.book import params

RANGE, POS = "Part I's theory range at the margin from p + q = 1 (the claims depend on its side)", dict(closed=False)
increasing = lambda xs: all(b > a for a, b in zip(xs, xs[1:]))  # noqa: E731
SPEC = params.declare(
    margin=params.Real(0.1, 0.5, why="the claims are stated away from the i.i.d. line"),
    p_hi=params.Real(*params.THEORY_RANGE, why=RANGE + "; p_hi + q_hi > 1 (below)"),
    q_hi=params.Real(*params.THEORY_RANGE, why=RANGE),
    p_lo=params.Real(*params.THEORY_RANGE, why=RANGE + "; p_lo + q_lo < 1 (below)"),
    q_lo=params.Real(*params.THEORY_RANGE, why=RANGE),
    pq_pairs=params.Chains(0.1, params.THEORY_RANGE, why=RANGE + "; both sides of the line (below)"),
    seed=params.Int(0, why="any seed"),
    torch_dims=params.IntList(1, why="any embedding dimension"),
    torch_lengths=params.IntList(1, why="any sequence length"),
    n_root_starts=params.Int(1, why="any number"), root_box=params.Real(0.0, math.inf, **POS, why="a half-width"),
    set_tol=params.Real(1e-9, 1e-3, why="above the roots' resolution (|grad L| < 1e-10), below the sets' separation"),
    n_random=params.Int(1, why="any number"),
    line_tol=params.Real(1e-12, 1e-4, why="above LSODA's error at rtol 1e-11"),
    min_checked=params.Int(1, why="any number of points per flow"),
    example_pq=params.Chain(0.1, params.THEORY_RANGE, why=RANGE),
    t_eff=params.Real(200.0, 1e6, why="the bound derived in gradient_flow_energy for the slowest approach"),
    example_theta=params.RealList(why="a start [e0, w0, a0] (three entries, below)"),
    squeeze_pq=params.Chain(0.1, params.THEORY_RANGE, why=RANGE),
    squeeze_theta=params.RealList(why="a start [e0, w0, a0] (three entries, below)"),
    mc_sigmas=params.RealList(0.0, 3.0, why="positive and increasing, the first at most 0.1: the small-sigma limit"),
    mc_n=params.Int(100, why="a Wilson bound above mc_limit needs it"),
    mc_pred_n=params.Int(1, why="any number"),
    mc_alpha=params.Real(0.0, 0.5, **POS, why="a family-wise error, fixed before the data"),
    mc_limit=params.Real(0.5, 0.9999, why="a rate, fixed before the data"),
    mc_trend_se=params.Real(0.0, math.inf, **POS, why="fixed before the data"),
    grid_n=params.Int(2, multiple_of=2, why="even: no start on e0 = 0, a critical point"),
    slice_a0=params.RealList(-2.0, 2.0, why="slices inside the drawn box"),
    n_traj=params.Int(1, why="any number"), max_steps=params.Int(1, why="any step cap"),
    sep_a=params.RealList(-50.0, -3.0, why="where the next-order term of the asymptote is resolved (derived below)"),
    sep_resolve=params.Real(1.0, 1e6, why="fixed before the data"),
    control_scale=params.Real(1.001, 2.0, why="a flow that visibly leaves its line"),
    require=[
        ("|p + q - 1| >= margin for every chain", lambda v: all(abs(a + b - 1) >= v["margin"] - 1e-12 for a, b in (
            [(v["p_hi"], v["q_hi"]), (v["p_lo"], v["q_lo"]), v["example_pq"], v["squeeze_pq"]] + v["pq_pairs"])),
         "the stated margin"),
        ("p_hi + q_hi > 1 > p_lo + q_lo", lambda v: v["p_hi"] + v["q_hi"] > 1 > v["p_lo"] + v["q_lo"],
         "one chain on each side of the line"),
        ("pq_pairs on both sides of p + q = 1", lambda v: any(a + b > 1 for a, b in v["pq_pairs"])
         and any(a + b < 1 for a, b in v["pq_pairs"]), "the basins' dependence on the side"),
        ("len(example_theta) == len(squeeze_theta) == 3",
         lambda v: len(v["example_theta"]) == len(v["squeeze_theta"]) == 3, "starts (e0, w0, a0)"),
        ("mc_sigmas increase, 0 < mc_sigmas[0] <= 0.1",
         lambda v: 0 < v["mc_sigmas"][0] <= 0.1 and increasing(v["mc_sigmas"]),
         "the first is the small-sigma limit"),
    ],
)
