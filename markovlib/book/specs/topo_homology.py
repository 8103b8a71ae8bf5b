"""The declared parameters of the chapter topo_homology (the topology of H(c): Thm 1, Cor. 1-3, Prop. 3, Thm 2)."""
from __future__ import annotations

from markovlib.book import params
from markovlib.topology import homology

SPEC = params.declare(
    seed=params.Int(0, why="seed of every random draw"),
    cases=homology.cases_rule("+-0", lambda d, e, sg: d + e <= (4 if len(sg) == 1 else 3),
                              "d + e at most 4 for one neuron, at most 3 for two or three",
                              why="Rips complexes of larger samples are beyond the time budget"),
    c_abs=params.Real(0.0, 100.0, why="the check is scale-free; at 0 every +/- neuron is a cone (vacuous); > 0 below"),
    n_landmarks=params.Int(300, why="sparser landmarks blur the features"),
    raw_factor=params.Int(5, why="raw points per landmark for farthest-point sampling"),
    trunc=params.Real(0.0, 0.2, closed=False, why="at 0.3 and above the truncated +/- factors close the gap"),
    cone_radius=params.Real(0.25, 1.0, why="the cone's radius sets the smallest feature scale"),
    persist_min=params.Real(0.0, 1.0, closed=False, why="a fraction of the smallest feature radius"),
    noise_factor=params.Real(1.0, 4.0, why="a multiple of the landmark spacing"),
    edge_factor=params.Real(1.5, 3.0, why="features must outlive the threshold inside the filtration"),
    torus_c=params.Pair(0.0, 100.0, closed=False, why="two positive balances; max <= 2 min below"),
    torus_points=params.Int(400, why="sparser samples have noise bars near torus_persist"),
    torus_persist=params.Real(0.0, 1.0, closed=False, why="a fraction of the smaller circle's radius"),
    train_dims=params.IntList(2, 5, why="the stated range (Prop. 3 needs d > 1)"),
    width=params.Int(1, why="hidden neurons"),
    n_patho=params.Int(1, "width", below=True, why="some neurons must be non-pathological"),
    c_train=params.Real(0.1, 2.0, why="the stated range of the Prop. 3 runs"),
    n_seeds=params.Int(1, why="runs per d"), steps=params.Int(500, 5000, why="the stated range"),
    lr=params.Real(0.0, 0.01, why="close to the flow; > 0 below"),
    n_data=params.Int(50, 2000, why="the stated range"),
    drift_tol=params.Real(0.0, 1.0, closed=False,
                          why="a relative drift"),
    flip_rate=params.Real(0.5, 0.99, why="a rate for a count over runs"),
    enum_widths=params.IntList(2, 5, why="all l! permutations are enumerated"),
    n_probes=params.Int(2, why="one probe with zero non-pathological output weights, one generic"),
    explorer_drift_tol=params.Real(0.0, 1.0, closed=False, why="a drift tolerance"),
    require=[
        ("c_abs > 0", lambda v: v["c_abs"] > 0, "at c_abs 0 every +/- neuron is a cone and the check is vacuous"),
        ("max(torus_c) <= 2 min(torus_c)", lambda v: max(v["torus_c"]) <= 2 * min(v["torus_c"]),
         "keeps the sample's spacing below the threshold"),
        ("n_seeds * len(train_dims) >= 10", lambda v: v["n_seeds"] * len(v["train_dims"]) >= 10, "at least 10 runs"),
        ("lr > 0", lambda v: v["lr"] > 0, "a step size in (0, 0.01]"),
    ],
)
