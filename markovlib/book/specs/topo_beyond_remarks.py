"""The declared parameters of the chapter topo_beyond_remarks (biases, width and many outputs: the paper's remarks)."""
from __future__ import annotations

import math

from markovlib.book import params
from markovlib.topology import appendix, homology


def _bias_case_ok(d, e, signs):
    """The stated range of an App. E case: d, e at most 2, spheres of total dimension at most 2, three neurons only
    with d = e = 1."""
    sphere_dim = sum(d if s_ == "+" else e - 1 for s_ in signs)  # dimension of the compact part
    return d <= 2 and e <= 2 and sphere_dim <= 2 and not (len(signs) == 3 and d * e > 1)


SPEC = params.declare(
    seed=params.Int(0, why="seed of every random draw"),
    bias_cases=homology.cases_rule("+-", _bias_case_ok, "d, e at most 2; spheres of total dimension at most 2; "
                                   "three neurons only with d = e = 1", why="300 landmarks cover the sample"),
    c_abs=params.Real(0.5, 2.0, why="the samples are scaled by 1/sqrt(c_abs): one set of thresholds serves"),
    trunc=params.Real(0.05, 0.15, why="a contractible truncation of the free factors"),
    n_landmarks=params.Int(300, why="sparser samples give noise bars near persist_min"),
    raw_factor=params.Int(5, why="raw points per landmark"),
    max_edge=params.Real(0.0, math.inf, closed=False, why="true features outlive it"),
    persist_min=params.Real(0.0, math.inf, closed=False, why="below max_edge (below)"),
    graph_radius=params.Real(0.4, 0.6, why="above the sample spacing, below the gaps"),
    gd_bias_lr=params.Real(0.0, 0.01, closed=False, why="a small step, close to the flow"),
    gd_bias_steps=params.Int(1, why="steps of the gradient descent with biases"),
    order_factor=params.Real(1.0, 4.0, closed=False, why="first order: the drift falls 4 times within this factor"),
    map_dims=params.Int(12, 30, why="the Xavier window opens at d = 12"),
    l_grid_max=params.Int(1000, 100000, why="the exact map of widths (time budget)"),
    l_asym=params.Int(10**5, 10**7, why="the stated range of the limits"),
    mc_cells=appendix.mc_cells_rule(why="the rise-and-fall check compares widths; d l is the time budget"),
    n_mc=params.Int(1000, why="Monte Carlo draws per cell"),
    mc_alpha=params.Real(0.0, 0.5, closed=False, why="a family-wise error level"),
    g_d=params.Int(2, 5, why="the stated range"),
    g_e=params.Int(2, 3, why="several outputs, the stated range"),
    g_c=params.Real(-1.0, -0.1, why="a pathological neuron, the stated range"),
    g_draws=params.Int(10, why="counts need 10 draws"),
    g_T=params.Real(40.0, 200.0, why="the stated range of horizons"),
    g_data=params.Int(4000, why="sampling noise of the crossing time"),
    g_lr=params.Real(0.0, 0.02, closed=False, why="a step close to the flow"),
    time_tol=params.Real(0.0, 1.0, closed=False, why="a relative difference of times"),
    count_rate=params.Real(0.5, 1.0, why="a rate in [0.5, 1) (below 1: below)"),
    pop_alpha=params.Real(0.0, 0.05, closed=False, why="a family-wise error level"),
    require=[
        ("persist_min < max_edge", lambda v: v["persist_min"] < v["max_edge"], "a feature must fit in the filtration"),
        ("count_rate < 1", lambda v: v["count_rate"] < 1, "a rate in [0.5, 1)"),
    ],
)
