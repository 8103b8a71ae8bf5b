"""The declared parameters of the chapter grq_minimal_model (the minimal model, its exact solutions and delta)."""
import math

import numpy as np

from markovlib.book import params
from markovlib.richlazy import minimal_exact

pos = params.Real(0.0, math.inf, closed=False, why="a positive tolerance")
ranged = "the stated range of the Fig. 3 claims"
SPEC = params.declare(
    T=params.Real(20.0, 40.0, why=ranged + " (20 is the paper's)"),
    n_times=params.Int(11, why="Fig. 3 draws every tenth point as a marker"),
    deltas=params.RealList(-8.0, 8.0, why="the stated range of the exact-solution checks"),
    beta_star=params.Pair(-10.0, 10.0, why="a target of moderate size (its norm: see the requirements)"),
    beta0=params.Pair(-10.0, 10.0, why="a start of moderate size (its norm and angle: see the requirements)"),
    sheet_deltas=params.RealList(-10.0, 10.0, why="the three surfaces of Fig. 2"),
    n_samples=params.Int(2, why="d is 2"), seed=params.Int(0, why="any seed"), n_random=params.Int(1, why="a count"),
    random_delta_max=params.Real(0.0, 5.0, why="the stated range: |delta| <= 5"),
    rk4_step=params.Real(1e-4, 0.005, why="the drift (order step^4) stays below its tolerance up to 0.005"),
    drift_tol=pos, rk4_drift_tol=pos, reduced_tol=pos, exact_tol=pos, rounding_tol=pos,
    lazy_S_max=params.Real(0.0, 1.0, closed=False, why="a kernel distance"),
    rich_S_min=params.Real(0.0, 1.0, closed=False, why="a kernel distance"),
    lazy_window=params.Real(0.0, math.inf, closed=False, why="a positive time below T"),
    c1_min=params.Real(0.01, 1.0, why="the scan's failures lie well below 0.01"),
    n_cos=params.Int(5, why="both signs of the cosine"),
    X_lowrank=params.Pair(-10.0, 10.0, why="a sample of moderate size"),
    y_lowrank=params.Real(-10.0, 10.0, why="a label of moderate size"),
    beta0_lowrank=params.Pair(-10.0, 10.0, why="a start of moderate size"),
    T_limit=pos, bias_tol=pos, extreme_delta=params.Real(1e3, 1e9, why="the asymptotic regime of Thm 3.1's limits"),
    asymptote_tol=pos, n_sweep=params.Int(1, why="a count"), basin_n=params.Int(1, why="a count"),
    basin_box=params.Real(0.1, 3.0, why="the stated range: boxes up to 3"),
    n_grid=params.Int(4, why="a grid of the plane (even: see the requirements)"),
    slice_s=params.Real(0.0, 2.0, why="a plane through the box"), n_plane_traj=params.Int(1, why="a count"),
    basin_T=params.Real(30.0, 200.0, why="the flows settle on a branch well before T = 30"),
    basin_margin_min=params.Real(0.02, 1.0, why="the stated range of the basin claims"),
    surface_deltas=params.RealList(-2.0, 0.0, why="the surface exists for delta <= 0; the stated range"),
    saddle_T=params.Real(8.0, 16.0, why="longer: the unstable direction amplifies solver error"),
    saddle_tol=pos,
    require=[
        ("lazy_window < T and T / (n_times - 1) <= lazy_window / 5", lambda v: v["lazy_window"] < v["T"] and v["T"] / (
            v["n_times"] - 1) <= v["lazy_window"] / 5, "at least 5 time points in (0, lazy_window]"),
        ("deltas sorted, with negative values, 0 and positive values", lambda v: sorted(v["deltas"]) == v["deltas"]
         and v["deltas"][0] < 0 < v["deltas"][-1] and 0.0 in v["deltas"], "downstream, balanced and upstream"),
        ("sheet_deltas = [positive, 0, negative]", lambda v: len(v["sheet_deltas"]) == 3 and v["sheet_deltas"][0] > 0
         and v["sheet_deltas"][1] == 0 and v["sheet_deltas"][2] < 0, "the three surfaces of Fig. 2"),
        ("|beta0| and |beta_star| in [0.8, 1.25]", lambda v: all(0.8 <= math.hypot(*v[k]) <= 1.25 for k in (
            "beta0", "beta_star")), ranged),
        ("cos(beta0, beta_star) in [-0.6, 0.6]", lambda v: abs(np.dot(v["beta0"], v["beta_star"])) <= (0.6 + 1e-12)
         * math.hypot(*v["beta0"]) * math.hypot(*v["beta_star"]), ranged + ": beyond 1/sqrt(2) the balanced end "
         "distance (1 - cos^2)/5 is below 0.1"),
        ("max(deltas) in [3, 8], min(deltas) in [-4, -3 max(|beta0|, |beta_star|)], two deltas <= -1", lambda v: 3.0
         <= v["deltas"][-1] <= 8.0 and -4.0 <= v["deltas"][0] <= -3.0 * max(math.hypot(*v["beta0"]), math.hypot(
             *v["beta_star"])) and sum(d <= -1 for d in v["deltas"]) >= 2, ranged),
        ("y_lowrank X_lowrank^T beta0_lowrank > 0", lambda v: v["y_lowrank"] * np.dot(v["X_lowrank"], v[
            "beta0_lowrank"]) > 0, "then beta(t) != 0 along every flow, the hypothesis of Thm 3.1"),
        ("max(C+ / |near|, C- / |along|) / extreme_delta^2 <= 1e-3", lambda v: (lambda C_up, C_down, near, along: max(
            C_up / np.linalg.norm(near), C_down / np.linalg.norm(along)))(*minimal_exact.asymptote_constants(
                v["X_lowrank"], v["y_lowrank"], v["beta0_lowrank"])) / v["extreme_delta"] ** 2 <= 1e-3,
         "C / delta^2 at most 1e-3 of the asymptote's norm: the expansion of the limits in 1/delta^2 holds"),
        ("n_grid even", lambda v: v["n_grid"] % 2 == 0, "an odd grid holds the saddle a = u = 0"),
    ],
)
