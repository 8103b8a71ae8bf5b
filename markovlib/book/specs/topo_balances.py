"""The declared parameters of the chapter ``book/topo_balances`` (a conserved balance per neuron)."""
from __future__ import annotations

import math

from markovlib.book import params

SPEC = params.declare(
    seed=params.Int(0, why="seed of every random draw"),
    dims=params.IntList(1, 10, why="the RK4 drift grows with the gradient: at d = 100 it exceeds flow_tol"),
    width=params.Int(1, why="hidden neurons"),
    t_flow=params.Real(0.0, 2.0, why="the stated horizon; must be > 0 (below)"),
    n_data=params.Int(1, why="training points"),
    n_seeds=params.Int(1, why="networks per d"),
    flow_steps=params.IntList(10, why="RK4 step counts, at least 10 steps"),
    flow_tol=params.Real(0.0, math.inf, closed=False, why="a tolerance is positive"),
    lrs=params.RealList(0.0, 0.1, why="step sizes of the drift study; must be > 0 (below)"),
    batch=params.Int(1, "n_data", why="a minibatch of the training points"),
    slope_lo=params.Real(0.0, 1.0, closed=False, why="a slope below 1 that counts as O(h)"),
    adam_factor=params.Real(1.0, 1e3, why="Adam drifts more than GD: a factor above 1"),
    weight_decay=params.Real(0.0, 1.0, closed=False, why="a decay rate lambda in (0, 1)"),
    require=[
        ("n_seeds * len(dims) >= 10", lambda v: v["n_seeds"] * len(v["dims"]) >= 10, "at least 10 networks in all"),
        ("t_flow > 0", lambda v: v["t_flow"] > 0, "a flow over a positive time"),
        ("flow_steps increasing, at least two", lambda v: len(v["flow_steps"]) >= 2
         and v["flow_steps"] == sorted(set(v["flow_steps"])), "the drift must shrink from the coarsest step"),
        ("min(lrs) > 0", lambda v: min(v["lrs"]) > 0, "step sizes in (0, 0.1]"),
        ("lrs: at least 3 distinct", lambda v: len(v["lrs"]) >= 3 and len(set(v["lrs"])) == len(v["lrs"]),
         "a slope needs at least three step sizes"),
        ("t_flow / max(lrs) >= 10", lambda v: v["t_flow"] / max(v["lrs"]) >= 10, "at least 10 steps at the largest h"),
    ],
)
