"""The declared parameters of the chapter authors_fig4 (Fig. 4 as the authors ran it), with the stored facts they
need: the stored runs' seeds and the slice's cap (half the shortest deterministic prefix measured over them)."""
from __future__ import annotations

import math

import pandas as pd

from markovlib.book import params, stored
from markovlib.transformer import stored_runs

DATA = stored.data_dir("fig4")
# every part of the set (seeds 0-4, then 5-19), each against its sha256; disjoint seeds, the same chains and inits
STORED, FIG4_PARTS = stored.read_parts(DATA, stored.PARTS["fig4"], same=["chains", "inits"])
# the deterministic prefix of EVERY stored run, measured by tools/run_slice_prefix.py fig4 (slice_prefix.csv)
PREFIX_LEVEL = 1e-6  # train loss this close to the stored one (about 16 float32 units in the last place), not a knob
PREFIX = pd.read_csv(DATA / "slice_prefix.csv")
prefix_of, slice_cap = stored_runs.slice_cap(PREFIX, STORED, PREFIX_LEVEL)  # half the shortest prefix
live = params.Real(0.1, 0.8, why="the live claims' range")


def checked_at(value, what):
    """The only value at which the live claims were checked."""
    return params.Int(value, value, why=f"the live claims were checked at this {what} only")


def stricter(hi, what):
    """A threshold that may only be made stricter than its default (and stays > 0)."""
    return params.Real(0.0, hi, why=f"{what}; only stricter (> 0)")


SPEC = params.declare(
    p_high=live, q_high=live, p_low=live, q_low=live,
    margin=params.Real(0.2, 1.0, why="the live chains keep at least 0.2 from p + q = 1"),
    check_dims=params.IntList(1, why="any d (the map holds for every d)"),
    check_lengths=params.IntList(2, why="any N (the map holds for every N)"),
    live_length=checked_at(128, "context"), live_steps=checked_at(400, "step count"),
    live_seeds=params.Int(10, why="a count over seeds needs 10 live seeds"),
    live_seed0=params.Int(0, why="any block of training seeds"),
    rate=params.Real(0.5, 1.0, why="a claim over seeds holds for at least half of them (and rate < 1)"),
    slice_steps=params.Int(40, why="at least 40 for the negative control; at most the cap (see together)"),
    slice_seed=params.Choice(sorted(int(s) for s in STORED.seed.unique()), why="one of the stored seeds"),
    slice_tol=stricter(2e-6, "twice the prefix level at most"),
    at_tol=stricter(0.02, "under half of either chain's gap"),
    workers=params.Int(1, why="processes of the live runs"),
    seed=params.Int(0, why="any seed of the random weights"),
    c_pin=stricter(0.05, "stored runs' pin criterion"),
    pin_z=stricter(3.0, "live runs' pin criterion in standard errors"),
    noise_batches=params.Int(4, why="a standard error from the spread of the batches"),
    bigram_ratio=params.Real(0.5, 1.0, why="on the bigram side: c-hat / c* above at least 1/2 (and < 1)"),
    plateau_from=params.Int(1, why="after the bias transient"),
    plateau_steps=params.Int("plateau_from", why="the plateau's window ends after it starts"),
    reach_by=params.Int(1, why="a step of the stored runs"),
    submitted_steps=params.Int(1, why="the steps of the submitted code"),
    require=[
        ("1 + margin <= p_high + q_high <= 1.3", lambda v: 1 + v["margin"] <= v["p_high"] + v["q_high"] <= 1.3 + 1e-9,
         "the live chain with p + q > 1: |c*| <= 1.39, where the reduced runs are decisive"),
        ("p_low + q_low <= 1 - margin", lambda v: v["p_low"] + v["q_low"] <= 1 - v["margin"], "the other side"),
        ("c*(p_low, q_low) <= 2.25", lambda v: math.log((1 - v["p_low"]) * (1 - v["q_low"]) / (v["p_low"] * v["q_low"]))
         <= 2.25, "the public code's init must grow ||e||^2 to c*/2 within the run; larger c* not checked"),
        ("rate < 1 and bigram_ratio < 1", lambda v: v["rate"] < 1 and v["bigram_ratio"] < 1, "a rate below 1"),
        (f"slice_steps <= slice_cap = {slice_cap}", lambda v: v["slice_steps"] <= slice_cap,
         "half the shortest deterministic prefix measured over every stored run"),
        ("slice_tol, at_tol, c_pin, pin_z > 0", lambda v: min(v["slice_tol"], v["at_tol"], v["c_pin"], v["pin_z"]) > 0,
         "thresholds may be made stricter than the defaults, never empty"),
    ],
)
