"""The declared parameters of the chapter low_rank (Low rank emerges)."""
from __future__ import annotations

import pandas as pd

from markovlib.book import params, stored

PREFIX_LEVEL = 1e-6  # a stored run is deterministic while every compared value stays this close, not a knob


def sgd5_prefix() -> int:
    """The shortest deterministic prefix (steps) of the stored SGD-step-5 runs of the first part, over every numeric
    configuration of CI (``book/data/lowrank/slice_prefix.csv``): the cap of ``slice_steps``."""
    rows = pd.read_csv(stored.data_dir("lowrank") / "slice_prefix.csv")
    prefix_of = stored.deterministic_prefix(rows, ["config", "init", "optimizer", "seed"],
                                            ["loss_diff", "fraction_diff"], PREFIX_LEVEL)
    return int(prefix_of.xs("sgd_5", level="optimizer").min())


SGD5_PREFIX = sgd5_prefix()
CHAINS = "the claims' chains: p + q = 0.5, p and q in [0.2, 0.3] (exploratory runs off them broke the claims)"
CHECKED = "the claims were checked at this value only"
STRICT = "the value at which it was checked: a stricter one breaks a claim (an outside review)"
SPEC = params.declare(
    p=params.Real(0.2, 0.3, why=CHAINS), q=params.Real(0.2, 0.3, why=CHAINS),
    d=params.Int(8, 8, why=CHECKED), length=params.Int(128, 128, why=CHECKED), batch=params.Int(16, 16, why=CHECKED),
    steps=params.Int(800, 800, why=CHECKED), init_std=params.Real(1e-3, 1e-3, why=CHECKED),
    lr_sgd=params.Real(5.0, 5.0, why=CHECKED), lr_sgd_small=params.Real(2.0, 2.0, why=CHECKED),
    lr_adamw=params.Real(2e-3, 2e-3, why=CHECKED),
    seeds=params.IntList(0, why="distinct; at least 10 on the paper's chain, 20 on the others (see together)"),
    rate=params.Real(0.5, 1.0, why="a claim over seeds holds for at least half of them (and rate < 1)"),
    track_every=params.Int(1, why="steps between weight snapshots"),
    heatmap_steps=params.IntList(0, why="snapshots drawn (clipped to the run)"),
    threshold=params.Real(0.99, 0.99, why=STRICT),
    sweep_thresholds=params.RealList(0.0, 1.0, closed=False, why="a sweep, not a claim"),
    align_threshold=params.Real(0.99, 1.0, why="only stricter (and < 1)"),
    qk_ratio=params.Real(0.1, 1.0, why="only stricter (and < 1)"),
    vo_factor=params.Real(5.0, float("inf"), why="only stricter"),
    random_threshold=params.Real(0.0, 0.6, why="only stricter (> 0); a Gaussian 32 x 8 matrix: 0.2 to 0.3"),
    e2_rtol=params.Real(0.0, 0.05, why="only stricter (> 0)"),
    flat_threshold=params.Real(0.9, 0.9, why=STRICT), sgd_flat_max=params.Real(0.5, 0.5, why=STRICT),
    excess_tol=params.Real(0.0, 0.005, why="only stricter (> 0)"),
    heldout_batches=params.Int(1, why="held-out batches of the excess loss"),
    noise_back=params.Real(10.0, 10.0, why=STRICT),
    pert_noise=params.Real(1e-5, 1e-5, why="the stored part's noise; " + CHECKED),
    dilution_band=params.Real(2.0, 2.0, why=CHECKED + " (a narrower band nears the measured 1.5)"),
    invariance_tol=params.Real(0.0, 1e-6, why="only stricter (> 0)"),
    slice_steps=params.Int(1, 20, why="within the deterministic prefix of the stored SGD-step-5 runs (see together)"),
    slice_tol=params.Real(0.0, 1e-5, why="about 10x the largest difference measured in the prefix; only stricter"),
    workers=params.Int(1, why="the results do not depend on it"),
    require=[
        ("p + q = 0.5", lambda v: abs(v["p"] + v["q"] - 0.5) <= 1e-9, CHAINS),
        ("seeds distinct, at least 10 at (0.2, 0.3) and 20 elsewhere", lambda v: len(set(v["seeds"])) == len(v["seeds"])
         >= (10 if abs(v["p"] - 0.2) < 1e-9 and abs(v["q"] - 0.3) < 1e-9 else 20),
         "a count needs 10 live seeds; off the paper's chain the rate is about 0.8, so 20"),
        ("rate, align_threshold, qk_ratio < 1", lambda v: max(v["rate"], v["align_threshold"], v["qk_ratio"]) < 1,
         "a rate or a cosine below 1"),
        ("random_threshold, e2_rtol, excess_tol, invariance_tol, slice_tol > 0", lambda v: min(
            v["random_threshold"], v["e2_rtol"], v["excess_tol"], v["invariance_tol"], v["slice_tol"]) > 0,
         "thresholds may be made stricter, never empty"),
        (f"slice_steps <= {SGD5_PREFIX}", lambda v: v["slice_steps"] <= SGD5_PREFIX,
         "the shortest deterministic prefix of the stored SGD-step-5 runs, measured in every configuration"),
    ],
)
