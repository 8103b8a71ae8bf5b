"""The declared parameters of the chapter topo_obstruction (the Sec. 6 toy, Fig. 3; App. F's probability, Fig. 5)."""
from __future__ import annotations

from markovlib.book import params

SPEC = params.declare(
    seed=params.Int(0, why="seed of every random draw"),
    n_points=params.Int(100, why="the sample mean stands for 7/12"),
    toy_lr=params.Real(0.0, 0.01, why="above h = 0.01 the drift of c_k is no longer small; must be > 0 (below)"),
    toy_steps=params.Int(1, why="gradient-descent steps"),
    toy_seeds=params.Int(10, why="a count over seeds"),
    c_toy=params.Real(0.05, 1.0, why="below 0.05 the drift is no longer small against |c_k| (Prop. 3 needs the signs)"),
    learned_frac=params.Real(0.0, 0.1, closed=False, why="learning means a loss far below the bound"),
    dying_frac=params.Real(0.0, 1.0, closed=False, why="a fraction of the points"),
    drift_target=params.Real(0.0, 1.0, closed=False, why="a relative variation (the paper's 1 %)"),
    n_recheck=params.Int(1, "toy_seeds", why="re-runs are among the runs"),
    mc_dims=params.IntList(1, 100,
                           why="App. F's grid of input dimensions"),
    mc_widths=params.IntList(1, 100, why="App. F's grid of widths"),
    n_mc=params.Int(1000, why="Monte Carlo draws per cell"),
    mc_alpha=params.Real(0.0, 0.5, closed=False, why="a family-wise error level"),
    require=[
        ("toy_lr > 0", lambda v: v["toy_lr"] > 0, "a step size in (0, 0.01]"),
        ("10 <= toy_lr * toy_steps <= 100", lambda v: 10 <= v["toy_lr"] * v["toy_steps"] <= 100,
         "the training time: long enough to learn, short enough for the drift"),
    ],
)
