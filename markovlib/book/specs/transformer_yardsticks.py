"""The declared parameters of the chapter ``transformer_yardsticks`` (the full model's two yardsticks, Thms 4 and 5)."""
from __future__ import annotations

from markovlib.book import params

# kappa(w) of the Thm 5 bound, as markovlib.transformer.yardsticks.kappa (the book's machinery imports no part)
kappa = lambda w: 1.0 if w >= 0 else 1 - 4 * w * w  # noqa: E731

theory = params.THEORY_RANGE
SPEC = params.declare(
    margin=params.Real(0.02, 0.5, why="distance of every chain from p + q = 1: the signs are resolved there"),
    p=params.Real(*theory, why="Part I's theory range"),
    q=params.Real(*theory, why="Part I's theory range"),
    p_low=params.Real(*theory, why="Part I's theory range"),
    q_low=params.Real(*theory, why="Part I's theory range"),
    chains_thm4=params.Chains(0.02, theory, why="Thm 4 holds for every chain; its side check needs the margin"),
    d=params.Int(2, 16, why="two for the orthogonal direction; the Thm 5 constant is measured up to d = 16"),
    N=params.Int(1, why="sequence length of the sampled checks"),
    batch=params.Int(8, why="the standard error comes from the sequences"),
    N_exact=params.Int(4, 14, why="2^N_exact sequences are enumerated"),
    w_local=params.Real(-0.49, 1.0, why="Thm 5 needs w > -1/2; |1 + 4w|w|| >= 0.02 keeps the signs resolved"),
    w_trap=params.Real(-0.70, -0.51, why="inside (-1/sqrt2, -1/2), |m| >= 0.02 away from both ends"),
    w_canon_low=params.Real(-3.0, -0.72, why="below -1/sqrt2 (a canonical minimum for p + q < 1, Thm 1)"),
    radii=params.RealList(0.0, 0.1, why="perturbation sizes, where the Thm 5 bound is positive (see together)"),
    n_perturb=params.Int(40, why="the contrast needs lowering draws, a fraction that shrinks near p + q = 1"),
    eps_dir=params.Real(0.01, 0.1, why="predicted changes >= eps^2 |g'(0)| |m| stay far above rounding"),
    demo_std=params.Real(0.0, float("inf"), closed=False, why="std of the random model of the walk-through"),
    seed=params.Int(0, why="any seed"),
    n_sigma=params.Real(3.0, 8.0, why="level of the sampled checks"),
    require=[
        ("p + q >= 1 + margin", lambda v: v["p"] + v["q"] >= 1 + v["margin"], "the chain of Thm 5"),
        ("p_low + q_low <= 1 - margin", lambda v: v["p_low"] + v["q_low"] <= 1 - v["margin"], "the contrast"),
        ("|p + q - 1| >= margin for chains_thm4", lambda v: all(abs(a + b - 1) >= v["margin"]
                                                                for a, b in v["chains_thm4"]), "the side check"),
        ("0 < radii <= min(0.1, kappa(w_local) / 2)", lambda v: 0 < min(v["radii"])
         and max(v["radii"]) <= min(0.1, kappa(v["w_local"]) / 2), "the bound kappa(w) - rho stays positive"),
    ],
)
