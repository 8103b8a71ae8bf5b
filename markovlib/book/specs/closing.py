"""The declared parameters of the chapter ``book/closing`` (three conservation laws under discrete optimizers)."""
from __future__ import annotations

from markovlib.beyond import drift_study
from markovlib.book import params

SPEC = params.declare(
    seed=params.Int(0, why="any seed"),
    margin=params.Real(0.0, 0.5, why="Part I's claims are stated away from the line p + q = 1"),
    pq=params.Chain(0.0, params.THEORY_RANGE, why="Part I's theory range, at least margin from p + q = 1"),
    d2=params.Int(1, why="Part II input dimension"),
    n2=params.Int(1, why="Part II points; fewer than d2 (below)"),
    d3=params.Int(1, why="Part III input dimension"),
    width=params.Int(1, why="Part III neurons"),
    n3=params.Int(1, why="Part III points"),
    n_pool=params.Int(1, why="Part I's pool of transitions"),
    batch1=params.Int(1, "n_pool", why="a minibatch holds at most the pool"),
    batch2=params.Int(1, "n2", why="a minibatch holds at most the points"),
    batch3=params.Int(1, "n3", why="a minibatch holds at most the points"),
    n_drift=params.Int(1, why="initializations of the drift study"),
    t_drift=params.Real(0.0, 20.0, closed=False, why="the drift study's fixed time (at least 20 max(lrs), below)"),
    n_sgd=params.Int(1, why="minibatch sequences per initialization"),
    lrs=params.RealList(1e-3, 0.1, why="below 1e-3 the one-step check's cubic remainder sinks towards rounding "
                        "(halving ratio 0.73 at h = 4e-6); below 0.1 (below): the claims are asymptotic in h"),
    weight_decay=params.Real(0.0, 1.0, closed=False, why="weight decay of the drift study (with t_drift, below)"),
    flow_tol=params.Real(0.0, 1e-8, why="only stricter than the default (a looser one empties the claim); > 0"),
    rk4_dt=params.Real(0.0, 0.01, closed=False, why="the RK4 step of Part III's flows"),
    flow_tol3=params.Real(0.0, 1e-4, why="only stricter than the default; > 0"),
    t_fig3=params.Real(0.0, 50.0, closed=False, why="time of the drawn Part III flow"),
    slope_margin=params.Real(0.0, 0.5, closed=False, why="slopes within 1 +- slope_margin, apart from 0 and 2"),
    adam_factor=params.Real(5.0, why="only stricter than the default 5 (10^-9 emptied the claim)"),
    n_pred=params.Int(1, why="an all-agreeing count must clear agree_rate over the grid (below)"),
    pred_lrs=params.RealList(0.0, 4.0, closed=False, why="steps of the prediction study; the smallest <= 0.1 (below)"),
    decays=params.RealList(0.0, 2.0, closed=False, why="weight decays of the prediction study"),
    t_pred1=params.Real(0.0, 1000.0, closed=False, why="Part I's training time (doubled until runs converge)"),
    t_pred2=params.Real(0.0, 2000.0, closed=False, why="Part II's training time (doubled likewise)"),
    t_pred3=params.Real(0.0, 1000.0, closed=False, why="Part III's training time"),
    beta_tol=params.Real(0.0, 1.0, closed=False, why="threshold fixed before the data"),
    conv_tol=params.Real(0.0, 1e-3, closed=False, why="threshold fixed before the data"),
    agree_rate=params.Real(0.5, 1.0, why="a rate of at least 1/2, below 1 (below)"),
    alpha=params.Real(0.0, 0.5, closed=False, why="family-wise error of each claim"),
    require=[
        ("|p + q - 1| >= margin of pq", lambda v: abs(sum(v["pq"]) - 1) >= v["margin"] - 1e-12, "away from p + q = 1"),
        ("n2 < d2", lambda v: v["n2"] < v["d2"], "an underdetermined problem, so delta selects the interpolant"),
        ("max(lrs) < 0.1", lambda v: max(v["lrs"]) < 0.1, "the drift claims are asymptotic in h"),
        ("3 different lrs, max(lrs) >= 4 min(lrs)", lambda v: len(set(v["lrs"])) >= 3
         and max(v["lrs"]) >= 4 * min(v["lrs"]), "a slope needs a span"),
        ("t_drift >= 20 max(lrs)", lambda v: v["t_drift"] >= 20 * max(v["lrs"]),
         "at least 20 steps per run, so every run reaches about T (with 1 or 2 steps the slopes were 1.5)"),
        ("weight_decay * t_drift <= 5", lambda v: v["weight_decay"] * v["t_drift"] <= 5.0,
         "delta(T) = delta(0) exp(-2 lambda T) far above rounding (the claims failed at lambda T near 19)"),
        ("weight_decay^2 * max(lrs) * t_drift <= 0.15", lambda v: v["weight_decay"] ** 2 * max(v["lrs"])
         * v["t_drift"] <= 0.15, "GD with decay lags the flow by exp(-x), x = lambda^2 h T, slope 1 - x/2 in h"),
        ("flow_tol > 0 and flow_tol3 > 0", lambda v: v["flow_tol"] > 0 and v["flow_tol3"] > 0, "tolerances"),
        ("min(pred_lrs) <= 0.1", lambda v: min(v["pred_lrs"]) <= 0.1, "the claims at the smallest step hold there"),
        ("agree_rate < 1", lambda v: v["agree_rate"] < 1.0, "a rate of 1 cannot be shown with finitely many inits"),
        ("n_pred >= drift_study.fewest_inits(agree_rate, alpha, 9 len(pred_lrs) + 3 len(decays))", lambda v: v["n_pred"]
         >= drift_study.fewest_inits(v["agree_rate"], v["alpha"], 9 * len(v["pred_lrs"]) + 3 * len(v["decays"])),
         "else the largest step at which a prediction holds is unresolvable (n_pred 60 gave none)"),
    ],
)
