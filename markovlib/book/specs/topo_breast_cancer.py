"""The declared parameters of the chapter topo_breast_cancer (the breast-cancer study of Sec. 6 and Fig. 4)."""
from __future__ import annotations

import json

from markovlib.book import params
from markovlib.book.stored import data_dir

_stored = json.loads((data_dir("breast_cancer") / "manifest.json").read_text())["parameters"]  # the stored run
SPEC = params.declare(
    seed=params.Int(0, why="seed of the initializations"), split_seed=params.Int(0, why="seed of the split"),
    test_size=params.Real(0.1, 0.5, why="a held-out share large enough for a test BCE"),
    widths=params.IntList(2, 16, why="the paper's 2 to 9, up to 16 for the time budget"),
    n_inits=params.Int(10, why="claim (b) is a count over initializations"),
    c_abs=params.Real(0.25, 4.0, why="the balance drift stays below 1 in this range"),
    lr=params.Real(0.0, 0.05, why="the balance drift stays below 1 up to 0.05; > 0 below"),
    steps=params.Int(1, 3000,
                     why="the stated range (time budget)"),
    drift_tol=params.Real(0.0, 1.0, closed=False, why="a relative drift reported as large"),
    slope_rate=params.Real(0.5, 0.99, why="a rate for a count over initializations"),
    n_boot=params.Int(1, why="bootstrap resamples"),
    slice_width=params.Int(1, why="a stored width (below)"),
    slice_inits=params.Int(1, why="at most the stored initializations (below)"),
    slice_tol=params.Real(0.0, 1e-6, closed=False, why="far below any difference in substance (see the stored run)"),
    results_csv=params.Text(why="a path, or empty for no CSV"),
    require=[
        ("widths: two distinct, the largest >= 8", lambda v: len(set(v["widths"])) == len(v["widths"]) >= 2
         and max(v["widths"]) >= 8, "claim (b) averages the slope over widths; with only small widths it fails"),
        ("lr > 0", lambda v: v["lr"] > 0, "a step size in (0, 0.05]"),
        ("lr * steps >= 30", lambda v: v["lr"] * v["steps"] >= 30, "claim (b) needs the networks trained"),
        ("slice_width in the stored widths", lambda v: v["slice_width"] in _stored["widths"],
         f"the stored widths are {_stored['widths']}"),
        ("slice_inits <= the stored n_inits", lambda v: v["slice_inits"] <= _stored["n_inits"],
         f"the stored run has {_stored['n_inits']} initializations"),
    ],
)
