"""The declared parameters of the chapter canonical_model (the canonical low-rank parameterization)."""
from __future__ import annotations

import math

from markovlib.book import params

THEORY = "Part I's theory range (the lemmas are identities: either side of p + q = 1, or on it)"
SPEC = params.declare(
    p=params.Real(*params.THEORY_RANGE, why=THEORY),
    q=params.Real(*params.THEORY_RANGE, why=THEORY),
    margin=params.Real(0.02, 0.5, why="|c*| >= log(1 + 4 margin) (0.077 at 0.02) is far above the 1e-4 to which "
                                       "the minimization resolves c*, so the side of c* is decided"),
    p_low=params.Real(*params.THEORY_RANGE, why=THEORY),
    q_low=params.Real(*params.THEORY_RANGE, why=THEORY),
    chains_g=params.Chains(0.0, params.THEORY_RANGE, why=THEORY + "; kept margin from the line (below)"),
    dims=params.IntList(2, 256, why="the stated range of the embedding dimension d"),
    e_values=params.RealList(-5.0, 5.0, why="the stated range of e; nonzero and both signs (below)"),
    w_values=params.RealList(-3.0, 3.0, why="the stated range of w"),
    b0=params.Real(-5.0, 5.0, why="a bias of the closed-form check"),
    N=params.Int(1, why="any sequence length (Lemma 2 holds for every N)"),
    batch=params.Int(8, why="the standard error comes from the sequences"),
    N_exact=params.Int(4, 14, why="2^N_exact sequences are enumerated"),
    c_large=params.Real(710.0, 1e6, why="e^c overflows in float64 there"),
    c_negative=params.Real(-700.0, -40.0, why="the textbook bias formula cancels there for q < p"),
    seed=params.Int(0, why="any seed"),
    n_sigma=params.Real(0.0, math.inf, closed=False, why="a tolerance in standard errors, fixed before the data"),
    require=[
        ("p_low + q_low <= 1 - margin", lambda v: v["p_low"] + v["q_low"] <= 1 - v["margin"] + 1e-12,
         "the second loss surface has p + q < 1, at the margin from the line"),
        ("|p + q - 1| >= margin for chains_g", lambda v: all(abs(a + b - 1) >= v["margin"] - 1e-12
                                                             for a, b in v["chains_g"]),
         "the sign of c* is checked on chains_g"),
        ("e_values nonzero, both signs", lambda v: min(v["e_values"]) < 0 < max(v["e_values"])
         and 0.0 not in v["e_values"], "the sign-of-e check"),
        ("some |w| >= 0.1 in w_values", lambda v: any(abs(w) >= 0.1 for w in v["w_values"]),
         "the sign-of-e check needs a bias shift 2w|w|e^2 that the exact loss resolves"),
    ],
)
