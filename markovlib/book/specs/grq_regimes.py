"""The declared parameters of the chapter grq_regimes (narrowing and expanding networks, lazy or delayed rich)."""
from __future__ import annotations

from markovlib.book import params
from markovlib.richlazy import regimes_checks

SPEC = params.declare(
    seed=params.Int(0, why="a seed"),
    n_seeds=params.Int(11, why="a count over draws that tolerates one atypical draw in a cell"),
    narrowing=regimes_checks.shape_rule(True, why="claim 2's range; at h = max(d, c) - 1 the delayed-rich criterion "
                                                  "fails in about a quarter of base seeds"),
    expanding=regimes_checks.shape_rule(False, why="the mirror image of the narrowing range"),
    abs_deltas=params.RealList(3.0, 30.0, why="the sweep over which claim 2 is stated"),
    init_scale=params.Real(0.3, 0.5, why="the stated range of initial scales (defaults and CI set)"),
    fit_eps=params.Real(1e-7, 1e-5, why="below the fraction of the loss that the frozen kernel cannot reach"),
    t_max=params.Real(5000.0, why="the slowest delayed-rich fits take a few thousand time units at |delta| = 30"),
    s_lazy_max=params.Real(0.0, 1.0, closed=False, why="a kernel distance"),
    s_rich_ratio=params.Real(0.0, 1.0, closed=False, why="a fraction of the kernel distance at the smallest |delta|"),
    delay_ratio_min=params.Real(1.0, 100.0, why="the delay grows"),
    slope_tol=params.Real(0.0, float("inf"), closed=False, why="a tolerance"),
    rate=params.Real(0.5, 1.0, closed=False, why="a count's Wilson lower end must exceed at least 1/2"),
    indep_tol=params.Real(0.0, float("inf"), closed=False, why="a tolerance"),
    ric_d=params.Int(2, 4, why="d >= c = 2"),
    ric_cases=regimes_checks.riccati_cases_rule(why="an invertible A_p that stays invertible, where the reference "
                                                    "integration is checked"),
    ric_general=params.RealList(-1.0, 2.0, why="the range of delta of the Riccati checks"),
    ric_time=params.Real(0.0, 10.0,
                         why="the reference integration's error carried to nu stays 100 times below ric_tol"),
    ric_tol=params.Real(0.0, float("inf"), closed=False, why="a tolerance"),
    bern_tol=params.Real(0.0, float("inf"), closed=False, why="a tolerance"),
    bern_control=params.Real(0.0, float("inf"), closed=False, why="a negative control's smallest miss"),
    b14_cases=regimes_checks.b14_cases_rule(why="App. B.1.4's closed form is stated there"),
    eta_a=params.Real(0.5, 2.0, why="the stated range of rates in the one-neuron check"),
    eta_w=params.Real(0.5, 2.0, why="the stated range of rates in the one-neuron check"),
    b14_time=params.Real(0.0, float("inf"), closed=False, why="a horizon"),
    b14_tol=params.Real(0.0, float("inf"), closed=False, why="a tolerance"),
    require=[("abs_deltas: at least 3 distinct values, 3 and 30 among them",
              lambda v: len(set(v["abs_deltas"])) == len(v["abs_deltas"]) >= 3
              and min(v["abs_deltas"]) == 3.0 and max(v["abs_deltas"]) == 30.0, "the sweep spans its stated range"),
             ("0 not in ric_general", lambda v: 0.0 not in v["ric_general"], "delta = 0 has no Riccati start"),
             ("ric_time > 0", lambda v: v["ric_time"] > 0, "a horizon"),
             ("bern_control > 100 * bern_tol", lambda v: v["bern_control"] > 100 * v["bern_tol"],
              "a wrong equation must miss by far more than the tolerance")],
)
