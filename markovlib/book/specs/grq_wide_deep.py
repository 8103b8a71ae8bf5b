"""The declared parameters of the chapter grq_wide_deep (wide and deep linear networks, the conserved matrix)."""
import math

from markovlib.book import params
from markovlib.richlazy import linear_checks

pos = params.Real(0.0, math.inf, closed=False, why="a positive tolerance or time")
rate = "the stated range of the rates"
SPEC = params.declare(
    seed=params.Int(0, why="any seed"), eta_a=params.Real(0.5, 2.0, why=rate), eta_w=params.Real(0.5, 2.0, why=rate),
    shapes=params.Rule(linear_checks.dims_list, "list of (d, h, c), integers >= 1", why="claims 1 and 2: d, h, c <= 5"),
    n_random=params.Int(1, why="a count"), n_samples=params.Int(12, 16, why="the range of the lazy-limit claims"),
    init_scale=pos, flow_time=pos, drift_tol=pos, thm_tol=pos, flow_tol=pos, fd_tol=pos, fd_step=pos,
    iso_cases=params.Rule(linear_checks.iso_case_list, "list of (d, h, c, delta)",
                          why="claims 3 and 4: d, h, c <= 4, delta in [-2, 1.5], within Thm 4.2"),
    iso_violating=params.Rule(linear_checks.iso_case, "(d, h, c, delta)", why="a case outside Thm 4.2"),
    iso_time=pos, sv_deltas=params.RealList(-50.0, 50.0, why="moderate deltas"),
    sv_target=params.RealList(0.0, 100.0, closed=False, why="positive singular values (distinct: see below)"),
    sv_init=params.Real(0.0, 1.0, closed=False, why="a small start"), sv_time=pos,
    lazy_dims=params.Rule(linear_checks.dims, "(d, h, c)",
                          why="[6, 8, 3] or [8, 10, 4]: rich at balance at every seed"),
    teacher_rank=params.Int(1, why="at most min(d, c) of lazy_dims"),
    product=params.Real(1e-3, 1e-3, why="the stated value (small: the balanced start is rich)"),
    deltas=params.RealList(-1e3, 1e3, why="the stated range of the sweep"), t_fit=pos,
    converged_tol=params.Real(0.0, 1.0, closed=False, why="a fraction of the initial loss"),
    s_rich_min=params.Real(0.0, 1.0, closed=False, why="a kernel distance"),
    n_rich_seeds=params.Int(10, why="a count over seeds"),
    rich_rate=params.Real(0.5, 1.0, closed=False, why="a count claims a majority at least"),
    s_lazy_max=params.Real(0.0, 1.0, closed=False, why="a kernel distance"), slope_tol=pos,
    deep_depths=params.IntList(1, 4, why="the stated range of claim 6"),
    deep_d=params.Choice([3, 4], why="the stated widths of claim 6"),
    deep_samples=params.IntList(1, why="below deep_d (see below): many interpolants"),
    deep_scale=params.Real(0.8, 0.9, why="the stated range of the layer norms"),
    deep_delta=params.Real(-1.2, 0.0, why="the stated range [-1.2, 0) (isotropic deep start)"),
    deep_time=pos, bias_tol=pos,
    require=[
        ("max(shapes) <= 5", lambda v: max(max(s) for s in v["shapes"]) <= 5,
         "claims 1 and 2 are stated for d, h, c <= 5"),
        ("iso_cases: d, h, c <= 4 and delta in [-2, 1.5]", lambda v: all(max(c[:3]) <= 4 and -2.0 <= c[3] <= 1.5
                                                                          for c in v["iso_cases"]), "claims 3 and 4"),
        ("iso_cases within Thm 4.2", lambda v: all(linear_checks.thm_4_2_applies(*c) for c in v["iso_cases"]),
         "h = d when delta < 0, h = c when delta > 0 (and h <= c when delta = 0, for the construction)"),
        ("iso_violating: delta < 0 and h < d", lambda v: v["iso_violating"][3] < 0 and v["iso_violating"][1] < v[
            "iso_violating"][0], "a case outside Thm 4.2"),
        ("sv_target distinct", lambda v: len(set(v["sv_target"])) == len(v["sv_target"]), "simple singular values"),
        ("lazy_dims in ([6, 8, 3], [8, 10, 4]) and n_samples >= d and teacher_rank <= min(d, c)",
         lambda v: v["lazy_dims"] in ([6, 8, 3], [8, 10, 4]) and v["n_samples"] >= v["lazy_dims"][0]
         and v["teacher_rank"] <= min(v["lazy_dims"][0], v["lazy_dims"][2]),
         "rich at balance (S >= 0.2) at every seed tried, full-rank inputs"),
        ("deltas sorted without repeats, at least 7, with 0", lambda v: sorted(set(v["deltas"])) == v["deltas"] and len(
            v["deltas"]) >= 7 and 0.0 in v["deltas"], "the sweep"),
        ("deltas reach -1000 and +1000 with the next |delta| in [300, 1000) on each side", lambda v: all(
            len(s) >= 2 and max(s) == 1000.0 and 300.0 <= sorted(s)[-2] < 1000.0 for s in (
                [-x for x in v["deltas"] if x < 0], [x for x in v["deltas"] if x > 0])),
         "the lazy claims and the tail exponent are stated there"),
        ("max(deep_samples) < deep_d and deep_delta < 0", lambda v: max(v["deep_samples"]) < v["deep_d"] and v[
            "deep_delta"] < 0, "many interpolants; the isotropic deep start"),
    ],
)
