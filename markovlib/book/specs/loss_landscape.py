"""The declared parameters of the chapter loss_landscape (The loss landscape)."""
from __future__ import annotations

import math

from markovlib.book import params

M_W = 1 + 2 * 2.2**2  # the largest |m(w')| = |1 + 2w'|w'|| on the perturbation discs (|w'| <= 2 + 0.2)
RANGE = "Part I's theory range, at the margin from p + q = 1 (the claims depend on the side of the line)"
SPEC = params.declare(
    margin=params.Real(0.02, 0.5, why="the stated margin of the claims"),
    pq_main=params.Chains(0.02, params.THEORY_RANGE, why=RANGE + "; the two figure panels: p + q > 1, then < 1"),
    pq_extra=params.Chains(0.02, params.THEORY_RANGE, why=RANGE + "; the perturbation tests use the first two"),
    seed=params.Int(0, why="any seed"),
    n_random=params.Int(10, why="enough random points per chain for the autograd checks"),
    box=params.Real(0.1, 3.0, why="random points in [-box, box]^2"),
    n_starts=params.Int(120, why="at the corners about a sixth of the starts land on Gamma*: 120 give "
                                 "min_gamma_roots with overwhelming probability"),
    max_no_root=params.Real(0.0, 1.0, why="a fraction of stalled starts, fixed before the data"),
    min_gamma_roots=params.Int(0, why="fixed before the data"),
    n_axis=params.Int(11, why="enough axis points for the perturbation test"),
    n_perturb=params.Int(100, why="enough perturbations per point"),
    radius=params.Real(0.0, 0.2, closed=False, why="small discs; and radius^2 M_W <= |c*| (below)"),
    rounding_ulps=params.Real(0.0, math.inf, closed=False, why="the rounding level of a loss value, in eps"),
    min_resolved=params.Real(0.0, 1.0, why="a fraction, fixed before the data"),
    n_gamma=params.Int(5, why="enough points on Gamma* for the Hessian checks"),
    rtol_autograd=params.Real(0.0, math.inf, closed=False, why="a relative tolerance"),
    full_d=params.Int(1, why="any width"),
    full_length=params.Int(2, 12, why="2^full_length sequences are enumerated"),
    explorer_inits=params.PairList(-2.0, 2.0, why="starts inside the drawn square"),
    require=[
        ("|p + q - 1| >= margin for every chain", lambda v: all(abs(a + b - 1) >= v["margin"] - 1e-12
                                                                for a, b in v["pq_main"] + v["pq_extra"]),
         "the stated margin from the line"),
        ("pq_main: two chains, p + q > 1 then p + q < 1", lambda v: len(v["pq_main"]) == 2
         and sum(v["pq_main"][0]) > 1 > sum(v["pq_main"][1]), "the two figure panels"),
        ("len(pq_extra) >= 2", lambda v: len(v["pq_extra"]) >= 2, "the perturbation tests use the first two"),
        ("radius^2 M_W <= |c*| for pq_main and pq_extra[:2]",
         lambda v: all(v["radius"] <= math.sqrt(abs(math.log((1 - a) * (1 - b) / (a * b))) / M_W)
                       for a, b in v["pq_main"] + v["pq_extra"][:2]),
         "the sign law is first order in c' = e'^2 m(w'): it holds while |c'| <= |c*| (the perturbation test)"),
    ],
)
